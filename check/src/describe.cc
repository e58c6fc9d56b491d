#include "describe.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "lowbit/formats/convert.h"

namespace lowbit::check::internal {

std::string Hex(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

std::string ValueText(const FormatSpec& spec, std::uint64_t code) {
  const double x = DecodeToF64(spec, code & spec.CodeMask());
  if (std::isnan(x)) return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buffer[40];
  int digits = 1;
  for (; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
    if (std::strtod(buffer, nullptr) == x) break;
  }
  // The fewest digits that round-trip can still print a whole number in
  // exponent form (-10 as "-1e+01", 500 as "5e+02"): %g switches to fixed
  // notation when the decimal exponent is below the precision (C11 7.21.6.1),
  // so whole numbers below 10^17 get as many digits as they have.
  if (x != 0 && digits <= 17) {
    const int exponent10 = static_cast<int>(std::floor(std::log10(std::fabs(x))));
    if (exponent10 >= digits && exponent10 < 17) {
      std::snprintf(buffer, sizeof buffer, "%.*g", exponent10 + 1, x);
    }
  }
  return buffer;
}

namespace {

// The position of a non-NaN code in value order.
std::int64_t Ordinal(const FormatSpec& spec, std::uint64_t code) {
  code &= spec.CodeMask();
  if (!spec.IsFloat()) {
    if (!spec.has_sign || (code & spec.SignBit()) == 0) return static_cast<std::int64_t>(code);
    return static_cast<std::int64_t>(code) - static_cast<std::int64_t>(spec.CodeMask()) - 1;
  }
  const std::int64_t magnitude = static_cast<std::int64_t>(code & ~spec.SignBit());
  return (code & spec.SignBit()) != 0 ? -magnitude : magnitude;
}

}  // namespace

std::optional<std::uint64_t> CodeDistance(const FormatSpec& spec, std::uint64_t a,
                                          std::uint64_t b) {
  if (std::isnan(DecodeToF64(spec, a & spec.CodeMask())) ||
      std::isnan(DecodeToF64(spec, b & spec.CodeMask()))) {
    return std::nullopt;
  }
  const std::int64_t d = Ordinal(spec, a) - Ordinal(spec, b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

Mismatch ElementMismatch(const std::string& combo, const FormatSpec& in, std::uint64_t input,
                         const FormatSpec& out, std::uint64_t expected, std::uint64_t actual) {
  Mismatch m;
  m.combo = combo;
  m.input = input;
  m.input_format = in.name;
  m.input_value = ValueText(in, input);
  m.output_format = out.name;
  m.expected = expected;
  m.expected_value = ValueText(out, expected);
  m.actual = actual;
  // A kernel may write bits above the format's width: show them, but decode
  // and order the code they carry.
  m.actual_value = (actual & ~out.CodeMask()) != 0 ? "(bits above the format's width)"
                                                   : ValueText(out, actual);
  if ((actual & ~out.CodeMask()) == 0) m.code_distance = CodeDistance(out, expected, actual);
  return m;
}

void AddMismatch(Row* row, Mismatch mismatch) {
  ++row->mismatches;
  if (row->first_mismatches.size() < kMaxMismatchesPerRow) {
    row->first_mismatches.push_back(std::move(mismatch));
  }
}

}  // namespace lowbit::check::internal
