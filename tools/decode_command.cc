// `lowbit decode FORMAT CODE`: the value of a code, exactly, with its FP32
// bits and FP64 hex float. Prints "<exact decimal> fp32=0x.. fp64=<hex float>".
//
// `lowbit decode FORMAT CODE --profile P` decodes as the implementation P
// does (docs/design.md "Profiles"): the FP32 bits P returns, its NaN sign and
// payload included, e.g. which NaN PyTorch, ml_dtypes or NVIDIA's headers give
// for E4M3 0x7f. Prints "<exact decimal> fp32=0x.. profile=P".
// `--profile all` prints that line for every profile that has the format, so
// the implementations can be compared at a glance.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/profiles/profiles.h"
#include "lowbit/formats/recipe/names.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {
namespace {

constexpr const char* kAllProfilesWord = "all";

struct DecodeArgs {
  std::string format;
  std::string code;
  std::string profile;  // empty: the format's own decode; "all": every profile
};

ProfileId ParseDecodeProfile(const std::string& name) {
  ProfileId profile{};
  std::string error;
  if (!recipe::ParseProfileName(name, &profile, &error)) throw CommandError(error);
  return profile;
}

// One line per profile; false where the profile does not have the format.
bool PrintProfileDecode(ProfileId profile, const FormatSpec& spec, std::uint64_t code) {
  std::uint32_t bits = 0;
  if (!ProfileDecodeToF32Bits(profile, spec, code, &bits)) return false;
  std::printf("%s fp32=%s profile=%s\n", ValueText(spec, code).c_str(), Hex(bits).c_str(), ProfileName(profile));
  return true;
}

void RunDecode(const DecodeArgs& args) {
  const FormatSpec& spec = Spec(ParseFormat(args.format));
  const std::uint64_t code = ParseCode(spec, args.code);
  if (args.profile == kAllProfilesWord) {
    int printed = 0;
    for (ProfileId id : kAllProfiles) printed += PrintProfileDecode(id, spec, code) ? 1 : 0;
    if (printed == 0) throw CommandError(std::string("no profile decodes ") + spec.name);
    return;
  }
  if (!args.profile.empty()) {
    const ProfileId profile = ParseDecodeProfile(args.profile);
    if (!PrintProfileDecode(profile, spec, code)) {
      throw CommandError(std::string("profile ") + ProfileName(profile) + " has no " + spec.name +
                         " (lowbit decode " + spec.name + " " + args.code + " --profile all lists those that do)");
    }
    return;
  }
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
  std::string profiles;
  for (ProfileId id : kAllProfiles) profiles += std::string(profiles.empty() ? "" : ",") + ProfileName(id);
  decode->add_option("--profile", args->profile,
                     "Decode as an implementation does: the FP32 bits it returns, NaN sign and payload "
                     "included (lowbit list profiles); 'all' prints every profile that has the format")
      ->check(GrammarValidator("PROFILE in {" + profiles + ",all}", [](const std::string& name) {
        if (name != kAllProfilesWord) ParseDecodeProfile(name);
      }));
  decode->callback([args] { RunDecode(*args); });
}

}  // namespace lowbit::tools
