// RoundPack: the single rounding point of the model. Every encode, decode and
// conversion ends here (docs/design.md "One rounding point"). The SIMD and CUDA twins follow the
// same numbered steps in their comments:
//   1. NaN        2. Inf        3. negative into unsigned        4. zero
//   5. align the exact value to the destination's quantum, keeping the
//      discarded bits (round/sticky information)
//   6. choose the increment for the rounding mode
//   7. carry, subnormal/normal assembly
//   8. overflow per policy       9. flags
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit {

// Random bits consumed by kStochastic when EncodeOptions::random_bit_count is
// 0. PTX ISA 9.0 §9.7.9.21 (cvt.rs): BF16 uses 16 bits and FP16 13 bits per
// element (exactly the bits an FP32 input loses for a normal result); the x4
// forms into FP8/FP6/FP4 take 8 bits per element. Wider destinations, which
// PTX does not define, take 32.
LOWBIT_HD_CONSTEXPR int DefaultRandomBitCount(const FormatSpec& dst) {
  if (dst.IsFloat() && dst.exponent_bits == 8 && dst.mantissa_bits == 7) return 16;
  if (dst.IsFloat() && dst.exponent_bits == 5 && dst.mantissa_bits == 10) return 13;
  if (dst.total_bits <= 8) return 8;
  return 32;
}

namespace detail {

// The format's NaN code with the given sign and payload policy.
LOWBIT_HD_CONSTEXPR std::uint64_t NanCode(const FormatSpec& dst, bool negative,
                                          NanPayload payload_policy,
                                          std::uint64_t payload) {
  const int m = dst.mantissa_bits;
  const std::uint64_t sign = negative ? dst.SignBit() : 0;
  const std::uint64_t top = static_cast<std::uint64_t>(dst.MaxExponentField()) << m;
  switch (dst.specials) {
    case SpecialCodes::kNegativeZeroIsNan:
      return dst.SignBit();
    case SpecialCodes::kAllOnesIsNan:
      return sign | top | dst.MantissaMask();
    case SpecialCodes::kIeee: {
      const std::uint64_t quiet = std::uint64_t{1} << (m - 1);
      switch (payload_policy) {
        case NanPayload::kAllOnes:
          return sign | top | dst.MantissaMask();
        case NanPayload::kQuietOnly:
          return sign | top | quiet;
        case NanPayload::kTruncate:
          return sign | top | (payload >> (64 - m)) | quiet;
        case NanPayload::kPreserve: {
          const std::uint64_t kept = payload >> (64 - m);
          return sign | top | (kept != 0 ? kept : quiet);
        }
      }
      break;
    }
    case SpecialCodes::kNone:
      break;
  }
  return 0;
}

LOWBIT_HD_CONSTEXPR bool NanIsNegative(const FormatSpec& dst, bool input_negative,
                                       NanSign policy) {
  if (!dst.has_sign) return false;
  switch (policy) {
    case NanSign::kKeep:
      return input_negative;
    case NanSign::kPositive:
      return false;
    case NanSign::kNegative:
      return true;
  }
  return false;
}

LOWBIT_HD_CONSTEXPR std::uint64_t MaxFiniteWithSign(const FormatSpec& dst, bool negative) {
  if (!dst.IsFloat()) {
    // Two's complement: the most negative value is one past -max.
    return negative && dst.has_sign
               ? static_cast<std::uint64_t>(dst.IntMin()) & dst.CodeMask()
               : dst.MaxFiniteCode();
  }
  return dst.MaxFiniteCode() | (negative ? dst.SignBit() : 0);
}

// The result for a magnitude beyond the finite range (an Inf input when
// `from_inf`, else a finite overflow), sign already applied.
LOWBIT_HD_CONSTEXPR EncodeResult OverflowResult(const FormatSpec& dst, bool negative,
                                                bool from_inf,
                                                const EncodeOptions& o) {
  EncodeResult r;
  r.flags = from_inf ? std::uint8_t{kFlagNone} : std::uint8_t{kFlagOverflow | kFlagInexact};
  if (!dst.IsFloat()) {
    if (from_inf) r.flags = kFlagInvalid;
    r.code = MaxFiniteWithSign(dst, negative);
    return r;
  }
  const bool no_special = !dst.HasNan() && !dst.HasInf();
  bool saturate = o.overflow == Overflow::kSaturate || no_special;
  if (from_inf && o.inf_input == InfInput::kAlwaysNonFinite && !no_special) {
    saturate = false;
  }
  bool to_non_finite = !saturate;
  if (!saturate && !from_inf) {
    // IEEE 754 §7.4: only modes that round away from zero on this side of
    // zero carry an overflow to infinity.
    switch (o.rounding) {
      case RoundingMode::kNearestEven:
      case RoundingMode::kNearestAway:
      case RoundingMode::kNearestUp:
      case RoundingMode::kNearestDown:
      case RoundingMode::kNearestTowardZero:
      case RoundingMode::kStochastic:
        to_non_finite = true;
        break;
      case RoundingMode::kUp:
        to_non_finite = !negative;
        break;
      case RoundingMode::kDown:
        to_non_finite = negative;
        break;
      case RoundingMode::kTowardZero:
      case RoundingMode::kOdd:
        to_non_finite = false;
        break;
    }
  }
  if (!to_non_finite) {
    r.code = MaxFiniteWithSign(dst, negative);
    if (from_inf) r.flags = kFlagInexact;
    return r;
  }
  if (dst.HasInf()) {
    r.code = (static_cast<std::uint64_t>(dst.MaxExponentField()) << dst.mantissa_bits) |
             (negative ? dst.SignBit() : 0);
    return r;
  }
  // No Inf: the NaN stands for the overflow, with the value's sign (PyTorch,
  // ml_dtypes, CUDA __NV_NOSAT all give 0x7F | sign for E4M3, docs/formats-reference.md §4.1).
  r.code = NanCode(dst, negative, NanPayload::kAllOnes, 0);
  if (from_inf) r.flags = kFlagInvalid;
  return r;
}

}  // namespace detail

LOWBIT_HD_CONSTEXPR EncodeResult RoundPack(const FormatSpec& dst, Unpacked u,
                                           const EncodeOptions& o) {
  EncodeResult r;
  // 1. NaN.
  if (u.value_class == ValueClass::kNan) {
    if (dst.HasNan()) {
      r.code = detail::NanCode(dst, detail::NanIsNegative(dst, u.negative, o.nan_sign),
                               o.nan_payload, u.nan_payload);
      return r;
    }
    r.flags = kFlagInvalid;
    switch (o.nan_into_no_nan) {
      case NanIntoNoNan::kPositiveMax:
        r.code = detail::MaxFiniteWithSign(dst, false);
        break;
      case NanIntoNoNan::kPositiveZero:
        r.code = 0;
        break;
      case NanIntoNoNan::kOppositeSignZero:
        // A format without -0 (integers: SignBit() would be -128 / -8) has
        // only +0.
        r.code = (u.negative || !dst.HasNegativeZero()) ? 0 : dst.SignBit();
        break;
    }
    return r;
  }
  // 3. Negative into an unsigned format (before Inf: -Inf is negative too).
  // Integer wrap-around keeps the low bits of the rounded negative integer
  // instead (Overflow::kWrap: ml_dtypes uint4 -2.5 -> 14, docs/formats-reference.md §8.1).
  const bool wraps = !dst.IsFloat() && o.overflow == Overflow::kWrap &&
                     u.value_class == ValueClass::kFinite;
  if (u.negative && !dst.has_sign && u.value_class != ValueClass::kZero && !wraps) {
    switch (o.negative_into_unsigned) {
      case NegativeIntoUnsigned::kMagnitude:
        u.negative = false;
        break;
      case NegativeIntoUnsigned::kNan:
        if (dst.HasNan()) {
          r.code = detail::NanCode(dst, false, NanPayload::kAllOnes, 0);
          r.flags = kFlagInvalid;
          return r;
        }
        [[fallthrough]];
      case NegativeIntoUnsigned::kClampZero:
        r.code = 0;
        r.flags = kFlagInvalid | kFlagInexact;
        return r;
    }
  }
  // 2. Inf.
  if (u.value_class == ValueClass::kInf) {
    return detail::OverflowResult(dst, u.negative, /*from_inf=*/true, o);
  }
  // 4. Zero.
  if (u.value_class == ValueClass::kZero) {
    if (!dst.HasZero()) {
      if (o.zero_into_no_zero == ZeroIntoNoZero::kNan && dst.HasNan()) {
        r.code = detail::NanCode(dst, false, NanPayload::kAllOnes, 0);
        r.flags = kFlagInvalid;
      } else {
        // The smallest value (E8M0: 2^-127). Not an underflow: an exact zero
        // is not tiny ("non-zero, below the smallest normal", policy.h).
        r.code = 0;
        r.flags = kFlagInexact;
      }
      return r;
    }
    r.code = (u.negative && o.keep_negative_zero && dst.HasNegativeZero()) ? dst.SignBit() : 0;
    return r;
  }

  // 5. Align. `quantum` is the exponent of the destination's last place at this
  // magnitude: value = n * 2^quantum after rounding.
  const int m = dst.IsFloat() ? dst.mantissa_bits : 0;
  const int value_exponent = u.exponent + HighestSetBit(u.significand);  // 2^e <= |x| < 2^(e+1)
  const int min_exponent = dst.IsFloat() ? dst.MinNormalExponent() : 0;
  int quantum = dst.IsFloat() ? (value_exponent > min_exponent ? value_exponent : min_exponent) - m : 0;
  if (!dst.IsFloat() && value_exponent >= 64 - 2) {
    // Far beyond any integer format: overflow without shifting out of range.
    if (o.overflow == Overflow::kWrap) {
      // Multiples of 2^62 or more wrap to the low bits, all zero for <= 62-bit formats.
      const std::uint64_t wrapped = u.exponent >= 64 ? 0 : (u.significand << u.exponent);
      r.code = (u.negative ? (~wrapped + 1) : wrapped) & dst.CodeMask();
      r.flags = kFlagOverflow | kFlagInexact;  // the wrapped value differs
      return r;
    }
    return detail::OverflowResult(dst, u.negative, false, o);
  }
  const int shift = quantum - u.exponent;  // > 0: bits are discarded
  std::uint64_t kept;
  std::uint64_t discarded = 0;  // the discarded bits, as an integer below 2^shift
  // Comparison of the discarded part with half a quantum: -1 below, 0 tie, +1 above.
  int vs_half = -1;
  if (shift <= 0) {
    kept = u.significand << (-shift);  // exact; |shift| <= m, no overflow
  } else if (shift >= 64) {
    kept = 0;
    discarded = u.significand;  // significand < 2^62 always, so below half
  } else {
    kept = u.significand >> shift;
    discarded = u.significand & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    vs_half = discarded < half ? -1 : (discarded == half ? 0 : 1);
  }
  const bool inexact = discarded != 0;

  // 6. Increment.
  std::uint64_t n = kept;
  if (inexact) {
    switch (o.rounding) {
      case RoundingMode::kNearestEven:
        n += (vs_half > 0 || (vs_half == 0 && (kept & 1))) ? 1 : 0;
        break;
      case RoundingMode::kNearestAway:
        n += vs_half >= 0 ? 1 : 0;
        break;
      case RoundingMode::kNearestUp:  // a tie goes away from zero only for a positive value
        n += (vs_half > 0 || (vs_half == 0 && !u.negative)) ? 1 : 0;
        break;
      case RoundingMode::kNearestDown:
        n += (vs_half > 0 || (vs_half == 0 && u.negative)) ? 1 : 0;
        break;
      case RoundingMode::kNearestTowardZero:
        n += vs_half > 0 ? 1 : 0;
        break;
      case RoundingMode::kTowardZero:
        break;
      case RoundingMode::kUp:
        n += u.negative ? 0 : 1;
        break;
      case RoundingMode::kDown:
        n += u.negative ? 1 : 0;
        break;
      case RoundingMode::kOdd:
        n |= 1;
        break;
      case RoundingMode::kStochastic: {
        // Round away from zero iff (top R discarded bits) + (R random bits)
        // carries out of R bits; discarded bits below the top R are ignored.
        // This is PTX cvt.rs ("carry out of the integer addition of the
        // supplied random bits to the truncated off bits") with the random
        // bits aligned to the most significant discarded bit, as TE's FP4
        // fallback (u = rbits/256 of a step) does.
        const int count = o.random_bit_count > 0 ? o.random_bit_count : DefaultRandomBitCount(dst);
        const std::uint64_t random = count >= 32 ? o.random_bits
                                                 : (o.random_bits & ((std::uint32_t{1} << count) - 1));
        std::uint64_t top;
        if (shift >= count) {
          top = (shift - count) >= 64 ? 0 : discarded >> (shift - count);
        } else {
          top = discarded << (count - shift);
        }
        n += ((top + random) >> count) != 0 ? 1 : 0;
        break;
      }
    }
  }

  std::uint8_t flags = inexact ? kFlagInexact : kFlagNone;

  // Integers: sign, range, assemble.
  if (!dst.IsFloat()) {
    const std::int64_t v = u.negative ? -static_cast<std::int64_t>(n) : static_cast<std::int64_t>(n);
    if (v > dst.IntMax() || v < dst.IntMin()) {
      if (o.overflow == Overflow::kWrap) {
        r.code = static_cast<std::uint64_t>(v) & dst.CodeMask();
        // Inexact too: the wrapped code's value differs from the input's.
        r.flags = flags | kFlagOverflow | kFlagInexact;
        return r;
      }
      return detail::OverflowResult(dst, u.negative, false, o);
    }
    r.code = static_cast<std::uint64_t>(v) & dst.CodeMask();
    r.flags = flags;
    return r;
  }

  // 7. Carry and assembly. n < 2^(m+1) before the increment; a carry to
  // 2^(m+1) moves one binade up.
  if (n >> (m + 1)) {
    n >>= 1;
    ++quantum;
  }
  if (value_exponent < min_exponent && inexact) flags |= kFlagUnderflow;
  const std::uint64_t sign = u.negative ? dst.SignBit() : 0;
  if (n == 0) {
    if (!dst.HasZero()) {
      r.code = 0;  // clip to the smallest value (E8M0 2^-127), docs/formats-reference.md §4.7
      r.flags = flags;
      return r;
    }
    r.code = (u.negative && o.keep_negative_zero && dst.HasNegativeZero()) ? sign : 0;
    r.flags = flags;
    return r;
  }
  std::uint64_t magnitude;
  if (n >> m) {  // normal: n in [2^m, 2^(m+1))
    const int field = quantum + m + dst.bias;
    // 8. Overflow: beyond the exponent range, or onto a reserved code.
    if (field > dst.MaxFiniteExponentField()) {
      return detail::OverflowResult(dst, u.negative, false, o);
    }
    magnitude = (static_cast<std::uint64_t>(field) << m) | (n & dst.MantissaMask());
    if (magnitude > dst.MaxFiniteCode()) {
      return detail::OverflowResult(dst, u.negative, false, o);
    }
  } else {  // subnormal: field 0
    magnitude = n;
  }
  // 9. Flags and sign.
  r.code = sign | magnitude;
  r.flags = flags;
  return r;
}

}  // namespace lowbit
