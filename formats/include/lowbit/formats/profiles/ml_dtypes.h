// Profile `ml_dtypes`: jax-ml/ml_dtypes 0.6 (numpy astype),
// docs/formats-reference.md §3.2, §4.1-4.5, §4.7, §8.1 [MLD, PROBE]. Round to
// nearest even everywhere, non-saturating (ConvertImpl with kSaturate =
// false, the numpy cast), NaN results are the quiet NaN with the input's sign
// (ConvertImpl: "Special values, preserving sign": from_sign_bit ?
// -quiet_NaN() : quiet_NaN()). The formats are those whose format_list.h row
// names an ml_dtypes type; FP16 and INT8 are numpy's types, not ml_dtypes':
// not part of the profile.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/e8m0_subnormal_quirk.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::profile_detail {

// The formats of ml_dtypes' own types: those whose format_list.h row names
// an ml_dtypes type, so a format added there with its ml_dtypes name is part
// of the profile with no edit here. FP32 is numpy's type but is where every
// ml_dtypes decode goes (astype(float32)), so the profile has it too.
LOWBIT_HD_CONSTEXPR bool MlDtypesHasFormat(FormatId id) {
  if (id == FormatId::kFp32) return true;
  switch (id) {
    // The spec is read in a constant expression: device code may not name a
    // namespace-scope spec at run time (format_list.h, Spec()).
#define LOWBIT_ML_DTYPES_TYPE(Id, spec)                            \
  case FormatId::k##Id: {                                          \
    constexpr bool kHasType = spec.ml_dtypes_name != nullptr;      \
    return kHasType;                                               \
  }
    LOWBIT_FORMATS(LOWBIT_ML_DTYPES_TYPE)
#undef LOWBIT_ML_DTYPES_TYPE
  }
  return false;
}

// Integer types of ml_dtypes (intN.h), as opposed to its float types.
LOWBIT_HD_CONSTEXPR bool MlDtypesIntegerType(FormatId id) {
  switch (id) {
#define LOWBIT_ML_DTYPES_INTEGER(Id, spec)                    \
  case FormatId::k##Id: {                                     \
    constexpr bool kInteger = spec.kind == FormatKind::kInteger; \
    return kInteger;                                          \
  }
    LOWBIT_FORMATS(LOWBIT_ML_DTYPES_INTEGER)
#undef LOWBIT_ML_DTYPES_INTEGER
  }
  return false;
}

LOWBIT_HD_CONSTEXPR bool MlDtypesEncodeOptions(FormatId dst, RoundingMode mode,
                                               EncodeOptions* out) {
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  // E4M3 overflow/Inf -> NaN; E5M2, E4M3IEEE, E3M4 -> Inf.
  o.overflow = Overflow::kFormatDefault;
  // ml_dtypes maps +-Inf to NaN in E4M3 even when saturating (the Inf check
  // precedes saturation, docs/formats-reference.md §4.1); with kFormatDefault
  // both settings agree.
  o.inf_input = InfInput::kAlwaysNonFinite;
  o.nan_sign = NanSign::kKeep;
  // quiet_NaN(): BF16 0x7FC0, E5M2 0x7E (0b0'11111'10), FP32 0x7FC00000
  // (docs/formats-reference.md §3.2, §4.2, §4.1 decode); E4M3IEEE 0x7C,
  // E3M4 0x78 (the top mantissa bit; measured with ml_dtypes 0.6.0,
  // proptests/profiles/ml_dtypes_profile_test.cc).
  o.nan_payload = NanPayload::kQuietOnly;
  o.keep_negative_zero = true;
  // float4/float6: +NaN -> 0x8/0x20 (-0), -NaN -> +0 [PROBE,
  // docs/formats-reference.md §4.4-4.5].
  o.nan_into_no_nan = NanIntoNoNan::kOppositeSignZero;
  // float8_e8m0fnu: kHasZero = false -> 0 becomes NaN; negatives are NaN
  // (docs/formats-reference.md §4.7 table).
  o.zero_into_no_zero = ZeroIntoNoZero::kNan;
  o.negative_into_unsigned = NegativeIntoUnsigned::kNan;
  if (!MlDtypesHasFormat(dst)) return false;
  if (!MlDtypesIntegerType(dst)) {
    // Every float type: ConvertImpl rounds to nearest even, nothing else.
    if (mode != RoundingMode::kNearestEven) return false;
  } else {
    // intN(T t) : intN(static_cast<UnderlyingTy>(t)): C++ truncation, then
    // the nibble keeps the low 4 bits (8.0 -> -8, 16 -> 0, uint4 -2.5 -> 14;
    // docs/formats-reference.md §8.1 [PROBE]).
    if (mode != RoundingMode::kTowardZero) return false;
    o.rounding = RoundingMode::kTowardZero;
    o.overflow = Overflow::kWrap;
  }
  *out = o;
  return true;
}

LOWBIT_HD_CONSTEXPR DecodeOptions MlDtypesDecodeOptions(FormatId src) {
  DecodeOptions d;
  d.nan_sign = NanSign::kKeep;
  // bfloat16 -> float32 is Eigen's bit shift (payload kept as is); every other
  // type gives quiet_NaN() with the code's sign: 0x7FC00000 | sign
  // (docs/formats-reference.md §4.1).
  d.nan_payload = src == FormatId::kBf16 ? NanPayload::kPreserve : NanPayload::kQuietOnly;
  return d;
}

LOWBIT_HD_CONSTEXPR bool MlDtypesEncode(FormatId src_id, const FormatSpec& src,
                                        std::uint64_t src_code, FormatId dst_id,
                                        const FormatSpec& dst, RoundingMode mode,
                                        EncodeResult* out) {
  // numpy's float16 is not an ml_dtypes type, but ml_dtypes casts float16
  // arrays into each of its types; the result equals converting the exactly
  // widened FP32 value (checked for every FP16 code and target by
  // proptests/profiles/ml_dtypes_profile_test.cc), so FP16 is accepted as a source. FP16
  // -> FP32 is numpy's own cast (it keeps NaN payloads unquieted, measured:
  // 0x7C01 -> 0x7F802000), not ml_dtypes', so it stays unsupported here.
  const bool fp16_into_ml_dtypes_type = src_id == FormatId::kFp16 && dst_id != FormatId::kFp32;
  if (!MlDtypesHasFormat(src_id) && !fp16_into_ml_dtypes_type) return false;
  EncodeOptions o;
  if (!MlDtypesEncodeOptions(dst_id, mode, &o)) return false;
  if (dst_id == FormatId::kFp32) {
    const DecodeOptions d = MlDtypesDecodeOptions(src_id);
    o.nan_sign = d.nan_sign;
    o.nan_payload = d.nan_payload;
  }
  Unpacked u = Unpack(src, src_code);
  if (!dst.IsFloat() && (u.value_class == ValueClass::kNan || u.value_class == ValueClass::kInf)) {
    // static_cast of NaN or Inf to an integer is undefined behaviour in C++;
    // what it gives depends on the compiler and CPU: no conversion.
    return false;
  }
  if (u.value_class == ValueClass::kNan && src.specials == SpecialCodes::kNegativeZeroIsNan) {
    // ConvertImpl takes the NaN's sign from the code's top bit
    // (bit_cast<FromBits>(from) >> (kFromBits - 1)); the single NaN of every
    // FNUZ type, 0x80, has that bit set, so it reads as -NaN: 0xFFC00000 (measured with
    // ml_dtypes 0.6.0, scripts/gpu/pytorch_profile_check). E8M0's 0xFF decodes
    // to +NaN 0x7FC00000 (same measurement).
    u.negative = true;
  }
  if (dst_id == FormatId::kE8m0) u = ApplyE8m0SubnormalQuirk(u);
  *out = RoundPack(dst, u, o);
  return true;
}

}  // namespace lowbit::profile_detail
