// What the checks run every element operation on: the option sets (an
// encode's rounding / overflow / NaN policies, a decode's NaN output) and the
// inputs per level. Public so that a user's kernel test can draw the same
// inputs the harness uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lowbit/check/check.h"
#include "lowbit/formats/policy.h"
#include "lowbit/registry/registry.h"

namespace lowbit::check {

// The option sets an encode is checked with: every rounding mode with the
// format's own overflow rule and with saturation, two sets that flip every
// NaN / zero / sign policy to its other values, and every profile's own
// options for `dst` (the nvidia ones in each cvt rounding mode, options.cc).
// `exhaustive` marks the
// sets the full level runs on all 2^32 FP32 inputs.
struct EncodeCombo {
  std::string name;
  EncodeOptions options;
  bool exhaustive = false;
};
std::vector<EncodeCombo> EncodeCombos(const FormatSpec& dst);

// The option sets a decode is checked with: the default (payload kept), the
// two NVIDIA / library NaN outputs and every profile's decode options for
// `src`. The first is the exhaustive one.
struct DecodeCombo {
  std::string name;
  DecodeOptions options;
};
std::vector<DecodeCombo> DecodeCombos(const FormatSpec& src);

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
// overflow thresholds, and the boundary list of docs/formats-reference.md §9.
// 16-bit formats use a stride of their codes.
std::vector<std::uint32_t> BoundaryF32(const FormatSpec& dst);

// What an operation's rows run on at a level (inputs.cc says what each level
// holds); `exhaustive_combo` is EncodeCombo::exhaustive (decodes: the first
// DecodeCombo).
InputSet InputsFor(registry::Operation operation, const FormatSpec& spec, Level level,
                   bool exhaustive_combo);

}  // namespace lowbit::check
