// The recipe rows' names, argument checks and the scalar backend: the model's
// whole-tensor functions (formats/.../recipe/tensor.h) over typed buffers.
#include <string>

#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/recipe_contract.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

namespace {

Status RunScalarRecipe(const RecipeArgs& a) {
  if (Status s = ValidateRecipeArgs(a); !s.ok) return s;
  if (a.rows * a.cols == 0) return Status::Ok();
  const recipe::Recipe& r = *a.target.recipe;
  const long rows = static_cast<long>(a.rows), cols = static_cast<long>(a.cols);
  const recipe::TensorStatus st =
      a.operation == RecipeOperation::kQuantizeRecipe
          ? recipe::QuantizeTensor(r, a.target.layout, a.x, rows, cols, a.q)
          : recipe::DequantizeTensor(r, a.target.layout, recipe::AsConst(a.q), rows, cols, a.out);
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
  constexpr std::size_t kMaxDimension = static_cast<std::size_t>(~0ul >> 2);
  if (rows > kMaxDimension || cols > kMaxDimension) {
    b.error = recipe::TensorStatusText(recipe::TensorStatus::kSizeOverflow);
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
  const std::string name = recipe::CanonicalName(a.target);
  if (a.rows * a.cols == 0) return Status::Ok();
  const RecipeBuffers b = RecipeBufferSizes(a.target, a.rows, a.cols);
  if (!b.ok) return Status::Error(name + ": " + b.error);
  const bool quantize = a.operation == RecipeOperation::kQuantizeRecipe;
  if (quantize ? a.x == nullptr : a.out == nullptr) return Status::Error(name + ": null input or output tensor");
  if (a.q.codes == nullptr) return Status::Error(name + ": null codes buffer");
  if (b.sizes.scale_codes > 0 && a.q.scale_codes == nullptr) return Status::Error(name + ": null scale codes buffer");
  if (b.sizes.scales > 0 && a.q.scales == nullptr) return Status::Error(name + ": null scales buffer");
  if (b.sizes.zero_points > 0 && a.q.zero_points == nullptr) return Status::Error(name + ": null zero points buffer");
  if (b.sizes.tensor_scales > 0 && a.q.tensor_scale == nullptr) return Status::Error(name + ": null tensor scale");
  return Status::Ok();
}

void RegisterScalarRecipes(Registry& registry) {
  for (const std::string& name : AllRecipeNames()) {
    for (RecipeOperation op : kAllRecipeOperations) {
      registry.AddRecipe(RecipeEntry{op, name, "scalar", [] { return true; }, RunScalarRecipe});
    }
  }
}

}  // namespace lowbit::registry
