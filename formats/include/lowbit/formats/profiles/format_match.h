// Which listed format a FormatSpec is, by layout (not by address, so a copy of
// a spec, and device code that may not take the address of a namespace-scope
// constexpr object, both work). Profiles decide per format.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"

namespace lowbit::profile_detail {

// Every layout field packed into one integer, so that identifying a format
// is a few integer compares (the 2^32 sweeps call this per input).
LOWBIT_HD_CONSTEXPR std::uint64_t LayoutKey(const FormatSpec& f) {
  return static_cast<std::uint64_t>(f.kind) | static_cast<std::uint64_t>(f.total_bits & 0x7F) << 8 |
         static_cast<std::uint64_t>(f.has_sign) << 15 |
         static_cast<std::uint64_t>(f.exponent_bits & 0xFF) << 16 |
         static_cast<std::uint64_t>(f.mantissa_bits & 0xFF) << 24 |
         static_cast<std::uint64_t>(f.bias & 0xFFFF) << 32 |
         static_cast<std::uint64_t>(f.has_subnormals) << 48 |
         static_cast<std::uint64_t>(f.specials) << 52;
}

LOWBIT_HD_CONSTEXPR bool SameLayout(const FormatSpec& a, const FormatSpec& b) {
  return LayoutKey(a) == LayoutKey(b);
}

// false when the spec is none of LOWBIT_FORMATS (a profile then has no
// conversion for it).
LOWBIT_HD_CONSTEXPR bool IdentifyFormat(const FormatSpec& spec, FormatId* out) {
  const std::uint64_t key = LayoutKey(spec);
#define LOWBIT_PROFILE_MATCH(Id, listed)                     \
  {                                                          \
    constexpr std::uint64_t kCandidate = LayoutKey(listed);  \
    if (key == kCandidate) {                                 \
      *out = FormatId::k##Id;                                \
      return true;                                           \
    }                                                        \
  }
  LOWBIT_FORMATS(LOWBIT_PROFILE_MATCH)
#undef LOWBIT_PROFILE_MATCH
  return false;
}

// True for the IEEE-style rounding modes a C/C++ library or cvt can select.
LOWBIT_HD_CONSTEXPR bool IsIeeeDirectedOrNearest(RoundingMode mode) {
  return mode == RoundingMode::kNearestEven || mode == RoundingMode::kTowardZero ||
         mode == RoundingMode::kUp || mode == RoundingMode::kDown;
}

}  // namespace lowbit::profile_detail
