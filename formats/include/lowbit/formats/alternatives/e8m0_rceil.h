// A named alternative to the model's RCEIL scale conversion: the E8M0 code
// of an FP32 value rounded up, read from the value's bits. The model step it
// replaces is the conversion inside block::ChooseMxScale for
// MxScaleRule::kRceil (mx_scale_rule.h): EncodeF32(kE8m0, product, round up,
// saturating or not, 0 -> 2^-127, |x|), where product = amax * fp32(1/max)
// (docs/formats-reference.md §4.7, §5.3). The model's generic rounding was the
// most expensive step of the lane-group MXFP4 kernel (bench/RESULTS-archive-2026.md
// "CUDA"). proptests/backends/alternatives_test.cc compares the two on every FP32
// input (LOWBIT_TEST_LEVEL=full; every exponent with its boundary
// mantissas, every subnormal and every non-finite input at ci) for both
// saturation settings.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"

namespace lowbit::alternatives {

namespace e8m0_detail {

inline constexpr FormatSpec kSpec = kE8m0;
static_assert(!kSpec.has_sign && kSpec.exponent_bits == 8 && kSpec.mantissa_bits == 0 &&
                  kSpec.bias == kF32Bias && !kSpec.has_subnormals &&
                  kSpec.specials == SpecialCodes::kAllOnesIsNan,
              "E8M0 code c is 2^(c - 127), FP32's exponent field, and 0xFF is NaN");
inline constexpr std::uint32_t kNanCode = static_cast<std::uint32_t>(kSpec.CodeMask());
inline constexpr std::uint32_t kMaxCode = static_cast<std::uint32_t>(kSpec.MaxFiniteCode());
static_assert(kNanCode == 0xFF && kMaxCode == 0xFE);

}  // namespace e8m0_detail

// Since E8M0 code c is 2^(c - 127) and shares FP32's bias, a normal FP32
// 2^(E - 127) * 1.M rounds up to code E, or E + 1 when M != 0; E + 1 = 255
// is above 2^127 and is either the NaN code (no saturation: the conversion's
// overflow) or clamped to 254 (saturation). A subnormal (E = 0) is at most
// 2^-127, code 0, when M <= 2^22 (2^-127 = 2^22 * 2^-149), else it lies in
// (2^-127, 2^-126) and rounds up to code 1; zero also gets code 0, the
// smallest positive value. The sign is ignored (the rule uses |x|). +-Inf is
// the overflow (254 saturated, else NaN); NaN is the NaN code.
LOWBIT_HD_CONSTEXPR std::uint32_t E8m0RceilFromBits(float value, bool saturate) {
  using namespace e8m0_detail;
  const std::uint32_t u = F32Bits(value) & ~kF32SignMask;
  if (u >= kF32ExponentMask) return (u == kF32ExponentMask && saturate) ? kMaxCode : kNanCode;
  const std::uint32_t e = u >> kF32MantissaBits, m = F32Mantissa(u);
  if (e == 0) return m > (std::uint32_t{1} << 22) ? 1u : 0u;
  const std::uint32_t up = e + (m != 0 ? 1u : 0u);
  return saturate && up > kMaxCode ? kMaxCode : up;
}

}  // namespace lowbit::alternatives
