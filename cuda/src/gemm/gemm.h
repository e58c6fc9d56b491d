// Tensor-core GEMM for M >= 128 (issue 12): y[M x N] = x[M x K] * W^T with
// BF16 activations x (row-major, K contiguous) and a packed weight W (N rows
// of K, K contiguous) dequantized in shared memory, and the W4A4 NVFP4 x NVFP4
// product that quantizes x on the fly by an NVFP4 recipe.
//
// The kernel is mma.sync.m16n8k16 BF16 x BF16 -> FP32 (cuda/src/gemm/gemm.cu
// says why not wgmma yet). Its results are checked against the exact product
// within the bound of formats/include/lowbit/formats/matmul/gemm_bound.h;
// GemmErrorModelOf below is the one place that says which terms of that bound
// each weight format's path has.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/matmul/gemm_bound.h"

namespace lowbit::cuda::gemm {

enum class WeightFormat : std::uint8_t {
  kNvfp4,               // E2M1 codes, UE4M3 scale per 16 along K, FP32 tensor (decode) scale
  kMxfp4,               // E2M1 codes, E8M0 scale per 32 along K
  kMxfp8E4m3,           // E4M3 codes, E8M0 scale per 32 along K
  kInt4G128,            // signed INT4 codes, FP16/BF16 scale + integer zero point per 128 along K
  kUint4G128,           // unsigned INT4 codes, likewise
  kFp8E4m3PerChannel,   // E4M3 codes, one FP32 scale per output channel (row of W)
};

enum class ScaleType : std::uint8_t { kUe4m3, kE8m0, kF16, kBf16, kF32 };
enum class OutputType : std::uint8_t { kF32, kBf16 };

// The packed weight, all pointers device memory. This is the GEMM's own
// canonical layout (row n of W is K consecutive elements):
//  codes  : N rows of K/2 bytes (4-bit, element 2j in the low nibble of byte
//           j, the blocks' kLowFirst order) or K bytes (8-bit); 16-byte aligned.
//  scales : N x (K / block) scale codes, row-major: UE4M3 / E8M0 bytes, FP16 /
//           BF16 bit patterns (INT4), or N FP32 values (FP8 per channel).
//  zeros  : INT4 only, N x (K / 128) bytes holding the integer zero point
//           (w = (q - z) * s, the GPTQ/AWQ dequantization); null means z = 0.
//  tensor_scale: NVFP4 only, the FP32 value dequantization multiplies by.
struct GemmWeights {
  WeightFormat format = WeightFormat::kNvfp4;
  std::int64_t n = 0;
  std::int64_t k = 0;
  const std::uint8_t* codes = nullptr;
  const void* scales = nullptr;
  ScaleType scale_type = ScaleType::kUe4m3;
  const std::uint8_t* zeros = nullptr;
  float tensor_scale = 1.0f;
};

// Elements per scale along K (16, 32, 128; K for the per-channel FP8 scale).
std::int64_t BlockSizeOf(WeightFormat f, std::int64_t k);
const char* NameOf(WeightFormat f);

// y = x * W^T. Requirements (each violated one is a Status error, nothing is
// launched): m, n >= 1; k a positive multiple of 32 and of the format's
// block; x 16-byte aligned; every buffer device memory; the scale type the
// format's. Writes every one of the m * n outputs.
Status Gemm(const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, void* y, OutputType out,
            cudaStream_t stream = nullptr);

// W4A4: x is quantized to NVFP4 by `recipe` (the model's steps,
// block::QuantizeNvfp4Block, with the tensor scale of all of x), then
// multiplied with the NVFP4 weight w. `workspace` holds the quantized
// activations as BF16 values e2m1 * ue4m3 (exact) plus the activation tensor
// scale: GemmW4A4WorkspaceBytes(m, k) bytes of device memory.
std::size_t GemmW4A4WorkspaceBytes(std::int64_t m, std::int64_t k);
Status GemmW4A4Nvfp4(const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, block::Nvfp4Recipe recipe,
                     void* workspace, void* y, OutputType out, cudaStream_t stream = nullptr);

// Where the W4A4 workspace keeps the activations' Nvfp4TensorScale (read
// back by the tests) and the dequantized activations (m x k BF16).
std::size_t GemmW4A4TensorScaleOffset(std::int64_t m, std::int64_t k);

// The error model of this kernel for a weight format (matmul::GemmErrorModel):
// see gemm.cu's header comment for why each term is what it is.
matmul::GemmErrorModel GemmErrorModelOf(WeightFormat f, OutputType out, bool w4a4 = false);

}  // namespace lowbit::cuda::gemm
