// The spec of a format as a compile-time value usable in device code (a
// reference to the namespace-scope kE4m3 etc. is not: CUDA C++ Programming
// Guide, "constexpr variables"). Spec(id) itself cannot be called from device
// code: its body names them.
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::cuda::detail {

template <FormatId kId>
LOWBIT_HD_CONSTEXPR FormatSpec SpecValue() {
#define LOWBIT_SPEC_VALUE(Id, spec)       \
  if constexpr (kId == FormatId::k##Id) { \
    constexpr FormatSpec kSpec = spec;    \
    return kSpec;                         \
  } else
  LOWBIT_FORMATS(LOWBIT_SPEC_VALUE)
#undef LOWBIT_SPEC_VALUE
  {
    return FormatSpec{};
  }
}

// Whether `spec` is the listed format kId (by layout: a recipe carries its
// element by value).
template <FormatId kId>
LOWBIT_HD_CONSTEXPR bool IsFormat(const FormatSpec& spec) {
  return profile_detail::SameLayout(spec, SpecValue<kId>());
}

// The listed format a spec is (by layout); kFp64 for none, which no caller
// here passes (a recipe's element is always listed).
LOWBIT_HD_CONSTEXPR FormatId FormatIdOf(const FormatSpec& spec) {
  FormatId id = FormatId::kFp64;
  profile_detail::IdentifyFormat(spec, &id);
  return id;
}

}  // namespace lowbit::cuda::detail
