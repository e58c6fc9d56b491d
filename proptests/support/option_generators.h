// The EncodeOptions that the model-vs-oracle tests sweep: every rounding
// mode, every overflow policy, and a few bundles of the NaN / -0 / unsigned /
// no-zero / Inf policies that real implementations use (docs/formats-reference.md §9), plus
// the random words for stochastic rounding. One list, shared by the
// exhaustive sweeps and the RapidCheck properties.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::testing {

inline constexpr RoundingMode kAllModes[] = {
    RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
    RoundingMode::kUp,          RoundingMode::kDown,        RoundingMode::kOdd,
    RoundingMode::kNearestUp,   RoundingMode::kNearestDown, RoundingMode::kNearestTowardZero,
    RoundingMode::kStochastic,
};

inline const char* ModeName(RoundingMode m) {
  switch (m) {
    case RoundingMode::kNearestEven: return "NearestEven";
    case RoundingMode::kNearestAway: return "NearestAway";
    case RoundingMode::kTowardZero: return "TowardZero";
    case RoundingMode::kUp: return "Up";
    case RoundingMode::kDown: return "Down";
    case RoundingMode::kOdd: return "Odd";
    case RoundingMode::kNearestUp: return "NearestUp";
    case RoundingMode::kNearestDown: return "NearestDown";
    case RoundingMode::kNearestTowardZero: return "NearestTowardZero";
    case RoundingMode::kStochastic: return "Stochastic";
  }
  return "?";
}

inline const char* OverflowName(Overflow o) {
  switch (o) {
    case Overflow::kFormatDefault: return "FormatDefault";
    case Overflow::kSaturate: return "Saturate";
    case Overflow::kWrap: return "Wrap";
  }
  return "?";
}

// Overflow policies that apply to a destination (kWrap: integers only).
inline std::vector<Overflow> OverflowsFor(const FormatSpec& dst) {
  std::vector<Overflow> v = {Overflow::kFormatDefault, Overflow::kSaturate};
  if (!dst.IsFloat()) v.push_back(Overflow::kWrap);
  return v;
}

struct PolicyBundle {
  const char* name;
  EncodeOptions options;  // rounding / overflow / random fields are overwritten
};

// Policy bundles after the implementations they imitate (docs/formats-reference.md §9).
inline std::vector<PolicyBundle> PolicyBundles() {
  std::vector<PolicyBundle> v;
  v.push_back({"defaults", EncodeOptions{}});
  EncodeOptions nvidia;  // CUDA headers / PTX: NaN +canonical, |x| into E8M0
  nvidia.nan_sign = NanSign::kPositive;
  nvidia.nan_payload = NanPayload::kAllOnes;
  nvidia.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  nvidia.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
  nvidia.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  nvidia.inf_input = InfInput::kLikeOverflow;
  v.push_back({"nvidia", nvidia});
  EncodeOptions ml_dtypes;  // ml_dtypes 0.6: NaN keeps sign, 0 -> NaN in E8M0
  ml_dtypes.nan_sign = NanSign::kKeep;
  ml_dtypes.nan_payload = NanPayload::kQuietOnly;
  ml_dtypes.nan_into_no_nan = NanIntoNoNan::kOppositeSignZero;
  ml_dtypes.zero_into_no_zero = ZeroIntoNoZero::kNan;
  ml_dtypes.negative_into_unsigned = NegativeIntoUnsigned::kNan;
  ml_dtypes.inf_input = InfInput::kAlwaysNonFinite;
  v.push_back({"ml_dtypes", ml_dtypes});
  EncodeOptions other;  // the remaining choices of each policy
  other.nan_sign = NanSign::kNegative;
  other.nan_payload = NanPayload::kPreserve;
  other.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
  other.keep_negative_zero = false;
  other.negative_into_unsigned = NegativeIntoUnsigned::kClampZero;
  v.push_back({"other", other});
  return v;
}

// One option set of the sweeps: a policy bundle with a rounding mode and an
// overflow policy applied (the random fields left as the bundle has them).
struct OptionSet {
  const char* bundle;
  EncodeOptions options;
};

// Every bundle x rounding mode x overflow policy that applies to `dst`, in
// that nesting order (bundles outermost).
inline std::vector<OptionSet> OptionSetsFor(const FormatSpec& dst) {
  std::vector<OptionSet> v;
  for (const PolicyBundle& bundle : PolicyBundles()) {
    for (RoundingMode mode : kAllModes) {
      for (Overflow overflow : OverflowsFor(dst)) {
        OptionSet set{bundle.name, bundle.options};
        set.options.rounding = mode;
        set.options.overflow = overflow;
        v.push_back(set);
      }
    }
  }
  return v;
}

// A fixed pseudo-random word derived from an input code (a 32-bit mix).
inline std::uint32_t MixedWord(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

struct RandomChoice {
  std::uint32_t bits;
  int count;  // 0: the destination's default
};

// The random words stochastic rounding is checked with: none, all ones, the
// top bit of every byte (half a step for the default 8-bit and 16-bit
// counts), a word derived from the input, and a non-default count of 3.
inline std::vector<RandomChoice> RandomChoices(std::uint64_t input) {
  return {{0u, 0}, {0xFFFFFFFFu, 0}, {0x80808080u, 0}, {MixedWord(input), 0},
          {MixedWord(input + 0x9E3779B97F4A7C15ULL), 3}};
}

inline std::string Describe(const EncodeOptions& o) {
  std::string s = std::string(ModeName(o.rounding)) + "/" + OverflowName(o.overflow);
  s += " inf=" + std::to_string(static_cast<int>(o.inf_input));
  s += " nan_sign=" + std::to_string(static_cast<int>(o.nan_sign));
  s += " nan_payload=" + std::to_string(static_cast<int>(o.nan_payload));
  s += " nan_into_no_nan=" + std::to_string(static_cast<int>(o.nan_into_no_nan));
  s += " keep_neg_zero=" + std::to_string(o.keep_negative_zero);
  s += " zero_into_no_zero=" + std::to_string(static_cast<int>(o.zero_into_no_zero));
  s += " neg_into_unsigned=" + std::to_string(static_cast<int>(o.negative_into_unsigned));
  s += " random=" + std::to_string(o.random_bits) + "/" + std::to_string(o.random_bit_count);
  return s;
}

}  // namespace lowbit::testing
