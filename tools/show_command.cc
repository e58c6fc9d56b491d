// `lowbit show FORMAT CODE`: one code taken apart: fields, class, exact value.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/formats/convert.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

struct ShowArgs {
  std::string format;
  std::string code;
};

void PrintFloatFields(const FormatSpec& spec, std::uint64_t code) {
  const std::uint64_t exponent_field =
      (code >> spec.mantissa_bits) & static_cast<std::uint64_t>(spec.MaxExponentField());
  const std::uint64_t mantissa_field = code & spec.MantissaMask();
  if (spec.has_sign) {
    std::printf("sign      %d (%s)\n", static_cast<int>((code & spec.SignBit()) != 0),
                (code & spec.SignBit()) ? "-" : "+");
  } else {
    std::printf("sign      none (unsigned format)\n");
  }
  std::printf("exponent  %llu (field), bias %d\n",
              static_cast<unsigned long long>(exponent_field), spec.bias);
  std::printf("mantissa  %s (%d bits)\n", Hex(mantissa_field).c_str(), spec.mantissa_bits);
}

void RunShow(const ShowArgs& args) {
  const FormatSpec& spec = Spec(ParseFormat(args.format));
  const std::uint64_t code = ParseCode(spec, args.code);
  std::printf("format    %s (%d bits", spec.name, spec.total_bits);
  if (spec.IsFloat()) {
    std::printf(", %s%d.%d, bias %d", spec.has_sign ? "1." : "0.", spec.exponent_bits,
                spec.mantissa_bits, spec.bias);
  }
  std::printf(")\n");
  std::printf("code      %s\n", Hex(code).c_str());
  std::printf("bits      %s\n", FieldBits(spec, code).c_str());
  if (spec.IsFloat()) PrintFloatFields(spec, code);
  std::printf("class     %s\n", ClassName(spec, code));
  std::printf("value     %s\n", ValueText(spec, code).c_str());
  std::printf("hex       %s\n", HexFloat(spec, code).c_str());
  std::printf("fp32      %s\n", Hex(DecodeToF32Bits(spec, code)).c_str());
}

}  // namespace

void AddShowCommand(CLI::App& app) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* show = app.add_subcommand("show", "Take one code apart: fields, class, exact value");
  show->add_option("format", args->format, "Format name (e4m3, bf16, e2m1, int4, ...)")->required();
  show->add_option("code", args->code, "Code: 0x7e, 0b01111110 or 126")->required();
  show->callback([args] { RunShow(*args); });
}

}  // namespace lowbit::tools
