// Profiles `nvidia` and `nvidia-nosat`: Hopper (sm_89/sm_90) cvt instructions
// and the CUDA 13.0 conversion headers. On sm_90 the headers' host code is a
// bit-exact model of the hardware for FP8/BF16/FP16/INT8 (all 2^32 FP32
// inputs, docs/formats-reference.md §2.1 [PROBE]); FP4/FP6/E8M0 have no sm_90 instruction
// and run the same header software on host and device (docs/formats-reference.md §2).
// proptests/profiles/nvidia_*_test.cc checks this file against the headers.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::profile_detail {

// The formats NVIDIA converts at all (as source or destination). FNUZ, UE4M3
// (no sm_90 cvt; TE stores NVFP4 scales as E4M3 bytes, docs/formats-reference.md §4.8), INT4/UINT4
// and FP64 sources (not measured) are not part of the profile.
LOWBIT_HD_CONSTEXPR bool NvidiaHasFormat(FormatId id) {
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
    case FormatId::kInt8:
      return true;
    default:
      return false;
  }
}

// `saturate` selects __NV_SATFINITE (profile nvidia) or __NV_NOSAT
// (nvidia-nosat); it changes only FP8 and E8M0, the formats whose header
// functions take a __nv_saturation_t.
LOWBIT_HD_CONSTEXPR bool NvidiaEncodeOptions(bool saturate, FormatId dst, RoundingMode mode,
                                             EncodeOptions* out) {
  EncodeOptions o;
  o.rounding = mode;
  // Every NaN NVIDIA produces is positive with all mantissa bits set: BF16 and
  // FP16 0x7FFF (__internal_float2bfloat16, __internal_float2half), E4M3/E5M2
  // 0x7F (the float path canonicalises to 0x7FFFFFFF first), FP32 0x7FFFFFFF
  // (__internal_halfraw_to_float "discard sign of a NaN") [CUDA-*; docs/formats-reference.md §9 rows 2, 4, 5].
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  o.inf_input = InfInput::kLikeOverflow;  // .satfinite: +-Inf -> +-max
                                          // (docs/formats-reference.md §4.1)
  o.keep_negative_zero = true;            // -0.0 -> 0x80
                                          // (docs/formats-reference.md §10.2 row 80000000)
  // E8M0: "Rounded results that are smaller than 2^-127 are clipped to 2^-127";
  // the absolute value is used [CUDA-fp8 doc of __nv_cvt_bfloat16raw_to_e8m0].
  o.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
  o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  // FP4/FP6: "NaN results are converted to positive MAX_NORM" [PTX .satfinite].
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  const Overflow fp8_overflow = saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
  switch (dst) {
    case FormatId::kFp32:
      // Only exact widenings reach FP32 (FP64 is not a source of the profile).
      if (!IsIeeeDirectedOrNearest(mode)) return false;
      break;
    case FormatId::kBf16:
    case FormatId::kFp16:
      // cvt.{rn,rz,rm,rp}.{bf16,f16}.f32 = __float2{bfloat16,half}_{rn,rz,rd,ru};
      // no .satfinite in those functions: overflow is IEEE (docs/formats-reference.md §3.2, §3.3).
      if (!IsIeeeDirectedOrNearest(mode)) return false;
      o.overflow = Overflow::kFormatDefault;
      break;
    case FormatId::kE4m3:
    case FormatId::kE5m2:
      // Only cvt.rn exists for FP8 (docs/formats-reference.md §2); __nv_cvt_float_to_fp8 has no
      // rounding argument.
      if (mode != RoundingMode::kNearestEven) return false;
      o.overflow = fp8_overflow;
      break;
    case FormatId::kE3m2:
    case FormatId::kE2m3:
    case FormatId::kE2m1:
      // __nv_cvt_float_to_fp{4,6} accept cudaRoundNearest and cudaRoundZero
      // and always saturate (no __nv_saturation_t argument) [CUDA-fp4, CUDA-fp6].
      if (mode != RoundingMode::kNearestEven && mode != RoundingMode::kTowardZero) return false;
      o.overflow = Overflow::kSaturate;
      break;
    case FormatId::kE8m0:
      // Only .rz and .rp exist (".frnd3 = {.rz, .rp}" [PTX]; the header asserts
      // cudaRoundZero || cudaRoundPosInf).
      if (mode != RoundingMode::kTowardZero && mode != RoundingMode::kUp) return false;
      o.overflow = fp8_overflow;
      break;
    case FormatId::kInt8:
      // cvt.{rni,rzi,rmi,rpi}.s8.f32: "clamped to the destination range by
      // default", NaN -> 0 [PTX Integer Notes; rni/rzi HW-verified,
      // docs/formats-reference.md §8.1].
      if (!IsIeeeDirectedOrNearest(mode)) return false;
      o.overflow = Overflow::kSaturate;
      o.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
      break;
    default:
      return false;
  }
  *out = o;
  return true;
}

// Decoding to FP32 as the hardware does it.
LOWBIT_HD_CONSTEXPR DecodeOptions NvidiaDecodeOptions(FormatId src) {
  DecodeOptions d;
  if (src == FormatId::kBf16) {
    // cvt.f32.bf16 is an exact bit shift, NaN sign and payload included, a
    // signalling NaN not quieted (0xFF81 -> 0xFF810000) [HW-verified,
    // docs/formats-reference.md §3.2].
    d.nan_sign = NanSign::kKeep;
    d.nan_payload = NanPayload::kPreserve;
    return d;
  }
  // FP16 and every FP8 code decode through cvt.f32.f16 (FP8 via
  // __nv_cvt_fp8_to_halfraw first): NaN -> 0x7FFFFFFF [HW-verified, docs/formats-reference.md §3.3,
  // §4.1]. E8M0 decodes to BF16 0x7FFF [CUDA-fp8 __internal_e8m0_to_bf16]; its
  // FP32 view (0x7FFF0000) is applied in NvidiaEncode.
  d.nan_sign = NanSign::kPositive;
  d.nan_payload = NanPayload::kAllOnes;
  return d;
}

LOWBIT_HD_CONSTEXPR bool NvidiaEncode(bool saturate, FormatId src_id, const FormatSpec& src,
                                      std::uint64_t src_code, FormatId dst_id,
                                      const FormatSpec& dst, RoundingMode mode,
                                      EncodeResult* out) {
  if (!NvidiaHasFormat(src_id)) return false;
  EncodeOptions o;
  if (!NvidiaEncodeOptions(saturate, dst_id, mode, &o)) return false;
  if (dst_id == FormatId::kFp32) {
    if (src_id == FormatId::kE8m0) {
      // __nv_fp8_e8m0::operator float() = __internal_bf16raw_to_float(
      // __nv_cvt_e8m0_to_bf16raw(x)): through BF16, exact for every number, so
      // only the NaN changes: 0xFF -> 0x7FFF -> 0x7FFF0000 [CUDA-fp8].
      constexpr FormatSpec kVia = kBf16;
      const EncodeResult bf16 = Convert(src, src_code, kVia, ToDecodeEncodeOptions(NvidiaDecodeOptions(src_id)));
      *out = Convert(kVia, bf16.code, dst, ToDecodeEncodeOptions(NvidiaDecodeOptions(FormatId::kBf16)));
      return true;
    }
    const DecodeOptions d = NvidiaDecodeOptions(src_id);
    o.nan_sign = d.nan_sign;
    o.nan_payload = d.nan_payload;
  }
  *out = Convert(src, src_code, dst, o);
  return true;
}

}  // namespace lowbit::profile_detail
