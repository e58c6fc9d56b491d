// The element step's roundings besides the element encode
// (recipe::ElementArithmeticOfModel in formats/include/lowbit/formats/recipe/
// steps.h), as the model recipe kernels pass them (cuda/src/model_recipe.cu):
// through named alternatives proven equal to the model's on every FP32 input,
//   - RoundToInteger under round to nearest even: the 1.5 * 2^23 addition of
//     alternatives/round_to_integer.h for |y| < 2^22; other modes, and the
//     values the addition does not cover, the model's;
//   - F16Rounded: the integer conversions of alternatives/f16_rounded.h; a
//     NaN the model's.
// Each alternative's own function (RoundToIntegerNearestEvenF32,
// F16RoundedF32Alternative) is the same composition with the model inline.
// Here the model's path is a call kept out of line: inline, its generic
// RoundPack in each of the 32 unrolled element steps of
// ModelGroupsInRegistersKernel made ptxas put the thread's 32 elements in
// local memory (a 208-byte stack frame; INT8 amax-clamp g128 1.31 ms on the
// H200, bench/RESULTS-archive-2026.md "GPU roofline"). The rare values pay a call.
// cuda/tests/element_arithmetic_alternatives_test.cu sweeps these functions
// against the device model on every FP32 pattern.
#pragma once

#include "lowbit/formats/alternatives/f16_rounded.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::cuda::detail {

__device__ __noinline__ inline float ModelRoundToIntegerOutOfLine(float y, RoundingMode mode) {
  return recipe::RoundToIntegerF32(y, mode);
}
__device__ __noinline__ inline float ModelF16RoundedOutOfLine(float v) { return recipe::F16RoundedF32(v); }

struct AlternativeElementArithmetic {
  __device__ float RoundToInteger(float y, RoundingMode mode) const {
    if (alternatives::RoundToIntegerAlternativeApplies(mode) && alternatives::RoundToIntegerNearestEvenCovers(y)) {
      return alternatives::RoundToIntegerNearestEvenCovered(y);
    }
    return ModelRoundToIntegerOutOfLine(y, mode);
  }
  __device__ float F16Rounded(float v) const {
    if (alternatives::F16RoundedF32AlternativeCovers(v)) return alternatives::F16RoundedF32Covered(v);
    return ModelF16RoundedOutOfLine(v);
  }
};

}  // namespace lowbit::cuda::detail
