// Step 3 for the MX family (scale_rule_list.h, family mx): the E8M0 scale
// of a block from its amax, docs/formats-reference.md §5.3.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

namespace detail {

// The E8M0 exponent rules read amax's FP32 exponent bits (never a float
// log2: FP32 log2 of an amax just below a power of two rounds up,
// docs/design.md "Known traps (measured)").
// torchao's eager RCEIL: ceil(log2(d)) with log2 in FP32 (correctly rounded,
// as the log2f of glibc and of torch's CPU kernels is on these inputs). For
// d = 2^k * (1 + f), 0 < f < 1, the exact log2 lies in (k, k + 1); FP32
// rounds it back to k exactly when log2(1 + f) is below half the FP32
// spacing next to k on the side of k + log2(1 + f), and then the ceiling is
// k, not k + 1. Half that spacing is a power of two 2^-j (j >= 18 here), so
// the test is f < 2^(2^-j) - 1, with 2^h - 1 = sum (h ln 2)^n / n! (four
// terms are exact to far below one FP32 ulp of f; the nearest f = m * 2^-23
// stays 0.09 ulp or more from each threshold, docs/formats-reference.md §5.3).
LOWBIT_HD_CONSTEXPR int RceilEagerExponent(float d) {
  const std::uint32_t bits = F32Bits(d);
  int k = F32ExponentField(bits) - kF32Bias;
  std::uint32_t mantissa = F32Mantissa(bits);
  if (F32ExponentField(bits) == 0) {  // subnormal: normalize
    k = 1 - kF32Bias;
    while ((mantissa & (1u << kF32MantissaBits)) == 0) {
      mantissa <<= 1;
      --k;
    }
    mantissa &= (1u << kF32MantissaBits) - 1;
  }
  if (mantissa == 0) return k;
  // The FP32 spacing next to k toward k + log2(1 + f): above k for k > 0;
  // below |k| for k < 0, halved when |k| is a power of two. k = 0 and k = -1
  // never round back (log2(1 + f) >= 2^-23 / ln 2 > half the spacing there).
  if (k == 0 || k == -1) return k + 1;
  const int magnitude = k > 0 ? k : -k;
  int log2_magnitude = 0;
  while ((2 << log2_magnitude) <= magnitude) ++log2_magnitude;
  int spacing_exponent = log2_magnitude - kF32MantissaBits;
  if (k < 0 && magnitude == (1 << log2_magnitude)) --spacing_exponent;
  const double half_spacing_ln2 = 0.69314718055994530942 * static_cast<double>(F32Pow2(spacing_exponent - 1));
  const double t = half_spacing_ln2;
  const double threshold = t + t * t / 2 + t * t * t / 6 + t * t * t * t / 24;  // 2^h - 1
  const double f = static_cast<double>(mantissa) * static_cast<double>(F32Pow2(-kF32MantissaBits));
  return f < threshold ? k : k + 1;
}

// RceilEagerExponent as a parameter of ChooseMxScale, so that a kernel can
// pass a named alternative proven equal to it on every FP32 input
// (alternatives/rceil_eager.h); everything around it stays this file's.
struct RceilEagerExponentOfModel {
  LOWBIT_HD_CONSTEXPR int operator()(float d) const { return RceilEagerExponent(d); }
};

template <typename EagerExponent = RceilEagerExponentOfModel>
LOWBIT_HD_CONSTEXPR BlockScale ChooseMxScale(const Recipe& r, float amax, const EagerExponent& eager_exponent = {}) {
  BlockScale s;
  if (r.scale_rule == ScaleRule::kMxRceilEager) {
    // descale = max_abs / max_pos (FP32 division); NaN -> 255, Inf -> 254;
    // else clamp(ceil(log2(descale)), -127, 127) + 127 (0 -> log2 -Inf -> 0).
    s.rule_value = amax / ElementMaxF32(r);
    const std::uint32_t bits = F32Bits(s.rule_value);
    int e = -kF32Bias;
    if (F32IsNan(bits)) {
      s.code = kE8m0NanCode;
      return s;
    }
    if (!F32IsFinite(bits)) {
      e = kF32Bias;
    } else if ((bits & ~kF32SignMask) != 0) {
      e = eager_exponent(s.rule_value);
      e = e < -kF32Bias ? -kF32Bias : (e > kF32Bias ? kF32Bias : e);
    }
    s.exponent = e;
    s.code = static_cast<std::uint8_t>(e + kF32Bias);
    return s;
  }
  if (r.scale_rule == ScaleRule::kMxRceil || r.scale_rule == ScaleRule::kMxNearest) {
    s.rule_value = amax * MaxNormReciprocal(r);
    EncodeOptions e8m0;
    e8m0.rounding = r.scale_rule == ScaleRule::kMxRceil ? RoundingMode::kUp : RoundingMode::kNearestEven;
    e8m0.overflow = r.scale_saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
    e8m0.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;  // 0 -> 2^-127 (0x00)
    e8m0.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
    s.code = static_cast<std::uint8_t>(EncodeF32(r.scale_format, s.rule_value, e8m0).code);
    s.exponent = static_cast<int>(s.code) - kF32Bias;
    return s;
  }
  std::uint32_t bits = F32Bits(amax) & ~kF32SignMask;
  if (r.scale_rule == ScaleRule::kMxEven && !F32IsNan(bits)) {
    const int mbits = r.element.mantissa_bits;
    bits = (bits + (std::uint32_t{1} << (kF32MantissaBits - mbits - 1))) & kF32ExponentMask;
  }
  if (!F32IsFinite(bits)) {
    s.code = kE8m0NanCode;
    return s;
  }
  int e = F32ExponentField(bits) - kF32Bias;
  if (r.scale_rule == ScaleRule::kMxCeil && F32Mantissa(bits) != 0) ++e;
  if (bits == 0 && r.zero_amax_as_min_normal) e = 1 - kF32Bias;
  e -= r.element_emax;
  if (e < -kF32Bias) e = -kF32Bias;  // E8M0 range -127..127 [OCP-MX §5.4.1]
  if (e > kF32Bias) {                      // [MSX]: > 127 -> NaN
    s.code = kE8m0NanCode;
    return s;
  }
  s.exponent = e;
  s.code = static_cast<std::uint8_t>(e + kF32Bias);
  return s;
}

}  // namespace detail

}  // namespace lowbit::recipe
