// `lowbit encode FORMAT VALUE`: the code of a value. VALUE is read exactly
// (value_parse.h), rounded to nearest even into the input type given by
// --from (default fp64, as a C program's `double` would hold it; with
// --profile, the first of fp32, bf16, fp16, fp64 that the profile converts
// from; a note on stderr says when that rounding changed the value), then
// encoded by the model with the chosen options, or by a named profile. Prints
// "<code hex> <exact value of the code> flags=<flags>" (value_text.h ValueText:
// E8M0 values and long powers of two also as 2^k).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/profiles/profiles.h"
#include "lowbit/formats/user_word.h"
#include "parse.h"
#include "value_parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

struct EncodeArgs {
  std::string format;
  std::string value;
  std::string round = "rne";
  std::optional<std::string> random_bits;
  std::optional<int> random_bit_count;  // given: only with --round stochastic
  bool saturate = false;
  std::string profile;
  std::string from;  // empty: fp64, or the profile's natural source (NaturalSource)
};

constexpr FormatId kInputTypes[] = {FormatId::kFp32, FormatId::kBf16, FormatId::kFp16, FormatId::kFp64};

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
    throw CommandError(QuoteUserWord(name) + " is not an input type (fp64, fp32, fp16 or bf16)");
  }
  return Spec(id);
}

ProfileId ParseProfile(const std::string& name) {
  ProfileId profile{};
  std::string error;
  if (!recipe::ParseProfileName(name, &profile, &error)) throw CommandError(error);
  return profile;
}

// Whether `profile` has the conversion from -> dst in `mode` at all (a zero
// input is defined wherever the conversion is).
bool ProfileConverts(ProfileId profile, const FormatSpec& from, const FormatSpec& dst, RoundingMode mode) {
  EncodeResult ignored;
  return ProfileEncode(profile, from, 0, dst, mode, &ignored);
}

// "--from fp32 --round rne, --from fp32 --round rtz, ..." for dst, or "none".
std::string SupportedPairs(ProfileId profile, const FormatSpec& dst) {
  std::string pairs;
  for (FormatId from : kInputTypes) {
    for (RoundingMode mode : {RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
                              RoundingMode::kUp, RoundingMode::kDown, RoundingMode::kOdd}) {
      if (ProfileConverts(profile, Spec(from), dst, mode)) {
        pairs += std::string(pairs.empty() ? "" : ", ") + "--from " + Spec(from).name + " --round " +
                 RoundingModeName(mode);
      }
    }
  }
  return pairs.empty() ? "none" : pairs;
}

[[noreturn]] void ThrowNoConversion(ProfileId profile, const FormatSpec& from, const FormatSpec& dst,
                                    RoundingMode mode) {
  throw CommandError(std::string("profile ") + ProfileName(profile) + " has no conversion " + from.name + " -> " +
                     dst.name + " with rounding " + RoundingModeName(mode) + "; it has: " +
                     SupportedPairs(profile, dst));
}

// The input type a profile converts from when --from is not given: FP32
// first (hardware cvt, torch.float32, ml_dtypes' usual source), then the
// 16-bit types, then FP64.
const FormatSpec& NaturalSource(ProfileId profile, const FormatSpec& dst, RoundingMode mode) {
  for (FormatId from : kInputTypes) {
    if (ProfileConverts(profile, Spec(from), dst, mode)) return Spec(from);
  }
  ThrowNoConversion(profile, Spec(FormatId::kFp32), dst, mode);
}

EncodeResult EncodeWithProfile(const EncodeArgs& args, ProfileId profile, const FormatSpec& from,
                               std::uint64_t input, const FormatSpec& dst, RoundingMode mode) {
  if (args.saturate) {
    throw CommandError("--saturate with --profile: the profile fixes the overflow policy");
  }
  if (args.random_bits || args.random_bit_count) {
    throw CommandError("--random-bits and --random-bit-count with --profile: profiles take no random bits");
  }
  EncodeResult result;
  if (!ProfileEncode(profile, from, input, dst, mode, &result)) {
    if (ProfileConverts(profile, from, dst, mode)) {
      throw CommandError(std::string("profile ") + ProfileName(profile) + " leaves the result of " + QuoteUserWord(args.value) +
                         " (" + from.name + " " + Hex(input) + ") -> " + dst.name + " undefined");
    }
    ThrowNoConversion(profile, from, dst, mode);
  }
  return result;
}

void RunEncode(const EncodeArgs& args) {
  const FormatSpec& dst = Spec(ParseFormat(args.format));
  const RoundingMode mode = ParseRoundingMode(args.round);
  std::optional<ProfileId> profile;
  if (!args.profile.empty()) profile = ParseProfile(args.profile);
  const FormatSpec& from = !args.from.empty() ? InputType(args.from)
                           : profile            ? NaturalSource(*profile, dst, mode)
                                                : Spec(FormatId::kFp64);
  const Unpacked exact = ParseExactValue(args.value);
  const EncodeResult input = RoundPack(from, exact, EncodeOptions{});
  EncodeResult result;
  if (profile) {
    result = EncodeWithProfile(args, *profile, from, input.code, dst, mode);
  } else {
    EncodeOptions options;
    options.rounding = mode;
    options.overflow = args.saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
    if (mode == RoundingMode::kStochastic) {
      if (!args.random_bits) throw CommandError("--round stochastic needs --random-bits N");
      options.random_bits = static_cast<std::uint32_t>(ParseUnsigned(*args.random_bits, 0xFFFFFFFFu, "--random-bits"));
      options.random_bit_count = args.random_bit_count.value_or(0);
    } else if (args.random_bits || args.random_bit_count) {
      throw CommandError(std::string(args.random_bits ? "--random-bits" : "--random-bit-count") +
                         " needs --round stochastic (other modes use no random bits)");
    }
    result = Convert(from, input.code, dst, options);
  }
  // The note comes only with a result: an error is the one line on stderr.
  if (input.flags != kFlagNone) {
    std::fprintf(stderr, "note: %s is not a %s value; encoding the %s %s (%s)\n",
                 QuoteUserWord(args.value).c_str(), from.name, from.name,
                 ExactDecimal(from, input.code).c_str(), Hex(input.code).c_str());
  }
  std::printf("%s %s flags=%s\n", Hex(result.code).c_str(), ValueText(dst, result.code).c_str(),
              FlagNames(result.flags).c_str());
}

// "MODE in {rne,rna,...}": every spelling --round accepts (parse.h).
std::string RoundingModeHelp() {
  std::string help = "MODE in {";
  for (const std::string& spelling : RoundingModeSpellings()) help += (help.back() == '{' ? "" : ",") + spelling;
  return help + "}";
}

}  // namespace

void AddEncodeCommand(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  CLI::App* encode = app.add_subcommand("encode", "Code of a value in a format");
  encode->add_option("format", args->format, "Destination format (lowbit list formats)")->required();
  encode->add_option("value", args->value, "Decimal (0.25, -.5, 1e-3), hex float (0x1.cp+8), inf, nan")
      ->required();
  encode->add_option("--round", args->round, "Rounding mode")
      ->capture_default_str()
      ->check(GrammarValidator(RoundingModeHelp(),
                               [](const std::string& name) { ParseRoundingMode(name); }));
  encode->add_option("--random-bits", args->random_bits,
                     "Random word for --round stochastic: 0 to 4294967295 (or 0x..)");
  encode->add_option("--random-bit-count", args->random_bit_count,
                     "Low bits of the random word used (0: the format's default)")
      ->check(CLI::Range(0, 32));
  encode->add_flag("--saturate", args->saturate, "Clamp overflow to the largest finite value");
  std::string profiles;
  for (ProfileId id : kAllProfiles) profiles += std::string(profiles.empty() ? "" : ",") + ProfileName(id);
  encode->add_option("--profile", args->profile, "Encode as an implementation does (lowbit list profiles)")
      ->check(GrammarValidator("PROFILE in {" + profiles + "}", [](const std::string& name) { ParseProfile(name); }));
  encode->add_option("--from", args->from,
                     "Input type the value is first rounded to (default fp64; with --profile, the first of "
                     "fp32, bf16, fp16, fp64 the profile converts from)")
      ->check(GrammarValidator("TYPE in {fp64,fp32,fp16,bf16}", [](const std::string& name) { InputType(name); }));
  encode->callback([args] { RunEncode(*args); });
}

}  // namespace lowbit::tools
