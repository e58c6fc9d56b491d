// The per-family views of a recipe name. Parsing itself is recipe/names.h's
// ParseTarget, the one grammar: these functions only translate its result
// into the older per-family shapes for callers not yet moved to
// recipe::Recipe. Host only.
#pragma once

#include <string>
#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::block {

struct NamedRecipe {
  const BlockSpec* spec = nullptr;
  const MxRecipe* mx = nullptr;                // MX formats
  Nvfp4Recipe nvfp4 = Nvfp4Recipe::kTe;        // when spec == &kNvfp4
};

// torchao has no MXINT8 and TE's MX kernels take float elements only.
constexpr bool MxRecipeApplies(const BlockSpec& spec, const MxRecipe& recipe) {
  if (spec.element->IsFloat()) return true;
  return &recipe == &kOcpMx || &recipe == &kMsxMx || &recipe == &kMsxMxEven;
}

// An MX or NVFP4 recipe name ("mxfp4:ocp", "mxfp8", "nvfp4:torchao", ...).
inline bool ParseRecipeName(std::string_view text, NamedRecipe* out, std::string* error = nullptr) {
  recipe::Target t;
  std::string message;
  if (!recipe::ParseTarget(text, &t, &message) || t.kind != recipe::Target::Kind::kRecipe ||
      t.recipe->family() == recipe::Family::kScaled) {
    if (error) *error = message.empty() ? "'" + std::string(text) + "' is not an MX or NVFP4 recipe" : message;
    return false;
  }
  NamedRecipe r;
  for (const BlockSpec* spec : kAllBlockSpecs) {
    if (std::string_view(spec->name) == t.recipe->name) r.spec = spec;
  }
  if (r.spec == &kNvfp4) {
    r.nvfp4 = t.recipe->scale_rule == recipe::ScaleRule::kNvfp4Torchao    ? Nvfp4Recipe::kTorchao
              : t.recipe->scale_rule == recipe::ScaleRule::kNvfp4ModelOpt ? Nvfp4Recipe::kModelOpt
                                                                         : Nvfp4Recipe::kTe;
  } else {
    r.mx = FindMxRecipe(t.recipe->profile);
  }
  if (r.spec == nullptr || (r.spec != &kNvfp4 && r.mx == nullptr)) return false;
  *out = r;
  return true;
}

// A scaled recipe name ("int8:ao-sym", "e4m3:te", ...), without a layout.
inline const IntQuantRecipe* FindIntQuantRecipe(std::string_view text, std::string* error = nullptr) {
  recipe::Target t;
  std::string message;
  if (!recipe::ParseTarget(text, &t, &message) || t.kind != recipe::Target::Kind::kRecipe ||
      t.recipe->family() != recipe::Family::kScaled) {
    if (error) *error = message.empty() ? "'" + std::string(text) + "' is not a scaled recipe" : message;
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
