// Recipe rows of the SIMD kernels (registry recipe_entry.h): MX and NVFP4
// quantize / dequantize and scaled-group (INT8, INT4, UINT4, TE FP8)
// quantize / dequantize per group, row or tensor, one row per
// (operation, recipe, compiled Highway target), backend "simd:<TARGET>". A
// target the CPU lacks is registered but not available (shown as skipped).
// The kernels take the per-family views of a recipe (block::ToRecipe's
// inverses below); their results go into the typed buffers of the one shape.
#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"
#include "int_group_job.h"

namespace lowbit::simd {
namespace {

const block::IntQuantRecipe* IntView(const recipe::Recipe& r) {
  for (const block::IntQuantRecipe* q : block::kAllIntQuantRecipes) {
    if (std::string(q->element->name) == r.name && std::string(q->name) == r.profile) return q;
  }
  return nullptr;
}

const block::BlockSpec* BlockView(const recipe::Recipe& r) {
  for (const block::BlockSpec* s : block::kAllBlockSpecs) {
    if (std::string(s->name) == r.name) return s;
  }
  return nullptr;
}

// The NVFP4 view of a recipe: the enumerator of its scale rule (the
// catalog's NVFP4 recipes differ in nothing else, recipe/catalog.h
// MakeNvfp4Recipe); false for a rule without one.
bool Nvfp4View(const recipe::Recipe& r, block::Nvfp4Recipe* view) { return block::Nvfp4RecipeOf(r.scale_rule, view); }

block::QuantLayout QuantLayoutView(const recipe::Layout& l) {
  block::QuantLayout q;
  q.granularity = l.geometry == recipe::Geometry::kPerTensor ? block::Granularity::kPerTensor
                  : l.geometry == recipe::Geometry::kPerRow  ? block::Granularity::kPerRow
                  : l.geometry == recipe::Geometry::kGroup   ? block::Granularity::kPerGroup
                                                             : block::Granularity::kBlock2d;
  q.group = l.size;
  q.block_rows = l.tile_rows;
  return q;
}

block::NibbleOrder NibbleOrderOf(recipe::Packing p) {
  return p == recipe::Packing::kNibblesHighFirst ? block::NibbleOrder::kHighFirst : block::NibbleOrder::kLowFirst;
}

// Scaled recipes: through their block::IntQuantRecipe view where the
// catalog has one (simd.h's group calls), else (the recipes of
// recipe/catalog.h kServingScaledPairs) through the same kernels over the
// recipe itself (int_group_job.h QuantizeRecipeGroups).
registry::Status RunScaled(std::int64_t target, const registry::RecipeArgs& a, const recipe::Recipe& r) {
  const block::IntQuantRecipe* view = IntView(r);
  const block::QuantLayout layout = QuantLayoutView(a.target.layout);
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(a.target, a.rows, a.cols);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(b.sizes.scales));
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  if (a.operation == registry::RecipeOperation::kQuantizeRecipe) {
    const registry::Status s =
        view == nullptr ? QuantizeRecipeGroups(target, r, layout, a.x, a.rows, a.cols, a.q.codes, params.data())
        : packed && r.packing == recipe::Packing::kNibblesLowFirst
            ? QuantizeInt4Groups(target, *view, layout, a.x, a.rows, a.cols, a.q.codes, params.data())
            : QuantizeGroups(target, *view, layout, a.x, a.rows, a.cols, a.q.codes, params.data());
    if (!s.ok) return s;
    for (std::size_t g = 0; g < params.size(); ++g) {
      a.q.scales[g] = params[g].decode;
      if (a.q.zero_points != nullptr) a.q.zero_points[g] = params[g].zero_point;
    }
    return s;
  }
  for (std::size_t g = 0; g < params.size(); ++g) {  // dequantize reads decode and the zero point
    params[g].decode = a.q.scales[g];
    params[g].zero_point = a.q.zero_points != nullptr ? a.q.zero_points[g] : 0;
  }
  if (a.output_format == FormatId::kFp16) {
    // GPTQ / AWQ with FP16 scales (ValidateRecipeArgs admits no other
    // recipe): (q - z) * s is exact in FP32, so the FP16 result is that
    // value rounded once, here by the SIMD FP32 -> FP16 encoder under the
    // model's options (recipe/steps.h DecodeElementToF16, F16ScaleOptions).
    std::vector<float> exact(a.rows * a.cols);
    const registry::Status s =
        DequantizeRecipeGroups(target, r, layout, a.q.codes, a.rows, a.cols, params.data(), exact.data());
    if (!s.ok) return s;
    registry::ConvertArgs c;
    c.operation = registry::Operation::kEncodeF32;
    c.format = FormatId::kFp16;
    c.input = exact.data();
    c.output = a.out_f16;
    c.count = exact.size();
    c.encode = recipe::F16ScaleOptions();
    return ConvertOnTarget(target, c);
  }
  if (view == nullptr) return DequantizeRecipeGroups(target, r, layout, a.q.codes, a.rows, a.cols, params.data(), a.out);
  return packed ? DequantizeInt4Groups(target, *view, layout, a.q.codes, a.rows, a.cols, params.data(), a.out)
                : DequantizeGroups(target, *view, layout, a.q.codes, a.rows, a.cols, params.data(), a.out);
}

registry::Status RunOnTarget(std::int64_t target, const registry::RecipeArgs& a) {
  if (registry::Status s = registry::ValidateRecipeArgs(a); !s.ok) return s;
  // The SIMD kernels derive every scale from x; a given (static) scale
  // (RecipeArgs::given_scale) runs on the scalar row, never silently ignored.
  if (a.given_scale != nullptr) return registry::Status::Error("simd: given (static) scales run on the scalar row only");
  if (a.rows == 0 || a.cols == 0) return registry::Status::Ok();  // empty, never a product that wraps to 0
  const std::size_t count = a.rows * a.cols;  // ValidateRecipeArgs checked the product
  const recipe::Recipe& r = *a.target.recipe;
  if (r.family() == recipe::Family::kScaled) return RunScaled(target, a, r);
  const bool quantize = a.operation == registry::RecipeOperation::kQuantizeRecipe;
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  // The block kernels keep one code per byte; 4-bit recipes pack them after
  // (and unpack before dequantizing) with the SIMD packing kernels.
  std::vector<std::uint8_t> unpacked(packed ? count : 0);
  std::uint8_t* codes = packed ? unpacked.data() : a.q.codes;
  if (packed && !quantize) {
    if (registry::Status s = UnpackNibbles(target, NibbleOrderOf(r.packing), a.q.codes, count, codes); !s.ok) return s;
  }
  registry::Status s;
  if (r.family() == recipe::Family::kNvfp4) {
    block::Nvfp4Recipe view{};
    if (!Nvfp4View(r, &view)) return registry::Status::Error("simd: no kernel for " + recipe::RecipeName(r));
    s = quantize ? QuantizeNvfp4(target, view, a.x, count, codes, a.q.scale_codes, a.q.tensor_scale)
                 : DequantizeNvfp4(target, view, *a.q.tensor_scale, codes, a.q.scale_codes, count, a.out);
  } else {
    const block::BlockSpec* spec = BlockView(r);
    const block::MxRecipe* mx = block::FindMxRecipe(r.profile);
    if (spec == nullptr || mx == nullptr) return registry::Status::Error("simd: no kernel for " + recipe::RecipeName(r));
    s = quantize ? QuantizeMx(target, *spec, *mx, a.x, count, codes, a.q.scale_codes)
                 : DequantizeMx(target, *spec, codes, a.q.scale_codes, count, a.out);
  }
  if (s.ok && packed && quantize) s = PackNibbles(target, NibbleOrderOf(r.packing), codes, count, a.q.codes);
  return s;
}

}  // namespace

void RegisterSimdRecipes(registry::Registry& registry) {
  for (const std::int64_t target : CompiledTargets()) {
    for (const std::string& name : registry::AllRecipeNames()) {
      for (registry::RecipeOperation op : registry::kAllRecipeOperations) {
        // Given (static) scales run on the scalar row: these kernels derive
        // every scale from x.
        registry.AddRecipe(registry::RecipeEntry{
            op, name, std::string("simd:") + TargetName(target),
            [target] { return TargetAvailable(target); },
            [target](const registry::RecipeArgs& a) { return RunOnTarget(target, a); }, registry::Memory::kHost,
            TargetPreference(target), /*any_layout=*/false,
            [](const registry::RecipeArgs& a) { return a.given_scale == nullptr; }});
      }
    }
  }
}

}  // namespace lowbit::simd
