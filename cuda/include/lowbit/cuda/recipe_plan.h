// Which GPU kernel runs a recipe, read off the recipe's fields, never its
// name or profile: a recipe reaches a tuned kernel (mx.cu, nvfp4.cu,
// fp8_scaled.cu, int_quantize.cu in cuda/src) only when it has the semantics
// (recipe/same_semantics.h) of a recipe that kernel was written for, and the
// model recipe kernels (cuda/src/model_recipe.h) by its scale rule's row in
// scale_rule_kernels.h. Constant-evaluated: cuda/src/model_recipe.cu
// compiles a copy of its kernels for each catalog recipe
// RunsOnModelRecipeKernels takes, and cuda/tests/recipe_plan_test.cc pins
// the plan at compile time. Host code only; it includes no CUDA header.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/same_semantics.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/cuda/scale_rule_kernels.h"

namespace lowbit::cuda::detail {

// Whether recipe `r` runs on the model recipe kernels (model_recipe.h): the
// recipes whose rule scale_rule_kernels.h gives to the model kernels, and
// GPTQ / AWQ with FP16 scales (their integers recomputed with the FP16
// scale, recipe::RepackedInteger), which int_quantize.cu does not do.
constexpr bool RunsOnModelRecipeKernels(const recipe::Recipe& r) {
  if (r.element_quirk == recipe::ElementQuirk::kRepackWithFp16Scale) return true;
  return KernelsOf(r.scale_rule) == ScaleRuleKernels::kModel;
}

// The catalog's MX profile (recipe::kMxProfiles) named `name`, -1 if none.
constexpr int MxProfileIndex(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(recipe::kMxProfiles)); ++i) {
    if (recipe::kMxProfiles[i].name == name) return i;
  }
  return -1;
}

// The two MX profiles mx.cu compiles for every MX format: TE's RCEIL with
// the NaN-skipping amax, and OCP's floor with the NaN-propagating one.
inline constexpr int kMxTeProfile = MxProfileIndex("te");
inline constexpr int kMxOcpProfile = MxProfileIndex("ocp");
static_assert(kMxTeProfile >= 0 && kMxOcpProfile >= 0, "mx.cu's profiles are in recipe/catalog.h");

// Whether the catalog has the MX recipe of format `f` and profile `p`: every
// profile on the float elements, MXINT8 only under the profiles that say
// they apply to it (recipe/catalog.h BuildCatalog's rule).
constexpr bool MxRecipeInCatalog(const recipe::MxFormat& f, int p) {
  return f.element.IsFloat() || recipe::kMxProfiles[p].integer_elements;
}

// The profile of the copy of mx.cu's kernels that runs `r` (kMxTeProfile or
// kMxOcpProfile): the one whose catalog recipe for r's element has r's
// semantics; -1 when neither has (MXINT8 has no TE recipe in the catalog,
// so no TE copy either).
constexpr int MxKernelProfile(const recipe::Recipe& r) {
  if (r.family() != recipe::Family::kMx) return -1;
  for (const recipe::MxFormat& f : recipe::kMxFormats) {
    if (!profile_detail::SameLayout(f.element, r.element)) continue;
    for (int p : {kMxTeProfile, kMxOcpProfile}) {
      if (MxRecipeInCatalog(f, p) && recipe::SameSemantics(r, recipe::MakeMxRecipe(f, recipe::kMxProfiles[p]))) {
        return p;
      }
    }
  }
  return -1;
}

// Whether `r` has the semantics of a catalog recipe (recipe::kAllRecipes)
// that `kernel_takes` accepts.
template <typename Pred>
constexpr bool SameAsCatalogRecipe(const recipe::Recipe& r, Pred kernel_takes) {
  for (const recipe::Recipe& c : recipe::kAllRecipes) {
    if (kernel_takes(c) && recipe::SameSemantics(r, c)) return true;
  }
  return false;
}

// nvfp4.cu: TE's recipe, the one it folds in (recipes.cuh Nvfp4TeRecipe).
constexpr bool RunsOnNvfp4Kernels(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kNvfp4 && SameAsCatalogRecipe(r, [](const recipe::Recipe& c) {
           return c.family() == recipe::Family::kNvfp4 && c.scale_rule == recipe::ScaleRule::kNvfp4Te;
         });
}

// fp8_scaled.cu: TE current scaling of E4M3 and E5M2 without power-of-two
// scales (recipes.cuh Fp8TeRecipe).
constexpr bool RunsOnFp8ScaledKernels(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kScaled && SameAsCatalogRecipe(r, [](const recipe::Recipe& c) {
           return c.scale_rule == recipe::ScaleRule::kTeFp8 && !c.pow2_scale;
         });
}

// int_quantize.cu: the integer-element recipes of the rules
// scale_rule_kernels.h gives to a tuned kernel, without an element quirk.
// The kernels call the model's scale and element steps over the recipe
// itself, but their statistics, code packing and dequantization are written
// for the catalog's integer recipes, so a recipe must have the semantics of
// one of them.
constexpr bool RunsOnIntKernels(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kScaled && !r.element.IsFloat() &&
         SameAsCatalogRecipe(r, [](const recipe::Recipe& c) {
           return c.family() == recipe::Family::kScaled && !c.element.IsFloat() &&
                  KernelsOf(c.scale_rule) == ScaleRuleKernels::kTuned &&
                  c.element_quirk == recipe::ElementQuirk::kNone;
         });
}

// The GPU kernel that implements a (recipe, layout, direction).
enum class RecipeKernel : std::uint8_t { kNone, kMx, kNvfp4, kFp8PerTensor, kFp8PerRow, kInt, kModel };

// Which kernel runs `r` over `layout`, quantize or dequantize: the model
// recipe kernels both ways in every layout that applies; mx.cu and nvfp4.cu
// both ways over 1-D blocks of the flattened tensor (the launcher refuses
// rows that are not whole blocks); fp8_scaled.cu quantize only, per tensor
// or per row; int_quantize.cu both ways, per row or per group.
constexpr RecipeKernel KernelOf(const recipe::Recipe& r, const recipe::Layout& layout, bool quantize) {
  if (RunsOnModelRecipeKernels(r)) return recipe::LayoutApplies(r, layout) ? RecipeKernel::kModel : RecipeKernel::kNone;
  if (MxKernelProfile(r) >= 0) return RecipeKernel::kMx;
  if (RunsOnNvfp4Kernels(r)) return RecipeKernel::kNvfp4;
  if (RunsOnFp8ScaledKernels(r)) {
    if (!quantize) return RecipeKernel::kNone;
    if (layout.geometry == recipe::Geometry::kPerTensor) return RecipeKernel::kFp8PerTensor;
    if (layout.geometry == recipe::Geometry::kPerRow) return RecipeKernel::kFp8PerRow;
    return RecipeKernel::kNone;
  }
  if (RunsOnIntKernels(r) &&
      (layout.geometry == recipe::Geometry::kPerRow || layout.geometry == recipe::Geometry::kGroup)) {
    return RecipeKernel::kInt;
  }
  return RecipeKernel::kNone;
}

// "name:profile" for an error line; a recipe built without names says so.
inline std::string RecipeLabel(const recipe::Recipe& r) {
  return std::string(r.name != nullptr ? r.name : "(no name)") + ":" + (r.profile != nullptr ? r.profile : "(no profile)");
}

}  // namespace lowbit::cuda::detail
