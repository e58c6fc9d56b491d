// What the non-target code hands a per-target block kernel (block_quantize.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "encode_plan.h"
#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::simd {

// Whether block_scale-inl.h VectorMxScaleCodes implements r's scale rule
// (the bit-level MX rules); the MX quantizers call the model's ChooseScale
// per block for the others.
inline bool VectorMxScaleRule(const recipe::Recipe& r) {
  return r.family() == recipe::Family::kMx &&
         (r.scale_rule == recipe::ScaleRule::kMxFloor || r.scale_rule == recipe::ScaleRule::kMxCeil ||
          r.scale_rule == recipe::ScaleRule::kMxEven || r.scale_rule == recipe::ScaleRule::kMxRceil);
}

struct MxJob {
  const recipe::Recipe* recipe;    // an MX recipe
  const EncodePlan* element_plan;  // MakeEncodePlan(recipe->element, recipe->element_encode)
  const float* x;
  std::size_t count;
  std::uint8_t* codes;   // count bytes, one code per byte (low bits)
  std::uint8_t* scales;  // ceil(count / recipe->layout.size) E8M0 codes
  // By E8M0 code c: the factor that multiplies x, 2^-e or the recipe's own
  // (alternatives/mx_block.h MxScaleByReciprocal, proven equal to the
  // model's ScaledElement for every MX recipe and code by
  // proptests/backends/alternatives_test.cc, dividing recipes included), and
  // whether the model's decode of c is NaN.
  const float* scale_factor;
  const std::uint8_t* scale_is_nan;
  // recipe::ScaledElement for a block whose scale is NaN (one NaN for every x).
  float nan_scale_element;
};

}  // namespace lowbit::simd

namespace lowbit::simd {

struct Nvfp4Job {
  const recipe::Recipe* recipe;    // an NVFP4 recipe (recipe/catalog.h)
  const EncodePlan* element_plan;  // MakeEncodePlan(recipe->element, recipe->element_encode)
  // The model's UE4M3 conversion of the block scale (MakeEncodePlan(
  // recipe->scale_format, recipe::detail::Nvfp4ScaleOptions(*recipe))) and
  // its decode of every scale byte (recipe::StoredScale(...).decode, i.e.
  // DecodeToF32(recipe->scale_format, byte)): what block_scale-inl.h
  // VectorNvfp4Scale reads besides the amaxes and the tensor scale.
  const EncodePlan* scale_plan;
  const float* scale_decode;  // 256 entries
  const float* x;
  std::size_t count;
  // packed: (count + 1) / 2 bytes, two codes per byte, element 0 in the low
  // nibble (packing.h PackNibbles, NibbleOrder::kLowFirst, the catalog's
  // NVFP4 packing); else count bytes, one code per byte.
  bool packed;
  std::uint8_t* codes;
  std::uint8_t* scales;  // ceil(count / 16) UE4M3 codes
  recipe::TensorScale* tensor_scale;  // out
  // Null: the tensor scale comes from x's own amax (the tensor amax pass);
  // else this one, chosen over the whole tensor of which x is a part
  // (simd.h Quantize quantizes 4-bit recipes a chunk at a time).
  const recipe::TensorScale* given_tensor_scale;
};

// The amax of a whole array under the recipe's NaN rule (recipe/steps.h
// CombineAmax), for the tensor scale of a tensor quantized in chunks.
struct ArrayAmaxJob {
  const float* x;
  std::size_t count;
  AmaxNan rule;
  float* amax;  // out
};

// The NVFP4 vector scale step over an array of amaxes (the test hook
// simd/block_scale.h Nvfp4ScalesOnTarget).
struct Nvfp4ScaleArrayJob {
  const recipe::Recipe* recipe;  // an NVFP4 recipe (only its scale rule is read)
  const EncodePlan* scale_plan;  // as Nvfp4Job::scale_plan
  const float* scale_decode;     // as Nvfp4Job::scale_decode
  recipe::TensorScale tensor;
  const std::uint32_t* amax;  // FP32 bits, any pattern
  std::size_t count;
  std::uint8_t* codes;      // count UE4M3 codes
  std::uint32_t* factors;   // count FP32 element factors (bits)
};

}  // namespace lowbit::simd

namespace lowbit::simd {

struct MxDequantizeJob {
  const recipe::Recipe* recipe;  // the MX format's recipe (dequantization reads no profile field)
  const float* scale_table;      // recipe::StoredScale(*recipe, byte).decode for every byte
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
  const recipe::Recipe* recipe;  // an NVFP4 recipe
  const float* scale_table;      // recipe::StoredScale(*recipe, byte).decode for every byte
  recipe::TensorScale tensor_scale;
  const std::int32_t* table;  // E2M1 decode table (FP32 bits)
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  std::size_t count;
  float* out;
};

}  // namespace lowbit::simd
