// Named alternatives to the model's MXINT8 element conversion, which the
// CUDA MX kernels use (cuda/src/mx.cu). Each is proven equal to the model on
// every input by proptests/backends/alternatives_test.cc (every 2^32 FP32
// input at LOWBIT_TEST_LEVEL=full; at ci the binades where the formulation
// changes path, every rounding class of every exponent and a strided
// sample) and, for the device compilation, by the GPU sweep of
// cuda/tests/fast_mx_elements_test.cu (all 2^32 inputs).
//
// The model step they replace is the MX-integer branch of
// recipe::EncodeScaled(r, s, y) (recipe/steps.h): y is already on the integer
// grid (recipe::ScaledElement multiplied it by 2^6), EncodeF32(kInt8, y,
// r.element_encode) rounds it and saturates to [-128, 127], and the code is
// then clamped to [qmin, qmax] = [-127, 127] (MXINT8 never uses -128:
// docs/formats-reference.md §5.2). The element rules are those of the MX
// profiles listed for MXINT8 in recipe/catalog.h, SaturatingElements(rounding,
// nan_sign): ties to even (ocp, msx-even; te, which the CUDA kernels also
// build) or ties away from zero (msx). Under them the model (round_pack.h)
// returns
//   NaN (either sign, any payload)  -> +127 (0x7F: nan_into_no_nan kPositiveMax)
//   +Inf, y >= 127.5 (RNE: 127.5 -> 128, saturated) -> +127 (0x7F)
//   -Inf, y <= -127.5 -> -128 or below, clamped to -127 (0x81)
//   -0, a negative rounding to zero -> 0 (an integer has no -0)
// The model's generic RoundPack took about 127 SASS instructions an element
// in the MX kernels on sm_90 (64-bit significand arithmetic), which made the
// MXINT8 quantize rows arithmetic-bound on the H200 (0.21x of a device copy).
// The FP32 form below is 3 instructions (FMNMX, FMNMX, FADD: the magic's low
// byte is 0, so the subtraction folds into the byte store), the integer form
// about 19.
//
// cuda/src/ptx.cuh CvtRniSatS8F32 (cvt.rni.sat.s8.f32) rounds to even and
// saturates in one instruction, but to [-128, 127] and with NaN -> 0, so it
// needs the same clamp as below and runs on the conversion unit; the forms
// here are plain FP32 / integer operations, constant expressions on the host
// and the same operations on the device.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::alternatives {

namespace mxint8_detail {

static_assert(!kInt8.IsFloat() && kInt8.has_sign && kInt8.total_bits == 8 && kInt8.IntMax() == 127,
              "written for two's complement INT8 codes");
inline constexpr std::uint32_t kQmax = 127;                                    // MakeMxRecipe's qmax
inline constexpr std::uint32_t kQmaxBits = 0x42FE0000u;                        // 127.0f
inline constexpr std::uint32_t kMagicBits = 0x4B400000u;                       // 1.5 * 2^23
static_assert(F32FromBits(kQmaxBits) == 127.0f && F32FromBits(kMagicBits) == 12582912.0f);

LOWBIT_HD_CONSTEXPR std::uint32_t Min(std::uint32_t a, std::uint32_t b) { return a < b ? a : b; }

// fminf(y, 127) then fmaxf(., -127): a NaN y gives 127, as fminf returns the
// other operand of a NaN (C11 F.10.9.3; CUDA fminf likewise). The device
// takes the instructions themselves; the comparisons are the same function
// (no rounding, and the sign of a zero does not reach a code).
LOWBIT_HD_CONSTEXPR float ClampToQmax(float y) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return fmaxf(fminf(y, 127.0f), -127.0f);
#endif
  const float c = y < 127.0f ? y : 127.0f;  // NaN -> 127
  return c > -127.0f ? c : -127.0f;
}

// a + b in FP32, round to nearest even; on the device __fadd_rn, which the
// compiler may not contract into an FMA with the multiply before it.
// (Operands are never NaN here.)
LOWBIT_HD_CONSTEXPR float AddRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return __fadd_rn(a, b);
#endif
  return a + b;
}

}  // namespace mxint8_detail

// Ties to even in FP32 arithmetic, four operations: clamp y to [-127, 127]
// (NaN -> 127), then add 1.5 * 2^23. Every sum lies in [2^23, 2^24), whose
// FP32 spacing is 1, so the addition rounds y to an integer with ties to
// even, and the sum's bits minus the magic's bits are that integer (two's
// complement, its low byte the code). Clamping before rounding equals
// rounding then clamping: rounding is monotone and +-127 are integers.
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeMxInt8MagicAdd(float y) {
  using namespace mxint8_detail;
  const float sum = AddRn(ClampToQmax(y), F32FromBits(kMagicBits));
  return (F32Bits(sum) - kMagicBits) & 0xFFu;
}

// Ties to even or away, in 32-bit integer arithmetic on the bits: |y| is
// clamped to 127.0 on the bits (Inf and NaN land there too), its significand
// with the implicit bit is rounded at the bit worth 1 (a shift of 150 - F
// for the FP32 exponent field F, at most 31: |y| < 0.5 gives 0), and the sign
// applied as a two's complement negation, except for a NaN (+127).
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeMxInt8FromBits(float y) {
  static_assert(kRounding == RoundingMode::kNearestEven || kRounding == RoundingMode::kNearestAway,
                "written for round to nearest, ties to even or away");
  using namespace mxint8_detail;
  const std::uint32_t bits = F32Bits(y);
  const std::uint32_t a = bits & ~kF32SignMask;
  const std::uint32_t u = Min(a, kQmaxBits);
  const std::uint32_t shift =
      Min(kF32Bias + kF32MantissaBits - (u >> kF32MantissaBits), 31u);  // >= 17
  const std::uint32_t sig = (u & kF32MantissaMask) | (1u << kF32MantissaBits);
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t inc = kRounding == RoundingMode::kNearestEven ? half - 1 + ((sig >> shift) & 1u) : half;
  const std::uint32_t n = (sig + inc) >> shift;
  const bool negative = (bits & kF32SignMask) != 0 && a <= kF32ExponentMask;  // not a NaN
  return (negative ? 0u - n : n) & 0xFFu;
}

// The MXINT8 code of y under rounding kRounding: the FP32 form for ties to
// even (fewer operations), the integer form for ties away.
template <RoundingMode kRounding>
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeMxInt8(float y) {
  if constexpr (kRounding == RoundingMode::kNearestEven) return EncodeMxInt8MagicAdd(y);
  else return EncodeMxInt8FromBits<kRounding>(y);
}

// Whether EncodeMxInt8 with kRounding = the recipe's rounding computes
// recipe::EncodeScaled for recipe r: an MX recipe with INT8 elements, codes
// clamped to [-127, 127], round to nearest (even or away), NaN -> +127, and
// no wrap-around. The other options do not act on an integer format
// (round_pack.h: +-Inf and overflow give +-max whatever the overflow and Inf
// policies say, an integer has no NaN code and no -0).
constexpr bool MxInt8AlternativeApplies(const recipe::Recipe& r) {
  const EncodeOptions& o = r.element_encode;
  return r.family() == recipe::Family::kMx && profile_detail::SameLayout(r.element, kInt8) &&
         r.qmin == -static_cast<int>(mxint8_detail::kQmax) && r.qmax == static_cast<int>(mxint8_detail::kQmax) &&
         (o.rounding == RoundingMode::kNearestEven || o.rounding == RoundingMode::kNearestAway) &&
         o.nan_into_no_nan == NanIntoNoNan::kPositiveMax && o.overflow != Overflow::kWrap;
}

}  // namespace lowbit::alternatives
