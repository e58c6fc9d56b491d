// `lowbit encode FORMAT VALUE`: the code of a value. VALUE is read exactly
// (value_parse.h), rounded to nearest even into the input type given by
// --from (default fp64, as a C program's `double` would hold it; a note on
// stderr says when that rounding changed it), then encoded by the model with
// the chosen options, or by a named profile. Prints
// "<code hex> <exact value of the code> flags=<flags>".
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/profiles/profiles.h"
#include "parse.h"
#include "value_parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

struct EncodeArgs {
  std::string format;
  std::string value;
  std::string round = "rne";
  std::optional<std::uint64_t> random_bits;
  int random_bit_count = 0;
  bool saturate = false;
  std::string profile;
  std::string from = "fp64";
};

std::string FlagNames(std::uint8_t flags) {
  std::string names;
  const auto add = [&names](const char* name) { names += names.empty() ? name : std::string("|") + name; };
  if (flags & kFlagInexact) add("inexact");
  if (flags & kFlagUnderflow) add("underflow");
  if (flags & kFlagOverflow) add("overflow");
  if (flags & kFlagInvalid) add("invalid");
  return names.empty() ? "none" : names;
}

const FormatSpec& InputType(const std::string& name) {
  const FormatId id = ParseFormat(name);
  if (id != FormatId::kFp64 && id != FormatId::kFp32 && id != FormatId::kFp16 &&
      id != FormatId::kBf16) {
    throw CommandError("--from " + name + ": the input type must be fp64, fp32, fp16 or bf16");
  }
  return Spec(id);
}

EncodeResult EncodeWithProfile(const EncodeArgs& args, const FormatSpec& from,
                               std::uint64_t input, const FormatSpec& dst, RoundingMode mode) {
  ProfileId profile{};
  std::string error;
  if (!recipe::ParseProfileName(args.profile, &profile, &error)) throw CommandError(error);
  if (args.saturate) {
    throw CommandError("--saturate with --profile: the profile fixes the overflow policy");
  }
  if (args.random_bits) {
    throw CommandError("--random-bits with --profile: profiles take no random bits");
  }
  EncodeResult result;
  if (!ProfileEncode(profile, from, input, dst, mode, &result)) {
    throw CommandError(std::string("profile ") + ProfileName(profile) + " has no conversion " +
                       from.name + " -> " + dst.name + " with rounding " +
                       RoundingModeName(mode) + " (try another --from or --round)");
  }
  return result;
}

void RunEncode(const EncodeArgs& args) {
  const FormatSpec& dst = Spec(ParseFormat(args.format));
  const FormatSpec& from = InputType(args.from);
  const RoundingMode mode = ParseRoundingMode(args.round);
  const Unpacked exact = ParseExactValue(args.value);
  const EncodeResult input = RoundPack(from, exact, EncodeOptions{});
  if (input.flags != kFlagNone) {
    std::fprintf(stderr, "note: %s is not a %s value; encoding the %s %s (%s)\n",
                 args.value.c_str(), from.name, from.name,
                 ExactDecimal(from, input.code).c_str(), Hex(input.code).c_str());
  }
  EncodeResult result;
  if (!args.profile.empty()) {
    result = EncodeWithProfile(args, from, input.code, dst, mode);
  } else {
    EncodeOptions options;
    options.rounding = mode;
    options.overflow = args.saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
    if (mode == RoundingMode::kStochastic) {
      if (!args.random_bits) throw CommandError("--round stochastic needs --random-bits N");
      if (*args.random_bits > 0xFFFFFFFFu) {
        throw CommandError("--random-bits " + std::to_string(*args.random_bits) +
                           " does not fit in 32 bits");
      }
      options.random_bits = static_cast<std::uint32_t>(*args.random_bits);
      options.random_bit_count = args.random_bit_count;
    } else if (args.random_bits) {
      throw CommandError("--random-bits needs --round stochastic");
    }
    result = Convert(from, input.code, dst, options);
  }
  std::printf("%s %s flags=%s\n", Hex(result.code).c_str(), ExactDecimal(dst, result.code).c_str(),
              FlagNames(result.flags).c_str());
}

}  // namespace

void AddEncodeCommand(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  CLI::App* encode = app.add_subcommand("encode", "Code of a value in a format");
  encode->add_option("format", args->format, "Destination format")->required();
  encode->add_option("value", args->value, "Decimal (0.25, 1e-3), hex float (0x1.cp+8), inf, nan")
      ->required();
  encode->add_option("--round", args->round, "rne|rna|rtz|up|down|odd|stochastic")
      ->capture_default_str();
  encode->add_option("--random-bits", args->random_bits, "Random word for --round stochastic");
  encode->add_option("--random-bit-count", args->random_bit_count,
                     "Low bits of the random word used (0: the format's default)")
      ->check(CLI::Range(0, 32));
  encode->add_flag("--saturate", args->saturate, "Clamp overflow to the largest finite value");
  encode->add_option("--profile", args->profile,
                     "Encode as an implementation does (ocp, nvidia, ml_dtypes, pytorch-cpu, ...)");
  encode->add_option("--from", args->from, "Input type the value is first rounded to")
      ->capture_default_str();
  encode->callback([args] { RunEncode(*args); });
}

}  // namespace lowbit::tools
