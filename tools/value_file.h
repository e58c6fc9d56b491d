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

namespace lowbit::tools {

// 64 MiB of text: at least 2 bytes per number, so at most 32 Mi numbers.
inline constexpr std::uint64_t kMaxValueFileBytes = std::uint64_t{64} << 20;

// Calls `word(text, index)` for each whitespace-separated word of the file at
// `path`, in order (index from 0). Throws CommandError naming the path and
// the problem.
void ForEachWordInFile(const std::string& path,
                       const std::function<void(std::string_view word, long index)>& word);

// `text` as it may be shown in a message: at most `max_chars` characters,
// bytes outside printable ASCII as \xNN, "..." when cut.
std::string Printable(std::string_view text, std::size_t max_chars = 64);

}  // namespace lowbit::tools
