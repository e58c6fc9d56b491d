// The vector scale steps of the SIMD block and group quantizers (simd/src/
// block_scale-inl.h VectorMxScaleCodes for MX, VectorNvfp4Scale for NVFP4;
// int_group_scale-inl.h VectorIntGroupScale and VectorGptqScale for integer
// groups), callable
// on their own so that proptests/backends/simd_block_scale_test.cc and
// simd_int_group_scale_test.cc can compare them with the model's
// recipe::ChooseScale on every FP32 amax bit pattern, per target.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd {

// Whether the MX block quantizers pick r's scales in vectors (the bit-level
// rules: floor, ceil, even, RCEIL); the others call the model per block.
bool HasVectorMxScale(const recipe::Recipe& r);

// codes[i] = the E8M0 code the MX quantizers on `target` (or kBestTarget)
// give a block whose amax has the FP32 bits amax_bits[i]. Errors: a recipe
// without a vector scale rule, null pointers with count > 0, a target not
// compiled in or not supported.
registry::Status MxScaleCodesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                      const std::uint32_t* amax_bits, std::size_t count,
                                      std::uint8_t* codes);

// codes[i] and factor_bits[i] = the UE4M3 block scale code and the FP32
// element factor (recipe::BlockScale code and factor) that the NVFP4
// quantizers on `target` (or kBestTarget) give a block whose amax has the
// FP32 bits amax_bits[i], under the tensor scale `tensor` (any values: the
// quantizers pass recipe::ChooseTensorScale's). Every NVFP4 rule has a
// vector form. Errors: a recipe simd.h Runs refuses, null pointers with
// count > 0, a target not compiled in or not supported.
registry::Status Nvfp4ScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                     const recipe::TensorScale& tensor, const std::uint32_t* amax_bits,
                                     std::size_t count, std::uint8_t* codes, std::uint32_t* factor_bits);

// Whether the group quantizers pick r's scales in vectors from each group's
// amax (integer elements under the TorchAO symmetric rule or the common
// amax / qmax rules); the others call the model per group.
bool HasVectorIntGroupScale(const recipe::Recipe& r);

// decode_bits[i], factor_bits[i] and zero_points[i] = the stored FP32 scale,
// the FP32 element factor and the zero point (recipe::BlockScale decode,
// factor, zero_point) that the group quantizers on `target` (or
// kBestTarget) give a group without NaN whose amax has the FP32 bits
// amax_bits[i] (+0 to +Inf). Errors: a recipe without a vector group scale
// rule, an amax with the sign bit set or NaN, null pointers with count > 0,
// a target not compiled in or not supported.
registry::Status IntGroupScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                        const std::uint32_t* amax_bits, std::size_t count,
                                        std::uint32_t* decode_bits, std::uint32_t* factor_bits,
                                        std::int32_t* zero_points);

// Whether the group quantizers pick r's scales and zero points in vectors
// from each group's min and max (GPTQ's rules with FP32 scales).
bool HasVectorMinMaxGroupScale(const recipe::Recipe& r);

// decode_bits[i], factor_bits[i] and zero_points[i] as IntGroupScalesOnTarget
// gives them, for a group without NaN or Inf whose least and greatest
// values have the FP32 bits min_bits[i] and max_bits[i]. Errors: a recipe
// without a vector min / max rule, a min or max that is not finite, a min
// above its max, null pointers with count > 0, a target not compiled in or
// not supported.
registry::Status MinMaxGroupScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                           const std::uint32_t* min_bits, const std::uint32_t* max_bits,
                                           std::size_t count, std::uint32_t* decode_bits,
                                           std::uint32_t* factor_bits, std::int32_t* zero_points);

}  // namespace lowbit::simd
