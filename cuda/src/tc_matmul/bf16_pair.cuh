// Two FP32 values rounded to nearest, ties to even, into BF16 and packed
// (the first in the low half) by one hardware conversion,
// cvt.rn.bf16x2.f32 (PTX ISA, "cvt": destination's upper half from the
// first source operand). For every input that is not a NaN it gives the
// model's rounding (alternatives/f32_f16_bf16.h EncodeF32BitsToBf16: round
// to nearest even at BF16's quantum, subnormals kept, overflow to Inf); a
// NaN becomes the hardware's canonical NaN, not the model's payload-keeping
// one, so callers keep NaNs off this path.
// Proof: cuda/tests/tc_gemm_test.cc TcGemmOperand.
// HardwareBf16PairRoundingIsTheModelsOnEveryFp32 compares it with
// EncodeF32BitsToBf16 on all 2^32 inputs but the NaNs, in both halves.
#pragma once

#include <cstdint>

namespace lowbit::cuda::tc_gemm {

__device__ __forceinline__ std::uint32_t RoundPairToBf16(float low, float high) {
  std::uint32_t packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(high), "f"(low));
  return packed;
}

}  // namespace lowbit::cuda::tc_gemm
