// The E8M0 rounding quirk shared by PyTorch and ml_dtypes (docs/formats-reference.md §4.7,
// §9 row 7). Both round a magnitude to the nearest power of two, ties up,
// which is RoundPack's round-to-nearest-even on a format with no mantissa bits
// (the kept significand is always 1, odd, so a tie goes up). They differ from
// nearest only for FP32 subnormals in (2^-127, 1.5*2^-127): PyTorch's
// fp8e8m0fnu_from_fp32_value reads FP32 bit 22 as the guard bit and bits 21..0
// as round/sticky with lsb = (exponent field > 0) = 0, so "guard set and
// anything below set" rounds up to 2^-126 (code 0x01) although the nearest
// power of two is 2^-127 (code 0x00) [PT Float8_e8m0fnu.h; ml_dtypes agrees on
// every positive finite value of the 393 216-value sample, PROBE].
// The quirk is applied as pre-processing: such a magnitude is replaced by the
// tie 1.5*2^-127, which the ordinary rounding sends to 0x01. No second
// rounding algorithm.
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit::profile_detail {

// True for a finite value whose magnitude lies strictly between 2^-127 and
// 1.5*2^-127.
LOWBIT_HD_CONSTEXPR bool InE8m0SubnormalQuirkRange(const Unpacked& u) {
  if (u.value_class != ValueClass::kFinite) return false;
  const int top = HighestSetBit(u.significand);
  if (u.exponent + top != -127) return false;           // not in [2^-127, 2^-126)
  if (u.significand == (std::uint64_t{1} << top)) return false;  // exactly 2^-127
  return top == 0 || ((u.significand >> (top - 1)) & 1) == 0;     // below 1.5*2^-127
}

LOWBIT_HD_CONSTEXPR Unpacked ApplyE8m0SubnormalQuirk(Unpacked u) {
  if (InE8m0SubnormalQuirkRange(u)) {
    u.significand = 3;  // 1.5 * 2^-127 = 3 * 2^-128
    u.exponent = -128;
  }
  return u;
}

}  // namespace lowbit::profile_detail
