// Parsing of the command line's words: format names, codes, rounding modes.
// Each throws CommandError naming the problem.
#pragma once

#include <cstdint>
#include <string>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::tools {

// A name FindFormat knows (canonical or alias), case-insensitive.
FormatId ParseFormat(const std::string& name);

// A code of `spec`: hex (0x7e), binary (0b01111110) or decimal (126); it must
// fit in spec.total_bits.
std::uint64_t ParseCode(const FormatSpec& spec, const std::string& text);

// rne|rna|rtz|up|down|odd|stochastic (and the PTX spellings rn, rz, rp, rm).
RoundingMode ParseRoundingMode(const std::string& name);
const char* RoundingModeName(RoundingMode mode);

// "0x" + lower-case hex without padding: 0x0, 0x7e, 0x7fc00000.
std::string Hex(std::uint64_t value);

}  // namespace lowbit::tools
