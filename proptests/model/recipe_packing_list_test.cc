// The list of recipe packings (formats/spec/.../recipe/recipe.h
// LOWBIT_PACKINGS): the names Python's Recipe.packing prints and
// lowbit.testing's packing= accepts, and the lookup both call.
#include <string>

#include <gtest/gtest.h>

#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {
namespace {

TEST(RecipePackingList, NamesInOrderAndFound) {
  // Typed from the earlier hand-written Python tables.
  std::string names;
  for (Packing p : kAllPackings) names += (names.empty() ? "" : ", ") + std::string(PackingName(p));
  EXPECT_EQ(names, "one-per-byte, nibbles-low-first, nibbles-high-first");
  for (Packing p : kAllPackings) {
    Packing found{};
    ASSERT_TRUE(FindPacking(PackingName(p), &found)) << PackingName(p);
    EXPECT_EQ(found, p);
  }
  Packing unused{};
  EXPECT_FALSE(FindPacking("low-first", &unused));
  EXPECT_FALSE(FindPacking("", &unused));
}

}  // namespace
}  // namespace lowbit::recipe
