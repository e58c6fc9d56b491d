// `lowbit table FORMAT`: every code with its class and exact value, one per
// line. Refused for FP32/FP64 (2^32 and 2^64 lines are no table).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

constexpr int kMaxTableBits = 16;

void RunTable(const std::string& format_name) {
  const FormatSpec& spec = Spec(ParseFormat(format_name));
  if (spec.total_bits > kMaxTableBits) {
    throw CommandError(std::string("table of ") + spec.name + ": too many codes (2^" +
                       std::to_string(spec.total_bits) + "); use show or decode for single codes");
  }
  for (std::uint64_t code = 0; code <= spec.CodeMask(); ++code) {
    std::printf("%s %s %s\n", Hex(code).c_str(), ClassName(spec, code),
                ValueText(spec, code).c_str());
  }
}

}  // namespace

void AddTableCommand(CLI::App& app) {
  auto format = std::make_shared<std::string>();
  CLI::App* table = app.add_subcommand("table", "Every code of a format: code, class, exact value");
  table->add_option("format", *format, "Format name (at most 16 bits)")->required();
  table->callback([format] { RunTable(*format); });
}

}  // namespace lowbit::tools
