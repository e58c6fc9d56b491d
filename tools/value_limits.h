// The longest number word the command line reads, shared by the two places
// that read one: value_parse.cc (an argument) and value_file.cc (a word of a
// --file, refused as soon as it passes the limit, before it is read whole).
#pragma once

#include <cstddef>

namespace lowbit::tools {

// Longer words are refused: every value that can round differently in any
// format fits (FP64's smallest subnormal has 767 significant digits).
inline constexpr std::size_t kMaxValueLength = 4096;

}  // namespace lowbit::tools
