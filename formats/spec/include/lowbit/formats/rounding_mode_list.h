// The single list of rounding modes: the name every tool prints and accepts
// (the CLI's --round, Python's rounding=, the harness's option sets and
// targets) and what the mode does. The other spellings users type (PTX
// .rn / .rz / .rp / .rm, words) are aliases below. Included by policy.h,
// which holds the other encode policies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lowbit {

// X(Id, name, description) for every rounding mode.
#define LOWBIT_ROUNDING_MODES(X)                                                                         \
  X(NearestEven, "rne", "IEEE 754 roundTiesToEven; PTX .rn / .rni")                                      \
  X(NearestAway, "rna", "IEEE 754 roundTiesToAway; C roundf, microxcaling \"nearest\"")                 \
  X(TowardZero, "rtz", "toward zero; PTX .rz / .rzi")                                                    \
  X(Up, "up", "toward +Inf; PTX .rp")                                                                    \
  X(Down, "down", "toward -Inf; PTX .rm")                                                                \
  X(Odd, "odd",                                                                                          \
    "round to odd (\"von Neumann\" / sticky jamming): truncate, then set the last bit if anything was "  \
    "discarded")                                                                                         \
  /* Round to nearest with the other tie rules that kernels write (not IEEE 754 attributes;          */ \
  /* docs/check-your-kernel.md "Ties").                                                               */ \
  X(NearestUp, "rnu", "to nearest, ties toward +Inf: floor(y + 0.5), \"round half up\"")                \
  X(NearestDown, "rnd",                                                                                  \
    "to nearest, ties toward -Inf: argmin over a table sorted ascending, which keeps the first of two "   \
    "equal distances")                                                                                   \
  X(NearestTowardZero, "rnz", "to nearest, ties toward zero: the same argmin over magnitudes, the sign put back after") \
  X(Stochastic, "stochastic", "carry of (discarded bits + caller random bits), PTX cvt.rs")

enum class RoundingMode : std::uint8_t {
#define LOWBIT_ROUNDING_ENUM_ENTRY(Id, name, description) k##Id,
  LOWBIT_ROUNDING_MODES(LOWBIT_ROUNDING_ENUM_ENTRY)
#undef LOWBIT_ROUNDING_ENUM_ENTRY
};

inline constexpr RoundingMode kAllRoundingModes[] = {
#define LOWBIT_ROUNDING_ID_ENTRY(Id, name, description) RoundingMode::k##Id,
    LOWBIT_ROUNDING_MODES(LOWBIT_ROUNDING_ID_ENTRY)
#undef LOWBIT_ROUNDING_ID_ENTRY
};
inline constexpr int kRoundingModeCount = sizeof(kAllRoundingModes) / sizeof(kAllRoundingModes[0]);

// Host only (names are for printing and parsing).
constexpr const char* RoundingModeName(RoundingMode mode) {
  switch (mode) {
#define LOWBIT_ROUNDING_NAME_CASE(Id, name, description) \
  case RoundingMode::k##Id:                              \
    return name;
    LOWBIT_ROUNDING_MODES(LOWBIT_ROUNDING_NAME_CASE)
#undef LOWBIT_ROUNDING_NAME_CASE
  }
  return "?";
}

constexpr const char* RoundingModeDescription(RoundingMode mode) {
  switch (mode) {
#define LOWBIT_ROUNDING_DESCRIPTION_CASE(Id, name, description) \
  case RoundingMode::k##Id:                                     \
    return description;
    LOWBIT_ROUNDING_MODES(LOWBIT_ROUNDING_DESCRIPTION_CASE)
#undef LOWBIT_ROUNDING_DESCRIPTION_CASE
  }
  return "";
}

struct RoundingModeAlias {
  std::string_view alias;
  RoundingMode mode;
};

// The other spellings of each mode: PTX's cvt modifiers (.rn, .rz, .rp, .rm;
// PTX ISA §9.7.9.21) and the words and abbreviations of other tools.
inline constexpr RoundingModeAlias kRoundingModeAliases[] = {
    {"rn", RoundingMode::kNearestEven},          {"nearest-even", RoundingMode::kNearestEven},
    {"nearest-away", RoundingMode::kNearestAway}, {"rz", RoundingMode::kTowardZero},
    {"zero", RoundingMode::kTowardZero},         {"rp", RoundingMode::kUp},
    {"ru", RoundingMode::kUp},                   {"rm", RoundingMode::kDown},
    {"rd", RoundingMode::kDown},                 {"rto", RoundingMode::kOdd},
    {"rs", RoundingMode::kStochastic},           {"nearest-up", RoundingMode::kNearestUp},
    {"nearest-down", RoundingMode::kNearestDown}, {"nearest-zero", RoundingMode::kNearestTowardZero},
};

// Looks a mode up by its name or an alias, ignoring ASCII case; false if
// unknown.
constexpr bool FindRoundingMode(std::string_view text, RoundingMode* out) {
  const auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
      if (c != b[i]) return false;
    }
    return true;
  };
  for (RoundingMode mode : kAllRoundingModes) {
    if (same(text, RoundingModeName(mode))) {
      *out = mode;
      return true;
    }
  }
  for (const RoundingModeAlias& a : kRoundingModeAliases) {
    if (same(text, a.alias)) {
      *out = a.mode;
      return true;
    }
  }
  return false;
}

}  // namespace lowbit
