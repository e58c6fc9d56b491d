// The first pass of the tensor-core GEMM (tc_gemm.h): a packed weight
// (matmul/weights.h WeightView, any format and packing) written as the
// MMA's BF16 operand, each weight rounded once from its exact value
// (matmul/weight_operand.h WeightOperand), [L][rows][k_padded] with +0 past
// K and past N, and each row's outer FP32 scale (weight_operand.h OuterScaleOf: NVFP4's
// tensor scale, FP8's channel scale, 1 otherwise) as [L][N].
//
// Each weight takes alternatives/weight_operand_fp32.h's FP32 arithmetic,
// with element and scale values from tables the compiler fills from the
// model's decoders, except integer weights whose zero point is more than 15
// from the code, which take the model's WeightOperand.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "lowbit/formats/matmul/weights.h"

namespace lowbit::cuda::tc_gemm {

// K rounded up to 8: operand rows start 16-byte aligned (the TMA's rule).
inline constexpr std::int64_t kOperandKAlign = 8;
constexpr std::int64_t PaddedK(std::int64_t k) { return (k + kOperandKAlign - 1) / kOperandKAlign * kOperandKAlign; }

// Launches the pass: `operand_rows` (>= N) rows per batch entry, those past
// N +0 with outer scale 1. W's buffers (tensor scales included) are device
// memory, checked by the caller. cudaSuccess or the launch's error.
cudaError_t DequantizeIntoOperand(const matmul::WeightView& w, std::int64_t operand_rows, std::uint16_t* operand,
                                  float* outer_scales, cudaStream_t stream);

}  // namespace lowbit::cuda::tc_gemm
