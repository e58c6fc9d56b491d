// Reading a number from the command line exactly. A decimal or hex-float
// string is an exact rational; it becomes an Unpacked whose 62-bit significand
// is that rational rounded to odd (truncated, lowest bit set when anything was
// discarded). Rounding to odd at 62 bits and then to any format of at most 60
// bits gives the same result as rounding the exact rational directly, in every
// mode (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE TC 2008, Theorem 1 needs
// p + 2 bits). FP64, the widest input type, has 53.
#pragma once

#include <string>

#include "lowbit/formats/unpacked.h"
#include "value_limits.h"

namespace lowbit::tools {

// Accepts [+-] then a decimal (12, 0.25, 1e-3, .5), a hex float (0x1.cp+8,
// 0x10), or inf / infinity / nan (any case), with optional blanks around.
// Throws CommandError otherwise.
// Whether the text was exact in a format shows as kFlagInexact when the
// result is rounded into it: the sticky bit always lies below 53 bits.
Unpacked ParseExactValue(const std::string& text);

}  // namespace lowbit::tools
