// Parsing of the command line's words: format names, codes, rounding modes.
// Each throws CommandError naming the problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::tools {

// A name FindFormat knows (canonical or alias), case-insensitive.
FormatId ParseFormat(const std::string& name);

// A code of `spec`: hex (0x7e), binary (0b01111110) or decimal (126); it must
// fit in spec.total_bits.
std::uint64_t ParseCode(const FormatSpec& spec, const std::string& text);

// A whole number 0..max, decimal or hex (0x..); `what` names the argument
// in the error ("--random-bits"). No sign, no blanks, no wrap-around.
std::uint64_t ParseUnsigned(const std::string& text, std::uint64_t max, const std::string& what);

// rne|rna|rtz|up|down|odd|stochastic (and the PTX spellings rn, rz, rp, rm).
RoundingMode ParseRoundingMode(const std::string& name);
const char* RoundingModeName(RoundingMode mode);
// Every spelling ParseRoundingMode accepts, for CLI::IsMember in --help.
const std::vector<std::string>& RoundingModeSpellings();

// A CLI11 validator over one of the grammars above (or any parse that
// throws CommandError): --help shows `description` (the accepted values) and
// a bad value is a CLI11 validation error with the grammar's message, so
// aliases and near-miss hints keep working where CLI::IsMember would need
// every spelling listed.
CLI::Validator GrammarValidator(std::string description, void (*parse)(const std::string&));

// "0x" + lower-case hex without padding: 0x0, 0x7e, 0x7fc00000.
std::string Hex(std::uint64_t value);

}  // namespace lowbit::tools
