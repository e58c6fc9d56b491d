// The one way a message shows a word the user typed or a file supplied (a
// format or recipe name, an option's value, a path, a .npy header): between
// single quotes, every byte outside printable ASCII -- and the quote and the
// backslash themselves -- as \xNN, and at most kMaxShownWordBytes bytes of
// it, followed by its full length when it was cut. So an error stays one
// line a terminal shows as is: a newline cannot forge a second line, an
// escape sequence cannot reach the terminal, a 100 KB name is not echoed
// whole (docs/bad-input.md "Words in messages").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lowbit {

inline constexpr std::size_t kMaxShownWordBytes = 80;

// 'e4m3\x0alowbit: ok' for "e4m3\nlowbit: ok"; 'aaaa...'... (100000 bytes)
// for a word longer than kMaxShownWordBytes.
inline std::string QuoteUserWord(std::string_view word) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::size_t shown = word.size() < kMaxShownWordBytes ? word.size() : kMaxShownWordBytes;
  std::string out = "'";
  for (std::size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(word[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  out += '\'';
  if (shown < word.size()) out += "... (" + std::to_string(word.size()) + " bytes)";
  return out;
}

}  // namespace lowbit
