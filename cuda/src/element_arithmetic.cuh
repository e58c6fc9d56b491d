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

#include "hardware_rule.h"
#include "options_match.h"
#include "ptx.cuh"
#include "lowbit/formats/alternatives/f16_rounded.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/format_list.h"
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

// recipe::F16RoundedF32 through the hardware: cvt.rn.f16x2.f32 and the
// exact cvt.f32.f16 back for every value but NaN, which takes the model's
// NaN (a select, no branch). The instruction is the cuda-hw FP32 -> FP16
// row's, which `lowbit verify` sweeps against the model under options equal
// to recipe::F16ScaleOptions but for NaNs (static_assert below);
// cuda/tests/element_arithmetic_alternatives_test.cu sweeps this function
// against the device model on every FP32 pattern.
__device__ __forceinline__ float HardwareF16Rounded(float v) {
  // The model's NaN does not depend on the payload (F16ScaleOptions:
  // kQuietOnly), only on the sign: its two results, as constants.
  constexpr float kPositiveNan = recipe::F16RoundedF32(F32FromBits(kF32CanonicalNan));
  constexpr float kNegativeNan =
      recipe::F16RoundedF32(F32FromBits(kF32CanonicalNan | kF32SignMask));
  const std::uint32_t bits = F32Bits(v);
  const float nan = (bits & kF32SignMask) != 0 ? kNegativeNan : kPositiveNan;
  const float hardware = ptx::CvtF32F16(static_cast<std::uint16_t>(ptx::CvtRnF16x2F32(v, 0.0f)));
  return F32IsNan(bits) ? nan : hardware;
}

// The element step of a scaled recipe with integer elements in a group whose
// clamp bounds, r.qmin - zero_point and r.qmax - zero_point, lie within
// +-255 (ClampedIntegerApplies): there every RoundToInteger of the element
// step (recipe::IntegerOfScaledWith's, after its clamp) is the 1.5 * 2^23
// addition alone (alternatives/round_to_integer.h
// RoundToIntegerNearestEvenInGrid, for |y| <= 32767), without the covering
// test, the grid clamp and the out-of-line model of
// AlternativeElementArithmetic (about ten SASS instructions and a branch an
// element). Only for recipe::QuantizerIntegerWith and the EncodeElementWith
// of recipes without kRepackWithFp16Scale: the packer's integer
// (RepackedCodeWith) rounds values with no such bound. F16Rounded (AutoAWQ's
// FP16 steps): HardwareF16Rounded.
//
// Proofs: the in-grid rounding against the model on every pattern of its
// domain (proptests/backends/round_to_integer_test.cc; on the device
// cuda/tests/element_arithmetic_alternatives_test.cu); that the clamp keeps
// every rounded value in that domain, by proptests/model/repacked_code_test.cc.
struct ClampedElementArithmetic {
  __device__ float RoundToInteger(float y, RoundingMode) const {
    return alternatives::RoundToIntegerNearestEvenInGrid(y);
  }
  __device__ float F16Rounded(float v) const { return HardwareF16Rounded(v); }
};

// Roundings with no bound on their values: the packer's integer of a table
// of codes by quantizer integer (recipe::RepackedCodeWith, model_recipe.cu
// RepackTableElements) and the scaled scale rules (recipe::ChooseScaleWith,
// model_recipe.cu KernelScaleSteps): AlternativeElementArithmetic's
// RoundToInteger, and the hardware's F16Rounded above.
struct HardwareF16Arithmetic {
  __device__ float RoundToInteger(float y, RoundingMode mode) const {
    return AlternativeElementArithmetic{}.RoundToInteger(y, mode);
  }
  __device__ float F16Rounded(float v) const { return HardwareF16Rounded(v); }
};

namespace clamped_detail {
// HardwareF16Rounded's claim: the hardware rule of cvt.rn.f16.f32 is
// recipe::F16ScaleOptions once the NaN fields are the hardware's.
LOWBIT_HD_CONSTEXPR bool HardwareF16IsTheScaleRoundingButForNan() {
  const auto rule = HardwareEncodeRule(FormatId::kFp16, RoundingMode::kNearestEven, false);
  EncodeOptions scale = recipe::F16ScaleOptions();
  scale.nan_sign = rule.options.nan_sign;
  scale.nan_payload = rule.options.nan_payload;
  scale.nan_into_no_nan = rule.options.nan_into_no_nan;
  return rule.exists && SameEncodeSemantics(kFp16, scale, rule.options);
}
static_assert(HardwareF16IsTheScaleRoundingButForNan(),
              "cvt.rn.f16x2.f32 must round as recipe::F16ScaleOptions on every non-NaN input");
}  // namespace clamped_detail

// Whether ClampedElementArithmetic applies to a group of recipe r with
// zero point zp: integer elements rounded to nearest even, and qmin <= zp <=
// qmax, so both clamp bounds lie in [qmin - qmax, qmax - qmin] (within
// [-255, 255] for integer elements of up to 8 bits, static_assert'd by the
// callers) and the quantizer's integer in [qmin, qmax] (0 for a NaN).
LOWBIT_HD_CONSTEXPR bool ClampedIntegerApplies(const recipe::Recipe& r, std::int32_t zp) {
  return !r.element.IsFloat() && r.element_encode.rounding == RoundingMode::kNearestEven && r.qmin <= zp &&
         zp <= r.qmax;
}

}  // namespace lowbit::cuda::detail
