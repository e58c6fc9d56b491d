// Per-target array kernels (Highway foreach_target: this file is compiled
// once per target). Encodes follow round_pack.h step by step on 32-bit lanes,
// with integer ops only: Debian's Highway 1.0.3 DemoteTo truncates to BF16
// and is correct for FP16 only with F16C (docs/design.md "Known traps (measured)"), so no
// float rounding instruction is ever asked to round. Decodes of <= 8-bit
// formats are table lookups (decode_tables.h) held in registers, or on the
// targets without AVX-512 for FP32 output an exact power-of-two multiply
// checked against the table on every code (DecodeArithmeticLoop); 16-bit
// decodes widen exactly.

// Per-target include guard (Highway's convention for -inl.h files).
#if defined(LOWBIT_SIMD_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_CONVERT_INL_H_
#undef LOWBIT_SIMD_CONVERT_INL_H_
#else
#define LOWBIT_SIMD_CONVERT_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "decode_tables.h"
#include "encode_plan.h"
#include "hwy/highway.h"
#include "kernel_args.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D32 = hn::ScalableTag<std::uint32_t>;
using DI32 = hn::RebindToSigned<D32>;
using DF32 = hn::RebindToFloat<D32>;
using V = hn::Vec<D32>;
using VI = hn::Vec<DI32>;
using M = hn::Mask<D32>;

constexpr std::uint32_t kSignBit32 = 0x80000000u;
constexpr std::uint32_t kInf32 = 0x7F800000u;
constexpr std::uint32_t kMantissa32 = 0x007FFFFFu;
constexpr std::uint32_t kHidden32 = 0x00800000u;
constexpr int kMantissaBits32 = 23;
// FP32 exponent field of 2^23: at and above it every FP32 value is an
// integer with nothing to round (integer destinations).
constexpr std::uint32_t kIntegralField32 = 127 + 23;

// ---------------------------------------------------------------------------
// Inputs: FP32 bits, or BF16/FP16 widened exactly to FP32 bits (docs/design.md
// "One rounding point": wider inputs go straight in; BF16/FP16 -> FP32 is exact, so encoding the
// widened bits is the model's Convert(kBf16/kFp16, ...)).

// FP16 bits (in the low half of each lane) -> FP32 bits, exactly. Normal:
// rebias the exponent (112 = 127 - 15). Inf/NaN: keep the mantissa (the NaN
// payload stays MSB-aligned, as Unpack reads it). Subnormal m * 2^-24: the
// int -> float conversion of m < 2^10 is exact, and subtracting 24 from its
// exponent field is an exact multiply by 2^-24 that stays normal.
HWY_INLINE V WidenF16(D32 d, V h) {
  const DI32 di;
  const DF32 df;
  const V sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(d, 0x8000u)));
  const V a = hn::And(h, hn::Set(d, 0x7FFFu));
  const V exponent = hn::ShiftRight<10>(a);
  const V mantissa = hn::And(a, hn::Set(d, 0x3FFu));
  const V normal = hn::Add(hn::ShiftLeft<13>(a), hn::Set(d, (127u - 15u) << 23));
  const V special = hn::Or(hn::ShiftLeft<13>(mantissa), hn::Set(d, kInf32));
  const V as_float = hn::BitCast(d, hn::ConvertTo(df, hn::BitCast(di, mantissa)));
  const V subnormal =
      hn::IfThenZeroElse(hn::Eq(mantissa, hn::Zero(d)), hn::Sub(as_float, hn::Set(d, 24u << 23)));
  V r = hn::IfThenElse(hn::Eq(exponent, hn::Zero(d)), subnormal, normal);
  r = hn::IfThenElse(hn::Eq(exponent, hn::Set(d, 31u)), special, r);
  return hn::Or(r, sign);
}

template <InputKind kIn>
HWY_INLINE V LoadBits(D32 d, const void* input, std::size_t i) {
  if constexpr (kIn == InputKind::kF32) {
    return hn::LoadU(d, static_cast<const std::uint32_t*>(input) + i);
  } else {
    const hn::Rebind<std::uint16_t, D32> d16;
    const V h = hn::PromoteTo(d, hn::LoadU(d16, static_cast<const std::uint16_t*>(input) + i));
    if constexpr (kIn == InputKind::kBf16) {
      return hn::ShiftLeft<16>(h);
    } else {
      return WidenF16(d, h);
    }
  }
}

// Codes (< 2^(8*kOutBytes), so the saturating demotes below are exact).
// Not hn::TruncateTo: Highway 1.0.3 (Debian 12) implements TruncateTo from
// 32-bit to 8-bit lanes on AVX3_DL with _mm512_permutexvar_epi32 where a
// byte permute is meant (hwy/ops/x86_512-inl.h), which put wrong bytes into
// the codes (simd_encode_groups_test, simd_block_test and simd_int4_test
// failed on AVX3_DL only, 2026-11-29; docs/design.md "Known traps (measured)").
template <int kOutBytes>
HWY_INLINE void StoreCodes(D32 d, V codes, void* output, std::size_t i) {
  const DI32 di;
  if constexpr (kOutBytes == 1) {
#if HWY_TARGET <= HWY_AVX3
    // vpmovdb keeps the low byte of each lane: exact for codes < 2^8, one
    // instruction where the saturating demote needs a max with zero first.
    if constexpr (hn::MaxLanes(D32()) == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<std::uint8_t*>(output) + i),
                       _mm512_cvtepi32_epi8(codes.raw));
      return;
    }
#endif
    const hn::Rebind<std::uint8_t, DI32> d8;
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, codes)), d8,
               static_cast<std::uint8_t*>(output) + i);
  } else if constexpr (kOutBytes == 2) {
#if HWY_TARGET <= HWY_AVX3
    // vpmovdw keeps the low half of each lane: exact for codes < 2^16, one
    // instruction where Highway's saturating demote packs and permutes.
    if constexpr (hn::MaxLanes(D32()) == 16) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(output) + i),
                          _mm512_cvtepi32_epi16(codes.raw));
      return;
    }
#endif
    const hn::Rebind<std::uint16_t, DI32> d16;
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, codes)), d16,
               static_cast<std::uint16_t*>(output) + i);
  } else {
    hn::StoreU(codes, d, static_cast<std::uint32_t*>(output) + i);
  }
}

// ---------------------------------------------------------------------------
// Steps 5-6: the significand `sig` (an integer) shifted right by `s` (1..31)
// with the increment of the rounding mode. `s_true` is the unclamped shift
// (stochastic rounding aligns the random bits to the top discarded bit, which
// may lie above bit 31 of `sig`'s discarded part only when s_true > 31).
template <RoundingMode kMode>
HWY_INLINE V RoundShift(D32 d, V sig, V s, VI s_true, M negative, V random,
                        std::uint32_t random_bit_count) {
  const V one = hn::Set(d, 1u);
  const V kept = hn::Shr(sig, s);
  if constexpr (kMode == RoundingMode::kNearestEven) {
    // Adding half - 1 plus the kept LSB carries exactly when the discarded
    // part is above half, or is half and the kept part is odd.
    const V half_minus_one = hn::Sub(hn::Shl(one, hn::Sub(s, one)), one);
    return hn::Shr(hn::Add(hn::Add(sig, half_minus_one), hn::And(kept, one)), s);
  } else if constexpr (kMode == RoundingMode::kNearestAway) {
    return hn::Shr(hn::Add(sig, hn::Shl(one, hn::Sub(s, one))), s);
  } else if constexpr (kMode == RoundingMode::kNearestUp || kMode == RoundingMode::kNearestDown ||
                       kMode == RoundingMode::kNearestTowardZero) {
    // Half carries a tie away from zero, half - 1 keeps it: away for a
    // positive value (Up) or a negative one (Down), never (TowardZero).
    const V half = hn::Shl(one, hn::Sub(s, one));
    M tie_away = hn::Ne(one, one);
    if constexpr (kMode == RoundingMode::kNearestUp) tie_away = hn::Not(negative);
    if constexpr (kMode == RoundingMode::kNearestDown) tie_away = negative;
    return hn::Shr(hn::Add(sig, hn::IfThenElse(tie_away, half, hn::Sub(half, one))), s);
  } else if constexpr (kMode == RoundingMode::kTowardZero) {
    return kept;
  } else if constexpr (kMode == RoundingMode::kUp || kMode == RoundingMode::kDown) {
    // Away from zero (on the side the mode points to) iff anything is
    // discarded: add all-ones below the kept LSB.
    const V all_discarded = hn::Sub(hn::Shl(one, s), one);
    const V bias = kMode == RoundingMode::kUp ? hn::IfThenZeroElse(negative, all_discarded)
                                              : hn::IfThenElseZero(negative, all_discarded);
    return hn::Shr(hn::Add(sig, bias), s);
  } else if constexpr (kMode == RoundingMode::kOdd) {
    const V discarded = hn::And(sig, hn::Sub(hn::Shl(one, s), one));
    return hn::Or(kept, hn::Min(discarded, one));
  } else {
    static_assert(kMode == RoundingMode::kStochastic);
    // round_pack.h: n += carry out of R bits of (top R discarded bits + R
    // random bits). top = (sig >> (s_true - R)) mod 2^R, or shifted left when
    // R exceeds the discarded width.
    const DI32 di;
    const VI r = hn::Set(di, static_cast<std::int32_t>(random_bit_count));
    const VI t = hn::Sub(s_true, r);
    const VI zero = hn::Zero(di);
    const VI max_shift = hn::Set(di, 31);
    const V right = hn::Shr(sig, hn::BitCast(d, hn::Min(hn::Max(t, zero), max_shift)));
    const V left = hn::Shl(sig, hn::BitCast(d, hn::Min(hn::Max(hn::Neg(t), zero), max_shift)));
    const V r_mask = hn::Set(d, (1u << random_bit_count) - 1u);
    const V top = hn::And(hn::IfThenElse(hn::RebindMask(d, hn::Lt(t, zero)), left, right), r_mask);
    const V carry = hn::ShiftRightSame(hn::Add(top, hn::And(random, r_mask)),
                                       static_cast<int>(random_bit_count));
    return hn::Add(kept, carry);
  }
}

// Step 1 for NaN inputs: a constant per sign, plus the payload (the FP32
// mantissa, MSB-aligned) when kTruncate / kPreserve.
HWY_INLINE V NanCodes(D32 d, M negative, V mantissa, const EncodePlan& p) {
  V nan = hn::IfThenElse(negative, hn::Set(d, p.nan_negative), hn::Set(d, p.nan_positive));
  if (p.nan_payload_shift >= 0) {
    V payload = hn::ShiftRightSame(mantissa, p.nan_payload_shift);
    if (p.nan_preserve_quiet != 0) {
      payload = hn::IfThenElse(hn::Eq(payload, hn::Zero(d)), hn::Set(d, p.nan_preserve_quiet),
                               payload);
    }
    nan = hn::Or(nan, payload);
  }
  return nan;
}

// One vector of FP32 bits -> codes (round_pack.h steps 1-9).
template <RoundingMode kMode, PlanKind kKind>
HWY_INLINE V EncodeVector(D32 d, V bits, V random, const EncodePlan& p) {
  const DI32 di;
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1u);
  const V a = hn::AndNot(hn::Set(d, kSignBit32), bits);
  M negative = hn::TestBit(bits, hn::Set(d, kSignBit32));
  const M input_negative = negative;
  // Step 3 applies to finite negatives into an unsigned format, except that
  // integer wrap-around keeps their low bits (round_pack.h step 3). Inf
  // inputs need nothing here: inf_negative is the model's own -Inf result.
  const bool unsigned_dst = p.sign_code == 0 && kKind != PlanKind::kIdentity &&
                            !(kKind == PlanKind::kInteger && p.wrap);
  if (unsigned_dst && p.negative_as_magnitude) negative = hn::Ne(zero, zero);  // use |x|
  const M is_nan = hn::Gt(a, hn::Set(d, kInf32));
  const M is_inf = hn::Eq(a, hn::Set(d, kInf32));
  const V mantissa = hn::And(a, hn::Set(d, kMantissa32));
  const V exponent = hn::ShiftRight<kMantissaBits32>(a);

  V code;
  if constexpr (kKind == PlanKind::kIdentity) {
    // 4. Zero (keep_negative_zero); every other finite value is itself.
    code = hn::IfThenElse(hn::Eq(a, zero),
                          hn::IfThenElse(negative, hn::Set(d, p.zero_negative),
                                         hn::Set(d, p.zero_positive)),
                          bits);
  } else if constexpr (kKind == PlanKind::kThreshold) {
    // 5-8 at once: the magnitude code counts the thresholds at or below |x|
    // (each was found on the model, so rounding, ties and saturation are the
    // model's). Sign-symmetric modes share one set of thresholds.
    const bool symmetric = kMode != RoundingMode::kUp && kMode != RoundingMode::kDown &&
                           kMode != RoundingMode::kNearestUp && kMode != RoundingMode::kNearestDown;
    V magnitude = zero;
    for (int k = 0; k < kMaxThresholds; ++k) {
      V t = hn::Set(d, p.threshold[0][k]);
      if (!symmetric) t = hn::IfThenElse(negative, hn::Set(d, p.threshold[1][k]), t);
#if HWY_TARGET <= HWY_AVX3
      // AVX-512 compares give mask registers: a masked add is one op.
      magnitude = hn::IfThenElse(hn::Not(hn::Lt(a, t)), hn::Add(magnitude, one), magnitude);
#else
      // Vector masks are all-ones lanes: subtracting one adds 1.
      magnitude = hn::Sub(magnitude, hn::VecFromMask(d, hn::Not(hn::Lt(a, t))));
#endif
    }
    code = hn::IfThenElse(
        hn::Eq(magnitude, zero),
        hn::IfThenElse(negative, hn::Set(d, p.zero_negative), hn::Set(d, p.zero_positive)),
        hn::Or(magnitude, hn::IfThenElseZero(negative, hn::Set(d, p.sign_code))));
  } else if constexpr (kKind == PlanKind::kPowerOfTwo) {
    // 5. Align. E8M0's quantum is the value's own power of two, or 2^-127 for
    // FP32 subnormals (which all lie below 2^-126): shift 23, or 22 for them.
    const M input_subnormal = hn::Eq(exponent, zero);
    const V sig = hn::IfThenElse(input_subnormal, mantissa, hn::Or(mantissa, hn::Set(d, kHidden32)));
    const V s = hn::IfThenElse(input_subnormal, hn::Set(d, 22u), hn::Set(d, 23u));
    // 6. Increment: n is 0, 1 or 2 (2 = carry into the next power).
    const V n = RoundShift<kMode>(d, sig, s, hn::BitCast(di, s), negative, random,
                                  p.random_bit_count);
    // 7. Assemble: code = field + n - 1 (field 0 for FP32 subnormals), and
    // n = 0 clips to code 0 = 2^-127 (no zero in E8M0).
    const V biased = hn::Add(exponent, n);
    code = hn::Sub(hn::Max(biased, one), one);
    // 8. Overflow.
    code = hn::IfThenElse(hn::Gt(code, hn::Set(d, p.max_code)),
                          hn::Set(d, p.overflow_positive), code);
    // 4. Zero input (ZeroIntoNoZero).
    code = hn::IfThenElse(hn::Eq(a, zero), hn::Set(d, p.zero_positive), code);
  } else {
    const V eff_exponent = hn::Max(exponent, one);  // FP32 subnormals: field 1, no hidden bit
    const V sig = hn::Sub(a, hn::ShiftLeft<kMantissaBits32>(hn::Sub(eff_exponent, one)));
    if constexpr (kKind == PlanKind::kFloat) {
      // 5. Align: discard 23 - m bits, plus one per binade below the
      // destination's smallest normal.
      const VI below = hn::Max(
          hn::Sub(hn::Set(di, static_cast<std::int32_t>(p.min_normal_field32)),
                  hn::BitCast(di, eff_exponent)),
          hn::Zero(di));
      const VI s_true = hn::Add(below, hn::Set(di, kMantissaBits32 - static_cast<int>(p.mantissa_bits)));
      const V s = hn::BitCast(d, hn::Min(s_true, hn::Set(di, 31)));
      // 6. Increment.
      const V n = RoundShift<kMode>(d, sig, s, s_true, negative, random, p.random_bit_count);
      // 7. Carry and assembly: the exponent field above the smallest normal,
      // shifted over the mantissa, plus n (which holds the hidden bit for a
      // normal result, so a carry out of the mantissa bumps the field and a
      // subnormal rounding up to 2^m becomes the smallest normal).
      const V min_field = hn::Set(d, p.min_normal_field32);
      const V field = hn::Sub(hn::Max(eff_exponent, min_field), min_field);
      const V magnitude = hn::Add(hn::ShiftLeftSame(field, static_cast<int>(p.mantissa_bits)), n);
      code = hn::IfThenElse(
          hn::Eq(magnitude, zero),
          hn::IfThenElse(negative, hn::Set(d, p.zero_negative), hn::Set(d, p.zero_positive)),
          hn::Or(magnitude, hn::IfThenElseZero(negative, hn::Set(d, p.sign_code))));
      // 8. Overflow: beyond the largest finite code (this covers both the
      // exponent range and reserved codes such as E4M3's 0x7F).
      code = hn::IfThenElse(hn::Gt(magnitude, hn::Set(d, p.max_code)),
                            hn::IfThenElse(negative, hn::Set(d, p.overflow_negative),
                                           hn::Set(d, p.overflow_positive)),
                            code);
    } else {
      static_assert(kKind == PlanKind::kInteger);
      // 5. Align to the integer quantum 2^0: shift 150 - field. At field >= 150
      // the value is an integer >= 2^23, beyond every integer format here.
      const M big = hn::Gt(exponent, hn::Set(d, kIntegralField32 - 1));
      const VI s_true = hn::Sub(hn::Set(di, static_cast<std::int32_t>(kIntegralField32)),
                                hn::BitCast(di, eff_exponent));
      const V s = hn::BitCast(d, hn::Min(hn::Max(s_true, hn::Set(di, 1)), hn::Set(di, 31)));
      // 6. Increment.
      const V n = RoundShift<kMode>(d, sig, s, s_true, negative, random, p.random_bit_count);
      const V mask = hn::Set(d, p.code_mask);
      if (p.wrap) {
        // Overflow::kWrap keeps the low bits of the exact integer
        // (sig << (field - 150), whose low bits are 0 once the shift >= 32).
        const V left = hn::Sub(exponent, hn::Set(d, kIntegralField32));
        const V wide = hn::IfThenElseZero(hn::Lt(left, hn::Set(d, 32u)),
                                          hn::Shl(sig, hn::Min(left, hn::Set(d, 31u))));
        const V magnitude = hn::IfThenElse(big, wide, n);
        code = hn::And(hn::IfThenElse(negative, hn::Sub(zero, magnitude), magnitude), mask);
      } else {
        // 8. Saturate beyond IntMax / IntMin.
        const V limit = hn::IfThenElse(negative, hn::Set(d, p.int_limit_negative),
                                       hn::Set(d, p.int_limit_positive));
        const M over = hn::Or(big, hn::Gt(n, limit));
        const V value = hn::And(hn::IfThenElse(negative, hn::Sub(zero, n), n), mask);
        code = hn::IfThenElse(over,
                              hn::IfThenElse(negative, hn::Set(d, p.overflow_negative),
                                             hn::Set(d, p.overflow_positive)),
                              value);
      }
    }
  }
  // 2. Inf.
  code = hn::IfThenElse(is_inf,
                        hn::IfThenElse(negative, hn::Set(d, p.inf_negative), hn::Set(d, p.inf_positive)),
                        code);
  // 3. Negative non-zero into an unsigned format (before Inf in the model's
  // order, so it overrides the Inf result; NaN overrides it below).
  if (unsigned_dst && !p.negative_as_magnitude) {
    code = hn::IfThenElse(hn::AndNot(hn::Eq(a, zero), input_negative),
                          hn::Set(d, p.negative_code), code);
  }
  // 1. NaN.
  return hn::IfThenElse(is_nan, NanCodes(d, negative, mantissa, p), code);
}

// Fast path for a vector whose lanes all give normal results (FP32 exponent
// field within the destination's normal binades, so no NaN, Inf, zero or
// subnormal): steps 5-7 on the FP32 bits themselves. Shifting the bits right
// by 23 - m keeps exponent and mantissa together, a rounding carry moves into
// the exponent as it should, and rebiasing is one subtraction. Only step 8
// (overflow in the top binade) remains. Returns false (and writes nothing)
// when a lane is outside that range; the general path then handles the vector.
template <RoundingMode kMode>
HWY_INLINE bool EncodeNormalVector(D32 d, V bits, V random, const EncodePlan& p, V* out) {
  const DI32 di;
  const V a = hn::AndNot(hn::Set(d, kSignBit32), bits);
  const V exponent = hn::ShiftRight<kMantissaBits32>(a);
  const V offset = hn::Sub(exponent, hn::Set(d, p.min_normal_field32));  // wraps below
  M negative = hn::TestBit(bits, hn::Set(d, kSignBit32));
  M in_range = hn::Not(hn::Gt(offset, hn::Set(d, p.normal_field_span)));
  if (p.sign_code == 0) {
    if (p.negative_as_magnitude) {
      negative = hn::Ne(a, a);
    } else {
      in_range = hn::AndNot(negative, in_range);
    }
  }
  if (!hn::AllTrue(d, in_range)) return false;
  const int s0 = kMantissaBits32 - static_cast<int>(p.mantissa_bits);
  const V n = RoundShift<kMode>(d, a, hn::Set(d, static_cast<std::uint32_t>(s0)), hn::Set(di, s0),
                                negative, random, p.random_bit_count);
  const V magnitude = hn::Sub(n, hn::Set(d, (p.min_normal_field32 - 1) << p.mantissa_bits));
  const V sign = hn::IfThenElseZero(negative, hn::Set(d, p.sign_code));
  if (p.overflow_by_min) {
    // Step 8 as one minimum (encode_plan.h overflow_by_min).
    *out = hn::Or(hn::Min(magnitude, hn::Set(d, p.overflow_positive)), sign);
    return true;
  }
  const V code = hn::Or(magnitude, sign);
  *out = hn::IfThenElse(hn::Gt(magnitude, hn::Set(d, p.max_code)),
                        hn::IfThenElse(negative, hn::Set(d, p.overflow_negative),
                                       hn::Set(d, p.overflow_positive)),
                        code);
  return true;
}

// Round to nearest even, signed float destinations whose overflow is one
// minimum (encode_plan.h overflow_by_min): the plan's constants for
// EncodeLoop's groups of normal lanes, computed once per call.
struct NormalConstants {
  std::uint32_t round_bias = 0;  // half - 1 - low (wraps)
  std::uint32_t limit = 0;       // NormalOffset of +Inf: the offsets taken stay below
  std::uint32_t min_code = 0;    // the smallest normal magnitude code, 2^m
  int shift = 0;                 // 23 - m
  int sign_shift = 0;            // FP32 sign bit -> the destination's
};

// Whether the plan admits the normal groups (and their constants). The sign
// code must be a single bit at or below bit 31 (every signed float format).
HWY_INLINE bool NormalPlan(const EncodePlan& p, NormalConstants* c) {
  if (p.kind != PlanKind::kFloat || p.rounding != RoundingMode::kNearestEven ||
      !p.overflow_by_min || p.sign_code == 0 || (p.sign_code & (p.sign_code - 1)) != 0) {
    return false;
  }
  int sign_bit = 0;
  while ((p.sign_code >> sign_bit) != 1u) ++sign_bit;
  c->shift = kMantissaBits32 - static_cast<int>(p.mantissa_bits);
  c->min_code = 1u << p.mantissa_bits;
  const std::uint32_t low = p.min_normal_field32 << kMantissaBits32;
  c->round_bias = ((1u << (c->shift - 1)) - 1u) - low;
  c->limit = (kInf32 + c->round_bias) >> c->shift;
  c->sign_shift = 31 - sign_bit;
  return true;
}

// round_pack.h steps 5-7 for a normal result, on |x|'s FP32 bits `a`:
// (a + half - 1 + lsb) >> shift keeps exponent and mantissa together (a
// carry out of the mantissa bumps the exponent). With `low` (the smallest
// normal's bits) taken off first, the result is the magnitude code minus
// min_code, and it doubles as the range check: it is below `limit` exactly
// when low - half <= a and the sum stays below +Inf's (every a further below
// low wraps to an offset above `limit`; those within half of low all round
// to the smallest normal, offset 0, as they should: they lie within a
// quarter of its quantum); the largest finite values that round as far as
// +Inf's offset are left to the general path with NaN and Inf.
HWY_INLINE V NormalOffset(D32 d, V a, const NormalConstants& c, V round_bias, V lsb_bit) {
#if HWY_TARGET <= HWY_AVX3
  // The kept LSB as a mask register, used by one masked add.
  const V sum = hn::Add(a, round_bias);
  return hn::ShiftRightSame(
      hn::IfThenElse(hn::TestBit(a, lsb_bit), hn::Add(sum, hn::Set(d, 1u)), sum), c.shift);
#else
  (void)lsb_bit;
  const V lsb = hn::And(hn::ShiftRightSame(a, c.shift), hn::Set(d, 1u));
  return hn::ShiftRightSame(hn::Add(hn::Add(a, round_bias), lsb), c.shift);
#endif
}

// Step 8 and the sign of one vector of offsets: values above the largest
// finite code round to a magnitude above it, and the overflow code is then
// min(magnitude, overflow_positive) (as in EncodeNormalVector); the sign is
// the input's, moved to the destination's sign bit.
HWY_INLINE V NormalCodes(D32 d, V bits, V offset, const NormalConstants& c, V cap, V sign_code) {
  const V m = hn::Min(hn::Add(offset, hn::Set(d, c.min_code)), cap);
#if HWY_TARGET <= HWY_AVX3
  // The sign as a mask register, used by one masked or.
  return hn::IfThenElse(hn::RebindMask(d, hn::Lt(hn::BitCast(DI32(), bits), hn::Zero(DI32()))),
                        hn::Or(m, sign_code), m);
#else
  return hn::OrAnd(m, hn::ShiftRightSame(bits, c.sign_shift), sign_code);
#endif
}

#if HWY_TARGET <= HWY_AVX3
// Step 8 and the sign of four vectors at once, narrowed to the output width,
// for destinations whose sign is the code's top bit (E4M3, E5M2: 0x80; FP16,
// BF16: 0x8000). Unsigned-saturating packs of the magnitudes (each below
// 2^31) keep every value below the saturation bound and turn the others into
// the bound, which the minimum with the overflow code then treats alike;
// signed-saturating packs of the input bits keep each lane's sign in the top
// bit of its narrowed lane. Packs work within 128-bit blocks (Intel SDM
// PACKUSDW, PACKSSDW, PACKUSWB, PACKSSWB), so one lane permute puts the
// results in order. `cap` is overflow_positive.
template <int kOutBytes>
HWY_INLINE void StoreNormalCodes4(const V (&n)[4], const V (&bits)[4], std::uint32_t cap,
                                  std::uint32_t min_code, void* output, std::size_t i) {
  // The offsets (below 2^31) plus min_code, after the minimum with
  // cap - min_code (>= 0; the sum stays within the narrow lane).
  if constexpr (kOutBytes == 1) {
    const __m512i offset = _mm512_packus_epi16(_mm512_packus_epi32(n[0].raw, n[1].raw),
                                               _mm512_packus_epi32(n[2].raw, n[3].raw));
    const __m512i magnitude =
        _mm512_add_epi8(_mm512_min_epu8(offset, _mm512_set1_epi8(static_cast<char>(cap - min_code))),
                        _mm512_set1_epi8(static_cast<char>(min_code)));
    const __m512i sign = _mm512_packs_epi16(_mm512_packs_epi32(bits[0].raw, bits[1].raw),
                                            _mm512_packs_epi32(bits[2].raw, bits[3].raw));
    // magnitude | (sign & 0x80): truth table 0xF8 over (A, B, C).
    const __m512i code = _mm512_ternarylogic_epi32(
        magnitude, sign, _mm512_set1_epi8(static_cast<char>(0x80)), 0xF8);
    // Block L holds lanes 4L..4L+3 of n[0], n[1], n[2], n[3], one dword each.
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_si512(static_cast<std::uint8_t*>(output) + i,
                        _mm512_permutexvar_epi32(order, code));
  } else {
    static_assert(kOutBytes == 2);
    // Block L holds lanes 4L..4L+3 of the first vector, then of the second.
    const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
    const __m512i cap16 = _mm512_set1_epi16(static_cast<short>(cap - min_code));
    const __m512i min16 = _mm512_set1_epi16(static_cast<short>(min_code));
    const __m512i sign_bit = _mm512_set1_epi16(static_cast<short>(0x8000));
    auto* out = static_cast<std::uint16_t*>(output) + i;
    for (int k = 0; k < 2; ++k) {
      const __m512i offset = _mm512_packus_epi32(n[2 * k].raw, n[2 * k + 1].raw);
      const __m512i magnitude = _mm512_add_epi16(_mm512_min_epu16(offset, cap16), min16);
      const __m512i sign = _mm512_packs_epi32(bits[2 * k].raw, bits[2 * k + 1].raw);
      const __m512i code = _mm512_ternarylogic_epi32(magnitude, sign, sign_bit, 0xF8);
      _mm512_storeu_si512(out + 32 * k, _mm512_permutexvar_epi64(order, code));
    }
  }
}
#endif

#if HWY_TARGET <= HWY_AVX3
// kThreshold plans with cell codes (encode_plan.h cell_code): one table
// lookup per lane for |x| < 2^4, NaN and Inf excluded by the caller. The
// index is |x| >> 21 (clamped below at 2^-3, whose code every smaller |x|
// shares) with bit 5 flipped at a quarter binade's start itself. The table
// lookup reads only the low six bits of each 16-bit index (Intel SDM
// VPERMI2W/VPERMT2W: 64 words).
struct CellTable {
  __m512i low, high;  // 64 16-bit entries
  explicit CellTable(const std::uint8_t* codes) {
    alignas(64) std::uint16_t words[64];
    for (int k = 0; k < 64; ++k) words[k] = codes[k];
    low = _mm512_load_si512(words);
    high = _mm512_load_si512(words + 32);
  }
};

HWY_INLINE V CellMagnitude(D32 d, V a, const CellTable& t) {
  const V clamped = hn::Max(a, hn::Set(d, kCellLow));
  const V cell = hn::ShiftRight<kCellShift>(clamped);
  const M exact = hn::Not(hn::TestBit(clamped, hn::Set(d, (1u << kCellShift) - 1u)));
  const V index = hn::IfThenElse(exact, hn::Xor(cell, hn::Set(d, 32u)), cell);
  // The upper word of each lane zeroed (StoreCellCodes4 packs them).
  return V{_mm512_maskz_permutex2var_epi16(0x55555555u, t.low, index.raw, t.high)};
}

// Four vectors of magnitudes (< 2^4) with their inputs' signs, as bytes:
// unsigned-saturating packs of the magnitudes are exact; signed-saturating
// packs of the input bits leave each sign in bit 7 of its byte, which a
// 16-bit shift by 4 moves to bit 3 (E2M1's sign_code, checked by the caller)
// of the same byte. Packs work within 128-bit blocks (Intel SDM PACKUSDW,
// PACKSSDW, PACKUSWB, PACKSSWB); one lane permute puts the results in order.
HWY_INLINE void StoreCellCodes4(const V (&m)[4], const V (&bits)[4], void* output,
                                std::size_t i) {
  const __m512i magnitude = _mm512_packus_epi16(_mm512_packus_epi32(m[0].raw, m[1].raw),
                                                _mm512_packus_epi32(m[2].raw, m[3].raw));
  const __m512i sign = _mm512_packs_epi16(_mm512_packs_epi32(bits[0].raw, bits[1].raw),
                                          _mm512_packs_epi32(bits[2].raw, bits[3].raw));
  // magnitude | ((sign >> 4) & 0x08): truth table 0xF8 over (A, B, C).
  const __m512i code = _mm512_ternarylogic_epi32(magnitude, _mm512_srli_epi16(sign, 4),
                                                 _mm512_set1_epi8(0x08), 0xF8);
  // Block L holds lanes 4L..4L+3 of m[0], m[1], m[2], m[3], one dword each.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(static_cast<std::uint8_t*>(output) + i,
                      _mm512_permutexvar_epi32(order, code));
}
#endif

template <RoundingMode kMode, PlanKind kKind>
HWY_INLINE V EncodeAnyVector(D32 d, V bits, V random, const EncodePlan& p) {
  if constexpr (kKind == PlanKind::kFloat) {
    V code;
    if (EncodeNormalVector<kMode>(d, bits, random, p, &code)) return code;
  }
  return EncodeVector<kMode, kKind>(d, bits, random, p);
}

// The fast groups of EncodeLoop, with the plan's constants taken once: round
// to nearest even groups of four normal vectors (NormalOffset), and on
// AVX-512 the E2M1-style cell-table groups (CellMagnitude). A group with any
// other lane goes through EncodeAnyVector vector by vector, so every group
// gets the model's codes; a plan that admits neither path encodes nothing
// here. Built once per kernel call: the block quantizers
// (block_quantize-inl.h) hand it one group of blocks' scaled values at a
// time.
template <RoundingMode kMode, PlanKind kKind, InputKind kIn, int kOutBytes>
class GroupEncoder {
 public:
  // A local copy of the plan: stores through the uint8_t output may alias
  // the caller's plan, which would make the compiler reload and re-broadcast
  // every constant in every iteration.
  explicit GroupEncoder(const EncodePlan& plan)
      : p_(plan)
#if HWY_TARGET <= HWY_AVX3
        ,
        table_(plan.cell_code)
#endif
  {
    if constexpr (kMode == RoundingMode::kNearestEven && kKind == PlanKind::kFloat) {
      normal_ = NormalPlan(p_, &c_);
    }
  }

  const EncodePlan& plan() const { return p_; }

  // Encodes groups of four vectors of input[i, count) while they fit and
  // returns the index after the last one done (i itself when the plan
  // admits no group path).
  HWY_INLINE std::size_t Groups(const void* input, void* output, std::size_t i,
                                std::size_t count) const {
    const D32 d;
    const std::size_t lanes = hn::Lanes(d);
    const EncodePlan& p = p_;
    if constexpr (kMode == RoundingMode::kNearestEven && kKind == PlanKind::kFloat) {
      if (normal_) {
        const NormalConstants& c = c_;
        const V abs_mask = hn::Set(d, ~kSignBit32);
        const V limit = hn::Set(d, c.limit);
        const V round_bias = hn::Set(d, c.round_bias);
        const V cap = hn::Set(d, p.overflow_positive);
        const V sign_code = hn::Set(d, p.sign_code);
        const V lsb_bit = hn::Set(d, 1u << c.shift);
        // StoreNormalCodes4's condition (16-lane vectors, 1- or 2-byte codes).
        const bool top_sign = hn::MaxLanes(D32()) == 16 && kOutBytes <= 2 &&
                              p.sign_code == 1u << (8 * kOutBytes - 1);
        (void)top_sign;
        for (; i + 4 * lanes <= count; i += 4 * lanes) {
          // Four named vectors, not an array: SVE vectors are sizeless types,
          // which C++ arrays cannot hold (the aarch64 cross-build compiles
          // this loop for SVE).
          const V b0 = LoadBits<kIn>(d, input, i);
          const V b1 = LoadBits<kIn>(d, input, i + lanes);
          const V b2 = LoadBits<kIn>(d, input, i + 2 * lanes);
          const V b3 = LoadBits<kIn>(d, input, i + 3 * lanes);
          const V n0 = NormalOffset(d, hn::And(b0, abs_mask), c, round_bias, lsb_bit);
          const V n1 = NormalOffset(d, hn::And(b1, abs_mask), c, round_bias, lsb_bit);
          const V n2 = NormalOffset(d, hn::And(b2, abs_mask), c, round_bias, lsb_bit);
          const V n3 = NormalOffset(d, hn::And(b3, abs_mask), c, round_bias, lsb_bit);
          if (HWY_LIKELY(
                  hn::AllTrue(d, hn::Lt(hn::Max(hn::Max(n0, n1), hn::Max(n2, n3)), limit)))) {
#if HWY_TARGET <= HWY_AVX3
            if (top_sign) {
              const V n[4] = {n0, n1, n2, n3};
              const V b[4] = {b0, b1, b2, b3};
              StoreNormalCodes4<kOutBytes>(n, b, p.overflow_positive, c.min_code, output, i);
              continue;
            }
#endif
            StoreCodes<kOutBytes>(d, NormalCodes(d, b0, n0, c, cap, sign_code), output, i);
            StoreCodes<kOutBytes>(d, NormalCodes(d, b1, n1, c, cap, sign_code), output, i + lanes);
            StoreCodes<kOutBytes>(d, NormalCodes(d, b2, n2, c, cap, sign_code), output,
                                  i + 2 * lanes);
            StoreCodes<kOutBytes>(d, NormalCodes(d, b3, n3, c, cap, sign_code), output,
                                  i + 3 * lanes);
            continue;
          }
          EncodeFour(d, b0, b1, b2, b3, output, i);
        }
        return i;
      }
    }
#if HWY_TARGET <= HWY_AVX3
    if constexpr (kKind == PlanKind::kThreshold && hn::MaxLanes(D32()) == 16 && kOutBytes == 1) {
      if (p.has_cell_codes && p.sign_code == 0x08u) {
        // Groups of four vectors whose lanes are all below 2^4 (so finite).
        const V abs_mask = hn::Set(d, ~kSignBit32);
        const V high = hn::Set(d, kCellHigh);
        for (; i + 4 * lanes <= count; i += 4 * lanes) {
          const V b[4] = {LoadBits<kIn>(d, input, i), LoadBits<kIn>(d, input, i + lanes),
                          LoadBits<kIn>(d, input, i + 2 * lanes),
                          LoadBits<kIn>(d, input, i + 3 * lanes)};
          const V a[4] = {hn::And(b[0], abs_mask), hn::And(b[1], abs_mask),
                          hn::And(b[2], abs_mask), hn::And(b[3], abs_mask)};
          if (HWY_LIKELY(hn::AllTrue(
                  d, hn::Lt(hn::Max(hn::Max(a[0], a[1]), hn::Max(a[2], a[3])), high)))) {
            const V m[4] = {CellMagnitude(d, a[0], table_), CellMagnitude(d, a[1], table_),
                            CellMagnitude(d, a[2], table_), CellMagnitude(d, a[3], table_)};
            StoreCellCodes4(m, b, output, i);
            continue;
          }
          EncodeFour(d, b[0], b[1], b[2], b[3], output, i);
        }
      }
    }
#endif
    return i;
  }

#if HWY_TARGET <= HWY_AVX3
  // Whether FourCodes takes the cell-table path for lanes below 2^4 (the
  // condition of Groups' cell path).
  bool HasCellPath() const {
    return kKind == PlanKind::kThreshold && hn::MaxLanes(D32()) == 16 && p_.has_cell_codes &&
           p_.sign_code == 0x08u;
  }

  // The codes of four vectors of FP32 bits, one per lane, for a caller that
  // stores them its own way (packed nibbles): the same codes Groups stores,
  // by the cell table where every lane of the four is below 2^4 and
  // HasCellPath, else EncodeAnyVector vector by vector. A cell code is the
  // magnitude with the input's sign at bit 3 (StoreCellCodes4's byte, here
  // in a 32-bit lane: the sign bit shifted down by 28).
  HWY_INLINE void FourCodes(V b0, V b1, V b2, V b3, V* c0, V* c1, V* c2, V* c3) const {
    const D32 d;
    if constexpr (kKind == PlanKind::kThreshold && hn::MaxLanes(D32()) == 16) {
      if (HasCellPath()) {
        const V abs_mask = hn::Set(d, ~kSignBit32);
        const V a0 = hn::And(b0, abs_mask), a1 = hn::And(b1, abs_mask);
        const V a2 = hn::And(b2, abs_mask), a3 = hn::And(b3, abs_mask);
        if (HWY_LIKELY(hn::AllTrue(d, hn::Lt(hn::Max(hn::Max(a0, a1), hn::Max(a2, a3)), hn::Set(d, kCellHigh))))) {
          const __m512i sign_code = _mm512_set1_epi32(0x08);
          // magnitude | (sign >> 28 & 0x08): truth table 0xF8 over (A, B, C).
          *c0 = V{_mm512_ternarylogic_epi32(CellMagnitude(d, a0, table_).raw, _mm512_srli_epi32(b0.raw, 28),
                                            sign_code, 0xF8)};
          *c1 = V{_mm512_ternarylogic_epi32(CellMagnitude(d, a1, table_).raw, _mm512_srli_epi32(b1.raw, 28),
                                            sign_code, 0xF8)};
          *c2 = V{_mm512_ternarylogic_epi32(CellMagnitude(d, a2, table_).raw, _mm512_srli_epi32(b2.raw, 28),
                                            sign_code, 0xF8)};
          *c3 = V{_mm512_ternarylogic_epi32(CellMagnitude(d, a3, table_).raw, _mm512_srli_epi32(b3.raw, 28),
                                            sign_code, 0xF8)};
          return;
        }
      }
    }
    const V zero = hn::Zero(d);
    *c0 = EncodeAnyVector<kMode, kKind>(d, b0, zero, p_);
    *c1 = EncodeAnyVector<kMode, kKind>(d, b1, zero, p_);
    *c2 = EncodeAnyVector<kMode, kKind>(d, b2, zero, p_);
    *c3 = EncodeAnyVector<kMode, kKind>(d, b3, zero, p_);
  }
#endif

  // Whole vectors of input[0, count) (count a multiple of Lanes), without
  // random bits: the groups, then the rest vector by vector.
  HWY_INLINE void Vectors(const void* input, void* output, std::size_t count) const {
    const D32 d;
    const std::size_t lanes = hn::Lanes(d);
    std::size_t i = Groups(input, output, 0, count);
    for (; i + lanes <= count; i += lanes) {
      StoreCodes<kOutBytes>(
          d, EncodeAnyVector<kMode, kKind>(d, LoadBits<kIn>(d, input, i), hn::Zero(d), p_), output,
          i);
    }
  }

 private:
  // A group that left the fast path: each vector through EncodeAnyVector.
  HWY_INLINE void EncodeFour(D32 d, V b0, V b1, V b2, V b3, void* output, std::size_t i) const {
    const std::size_t lanes = hn::Lanes(d);
    const V zero = hn::Zero(d);
    StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, b0, zero, p_), output, i);
    StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, b1, zero, p_), output, i + lanes);
    StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, b2, zero, p_), output,
                          i + 2 * lanes);
    StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, b3, zero, p_), output,
                          i + 3 * lanes);
  }

  EncodePlan p_;
  NormalConstants c_;
  bool normal_ = false;
#if HWY_TARGET <= HWY_AVX3
  CellTable table_;
#endif
};

// The whole array: full vectors, then the tail through a padded buffer (any
// count, any alignment: loads and stores are unaligned).
template <RoundingMode kMode, PlanKind kKind, InputKind kIn, int kOutBytes>
HWY_NOINLINE void EncodeLoop(const EncodePlan& plan, const void* input, void* output,
                             std::size_t count, const std::uint32_t* random_bits) {
  const GroupEncoder<kMode, kKind, kIn, kOutBytes> encoder(plan);
  const EncodePlan& p = encoder.plan();
  const D32 d;
  const std::size_t lanes = hn::Lanes(d);
  constexpr bool kStochastic = kMode == RoundingMode::kStochastic;
  constexpr std::size_t kInBytes = kIn == InputKind::kF32 ? 4 : 2;
  std::size_t i = 0;
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
  // FP16 -> FP32 (the FP16 decode): vcvtph2ps (F16C, part of these targets)
  // widens every non-NaN FP16 value exactly (Intel SDM VCVTPH2PS: subnormal
  // halves become normal singles, exactly; infinities stay infinities), so a
  // vector is one instruction when the plan keeps zeros and infinities as
  // they are. NaN lanes (which vcvtph2ps would quiet) take the decode's NaN
  // policy, step 1 of the general path (NanCodes) on the widened payload.
  if constexpr (kKind == PlanKind::kIdentity && kIn == InputKind::kF16 && kOutBytes == 4) {
    if (p.zero_positive == 0 && p.zero_negative == kSignBit32 && p.inf_positive == kInf32 &&
        p.inf_negative == (kSignBit32 | kInf32)) {
      const DF32 df;
      const hn::Rebind<hwy::float16_t, DF32> df16;
      const hn::Rebind<std::uint16_t, DF32> du16;
      const hn::Rebind<std::int16_t, DF32> di16;
      const auto magnitude_mask = hn::Set(du16, std::uint16_t{0x7FFF});
      const auto inf16 = hn::Set(du16, std::uint16_t{0x7C00});
      const auto* in16 = static_cast<const std::uint16_t*>(input);
      auto* out = static_cast<std::uint32_t*>(output);
      // One vector, NaN lanes through NanCodes, without a branch.
      auto widen_with_nans = [&](std::size_t k) {
        const V widened = hn::BitCast(
            d, hn::PromoteTo(df, hn::LoadU(df16, reinterpret_cast<const hwy::float16_t*>(in16 + k))));
        const V h32 = hn::PromoteTo(d, hn::LoadU(du16, in16 + k));
        const M is_nan = hn::Gt(hn::And(h32, hn::Set(d, 0x7FFFu)), hn::Set(d, 0x7C00u));
        const M negative = hn::TestBit(h32, hn::Set(d, 0x8000u));
        const V payload = hn::ShiftLeft<13>(hn::And(h32, hn::Set(d, 0x3FFu)));
        hn::StoreU(hn::IfThenElse(is_nan, NanCodes(d, negative, payload, p), widened), d, out + k);
      };
      // Groups of four vectors with one NaN test: a group without NaN is
      // four vcvtph2ps; a group with one takes the NaN lanes' codes without
      // a branch per vector. A test per vector mispredicted about 40% of the
      // time on inputs with 3% NaN codes (every FP16 code uniformly, the
      // benchmark's input), and out of cache the pipeline flushes cost the
      // loads in flight: 2.1 G/s, against 3.3-3.6 G/s without the branch
      // (bench/RESULTS-archive-2026.md, the quiet-machine CPU run of 2026-11-29 07:09 UTC).
      for (; i + 4 * lanes <= count; i += 4 * lanes) {
        const auto a0 = hn::And(hn::LoadU(du16, in16 + i), magnitude_mask);
        const auto a1 = hn::And(hn::LoadU(du16, in16 + i + lanes), magnitude_mask);
        const auto a2 = hn::And(hn::LoadU(du16, in16 + i + 2 * lanes), magnitude_mask);
        const auto a3 = hn::And(hn::LoadU(du16, in16 + i + 3 * lanes), magnitude_mask);
        // Magnitudes below 2^15: the signed compare is the unsigned one.
        const auto largest = hn::BitCast(di16, hn::Max(hn::Max(a0, a1), hn::Max(a2, a3)));
        if (hn::AllFalse(di16, hn::Gt(largest, hn::BitCast(di16, inf16)))) {
          for (std::size_t k = i; k < i + 4 * lanes; k += lanes) {
            hn::StoreU(hn::BitCast(d, hn::PromoteTo(df, hn::LoadU(df16, reinterpret_cast<const hwy::float16_t*>(
                                                                       in16 + k)))),
                       d, out + k);
          }
          continue;
        }
        for (std::size_t k = i; k < i + 4 * lanes; k += lanes) widen_with_nans(k);
      }
      for (; i + lanes <= count; i += lanes) widen_with_nans(i);
    }
  }
#endif
  i = encoder.Groups(input, output, i, count);
  for (; i + lanes <= count; i += lanes) {
    const V random = kStochastic ? hn::LoadU(d, random_bits + i) : hn::Zero(d);
    StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, LoadBits<kIn>(d, input, i), random, p),
                          output, i);
  }
  const std::size_t rest = count - i;
  if (rest == 0) return;
  HWY_ALIGN std::uint32_t in_buffer[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t random_buffer[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t out_buffer[hn::MaxLanes(d)] = {};
  std::memcpy(in_buffer, static_cast<const char*>(input) + i * kInBytes, rest * kInBytes);
  if (kStochastic) std::memcpy(random_buffer, random_bits + i, rest * sizeof(std::uint32_t));
  const V random = hn::Load(d, random_buffer);
  StoreCodes<kOutBytes>(d, EncodeAnyVector<kMode, kKind>(d, LoadBits<kIn>(d, in_buffer, 0), random, p),
                        out_buffer, 0);
  std::memcpy(static_cast<char*>(output) + i * kOutBytes, out_buffer, rest * kOutBytes);
}

// ---------------------------------------------------------------------------
// Dispatch of the runtime choices onto the templates above.

template <RoundingMode kMode, PlanKind kKind, int kOutBytes>
void EncodeForInput(const EncodeJob& job) {
  switch (job.input_kind) {
    case InputKind::kF32:
      return EncodeLoop<kMode, kKind, InputKind::kF32, kOutBytes>(*job.plan, job.input, job.output,
                                                                  job.count, job.random_bits);
    case InputKind::kBf16:
      return EncodeLoop<kMode, kKind, InputKind::kBf16, kOutBytes>(*job.plan, job.input, job.output,
                                                                   job.count, job.random_bits);
    case InputKind::kF16:
      return EncodeLoop<kMode, kKind, InputKind::kF16, kOutBytes>(*job.plan, job.input, job.output,
                                                                  job.count, job.random_bits);
  }
}

template <RoundingMode kMode>
void EncodeForMode(const EncodeJob& job) {
  switch (job.plan->kind) {
    case PlanKind::kFloat:
      if (job.output_bytes == 2) return EncodeForInput<kMode, PlanKind::kFloat, 2>(job);
      return EncodeForInput<kMode, PlanKind::kFloat, 1>(job);
    case PlanKind::kPowerOfTwo:
      return EncodeForInput<kMode, PlanKind::kPowerOfTwo, 1>(job);
    case PlanKind::kThreshold:
      if constexpr (kMode == RoundingMode::kStochastic) {
        return;  // never planned (encode_plan.cc)
      } else {
        return EncodeForInput<kMode, PlanKind::kThreshold, 1>(job);
      }
    case PlanKind::kInteger:
      return EncodeForInput<kMode, PlanKind::kInteger, 1>(job);
    case PlanKind::kIdentity:
      // No rounding happens: one instantiation serves every mode.
      return EncodeForInput<RoundingMode::kNearestEven, PlanKind::kIdentity, 4>(job);
  }
}

inline void Encode(const EncodeJob& job) {
  switch (job.plan->rounding) {
    case RoundingMode::kNearestEven:
      return EncodeForMode<RoundingMode::kNearestEven>(job);
    case RoundingMode::kNearestAway:
      return EncodeForMode<RoundingMode::kNearestAway>(job);
    case RoundingMode::kTowardZero:
      return EncodeForMode<RoundingMode::kTowardZero>(job);
    case RoundingMode::kUp:
      return EncodeForMode<RoundingMode::kUp>(job);
    case RoundingMode::kDown:
      return EncodeForMode<RoundingMode::kDown>(job);
    case RoundingMode::kOdd:
      return EncodeForMode<RoundingMode::kOdd>(job);
    case RoundingMode::kNearestUp:
      return EncodeForMode<RoundingMode::kNearestUp>(job);
    case RoundingMode::kNearestDown:
      return EncodeForMode<RoundingMode::kNearestDown>(job);
    case RoundingMode::kNearestTowardZero:
      return EncodeForMode<RoundingMode::kNearestTowardZero>(job);
    case RoundingMode::kStochastic:
      return EncodeForMode<RoundingMode::kStochastic>(job);
  }
}

// ---------------------------------------------------------------------------
// Table decodes: one gather per vector from a 256-entry table of the model's
// results (every 8-bit index is in range, so no masking is needed).

// Codes of <= 4 bits (E2M1, INT4, UINT4): the 16 table entries sit in
// 16 / Lanes registers and each lookup is a lane permute (one vpermd on AVX3)
// plus selects between the registers, instead of a gather.
constexpr std::size_t kSmallTable = 16;

template <bool kSmall>
HWY_INLINE V LookUp(D32 d, const std::int32_t* table, V index) {
  const DI32 di;
  if constexpr (!kSmall) {
    return hn::BitCast(d, hn::GatherIndex(di, table, hn::BitCast(di, index)));
  } else {
    const std::size_t lanes = hn::Lanes(d);
    const V within = hn::And(index, hn::Set(d, static_cast<std::uint32_t>(lanes - 1)));
    const auto indices = hn::IndicesFromVec(d, within);
    V result = hn::TableLookupLanes(hn::BitCast(d, hn::LoadU(di, table)), indices);
    for (std::size_t k = lanes; k < kSmallTable; k += lanes) {
      const V part = hn::TableLookupLanes(hn::BitCast(d, hn::LoadU(di, table + k)), indices);
      result = hn::IfThenElse(hn::Gt(index, hn::Set(d, static_cast<std::uint32_t>(k - 1))), part, result);
    }
    return result;
  }
}

template <int kOutBytes, bool kSmall>
HWY_NOINLINE void DecodeLoop(const std::int32_t* table, const std::uint8_t* codes, void* output,
                             std::size_t count) {
  const D32 d;
  const hn::Rebind<std::uint8_t, D32> d8;
  const std::size_t lanes = hn::Lanes(d);
  // kSmall: mask to 4 bits (registry.h lets kernels assume clear upper bits;
  // the mask keeps a stray bit from selecting a lane out of range).
  const V index_mask = hn::Set(d, kSmall ? 0xFu : 0xFFu);
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    const V index = hn::And(hn::PromoteTo(d, hn::LoadU(d8, codes + i)), index_mask);
    StoreCodes<kOutBytes>(d, LookUp<kSmall>(d, table, index), output, i);
  }
  const std::size_t rest = count - i;
  if (rest == 0) return;
  HWY_ALIGN std::uint8_t in_buffer[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t out_buffer[hn::MaxLanes(d)] = {};
  std::memcpy(in_buffer, codes + i, rest);
  const V index = hn::And(hn::PromoteTo(d, hn::LoadU(d8, in_buffer)), index_mask);
  StoreCodes<kOutBytes>(d, LookUp<kSmall>(d, table, index), out_buffer, 0);
  std::memcpy(static_cast<char*>(output) + i * kOutBytes, out_buffer, rest * kOutBytes);
}

// ---------------------------------------------------------------------------
// Decodes of 5- to 8-bit codes without gathers, on AVX-512 targets: the
// 256-entry table held in registers as 16-bit halves (decode_tables.h
// DecodeTableNarrow), looked up with two-table permutes. Every 8-bit index is
// in range of the 256 entries, so no index needs masking: the permutes read
// only the index bits they document (Intel SDM vpermi2b: bits 0-6, vpermi2w:
// bits 0-5), and the higher bits pick the table part by explicit masks.
// BF16 output is the low half; FP32 output the high half, plus the low half
// only for tables that have one (NaN payloads of NanPayload::kAllOnes).
#if HWY_TARGET == HWY_AVX3_DL
inline constexpr bool kHaveNarrowDecode = true;

// VBMI: each 16-bit half is two 256-byte planes; vpermi2b looks up 64 codes
// in 128 bytes, and bit 7 picks the plane's half.
HWY_INLINE __m512i LookUpPlane(__m512i index, __mmask64 upper, const std::uint8_t* plane) {
  const __m512i lower_half = _mm512_permutex2var_epi8(_mm512_loadu_si512(plane), index,
                                                      _mm512_loadu_si512(plane + 64));
  const __m512i upper_half = _mm512_permutex2var_epi8(_mm512_loadu_si512(plane + 128), index,
                                                      _mm512_loadu_si512(plane + 192));
  return _mm512_mask_blend_epi8(upper, lower_half, upper_half);
}

// 64 codes -> 64 outputs. The byte and word unpacks below interleave within
// 128-bit blocks; `order` permutes the codes first so that the results come
// out in order: with 4-byte outputs, output vector q's block L holds codes
// 16q + 4L .. +3, which the unpacks take from positions 16L + 4q .. +3 (with
// 2-byte outputs, codes 32q + 8L .. +7 from positions 16L + 8q .. +7).
template <int kOutBytes, bool kLowHalf>
HWY_INLINE void DecodeNarrow64(const std::uint8_t* planes, __m512i order, const std::uint8_t* codes,
                               void* output) {
  const __m512i index = _mm512_permutexvar_epi8(order, _mm512_loadu_si512(codes));
  const __mmask64 upper = _mm512_movepi8_mask(index);
  if constexpr (kOutBytes == 2) {
    // BF16: the low half (planes 0 and 1).
    const __m512i low = LookUpPlane(index, upper, planes);
    const __m512i high = LookUpPlane(index, upper, planes + 256);
    auto* out = static_cast<std::uint16_t*>(output);
    _mm512_storeu_si512(out, _mm512_unpacklo_epi8(low, high));
    _mm512_storeu_si512(out + 32, _mm512_unpackhi_epi8(low, high));
  } else {
    // FP32: the high half (planes 2 and 3) over the low half, or over zero.
    const __m512i b2 = LookUpPlane(index, upper, planes + 512);
    const __m512i b3 = LookUpPlane(index, upper, planes + 768);
    const __m512i high0 = _mm512_unpacklo_epi8(b2, b3);
    const __m512i high1 = _mm512_unpackhi_epi8(b2, b3);
    __m512i low0 = _mm512_setzero_si512();
    __m512i low1 = low0;
    if constexpr (kLowHalf) {
      const __m512i b0 = LookUpPlane(index, upper, planes);
      const __m512i b1 = LookUpPlane(index, upper, planes + 256);
      low0 = _mm512_unpacklo_epi8(b0, b1);
      low1 = _mm512_unpackhi_epi8(b0, b1);
    }
    auto* out = static_cast<std::uint32_t*>(output);
    _mm512_storeu_si512(out, _mm512_unpacklo_epi16(low0, high0));
    _mm512_storeu_si512(out + 16, _mm512_unpackhi_epi16(low0, high0));
    _mm512_storeu_si512(out + 32, _mm512_unpacklo_epi16(low1, high1));
    _mm512_storeu_si512(out + 48, _mm512_unpackhi_epi16(low1, high1));
  }
}

template <int kOutBytes, bool kLowHalf>
HWY_NOINLINE void DecodeNarrowLoop(const DecodeJob& job) {
  alignas(64) std::uint8_t order_bytes[64];
  for (int p = 0; p < 64; ++p) {
    const int block = p / 16, r = p % 16;
    order_bytes[p] = static_cast<std::uint8_t>(
        kOutBytes == 4 ? 16 * (r / 4) + 4 * block + r % 4 : 32 * (r / 8) + 8 * block + r % 8);
  }
  const __m512i order = _mm512_load_si512(order_bytes);
  constexpr std::size_t kStep = 64;
  std::size_t i = 0;
  for (; i + kStep <= job.count; i += kStep) {
    DecodeNarrow64<kOutBytes, kLowHalf>(job.narrow_planes, order, job.codes + i,
                                        static_cast<char*>(job.output) + i * kOutBytes);
  }
  const std::size_t rest = job.count - i;
  if (rest == 0) return;
  alignas(64) std::uint8_t in_buffer[kStep] = {};
  alignas(64) std::uint8_t out_buffer[kStep * kOutBytes];
  std::memcpy(in_buffer, job.codes + i, rest);
  DecodeNarrow64<kOutBytes, kLowHalf>(job.narrow_planes, order, in_buffer, out_buffer);
  std::memcpy(static_cast<char*>(job.output) + i * kOutBytes, out_buffer, rest * kOutBytes);
}
#elif HWY_TARGET == HWY_AVX3
inline constexpr bool kHaveNarrowDecode = true;

// AVX-512BW: vpermi2w looks up 32 codes (widened to 16 bits) in 64 entries;
// four of them cover the 256, and index bits 6 and 7 pick among them.
struct WordTable {
  __m512i part[8];
  explicit WordTable(const std::uint16_t* entries) {
    for (int k = 0; k < 8; ++k) part[k] = _mm512_loadu_si512(entries + 32 * k);
  }
};

HWY_INLINE __m512i LookUpWords(const WordTable& t, __m512i index, __mmask32 bit6, __mmask32 bit7) {
  const __m512i q0 = _mm512_permutex2var_epi16(t.part[0], index, t.part[1]);
  const __m512i q1 = _mm512_permutex2var_epi16(t.part[2], index, t.part[3]);
  const __m512i q2 = _mm512_permutex2var_epi16(t.part[4], index, t.part[5]);
  const __m512i q3 = _mm512_permutex2var_epi16(t.part[6], index, t.part[7]);
  return _mm512_mask_blend_epi16(bit7, _mm512_mask_blend_epi16(bit6, q0, q1),
                                 _mm512_mask_blend_epi16(bit6, q2, q3));
}

template <int kOutBytes, bool kLowHalf>
HWY_INLINE void DecodeNarrow32(const WordTable& low, const WordTable& high,
                               const std::uint8_t* codes, void* output) {
  const __m512i index =
      _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes)));
  const __mmask32 bit6 = _mm512_test_epi16_mask(index, _mm512_set1_epi16(0x40));
  const __mmask32 bit7 = _mm512_test_epi16_mask(index, _mm512_set1_epi16(0x80));
  if constexpr (kOutBytes == 2) {
    _mm512_storeu_si512(output, LookUpWords(low, index, bit6, bit7));
  } else {
    const __m512i h = LookUpWords(high, index, bit6, bit7);
    __m512i lo0 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(h)), 16);
    __m512i lo1 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(h, 1)), 16);
    if constexpr (kLowHalf) {
      const __m512i l = LookUpWords(low, index, bit6, bit7);
      lo0 = _mm512_or_si512(lo0, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(l)));
      lo1 = _mm512_or_si512(lo1, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(l, 1)));
    }
    auto* out = static_cast<std::uint32_t*>(output);
    _mm512_storeu_si512(out, lo0);
    _mm512_storeu_si512(out + 16, lo1);
  }
}

template <int kOutBytes, bool kLowHalf>
HWY_NOINLINE void DecodeNarrowLoop(const DecodeJob& job) {
  const WordTable low(job.narrow_low);
  const WordTable high(job.narrow_high);
  constexpr std::size_t kStep = 32;
  std::size_t i = 0;
  for (; i + kStep <= job.count; i += kStep) {
    DecodeNarrow32<kOutBytes, kLowHalf>(low, high, job.codes + i,
                                        static_cast<char*>(job.output) + i * kOutBytes);
  }
  const std::size_t rest = job.count - i;
  if (rest == 0) return;
  alignas(64) std::uint8_t in_buffer[kStep] = {};
  alignas(64) std::uint8_t out_buffer[kStep * kOutBytes];
  std::memcpy(in_buffer, job.codes + i, rest);
  DecodeNarrow32<kOutBytes, kLowHalf>(low, high, in_buffer, out_buffer);
  std::memcpy(static_cast<char*>(job.output) + i * kOutBytes, out_buffer, rest * kOutBytes);
}
#else
// Other targets: FP32 output of 5- to 8-bit float formats by arithmetic
// (DecodeArithmeticLoop below); BF16 output and the rest keep the gather
// (AVX2) or Highway's emulated gather (SSE4).
inline constexpr bool kHaveNarrowDecode = false;
template <int kOutBytes, bool kLowHalf>
void DecodeNarrowLoop(const DecodeJob&) {}
#endif

// The FP32 decode of one vector of codes by decode_tables.h ArithmeticDecode:
// a normal code's bits under FP32's fields plus the exponent offset, a
// subnormal code's mantissa converted and scaled by a power of two (exact,
// no subnormal operand), the sign ORed in; the codes that the table builder found to differ (NaN / Inf codes
// and the like) take the model's table entries from registers (`top`, a
// 32-entry lane-permute lookup, only in vectors that hold such a code) or
// from a broadcast (`odd_code`). No gather.
HWY_INLINE V DecodeArithmeticVector(D32 d, const ArithmeticDecode& a, V code) {
  const DF32 df;
  const DI32 di;
  const V magnitude = hn::And(code, hn::Set(d, a.magnitude_mask));
  const V normal = hn::Add(hn::ShiftLeftSame(magnitude, a.mantissa_shift), hn::Set(d, a.exponent_offset));
  const V subnormal =
      hn::BitCast(d, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, magnitude)), hn::Set(df, a.subnormal_scale)));
  V value = hn::IfThenElse(hn::Gt(hn::Set(d, a.subnormal_limit), magnitude), subnormal, normal);
  V sign = hn::Zero(d);
  if (a.sign_shift >= 0) {
    sign = hn::And(hn::ShiftRightSame(code, a.sign_shift), hn::Set(d, 1u));
    value = hn::Or(value, hn::ShiftLeft<31>(sign));
  }
  const M top = hn::Gt(magnitude, hn::Set(d, a.top_first - 1));
  const M odd = hn::Eq(code, hn::Set(d, a.odd_code));
  if (HWY_LIKELY(hn::AllFalse(d, hn::Or(top, odd)))) return value;
  // Lanes outside `top` look up a wrapped index; their result is not used.
  const V index = hn::Or(hn::ShiftLeft<4>(sign), hn::And(hn::Sub(magnitude, hn::Set(d, a.top_first)), hn::Set(d, 15u)));
  // Only the registers that hold used entries: magnitudes top_first..max of
  // each sign, [0, used) and [16, 16 + used), in ascending order so that
  // each select takes the lanes at or above its first index.
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t used = a.magnitude_mask + 1 - a.top_first;
  const V within = hn::And(index, hn::Set(d, static_cast<std::uint32_t>(lanes - 1)));
  const auto indices = hn::IndicesFromVec(d, within);
  const auto* top_entries = reinterpret_cast<const std::uint32_t*>(a.top);
  V entry = hn::TableLookupLanes(hn::LoadU(d, top_entries), indices);
  for (std::size_t half = 0; half < (a.sign_shift >= 0 ? 32u : 16u); half += 16) {
    for (std::size_t k = half == 0 ? lanes : half; k < half + used; k += lanes) {
      const V part = hn::TableLookupLanes(hn::LoadU(d, top_entries + k), indices);
      entry = hn::IfThenElse(hn::Gt(index, hn::Set(d, static_cast<std::uint32_t>(k - 1))), part, entry);
    }
  }
  value = hn::IfThenElse(top, entry, value);
  return hn::IfThenElse(odd, hn::Set(d, static_cast<std::uint32_t>(a.odd_value)), value);
}

inline HWY_NOINLINE void DecodeArithmeticLoop(const DecodeJob& job) {
  const D32 d;
  const hn::Rebind<std::uint8_t, D32> d8;
  const ArithmeticDecode a = *job.arithmetic;  // local: output stores could alias it
  const std::size_t lanes = hn::Lanes(d);
  const V code_mask = hn::Set(d, a.code_mask);
  auto* out = static_cast<std::uint32_t*>(job.output);
  std::size_t i = 0;
  for (; i + lanes <= job.count; i += lanes) {
    const V code = hn::And(hn::PromoteTo(d, hn::LoadU(d8, job.codes + i)), code_mask);
    hn::StoreU(DecodeArithmeticVector(d, a, code), d, out + i);
  }
  const std::size_t rest = job.count - i;
  if (rest == 0) return;
  HWY_ALIGN std::uint8_t in_buffer[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t out_buffer[hn::MaxLanes(d)] = {};
  std::memcpy(in_buffer, job.codes + i, rest);
  const V code = hn::And(hn::PromoteTo(d, hn::LoadU(d8, in_buffer)), code_mask);
  hn::Store(DecodeArithmeticVector(d, a, code), d, out_buffer);
  std::memcpy(out + i, out_buffer, rest * sizeof(std::uint32_t));
}

inline void DecodeTable(const DecodeJob& job) {
  const bool small = job.code_bits <= 4;
  if (kHaveNarrowDecode && !small) {
    if (job.output_bytes == 2) return DecodeNarrowLoop<2, false>(job);
    return job.narrow_low_zero ? DecodeNarrowLoop<4, false>(job) : DecodeNarrowLoop<4, true>(job);
  }
  if (!kHaveNarrowDecode && !small && job.output_bytes == 4 && job.arithmetic != nullptr) {
    return DecodeArithmeticLoop(job);
  }
  if (job.output_bytes == 2) {
    return small ? DecodeLoop<2, true>(job.table, job.codes, job.output, job.count)
                 : DecodeLoop<2, false>(job.table, job.codes, job.output, job.count);
  }
  return small ? DecodeLoop<4, true>(job.table, job.codes, job.output, job.count)
               : DecodeLoop<4, false>(job.table, job.codes, job.output, job.count);
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_CONVERT_INL_H_
