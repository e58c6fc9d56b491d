// The recipe row contract (recipe_contract.h): the rows its rules require of
// each backend, and the difference between those and a registry's rows.
#include "lowbit/registry/recipe_contract.h"

#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

// One listed (name, layout) of a catalog recipe, as AllRecipeNames lists it.
struct ListedName {
  std::string name;
  recipe::Layout layout;
};

std::vector<ListedName> ListedNames(const recipe::Recipe& r) {
  if (r.family() != recipe::Family::kScaled) return {{recipe::RecipeName(r), r.layout}};
  std::vector<ListedName> names;
  for (const recipe::Layout& layout : kListedScaledLayouts) {
    names.push_back({recipe::RecipeName(r) + "/" + recipe::LayoutName(layout), layout});
  }
  return names;
}

bool LibraryOf(const std::string& backend, BackendLibrary* out) {
  if (backend == "scalar") *out = BackendLibrary::kScalar;
  else if (backend.rfind("simd:", 0) == 0) *out = BackendLibrary::kSimd;
  else if (backend == "cuda") *out = BackendLibrary::kCuda;
  else return false;
  return true;
}

bool AwaitingKernels(const recipe::Recipe& r) {
  const std::string name = recipe::RecipeName(r);
  for (const char* awaiting : kRecipesAwaitingKernels) {
    if (name == awaiting) return true;
  }
  return false;
}

bool Matches(const RecipeRowRule& rule, const recipe::Recipe& r, const recipe::Layout& layout) {
  if (rule.family != r.family()) return false;
  if (rule.library != BackendLibrary::kScalar && AwaitingKernels(r)) return false;
  if (rule.profile != nullptr && std::string(rule.profile) != r.profile) return false;
  if (rule.element == ElementKind::kInteger && r.element.IsFloat()) return false;
  if (rule.element == ElementKind::kFloat && !r.element.IsFloat()) return false;
  return (rule.layouts & GeometryBit(layout.geometry)) != 0;
}

using Key = std::tuple<int, std::string, std::string>;  // operation, recipe, backend
Key KeyOf(const RecipeRowKey& k) { return {static_cast<int>(k.operation), k.recipe, k.backend}; }

std::string Describe(const RecipeRowKey& k) {
  return k.backend + " " + RecipeOperationName(k.operation) + " " + k.recipe;
}

}  // namespace

const char* BackendLibraryName(BackendLibrary library) {
  switch (library) {
    case BackendLibrary::kScalar: return "scalar";
    case BackendLibrary::kSimd: return "simd";
    case BackendLibrary::kCuda: return "cuda";
  }
  return "unknown-library";
}

std::vector<RecipeRowKey> RequiredRecipeRows(const std::vector<std::string>& backends) {
  std::vector<RecipeRowKey> rows;
  for (const std::string& backend : backends) {
    BackendLibrary library;
    if (!LibraryOf(backend, &library)) continue;
    for (const recipe::Recipe& r : recipe::kAllRecipes) {
      for (const ListedName& listed : ListedNames(r)) {
        bool quantize = false, dequantize = false;
        for (const RecipeRowRule& rule : kRecipeRowContract) {
          if (rule.library != library || !Matches(rule, r, listed.layout)) continue;
          quantize |= rule.quantize;
          dequantize |= rule.dequantize;
        }
        if (quantize) rows.push_back({RecipeOperation::kQuantizeRecipe, listed.name, backend});
        if (dequantize) rows.push_back({RecipeOperation::kDequantizeRecipe, listed.name, backend});
      }
    }
  }
  return rows;
}

std::vector<std::string> RecipeRowProblems(const std::vector<RecipeRowKey>& rows,
                                           const std::vector<std::string>& backends) {
  std::vector<std::string> problems;
  std::set<Key> present;
  for (const RecipeRowKey& row : rows) present.insert(KeyOf(row));
  std::set<Key> required;
  for (const RecipeRowKey& row : RequiredRecipeRows(backends)) {
    required.insert(KeyOf(row));
    if (present.count(KeyOf(row)) == 0) problems.push_back("missing: " + Describe(row));
  }
  std::set<std::string> listed, awaiting;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    for (const ListedName& name : ListedNames(r)) {
      listed.insert(name.name);
      if (AwaitingKernels(r)) awaiting.insert(name.name);
    }
  }
  const std::set<std::string> contract_backends(backends.begin(), backends.end());
  for (const RecipeRowKey& row : rows) {
    if (listed.count(row.recipe) == 0) {
      recipe::Target target;
      std::string error;
      problems.push_back(Describe(row) + ": " +
                         (ParseRecipe(row.recipe, &target, &error)
                              ? "not a listed name of a catalog recipe (AllRecipeNames)"
                              : "not a catalog recipe (" + error + ")"));
      continue;
    }
    if (contract_backends.count(row.backend) > 0 && required.count(KeyOf(row)) == 0 &&
        !(row.backend != "scalar" && awaiting.count(row.recipe) > 0)) {
      problems.push_back(Describe(row) + ": registered but not in kRecipeRowContract (add a rule)");
    }
  }
  return problems;
}

std::vector<RecipeRowKey> RecipeRowKeys(const Registry& registry) {
  std::vector<RecipeRowKey> keys;
  for (const RecipeEntry& entry : registry.RecipeEntries()) {
    keys.push_back({entry.operation, entry.recipe, entry.backend});
  }
  return keys;
}

std::vector<std::string> ContractBackends(const Registry& registry, const std::vector<std::string>& built_libraries,
                                          std::vector<std::string>* problems) {
  std::vector<std::string> backends;
  for (const std::string& library : built_libraries) {
    if (library == "scalar" || library == "cuda") {
      backends.push_back(library);
    } else if (library == "simd") {
      // Each compiled target registers element rows whether or not the CPU
      // runs it, so the element rows name every target.
      std::set<std::string> targets;
      for (const KernelEntry& entry : registry.Entries()) {
        if (entry.backend.rfind("simd:", 0) == 0) targets.insert(entry.backend);
      }
      if (targets.empty() && problems != nullptr) {
        problems->push_back("simd is built but registered no element rows, so no target is known");
      }
      backends.insert(backends.end(), targets.begin(), targets.end());
    }
  }
  return backends;
}

}  // namespace lowbit::registry
