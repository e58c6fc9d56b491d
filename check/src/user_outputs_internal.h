// Internal helpers shared by the user_outputs*.cc and diagnosis*.cc files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lowbit/check/user_outputs.h"

namespace lowbit::check::internal {

const char* RoundingName(RoundingMode mode);
bool ParseRounding(std::string_view text, RoundingMode* out);
std::string FormatTargetName(FormatId format, const std::optional<ProfileId>& profile, const EncodeOptions& options);

}  // namespace lowbit::check::internal
