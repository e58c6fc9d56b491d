// Named MX recipes in the older MxRecipe shape that the SIMD and CUDA MX
// kernels and their tests take (docs/formats-reference.md §5, §9 rows 8-10).
//
// These are views of the catalog, kept for the kernels' call shape: every
// field is computed from recipe::kMxProfiles (recipe/catalog.h), where each
// profile's name, source, scale rule, amax NaN rule, element step and element
// policy are typed once, with their citations. Nothing here is data of its
// own; a profile added to the catalog appears in kAllMxRecipes and
// FindMxRecipe without an edit here.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/mx_scale_rule.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/catalog.h"

namespace lowbit::block {

// The catalog's MX scale rule as the older MxScaleRule.
constexpr MxScaleRule MxScaleRuleOf(recipe::ScaleRule rule) {
  switch (rule) {
    case recipe::ScaleRule::kMxCeil: return MxScaleRule::kCeil;
    case recipe::ScaleRule::kMxEven: return MxScaleRule::kEven;
    case recipe::ScaleRule::kMxRceil: return MxScaleRule::kRceil;
    case recipe::ScaleRule::kMxNearest: return MxScaleRule::kNearest;
    case recipe::ScaleRule::kMxRceilEager: return MxScaleRule::kRceilEager;
    default: return MxScaleRule::kFloor;
  }
}

// One catalog MX profile in the MxRecipe shape.
constexpr MxRecipe MxRecipeView(const recipe::MxProfile& p) {
  MxRecipe m{};
  m.name = p.name;
  m.source = p.source;
  m.scale.rule = MxScaleRuleOf(p.rule);
  m.scale.saturate = p.scale_saturate;
  m.scale.zero_amax_as_min_normal = p.zero_amax_as_min_normal;
  m.amax_nan = p.amax_nan;
  m.scaling = p.step == recipe::ElementStep::kDivide ? ElementScaling::kDivide : ElementScaling::kMultiplyReciprocal;
  m.element = p.element;
  return m;
}

namespace detail {

inline constexpr std::size_t kMxProfileCount = std::size(recipe::kMxProfiles);

constexpr std::array<MxRecipe, kMxProfileCount> BuildMxRecipeViews() {
  std::array<MxRecipe, kMxProfileCount> views{};
  for (std::size_t i = 0; i < kMxProfileCount; ++i) views[i] = MxRecipeView(recipe::kMxProfiles[i]);
  return views;
}

}  // namespace detail

// One view per catalog profile, in the catalog's order.
inline constexpr std::array<MxRecipe, detail::kMxProfileCount> kMxRecipeViews = detail::BuildMxRecipeViews();

namespace detail {

constexpr std::array<const MxRecipe*, kMxProfileCount> BuildMxRecipePointers() {
  std::array<const MxRecipe*, kMxProfileCount> all{};
  for (std::size_t i = 0; i < kMxProfileCount; ++i) all[i] = &kMxRecipeViews[i];
  return all;
}

// Not constexpr: reached only for a name the catalog does not list, so the
// named constant that asked for it fails to compile with this name in the
// message instead of naming another profile.
inline void MxProfileNotInCatalog() {}

// The view of the catalog profile called `name`.
constexpr const MxRecipe& MxRecipeNamed(std::string_view name) {
  for (const MxRecipe& m : kMxRecipeViews) {
    if (name == m.name) return m;
  }
  MxProfileNotInCatalog();
  return kMxRecipeViews[0];
}

}  // namespace detail

inline constexpr std::array<const MxRecipe*, detail::kMxProfileCount> kAllMxRecipes =
    detail::BuildMxRecipePointers();

// The names the kernels, benchmarks and tests use; each the catalog profile
// of that name (recipe/catalog.h says what each reproduces).
inline constexpr const MxRecipe& kOcpMx = detail::MxRecipeNamed("ocp");
inline constexpr const MxRecipe& kMsxMx = detail::MxRecipeNamed("msx");
inline constexpr const MxRecipe& kMsxMxEven = detail::MxRecipeNamed("msx-even");
inline constexpr const MxRecipe& kTeMx = detail::MxRecipeNamed("te");
inline constexpr const MxRecipe& kAoMxFloor = detail::MxRecipeNamed("ao-floor");
inline constexpr const MxRecipe& kAoMxCeil = detail::MxRecipeNamed("ao-ceil");
inline constexpr const MxRecipe& kAoMxEven = detail::MxRecipeNamed("ao-even");
inline constexpr const MxRecipe& kAoMxRceil = detail::MxRecipeNamed("ao-rceil");
inline constexpr const MxRecipe& kNearestMx = detail::MxRecipeNamed("nearest");

constexpr const MxRecipe* FindMxRecipe(std::string_view name) {
  for (const MxRecipe* r : kAllMxRecipes) {
    if (name == r->name) return r;
  }
  return nullptr;
}

}  // namespace lowbit::block
