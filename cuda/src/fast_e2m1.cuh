// FP32 -> E2M1 in software for Hopper, which has no FP4 cvt (FACTS §2): the
// rounding of the model with the NVFP4/MX element options (RNE, saturate,
// NaN -> +6, -0 kept; FACTS §4.5) as seven comparisons against the decision
// points of the E2M1 grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}. A tie goes to the
// even code, hence >= at 0.75, 1.75, 3.5 and > at 0.25, 1.25, 2.5, 5.
// The verification test sweeps all 2^32 inputs against the model.
#pragma once

#include <cstdint>

namespace lowbit::cuda::detail {

__device__ __forceinline__ std::uint32_t EncodeE2m1Fast(float x) {
  const float a = fabsf(x);
  std::uint32_t m = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) +
                    (a >= 3.5f) + (a > 5.0f);
  const std::uint32_t sign = (__float_as_uint(x) >> 28) & 8u;
  // NaN fails every comparison: positive max (PTX .satfinite for e2m1x2).
  return a != a ? 7u : (m | sign);
}

// E2M1 code -> FP32 value, exact: 0, 0.5 for magnitudes 0 and 1, else
// (1 + m/2) * 2^(e-1) built from the bits.
__device__ __forceinline__ float DecodeE2m1Fast(std::uint32_t code) {
  const std::uint32_t mag = code & 7u;
  const float v = mag < 2 ? 0.5f * static_cast<float>(mag)
                          : __uint_as_float((((mag >> 1) + 126u) << 23) | ((mag & 1u) << 22));
  return (code & 8u) ? -v : v;
}

}  // namespace lowbit::cuda::detail
