// Profile `ocp`: the OCP specifications as written, for the formats they
// define. OCP 8-bit Floating Point Specification (OFP8) v1.0 defines E4M3 and
// E5M2 and allows a saturating and a non-saturating conversion; this profile
// is the non-saturating one (overflow -> Inf for E5M2, NaN for E4M3, which has
// no Inf), the IEEE 754 §7.4-like default that CUDA __NV_NOSAT, PyTorch <= 2.12
// and ml_dtypes also follow (docs/formats-reference.md §4.1 table). OCP MX v1.0 defines
// FP6/FP4 without NaN or Inf (§5.3.3 Table 5: they can only saturate) and E8M0
// (§5.4.1 Table 7), whose only conversion rule is the scale rule of §6.3:
// "the largest power-of-two less than or equal to" a magnitude, i.e. round
// toward zero on |x|. Rounding is roundTiesToEven ("must be supported", §6.3).
// Where the specs are silent the profile has no conversion (see OcpEncode):
// NaN into FP6/FP4, and zero into E8M0 (docs/formats-reference.md §11: not confirmed in the spec).
// FP32/BF16/FP16 follow IEEE 754-2019 (§4.3 rounding attributes, §6.2.3 NaN
// payload propagation, §6.3 NaN sign).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::profile_detail {

LOWBIT_HD_CONSTEXPR bool OcpHasFormat(FormatId id) {
  switch (id) {
    case FormatId::kFp32:
    case FormatId::kBf16:
    case FormatId::kFp16:
    case FormatId::kE4m3:
    case FormatId::kE5m2:
    case FormatId::kE3m2:
    case FormatId::kE2m3:
    case FormatId::kE2m1:
    case FormatId::kE8m0:
      return true;
    default:
      return false;
  }
}

LOWBIT_HD_CONSTEXPR bool OcpEncodeOptions(FormatId dst, RoundingMode mode, EncodeOptions* out) {
  EncodeOptions o;
  o.rounding = mode;
  o.overflow = Overflow::kFormatDefault;
  o.inf_input = InfInput::kLikeOverflow;
  o.nan_sign = NanSign::kKeep;             // IEEE 754 §6.3
  o.nan_payload = NanPayload::kTruncate;   // IEEE 754 §6.2.3
  o.keep_negative_zero = true;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;  // unused: OcpEncode refuses NaN there
  o.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
  o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;  // §6.3 uses max(|Vi|)
  switch (dst) {
    case FormatId::kFp32:
    case FormatId::kBf16:
    case FormatId::kFp16:
      // IEEE 754 §4.3: the four attributes below plus roundTiesToAway.
      if (!IsIeeeDirectedOrNearest(mode) && mode != RoundingMode::kNearestAway) return false;
      break;
    case FormatId::kE4m3:
    case FormatId::kE5m2:
    case FormatId::kE3m2:
    case FormatId::kE2m3:
    case FormatId::kE2m1:
      if (mode != RoundingMode::kNearestEven) return false;
      break;
    case FormatId::kE8m0:
      // §6.3 "largest power-of-two less than or equal to": floor on |x|.
      if (mode != RoundingMode::kTowardZero) return false;
      break;
    default:
      return false;
  }
  *out = o;
  return true;
}

LOWBIT_HD_CONSTEXPR DecodeOptions OcpDecodeOptions(FormatId) {
  DecodeOptions d;
  d.nan_sign = NanSign::kKeep;
  d.nan_payload = NanPayload::kTruncate;
  return d;
}

LOWBIT_HD_CONSTEXPR bool OcpEncode(FormatId src_id, const FormatSpec& src, std::uint64_t src_code,
                                   FormatId dst_id, const FormatSpec& dst, RoundingMode mode,
                                   EncodeResult* out) {
  if (!OcpHasFormat(src_id)) return false;
  EncodeOptions o;
  if (!OcpEncodeOptions(dst_id, mode, &o)) return false;
  const Unpacked u = Unpack(src, src_code);
  // The specs do not say what NaN becomes in a format without NaN, nor what a
  // zero magnitude gives as an E8M0 scale: no conversion rather than a guess.
  if (u.value_class == ValueClass::kNan && !dst.HasNan()) return false;
  if (u.value_class == ValueClass::kZero && !dst.HasZero()) return false;
  if (dst_id == FormatId::kFp32) {
    const DecodeOptions d = OcpDecodeOptions(src_id);
    o.nan_sign = d.nan_sign;
    o.nan_payload = d.nan_payload;
  }
  *out = RoundPack(dst, u, o);
  return true;
}

}  // namespace lowbit::profile_detail
