// The oracle's encoder. Each rule below is the policy.h comment it implements,
// read as a specification; the order of the steps is the order in which the
// rules take precedence (NaN, a negative into an unsigned format, Inf, zero,
// finite values).
#include "lowbit/reference/oracle_encode.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "lowbit/reference/value_grid.h"

namespace lowbit::reference {
namespace {

using boost::multiprecision::denominator;
using boost::multiprecision::numerator;

bool IsInteger(const FormatSpec& s) { return s.kind == FormatKind::kInteger; }
// Which special values a format has (docs/formats-reference.md §1 columns Inf / NaN / -0).
bool HasInf(const FormatSpec& s) { return !IsInteger(s) && s.specials == SpecialCodes::kIeee; }
bool HasNan(const FormatSpec& s) { return !IsInteger(s) && s.specials != SpecialCodes::kNone; }
bool HasZero(const FormatSpec& s) { return IsInteger(s) || s.has_subnormals; }
bool HasNegativeZero(const FormatSpec& s) {
  return !IsInteger(s) && s.has_sign && s.has_subnormals &&
         s.specials != SpecialCodes::kNegativeZeroIsNan;
}
std::uint64_t SignBit(const FormatSpec& s) {
  return s.has_sign ? std::uint64_t{1} << (s.total_bits - 1) : 0;
}
std::uint64_t Ones(int count) { return count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1; }

BigInt IntMin(const FormatSpec& s) { return s.has_sign ? BigInt(-(BigInt(1) << (s.total_bits - 1))) : BigInt(0); }
BigInt IntMax(const FormatSpec& s) {
  return s.has_sign ? BigInt((BigInt(1) << (s.total_bits - 1)) - 1) : BigInt((BigInt(1) << s.total_bits) - 1);
}
// Two's complement code of an integer (the low total_bits of v).
std::uint64_t IntCode(const FormatSpec& s, const BigInt& v) {
  const BigInt modulus = BigInt(1) << s.total_bits;
  BigInt r = v % modulus;  // truncating: negative for negative v
  if (r < 0) r += modulus;
  return static_cast<std::uint64_t>(r);
}

// The largest finite value with the given sign (integers: the most negative
// value for negatives, since two's complement has one more of those).
std::uint64_t MaxFiniteCode(const FormatSpec& s, bool negative) {
  if (IsInteger(s)) return IntCode(s, negative ? IntMin(s) : IntMax(s));
  return GridFor(s).points.back().code | (negative ? SignBit(s) : 0);
}

std::uint64_t InfCode(const FormatSpec& s, bool negative) {
  return (Ones(s.exponent_bits) << s.mantissa_bits) | (negative ? SignBit(s) : 0);
}

// A NaN of the format (which has one). policy.h NanPayload: all mantissa bits,
// only the quiet bit (mantissa MSB), the input payload cut to the
// destination's width with the quiet bit forced on, or left as it is. Formats with one NaN per
// sign (E4M3, UE4M3, E8M0) or a single NaN (FNUZ 0x80) ignore the payload.
std::uint64_t NanCode(const FormatSpec& s, bool negative, NanPayload policy, std::uint64_t payload) {
  const std::uint64_t sign = negative ? SignBit(s) : 0;
  switch (s.specials) {
    case SpecialCodes::kNegativeZeroIsNan:
      return SignBit(s);
    case SpecialCodes::kAllOnesIsNan:
      return sign | Ones(s.exponent_bits + s.mantissa_bits);
    case SpecialCodes::kIeee: {
      const int m = s.mantissa_bits;
      const std::uint64_t quiet = std::uint64_t{1} << (m - 1);
      std::uint64_t mantissa = 0;
      switch (policy) {
        case NanPayload::kAllOnes:
          mantissa = Ones(m);
          break;
        case NanPayload::kQuietOnly:
          mantissa = quiet;
          break;
        case NanPayload::kTruncate:
          mantissa = (payload >> (64 - m)) | quiet;
          break;
        case NanPayload::kPreserve:
          // The payload bits as they are (a signalling NaN stays signalling);
          // the quiet bit only when no bit survives, so the code stays a NaN.
          mantissa = payload >> (64 - m);
          if (mantissa == 0) mantissa = quiet;
          break;
      }
      return sign | (Ones(s.exponent_bits) << m) | mantissa;
    }
    case SpecialCodes::kNone:
      break;
  }
  throw std::logic_error("lowbit::reference: NanCode of a format without NaN");
}

// policy.h NanSign; a format without a sign bit has only a positive NaN.
bool NanNegative(const FormatSpec& s, bool input_negative, NanSign policy) {
  if (!s.has_sign) return false;
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

// Whether the rounding picks the neighbour away from zero. `lower_odd` /
// `upper_odd`: parity of the integral significands of the neighbours toward
// and away from zero.
bool RoundAway(const FormatSpec& dst, bool negative, const Location& loc, bool lower_odd,
               bool upper_odd, const EncodeOptions& o) {
  switch (o.rounding) {
    case RoundingMode::kNearestEven:
      if (loc.vs_half != 0) return loc.vs_half > 0;
      // A tie goes to the even significand. With no stored mantissa bit
      // (E8M0) both neighbours are 1 * 2^e: the tie goes up, as PyTorch and
      // ml_dtypes round E8M0 (docs/formats-reference.md §4.7 "ties up").
      if (lower_odd != upper_odd) return lower_odd;
      return true;
    case RoundingMode::kNearestAway:
      return loc.vs_half >= 0;
    // policy.h: the tie goes toward +Inf, toward -Inf, toward zero; "away"
    // is away from zero, so the sign decides the first two.
    case RoundingMode::kNearestUp:
      return loc.vs_half != 0 ? loc.vs_half > 0 : !negative;
    case RoundingMode::kNearestDown:
      return loc.vs_half != 0 ? loc.vs_half > 0 : negative;
    case RoundingMode::kNearestTowardZero:
      return loc.vs_half > 0;
    case RoundingMode::kTowardZero:
      return false;
    case RoundingMode::kUp:
      return !negative;
    case RoundingMode::kDown:
      return negative;
    case RoundingMode::kOdd:
      // The neighbour with the odd significand; when both are odd (E8M0, no
      // mantissa bit to set) the truncated one, as "truncate, then set the
      // last bit" (policy.h) has nothing to set.
      if (lower_odd) return false;
      return upper_odd;
    case RoundingMode::kStochastic: {
      // Away iff floor(f * 2^R) + r >= 2^R, f the position between the
      // neighbours, R random bits r (PTX cvt.rs "carry out of the integer
      // addition of the supplied random bits to the truncated off bits").
      int count = o.random_bit_count > 0 ? o.random_bit_count : OracleRandomBitCount(dst);
      if (count > 64) count = 64;
      const std::uint64_t r = count >= 32 ? o.random_bits : (o.random_bits & Ones(count));
      const unsigned __int128 top = loc.fraction_bits >> (64 - count);
      return top + r >= (static_cast<unsigned __int128>(1) << count);
    }
  }
  return false;
}

// Rounding went past the largest finite value (policy.h Overflow).
EncodeResult OverflowResult(const FormatSpec& dst, bool negative, const EncodeOptions& o) {
  EncodeResult r;
  r.flags = kFlagOverflow | kFlagInexact;  // IEEE 754 §7.4: overflow is also inexact
  const bool has_non_finite = HasInf(dst) || HasNan(dst);
  if (o.overflow == Overflow::kSaturate || !has_non_finite) {
    r.code = MaxFiniteCode(dst, negative);
    return r;
  }
  // kFormatDefault: modes that round this overflow away from zero give Inf
  // (NaN without Inf); those that round toward zero on this side give max.
  bool away = true;
  switch (o.rounding) {
    case RoundingMode::kNearestEven:
    case RoundingMode::kNearestAway:
    case RoundingMode::kNearestUp:
    case RoundingMode::kNearestDown:
    case RoundingMode::kNearestTowardZero:
    case RoundingMode::kStochastic:
      away = true;
      break;
    case RoundingMode::kTowardZero:
    case RoundingMode::kOdd:
      away = false;
      break;
    case RoundingMode::kUp:
      away = !negative;
      break;
    case RoundingMode::kDown:
      away = negative;
      break;
  }
  if (!away) {
    r.code = MaxFiniteCode(dst, negative);
  } else if (HasInf(dst)) {
    r.code = InfCode(dst, negative);
  } else {
    r.code = NanCode(dst, negative, NanPayload::kAllOnes, 0);
  }
  return r;
}

EncodeResult DecideInteger(const FormatSpec& dst, bool negative, const Location& loc,
                           const EncodeOptions& o) {
  BigInt n = loc.floor_magnitude;
  EncodeResult r;
  if (!loc.exact) {
    const bool lower_odd = (n & 1) != 0;
    if (RoundAway(dst, negative, loc, lower_odd, !lower_odd, o)) n += 1;
    r.flags = kFlagInexact;
  }
  const BigInt v = negative ? BigInt(-n) : n;
  if (v >= IntMin(dst) && v <= IntMax(dst)) {
    r.code = IntCode(dst, v);
    return r;
  }
  if (o.overflow == Overflow::kWrap) {
    // The wrapped code's value differs from the input's: inexact as well.
    r.code = IntCode(dst, v);
    r.flags = kFlagOverflow | kFlagInexact;
    return r;
  }
  r.code = MaxFiniteCode(dst, negative);
  r.flags = kFlagOverflow | kFlagInexact;
  return r;
}

}  // namespace

int OracleRandomBitCount(const FormatSpec& dst) {
  const bool is_float = dst.kind == FormatKind::kFloat;
  if (is_float && dst.total_bits == 16 && dst.exponent_bits == 8) return 16;  // BF16
  if (is_float && dst.total_bits == 16 && dst.exponent_bits == 5) return 13;  // FP16
  if (dst.total_bits <= 8) return 8;
  return 32;
}

Location Locate(const FormatSpec& dst, const Rational& magnitude) {
  if (magnitude.sign() <= 0) throw std::invalid_argument("lowbit::reference::Locate: magnitude <= 0");
  Location loc;
  Rational lower;
  Rational upper;
  if (IsInteger(dst)) {
    // Integer neighbours: floor and floor + 1.
    loc.floor_magnitude = numerator(magnitude) / denominator(magnitude);
    lower = Rational(loc.floor_magnitude);
    upper = lower + 1;
  } else {
    const ValueGrid& grid = GridFor(dst);
    if (Compare(magnitude, grid.beyond_max.magnitude) >= 0) {
      loc.region = Location::Region::kBeyondMax;
      return loc;
    }
    loc.tiny = Compare(magnitude, grid.min_normal) < 0;
    const auto above = std::upper_bound(
        grid.points.begin(), grid.points.end(), magnitude,
        [](const Rational& value, const GridPoint& p) { return Compare(value, p.magnitude) < 0; });
    if (above == grid.points.begin()) {
      loc.region = Location::Region::kBelowMin;
      return loc;
    }
    loc.lower = static_cast<std::size_t>(above - grid.points.begin()) - 1;
    lower = grid.points[loc.lower].magnitude;
    upper = above == grid.points.end() ? grid.beyond_max.magnitude : above->magnitude;
  }
  loc.exact = magnitude == lower;
  const Rational twice = magnitude * 2;
  const Rational ends = lower + upper;
  loc.vs_half = Compare(twice, ends);
  const Rational fraction = (magnitude - lower) / (upper - lower);
  const BigInt scaled = (numerator(fraction) << 64) / denominator(fraction);
  loc.fraction_bits = static_cast<std::uint64_t>(scaled);
  return loc;
}

EncodeResult Decide(const FormatSpec& dst, const Exact& input, const Location& loc,
                    const EncodeOptions& o) {
  EncodeResult r;
  // 1. NaN.
  if (input.value_class == ExactClass::kNan) {
    if (HasNan(dst)) {
      r.code = NanCode(dst, NanNegative(dst, input.negative, o.nan_sign), o.nan_payload,
                       input.nan_payload);
      return r;
    }
    // policy.h NanIntoNoNan; kFlagInvalid "NaN into a format without NaN".
    r.flags = kFlagInvalid;
    switch (o.nan_into_no_nan) {
      case NanIntoNoNan::kPositiveMax:
        r.code = MaxFiniteCode(dst, false);
        break;
      case NanIntoNoNan::kPositiveZero:
        r.code = 0;
        break;
      case NanIntoNoNan::kOppositeSignZero:
        // +NaN -> -0, -NaN -> +0; a format without -0 (integers) has only 0.
        r.code = (!input.negative && HasNegativeZero(dst)) ? SignBit(dst) : 0;
        break;
    }
    return r;
  }

  // 2. A negative non-zero value into an unsigned format. Not for a finite
  // value under integer wrap-around, which keeps the low bits of the rounded
  // (negative) integer instead: policy.h kWrap, ml_dtypes uint4 -2.5 -> 14
  // (docs/formats-reference.md §8.1).
  bool negative = input.negative;
  const bool wraps = IsInteger(dst) && o.overflow == Overflow::kWrap &&
                     input.value_class == ExactClass::kFinite;
  if (negative && !dst.has_sign && input.value_class != ExactClass::kZero && !wraps) {
    switch (o.negative_into_unsigned) {
      case NegativeIntoUnsigned::kMagnitude:
        negative = false;
        break;
      case NegativeIntoUnsigned::kNan:
        if (HasNan(dst)) {
          r.code = NanCode(dst, false, NanPayload::kAllOnes, 0);
          r.flags = kFlagInvalid;
          return r;
        }
        [[fallthrough]];  // "else clamp to 0"
      case NegativeIntoUnsigned::kClampZero:
        r.code = 0;
        r.flags = kFlagInvalid | kFlagInexact;
        return r;
    }
  }
  const std::uint64_t sign = negative ? SignBit(dst) : 0;

  // 3. Infinity.
  if (input.value_class == ExactClass::kInf) {
    if (IsInteger(dst)) {
      // kFlagInvalid "NaN/Inf into an integer"; the value saturates (PTX
      // cvt.rni: "clamped to the destination range").
      r.code = MaxFiniteCode(dst, negative);
      r.flags = kFlagInvalid;
      return r;
    }
    const bool saturate = o.overflow == Overflow::kSaturate && o.inf_input == InfInput::kLikeOverflow;
    if (saturate || (!HasInf(dst) && !HasNan(dst))) {
      r.code = MaxFiniteCode(dst, negative);
      r.flags = kFlagInexact;
    } else if (HasInf(dst)) {
      r.code = InfCode(dst, negative);
    } else {
      r.code = NanCode(dst, negative, NanPayload::kAllOnes, 0);
      r.flags = kFlagInvalid;
    }
    return r;
  }

  // 4. Zero.
  if (input.value_class == ExactClass::kZero) {
    if (HasZero(dst)) {
      r.code = (negative && o.keep_negative_zero && HasNegativeZero(dst)) ? sign : 0;
      return r;
    }
    if (o.zero_into_no_zero == ZeroIntoNoZero::kNan && HasNan(dst)) {
      r.code = NanCode(dst, false, NanPayload::kAllOnes, 0);
      r.flags = kFlagInvalid;
      return r;
    }
    // The smallest value (E8M0 2^-127). Inexact; not an underflow, since the
    // exact value is not "non-zero, below the smallest normal" (policy.h).
    r.code = GridFor(dst).points.front().code;
    r.flags = kFlagInexact;
    return r;
  }

  // 5. Finite non-zero.
  if (IsInteger(dst)) return DecideInteger(dst, negative, loc, o);
  const ValueGrid& grid = GridFor(dst);
  switch (loc.region) {
    case Location::Region::kBeyondMax:
      return OverflowResult(dst, negative, o);
    case Location::Region::kBelowMin:
      // Below 2^-127 in E8M0: results clip to the smallest value (CUDA
      // __nv_cvt_*_to_e8m0, docs/formats-reference.md §4.7), whatever the mode.
      r.code = grid.points.front().code;
      r.flags = kFlagInexact | kFlagUnderflow;
      return r;
    case Location::Region::kInGrid:
      break;
  }
  const GridPoint& lower = grid.points[loc.lower];
  if (loc.exact) {
    r.code = lower.code | sign;
    return r;
  }
  const bool last = loc.lower + 1 == grid.points.size();
  const GridPoint& upper = last ? grid.beyond_max : grid.points[loc.lower + 1];
  const bool away = RoundAway(dst, negative, loc, lower.odd_significand, upper.odd_significand, o);
  if (away && last) return OverflowResult(dst, negative, o);
  const GridPoint& chosen = away ? upper : lower;
  r.flags = kFlagInexact | (loc.tiny ? kFlagUnderflow : kFlagNone);
  if (chosen.magnitude == 0) {
    r.code = (negative && o.keep_negative_zero && HasNegativeZero(dst)) ? sign : 0;
  } else {
    r.code = chosen.code | sign;
  }
  return r;
}

EncodeResult OracleEncode(const FormatSpec& dst, const Exact& input, const EncodeOptions& options) {
  Location loc;
  if (input.value_class == ExactClass::kFinite) loc = Locate(dst, input.magnitude);
  return Decide(dst, input, loc, options);
}

}  // namespace lowbit::reference
