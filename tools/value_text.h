// How the CLI writes a code's value: exact decimal (no float formatting is
// involved, so 2^-133 prints all of its digits), hex float, class, fields.
#pragma once

#include <cstdint>
#include <string>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit::tools {

// The exact decimal of an unpacked value: "0", "-0", "448", "-0.001953125",
// "inf", "-inf", "nan", "-nan".
std::string ExactDecimal(const Unpacked& value);
std::string ExactDecimal(const FormatSpec& spec, std::uint64_t code);

// ExactDecimal with the power of two beside it when the value is +-2^k and
// the digits alone hide k: every value of a format without mantissa bits
// (E8M0: "0.0000...5878... (2^-127)"), and any power of two whose decimal is
// longer than 8 characters ("0.0009765625 (2^-10)"); otherwise ExactDecimal.
std::string ValueText(const FormatSpec& spec, std::uint64_t code);
std::string ValueText(const Unpacked& value, bool always_power);

// C99 hex float of the value (exact: every format's values are FP64 values),
// e.g. "0x1.cp+8"; "inf"/"nan" with sign for the specials.
std::string HexFloat(const FormatSpec& spec, std::uint64_t code);

// "zero", "subnormal", "normal", "inf", "nan" for floats; "integer" otherwise.
const char* ClassName(const FormatSpec& spec, std::uint64_t code);

// The code's bits split into fields, e.g. "0 1111 110" (sign exponent mantissa).
std::string FieldBits(const FormatSpec& spec, std::uint64_t code);

}  // namespace lowbit::tools
