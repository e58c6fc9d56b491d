// The table itself: a plain vector, keyed by (operation, format, backend).
#include "lowbit/registry/registry.h"

#include <utility>

namespace lowbit::registry {

Registry& Registry::Global() {
  static Registry registry;
  return registry;
}

void Registry::Add(KernelEntry entry) {
  for (KernelEntry& existing : entries_) {
    if (existing.operation == entry.operation && existing.format == entry.format &&
        existing.backend == entry.backend) {
      existing = std::move(entry);
      return;
    }
  }
  entries_.push_back(std::move(entry));
}

const KernelEntry* Registry::Find(Operation operation, FormatId format,
                                  std::string_view backend) const {
  for (const KernelEntry& entry : entries_) {
    if (entry.operation == operation && entry.format == format && entry.backend == backend) {
      return &entry;
    }
  }
  return nullptr;
}

void Registry::AddRecipe(RecipeEntry entry) {
  for (RecipeEntry& existing : recipe_entries_) {
    if (existing.operation == entry.operation && existing.recipe == entry.recipe &&
        existing.backend == entry.backend) {
      existing = std::move(entry);
      return;
    }
  }
  recipe_entries_.push_back(std::move(entry));
}

const RecipeEntry* Registry::FindRecipe(RecipeOperation operation, std::string_view recipe,
                                        std::string_view backend) const {
  for (const RecipeEntry& entry : recipe_entries_) {
    if (entry.operation == operation && entry.recipe == recipe && entry.backend == backend) {
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace lowbit::registry
