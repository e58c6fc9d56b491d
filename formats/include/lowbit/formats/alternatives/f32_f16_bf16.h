// Named alternatives to the model's conversions between FP32 and the two
// 16-bit floats, BF16 and FP16, in both directions:
//   EncodeF32BitsToBf16 / EncodeF32BitsToF16  = EncodeF32Bits(kBf16 / kFp16, x, o).code
//   DecodeBf16ToF32Bits / DecodeF16ToF32Bits  = Convert(kBf16 / kFp16, c, kFp32, o).code
//                                               (EncodeBf16Bits / EncodeF16Bits(kFp32, c, o),
//                                               DecodeToF32Bits(kBf16 / kFp16, c, d))
// for every option set o with which EncodeF32ToHalfAlternativeApplies /
// WidenToF32AlternativeApplies (at least the defaults, EncodeOptions{} and
// DecodeOptions{}), written in 32-bit integer arithmetic on the bits.
//
// Why: the cuda-sw element maps of these conversions ran the model's
// generic Unpack + RoundPack (convert.h, round_pack.h: 64-bit significand
// arithmetic, about 100 SASS instructions an element), which kept the
// encode-f32 / encode-bf16 / encode-f16 / decode-to-f32 rows of BF16 and
// FP16 ALU-bound on the H200 (0.31x to 0.45x of a device copy). These take
// a few integer instructions. cuda/src/element_ops.cuh HalfFloatAlternative
// wraps them as the functor cuda/src/convert.cu takes (layout.cuh
// kHalfFloatAlternatives).
//
// Proofs: proptests/backends/alternatives_test.cc compares each with the
// model on every input (all 2^16 codes of the 16-bit sources; all 2^32 FP32
// inputs at LOWBIT_TEST_LEVEL=full, and at ci the binades where the
// formulation changes path, every rounding class of every exponent and a
// strided sample); cuda/tests/half_float_alternatives_test.cu sweeps the device
// compilation against the device model on all 2^32 / 2^16 inputs.
//
// What the model does under those options (round_pack.h RoundPack, steps
// 1-9; unpacked.h Unpack), which each function below mirrors:
//   - NaN (step 1): Unpack puts the mantissa field MSB-aligned at bit 63;
//     NanCode with NanPayload::kTruncate keeps its top bits that fit the
//     destination's mantissa, sets the quiet bit (the mantissa MSB, IEEE 754
//     §6.2.1), and NanSign::kKeep keeps the input's sign.
//   - Inf (step 2): +-Inf (OverflowResult with from_inf: Inf unless
//     Overflow::kSaturate with InfInput::kLikeOverflow).
//   - Zero (step 4): +-0, the sign kept (keep_negative_zero).
//   - Finite (steps 5-8): round to nearest, ties to even, at the
//     destination's quantum (its subnormal quantum below its smallest
//     normal); a carry moves one binade up; beyond the largest finite value
//     Inf (IEEE 754 §7.4: round to nearest carries an overflow to infinity);
//     a negative value rounding to 0 keeps its sign.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit::alternatives {

namespace half_detail {

// The layouts the functions below are written for (format_list.h; IEEE 754
// §3.6 binary32 and binary16; BF16 is binary32's upper half).
static_assert(kFp32.exponent_bits == 8 && kFp32.mantissa_bits == 23 && kFp32.bias == 127 &&
              kFp32.specials == SpecialCodes::kIeee && kFp32.has_subnormals);
static_assert(kBf16.exponent_bits == 8 && kBf16.mantissa_bits == 7 && kBf16.bias == 127 &&
              kBf16.specials == SpecialCodes::kIeee && kBf16.has_subnormals);
static_assert(kFp16.exponent_bits == 5 && kFp16.mantissa_bits == 10 && kFp16.bias == 15 &&
              kFp16.specials == SpecialCodes::kIeee && kFp16.has_subnormals);

inline constexpr std::uint32_t kF32Magnitude = 0x7FFFFFFFu;
inline constexpr std::uint32_t kF32Inf = 0x7F800000u;
inline constexpr std::uint32_t kF32QuietBit = 0x00400000u;
inline constexpr std::uint32_t kF16Inf = 0x7C00u;
inline constexpr std::uint32_t kF16QuietBit = 0x0200u;
inline constexpr std::uint32_t kBf16QuietBit = 0x0040u;
// FP32 fraction bits an FP16 normal result drops (23 - 10), and the FP32
// exponent field of FP16's smallest normal 2^-14 (127 - 14).
inline constexpr std::uint32_t kF16Drop = 13;
inline constexpr std::uint32_t kF16MinNormalField = 113;
// The exponent fields of FP32 and FP16 differ by 127 - 15 = 112, i.e. by
// 112 << 10 in a code shifted right by kF16Drop.
inline constexpr std::uint32_t kF16Rebias = (127u - 15u) << 10;
// 65520 = 65504 + 16, half an FP16 ulp above FP16's largest finite value
// 0x7BFF = 65504: a tie whose lower neighbour 0x7BFF is odd, so it and
// everything above round to Inf (docs/formats-reference.md §3.3).
inline constexpr std::uint32_t kF16OverflowBits = 0x477FF000u;
static_assert(kF16OverflowBits == ((127u + 15u) << 23 | 0x3FFu << kF16Drop | 1u << (kF16Drop - 1)));
static_assert(kFp16.MaxFiniteCode() == 0x7BFF && kBf16.MaxFiniteCode() == 0x7F7F);

// Rounds v to nearest, ties to even, at bit `shift` (1 <= shift <= 31, v +
// 2^shift < 2^32): half a unit of the kept bits is added, less one when the
// kept bits are even, so that a tie carries only from an odd kept value.
LOWBIT_HD_CONSTEXPR std::uint32_t RoundShiftNearestEven(std::uint32_t v, std::uint32_t shift) {
  return (v + ((1u << (shift - 1)) - 1u) + ((v >> shift) & 1u)) >> shift;
}

}  // namespace half_detail

// FP32 -> BF16. BF16 has FP32's exponent field and bias, and its 7 mantissa
// bits are FP32's top 7, so every FP32 value, subnormals included, rounds at
// the same bit 16 (RoundPack step 5: quantum = max(e, -126) - 7, 16 bits
// below FP32's quantum max(e, -126) - 23). Rounding the whole magnitude bit
// pattern there lets a carry out of the mantissa move into the exponent
// field (step 7) and, from 0x7F7F8000 up, into Inf's 0x7F80 (step 8; the
// model's threshold too, docs/formats-reference.md §3.2); the largest
// magnitude 0x7F800000 + 0x7FFF leaves the sign bit alone. A NaN keeps its
// sign and top 7 payload bits and is quieted (bit 6).
LOWBIT_HD_CONSTEXPR std::uint16_t EncodeF32BitsToBf16(std::uint32_t bits) {
  using namespace half_detail;
  if ((bits & kF32Magnitude) > kF32Inf) return static_cast<std::uint16_t>((bits >> 16) | kBf16QuietBit);
  return static_cast<std::uint16_t>(RoundShiftNearestEven(bits, 16));
}

// FP32 -> FP16, by the class of |x| (a = its bits):
//  - a > Inf's bits, a NaN: sign | 0x7C00 | top 10 payload bits | quiet bit 9.
//  - a >= 65520 (kF16OverflowBits), Inf included: sign | Inf (RoundPack step
//    8: the tie 65520 rounds to the odd 0x7BFF's successor, beyond max).
//  - a >= 2^-14, a normal result: the bits rounded at bit 13 and rebiased by
//    112 << 10; a carry out of the mantissa moves into the exponent (2^16 -
//    ulp/2 and up are already the overflow class above).
//  - below, a subnormal result n * 2^-24: FP32 field f >= 1 is
//    (2^23 + M) * 2^(f - 150), so n = that significand rounded at bit
//    126 - f (14 for f = 112 ... 24 for f = 102, 2^-25, where the tie at
//    exactly 2^-25 gives the even 0); fields below 102 (|x| < 2^-25, FP32
//    subnormals and zeros included) give 0. A carry to n = 0x400 is the
//    smallest normal's code, as RoundPack step 7 assembles it.
// The sign is x's throughout (-0 and negatives rounding to 0 give 0x8000).
LOWBIT_HD_CONSTEXPR std::uint16_t EncodeF32BitsToF16(std::uint32_t bits) {
  using namespace half_detail;
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t a = bits & kF32Magnitude;
  std::uint32_t magnitude;
  if (a > kF32Inf) {
    magnitude = kF16Inf | ((a >> kF16Drop) & 0x3FFu) | kF16QuietBit;
  } else if (a >= kF16OverflowBits) {
    magnitude = kF16Inf;
  } else if (a >= kF16MinNormalField << 23) {
    magnitude = RoundShiftNearestEven(a, kF16Drop) - kF16Rebias;
  } else {
    const std::uint32_t field = a >> 23;
    const std::uint32_t significand = (a & 0x7FFFFFu) | 0x800000u;
    magnitude = field < kF16MinNormalField - 11 ? 0u : RoundShiftNearestEven(significand, 126u - field);
  }
  return static_cast<std::uint16_t>(sign | magnitude);
}

// BF16 -> FP32: every BF16 value is an FP32 value with the same exponent
// field and the mantissa's low 16 bits zero, so the code shifted up 16 bits
// is exact (the model's Unpack + RoundPack round nothing away: steps 5-6
// find no discarded bits), -0 and subnormals included. A NaN keeps its sign
// and 7 payload bits and is quieted (bit 22): a signalling NaN is not left
// signalling under NanPayload::kTruncate (kPreserve, the hardware's bit
// shift, would; docs/formats-reference.md §3.2).
LOWBIT_HD_CONSTEXPR std::uint32_t DecodeBf16ToF32Bits(std::uint16_t code) {
  using namespace half_detail;
  const std::uint32_t bits = static_cast<std::uint32_t>(code) << 16;
  return (bits & kF32Magnitude) > kF32Inf ? (bits | kF32QuietBit) : bits;
}

// FP16 -> FP32, exact for numbers (FP32's range and precision hold every
// FP16 value):
//  - field 31: +-Inf, or a NaN with its sign, its 10 payload bits at the top
//    of FP32's mantissa and the quiet bit 22 set;
//  - fields 1..30: the field rebiased by 112, the mantissa shifted up 13;
//  - field 0, m != 0: the subnormal m * 2^-24 = 2^(p - 24) * (m / 2^p), p the
//    index of m's highest set bit (0..9), an FP32 normal of field p + 103
//    whose mantissa is m's bits below p, shifted up to bit 22;
//  - +-0 keeps its sign.
LOWBIT_HD_CONSTEXPR std::uint32_t DecodeF16ToF32Bits(std::uint16_t code) {
  using namespace half_detail;
  const std::uint32_t sign = (static_cast<std::uint32_t>(code) & 0x8000u) << 16;
  const std::uint32_t field = (code >> 10) & 0x1Fu;
  const std::uint32_t m = code & 0x3FFu;
  std::uint32_t magnitude;
  if (field == 0x1F) {
    magnitude = kF32Inf | (m << kF16Drop) | (m != 0 ? kF32QuietBit : 0u);
  } else if (field != 0) {
    magnitude = ((field + 112u) << 23) | (m << kF16Drop);
  } else if (m != 0) {
    const std::uint32_t p = static_cast<std::uint32_t>(HighestSetBit(m));
    // m << (23 - p) has its top bit at 23, the implicit bit: added to field
    // p + 102 it makes field p + 103 with m's lower bits as the mantissa.
    magnitude = ((p + 102u) << 23) + (m << (23u - p));
  } else {
    magnitude = 0;
  }
  return sign | magnitude;
}

// The options under which EncodeF32BitsToBf16 / EncodeF32BitsToF16 equal
// EncodeF32Bits(kBf16 / kFp16, x, options).code: the format defaults
// (EncodeOptions{}) and every option set that agrees with them on the fields
// that can change a BF16 / FP16 result (cuda/src/options_match.h
// SameEncodeSemantics names the same fields). The others do not act on these
// destinations in RoundPack: inf_input only under Overflow::kSaturate;
// nan_into_no_nan, zero_into_no_zero and negative_into_unsigned only for
// formats without NaN, without zero, or unsigned; random_bits only under
// stochastic rounding. alternatives_test.cc sweeps EncodeOptions{} and a set
// with all of those changed.
LOWBIT_HD_CONSTEXPR bool EncodeF32ToHalfAlternativeApplies(const EncodeOptions& o) {
  return o.rounding == RoundingMode::kNearestEven && o.overflow == Overflow::kFormatDefault &&
         o.nan_sign == NanSign::kKeep && o.nan_payload == NanPayload::kTruncate && o.keep_negative_zero;
}

// The options under which DecodeBf16ToF32Bits / DecodeF16ToF32Bits equal
// Convert(kBf16 / kFp16, code, kFp32, options).code. Widening is exact, so
// RoundPack never finds discarded bits and never overflows a finite value:
// the rounding mode (stochastic included, whose random bits then add
// nothing) and the no-NaN / no-zero / unsigned policies cannot act. What can
// act: the NaN sign and payload, the -0 rule, and on +-Inf inputs the
// overflow policy, since Overflow::kSaturate with InfInput::kLikeOverflow
// turns +-Inf into +-max (round_pack.h OverflowResult). alternatives_test.cc
// sweeps every code under every rounding mode, overflow and Inf policy
// (this predicate's refusal included) with the other fields changed too.
// The decode defaults (DecodeOptions{}, ToDecodeEncodeOptions) are among
// them.
LOWBIT_HD_CONSTEXPR bool WidenToF32AlternativeApplies(const EncodeOptions& o) {
  const bool inf_stays_inf = !(o.overflow == Overflow::kSaturate && o.inf_input == InfInput::kLikeOverflow);
  return inf_stays_inf && o.nan_sign == NanSign::kKeep && o.nan_payload == NanPayload::kTruncate &&
         o.keep_negative_zero;
}
LOWBIT_HD_CONSTEXPR bool WidenToF32AlternativeApplies(const DecodeOptions& d) {
  return d.nan_sign == NanSign::kKeep && d.nan_payload == NanPayload::kTruncate;
}

}  // namespace lowbit::alternatives
