// The block kernels' entries (block_quantize.cc) that simd.h Quantize and
// Dequantize (recipe_quantize.cc) call for MX and NVFP4 recipes: flat arrays
// of `count` elements in blocks of the recipe's size, one element code per
// byte (MXFP4 is packed after and unpacked before, a chunk at a time; NVFP4
// also has a packing entry), one scale byte per
// block, the last block short and zero-padded. Each checks its own
// arguments (null buffers, overflowing sizes, overlaps) before any kernel runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd::detail {

// An MX recipe (simd.h Runs): codes and E8M0 scale codes.
registry::Status QuantizeMxArray(std::int64_t target, const recipe::Recipe& r, const float* x, std::size_t count,
                                 std::uint8_t* codes, std::uint8_t* scales);
registry::Status DequantizeMxArray(std::int64_t target, const recipe::Recipe& r, const std::uint8_t* codes,
                                   const std::uint8_t* scales, std::size_t count, float* out);

// An NVFP4 recipe with the semantics of the catalog's recipe of its scale
// rule (simd.h Runs): codes, UE4M3 scale codes and the tensor scale, chosen
// from x's amax, or `given` (then also written to *tensor_scale) when x is
// one chunk of a larger tensor whose scale Nvfp4TensorScaleOfArray chose.
registry::Status QuantizeNvfp4Array(std::int64_t target, const recipe::Recipe& r, const float* x,
                                    std::size_t count, std::uint8_t* codes, std::uint8_t* scales,
                                    recipe::TensorScale* tensor_scale, const recipe::TensorScale* given = nullptr);
// The same with the codes packed two per byte, element 0 in the low nibble
// (packing.h PackNibbles, NibbleOrder::kLowFirst): (count + 1) / 2 bytes,
// the tensor scale chosen from x's amax. The kernel packs the codes of each
// group of blocks as it encodes them.
registry::Status QuantizeNvfp4PackedArray(std::int64_t target, const recipe::Recipe& r, const float* x,
                                          std::size_t count, std::uint8_t* packed, std::uint8_t* scales,
                                          recipe::TensorScale* tensor_scale);
// The model's tensor scale (recipe/steps.h ChooseTensorScale) of x's amax.
registry::Status Nvfp4TensorScaleOfArray(std::int64_t target, const recipe::Recipe& r, const float* x,
                                         std::size_t count, recipe::TensorScale* tensor_scale);
registry::Status DequantizeNvfp4Array(std::int64_t target, const recipe::Recipe& r,
                                      const recipe::TensorScale& tensor_scale, const std::uint8_t* codes,
                                      const std::uint8_t* scales, std::size_t count, float* out);

}  // namespace lowbit::simd::detail
