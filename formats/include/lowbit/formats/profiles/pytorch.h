// Profiles `pytorch-cpu`, `pytorch-cuda` (PyTorch 2.11 Tensor.to(dtype)) and
// `pytorch-cpu-2.15` (PyTorch 2.15 on the CPU), docs/formats-reference.md §3.2, §3.3,
// §4.1-4.3, §4.7 [PT, PROBE]. Round to nearest even, non-saturating: E4M3
// overflow and +-Inf -> NaN with the sign (0x7F|s), E5M2 overflow -> Inf,
// NaN -> 0x7F|s (fp8e5m2_from_fp32_value: "all exponent and mantissa bits set
// to 1"). The CPU and CUDA builds differ only where CUDA uses the hardware:
// BF16/FP16 encodes (cvt: 0x7FFF) and FP16 decodes.
// Since pytorch/pytorch PR #178817 (commit 9deaf8d, merged 2026-04-17, after
// the 2.12 branch cut; torchao 0.18 mx_tensor.py clamps for torch < 2.13) the
// cast to float8_e4m3fn saturates: fp8e4m3fn_from_fp32_value in
// torch/headeronly/util/Float8_e4m3fn.h gives 0x7E|s for finite overflow and
// +-Inf (also when rounding carries into 0x7F) and keeps NaN -> 0x7F|s. That
// is the only conversion that changed: measured with torch 2.15.0 on the CPU
// against pytorch-cpu over every code decoded, every FP16/BF16 input and 2^20
// random FP32 inputs into each dtype (E5M2, both FNUZ, E8M0, BF16, FP16 and
// every decode unchanged; tests/peers/test_torch_casts.py).
// Not part of the profiles: FP4/FP6 (torch has no casts to them), UE4M3, and
// the integer formats, because .to(int8) truncates and then wraps in a
// device-dependent, C++-undefined way (docs/formats-reference.md §8.1): no guess.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/e8m0_subnormal_quirk.h"
#include "lowbit/formats/profiles/format_match.h"

namespace lowbit::profile_detail {

// Which PyTorch build a conversion reproduces.
struct PytorchBuild {
  bool cuda;            // the CUDA device's casts (hardware cvt for BF16/FP16)
  bool e4m3_saturates;  // PyTorch >= 2.13: float8_e4m3fn finite overflow and Inf -> +-448
};
inline constexpr PytorchBuild kPytorch211Cpu{false, false};
inline constexpr PytorchBuild kPytorch211Cuda{true, false};
inline constexpr PytorchBuild kPytorch215Cpu{false, true};

LOWBIT_HD_CONSTEXPR bool PytorchHasFormat(FormatId id) {
  switch (id) {
    case FormatId::kFp32:
    case FormatId::kBf16:
    case FormatId::kFp16:
    case FormatId::kE4m3:
    case FormatId::kE4m3Fnuz:
    case FormatId::kE5m2:
    case FormatId::kE5m2Fnuz:
    case FormatId::kE8m0:
      return true;
    default:
      return false;
  }
}

LOWBIT_HD_CONSTEXPR bool PytorchEncodeOptions(PytorchBuild build, FormatId dst, RoundingMode mode,
                                              EncodeOptions* out) {
  if (!PytorchHasFormat(dst) || mode != RoundingMode::kNearestEven) return false;
  const bool cuda = build.cuda;
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  o.overflow = Overflow::kFormatDefault;
  o.inf_input = InfInput::kLikeOverflow;
  o.nan_sign = NanSign::kKeep;
  o.nan_payload = NanPayload::kAllOnes;  // E5M2 0x7F|s; E4M3/FNUZ have one NaN
  o.keep_negative_zero = true;
  // fp8e8m0fnu_from_fp32_value reads only the exponent field: the sign is
  // ignored and 0 (exponent field 0, no guard bit) gives 0x00 = 2^-127.
  o.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
  o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  if (build.e4m3_saturates && dst == FormatId::kE4m3) {
    // fp8e4m3fn_from_fp32_value (PR #178817): |x| >= 480 or a rounding carry
    // into 0x7F gives 0x7E|s, +-Inf too (Inf goes down the overflow branch,
    // inf_input kLikeOverflow above); NaN still gives 0x7F|s.
    o.overflow = Overflow::kSaturate;
  }
  if (dst == FormatId::kBf16) {
    // CPU: 0xFFFF for every NaN input; CUDA: 0x7FFF (cvt.rn.bf16.f32) [PROBE].
    o.nan_sign = cuda ? NanSign::kPositive : NanSign::kNegative;
    o.nan_payload = NanPayload::kAllOnes;
  } else if (dst == FormatId::kFp16) {
    // CPU keeps sign and the top payload bits and sets the quiet bit
    // (0x7F800001 -> 0x7E00, 0x7F807FFF -> 0x7E03); CUDA 0x7FFF [PROBE, §3.3].
    o.nan_sign = cuda ? NanSign::kPositive : NanSign::kKeep;
    o.nan_payload = cuda ? NanPayload::kAllOnes : NanPayload::kTruncate;
  }
  *out = o;
  return true;
}

// Decoding to FP32. E4M3 is decoded with integer operations only
// (fp8e4m3fn_to_fp32_value: the NaN keeps sign and mantissa, 0x7F ->
// 0x7FF00000, docs/formats-reference.md §4.1). E5M2 and FP16 go through fp16_ieee_to_fp32_value,
// whose multiply quiets the NaN on the CPU (0x7D -> 0x7FE00000, docs/formats-reference.md §4.2);
// on CUDA FP16 is cvt.f32.f16 (0x7FFFFFFF). BF16 is a bit shift.
LOWBIT_HD_CONSTEXPR DecodeOptions PytorchDecodeOptions(PytorchBuild build, FormatId src) {
  const bool cuda = build.cuda;
  DecodeOptions d;
  d.nan_sign = NanSign::kKeep;
  d.nan_payload = NanPayload::kTruncate;
  if (src == FormatId::kBf16) d.nan_payload = NanPayload::kPreserve;
  if (cuda && src == FormatId::kFp16) {
    d.nan_sign = NanSign::kPositive;
    d.nan_payload = NanPayload::kAllOnes;
  }
  if (cuda && src == FormatId::kE5m2) {
    // fp16_ieee_to_fp32_value ORs the sign back after the multiply, which the
    // GPU answers with its canonical NaN: 0x7D -> 0x7FFFFFFF, 0xFD -> 0xFFFFFFFF
    // (measured on an H200, scripts/gpu/pytorch_profile_check).
    d.nan_sign = NanSign::kKeep;
    d.nan_payload = NanPayload::kAllOnes;
  }
  return d;
}

// The FP32 bits PyTorch gives for the single NaN of FNUZ (0x80) and E8M0
// (0xFF): fp8_fnuz_to_fp32_value and Float8_e8m0fnu::operator float return
// fp32_from_bits(0x7F800001), a signalling-NaN pattern (docs/formats-reference.md §4.3).
inline constexpr std::uint32_t kPytorchSingleNanF32 = 0x7F800001u;

LOWBIT_HD_CONSTEXPR bool PytorchEncode(PytorchBuild build, FormatId src_id, const FormatSpec& src,
                                       std::uint64_t src_code, FormatId dst_id,
                                       const FormatSpec& dst, RoundingMode mode,
                                       EncodeResult* out) {
  if (!PytorchHasFormat(src_id)) return false;
  const bool cuda = build.cuda;
  EncodeOptions o;
  if (!PytorchEncodeOptions(build, dst_id, mode, &o)) return false;
  Unpacked u = Unpack(src, src_code);
  if (dst_id == FormatId::kFp32) {
    if (u.value_class == ValueClass::kNan &&
        (src_id == FormatId::kE4m3Fnuz || src_id == FormatId::kE5m2Fnuz ||
         src_id == FormatId::kE8m0)) {
      out->code = kPytorchSingleNanF32;
      out->flags = kFlagNone;
      return true;
    }
    const DecodeOptions d = PytorchDecodeOptions(build, src_id);
    o.nan_sign = d.nan_sign;
    o.nan_payload = d.nan_payload;
  }
  if (src_id != FormatId::kFp32 && dst_id != FormatId::kFp32) {
    // PyTorch converts every other dtype through float (c10 static_cast<float>
    // then the float -> dst routine), so a NaN first takes its decoded shape:
    // on CUDA an FP16 NaN becomes +0x7FFFFFFF and then E4M3/E5M2 0x7F, not
    // 0xFF (measured, scripts/gpu/pytorch_profile_check). Every number is
    // exact in FP32, so this is not a second rounding.
    EncodeResult f;
    constexpr FormatSpec kVia = kFp32;
    if (!PytorchEncode(build, src_id, src, src_code, FormatId::kFp32, kVia, mode, &f)) return false;
    u = Unpack(kVia, f.code);
    if (!cuda && src_id == FormatId::kFp16 && dst_id == FormatId::kBf16) {
      // The CPU FP16 -> BF16 cast takes the scalar c10::BFloat16(float) path,
      // whose round_to_nearest_even returns 0x7FC0 for every NaN, not the
      // vectorised FP32 -> BF16 kernel's 0xFFFF (measured, both signs, all
      // 2046 FP16 NaNs, scripts/gpu/pytorch_profile_check).
      o.nan_sign = NanSign::kPositive;
      o.nan_payload = NanPayload::kQuietOnly;
    }
  }
  if (dst_id == FormatId::kE8m0) u = ApplyE8m0SubnormalQuirk(u);
  *out = RoundPack(dst, u, o);
  return true;
}

}  // namespace lowbit::profile_detail
