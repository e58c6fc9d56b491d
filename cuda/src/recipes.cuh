// Recipes of the catalog (formats/spec/include/lowbit/formats/recipe/catalog.h) as
// types, so that a kernel is a template over its recipe: Get() returns the
// recipe by value in host and device code, evaluated at compile time (device
// code cannot read the namespace-scope catalog at run time, but a constexpr
// copy of it is a constant). Every field a kernel branches on then folds
// away, and every model step a kernel calls runs on the recipe's own data.
#pragma once

#include <iterator>
#include <string_view>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/choose_scale.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/cuda/recipe_plan.h"
#include "spec_value.h"

namespace lowbit::cuda::detail {

// Position of the recipe "name:profile" in recipe::kAllRecipes, -1 if none.
constexpr int CatalogIndex(std::string_view name, std::string_view profile) {
  for (int i = 0; i < static_cast<int>(recipe::kAllRecipes.size()); ++i) {
    if (recipe::kAllRecipes[i].name == name && recipe::kAllRecipes[i].profile == profile) return i;
  }
  return -1;
}

template <int kIndex>
struct CatalogRecipe {
  static_assert(kIndex >= 0, "no such recipe in formats/spec/include/lowbit/formats/recipe/catalog.h");
  static constexpr bool kFolded = true;  // every field a constant (model_recipe.cu RunTimeRecipe: false)
  LOWBIT_HD_CONSTEXPR static recipe::Recipe Get() {
    constexpr recipe::Recipe kRecipe = recipe::kAllRecipes[kIndex];
    return kRecipe;
  }
  // Whether ChooseScale reads the amax alone (model_recipe.cu KeptStats).
  static constexpr bool kScaleReadsOnlyAmax = recipe::ScaleReadsOnlyAmax(Get());
};

// The catalog's MX format of an element (recipe::kMxFormats), -1 if none.
template <FormatId kElement>
constexpr int MxFormatIndex() {
  for (int i = 0; i < static_cast<int>(std::size(recipe::kMxFormats)); ++i) {
    if (profile_detail::SameLayout(recipe::kMxFormats[i].element, SpecValue<kElement>())) return i;
  }
  return -1;
}
// "nvfp4:te".
using Nvfp4TeRecipe = CatalogRecipe<CatalogIndex("nvfp4", "te")>;
// "e4m3:te" / "e5m2:te": TE current scaling of FP8.
template <FormatId kFp8>
using Fp8TeRecipe = CatalogRecipe<CatalogIndex(SpecValue<kFp8>().name, "te")>;
// The MX kernels' recipes (mx.cu): the catalog's "<mx format>:<profile>"
// for the profiles mx.cu compiles, TE's RCEIL and OCP's floor, where the
// catalog has that recipe (recipe_plan.h MxRecipeInCatalog: MXINT8 only
// under OCP's). A caller's recipe reaches a copy only when it has that
// copy's semantics (recipe_plan.h MxKernelProfile).
template <FormatId kElement, int kProfile>
inline constexpr bool kMxKernelCompiled =
    MxFormatIndex<kElement>() >= 0 && MxRecipeInCatalog(recipe::kMxFormats[MxFormatIndex<kElement>()], kProfile);

template <FormatId kElement, int kProfile>
using MxRecipeOf = CatalogRecipe<CatalogIndex(recipe::kMxFormats[MxFormatIndex<kElement>()].name,
                                              recipe::kMxProfiles[kProfile].name)>;

}  // namespace lowbit::cuda::detail
