// Named profiles: bundles of encode/decode policy that reproduce one
// implementation bit for bit (docs/design.md "Profiles"). One header per profile;
// this one dispatches on ProfileId. The CLI and the tests call only these:
//   ProfileEncodeOptions  the options Convert needs for a destination (false:
//                         the implementation has no such conversion),
//   ProfileDecodeOptions  the NaN shape when decoding a source to FP32,
//   ProfileEncode         a whole conversion, with the few quirks that options
//                         cannot express (E8M0 subnormal rounding in PyTorch and
//                         ml_dtypes, PyTorch's 0x7F800001 NaN, NVIDIA's E8M0
//                         decode through BF16, ...). A conversion into FP32 is
//                         a decode and uses ProfileDecodeOptions(src).
//                         Use it for decodes as well: it is the exact one.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/profiles/ml_dtypes.h"
#include "lowbit/formats/profiles/numpy.h"
#include "lowbit/formats/profiles/nvidia.h"
#include "lowbit/formats/profiles/ocp.h"
#include "lowbit/formats/profiles/profile_id.h"
#include "lowbit/formats/profiles/pytorch.h"

namespace lowbit {

// For FP32 as the destination the options are those of a conversion from a
// source whose NaN needs no special shape (FP32 itself); ProfileEncode picks
// the source's decode options instead.
LOWBIT_HD_CONSTEXPR bool ProfileEncodeOptions(ProfileId profile, const FormatSpec& dst,
                                              RoundingMode mode, EncodeOptions* out) {
  FormatId id{};
  if (!profile_detail::IdentifyFormat(dst, &id)) return false;
  switch (profile) {
    case ProfileId::kOcp:
      return profile_detail::OcpEncodeOptions(id, mode, out);
    case ProfileId::kNvidia:
      return profile_detail::NvidiaEncodeOptions(true, id, mode, out);
    case ProfileId::kNvidiaNosat:
      return profile_detail::NvidiaEncodeOptions(false, id, mode, out);
    case ProfileId::kMlDtypes:
      return profile_detail::MlDtypesEncodeOptions(id, mode, out);
    case ProfileId::kPytorchCpu:
      return profile_detail::PytorchEncodeOptions(profile_detail::kPytorch211Cpu, id, mode, out);
    case ProfileId::kPytorchCuda:
      return profile_detail::PytorchEncodeOptions(profile_detail::kPytorch211Cuda, id, mode, out);
    case ProfileId::kPytorchCpu215:
      return profile_detail::PytorchEncodeOptions(profile_detail::kPytorch215Cpu, id, mode, out);
    case ProfileId::kNumpy:
      return profile_detail::NumpyEncodeOptions(id, mode, out);
  }
  return false;
}

LOWBIT_HD_CONSTEXPR DecodeOptions ProfileDecodeOptions(ProfileId profile, const FormatSpec& src) {
  FormatId id = FormatId::kFp32;
  profile_detail::IdentifyFormat(src, &id);
  switch (profile) {
    case ProfileId::kOcp:
      return profile_detail::OcpDecodeOptions(id);
    case ProfileId::kNvidia:
    case ProfileId::kNvidiaNosat:
      return profile_detail::NvidiaDecodeOptions(id);
    case ProfileId::kMlDtypes:
      return profile_detail::MlDtypesDecodeOptions(id);
    case ProfileId::kPytorchCpu:
      return profile_detail::PytorchDecodeOptions(profile_detail::kPytorch211Cpu, id);
    case ProfileId::kPytorchCuda:
      return profile_detail::PytorchDecodeOptions(profile_detail::kPytorch211Cuda, id);
    case ProfileId::kPytorchCpu215:
      return profile_detail::PytorchDecodeOptions(profile_detail::kPytorch215Cpu, id);
    case ProfileId::kNumpy:
      return profile_detail::NumpyDecodeOptions(id);
  }
  return DecodeOptions{};
}

// Converts src_code (format src) to dst as `profile` does. false: the
// implementation has no such conversion (format, rounding mode, or an input
// whose result the implementation leaves undefined); *out is then unchanged.
LOWBIT_HD_CONSTEXPR bool ProfileEncode(ProfileId profile, const FormatSpec& src,
                                       std::uint64_t src_code, const FormatSpec& dst,
                                       RoundingMode mode, EncodeResult* out) {
  FormatId src_id{};
  FormatId dst_id{};
  if (!profile_detail::IdentifyFormat(src, &src_id) ||
      !profile_detail::IdentifyFormat(dst, &dst_id)) {
    return false;
  }
  switch (profile) {
    case ProfileId::kOcp:
      return profile_detail::OcpEncode(src_id, src, src_code, dst_id, dst, mode, out);
    case ProfileId::kNvidia:
      return profile_detail::NvidiaEncode(true, src_id, src, src_code, dst_id, dst, mode, out);
    case ProfileId::kNvidiaNosat:
      return profile_detail::NvidiaEncode(false, src_id, src, src_code, dst_id, dst, mode, out);
    case ProfileId::kMlDtypes:
      return profile_detail::MlDtypesEncode(src_id, src, src_code, dst_id, dst, mode, out);
    case ProfileId::kPytorchCpu:
      return profile_detail::PytorchEncode(profile_detail::kPytorch211Cpu, src_id, src, src_code, dst_id, dst,
                                           mode, out);
    case ProfileId::kPytorchCuda:
      return profile_detail::PytorchEncode(profile_detail::kPytorch211Cuda, src_id, src, src_code, dst_id, dst,
                                           mode, out);
    case ProfileId::kPytorchCpu215:
      return profile_detail::PytorchEncode(profile_detail::kPytorch215Cpu, src_id, src, src_code, dst_id, dst,
                                           mode, out);
    case ProfileId::kNumpy:
      return profile_detail::NumpyEncode(src_id, src, src_code, dst_id, dst, mode, out);
  }
  return false;
}

// Decodes to FP32 bits as `profile` does (ProfileEncode into FP32). false: the
// profile does not have the source format.
LOWBIT_HD_CONSTEXPR bool ProfileDecodeToF32Bits(ProfileId profile, const FormatSpec& src,
                                                std::uint64_t code, std::uint32_t* out) {
  constexpr FormatSpec kDst = kFp32;
  EncodeResult r;
  if (!ProfileEncode(profile, src, code, kDst, RoundingMode::kNearestEven, &r)) return false;
  *out = static_cast<std::uint32_t>(r.code);
  return true;
}

}  // namespace lowbit
