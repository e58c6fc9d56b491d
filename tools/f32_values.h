// FP32 values in and out of the command line, for the commands that read
// numbers into a recipe's FP32 input (quantize, explain, check) and print
// FP32 results exactly.
#pragma once

#include <string>
#include <vector>

namespace lowbit::tools {

// Each value read exactly (value_parse.h), then rounded to nearest even into
// FP32; words of a --file are read as value_file.h says (bounded, text only,
// read errors named) and parsed one at a time, so memory holds floats, not
// words. No values at all is an error.
std::vector<float> ReadF32Values(const std::vector<std::string>& texts, const std::string& file);

// The exact decimal of x and its bits: "0.25 (0x3e800000)".
std::string F32Text(float x);

}  // namespace lowbit::tools
