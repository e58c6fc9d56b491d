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

#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::block {

inline constexpr float kTeFltMax = recipe::kF32Max;  // std::numeric_limits<float>::max()
using recipe::detail::TeScaleFromAmax;

}  // namespace lowbit::block
