// Reading `--file PATH`: whitespace-separated number words from a text file,
// with every way a file can go wrong named instead of hanging, truncating or
// echoing raw bytes (docs/bad-input.md "Command line"):
//   a directory, a missing or unreadable path   -> refused before reading;
//   a byte that is not printable ASCII or blank  -> "not a text file" with the
//                                                   byte and its offset (binary
//                                                   files such as /bin/ls, /dev/zero);
//   more than kMaxValueFileBytes                 -> refused when the limit is
//                                                   passed (a FIFO or a device that
//                                                   never ends is not read forever);
//   a word longer than kMaxValueLength           -> refused as soon as it is (a
//                                                   1 GB token is not read whole);
//   a read error                                 -> reported with errno's text,
//                                                   never taken for end of file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "lowbit/formats/user_word.h"

namespace lowbit::tools {

// 64 MiB of text: at least 2 bytes per number, so at most 32 Mi numbers.
inline constexpr std::uint64_t kMaxValueFileBytes = std::uint64_t{64} << 20;

// Opens `path` for reading without waiting (O_NONBLOCK: a FIFO with no
// writer would block open(2) forever) and keeps it only if it is a regular
// file or a character device (/dev/null, /dev/zero, a terminal); a
// directory, FIFO, socket or block device is refused by name. `name` is the
// option and the path as messages show them ("--file 'x.txt'"), `kind` what
// the file should be ("a text file of numbers"). Reads on the returned
// descriptor block again as usual. Throws CommandError; the caller closes.
int OpenInputFile(const std::string& name, const std::string& path, const char* kind, std::uint64_t* regular_size);

// Calls `word(text, index)` for each whitespace-separated word of the file at
// `path`, in order (index from 0). Throws CommandError naming the path and
// the problem.
void ForEachWordInFile(const std::string& path,
                       const std::function<void(std::string_view word, long index)>& word);

}  // namespace lowbit::tools
