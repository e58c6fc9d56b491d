// `lowbit decode FORMAT CODE`: the value of a code, exactly, with its FP32
// bits and FP64 hex float. Prints "<exact decimal> fp32=0x.. fp64=<hex float>".
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/formats/convert.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

struct DecodeArgs {
  std::string format;
  std::string code;
};

void RunDecode(const DecodeArgs& args) {
  const FormatSpec& spec = Spec(ParseFormat(args.format));
  const std::uint64_t code = ParseCode(spec, args.code);
  std::printf("%s fp32=%s fp64=%s%s\n", ValueText(spec, code).c_str(),
              Hex(DecodeToF32Bits(spec, code)).c_str(), HexFloat(spec, code).c_str(),
              // Every format but FP64 is exact in FP32 (convert.h).
              spec.total_bits == 64 ? " (fp32 rounded)" : "");
}

}  // namespace

void AddDecodeCommand(CLI::App& app) {
  auto args = std::make_shared<DecodeArgs>();
  CLI::App* decode = app.add_subcommand("decode", "Value of a code (exact, FP32 bits, FP64)");
  decode->add_option("format", args->format, "Format name")->required();
  decode->add_option("code", args->code, "Code: 0x7e, 0b01111110 or 126")->required();
  decode->callback([args] { RunDecode(*args); });
}

}  // namespace lowbit::tools
