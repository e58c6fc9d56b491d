// A named alternative to the model's recipe::RoundToIntegerF32 (recipe/
// steps.h) under round to nearest even, for kernels that pass it to the
// model's steps in place of the model's own rounding (the integer step of
// recipe::IntegerOfScaled and RepackedInteger).
//
// The model rounds through its one RoundPack into a 16-bit integer grid,
// saturating (kRoundingGrid16, Overflow::kSaturate): about 100 SASS
// instructions an element on sm_90, most of an INT8 amax-clamp or GPTQ-fp16
// element step on the H200 (bench/RESULTS-archive-2026.md "GPU roofline": 4.9 and 8.9
// warp instructions an element). Here: for a finite |y| < 2^22, y + 1.5 *
// 2^23 lies in [2^23, 2^24), where the FP32 spacing is 1, so the addition
// rounds y to an integer under the FP32 rounding (IEEE 754-2019 §4.3.1,
// ties to even) and subtracting 1.5 * 2^23 again is exact (Sterbenz); the
// result is then clamped to the grid [-32768, 32767]. x - x is +0 under
// round to nearest, so a negative y that rounds to zero gives +0, as the
// model's integer code 0 does. NaN, infinities and |y| >= 2^22 take the
// model. The identity is the MXINT8 alternative's (alternatives/mxint8.h).
//
// Proof: proptests/backends/round_to_integer_test.cc compares it with the
// model on every FP32 pattern at LOWBIT_TEST_LEVEL=full (at ci: every
// half-integer below 2^16 and its neighbours, every 16th pattern below 2^16,
// a strided sample).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::alternatives {

namespace round_detail {
inline constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
inline constexpr float kLimit = 4194304.0f;   // 2^22
inline constexpr float kGridMin = -32768.0f;  // kRoundingGrid16: int16
inline constexpr float kGridMax = 32767.0f;
static_assert(F32Bits(kMagic) == 0x4B400000u && F32Bits(kLimit) == 0x4A800000u);
}  // namespace round_detail

LOWBIT_HD_CONSTEXPR bool RoundToIntegerAlternativeApplies(RoundingMode mode) {
  return mode == RoundingMode::kNearestEven;
}

// Whether the addition covers y: finite and |y| < 2^22 (NaN compares
// false).
LOWBIT_HD_CONSTEXPR bool RoundToIntegerNearestEvenCovers(float y) {
  return F32Abs(y) < round_detail::kLimit;
}

// recipe::RoundToIntegerF32(y, kNearestEven) for every y that
// RoundToIntegerNearestEvenCovers.
LOWBIT_HD_CONSTEXPR float RoundToIntegerNearestEvenCovered(float y) {
  using namespace round_detail;
  const float r = (y + kMagic) - kMagic;
  return r < kGridMin ? kGridMin : (r > kGridMax ? kGridMax : r);
}

// recipe::RoundToIntegerF32(y, kNearestEven) for every |y| <= 32767: the
// addition alone. There the rounded value lies in [-32767, 32767] (rounding
// is monotone and the bounds are integers), inside the grid, so the clamp
// of RoundToIntegerNearestEvenCovered changes nothing. For callers whose
// values are clamped that far already (cuda/src/element_arithmetic.cuh
// ClampedElementArithmetic).
inline constexpr float kInGridLimit = 32767.0f;
LOWBIT_HD_CONSTEXPR float RoundToIntegerNearestEvenInGrid(float y) {
  using namespace round_detail;
  return (y + kMagic) - kMagic;
}

// recipe::RoundToIntegerF32(y, kNearestEven), for every FP32 y. (A kernel
// may compose the two functions above with the model kept out of line:
// cuda/src/element_arithmetic.cuh.)
LOWBIT_HD_CONSTEXPR float RoundToIntegerNearestEvenF32(float y) {
  if (!RoundToIntegerNearestEvenCovers(y)) return recipe::RoundToIntegerF32(y, RoundingMode::kNearestEven);
  return RoundToIntegerNearestEvenCovered(y);
}

}  // namespace lowbit::alternatives
