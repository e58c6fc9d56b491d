// TransformerEngine's FP8 scale from an amax (docs/formats-reference.md §7 [TE]
// recipe/recipe_common.cuh compute_scale_from_amax), used per tensor by
// current and delayed scaling and per 128 x 128 / 1 x 128 block by
// Float8BlockScaling. Step by step, in TE's order:
//   1. amax < eps -> amax = eps                  (a NaN compares false)
//   2. amax Inf, 0 or NaN -> scale 1             (the all-zero guard)
//   3. scale = __fdiv_rn(max_fp8, amax)          (FP32 division, RN)
//   4. scale Inf -> value_for_inf = FLT_MAX      (amax too small)
//   5. force_pow_2_scales: scale_bits &= 0xFF800000 (round down to 2^k)
// and scale_inv = reciprocal(scale) = __frcp_rn(scale), the stored factor.
#pragma once

#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/config.h"

namespace lowbit::block {

inline constexpr float kTeFltMax = 3.40282347e38f;  // std::numeric_limits<float>::max()
static_assert(kTeFltMax == F32FromBits(0x7F7FFFFFu));
inline constexpr std::uint32_t kTePow2Mask = 0xFF800000u;  // sign + exponent bits

LOWBIT_HD_CONSTEXPR float TeScaleFromAmax(float amax, float max_fp8, bool force_pow_2_scales, float epsilon) {
  if (amax < epsilon) amax = epsilon;
  const std::uint32_t bits = F32Bits(amax);
  if (!F32IsFinite(bits) || amax == 0.0f) return 1.0f;  // Inf or NaN, or 0
  float scale = max_fp8 / amax;
  if (!F32IsFinite(F32Bits(scale))) scale = kTeFltMax;
  if (force_pow_2_scales) scale = F32FromBits(F32Bits(scale) & kTePow2Mask);
  return scale;
}

}  // namespace lowbit::block
