// Decimal / hex-float text to an exact rational, then to a rounded-to-odd
// Unpacked (value_parse.h says why that is exact enough).
#include "value_parse.h"

#include <algorithm>
#include <cctype>

#include <boost/multiprecision/cpp_int.hpp>

#include "commands.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::tools {
namespace {

using boost::multiprecision::cpp_int;

// Values beyond 10^±400 (2^±1400 for hex) lie past FP64's whole range,
// subnormals included; every such value rounds like the clamp, so clamping
// keeps the big integers small.
constexpr long kDecimalClamp = 400;
constexpr long kBinaryClamp = 1400;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int BitLength(const cpp_int& x) {
  return x == 0 ? 0 : static_cast<int>(boost::multiprecision::msb(x)) + 1;
}

// num / den * 2^exp2 (num, den > 0) rounded to odd at 62 bits.
Unpacked RoundToOdd(bool negative, const cpp_int& num, const cpp_int& den, long exp2) {
  const int s = 61 - (BitLength(num) - BitLength(den));
  cpp_int q;
  cpp_int r;
  if (s >= 0) {
    boost::multiprecision::divide_qr(cpp_int(num << s), den, q, r);
  } else {
    boost::multiprecision::divide_qr(num, cpp_int(den << -s), q, r);
  }
  Unpacked u;
  u.value_class = ValueClass::kFinite;
  u.negative = negative;
  u.significand = static_cast<std::uint64_t>(q);
  if (r != 0) u.significand |= 1;
  u.exponent = static_cast<int>(exp2 - s);
  return u;
}

// Reads [digits][.digits] in `base`; returns the digits as an integer and
// counts the fraction digits. false if there are no digits at all.
bool ReadMantissa(const std::string& s, std::size_t* pos, int base, cpp_int* mantissa,
                  long* fraction_digits) {
  bool any = false;
  bool in_fraction = false;
  *fraction_digits = 0;
  for (; *pos < s.size(); ++*pos) {
    const char c = s[*pos];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    const int digit = HexDigit(c);
    if (digit < 0 || digit >= base) break;
    *mantissa = *mantissa * base + digit;
    if (in_fraction) ++*fraction_digits;
    any = true;
  }
  return any;
}

// [+-]digits after an exponent marker; clamped to +-10^6 (far past any clamp).
bool ReadExponent(const std::string& s, std::size_t* pos, long* exponent) {
  bool negative = false;
  if (*pos < s.size() && (s[*pos] == '+' || s[*pos] == '-')) negative = s[(*pos)++] == '-';
  bool any = false;
  long value = 0;
  for (; *pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos])); ++*pos) {
    value = std::min(value * 10 + (s[*pos] - '0'), 1000000L);
    any = true;
  }
  *exponent = negative ? -value : value;
  return any;
}

}  // namespace

Unpacked ParseExactValue(const std::string& text) {
  const auto malformed = [&text] {
    return CommandError("malformed value " + QuoteUserWord(text) +
                        " (expected a decimal like 0.25 or 1e-3, a hex float like 0x1.cp+8, "
                        "inf or nan)");
  };
  if (text.size() > kMaxValueLength) {
    throw CommandError("value too long (over " + std::to_string(kMaxValueLength) + " characters): " +
                       QuoteUserWord(text));
  }
  // Surrounding blanks are no part of the number (main.cc puts one before
  // "-inf" / "-nan" to keep CLI11 from reading them as options).
  const std::size_t first = text.find_first_not_of(" \t");
  const std::size_t last = text.find_last_not_of(" \t");
  std::string s = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  Unpacked parsed;
  std::size_t pos = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) parsed.negative = s[pos++] == '-';
  const std::string rest = s.substr(pos);
  if (rest == "inf" || rest == "infinity") {
    parsed.value_class = ValueClass::kInf;
    return parsed;
  }
  if (rest == "nan") {
    parsed.value_class = ValueClass::kNan;
    parsed.nan_payload = std::uint64_t{1} << 63;  // a quiet NaN
    return parsed;
  }
  const bool hex = rest.rfind("0x", 0) == 0;
  if (hex) pos += 2;
  cpp_int mantissa = 0;
  long fraction_digits = 0;
  if (!ReadMantissa(s, &pos, hex ? 16 : 10, &mantissa, &fraction_digits)) throw malformed();
  long exponent = 0;
  if (pos < s.size() && s[pos] == (hex ? 'p' : 'e')) {
    ++pos;
    if (!ReadExponent(s, &pos, &exponent)) throw malformed();
  }
  if (pos != s.size()) throw malformed();
  if (mantissa == 0) {
    parsed.value_class = ValueClass::kZero;
    return parsed;
  }
  if (hex) {
    long exp2 = exponent - 4 * fraction_digits;
    const long magnitude = BitLength(mantissa) + exp2;
    if (magnitude > kBinaryClamp || magnitude < -kBinaryClamp) {
      mantissa = 1;
      exp2 = magnitude > 0 ? kBinaryClamp : -kBinaryClamp;
    }
    parsed = RoundToOdd(parsed.negative, mantissa, 1, exp2);
    return parsed;
  }
  long exp10 = exponent - fraction_digits;
  const long magnitude = static_cast<long>(mantissa.str().size()) + exp10;
  if (magnitude > kDecimalClamp || magnitude < -kDecimalClamp) {
    mantissa = 1;
    exp10 = magnitude > 0 ? kDecimalClamp : -kDecimalClamp;
  }
  // 10^e = 2^e * 5^e: the power of two goes into the exponent.
  const cpp_int five_power = boost::multiprecision::pow(cpp_int(5), static_cast<unsigned>(std::labs(exp10)));
  if (exp10 >= 0) {
    parsed = RoundToOdd(parsed.negative, mantissa * five_power, 1, exp10);
  } else {
    parsed = RoundToOdd(parsed.negative, mantissa, five_power, exp10);
  }
  return parsed;
}

}  // namespace lowbit::tools
