// The option sets every encode and decode row runs with (inputs.h).
#include "lowbit/check/inputs.h"

#include "lowbit/formats/profiles/profiles.h"

namespace lowbit::check {

std::vector<EncodeCombo> EncodeCombos(const FormatSpec& dst) {
  // The rounding modes the option sets run, named by rounding_mode_list.h;
  // the tie variants rnu, rnd, rnz are not among them.
  static constexpr RoundingMode kModes[] = {
      RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero, RoundingMode::kUp,
      RoundingMode::kDown,        RoundingMode::kOdd,         RoundingMode::kStochastic,
  };
  std::vector<EncodeCombo> combos;
  for (RoundingMode mode : kModes) {
    for (bool saturate : {false, true}) {
      EncodeCombo combo;
      combo.name = std::string(RoundingModeName(mode)) + (saturate ? "+sat" : "");
      combo.options.rounding = mode;
      combo.options.overflow = saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
      combo.exhaustive = mode == RoundingMode::kNearestEven;
      combos.push_back(combo);
    }
  }
  EncodeCombo wide_random;  // all 32 random bits instead of the format's default count
  wide_random.name = "stochastic/32";
  wide_random.options.rounding = RoundingMode::kStochastic;
  wide_random.options.random_bit_count = 32;
  combos.push_back(wide_random);
  // Every NaN / zero / sign policy at its other values (policy.h).
  EncodeCombo hardware;
  hardware.name = "rne+sat,nan+allones,nan->0,-0->+0,|neg|,0->nan,inf->nonfinite";
  hardware.options.overflow = Overflow::kSaturate;
  hardware.options.inf_input = InfInput::kAlwaysNonFinite;
  hardware.options.nan_sign = NanSign::kPositive;
  hardware.options.nan_payload = NanPayload::kAllOnes;
  hardware.options.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
  hardware.options.keep_negative_zero = false;
  hardware.options.zero_into_no_zero = ZeroIntoNoZero::kNan;
  hardware.options.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  combos.push_back(hardware);
  EncodeCombo library;
  library.name = "rtz,nan-quiet,nan->-+0,neg->0";
  library.options.rounding = RoundingMode::kTowardZero;
  library.options.nan_sign = NanSign::kNegative;
  library.options.nan_payload = NanPayload::kQuietOnly;
  library.options.nan_into_no_nan = NanIntoNoNan::kOppositeSignZero;
  library.options.negative_into_unsigned = NegativeIntoUnsigned::kClampZero;
  combos.push_back(library);
  // Every profile's own options in round-to-nearest-even, and the nvidia
  // profiles in each rounding mode PTX cvt has (rn, rz, rm, rp), so the rows
  // that accept only one implementation's options -- cuda-hw is PTX cvt, the
  // nvidia profile (cuda/src/hardware_rule.h) -- are checked like the others.
  // Where .satfinite exists beyond the headers (the 16-bit destinations,
  // hardware_rule.h HardwareEncodeRule) it is one more set.
  for (ProfileId profile : kAllProfiles) {
    const bool nvidia = profile == ProfileId::kNvidia || profile == ProfileId::kNvidiaNosat;
    for (RoundingMode mode : kModes) {
      const bool cvt_mode = mode == RoundingMode::kNearestEven || mode == RoundingMode::kTowardZero ||
                            mode == RoundingMode::kUp || mode == RoundingMode::kDown;
      if (mode != RoundingMode::kNearestEven && !(nvidia && cvt_mode)) continue;
      EncodeCombo combo;
      if (!ProfileEncodeOptions(profile, dst, mode, &combo.options)) continue;
      combo.name = std::string("profile ") + ProfileName(profile) + "," + RoundingModeName(mode);
      combos.push_back(combo);
      if (profile == ProfileId::kNvidia && dst.total_bits == 16 && combo.options.overflow != Overflow::kSaturate) {
        combo.name += "+satfinite";
        combo.options.overflow = Overflow::kSaturate;
        combos.push_back(combo);
      }
    }
  }
  if (!dst.IsFloat()) {
    EncodeCombo wrap;  // ml_dtypes int4 casts (docs/formats-reference.md §8.1)
    wrap.name = "rne+wrap";
    wrap.options.overflow = Overflow::kWrap;
    combos.push_back(wrap);
  }
  return combos;
}

std::vector<DecodeCombo> DecodeCombos(const FormatSpec& src) {
  const DecodeOptions sets[] = {
      DecodeOptions{},
      DecodeOptions{NanSign::kPositive, NanPayload::kAllOnes},
      DecodeOptions{NanSign::kNegative, NanPayload::kQuietOnly},
  };
  std::vector<DecodeCombo> combos;
  for (const DecodeOptions& d : sets) {
    const char* sign = d.nan_sign == NanSign::kKeep       ? "nan-sign-kept"
                       : d.nan_sign == NanSign::kPositive ? "nan+"
                                                          : "nan-";
    const char* payload = d.nan_payload == NanPayload::kTruncate  ? "payload"
                          : d.nan_payload == NanPayload::kAllOnes ? "all-ones"
                                                                  : "quiet";
    combos.push_back({std::string(sign) + "," + payload, d});
  }
  // Every profile's decode options for this source (cuda-hw decodes are the
  // nvidia profile's, cuda/src/hardware_rule.h HardwareDecodeRule).
  for (ProfileId profile : kAllProfiles) {
    combos.push_back({std::string("profile ") + ProfileName(profile), ProfileDecodeOptions(profile, src)});
  }
  return combos;
}

std::uint32_t RandomWord(std::uint64_t index, int combo) {
  std::uint64_t z = index + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(combo + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 16);
}

}  // namespace lowbit::check
