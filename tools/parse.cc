// Command-line words to model types; errors name the offending word.
#include "parse.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include "commands.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/user_word.h"

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

recipe::Target ParseRecipeOrThrow(const std::string& name) {
  recipe::Target t;
  std::string error;
  if (!recipe::ParseTarget(name, &t, &error)) throw CommandError(error + " (lowbit list recipes)");
  if (t.kind == recipe::Target::Kind::kRecipe) return t;
  std::string recipes;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (std::string(r.name) == Spec(t.format).name) recipes += (recipes.empty() ? "" : ", ") + recipe::RecipeName(r);
  }
  throw CommandError(QuoteUserWord(name) + " names a format, not a recipe" +
                     (recipes.empty() ? std::string(" (lowbit list recipes)") : " (its recipes: " + recipes + ")"));
}

std::uint64_t ParseCode(const FormatSpec& spec, const std::string& text) {
  const std::string s = Lower(text);
  const std::string shown = QuoteUserWord(text);
  int base = 10;
  std::size_t start = 0;
  if (s.rfind("0x", 0) == 0) {
    base = 16;
    start = 2;
  } else if (s.rfind("0b", 0) == 0) {
    base = 2;
    start = 2;
  }
  const auto malformed = [&shown] {
    return CommandError("malformed code " + shown + " (expected hex 0x7e, binary 0b01111110 or decimal 126)");
  };
  // Digit separators (0b0_1111_110, 1'000) only between digits: "_" alone,
  // "0x_" or "7_" name no code.
  if (start == s.size() || s[start] == '_' || s[start] == '\'' || s.back() == '_' || s.back() == '\'') {
    throw malformed();
  }
  std::uint64_t value = 0;
  for (std::size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' || c == '\'') continue;
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0 || digit >= base) throw malformed();
    if (value > (~std::uint64_t{0} - static_cast<std::uint64_t>(digit)) / static_cast<std::uint64_t>(base)) {
      throw CommandError("code " + shown + " out of range for " + spec.name);
    }
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  if (value > spec.CodeMask()) {
    throw CommandError("code " + shown + " out of range for " + spec.name + " (" +
                       std::to_string(spec.total_bits) + " bits, max " + Hex(spec.CodeMask()) +
                       ")");
  }
  return value;
}

std::uint64_t ParseUnsigned(const std::string& text, std::uint64_t max, const std::string& what) {
  const std::string s = Lower(text);
  const auto refuse = [&] {
    return CommandError(what + " " + QuoteUserWord(text) + ": expected a whole number from 0 to " +
                        std::to_string(max) + " (decimal, or hex 0x..)");
  };
  const bool hex = s.rfind("0x", 0) == 0;
  const std::size_t start = hex ? 2 : 0;
  if (start == s.size()) throw refuse();
  const std::uint64_t base = hex ? 16 : 10;
  std::uint64_t value = 0;
  for (std::size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    std::uint64_t digit = 16;
    if (c >= '0' && c <= '9') digit = static_cast<std::uint64_t>(c - '0');
    if (hex && c >= 'a' && c <= 'f') digit = static_cast<std::uint64_t>(c - 'a' + 10);
    if (digit >= base) throw refuse();
    if (value > (max - digit) / base) throw refuse();  // value * base + digit > max
    value = value * base + digit;
  }
  return value;
}

RoundingMode ParseRoundingMode(const std::string& name) {
  RoundingMode mode{};
  if (FindRoundingMode(name, &mode)) return mode;
  std::string known;
  for (RoundingMode m : kAllRoundingModes) known += (known.empty() ? "" : ", ") + std::string(RoundingModeName(m));
  throw CommandError("unknown rounding mode " + QuoteUserWord(name) + " (known: " + known + ")");
}

const std::vector<std::string>& RoundingModeSpellings() {
  static const std::vector<std::string> spellings = [] {
    std::vector<std::string> v;
    for (RoundingMode m : kAllRoundingModes) v.push_back(RoundingModeName(m));
    for (const RoundingModeAlias& a : kRoundingModeAliases) v.emplace_back(a.alias);
    return v;
  }();
  return spellings;
}

CLI::Validator GrammarValidator(std::string description, void (*parse)(const std::string&)) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
        } catch (const CommandError& e) {
          return e.what();
        }
        return std::string();
      },
      std::move(description));
}

std::string Hex(std::uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace lowbit::tools
