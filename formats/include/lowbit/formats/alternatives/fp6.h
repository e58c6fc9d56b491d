// Named alternatives to the model's FP6 element conversion (E2M3, E3M2), the
// element step of the MXFP6 recipes, which the CUDA MX kernels use
// (cuda/src/mx.cu). Each is proven equal to the model on every input by
// proptests/backends/alternatives_test.cc (every 2^32 FP32 input at
// LOWBIT_TEST_LEVEL=full; at ci the binades where the formulation changes
// path, every rounding class of every exponent and a strided sample) and,
// for the device compilation, by the GPU sweep of
// cuda/tests/fast_mx_elements_test.cu (all 2^32 inputs).
//
// The model step they replace is recipe::EncodeScaled(r, s, y) of a recipe
// with an FP6 element, i.e. EncodeF32(element, y, r.element_encode)
// (recipe/steps.h), for the element rules of every MX profile of
// recipe/catalog.h: SaturatingElements(rounding, nan_sign) with rounding to
// nearest even (ocp, msx-even, te, the ao-* profiles, nearest) or to nearest
// with ties away from zero (msx; docs/formats-reference.md §5.2). FP6 has no
// Inf or NaN code (docs/formats-reference.md §4.4), so under those rules the
// model (round_pack.h) returns
//   NaN (either sign, any payload)  -> +max (0x1F: nan_into_no_nan kPositiveMax;
//                                      the NaN sign policy has no NaN code to act on)
//   +-Inf, |y| beyond max           -> +-max (0x1F | sign: no Inf, so it saturates)
//   -0, a negative rounding to zero -> 0x20 (keep_negative_zero)
// On sm_90 there is no FP6 conversion instruction (sm_100a-class only, §4.4),
// and the model's generic RoundPack (64-bit significand arithmetic) took
// about 130 SASS instructions an element in the MX kernels, which made the
// MXFP6 quantize rows arithmetic-bound on the H200 (0.21x of a device copy).
//
// Two forms: 32-bit integer arithmetic on the FP32 bits (a rounding
// increment and a shift; either tie rule; the subnormal results need a
// variable shift, and nvcc branches between the two paths: about 29
// instructions on sm_90), and one FP32 addition (ties to even only; 12
// instructions, no branch), which the kernels take for ties to even.
#pragma once

#include <cstdint>

#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::alternatives {

namespace fp6_detail {

using e2m1_detail::Max;
using e2m1_detail::Min;

// What to add to v before dropping its low `shift` bits (1 <= shift <= 31) so
// that the shift rounds to nearest: half a unit of the kept bits, less one
// when the kept bits are even under ties-to-even (a tie then stays below the
// carry), or exactly half under ties-away.
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t RoundingIncrement(std::uint32_t v, std::uint32_t shift) {
  static_assert(kRounding == RoundingMode::kNearestEven || kRounding == RoundingMode::kNearestAway,
                "written for round to nearest, ties to even or away");
  const std::uint32_t half = 1u << (shift - 1);
  if constexpr (kRounding == RoundingMode::kNearestEven) return half - 1 + ((v >> shift) & 1u);
  else return half;
}

// The constants of an FP6 grid of 1 + kE + kM bits with bias kBias,
// subnormals, and no Inf or NaN codes (the top exponent field holds numbers),
// as FP32 bit fields.
template <int kE, int kM, int kBias>
struct Grid {
  static_assert(1 + kE + kM == 6 && kM >= 1 && kE >= 2);
  static constexpr std::uint32_t kShift = kF32MantissaBits - kM;  // FP32 fraction bits a normal result drops
  // FP32 exponent fields of the smallest normal 2^(1 - kBias) and of the top binade.
  static constexpr std::uint32_t kMinNormalField = kF32Bias + 1 - kBias;
  static constexpr std::uint32_t kMaxField = (1u << kE) - 1;
  static constexpr std::uint32_t kTopField = kMinNormalField + kMaxField - 1;
  static constexpr std::uint32_t kMantissaMask = (1u << kM) - 1;
  static constexpr std::uint32_t kMaxBits = (kTopField << kF32MantissaBits) | (kMantissaMask << kShift);
  static constexpr std::uint32_t kMaxCode = (kMaxField << kM) | kMantissaMask;
  static constexpr std::uint32_t kSignCode = kMaxCode + 1;
  static constexpr std::uint32_t kSignShift = 31 - kE - kM;  // FP32's sign bit onto the code's
};

// Integer form, ties to even or away:
//  - |y| is clamped to max first, on the bits: rounding is monotone and max
//    is on the grid, so this equals rounding then saturating; +-Inf land on
//    max, and a NaN (bits above Inf's) too.
//  - A normal result (|y| >= 2^(1 - kBias)): the FP32 bits themselves,
//    rounded at bit 23 - kM by adding the rounding increment (a carry out of
//    the mantissa moves into the exponent field, as it should), shifted, and
//    rebiased: the FP32 field F becomes F - (127 - kBias).
//  - A subnormal result: the significand with its implicit bit, rounded at
//    the bit that is 2^(1 - kBias - kM) for this exponent (a shift of at most
//    31: beyond 24 everything rounds to 0, FP32 subnormal inputs included;
//    rounding up to 2^kM gives the smallest normal's code, as it should).
//  - The sign is y's (so -0 and negatives rounding to zero give 0x20), but a
//    NaN gives +max.
template <int kE, int kM, int kBias, RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeFromBits(float y) {
  using G = Grid<kE, kM, kBias>;
  const std::uint32_t bits = F32Bits(y);
  const std::uint32_t a = bits & ~kF32SignMask;
  const std::uint32_t u = Min(a, G::kMaxBits);
  std::uint32_t mag;
  if (u >= G::kMinNormalField << kF32MantissaBits) {
    mag = ((u + RoundingIncrement<kRounding>(u, G::kShift)) >> G::kShift) - ((G::kMinNormalField - 1) << kM);
  } else {
    const std::uint32_t shift = Min(G::kShift + G::kMinNormalField - (u >> kF32MantissaBits), 31u);
    const std::uint32_t sig = (u & kF32MantissaMask) | (1u << kF32MantissaBits);
    mag = (sig + RoundingIncrement<kRounding>(sig, shift)) >> shift;
  }
  if (a > kF32ExponentMask) return G::kMaxCode;  // NaN -> +max
  return mag | ((bits >> G::kSignShift) & G::kSignCode);
}

// One FP32 addition, ties to even (the E2M1 encoder's formulation,
// alternatives/e2m1.h EncodeE2m1OneAddition, for a wider grid): the FP6
// spacing in binade E is 2^(E - kM), and 2^(1 - kBias - kM) below the
// smallest normal, so with E' = E clamped to the normal binades the number
// m = 2^(E' + 23 - kM) has that spacing as its FP32 ulp, and |y| + m rounds
// |y| to the grid with ties to even in one addition (an even multiple of the
// spacing is an even code). Adding m with y's sign keeps the sign in the sum,
// so bits(y + m) - bits(m) is that multiple k (up to 2^(kM + 1), a carry
// into the next binade) and the code is k + ((E' - Emin) << kM), capped at
// max (overflow and +-Inf; the top binade stands for every binade above it).
// A NaN sum is 0x7FFFFFFF (e2m1_detail::AddF32Bits, NVIDIA's NaN): a huge
// difference and sign 0, so +max. -0 and negatives rounding to zero keep
// their sign: code 0x20.
template <int kE, int kM, int kBias>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeOneAddition(float y) {
  using G = Grid<kE, kM, kBias>;
  const std::uint32_t bits = F32Bits(y);
  const std::uint32_t eb = Min(Max(bits & kF32ExponentMask, G::kMinNormalField << kF32MantissaBits),
                               G::kTopField << kF32MantissaBits);
  const std::uint32_t m = (eb + (G::kShift << kF32MantissaBits)) | (bits & kF32SignMask);
  const std::uint32_t s = e2m1_detail::AddF32Bits(y, F32FromBits(m));
  const std::uint32_t mag =
      Min(s - m + ((eb - (G::kMinNormalField << kF32MantissaBits)) >> G::kShift), G::kMaxCode);
  return mag | ((s >> G::kSignShift) & G::kSignCode);
}

}  // namespace fp6_detail

// The grids the encoders below are written for (formats/spec/include/lowbit/
// formats/format_list.h; docs/formats-reference.md §4.4: E2M3 max 7.5,
// smallest subnormal 0.125; E3M2 max 28, smallest subnormal 0.0625).
static_assert(kE2m3.IsFloat() && kE2m3.has_sign && kE2m3.exponent_bits == 2 && kE2m3.mantissa_bits == 3 &&
                  kE2m3.bias == 1 && kE2m3.has_subnormals && kE2m3.specials == SpecialCodes::kNone,
              "EncodeE2m3 is written for the E2M3 grid");
static_assert(kE3m2.IsFloat() && kE3m2.has_sign && kE3m2.exponent_bits == 3 && kE3m2.mantissa_bits == 2 &&
                  kE3m2.bias == 3 && kE3m2.has_subnormals && kE3m2.specials == SpecialCodes::kNone,
              "EncodeE3m2 is written for the E3M2 grid");
static_assert(kE2m3.MaxFiniteCode() == 0x1F && kE2m3.SignBit() == 0x20 && kE3m2.MaxFiniteCode() == 0x1F &&
              kE3m2.SignBit() == 0x20);

// EncodeF32(kE2m3 / kE3m2, y, o).code for every option set o with which
// Fp6AlternativeApplies: the integer form for either rounding, the
// one-addition form for ties to even.
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE2m3FromBits(float y) {
  return fp6_detail::EncodeFromBits<2, 3, 1, kRounding>(y);
}
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE3m2FromBits(float y) {
  return fp6_detail::EncodeFromBits<3, 2, 3, kRounding>(y);
}
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE2m3OneAddition(float y) { return fp6_detail::EncodeOneAddition<2, 3, 1>(y); }
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE3m2OneAddition(float y) { return fp6_detail::EncodeOneAddition<3, 2, 3>(y); }

// The encoder the kernels take for rounding kRounding: ties to even by the
// one-addition form, ties away by the integer form.
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE2m3(float y) {
  if constexpr (kRounding == RoundingMode::kNearestEven) return EncodeE2m3OneAddition(y);
  else return EncodeE2m3FromBits<kRounding>(y);
}
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE3m2(float y) {
  if constexpr (kRounding == RoundingMode::kNearestEven) return EncodeE3m2OneAddition(y);
  else return EncodeE3m2FromBits<kRounding>(y);
}

// Whether EncodeE2m3 / EncodeE3m2 with kRounding = the recipe's rounding
// compute recipe::EncodeScaled for recipe r: an E2M3 or E3M2 element, round
// to nearest (even or away), NaN -> +max, -0 kept. The other options do not
// act on a format without Inf and NaN codes (round_pack.h: it saturates
// whatever the overflow and Inf policies say, and has no NaN code for the
// NaN sign and payload policies).
constexpr bool Fp6AlternativeApplies(const recipe::Recipe& r) {
  const EncodeOptions& o = r.element_encode;
  return (profile_detail::SameLayout(r.element, kE2m3) || profile_detail::SameLayout(r.element, kE3m2)) &&
         (o.rounding == RoundingMode::kNearestEven || o.rounding == RoundingMode::kNearestAway) &&
         o.nan_into_no_nan == NanIntoNoNan::kPositiveMax && o.keep_negative_zero;
}

}  // namespace lowbit::alternatives
