// RunPlan(): a plan's parts in order, and the small pieces of check.h that belong
// to no part.
#include <chrono>
#include <utility>

#include "lowbit/check/check.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::check {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kSmoke: return "smoke";
    case Level::kCi: return "ci";
    case Level::kFull: return "full";
  }
  return "unknown-level";
}

bool ParseLevel(std::string_view name, Level* out) {
  for (Level level : kAllLevels) {
    if (name == LevelName(level)) {
      *out = level;
      return true;
    }
  }
  return false;
}

std::uint64_t Results::checked() const {
  std::uint64_t n = 0;
  for (const Row& row : rows) n += row.checked;
  return n;
}

std::uint64_t Results::mismatches() const {
  std::uint64_t n = 0;
  for (const Row& row : rows) n += row.mismatches;
  return n;
}

std::size_t Results::skipped_rows() const {
  std::size_t n = 0;
  for (const Row& row : rows) n += row.skipped.empty() ? 0 : 1;
  return n;
}

Results RunPlan(const registry::Registry& registry, const Plan& plan) {
  Results results;
  const auto start = std::chrono::steady_clock::now();
  if (plan.threads < 1) {
    results.error = "threads must be at least 1, got " + std::to_string(plan.threads);
    return results;
  }
  if (!plan.filter.format.empty()) {
    bool known = false;
    for (FormatId format : kAllFormats) known |= plan.filter.format == Spec(format).name;
    if (!known) {
      results.error = "unknown format " + QuoteUserWord(plan.filter.format) + " (give a canonical name)";
      return results;
    }
  }
  const auto append = [&results](std::vector<Row> rows) {
    for (Row& row : rows) results.rows.push_back(std::move(row));
  };
  if (plan.parts.kernels) {
    append(CheckKernels(registry, plan.level, plan.filter, plan.threads, plan.progress));
  }
  if (plan.parts.recipes) append(CheckRecipes(registry, plan.level, plan.filter, plan.progress));
  if (plan.parts.packing) append(CheckPackings(registry, plan.level, plan.filter, plan.progress));
  if (plan.parts.matmul) append(CheckMatmuls(registry, plan.level, plan.filter, plan.progress));
  if (plan.parts.tensor_cores) append(CheckTensorCores(registry, plan.level, plan.filter, plan.progress));
  if (plan.parts.gpu_sweeps) append(CheckGpuSweeps(plan.level, plan.filter, plan.progress));
  if (plan.parts.oracle) {
    append(CheckModelAgainstOracle(plan.level, plan.filter, plan.threads, plan.progress));
  }
  results.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return results;
}

}  // namespace lowbit::check
