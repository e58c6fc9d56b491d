// What the non-target code hands a per-target block kernel (block_quantize.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "encode_plan.h"
#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/mx_recipe.h"

namespace lowbit::simd {

struct MxJob {
  const block::BlockSpec* spec;
  const block::MxRecipe* recipe;
  const EncodePlan* element_plan;  // MakeEncodePlan(*spec->element, recipe->element)
  const float* x;
  std::size_t count;
  std::uint8_t* codes;   // count bytes, one code per byte (low bits)
  std::uint8_t* scales;  // ceil(count / block_size) E8M0 codes
};

}  // namespace lowbit::simd

#include "lowbit/formats/block/nvfp4_recipe.h"

namespace lowbit::simd {

struct Nvfp4Job {
  block::Nvfp4Recipe recipe;
  const EncodePlan* element_plan;  // E2M1 under block::detail::Nvfp4ElementOptions()
  const float* x;
  std::size_t count;
  std::uint8_t* codes;   // count bytes
  std::uint8_t* scales;  // ceil(count / 16) UE4M3 (E4M3 bits) codes
  block::Nvfp4TensorScale* tensor_scale;  // out
};

}  // namespace lowbit::simd

namespace lowbit::simd {

struct MxDequantizeJob {
  const block::BlockSpec* spec;
  const std::int32_t* table;  // element FP32 bits, MXINT8's 2^-6 folded in (exact)
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  std::size_t count;
  float* out;
};

struct PackJob {
  const std::uint8_t* codes;
  std::size_t count;
  std::uint8_t* packed;  // (count + 1) / 2 bytes, element 0 in the low nibble
};

}  // namespace lowbit::simd

namespace lowbit::simd {

struct Nvfp4DequantizeJob {
  block::Nvfp4Recipe recipe;
  block::Nvfp4TensorScale tensor_scale;
  const std::int32_t* table;  // E2M1 decode table (FP32 bits)
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  std::size_t count;
  float* out;
};

}  // namespace lowbit::simd
