// Internal helpers shared by the user_outputs*.cc and diagnosis*.cc files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lowbit/check/user_outputs.h"

namespace lowbit::check::internal {

const char* RoundingName(RoundingMode mode);
// Whether `profile` converts from -> dst in `mode` at all / from any input
// type (fp32, bf16, fp16, fp64).
bool ProfileConverts(ProfileId profile, const FormatSpec& from, const FormatSpec& dst, RoundingMode mode);
bool ProfileConvertsTo(ProfileId profile, const FormatSpec& dst, RoundingMode mode);
bool ParseRounding(std::string_view text, RoundingMode* out);
std::string FormatTargetName(FormatId format, const std::optional<ProfileId>& profile, const EncodeOptions& options);

}  // namespace lowbit::check::internal
