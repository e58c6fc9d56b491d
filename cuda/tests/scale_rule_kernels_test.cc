// The GPU's row of every scale rule (cuda/include/lowbit/cuda/scale_rule_kernels.h) against
// the registry's "cuda" recipe rows: a rule given to the model recipe
// kernels has rows for every catalog recipe of the rule, both ways, in every
// listed layout that applies; a tuned rule has rows for at least one of its
// recipes; a rule with no GPU kernel has none. A rule missing from the list
// does not compile (the header's static_assert); this test says which
// recipe lost its row. Host code, no GPU needed: the rows are registered
// without one, as unavailable.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lowbit/cuda/register.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/recipe_contract.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"
#include "lowbit/cuda/scale_rule_kernels.h"

namespace lowbit::cuda::detail {
namespace {

using Row = std::pair<registry::RecipeOperation, std::string>;

const std::set<Row>& CudaRows() {
  static const std::set<Row> rows = [] {
    registry::Registry reg;
    registry::RegisterScalarBackend(reg);
    registry::RegisterCudaBackends(reg);
    std::set<Row> r;
    for (const registry::RecipeEntry& e : reg.RecipeEntries()) {
      if (e.backend == "cuda") r.insert({e.operation, e.recipe});
    }
    return r;
  }();
  return rows;
}

// The row names of a catalog recipe in its listed layouts (AllRecipeNames:
// MX and NVFP4 in their block, scaled recipes in kListedScaledLayouts).
std::vector<std::string> ListedRowNames(const recipe::Recipe& r) {
  if (r.family() != recipe::Family::kScaled) return {recipe::RecipeName(r)};
  std::vector<std::string> names;
  for (const recipe::Layout& l : registry::kListedScaledLayouts) {
    if (recipe::LayoutApplies(r, l)) names.push_back(recipe::RecipeName(r) + "/" + recipe::LayoutName(l));
  }
  return names;
}

constexpr registry::RecipeOperation kOperations[] = {registry::RecipeOperation::kQuantizeRecipe,
                                                     registry::RecipeOperation::kDequantizeRecipe};

TEST(ScaleRuleKernels, EveryRuleHasOneRow) {
  for (recipe::ScaleRule rule : recipe::kAllScaleRules) {
    EXPECT_EQ(ScaleRuleKernelsRows(rule), 1) << recipe::ScaleRuleName(rule);
  }
}

TEST(ScaleRuleKernels, TheRegistryHasTheRowsEachRuleClaims) {
  ASSERT_FALSE(CudaRows().empty()) << "no cuda recipe rows registered";
  for (recipe::ScaleRule rule : recipe::kAllScaleRules) {
    const ScaleRuleKernels kernels = KernelsOf(rule);
    int recipes = 0, with_rows = 0;
    for (const recipe::Recipe& r : recipe::kAllRecipes) {
      if (r.scale_rule != rule) continue;
      ++recipes;
      const std::vector<std::string> names = ListedRowNames(r);
      ASSERT_FALSE(names.empty()) << recipe::RecipeName(r);
      int present = 0;
      for (registry::RecipeOperation op : kOperations) {
        for (const std::string& name : names) {
          const bool has = CudaRows().count({op, name}) != 0;
          present += has ? 1 : 0;
          if (kernels == ScaleRuleKernels::kModel) {
            EXPECT_TRUE(has) << "rule " << recipe::ScaleRuleName(rule) << " runs on the model recipe kernels, but "
                             << name << " has no cuda " << registry::RecipeOperationName(op) << " row";
          }
        }
      }
      if (kernels == ScaleRuleKernels::kNone) {
        EXPECT_EQ(present, 0) << "rule " << recipe::ScaleRuleName(rule) << " has no GPU kernel in "
                              << "scale_rule_kernels.h, but " << recipe::RecipeName(r) << " has cuda rows";
      }
      with_rows += present > 0 ? 1 : 0;
    }
    EXPECT_GT(recipes, 0) << recipe::ScaleRuleName(rule) << " has no catalog recipe";
    if (kernels == ScaleRuleKernels::kTuned) {
      EXPECT_GT(with_rows, 0) << "rule " << recipe::ScaleRuleName(rule)
                              << " is given to a tuned kernel, but none of its recipes has a cuda row";
    }
  }
}

}  // namespace
}  // namespace lowbit::cuda::detail
