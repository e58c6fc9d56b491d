// `lowbit verify`: every registered kernel against the model, and the model
// against the oracle, on inputs chosen by level. Shared pieces of the
// verify_*.cc files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/registry/registry.h"
#include "progress.h"

namespace lowbit::tools {

enum class VerifyLevel { kSmoke, kCi, kFull };

// One line of the result table.
struct VerifyRow {
  std::string backend;
  std::string operation;
  std::string format;
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  // Why the row did not run ("backend not available here"); empty if it ran.
  std::string skipped;
  // The first mismatch, for the report below the table.
  std::string example;
  // Option combinations the kernel declared unsupported (not checked).
  int unsupported_combos = 0;
};

struct VerifyFilter {
  std::string format;   // empty: every format
  std::string backend;  // empty: every backend; else a substring of its name
  bool Format(const FormatSpec& spec) const { return format.empty() || format == spec.name; }
  bool Backend(const std::string& name) const {
    return backend.empty() || name.find(backend) != std::string::npos;
  }
};

// The option sets an encode is checked with: every rounding mode with the
// format's own overflow rule and with saturation, plus two sets that flip
// every NaN / zero / sign policy to its other values. `exhaustive` marks the
// sets the full level runs on all 2^32 FP32 inputs.
struct EncodeCombo {
  std::string name;
  EncodeOptions options;
  bool exhaustive = false;
};
std::vector<EncodeCombo> EncodeCombos(const FormatSpec& dst);
std::vector<DecodeOptions> DecodeCombos();

// The random word element `index` gets under kStochastic in combo `combo`
// (splitmix64: every bit pattern of the discarded part meets varied words).
std::uint32_t RandomWord(std::uint64_t index, int combo);

// Inputs: every code below `all_count`, or else an explicit list followed by
// a list shared between rows (the FP32 sample, built once).
struct InputSet {
  std::uint64_t all_count = 0;
  std::vector<std::uint64_t> values;
  std::shared_ptr<const std::vector<std::uint64_t>> shared;
  std::uint64_t size() const {
    return all_count ? all_count : values.size() + (shared ? shared->size() : 0);
  }
  std::uint64_t At(std::uint64_t i) const {
    if (all_count) return i;
    return i < values.size() ? values[i] : (*shared)[i - values.size()];
  }
};

// FP32 bit patterns next to every rounding boundary of `dst`: its values,
// the midpoints between neighbours, one FP32 ulp either side of each, the
// overflow thresholds, and docs/formats-reference.md §9's list. 16-bit formats use a
// stride of their codes.
std::vector<std::uint32_t> BoundaryF32(const FormatSpec& dst);

// What an operation's rows run on at a level (see verify_inputs.cc).
InputSet InputsFor(registry::Operation operation, const FormatSpec& spec, VerifyLevel level,
                   bool exhaustive_combo);

std::vector<VerifyRow> VerifyBackends(const registry::Registry& registry, VerifyLevel level,
                                      const VerifyFilter& filter, int threads, Progress& progress);
// cuda-hw conversions swept over all their inputs on the GPU (ci and full
// levels; verify_gpu.cc, built with the CUDA backend).
std::vector<VerifyRow> VerifyGpuSweeps(VerifyLevel level, const VerifyFilter& filter, Progress& progress);
// Recipe rows (registry RecipeEntries) against the scalar rows (verify_recipes.cc).
std::vector<VerifyRow> VerifyRecipes(const registry::Registry& registry, VerifyLevel level, const VerifyFilter& filter, Progress& progress);
std::vector<VerifyRow> VerifyModelAgainstOracle(VerifyLevel level, const VerifyFilter& filter,
                                                int threads, Progress& progress);

}  // namespace lowbit::tools
