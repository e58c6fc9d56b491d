// How many cases a RapidCheck property draws at each test level
// (test_level.h), with a fixed seed so that ci runs are reproducible.
// RC_PARAMS still wins: "RC_PARAMS='seed=123 max_success=10000'" overrides
// both the count and the seed.
#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

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
  using namespace rc::detail;
  const char* env = std::getenv("RC_PARAMS");
  const std::string params_text = env ? env : "";
  TestParams params = configuration().testParams;
  if (params_text.find("max_success") == std::string::npos) params.maxSuccess = CountAtLevel(counts);
  if (params_text.find("seed") == std::string::npos) params.seed = 0x10b175eedULL;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const TestResult result = checkTestable(std::forward<Property>(property), metadata, params);
  if (!result.template is<SuccessResult>()) {
    std::ostringstream message;
    printResultMessage(result, message);
    FAIL() << message.str();
  }
  // A property that never ran its body would pass vacuously.
  const SuccessResult success = result.template get<SuccessResult>();
  EXPECT_EQ(success.numSuccess, params.maxSuccess);
}

}  // namespace lowbit::testing
