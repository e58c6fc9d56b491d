// Profile `numpy`: NumPy's own float16 casts, `astype(np.float16)` from
// float32 / float64 and `astype(np.float32 / np.float64)` from float16
// (docs/formats-reference.md §3.3). NumPy converts in software, bit by bit
// (numpy/_core/src/common/half_private.hpp FromFloatBits, FromDoubleBits,
// ToFloatBits, ToDoubleBits in NumPy 2.x; npymath halffloat.c before): round
// to nearest even, straight from FP64 (one rounding, not through FP32),
// overflow to a signed Inf. Its NaN rule is its own: the payload is cut to
// the destination's width with the quiet bit left as it was (a signalling
// NaN stays signalling), and when no payload bit survives the lowest
// mantissa bit is set so that the result is still a NaN: FP32 0x7F800001 ->
// FP16 0x7C01, where IEEE-style conversions (lowbit's `fp16`, PyTorch on the
// CPU, x86 F16C) set the quiet bit, 0x7E00. Widening keeps the payload as it
// is (0x7C01 -> 0x7F802000). Measured with NumPy 2.4 over all 2^32 FP32
// inputs by tests/peers/test_numpy_profile.py, which CI runs.
// Not part of the profile: FP32 <-> FP64 (the CPU's cast, not NumPy's code),
// integers (C casts), and every narrower format (NumPy has no such type;
// bfloat16 and the float8 types are ml_dtypes', profile `ml_dtypes`).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::profile_detail {

LOWBIT_HD_CONSTEXPR bool NumpyWideFormat(FormatId id) { return id == FormatId::kFp32 || id == FormatId::kFp64; }

// The conversions NumPy itself does: FP32 / FP64 -> FP16 and back.
LOWBIT_HD_CONSTEXPR bool NumpyHasConversion(FormatId src, FormatId dst) {
  return (NumpyWideFormat(src) && dst == FormatId::kFp16) || (src == FormatId::kFp16 && NumpyWideFormat(dst));
}

LOWBIT_HD_CONSTEXPR bool NumpyEncodeOptions(FormatId dst, RoundingMode mode, EncodeOptions* out) {
  if (dst != FormatId::kFp16 && !NumpyWideFormat(dst)) return false;
  if (mode != RoundingMode::kNearestEven) return false;
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  o.overflow = Overflow::kFormatDefault;  // "overflow to signed inf"
  o.nan_sign = NanSign::kKeep;            // h_sgn + the NaN bits
  // The payload as it is; NumpyEncode replaces the quiet bit that kPreserve
  // sets when nothing survives with the lowest bit.
  o.nan_payload = NanPayload::kPreserve;
  o.keep_negative_zero = true;
  *out = o;
  return true;
}

LOWBIT_HD_CONSTEXPR DecodeOptions NumpyDecodeOptions(FormatId) {
  DecodeOptions d;
  d.nan_sign = NanSign::kKeep;
  d.nan_payload = NanPayload::kPreserve;  // f_sgn + 0x7F800000 + (h & 0x3FF) << 13
  return d;
}

LOWBIT_HD_CONSTEXPR bool NumpyEncode(FormatId src_id, const FormatSpec& src, std::uint64_t src_code,
                                     FormatId dst_id, const FormatSpec& dst, RoundingMode mode,
                                     EncodeResult* out) {
  if (!NumpyHasConversion(src_id, dst_id)) return false;
  EncodeOptions o;
  if (!NumpyEncodeOptions(dst_id, mode, &o)) return false;
  const Unpacked u = Unpack(src, src_code);
  EncodeResult r = RoundPack(dst, u, o);
  if (u.value_class == ValueClass::kNan && (u.nan_payload >> (64 - dst.mantissa_bits)) == 0) {
    // "make sure it stays a NaN": ret++ on 0x7C00, the lowest mantissa bit.
    const std::uint64_t sign = u.negative ? dst.SignBit() : 0;
    r.code = sign | (static_cast<std::uint64_t>(dst.MaxExponentField()) << dst.mantissa_bits) | 1u;
  }
  *out = r;
  return true;
}

}  // namespace lowbit::profile_detail
