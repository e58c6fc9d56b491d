// Command-line words to model types; errors name the offending word.
#include "parse.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "commands.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::tools {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}


}  // namespace

// Format words go through the one grammar (formats/.../recipe/names.h).
FormatId ParseFormat(const std::string& name) {
  FormatId id{};
  std::string error;
  if (!recipe::ParseFormatName(Lower(name), &id, &error)) throw CommandError(error);
  return id;
}

std::uint64_t ParseCode(const FormatSpec& spec, const std::string& text) {
  const std::string s = Lower(text);
  int base = 10;
  std::size_t start = 0;
  if (s.rfind("0x", 0) == 0) {
    base = 16;
    start = 2;
  } else if (s.rfind("0b", 0) == 0) {
    base = 2;
    start = 2;
  }
  if (start == s.size()) throw CommandError("malformed code '" + text + "'");
  std::uint64_t value = 0;
  for (std::size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' || c == '\'') continue;  // digit separators: 0b0_1111_110
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0 || digit >= base) {
      throw CommandError("malformed code '" + text + "' (expected hex 0x.., binary 0b.. or decimal)");
    }
    if (value > (~std::uint64_t{0} - static_cast<std::uint64_t>(digit)) / static_cast<std::uint64_t>(base)) {
      throw CommandError("code '" + text + "' out of range for " + spec.name);
    }
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  if (value > spec.CodeMask()) {
    throw CommandError("code '" + text + "' out of range for " + spec.name + " (" +
                       std::to_string(spec.total_bits) + " bits, max " + Hex(spec.CodeMask()) +
                       ")");
  }
  return value;
}

RoundingMode ParseRoundingMode(const std::string& name) {
  const std::string s = Lower(name);
  if (s == "rne" || s == "rn" || s == "nearest-even") return RoundingMode::kNearestEven;
  if (s == "rna" || s == "nearest-away") return RoundingMode::kNearestAway;
  if (s == "rtz" || s == "rz" || s == "zero") return RoundingMode::kTowardZero;
  if (s == "up" || s == "rp" || s == "ru") return RoundingMode::kUp;
  if (s == "down" || s == "rm" || s == "rd") return RoundingMode::kDown;
  if (s == "odd" || s == "rto") return RoundingMode::kOdd;
  if (s == "stochastic" || s == "rs") return RoundingMode::kStochastic;
  throw CommandError("unknown rounding mode '" + name +
                     "' (known: rne, rna, rtz, up, down, odd, stochastic)");
}

const char* RoundingModeName(RoundingMode mode) {
  switch (mode) {
    case RoundingMode::kNearestEven:
      return "rne";
    case RoundingMode::kNearestAway:
      return "rna";
    case RoundingMode::kTowardZero:
      return "rtz";
    case RoundingMode::kUp:
      return "up";
    case RoundingMode::kDown:
      return "down";
    case RoundingMode::kOdd:
      return "odd";
    case RoundingMode::kStochastic:
      return "stochastic";
  }
  return "?";
}

std::string Hex(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace lowbit::tools
