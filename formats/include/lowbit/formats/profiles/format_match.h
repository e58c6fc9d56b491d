// Which listed format a FormatSpec is, by layout (not by address, so a copy of
// a spec, and device code that may not take the address of a namespace-scope
// constexpr object, both work). Profiles decide per format.
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"

namespace lowbit::profile_detail {

LOWBIT_HD_CONSTEXPR bool SameLayout(const FormatSpec& a, const FormatSpec& b) {
  return a.kind == b.kind && a.total_bits == b.total_bits && a.has_sign == b.has_sign &&
         a.exponent_bits == b.exponent_bits && a.mantissa_bits == b.mantissa_bits &&
         a.bias == b.bias && a.has_subnormals == b.has_subnormals &&
         a.specials == b.specials;
}

// false when the spec is none of LOWBIT_FORMATS (a profile then has no
// conversion for it).
LOWBIT_HD_CONSTEXPR bool IdentifyFormat(const FormatSpec& spec, FormatId* out) {
#define LOWBIT_PROFILE_MATCH(Id, listed)  \
  {                                       \
    constexpr FormatSpec kCandidate = listed; \
    if (SameLayout(spec, kCandidate)) {   \
      *out = FormatId::k##Id;             \
      return true;                        \
    }                                     \
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
