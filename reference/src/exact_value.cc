// The oracle's decoder: the textbook field formula, one case per line of the
// format descriptions (docs/formats-reference.md §1; IEEE 754-2019 §3.4; OCP MX v1.0
// §5.3.3 Table 5 and §5.4.1 Table 7; PTX ISA §5.2.3).
#include "lowbit/reference/exact_value.h"

#include <cstdint>

namespace lowbit::reference {
namespace {

std::uint64_t LowBits(int count) {
  return count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
}

// Two's complement (signed) or plain binary (unsigned) integer codes.
Exact IntegerValue(const FormatSpec& spec, std::uint64_t code) {
  BigInt value = code;
  if (spec.has_sign && ((code >> (spec.total_bits - 1)) & 1)) {
    value -= BigInt(1) << spec.total_bits;
  }
  return ExactFromRational(Rational(value));
}

}  // namespace

Rational PowerOfTwo(int k) {
  if (k >= 0) return Rational(BigInt(1) << k);
  return Rational(BigInt(1), BigInt(1) << -k);
}

int Compare(const Rational& a, const Rational& b) {
  using boost::multiprecision::denominator;
  using boost::multiprecision::numerator;
  const BigInt left = numerator(a) * denominator(b);
  const BigInt right = numerator(b) * denominator(a);
  return left < right ? -1 : (left == right ? 0 : 1);
}

Exact ExactFromRational(const Rational& value) {
  Exact e;
  if (value == 0) return e;
  e.value_class = ExactClass::kFinite;
  e.negative = value < 0;
  e.magnitude = e.negative ? Rational(-value) : value;
  return e;
}

Exact ExactValue(const FormatSpec& spec, std::uint64_t code) {
  code &= LowBits(spec.total_bits);
  if (spec.kind == FormatKind::kInteger) return IntegerValue(spec, code);

  const int m = spec.mantissa_bits;
  const int e = spec.exponent_bits;
  const std::uint64_t mantissa = code & LowBits(m);
  const std::uint64_t exponent = (code >> m) & LowBits(e);
  const bool sign = spec.has_sign && ((code >> (spec.total_bits - 1)) & 1);
  const bool exponent_all_ones = exponent == LowBits(e);
  const bool mantissa_all_ones = mantissa == LowBits(m);

  Exact out;
  out.negative = sign;
  // The NaN payload, MSB-aligned at bit 63; a NaN without mantissa bits of
  // its own is a single (quiet) NaN.
  const std::uint64_t aligned_mantissa = m == 0 ? 0 : mantissa << (64 - m);
  const std::uint64_t payload = aligned_mantissa != 0 ? aligned_mantissa : std::uint64_t{1} << 63;

  switch (spec.specials) {
    case SpecialCodes::kIeee:
      // IEEE 754 §3.4: exponent all ones is Inf (mantissa 0) or NaN.
      if (exponent_all_ones) {
        out.value_class = mantissa == 0 ? ExactClass::kInf : ExactClass::kNan;
        if (out.value_class == ExactClass::kNan) out.nan_payload = payload;
        return out;
      }
      break;
    case SpecialCodes::kAllOnesIsNan:
      // OCP E4M3: S.1111.111 only (PTX §5.2.3 "NaN values are limited to 0x7f
      // and 0xff"); UE4M3 0x7F; E8M0 0xFF (OCP MX Table 7).
      if (exponent_all_ones && mantissa_all_ones) {
        out.value_class = ExactClass::kNan;
        out.nan_payload = payload;
        return out;
      }
      break;
    case SpecialCodes::kNegativeZeroIsNan:
      // FNUZ: the "negative zero" pattern is the one NaN; it decodes as a
      // positive NaN (PyTorch fp8_fnuz_to_fp32_value: 0x80 -> 0x7F800001).
      if (sign && exponent == 0 && mantissa == 0) {
        out.value_class = ExactClass::kNan;
        out.negative = false;
        out.nan_payload = std::uint64_t{1} << 63;
        return out;
      }
      break;
    case SpecialCodes::kNone:
      break;
  }

  Rational magnitude;
  if (exponent == 0 && spec.has_subnormals) {
    // Zero and subnormals: 0.mantissa * 2^(1 - bias).
    if (mantissa == 0) {
      out.value_class = ExactClass::kZero;
      return out;
    }
    magnitude = Rational(BigInt(mantissa)) * PowerOfTwo(1 - spec.bias - m);
  } else {
    // Normal: 1.mantissa * 2^(exponent - bias). E8M0 has no subnormals, so its
    // field 0 is 2^-127 (OCP MX Table 7).
    const BigInt significand = (BigInt(1) << m) + mantissa;
    magnitude = Rational(significand) * PowerOfTwo(static_cast<int>(exponent) - spec.bias - m);
  }
  out.value_class = ExactClass::kFinite;
  out.magnitude = magnitude;
  return out;
}

}  // namespace lowbit::reference
