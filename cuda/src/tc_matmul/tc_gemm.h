// The tensor-core GEMM: y = x * W^T for every packed weight of
// matmul/weights.h (NVFP4, MXFP4, MXFP8, INT4 / UINT4 in lowbit, GPTQ or AWQ
// packing, FP8 per channel), BF16 x, any M, FP32 / BF16 / FP16 y, bit for
// bit equal to matmul::QuantizedMatmulModel under TcGemmSchedule.
//
// Two passes on the caller's stream:
//  1. operand_dequantize.h writes W as the MMA's BF16 operand, [L][N][K8]
//     (K8 = K rounded up to 8, zeros past K), each weight rounded once from
//     its exact value (matmul/weight_operand.h), and each row's outer FP32
//     scale (NVFP4's tensor scale, FP8's channel scale);
//  2. a CUTLASS 3 Hopper GEMM (TMA loads, warp-specialized cooperative
//     `wgmma.m64n256k16.f32.bf16.bf16`, persistent tiles) multiplies x by
//     that operand; each output's K runs as one chain of 16-wide chunks in
//     increasing K from +0, with no split, and its epilogue multiplies by
//     the row's scale in FP32 and converts once to the output type.
// So the schedule is accumulation_schedule.h's steps 1-5 with the wgmma
// BF16 instruction, no promotion, split_k 1: it never depends on M, and a
// row of y has the same bits whatever M the call had. It is the tensor-core
// GEMV's (tc_gemv.h) whenever that one runs with one part: wgmma and
// mma.sync BF16 share their arithmetic (docs/tensor-cores.md).
//
// The dequantized operand costs 2 bytes per weight of workspace and one
// pass over W (docs/matmul.md "The tensor-core GEMM"); at M >= 128 the
// product's O(M N K) dominates it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::registry {
class Registry;
}  // namespace lowbit::registry

namespace lowbit::cuda::tc_gemm {

// The schedule of every call (scale_per_column where the weight has an
// outer scale).
matmul::AccumulationSchedule TcGemmSchedule(matmul::WeightFormat format, matmul::OutputType output);

// Device workspace RunTcGemm needs for this problem, in bytes.
std::size_t TcGemmWorkspaceBytes(const matmul::MatmulProblem& p);

// Everything RunTcGemm checks before launching (tc_gemm_checks.cc):
// matmul::Validate, BF16 x, M, N, K and L within the GEMM's int32 shape,
// device buffers, a workspace of TcGemmWorkspaceBytes.
Status ValidateTcGemm(const matmul::MatmulProblem& p, const void* workspace, std::size_t workspace_bytes);

// y = x * W^T; every buffer device memory (W's tensor scales too),
// asynchronous on `stream`. An error names the problem; nothing is launched
// then.
Status RunTcGemm(const matmul::MatmulProblem& p, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

// The GEMM's registry rows (register_tc_gemm.cc, built with the registry):
// backend "cuda-tc", operation gemm, every weight kind x BF16 activations x
// BF16 / FP16 / FP32 outputs, each declaring TcGemmSchedule.
void RegisterCudaTcGemm(registry::Registry& registry);

}  // namespace lowbit::cuda::tc_gemm
