// One registry row per (operation, format, compiled Highway target):
// backend "simd:<TARGET>", then the recipe rows and the packing rows. A target the CPU lacks is registered but not
// available, so `lowbit verify` shows it as skipped (docs/design.md "Tests").
#include <cstdint>
#include <string>

#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
void RegisterSimdRecipes(registry::Registry& registry);  // register_simd_recipes.cc
void RegisterSimdPacking(registry::Registry& registry);  // register_simd_packing.cc
}  // namespace lowbit::simd

namespace lowbit::registry {

void RegisterSimdBackends(Registry& registry) {
  for (const std::int64_t target : simd::CompiledTargets()) {
    for (Operation operation : kAllOperations) {
      for (FormatId format : kAllFormats) {
        if (!OperationApplies(operation, format)) continue;
        registry.Add(KernelEntry{
            .operation = operation,
            .format = format,
            .backend = std::string("simd:") + simd::TargetName(target),
            .supports = [](const ConvertArgs& args) { return simd::Supports(args); },
            .available = [target] { return simd::TargetAvailable(target); },
            .run = [target](const ConvertArgs& args) { return simd::ConvertOnTarget(target, args); },
            .memory = Memory::kHost,
            .preference = simd::TargetPreference(target),
        });
      }
    }
  }
  simd::RegisterSimdRecipes(registry);
  simd::RegisterSimdPacking(registry);
}

}  // namespace lowbit::registry
