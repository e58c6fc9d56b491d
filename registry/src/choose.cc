// See choose.h.
#include "lowbit/registry/choose.h"

#include <string>
#include <string_view>

namespace lowbit::registry {

const KernelEntry* ChooseConvertRow(const Registry& registry, const ConvertArgs& args, Memory memory) {
  const KernelEntry* best = nullptr;
  for (const KernelEntry& e : registry.Entries()) {
    if (e.operation != args.operation || e.format != args.format || e.memory != memory) continue;
    if (best != nullptr && e.preference <= best->preference) continue;
    if (!e.available() || (e.supports && !e.supports(args))) continue;
    best = &e;
  }
  return best;
}

std::string RecipeRowName(const recipe::Target& target) {
  const recipe::Recipe& r = *target.recipe;
  return r.family() == recipe::Family::kScaled ? recipe::RecipeName(r) + "/" + recipe::LayoutName(target.layout)
                                               : recipe::RecipeName(r);
}

namespace {

// "int8:ao-sym/tensor" is a row of recipe "int8:ao-sym"; "mxfp4:ocp" its own.
bool RowOfRecipe(std::string_view row, std::string_view recipe) {
  return row.substr(0, recipe.size()) == recipe && (row.size() == recipe.size() || row[recipe.size()] == '/');
}

}  // namespace

const RecipeEntry* ChooseRecipeRow(const Registry& registry, const RecipeArgs& args, Memory memory) {
  if (args.target.recipe == nullptr) return nullptr;
  const std::string exact = RecipeRowName(args.target);
  const std::string base = recipe::RecipeName(*args.target.recipe);
  const RecipeEntry* best = nullptr;
  bool best_exact = false;
  for (const RecipeEntry& e : registry.RecipeEntries()) {
    if (e.operation != args.operation || e.memory != memory) continue;
    const bool is_exact = e.recipe == exact;
    if (!is_exact && !(e.any_layout && RowOfRecipe(e.recipe, base))) continue;
    // A row registered under this very name wins over a row that only reads
    // the layout from the target; then the preference.
    if (best != nullptr && (best_exact > is_exact || (best_exact == is_exact && e.preference <= best->preference))) {
      continue;
    }
    if (!e.available() || (e.supports && !e.supports(args))) continue;
    best = &e;
    best_exact = is_exact;
  }
  return best;
}

const MatmulEntry* ChooseMatmulRow(const Registry& registry, MatmulOperation operation, std::string_view weight,
                                   matmul::ActivationType activation, matmul::OutputType output, Memory memory) {
  weight = CanonicalMatmulWeightName(weight);  // an older name finds its rows
  for (const MatmulEntry& e : registry.MatmulEntries()) {
    if (e.operation != operation || e.weight != weight || e.activation != activation || e.output != output) continue;
    if (static_cast<bool>(e.run_on_device) != (memory == Memory::kDevice)) continue;
    if (e.available && !e.available()) continue;
    return &e;
  }
  return nullptr;
}

}  // namespace lowbit::registry
