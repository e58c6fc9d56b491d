// An FP32 function against the model's, compared as bits on the patterns of
// the current test level (test_level.h): every one of the 2^32 patterns at
// full; at ci the test's own targeted patterns and a strided sample (every
// 65521st pattern, every exponent and sign); at smoke the sample alone. Used
// by the alternatives whose domain is one FP32 input.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "test_level.h"

namespace lowbit::testing {

// same(bits) is true when the function and the model agree on the pattern;
// targeted(check) calls check(bits) on the test's targeted patterns. Fails
// with the first differing pattern, and when fewer than 65,000 patterns were
// checked (a sweep that checked nothing must not pass).
template <class Same, class Targeted>
void ExpectSameOnF32Patterns(const Same& same, const Targeted& targeted) {
  const TestLevel level = CurrentTestLevel();
  std::uint64_t checked = 0, wrong = 0;
  std::uint32_t first_wrong = 0;
  const auto check = [&](std::uint32_t bits) {
    ++checked;
    if (!same(bits) && wrong++ == 0) first_wrong = bits;
  };
  if (level == TestLevel::kFull) {
    for (std::uint64_t p = 0; p < (std::uint64_t{1} << 32); ++p) check(static_cast<std::uint32_t>(p));
  } else {
    if (level != TestLevel::kSmoke) targeted(check);
    for (std::uint64_t p = 0; p < (std::uint64_t{1} << 32); p += 65521) check(static_cast<std::uint32_t>(p));
  }
  EXPECT_EQ(wrong, 0u) << "first differing pattern 0x" << std::hex << first_wrong;
  EXPECT_GT(checked, 65000u);
}

}  // namespace lowbit::testing
