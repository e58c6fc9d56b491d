// The recipe rows' names, argument checks and the scalar backend: the model's
// whole-tensor functions (formats/.../recipe/tensor.h) over typed buffers.
#include <cstdint>
#include <string>
#include <tuple>

#include "lowbit/formats/checked_size.h"

#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/recipe_contract.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

namespace {

Status RunScalarRecipe(const RecipeArgs& a) {
  if (Status s = ValidateRecipeArgs(a); !s.ok) return s;
  if (a.rows == 0 || a.cols == 0) return Status::Ok();  // empty: nothing to write (not a product that wraps to 0)
  const recipe::Recipe& r = *a.target.recipe;
  const long rows = static_cast<long>(a.rows), cols = static_cast<long>(a.cols);
  const bool f16 = a.output_format == FormatId::kFp16;  // ValidateRecipeArgs checked it applies
  const recipe::TensorStatus st =
      a.operation != RecipeOperation::kQuantizeRecipe
          ? (f16 ? recipe::DequantizeTensorToF16(r, a.target.layout, recipe::AsConst(a.q), rows, cols, a.out_f16)
                 : recipe::DequantizeTensor(r, a.target.layout, recipe::AsConst(a.q), rows, cols, a.out))
      : a.given_scale != nullptr
          ? recipe::QuantizeTensorWithGivenScales(r, a.target.layout, a.x, rows, cols, a.given_scale,
                                                  static_cast<long>(a.given_scale_count), a.q)
          : recipe::QuantizeTensor(r, a.target.layout, a.x, rows, cols, a.q);
  if (st != recipe::TensorStatus::kOk) return Status::Error(std::string("scalar: ") + recipe::TensorStatusText(st));
  return Status::Ok();
}

}  // namespace

const char* RecipeOperationName(RecipeOperation operation) {
  return operation == RecipeOperation::kQuantizeRecipe ? "quantize-recipe" : "dequantize-recipe";
}

std::vector<std::string> AllRecipeNames() {
  std::vector<std::string> names;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() != recipe::Family::kScaled) {
      names.push_back(recipe::RecipeName(r));
      continue;
    }
    for (const recipe::Layout& layout : kListedScaledLayouts) {
      names.push_back(recipe::RecipeName(r) + "/" + recipe::LayoutName(layout));
    }
  }
  return names;
}

bool ParseRecipe(std::string_view name, recipe::Target* out, std::string* error) {
  std::string message;
  recipe::Target t;
  if (!recipe::ParseTarget(name, &t, &message)) {
    if (error) *error = message;
    return false;
  }
  if (t.kind != recipe::Target::Kind::kRecipe) {
    if (error) *error = "'" + std::string(name) + "' is an element format, not a recipe";
    return false;
  }
  *out = t;
  return true;
}

RecipeBuffers RecipeBufferSizes(const recipe::Target& target, std::size_t rows, std::size_t cols) {
  RecipeBuffers b;
  if (target.recipe == nullptr) {
    b.error = "not a recipe";
    return b;
  }
  // rows * cols must fit the model's 64-bit signed indices, and every buffer
  // size below is at most that many elements times 4 bytes (FP32 scales of
  // per-element groups), so that product must fit size_t too.
  std::size_t elements = 0, bytes = 0;
  if (!CheckedElementCount(rows, cols, &elements) || !CheckedMul(elements, sizeof(float), &bytes)) {
    b.error = std::to_string(rows) + " x " + std::to_string(cols) + ": " +
              recipe::TensorStatusText(recipe::TensorStatus::kSizeOverflow);
    return b;
  }
  recipe::GroupGrid grid;
  const recipe::TensorStatus st = recipe::MakeGroupGrid(*target.recipe, target.layout, static_cast<long>(rows),
                                                        static_cast<long>(cols), &grid);
  if (st != recipe::TensorStatus::kOk) {
    b.error = recipe::TensorStatusText(st);
    return b;
  }
  b.ok = true;
  b.sizes = recipe::SizesOf(*target.recipe, grid);
  return b;
}

Status ValidateRecipeArgs(const RecipeArgs& a) {
  if (a.target.kind != recipe::Target::Kind::kRecipe || a.target.recipe == nullptr) {
    return Status::Error("recipe row called without a recipe");
  }
  if (a.operation != RecipeOperation::kQuantizeRecipe && a.operation != RecipeOperation::kDequantizeRecipe) {
    return Status::Error("unknown recipe operation " + std::to_string(static_cast<int>(a.operation)));
  }
  const std::string name = recipe::CanonicalName(a.target);
  if (a.output_format != FormatId::kFp32) {
    if (a.output_format != FormatId::kFp16) {
      return Status::Error(name + ": output type " + std::to_string(static_cast<int>(a.output_format)) +
                           " is not a dequantize output (fp32, or fp16 where the recipe defines it)");
    }
    if (a.operation != RecipeOperation::kDequantizeRecipe) {
      return Status::Error(name + ": an fp16 output type applies to dequantize only");
    }
    if (!recipe::DequantizesToF16(*a.target.recipe)) {
      return Status::Error(name + ": no fp16 output: only the recipes with FP16 scales (uint4:gptq-sym-fp16, "
                                  "uint4:gptq-asym-fp16, uint4:awq-fp16) dequantize to fp16; ask for fp32");
    }
  }
  if (a.given_scale != nullptr) {
    if (a.operation != RecipeOperation::kQuantizeRecipe) {
      return Status::Error(name + ": a given scale applies to quantize only");
    }
    if (!recipe::TakesGivenScale(*a.target.recipe)) {
      return Status::Error(name + ": this recipe takes no given scale (only the vLLM FP8 recipes do; the others "
                                  "derive their scale from the data)");
    }
  }
  // Empty (rows or cols 0) is valid with any pointers, as in every entry
  // point (docs/bad-input.md "Empty input"); tested on the dimensions, never
  // on their product, which can wrap to 0.
  if (a.rows == 0 || a.cols == 0) return Status::Ok();
  const RecipeBuffers b = RecipeBufferSizes(a.target, a.rows, a.cols);
  if (!b.ok) return Status::Error(name + ": " + b.error);
  const bool quantize = a.operation == RecipeOperation::kQuantizeRecipe;
  const bool f16_out = !quantize && a.output_format == FormatId::kFp16;
  if (quantize ? a.x == nullptr : (f16_out ? a.out_f16 == nullptr : a.out == nullptr)) {
    return Status::Error(name + ": null input or output tensor");
  }
  if (a.given_scale != nullptr && a.given_scale_count != 1 &&
      a.given_scale_count != static_cast<std::size_t>(b.sizes.scales)) {
    return Status::Error(name + ": " + std::to_string(a.given_scale_count) + " given scales for " +
                         std::to_string(b.sizes.scales) + " groups (give 1, or one per group)");
  }
  if (a.q.codes == nullptr) return Status::Error(name + ": null codes buffer");
  if (b.sizes.scale_codes > 0 && a.q.scale_codes == nullptr) return Status::Error(name + ": null scale codes buffer");
  if (b.sizes.scales > 0 && a.q.scales == nullptr) return Status::Error(name + ": null scales buffer");
  if (b.sizes.zero_points > 0 && a.q.zero_points == nullptr) return Status::Error(name + ": null zero points buffer");
  if (b.sizes.tensor_scales > 0 && a.q.tensor_scale == nullptr) return Status::Error(name + ": null tensor scale");
  // Typed buffers must be aligned for their type (C++ reads them as such).
  for (const auto& [p, align, what] : {std::tuple<const void*, std::size_t, const char*>{a.x, alignof(float), "x"},
                                       {f16_out ? nullptr : a.out, alignof(float), "out"},
                                       {f16_out ? a.out_f16 : nullptr, alignof(std::uint16_t), "fp16 out"},
                                       {a.given_scale, alignof(float), "given scale"},
                                       {a.q.scales, alignof(float), "scales"},
                                       {a.q.zero_points, alignof(std::int32_t), "zero points"},
                                       {a.q.tensor_scale, alignof(recipe::TensorScale), "tensor scale"}}) {
    if (Status s = CheckAligned(name, p, align, what); !s.ok) return s;
  }
  // No output may overlap an input or another output (registry.h CheckNoOverlap).
  const std::size_t elements = a.rows * a.cols;  // fits: RecipeBufferSizes checked it
  const auto n = [](long count, std::size_t unit) { return static_cast<std::size_t>(count) * unit; };
  const BufferRange codes{a.q.codes, n(b.sizes.code_bytes, 1), "codes"};
  const BufferRange scale_codes{a.q.scale_codes, n(b.sizes.scale_codes, 1), "scale codes"};
  const BufferRange scales{a.q.scales, n(b.sizes.scales, sizeof(float)), "scales"};
  const BufferRange zero_points{a.q.zero_points, n(b.sizes.zero_points, sizeof(std::int32_t)), "zero points"};
  const BufferRange tensor_scale{a.q.tensor_scale, n(b.sizes.tensor_scales, sizeof(recipe::TensorScale)),
                                 "tensor scale"};
  if (quantize) {
    return CheckNoOverlap(name,
                          {{a.x, elements * sizeof(float), "x"},
                           {a.given_scale, a.given_scale != nullptr ? a.given_scale_count * sizeof(float) : 0,
                            "given scale"}},
                          {codes, scale_codes, scales, zero_points, tensor_scale});
  }
  if (f16_out) {
    return CheckNoOverlap(name, {codes, scale_codes, scales, zero_points, tensor_scale},
                          {{a.out_f16, elements * sizeof(std::uint16_t), "fp16 out"}});
  }
  return CheckNoOverlap(name, {codes, scale_codes, scales, zero_points, tensor_scale},
                        {{a.out, elements * sizeof(float), "out"}});
}

Status RequireF32Output(const RecipeArgs& a, const char* backend) {
  if (a.output_format == FormatId::kFp32) return Status::Ok();
  return Status::Error(std::string(backend) + ": " + recipe::CanonicalName(a.target) +
                       ": dequantizes to fp32 only; fp16 output runs on the scalar row (and the SIMD rows)");
}

void RegisterScalarRecipes(Registry& registry) {
  for (const std::string& name : AllRecipeNames()) {
    for (RecipeOperation op : kAllRecipeOperations) {
      // The model reads the layout from the target: these rows run every
      // layout the recipe allows, with given scales and FP16 output.
      registry.AddRecipe(RecipeEntry{op, name, "scalar", [] { return true; }, RunScalarRecipe, Memory::kHost,
                                     /*preference=*/0, /*any_layout=*/true});
    }
  }
}

}  // namespace lowbit::registry
