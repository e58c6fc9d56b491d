// f32_values.h: the FP32 words of the command line.
#include "f32_values.h"

#include <cstdint>
#include <string_view>

#include "commands.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/round_pack.h"
#include "lowbit/formats/user_word.h"
#include "parse.h"
#include "value_file.h"
#include "value_parse.h"
#include "value_text.h"

namespace lowbit::tools {

std::vector<float> ReadF32Values(const std::vector<std::string>& texts, const std::string& file) {
  std::vector<float> out;
  const auto add = [&out](std::string_view text) {
    const EncodeResult r = RoundPack(kFp32, ParseExactValue(std::string(text)), EncodeOptions{});
    out.push_back(BitCast<float>(static_cast<std::uint32_t>(r.code)));
  };
  for (const std::string& t : texts) add(t);
  if (!file.empty()) {
    ForEachWordInFile(file, [&](std::string_view word, long index) {
      try {
        add(word);
      } catch (const CommandError& e) {
        throw CommandError("--file " + QuoteUserWord(file) + ", value " + std::to_string(index + 1) + ": " +
                           e.what());
      }
    });
  }
  if (out.empty()) {
    throw CommandError(file.empty() ? "no values (give them as arguments or with --file)"
                                    : "no values (--file " + QuoteUserWord(file) + " holds no numbers)");
  }
  return out;
}

std::string F32Text(float x) {
  const std::uint32_t bits = BitCast<std::uint32_t>(x);
  return ExactDecimal(kFp32, bits) + " (" + Hex(bits) + ")";
}

}  // namespace lowbit::tools
