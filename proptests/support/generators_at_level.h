// How many cases a RapidCheck property draws at each test level
// (test_level.h), with a fixed seed so that ci runs are reproducible.
// RC_PARAMS still wins: "RC_PARAMS='seed=123 max_success=10000'" overrides
// both the count and the seed. The runner itself is lowbit::testing's
// public CheckProperty (testing/include/lowbit/testing/property.h).
#pragma once

#include <utility>

#include "lowbit/testing/property.h"
#include "test_level.h"

namespace lowbit::testing {

// Draws per property: smoke / ci / full.
struct LevelCounts {
  int smoke;
  int ci;
  int full;
};

inline int CountAtLevel(LevelCounts counts) {
  switch (CurrentTestLevel()) {
    case TestLevel::kSmoke: return counts.smoke;
    case TestLevel::kCi: return counts.ci;
    case TestLevel::kFull: return counts.full;
  }
  return counts.ci;
}

// Runs `property` as the current gtest test (like RC_GTEST_PROP) with the
// level's count and a fixed seed unless RC_PARAMS names them.
template <typename Property>
void CheckAtLevel(LevelCounts counts, Property&& property) {
  CheckProperty(CountAtLevel(counts), std::forward<Property>(property));
}

}  // namespace lowbit::testing
