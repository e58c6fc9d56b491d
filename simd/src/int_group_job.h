// What the non-target code hands a per-target scaled-group kernel
// (int_group_quantize.cc), already validated: every scaled recipe simd.h
// Runs takes (INT8, INT4, UINT4, FP8 elements), over any layout of
// int_quant_layout.h. A group is group_rows segments of group_cols
// consecutive elements of the row-major matrix (one segment when a group
// spans whole rows: per row, per tensor).
#pragma once

#include <cstddef>
#include <cstdint>

#include "encode_plan.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd {

// Whether int_group_scale-inl.h VectorIntGroupScale implements r's scale
// rule: an integer element whose scale, for a group without NaN, is a
// function of the group's amax (TorchAO symmetric, whose max(-min, max) is
// the amax there, and the common amax / qmax rules). The group kernels call
// the model's ChooseScale per group for the other rules.
inline bool VectorIntScaleRule(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kScaled && !r.element.IsFloat() &&
         (r.scale_rule == recipe::ScaleRule::kAoSymmetric || r.scale_rule == recipe::ScaleRule::kAmaxOverQmax ||
          r.scale_rule == recipe::ScaleRule::kAmaxOverQmaxFloored);
}

// Whether int_group_scale-inl.h VectorGptqScale implements r's scale rule:
// GPTQ's min / max rules (symmetric and asymmetric) with an FP32 stored
// scale (the FP16 repack keeps the model's per-group step).
inline bool VectorMinMaxScaleRule(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kScaled && !r.element.IsFloat() &&
         r.element_quirk != recipe::ElementQuirk::kRepackWithFp16Scale &&
         (r.scale_rule == recipe::ScaleRule::kGptqSymmetric || r.scale_rule == recipe::ScaleRule::kGptqAsymmetric);
}

// VectorGptqScale over arrays of minima and maxima (the test hook
// simd/block_scale.h MinMaxGroupScalesOnTarget).
struct MinMaxGroupScaleArrayJob {
  const recipe::Recipe* recipe;  // VectorMinMaxScaleRule(*recipe)
  const std::uint32_t* min;      // FP32 bits, finite, min <= max
  const std::uint32_t* max;
  std::size_t count;
  std::uint32_t* decodes;
  std::uint32_t* factors;
  std::int32_t* zero_points;
};

// The vector scale step over an array of amaxes (the test hook
// simd/block_scale.h IntGroupScalesOnTarget).
struct IntGroupScaleArrayJob {
  const recipe::Recipe* recipe;  // VectorIntScaleRule(*recipe)
  const std::uint32_t* amax;     // FP32 bits, non-negative, not NaN
  std::size_t count;
  std::uint32_t* decodes;        // count FP32 stored scales (BlockScale decode, bits)
  std::uint32_t* factors;        // count FP32 element factors (BlockScale factor, bits)
  std::int32_t* zero_points;     // count zero points
};

struct IntGroupJob {
  const recipe::Recipe* recipe;  // a scaled recipe, half-even or half-away rounding
  // FP8 elements: MakeEncodePlan(recipe->element, recipe->element_encode)
  // (TE FP8, vLLM FP8).
  const EncodePlan* fp8_plan;
  const float* x;
  std::size_t cols;
  block::GroupGrid grid;
  // true: INT4 / UINT4 codes two per byte, element 0 in the low nibble
  // (packing.h PackNibbles kLowFirst); false: one code per byte (low bits).
  bool packed;
  std::uint8_t* codes;
  // grid.Count() entries each: the stored scale of every group (BlockScale
  // decode) and, when the recipe has one, its zero point (else null).
  float* scales;
  std::int32_t* zero_points;
  std::uint8_t* scratch;       // kIntGroupScratchCodes bytes (packed only)
};

struct IntGroupDequantizeJob {
  const recipe::Recipe* recipe;
  const std::int32_t* fp8_table;  // TE FP8: FP32 bits of DecodeToF32(element, c), 256 entries
  const std::uint8_t* codes;
  std::size_t cols;
  block::GroupGrid grid;
  bool packed;
  const float* scales;              // grid.Count() stored scales
  const std::int32_t* zero_points;  // grid.Count() zero points, or null: 0
  float* out;
};

// The group kernels over a scaled recipe, with the recipe's packing (one
// code per byte, or INT4 / UINT4 two per byte low nibble first):
// int_group_quantize.cc; called by simd.h Quantize / Dequantize
// (recipe_quantize.cc).
registry::Status QuantizeRecipeGroups(std::int64_t target, const recipe::Recipe& recipe,
                                      const block::QuantLayout& layout, const float* x, std::size_t rows,
                                      std::size_t cols, std::uint8_t* codes, float* scales,
                                      std::int32_t* zero_points);
registry::Status DequantizeRecipeGroups(std::int64_t target, const recipe::Recipe& recipe,
                                        const block::QuantLayout& layout, const std::uint8_t* codes,
                                        std::size_t rows, std::size_t cols, const float* scales,
                                        const std::int32_t* zero_points, float* out);

// Codes of one chunk of a segment wait here (one per byte) before packing: a
// multiple of every target's lane count, small enough for L1.
inline constexpr std::size_t kIntGroupScratchCodes = 4096;

}  // namespace lowbit::simd
