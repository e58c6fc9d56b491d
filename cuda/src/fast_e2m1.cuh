// FP32 -> E2M1 in software for Hopper, which has no FP4 cvt (docs/formats-reference.md §2): the
// rounding of the model with the NVFP4/MX element options (RNE, saturate,
// NaN -> +6, -0 kept; docs/formats-reference.md §4.5), equal to rounding to the nearest
// points of the E2M1 grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}. A tie goes to the
// even code, hence >= at 0.75, 1.75, 3.5 and > at 0.25, 1.25, 2.5, 5.
// The verification test sweeps all 2^32 inputs against the model.
#pragma once

#include <cstdint>

namespace lowbit::cuda::detail {

// The first integer form, kept as the A/B baseline of the benchmark
// (tuning.h variant 1) and swept by the same test.
__device__ __forceinline__ std::uint32_t EncodeE2m1TwoPath(float x) {
  // Integer form of the same rounding (about half the instructions of seven
  // comparisons, which made the FP4 recipes compute-bound):
  //  |x| >= 1: round the FP32 significand to one bit, ties to even, by adding
  //    0x1FFFFF plus the kept bit; (bits >> 22) - 252 is then the E2M1 code
  //    (exponent 127 -> codes 2, 3), capped at 7 (6.0; Inf and NaN land there).
  //  |x| < 1: the multiples of 0.5 are the codes 0, 1, 2; adding 2^22 (whose
  //    ulp is 0.5) rounds to them with ties to even in one FP32 addition.
  const std::uint32_t bits = __float_as_uint(x);
  const std::uint32_t u = bits & 0x7FFFFFFFu;
  const std::uint32_t big = min(((u + 0x1FFFFFu + ((u >> 22) & 1u)) >> 22) - 252u, 7u);
  const std::uint32_t small = __float_as_uint(__fadd_rn(__uint_as_float(u), 4194304.0f)) - 0x4A800000u;
  const std::uint32_t mag = u < 0x3F800000u ? small : big;
  // NaN: positive max (PTX .satfinite for e2m1x2); otherwise keep the sign.
  return u > 0x7F800000u ? 7u : (mag | ((bits >> 28) & 8u));
}

// One FP32 addition for every binade (about 13 instructions against 16):
// the E2M1 spacing is 0.5 below 2 and 2^(E-1) in binade E >= 1, so with
// E' = clamp(E, 0, 3) the number m = 2^(22 + E') has that spacing as its
// ulp, and |x| + m rounds |x| to the E2M1 grid with ties to even in one
// addition (an even multiple of the spacing is an even code: 1.25 -> 1.0
// code 2, 2.5 -> 2 code 4, 5 -> 4 code 6). Adding m with x's sign keeps the
// sign in the sum, so the integer difference bits(x + m) - bits(m) is the
// multiple k of the spacing (0..4) and the code is k + 2E', capped at 7 (6.0:
// overflow, Inf; E' = 3 stands for every binade >= 3). A NaN sum is the
// canonical +NaN 0x7FFFFFFF on NVIDIA GPUs (docs/formats-reference.md §3.3), whose difference
// is huge and whose sign is 0: +6, code 7, as the recipes' NaN -> +max.
// -0 stays code 8. The test sweeps all 2^32 inputs against the model.
__device__ __forceinline__ std::uint32_t EncodeE2m1Fast(float x) {
  const std::uint32_t bits = __float_as_uint(x);
  const std::uint32_t eb = min(max(bits & 0x7F800000u, 0x3F800000u), 0x41000000u);
  const std::uint32_t m = (eb + 0x0B000000u) | (bits & 0x80000000u);  // +-2^(22 + E')
  const std::uint32_t s = __float_as_uint(__fadd_rn(x, __uint_as_float(m)));
  const std::uint32_t mag = min(s - m + ((eb - 0x3F800000u) >> 22), 7u);
  return mag | ((s >> 28) & 8u);
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
