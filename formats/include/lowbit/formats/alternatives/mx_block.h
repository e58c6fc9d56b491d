// Named alternatives to two MX steps of recipe/steps.h, as the CUDA MX
// kernels take them; proptests/backends/alternatives_test.cc proves each equal to the
// model's step for every MX recipe of the catalog.
//
//   ChooseMxScaleCode           the code of recipe::ChooseScale of an MX
//                               recipe, with the RCEIL conversion read from
//                               the bits (E8m0RceilFromBits); the other MX
//                               rules are the model's own (already bit-level).
//   ChooseMxScaleFromBits       recipe::ChooseScale's code, scale and
//                               factor with that code (the SIMD kernels).
//   ScaledMxElementByReciprocal recipe::ScaledElement of an MX recipe as one
//                               multiply by 2^-e (MxScaleByReciprocal), also
//                               for the recipes that divide by X = 2^e (x / X
//                               takes a division per element on a GPU, about
//                               ten operations); ScaledMxElementAnyNan, the
//                               same without the NaN-scale select, for
//                               element conversions that map every NaN to
//                               one code.
#pragma once

#include <cstdint>

#include "lowbit/formats/alternatives/e8m0_rceil.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::alternatives {

// The E8M0 code of an MX block from its amax: recipe::ChooseScale(r,
// {amax}).code. For kMxRceil the model encodes rule_value = amax * fp32(1/max)
// with the generic E8M0 rounding; E8m0RceilFromBits gives the same code from
// the bits. The other rules are the model's own (already bit-level) rule,
// without the decoded scale and factor that ChooseScale adds: a kernel that
// multiplies by ScaledMxElementByReciprocal needs the code only, and the
// generic E8M0 decode would stay in its code even when unused (a call the
// compiler cannot prove free of side effects).
LOWBIT_HD_CONSTEXPR std::uint8_t ChooseMxScaleCode(const recipe::Recipe& r, float amax) {
  if (r.scale_rule == recipe::ScaleRule::kMxRceil) {
    return static_cast<std::uint8_t>(E8m0RceilFromBits(amax * recipe::MaxNormReciprocal(r), r.scale_saturate));
  }
  return recipe::detail::ChooseMxScale(r, amax).code;
}

// recipe::ChooseScale of an MX recipe with the code from ChooseMxScaleCode:
// the code, the decoded scale X and the element factor, as the SIMD MX
// quantizers take them once per block. RCEIL through the generic E8M0
// rounding of the model made the SIMD MXFP8 / MXFP4 TE quantizers 1.2-1.3x
// slower than the bit-level form (bench/RESULTS-archive-2026.md "Before and after the
// redesign"). `exponent` and `rule_value`, read only by explain and traces,
// are left 0.
LOWBIT_HD_CONSTEXPR recipe::BlockScale ChooseMxScaleFromBits(const recipe::Recipe& r, float amax) {
  recipe::BlockScale s;
  s.code = ChooseMxScaleCode(r, amax);
  s.decode = DecodeToF32(r.scale_format, s.code);
  s.factor = recipe::MxElementFactor(r, s.code, s.decode);
  return s;
}

// The scale of an MX block whose code is `code` in the form the elements
// below use: the factor 2^-e (recipe::E8m0ReciprocalF32). Computed once per
// block.
LOWBIT_HD_CONSTEXPR recipe::BlockScale MxScaleByReciprocal(std::uint8_t code) {
  recipe::BlockScale s;
  s.code = code;
  s.factor = recipe::E8m0ReciprocalF32(code);
  return s;
}

// The same for recipe r: its factor rule (recipe::MxElementFactor), which
// differs from 2^-e only for torchao's eager RCEIL at code 0 (1.0). The
// one-argument form above is this for every other MX recipe.
LOWBIT_HD_CONSTEXPR recipe::BlockScale MxScaleByReciprocal(const recipe::Recipe& r, std::uint8_t code) {
  recipe::BlockScale s;
  s.code = code;
  recipe::Recipe multiply = r;
  multiply.element_step = recipe::ElementStep::kMultiply;
  s.factor = recipe::MxElementFactor(multiply, code, 0.0f);
  return s;
}

// The FP32 value handed to the element conversion, for an MX block whose
// scale is MxScaleByReciprocal(code): recipe::ScaledElement with the step
// "multiply by 2^-e". For a recipe that divides, x / 2^e and x * 2^-e are the
// one correctly rounded value of the same real number, since 2^-e is exact in
// FP32 for every code 0..254 (2^127 .. 2^-127, the last an FP32 subnormal;
// docs/formats-reference.md §3.1); the NaN code 0xFF takes the model's own
// NaN rule inside ScaledElement.
LOWBIT_HD_CONSTEXPR float ScaledMxElementByReciprocal(const recipe::Recipe& r, const recipe::BlockScale& s, float x) {
  recipe::Recipe multiply = r;
  multiply.element_step = recipe::ElementStep::kMultiply;
  return recipe::ScaledElement(multiply, s, x);
}

// recipe::ScaledElement of an MX recipe with the NaN-scale rule left out:
// x * 2^-e alone, where the model returns the canonical +NaN for every
// element of a NaN-scale block. The results differ only in which NaN, so an
// element conversion that maps every NaN to one code gives the model's code:
// the E2M1 encoders above (every NaN -> +6) and cvt.rn.satfinite into E4M3 /
// E5M2 (every NaN -> 0x7F, the `nvidia` profile). On E2M1 and FP8 blocks this
// saves a select per element of the arithmetic-bound kernels.
// proptests/backends/alternatives_test.cc compares the codes with the model's for
// every MX recipe with such an element.
LOWBIT_HD_CONSTEXPR float ScaledMxElementAnyNan(const recipe::BlockScale& s, float x) { return x * s.factor; }

}  // namespace lowbit::alternatives
