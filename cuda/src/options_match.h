// Which EncodeOptions fields change the result for a destination format, so
// that "does cuda-hw implement these options" compares only what matters
// (E4M3 has one NaN per sign, so its NaN payload policy is irrelevant; FP4 has
// no NaN, so its NaN sign policy is irrelevant; and so on: round_pack.h).
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"

namespace lowbit::cuda::detail {

LOWBIT_HD_CONSTEXPR bool SameEncodeSemantics(const FormatSpec& dst, const EncodeOptions& a,
                                const EncodeOptions& b) {
  if (a.rounding != b.rounding) return false;
  if (a.rounding == RoundingMode::kStochastic && a.random_bit_count != b.random_bit_count) {
    return false;
  }
  const bool has_specials = dst.HasNan() || dst.HasInf();
  if (has_specials && a.overflow != b.overflow) return false;
  if (!dst.IsFloat() && ((a.overflow == Overflow::kWrap) != (b.overflow == Overflow::kWrap))) {
    return false;
  }
  if (has_specials && a.overflow == Overflow::kSaturate && a.inf_input != b.inf_input) {
    return false;
  }
  if (dst.HasNan()) {
    if (dst.has_sign && dst.specials != SpecialCodes::kNegativeZeroIsNan &&
        a.nan_sign != b.nan_sign) {
      return false;
    }
    if (dst.specials == SpecialCodes::kIeee && a.nan_payload != b.nan_payload) return false;
  } else if (a.nan_into_no_nan != b.nan_into_no_nan) {
    return false;
  }
  if (dst.HasNegativeZero() && a.keep_negative_zero != b.keep_negative_zero) return false;
  if (!dst.HasZero() && a.zero_into_no_zero != b.zero_into_no_zero) return false;
  if (!dst.has_sign && a.negative_into_unsigned != b.negative_into_unsigned) return false;
  return true;
}

}  // namespace lowbit::cuda::detail
