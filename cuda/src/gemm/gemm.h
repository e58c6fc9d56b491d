// Tensor-core GEMM for M >= 128: y = x * W^T per batch, with W in
// any packed form of formats/include/lowbit/formats/matmul/weights.h (NVFP4,
// MXFP4, MXFP8 E4M3, INT4 / UINT4 groups in lowbit, GPTQ or AWQ packing with
// FP32 / FP16 / BF16 scales and zero points, FP8 E4M3 per channel), BF16
// activations, FP32 / BF16 / FP16 output; and W4A4 NVFP4 x NVFP4 with the
// activations quantized on the fly by an NVFP4 recipe.
//
// Weights are dequantized from packed form into shared memory as BF16 and
// multiplied by mma.sync m16n8k16 BF16 x BF16 -> FP32 (gemm.cu says why).
// Shapes the tensor-core tiles do not take (K not a multiple of 32, blocks
// that are not a multiple of 16, unaligned x) run a plain FP32 kernel
// instead, within the same bound. Results are checked against the exact
// product within formats/include/lowbit/formats/matmul/gemm_bound.h;
// GemmErrorModelOf says which of its terms each weight kind has.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/matmul/gemm_bound.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::registry {
class Registry;
}  // namespace lowbit::registry

namespace lowbit::cuda::gemm {

// Everything Gemm checks before launching: matmul::Validate (shapes,
// pointers, buffer sizes, overlap), BF16 activations, device memory.
Status ValidateGemm(const matmul::MatmulProblem& p);

// Whether the problem runs on the tensor-core kernel (else the FP32
// fallback): K a multiple of 32, blocks / groups a multiple of 16, x rows
// and lowbit-packed codes 16-byte aligned.
bool UsesTensorCores(const matmul::MatmulProblem& p);

// y = x * W^T, all buffers device memory, asynchronous on `stream`; every
// one of the batch * m * n outputs is written.
Status Gemm(const matmul::MatmulProblem& p, cudaStream_t stream = nullptr);

// W4A4: x (BF16, batch 1, K a multiple of 32) is quantized to NVFP4 by
// `recipe`, an NVFP4 recipe (the model's block steps, recipe/steps.h, with
// the tensor scale of all of x), then multiplied with the NVFP4 weight p.w. `workspace` (device,
// GemmW4A4WorkspaceBytes(m, k)) receives the quantized activations as BF16
// values e2m1 * ue4m3 (exact) and, at GemmW4A4TensorScaleOffset, their
// recipe::TensorScale.
std::size_t GemmW4A4WorkspaceBytes(std::int64_t m, std::int64_t k);
std::size_t GemmW4A4TensorScaleOffset(std::int64_t m, std::int64_t k);
Status GemmW4A4Nvfp4(const matmul::MatmulProblem& p, const recipe::Recipe& recipe, void* workspace,
                     cudaStream_t stream = nullptr);

// The error model of this kernel for a weight kind and output type
// (matmul::GemmErrorModel); `w4a4` adds the activation tensor scale's
// multiply. Valid for both the tensor-core and the fallback kernel.
matmul::GemmErrorModel GemmErrorModelOf(matmul::WeightFormat f, matmul::OutputType out, bool w4a4 = false);

// The GEMM's registry rows (register_gemm.cc, built with the registry):
// backend "cuda", operation gemm, every weight kind x BF16 activations x
// BF16 / FP16 / FP32 outputs, each with its GemmErrorBound.
void RegisterCudaGemm(registry::Registry& registry);

}  // namespace lowbit::cuda::gemm
