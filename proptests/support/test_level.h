// One test level switch (docs/design.md "Tests"): LOWBIT_TEST_LEVEL=smoke|ci|full, default
// ci. Exhaustive 2^32 sweeps run in full; ci runs a fixed strided sample that
// still covers every exponent and every rounding class.
#pragma once

#include <cstdlib>
#include <string_view>

namespace lowbit::testing {

enum class TestLevel { kSmoke, kCi, kFull };

inline TestLevel CurrentTestLevel() {
  const char* env = std::getenv("LOWBIT_TEST_LEVEL");
  const std::string_view level = env ? env : "ci";
  if (level == "smoke") return TestLevel::kSmoke;
  if (level == "full") return TestLevel::kFull;
  return TestLevel::kCi;
}

}  // namespace lowbit::testing
