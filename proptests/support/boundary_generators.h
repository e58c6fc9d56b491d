// The boundary-biased value generators are lowbit::testing's public ones
// (testing/include/lowbit/testing/value_generators.h); this adds what only
// lowbit's own model-vs-oracle tests need.
#pragma once

#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/testing/value_generators.h"

namespace lowbit::testing {

// Destinations the oracle encodes into (formats of at most 16 bits).
inline std::vector<FormatId> OracleDestinations() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits <= 16) v.push_back(id);
  }
  return v;
}

}  // namespace lowbit::testing
