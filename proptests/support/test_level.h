// One test level switch (docs/design.md "Tests"): LOWBIT_TEST_LEVEL=smoke|ci|full, default
// ci. Exhaustive 2^32 sweeps run in full; ci runs a fixed strided sample that
// still covers every exponent and every rounding class.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace lowbit::testing {

enum class TestLevel { kSmoke, kCi, kFull };

// Any other value is a typo ("fulll") that would otherwise run as ci and
// pass green: the test program stops at once with exit status 2, naming the
// valid levels. Unset or empty means ci.
inline TestLevel CurrentTestLevel() {
  const char* env = std::getenv("LOWBIT_TEST_LEVEL");
  const std::string_view level = env != nullptr && *env != '\0' ? env : "ci";
  if (level == "smoke") return TestLevel::kSmoke;
  if (level == "ci") return TestLevel::kCi;
  if (level == "full") return TestLevel::kFull;
  std::fprintf(stderr, "LOWBIT_TEST_LEVEL=%s: unknown test level (valid levels: smoke, ci, full)\n", env);
  std::fflush(stderr);
  std::_Exit(2);
}

}  // namespace lowbit::testing
