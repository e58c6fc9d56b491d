// The cuda-hw backend's encode and decode rules, TAKEN from the `nvidia`
// profile (formats/include/lowbit/formats/profiles/nvidia.h), which the
// proptests check against the CUDA 13.0 headers and docs/formats-reference.md
// §2.1 found bit-exact with Hopper hardware. Nothing here restates a NaN,
// saturation or zero rule: convert.cu (Supports, HardwareEncodeOptions) and
// element_ops.cuh (the model each instruction is swept against) both read
// these functions, and cuda/tests/hardware_profile_test.cc checks on the host
// that what cuda-hw claims is exactly the profile's (plus the one modifier
// below).
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/nvidia.h"

namespace lowbit::cuda::detail {

struct HardwareRule {
  bool exists = false;  // the profile defines this conversion
  EncodeOptions options;
};

// The model options equal to a cvt into `dst` with rounding `mode`, with or
// without .satfinite: the `nvidia` profile (the headers' __NV_SATFINITE) for
// .satfinite, `nvidia-nosat` (__NV_NOSAT) otherwise. The profile models the
// header functions, and no header function has the .satfinite forms of the
// 16-bit conversions (cvt.rn.satfinite.{bf16x2,f16x2}.f32, PTX ISA 9.0
// §9.7.9.21), so their saturation is the one thing added here: .satfinite
// takes overflow and +-Inf to +-max (docs/formats-reference.md §10.2,
// column "rn.sat"); the profile already sets the Inf-like-overflow input
// rule. For every other destination the profile's .satfinite options
// saturate already, so the line changes nothing there.
LOWBIT_HD_CONSTEXPR HardwareRule HardwareEncodeRule(FormatId dst, RoundingMode mode, bool satfinite) {
  HardwareRule rule;
  rule.exists = profile_detail::NvidiaEncodeOptions(satfinite, dst, mode, &rule.options);
  if (rule.exists && satfinite) rule.options.overflow = Overflow::kSaturate;
  return rule;
}

// Decoding as the hardware does it (cvt.f32.f16 and the FP8 / FP4 / FP6 /
// E8M0 decodes): the profile's NvidiaDecodeOptions.
LOWBIT_HD_CONSTEXPR DecodeOptions HardwareDecodeRule(FormatId src) {
  return profile_detail::NvidiaDecodeOptions(src);
}

}  // namespace lowbit::cuda::detail
