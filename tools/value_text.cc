// Exact decimal printing: a finite value is significand * 2^exponent, so for
// exponent < 0 it equals significand * 5^k / 10^k (k = -exponent), an integer
// with the decimal point k digits from the right; every digit is exact.
#include "value_text.h"

#include <bit>
#include <cmath>
#include <cstdio>

#include <boost/multiprecision/cpp_int.hpp>

#include "lowbit/formats/convert.h"

namespace lowbit::tools {

using boost::multiprecision::cpp_int;

std::string ExactDecimal(const Unpacked& value) {
  const std::string sign = value.negative ? "-" : "";
  switch (value.value_class) {
    case ValueClass::kZero:
      return sign + "0";
    case ValueClass::kInf:
      return sign + "inf";
    case ValueClass::kNan:
      return sign + "nan";
    case ValueClass::kFinite:
      break;
  }
  cpp_int digits = value.significand;
  if (value.exponent >= 0) {
    digits <<= value.exponent;
    return sign + digits.str();
  }
  const unsigned k = static_cast<unsigned>(-value.exponent);
  digits *= boost::multiprecision::pow(cpp_int(5), k);
  std::string text = digits.str();
  if (text.size() <= k) text.insert(0, k + 1 - text.size(), '0');
  std::string integer = text.substr(0, text.size() - k);
  std::string fraction = text.substr(text.size() - k);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return sign + integer + (fraction.empty() ? "" : "." + fraction);
}

std::string ExactDecimal(const FormatSpec& spec, std::uint64_t code) {
  return ExactDecimal(Unpack(spec, code));
}

std::string ValueText(const Unpacked& value, bool always_power) {
  const std::string decimal = ExactDecimal(value);
  if (value.value_class != ValueClass::kFinite || value.significand == 0 ||
      (value.significand & (value.significand - 1)) != 0) {
    return decimal;
  }
  const std::size_t digits = decimal.size() - (value.negative ? 1 : 0);
  if (!always_power && digits <= 8) return decimal;
  const int k = value.exponent + static_cast<int>(std::countr_zero(value.significand));
  return decimal + " (" + (value.negative ? "-" : "") + "2^" + std::to_string(k) + ")";
}

std::string ValueText(const FormatSpec& spec, std::uint64_t code) {
  return ValueText(Unpack(spec, code), spec.IsFloat() && spec.mantissa_bits == 0);
}

std::string HexFloat(const FormatSpec& spec, std::uint64_t code) {
  const Unpacked u = Unpack(spec, code);
  if (u.value_class == ValueClass::kNan || u.value_class == ValueClass::kInf) {
    return ExactDecimal(u);
  }
  const double value = DecodeToF64(spec, code);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", value);
  return buffer;
}

const char* ClassName(const FormatSpec& spec, std::uint64_t code) {
  if (!spec.IsFloat()) return "integer";
  const Unpacked u = Unpack(spec, code);
  switch (u.value_class) {
    case ValueClass::kZero:
      return "zero";
    case ValueClass::kInf:
      return "inf";
    case ValueClass::kNan:
      return "nan";
    case ValueClass::kFinite:
      break;
  }
  const std::uint64_t exponent_field =
      (code >> spec.mantissa_bits) & static_cast<std::uint64_t>(spec.MaxExponentField());
  return exponent_field == 0 && spec.has_subnormals ? "subnormal" : "normal";
}

std::string FieldBits(const FormatSpec& spec, std::uint64_t code) {
  auto bits = [code](int from, int count) {
    std::string s;
    for (int i = from + count - 1; i >= from; --i) s += ((code >> i) & 1) ? '1' : '0';
    return s;
  };
  if (!spec.IsFloat()) return bits(0, spec.total_bits);
  std::string text;
  if (spec.has_sign) text = bits(spec.total_bits - 1, 1) + " ";
  text += bits(spec.mantissa_bits, spec.exponent_bits);
  if (spec.mantissa_bits > 0) text += " " + bits(0, spec.mantissa_bits);
  return text;
}

}  // namespace lowbit::tools
