// Recipe names as the CLI and bindings spell them: FORMAT[:PROFILE], e.g.
// "mxfp4:ocp", "mxfp8_e4m3:te", "mxint8:msx", "nvfp4:modelopt". The default
// profile is "ocp" for MX formats and "te" for NVFP4.
#pragma once

#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/nvfp4_recipe.h"

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

constexpr bool ParseRecipeName(std::string_view text, NamedRecipe* out) {
  const std::size_t colon = text.find(':');
  const std::string_view format = text.substr(0, colon);
  const std::string_view profile = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  for (const BlockSpec* spec : kAllBlockSpecs) {
    if (format != spec->name) continue;
    out->spec = spec;
    if (spec == &kNvfp4) return FindNvfp4Recipe(profile.empty() ? "te" : profile, &out->nvfp4);
    out->mx = FindMxRecipe(profile.empty() ? "ocp" : profile);
    return out->mx != nullptr && MxRecipeApplies(*spec, *out->mx);
  }
  return false;
}

}  // namespace lowbit::block
