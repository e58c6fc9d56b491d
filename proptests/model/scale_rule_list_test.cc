// The list of scale rules (formats/spec/.../recipe/scale_rule_list.h): every
// row has a name of its own and a formula, and the family its row states is
// the one every catalog recipe of the rule stores its scales in (an E8M0
// byte for mx, a UE4M3 byte for nvfp4, an FP32 value for scaled), so a row
// with the wrong family fails here whatever its place in the list.
#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/scale_rule_list.h"

namespace lowbit::recipe {
namespace {

// The family a recipe's stored scale format implies (recipe.h
// Recipe::scale_format: kE8m0 MX, kUe4m3 NVFP4, kFp32 / kFp16 scaled).
Family FamilyOfScaleFormat(const FormatSpec& scale_format) {
  if (std::string_view(scale_format.name) == "e8m0") return Family::kMx;
  if (std::string_view(scale_format.name) == "ue4m3") return Family::kNvfp4;
  return Family::kScaled;
}

TEST(ScaleRuleList, EveryRuleHasItsOwnNameAndAFormula) {
  std::set<std::string> names;
  for (ScaleRule rule : kAllScaleRules) {
    const std::string name = ScaleRuleName(rule);
    EXPECT_FALSE(name.empty() || name == "?") << static_cast<int>(rule);
    EXPECT_TRUE(names.insert(name).second) << "two rules named " << name;
    EXPECT_GT(std::string_view(ScaleRuleFormula(rule)).size(), 10u) << name;
    ScaleRule found{};
    ASSERT_TRUE(FindScaleRule(name, &found)) << name;
    EXPECT_EQ(found, rule) << name;
  }
  ScaleRule unused{};
  EXPECT_FALSE(FindScaleRule("floor", &unused));
  EXPECT_FALSE(FindScaleRule("", &unused));
}

TEST(ScaleRuleList, FamilyOfEveryCatalogRecipeMatchesItsScaleFormat) {
  for (const Recipe& r : kAllRecipes) {
    EXPECT_EQ(FamilyName(r.family()), std::string(FamilyName(FamilyOfScaleFormat(r.scale_format))))
        << RecipeName(r) << ": rule " << ScaleRuleName(r.scale_rule) << ", scale format " << r.scale_format.name;
  }
}

TEST(ScaleRuleList, EveryRuleHasACatalogRecipe) {
  for (ScaleRule rule : kAllScaleRules) {
    bool used = false;
    for (const Recipe& r : kAllRecipes) used = used || r.scale_rule == rule;
    EXPECT_TRUE(used) << ScaleRuleName(rule) << " is in the list but no catalog recipe uses it";
  }
}

// The names the tools print, typed here from the earlier hand-written
// tables (Python's Recipe.scale_rule), so a renamed row is noticed.
TEST(ScaleRuleList, NamesAreThePrintedOnes) {
  EXPECT_STREQ(ScaleRuleName(ScaleRule::kMxFloor), "mx-floor");
  EXPECT_STREQ(ScaleRuleName(ScaleRule::kMxRceilEager), "mx-rceil-eager");
  EXPECT_STREQ(ScaleRuleName(ScaleRule::kNvfp4Torchao018), "nvfp4-torchao-0.18");
  EXPECT_STREQ(ScaleRuleName(ScaleRule::kAmaxOverQmaxFloored), "amax-clamp-over-qmax");
  EXPECT_STREQ(ScaleRuleName(ScaleRule::kVllmFp8KvCalculated), "vllm-fp8-kv-calculated");
  EXPECT_STREQ(FamilyName(Family::kMx), "mx");
  EXPECT_STREQ(FamilyName(Family::kNvfp4), "nvfp4");
  EXPECT_STREQ(FamilyName(Family::kScaled), "scaled");
}

}  // namespace
}  // namespace lowbit::recipe
