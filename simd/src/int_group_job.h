// What the non-target code hands a per-target INT4 group kernel
// (int_group_quantize.cc), already validated: groups are `group` consecutive
// elements of the flattened row-major matrix (per-group along K, per-row and
// per-tensor layouts all tile the array that way).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/block/int_quant_params.h"
#include "lowbit/formats/block/int_quant_recipe.h"

namespace lowbit::simd {

struct Int4GroupJob {
  const block::IntQuantRecipe* recipe;  // INT4 or UINT4 element, half-even or half-away
  const float* x;
  std::size_t count;  // rows * cols
  std::size_t group;  // elements per group; divides count
  std::uint8_t* packed;  // (count + 1) / 2 bytes, element 0 in the low nibble
  block::QuantParams* params;  // count / group entries
  std::uint8_t* scratch;       // kInt4ScratchCodes bytes: one group chunk's codes
};

struct Int4GroupDequantizeJob {
  const block::IntQuantRecipe* recipe;
  const std::uint8_t* packed;
  std::size_t count;
  std::size_t group;
  const block::QuantParams* params;
  float* out;
};

// Codes of one chunk of a group wait here (one per byte) before packing: a
// multiple of every target's lane count, small enough for L1.
inline constexpr std::size_t kInt4ScratchCodes = 4096;

}  // namespace lowbit::simd
