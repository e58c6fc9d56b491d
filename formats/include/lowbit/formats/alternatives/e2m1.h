// Named alternatives to the model's E2M1 element step: faster formulations
// that the CUDA FP4 recipe kernels use, each proven equal to the model on
// every input by proptests/backends/alternatives_test.cc (every 2^32 FP32 input at
// LOWBIT_TEST_LEVEL=full, the binades where the code changes plus a strided
// sample at ci) and, for the device compilation, by the GPU sweep of
// cuda/tests/fast_e2m1_test.cu (all 2^32 inputs on every GPU run).
//
// The model step they replace is
//   EncodeF32(kE2m1, x, recipe::SatfiniteElements())
// (recipe/catalog.h: RNE, saturate to +-6, NaN -> +6, -0 kept as code 8), the
// element encode of NVFP4 and, with the same meaning for E2M1, of the MX
// recipes with E2M1 elements (docs/formats-reference.md §4.5, §6.1). The model's generic RoundPack takes about twice the
// instructions, which made the FP4 recipes of BF16 input arithmetic-bound
// (bench/RESULTS-archive-2026.md "CUDA").
//
// Both encoders read the grid of E2M1 ({0, 0.5, 1, 1.5, 2, 3, 4, 6}: one
// mantissa bit, exponent bias 1, no Inf or NaN); the static_asserts below
// pin that they are written for exactly that spec.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"

namespace lowbit::alternatives {

namespace e2m1_detail {

inline constexpr FormatSpec kSpec = kE2m1;
static_assert(kSpec.IsFloat() && kSpec.has_sign && kSpec.exponent_bits == 2 && kSpec.mantissa_bits == 1 &&
                  kSpec.bias == 1 && kSpec.has_subnormals && kSpec.specials == SpecialCodes::kNone,
              "the formulations below are written for the E2M1 grid");
// The largest code (+6) and the sign bit, from the spec.
inline constexpr std::uint32_t kMaxCode = static_cast<std::uint32_t>(kSpec.MaxFiniteCode());
inline constexpr std::uint32_t kSignCode = static_cast<std::uint32_t>(kSpec.SignBit());
static_assert(kMaxCode == 7 && kSignCode == 8);
// FP32 bit fields (fp32_bits.h).
inline constexpr std::uint32_t kF32One = static_cast<std::uint32_t>(kF32Bias) << kF32MantissaBits;
static_assert(kF32One == 0x3F800000u);

LOWBIT_HD_CONSTEXPR std::uint32_t Min(std::uint32_t a, std::uint32_t b) { return a < b ? a : b; }
LOWBIT_HD_CONSTEXPR std::uint32_t Max(std::uint32_t a, std::uint32_t b) { return a < b ? b : a; }

// a + b in FP32, round to nearest even, with the NaN NVIDIA GPUs return for
// every NaN sum: the canonical 0x7FFFFFFF (docs/formats-reference.md §3.3).
// On the device it is __fadd_rn, which the compiler may not contract into an
// FMA with a preceding multiply; on the host an x86 addition returns the NaN
// operand instead, so the NaN is pinned to the GPU's here, making the host
// function the same function as the device one.
// (Constant evaluation, on either pass, takes the host formulation.)
LOWBIT_HD_CONSTEXPR std::uint32_t AddF32Bits(float a, float b) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return F32Bits(__fadd_rn(a, b));
#endif
  const std::uint32_t s = F32Bits(a + b);
  return F32IsNan(s) ? 0x7FFFFFFFu : s;
}

}  // namespace e2m1_detail

// One FP32 addition for every binade (about 13 operations against the
// model's generic rounding): the E2M1 spacing is 0.5 below 2 and 2^(E-1) in
// binade E >= 1, so with E' = clamp(E, 0, 3) the number m = 2^(22 + E') has
// that spacing as its ulp (FP32 has 23 fraction bits, and E2M1's one
// mantissa bit leaves 22 to round away), and |x| + m rounds |x| to the E2M1
// grid with ties to even in one addition (an even multiple of the spacing is
// an even code: 1.25 -> 1.0 code 2, 2.5 -> 2 code 4, 5 -> 4 code 6). Adding m
// with x's sign keeps the sign in the sum, so the integer difference
// bits(x + m) - bits(m) is the multiple k of the spacing (0..4) and the code
// is k + 2E', capped at +6 (overflow, Inf; E' = 3 stands for every binade
// >= 3). A NaN sum is 0x7FFFFFFF (AddF32Bits), whose difference is huge and
// whose sign is 0: +6, the model's NaN -> +max. -0 stays code 8.
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE2m1OneAddition(float x) {
  using namespace e2m1_detail;
  const std::uint32_t bits = F32Bits(x);
  // Exponent field clamped to binades 0..3 (1.0 .. 8.0).
  const std::uint32_t eb = Min(Max(bits & kF32ExponentMask, kF32One), kF32One + (3u << kF32MantissaBits));
  const std::uint32_t m = (eb + (22u << kF32MantissaBits)) | (bits & kF32SignMask);  // +-2^(22 + E')
  const std::uint32_t s = AddF32Bits(x, F32FromBits(m));
  // k + 2E': (eb - 1.0's bits) >> 22 is 2E'.
  const std::uint32_t mag = Min(s - m + ((eb - kF32One) >> (kF32MantissaBits - 1)), kMaxCode);
  return mag | ((s >> 28) & kSignCode);
}

// The first integer form, kept as the "before" of the benchmark's layout
// variants (cuda/src/layout.cuh ReplacedLayout) and swept by the same tests:
//  |x| >= 1: round the FP32 significand to one bit, ties to even, by adding
//    0x1FFFFF plus the kept bit; (bits >> 22) - 252 is then the code
//    (exponent 127 -> codes 2, 3), capped at +6 (Inf and NaN land there too).
//  |x| < 1: the multiples of 0.5 are the codes 0, 1, 2; adding 2^22 (whose
//    ulp is 0.5) rounds to them with ties to even in one FP32 addition.
//  NaN: +6, the model's NaN -> +max; otherwise the sign is kept.
LOWBIT_HD_CONSTEXPR std::uint32_t EncodeE2m1TwoPath(float x) {
  using namespace e2m1_detail;
  const std::uint32_t bits = F32Bits(x);
  const std::uint32_t u = bits & ~kF32SignMask;
  const std::uint32_t big = Min(((u + 0x1FFFFFu + ((u >> 22) & 1u)) >> 22) - 252u, kMaxCode);
  const std::uint32_t small = AddF32Bits(F32FromBits(u), F32Pow2(22)) - 0x4A800000u;
  const std::uint32_t mag = u < kF32One ? small : big;
  return u > kF32ExponentMask ? kMaxCode : (mag | ((bits >> 28) & kSignCode));
}

// E2M1 code -> FP32 value, exact, from the bits: magnitudes 0 and 1 are 0 and
// 0.5 (the subnormal), a normal code 2e + m is (1 + m/2) * 2^(e - 1). The
// model step it replaces is DecodeToF32(kE2m1, code); the tests compare all
// 16 codes.
LOWBIT_HD_CONSTEXPR float DecodeE2m1FromBits(std::uint32_t code) {
  using namespace e2m1_detail;
  const std::uint32_t mag = code & kMaxCode;
  const float v = mag < 2 ? 0.5f * static_cast<float>(mag)
                          : F32FromBits((((mag >> 1) + 126u) << kF32MantissaBits) | ((mag & 1u) << 22));
  return (code & kSignCode) ? -v : v;
}

}  // namespace lowbit::alternatives
