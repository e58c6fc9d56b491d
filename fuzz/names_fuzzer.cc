// Fuzzes the one name grammar, formats/include/lowbit/formats/recipe/names.h
// (ParseTarget: FORMAT[:PROFILE][/LAYOUT]), its pieces (ParseFormatName,
// ParseProfileName, ParseLayout) and the CLI's format reader (tools/parse.h
// ParseFormat). Properties: a rejected name comes with a message; an
// accepted target's CanonicalName parses back to the same target (names.h
// promises that); a recipe's layout has a size the grammar allows; a refusal's message is one bounded line of printable ASCII, the
// user's words quoted (formats/user_word.h). Anything else (a crash, a
// sanitizer report, an exception other than CommandError) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "commands.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/user_word.h"
#include "parse.h"

namespace {

void Trap(const char* what, const std::string& text) {
  std::fprintf(stderr, "names_fuzzer: %s: %s\n", what, lowbit::QuoteUserWord(text).c_str());
  __builtin_trap();
}

// A refusal's message shows the user's words quoted (user_word.h): one line
// of printable ASCII, bounded whatever the input's length (the candidates
// listed and a few quoted words, far below this).
constexpr std::size_t kMaxMessageBytes = 4096;
void CheckMessage(const char* who, const std::string& message, const std::string& text) {
  if (message.empty()) Trap((std::string(who) + " refused without a message").c_str(), text);
  if (message.size() > kMaxMessageBytes) Trap((std::string(who) + ": message longer than its bound").c_str(), text);
  for (const char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
      Trap((std::string(who) + ": a raw byte in the message: " + lowbit::QuoteUserWord(message)).c_str(), text);
    }
  }
}

bool SameLayout(const lowbit::recipe::Layout& a, const lowbit::recipe::Layout& b) {
  return a.geometry == b.geometry && a.size == b.size && a.tile_rows == b.tile_rows;
}

bool SameTarget(const lowbit::recipe::Target& a, const lowbit::recipe::Target& b) {
  using lowbit::recipe::Target;
  if (a.kind != b.kind) return false;
  if (a.kind == Target::Kind::kFormat) return a.format == b.format && a.profile == b.profile;
  return a.recipe == b.recipe && SameLayout(a.layout, b.layout);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace lowbit;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;

  recipe::Target target;
  if (recipe::ParseTarget(text, &target, &error)) {
    if (target.kind == recipe::Target::Kind::kRecipe) {
      if (target.recipe == nullptr) Trap("recipe target without a recipe", text);
      if (target.layout.size < 0 || target.layout.tile_rows < 0) Trap("negative layout size", text);
    }
    const std::string canonical = recipe::CanonicalName(target);
    recipe::Target again;
    std::string again_error;
    if (!recipe::ParseTarget(canonical, &again, &again_error)) {
      Trap(("canonical name does not parse: '" + canonical + "': " + again_error).c_str(), text);
    }
    if (!SameTarget(target, again)) Trap(("canonical name '" + canonical + "' is another target").c_str(), text);
  } else {
    CheckMessage("ParseTarget", error, text);
  }

  FormatId format{};
  error.clear();
  if (!recipe::ParseFormatName(text, &format, &error)) CheckMessage("ParseFormatName", error, text);
  ProfileId profile{};
  error.clear();
  if (!recipe::ParseProfileName(text, &profile, &error)) CheckMessage("ParseProfileName", error, text);
  recipe::Layout layout;
  error.clear();
  if (recipe::ParseLayout(text, &layout, &error)) {
    if (layout.size < 0 || layout.tile_rows < 0) Trap("negative layout size", text);
    recipe::Layout again;
    std::string again_error;
    const std::string name = recipe::LayoutName(layout);
    if (!recipe::ParseLayout(name, &again, &again_error) || !SameLayout(layout, again)) {
      Trap(("LayoutName '" + name + "' does not parse back").c_str(), text);
    }
  } else {
    CheckMessage("ParseLayout", error, text);
  }

  try {
    tools::ParseFormat(text);
  } catch (const tools::CommandError& e) {
    CheckMessage("ParseFormat", e.what(), text);
  }
  return 0;
}
