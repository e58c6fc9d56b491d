// Runs a RapidCheck property as the current GoogleTest test (like
// RC_GTEST_PROP, without needing rapidcheck's gtest extra), with a given
// number of cases and a fixed seed so that a failure reproduces; RC_PARAMS
// still wins ("RC_PARAMS='seed=123 max_success=10000'"). A property whose
// body never ran (every case discarded) fails: it would pass vacuously
// (docs/design.md "Tests").
//
//   TEST(MyKernel, MatchesTheModel) {
//     lowbit::testing::CheckProperty(500, [] { ... *lowbit::testing::Matrices(recipe) ... });
//   }
#pragma once

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace lowbit::testing {

inline constexpr std::uint64_t kDefaultPropertySeed = 0x10b175eedULL;

template <typename Property>
void CheckProperty(int cases, Property&& property, std::uint64_t seed = kDefaultPropertySeed) {
  using namespace rc::detail;
  const char* env = std::getenv("RC_PARAMS");
  const std::string params_text = env ? env : "";
  TestParams params = configuration().testParams;
  if (params_text.find("max_success") == std::string::npos) params.maxSuccess = cases;
  if (params_text.find("seed") == std::string::npos) params.seed = seed;
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
  const SuccessResult success = result.template get<SuccessResult>();
  EXPECT_EQ(success.numSuccess, params.maxSuccess);
}

}  // namespace lowbit::testing
