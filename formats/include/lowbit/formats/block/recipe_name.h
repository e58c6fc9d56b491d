// The per-family views of a recipe name. Parsing itself is recipe/names.h's
// ParseTarget, the one grammar, over the catalog (recipe/catalog.h): these
// functions only translate its result into the older per-family shapes
// (mx_profiles.h, nvfp4_recipe.h, int_quant_recipe.h: views of the catalog,
// kept for the kernels' call shape) for callers not yet moved to
// recipe::Recipe. Host only.
#pragma once

#include <string>
#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::block {

struct NamedRecipe {
  const BlockSpec* spec = nullptr;
  const MxRecipe* mx = nullptr;                // MX formats
  Nvfp4Recipe nvfp4 = Nvfp4Recipe::kTe;        // when spec == &kNvfp4
};

// An MX or NVFP4 recipe name ("mxfp4:ocp", "mxfp8", "nvfp4:torchao", ...).
inline bool ParseRecipeName(std::string_view text, NamedRecipe* out, std::string* error = nullptr) {
  recipe::Target t;
  std::string message;
  if (!recipe::ParseTarget(text, &t, &message) || t.kind != recipe::Target::Kind::kRecipe ||
      t.recipe->family() == recipe::Family::kScaled) {
    if (error) *error = message.empty() ? QuoteUserWord(text) + " is not an MX or NVFP4 recipe" : message;
    return false;
  }
  NamedRecipe r;
  for (const BlockSpec* spec : kAllBlockSpecs) {
    if (std::string_view(spec->name) == t.recipe->name) r.spec = spec;
  }
  bool found = false;
  if (r.spec == &kNvfp4) {
    found = Nvfp4RecipeOf(t.recipe->scale_rule, &r.nvfp4);
  } else {
    r.mx = FindMxRecipe(t.recipe->profile);
    found = r.mx != nullptr;
  }
  if (r.spec == nullptr || !found) return false;
  *out = r;
  return true;
}

// A scaled recipe name ("int8:ao-sym", "e4m3:te", ...), without a layout.
inline const IntQuantRecipe* FindIntQuantRecipe(std::string_view text, std::string* error = nullptr) {
  recipe::Target t;
  std::string message;
  if (!recipe::ParseTarget(text, &t, &message) || t.kind != recipe::Target::Kind::kRecipe ||
      t.recipe->family() != recipe::Family::kScaled) {
    if (error) *error = message.empty() ? QuoteUserWord(text) + " is not a scaled recipe" : message;
    return nullptr;
  }
  for (const IntQuantRecipe* r : kAllIntQuantRecipes) {
    if (std::string_view(r->element->name) == t.recipe->name && std::string_view(r->name) == t.recipe->profile) {
      return r;
    }
  }
  return nullptr;
}

}  // namespace lowbit::block
