// Recipe rows of the SIMD kernels (registry recipe_entry.h): quantize and
// dequantize of every catalog recipe through simd.h Quantize / Dequantize,
// one row per (operation, recipe, compiled Highway target), backend
// "simd:<TARGET>". A target the CPU lacks is registered but not available
// (shown as skipped).
#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/recipe/steps.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
namespace {

registry::Status RunOnTarget(std::int64_t target, const registry::RecipeArgs& a) {
  if (registry::Status s = registry::ValidateRecipeArgs(a); !s.ok) return s;
  // The SIMD kernels derive every scale from x; a given (static) scale
  // (RecipeArgs::given_scale) runs on the scalar row, never silently ignored.
  if (a.given_scale != nullptr) return registry::Status::Error("simd: given (static) scales run on the scalar row only");
  const recipe::Recipe& r = *a.target.recipe;
  const recipe::Layout& layout = a.target.layout;
  if (a.operation == registry::RecipeOperation::kQuantizeRecipe) {
    return Quantize(target, r, layout, a.x, a.rows, a.cols, a.q);
  }
  if (a.output_format != FormatId::kFp16) return Dequantize(target, r, layout, recipe::AsConst(a.q), a.rows, a.cols, a.out);
  // GPTQ / AWQ with FP16 scales (ValidateRecipeArgs admits no other recipe):
  // (q - z) * s is exact in FP32, so the FP16 result is that value rounded
  // once, here by the SIMD FP32 -> FP16 encoder under the model's options
  // (recipe/steps.h DecodeElementToF16, F16ScaleOptions).
  if (a.rows == 0 || a.cols == 0) return registry::Status::Ok();
  std::vector<float> exact(a.rows * a.cols);
  const registry::Status s = Dequantize(target, r, layout, recipe::AsConst(a.q), a.rows, a.cols, exact.data());
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
