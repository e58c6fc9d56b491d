// A profile's FP32 encode as a code, for tests that compare profiles on FP32
// inputs (profiles/disagreement_*). An encode the profile refuses (the
// format or mode is not one it has) fails the test, naming the profile, the
// destination and the input.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/profiles.h"

namespace lowbit::testing {

inline std::uint64_t ProfileEncodeF32(ProfileId profile, std::uint32_t bits, const FormatSpec& dst,
                                      RoundingMode mode = RoundingMode::kNearestEven) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(profile, kFp32, bits, dst, mode, &r))
      << ProfileName(profile) << " " << dst.name << " 0x" << std::hex << bits;
  return r.code;
}

}  // namespace lowbit::testing
