// Element types of the FP32-side arrays of the tuned quantize kernels
// (cuda/src/tensor_call.h TensorCall).
#pragma once

#include <cstdint>

namespace lowbit::cuda {

// Input of a quantization: float[] or BF16 as uint16_t[] (its bits).
enum class InputType : std::uint8_t { kF32, kBf16 };

// Output of a dequantization: float[], or uint16_t[] holding the FP32 value
// rounded to nearest even into BF16 (cvt.rn.bf16x2.f32: every NaN -> 0x7FFF).
enum class OutputType : std::uint8_t { kF32, kBf16 };

}  // namespace lowbit::cuda
