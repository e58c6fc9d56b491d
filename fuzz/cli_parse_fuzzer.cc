// Fuzzes the CLI's word readers, tools/parse.h: ParseCode (hex, binary or
// decimal codes of every format), ParseUnsigned (whole numbers with a bound)
// and ParseRoundingMode. The first input byte picks the format and the bound,
// the rest is the word. Properties: an accepted code fits the format's
// total_bits; an accepted number is <= its bound; a rejected word throws
// CommandError with a message. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "commands.h"
#include "lowbit/formats/format_list.h"
#include "parse.h"

namespace {

void Trap(const char* what, const std::string& text) {
  std::fprintf(stderr, "cli_parse_fuzzer: %s: '%s'\n", what, text.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lowbit;
  if (size == 0) return 0;
  const FormatId id = kAllFormats[data[0] % std::size(kAllFormats)];
  const FormatSpec& spec = Spec(id);
  // Bounds users meet: a byte, 32 random bits, a thread count, everything.
  const std::uint64_t bounds[] = {0xFF, 0xFFFFFFFFu, 4096, ~std::uint64_t{0}};
  const std::uint64_t bound = bounds[(data[0] >> 5) % 4];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const std::uint64_t code = tools::ParseCode(spec, text);
    if (spec.total_bits < 64 && (code >> spec.total_bits) != 0) Trap("code does not fit its format", text);
  } catch (const tools::CommandError& e) {
    if (std::string_view(e.what()).empty()) Trap("ParseCode threw without a message", text);
  }
  try {
    if (tools::ParseUnsigned(text, bound, "--fuzz") > bound) Trap("number over its bound", text);
  } catch (const tools::CommandError& e) {
    if (std::string_view(e.what()).empty()) Trap("ParseUnsigned threw without a message", text);
  }
  try {
    const RoundingMode mode = tools::ParseRoundingMode(text);
    // A parsed mode's table name must parse back to the same mode.
    if (tools::ParseRoundingMode(RoundingModeName(mode)) != mode) Trap("rounding mode name does not round-trip", text);
  } catch (const tools::CommandError& e) {
    if (std::string_view(e.what()).empty()) Trap("ParseRoundingMode threw without a message", text);
  }
  return 0;
}
