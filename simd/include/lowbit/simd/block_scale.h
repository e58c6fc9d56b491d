// The vector MX scale rule of the SIMD block quantizers (simd/src/
// block_scale-inl.h VectorMxScaleCodes), callable on its own so that
// proptests/backends/simd_block_scale_test.cc can compare it with the
// model's recipe::ChooseScale on every FP32 amax bit pattern, per target.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/recipe/recipe.h"
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

}  // namespace lowbit::simd
