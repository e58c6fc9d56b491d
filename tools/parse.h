// Parsing of the command line's words: format and recipe names, codes, rounding modes.
// Each throws CommandError naming the problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::tools {

// A name FindFormat knows (canonical or alias), case-insensitive.
FormatId ParseFormat(const std::string& name);

// A recipe name through the one grammar (recipe/names.h); its message names
// the problem and, on a near miss, what was probably meant (group and tile
// sizes: whole numbers from 1 to recipe::names_detail::kMaxLayoutSize, one
// limit and one message for every spelling). A format name without a recipe
// profile ("e4m3", "int8:nvidia") is refused with the format's recipes, if
// it has any.
recipe::Target ParseRecipeOrThrow(const std::string& name);

// A code of `spec`: hex (0x7e), binary (0b01111110) or decimal (126); it must
// fit in spec.total_bits.
std::uint64_t ParseCode(const FormatSpec& spec, const std::string& text);

// A whole number 0..max, decimal or hex (0x..); `what` names the argument
// in the error ("--random-bits"). No sign, no blanks, no wrap-around.
std::uint64_t ParseUnsigned(const std::string& text, std::uint64_t max, const std::string& what);

// A rounding mode's name or alias (rounding_mode_list.h), case-insensitive;
// the name of a mode is lowbit::RoundingModeName.
RoundingMode ParseRoundingMode(const std::string& name);
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
