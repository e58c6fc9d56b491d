// Recipe rows of the SIMD kernels (registry recipe_entry.h): MX and NVFP4
// quantize / dequantize and scaled-group (INT8, INT4, UINT4, TE FP8)
// quantize / dequantize per group, row or tensor, one row per
// (operation, recipe, compiled Highway target), backend "simd:<TARGET>". A
// target the CPU lacks is registered but not available (shown as skipped).
#include <cstdint>
#include <cstring>
#include <string>

#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {

registry::Status RunRecipeOnTarget(std::int64_t target, const registry::RecipeArgs& a) {
  registry::RecipeParts parts;
  const registry::RecipeBuffers sizes = registry::RecipeBufferSizes(a.recipe, a.rows, a.cols);
  if (!registry::ParseRecipe(a.recipe, &parts) || !sizes.ok) {
    return registry::Status::Error("simd: unknown recipe or untiled shape: " + a.recipe);
  }
  const std::size_t count = a.rows * a.cols;
  const bool quantize = a.operation == registry::RecipeOperation::kQuantizeRecipe;
  if (count == 0) return registry::Status::Ok();
  if (parts.int_recipe != nullptr) {
    const block::IntQuantRecipe& r = *parts.int_recipe;
    const block::QuantLayout layout{parts.granularity, parts.group, 0};
    auto* params = reinterpret_cast<block::QuantParams*>(a.scales);
    // INT4 / UINT4 rows carry packed codes, INT8 / FP8 rows one per byte
    // (recipe_entry.h RecipeBufferSizes).
    if (r.element->total_bits == 4) {
      return quantize ? QuantizeInt4Groups(target, r, layout, a.x, a.rows, a.cols, a.codes, params)
                      : DequantizeInt4Groups(target, r, layout, a.codes, a.rows, a.cols, params, a.out);
    }
    return quantize ? QuantizeGroups(target, r, layout, a.x, a.rows, a.cols, a.codes, params)
                    : DequantizeGroups(target, r, layout, a.codes, a.rows, a.cols, params, a.out);
  }
  const block::BlockSpec& spec = *parts.block.spec;
  if (&spec == &block::kNvfp4) {
    const std::size_t blocks = (count + 15) / 16;
    block::Nvfp4TensorScale t;
    if (quantize) {
      const registry::Status s =
          QuantizeNvfp4(target, parts.block.nvfp4, a.x, count, a.codes, a.scales, &t);
      if (s.ok) std::memcpy(a.scales + blocks, &t, sizeof(t));
      return s;
    }
    std::memcpy(&t, a.scales + blocks, sizeof(t));
    return DequantizeNvfp4(target, parts.block.nvfp4, t, a.codes, a.scales, count, a.out);
  }
  return quantize ? QuantizeMx(target, spec, *parts.block.mx, a.x, count, a.codes, a.scales)
                  : DequantizeMx(target, spec, a.codes, a.scales, count, a.out);
}

void RegisterSimdRecipes(registry::Registry& registry) {
  for (const std::int64_t target : CompiledTargets()) {
    for (const std::string& name : registry::AllRecipeNames()) {
      for (registry::RecipeOperation op : {registry::RecipeOperation::kQuantizeRecipe,
                                           registry::RecipeOperation::kDequantizeRecipe}) {
        registry.AddRecipe(registry::RecipeEntry{
            op, name, std::string("simd:") + TargetName(target),
            [target] { return TargetAvailable(target); },
            [target](const registry::RecipeArgs& a) { return RunRecipeOnTarget(target, a); }});
      }
    }
  }
}

}  // namespace lowbit::simd
