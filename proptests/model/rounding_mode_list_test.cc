// The list of rounding modes (formats/spec/.../rounding_mode_list.h): the
// names the CLI, Python and the harness print, the aliases they accept, and
// the lookup every one of them calls.
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "lowbit/formats/policy.h"

namespace lowbit {
namespace {

TEST(RoundingModeList, NamesInOrder) {
  // The list the CLI's and Python's "unknown rounding mode" message gives,
  // typed from the earlier hand-written message.
  std::string names;
  for (RoundingMode mode : kAllRoundingModes) names += (names.empty() ? "" : ", ") + std::string(RoundingModeName(mode));
  EXPECT_EQ(names, "rne, rna, rtz, up, down, odd, rnu, rnd, rnz, stochastic");
}

TEST(RoundingModeList, EverySpellingIsUniqueAndFindsItsMode) {
  std::set<std::string> spellings;
  for (RoundingMode mode : kAllRoundingModes) {
    EXPECT_TRUE(spellings.insert(RoundingModeName(mode)).second) << RoundingModeName(mode);
    EXPECT_FALSE(std::string_view(RoundingModeDescription(mode)).empty()) << RoundingModeName(mode);
    RoundingMode found{};
    ASSERT_TRUE(FindRoundingMode(RoundingModeName(mode), &found));
    EXPECT_EQ(found, mode);
  }
  for (const RoundingModeAlias& a : kRoundingModeAliases) {
    EXPECT_TRUE(spellings.insert(std::string(a.alias)).second) << a.alias;
    RoundingMode found{};
    ASSERT_TRUE(FindRoundingMode(a.alias, &found)) << a.alias;
    EXPECT_EQ(found, a.mode) << a.alias;
  }
}

TEST(RoundingModeList, PtxSpellingsAndCase) {
  RoundingMode m{};
  ASSERT_TRUE(FindRoundingMode("rn", &m));
  EXPECT_EQ(m, RoundingMode::kNearestEven);
  ASSERT_TRUE(FindRoundingMode("rz", &m));
  EXPECT_EQ(m, RoundingMode::kTowardZero);
  ASSERT_TRUE(FindRoundingMode("rp", &m));
  EXPECT_EQ(m, RoundingMode::kUp);
  ASSERT_TRUE(FindRoundingMode("rm", &m));
  EXPECT_EQ(m, RoundingMode::kDown);
  ASSERT_TRUE(FindRoundingMode("RTZ", &m));
  EXPECT_EQ(m, RoundingMode::kTowardZero);
  EXPECT_FALSE(FindRoundingMode("", &m));
  EXPECT_FALSE(FindRoundingMode("rne ", &m));
  EXPECT_FALSE(FindRoundingMode("nearest", &m));
}

}  // namespace
}  // namespace lowbit
