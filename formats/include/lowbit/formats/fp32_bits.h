// FP32 bit views that the block recipes need. Scale exponents are read from
// these bits, never from a float log2: FP32 log2 of an amax just below a
// power of two rounds up to the integer and picks a scale one too high
// (docs/design.md "Known traps (measured)").
//
// The recipes' arithmetic itself (divide, multiply, reciprocal) is written as
// plain `float` operations: IEEE 754 binary32 round-to-nearest-even on the
// host (SSE) and on CUDA devices (without -ftz / --use_fast_math, which would
// flush E8M0 code 0 = 2^-127, an FP32 subnormal; docs/formats-reference.md §3.1).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"

namespace lowbit {

inline constexpr std::uint32_t kF32SignMask = 0x80000000u;
inline constexpr std::uint32_t kF32ExponentMask = 0x7F800000u;
inline constexpr std::uint32_t kF32MantissaMask = 0x007FFFFFu;
inline constexpr int kF32MantissaBits = 23;
inline constexpr std::uint32_t kF32CanonicalNan = 0x7FC00000u;  // quiet, positive
inline constexpr std::uint32_t kF32QuietBit = 0x00400000u;       // the top mantissa bit (IEEE 754 §6.2.1)
inline constexpr int kF32Bias = 127;

LOWBIT_HD_CONSTEXPR std::uint32_t F32Bits(float x) { return BitCast<std::uint32_t>(x); }
LOWBIT_HD_CONSTEXPR float F32FromBits(std::uint32_t b) { return BitCast<float>(b); }

LOWBIT_HD_CONSTEXPR int F32ExponentField(std::uint32_t bits) {
  return static_cast<int>((bits & kF32ExponentMask) >> kF32MantissaBits);
}
LOWBIT_HD_CONSTEXPR std::uint32_t F32Mantissa(std::uint32_t bits) { return bits & kF32MantissaMask; }
// Exponent field all ones and a mantissa not 0 (IEEE 754-2019 §3.4): with the
// sign cleared, exactly the patterns above +Inf's. One mask and one compare
// (the dequantize kernels test every product); fp32_bits_test.cc checks the
// two forms agree on every pattern.
LOWBIT_HD_CONSTEXPR bool F32IsNan(std::uint32_t bits) { return (bits & ~kF32SignMask) > kF32ExponentMask; }
LOWBIT_HD_CONSTEXPR bool F32IsFinite(std::uint32_t bits) {
  return (bits & kF32ExponentMask) != kF32ExponentMask;
}
LOWBIT_HD_CONSTEXPR float F32Abs(float x) { return F32FromBits(F32Bits(x) & ~kF32SignMask); }

// 2^e as FP32 for e in [-149, 127], built from bits so that 2^-127 (an FP32
// subnormal, E8M0 code 0) is exact without any arithmetic.
LOWBIT_HD_CONSTEXPR float F32Pow2(int e) {
  if (e >= -126) return F32FromBits(static_cast<std::uint32_t>(e + kF32Bias) << kF32MantissaBits);
  return F32FromBits(std::uint32_t{1} << (e + 149));
}

// a / b and a - b with the NaN result pinned to what x86 SSE/AVX divss /
// subss return (Intel SDM Vol. 1 §4.8.3.5 Table 4-7: the first source operand
// if it is a NaN, else the second, quieted; an invalid operation, 0/0, Inf/Inf
// or Inf - Inf, gives the "QNaN floating-point indefinite" 0xFFC00000,
// §4.8.3.7). NVIDIA's FP32 units return 0x7FFFFFFF for every NaN result
// instead (docs/formats-reference.md §3.3), so without this the model's scale
// of a group holding a NaN would have other bits on the device than on the
// host; with it the host's bits are unchanged (proptests/backends/
// alternatives_test.cc compares both with the host's own operators) and the
// device computes the same ones.
LOWBIT_HD_CONSTEXPR float F32WithX86Nan(float a, float b, float result) {
  if (!F32IsNan(F32Bits(result))) return result;
  if (F32IsNan(F32Bits(a))) return F32FromBits(F32Bits(a) | kF32QuietBit);
  if (F32IsNan(F32Bits(b))) return F32FromBits(F32Bits(b) | kF32QuietBit);
  return F32FromBits(0xFFC00000u);
}
LOWBIT_HD_CONSTEXPR float F32DivAsX86(float a, float b) { return F32WithX86Nan(a, b, a / b); }
LOWBIT_HD_CONSTEXPR float F32SubAsX86(float a, float b) { return F32WithX86Nan(a, b, a - b); }
// a * b likewise (mulss): a NaN operand comes back quieted, the first if
// both are (IEEE 754 §6.2 lets either through and a compiler may commute a
// multiply, so the recipes' products of two NaNs, a NaN scale byte times a
// NaN tensor scale, are pinned to the operand written first), and an invalid
// product (0 x Inf, as a zero element times an infinite NVFP4 tensor scale)
// is 0xFFC00000. So a dequantized element, a block scale's factor and every
// other product of the model has the host's bits on the device too;
// proptests/backends/alternatives_test.cc compares it with the host's own
// multiply for every pair of a boundary set.
LOWBIT_HD_CONSTEXPR float F32MulAsX86(float a, float b) { return F32WithX86Nan(a, b, a * b); }

// IEEE 754-2008 maxNum on magnitudes: a NaN operand is ignored. This is what
// CUDA fmaxf / __hmax do, so TE's amax skips NaN elements (docs/formats-reference.md §5.3).
LOWBIT_HD_CONSTEXPR float MaxIgnoringNan(float a, float b) {
  if (F32IsNan(F32Bits(a))) return b;
  if (F32IsNan(F32Bits(b))) return a;
  return a < b ? b : a;
}
// torch.amax semantics: any NaN makes the result NaN (docs/formats-reference.md §5.3).
LOWBIT_HD_CONSTEXPR float MaxPropagatingNan(float a, float b) {
  if (F32IsNan(F32Bits(a))) return a;
  if (F32IsNan(F32Bits(b))) return b;
  return a < b ? b : a;
}

// amax of |x[0..n)| as FP32 (exact: a maximum never rounds). Starts from +0,
// as TE's kernels do, so an empty or all-NaN input under kIgnore gives 0.
LOWBIT_HD_CONSTEXPR float AbsMax(const float* x, long n, AmaxNan nan_rule) {
  float m = 0.0f;
  for (long i = 0; i < n; ++i) {
    const float a = F32Abs(x[i]);
    m = nan_rule == AmaxNan::kIgnore ? MaxIgnoringNan(m, a) : MaxPropagatingNan(m, a);
  }
  return m;
}

}  // namespace lowbit
