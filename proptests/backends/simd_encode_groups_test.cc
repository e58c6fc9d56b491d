// The grouped encode fast paths of simd/src/convert-inl.h (EncodeLoop): a
// group of four vectors whose lanes all qualify takes one formula (FP32 bits
// within the destination's normal range and finite, for float destinations
// under round to nearest even; |x| < 2^4 for the E2M1 cell table), and a
// group with any other lane goes vector by vector through the general path.
// The exhaustive sweep of simd_convert_test feeds groups of one FP32
// exponent, so each of its groups is all in or all out; here groups of 64
// elements mix one lane of every excluded kind (zero, subnormal, NaN, Inf,
// out of range) at every position with qualifying lanes, beside groups that
// qualify whole, on every compiled target, every rounding mode, overflow
// policy and policy bundle, each element against the model. The test asserts
// that both kinds of group occur (by its own predicate, written from the
// formats' definitions, not from the kernel).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"
#include "option_generators.h"
#include "simd_test_util.h"
#include "test_level.h"

namespace lowbit {
namespace {

using registry::ConvertArgs;
using registry::Operation;
using testing::Hex;

constexpr std::size_t kGroup = 64;  // four vectors of the widest target (16 lanes)
constexpr std::uint32_t kSign = 0x80000000u;

// Signed float destinations with subnormals, narrower than FP32: the ones the
// fast paths may take.
std::vector<FormatId> Destinations() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    const FormatSpec& s = Spec(id);
    if (s.IsFloat() && s.has_sign && s.has_subnormals && s.total_bits < 32 &&
        registry::OperationApplies(Operation::kEncodeF32, id)) {
      v.push_back(id);
    }
  }
  return v;
}

// E2M1-like destinations (at most 7 non-zero magnitudes: encode_plan.h
// kThreshold) qualify below 2^4; the others from their smallest normal up to
// the largest finite FP32.
bool SmallFormat(const FormatSpec& s) { return s.MaxFiniteCode() <= 7; }

bool Qualifies(const FormatSpec& s, std::uint32_t bits) {
  const std::uint32_t a = bits & ~kSign;
  if (SmallFormat(s)) return a < 0x41800000u;  // 16.0
  const std::uint32_t low = static_cast<std::uint32_t>(s.MinNormalExponent() + 127) << 23;
  return a >= low && a < 0x7F800000u;
}

// A qualifying input: random exponent in range, and a mantissa that is
// random or sits at a rounding boundary of the destination (ties, one either
// side, quarter-binade starts).
std::uint32_t QualifyingInput(const FormatSpec& s, std::uint32_t r) {
  const std::uint32_t sign = r & kSign;
  const std::uint32_t shift = 23 - static_cast<std::uint32_t>(s.mantissa_bits);
  std::uint32_t field;
  if (SmallFormat(s)) {
    field = 110 + (r >> 8) % 21;  // 2^-17 .. 2^3
  } else {
    const std::uint32_t low = static_cast<std::uint32_t>(s.MinNormalExponent() + 127);
    const std::uint32_t top = static_cast<std::uint32_t>(s.MaxFiniteExponentField()) + low;
    field = (r >> 8) % 8 == 0 ? low + (r >> 12) % (255 - low) : low + (r >> 12) % (top - low + 2);
    if (field > 254) field = 254;
  }
  std::uint32_t mantissa = testing::MixedWord(r) & 0x7FFFFFu;
  const std::uint32_t half = 1u << (shift - 1);
  switch (r % 6) {
    case 0: mantissa = (mantissa & ~((half << 1) - 1)) | half; break;      // a tie
    case 1: mantissa = (mantissa & ~((half << 1) - 1)) | (half - 1); break;
    case 2: mantissa = (mantissa & ~((half << 1) - 1)) | (half + 1); break;
    case 3: mantissa &= ~((1u << 21) - 1); break;                            // a quarter binade
    case 4:
      if (SmallFormat(s)) return sign | (r & 0xFFu & mantissa);  // zero or FP32 subnormal
      break;
    default: break;
  }
  const std::uint32_t x = sign | (field << 23) | (mantissa & 0x7FFFFFu);
  return Qualifies(s, x) ? x : sign | (SmallFormat(s) ? 0x3F800000u : 0x7F000000u);
}

// Inputs that no fast path takes, per kind.
std::uint32_t ExcludedInput(const FormatSpec& s, std::uint32_t k, std::uint32_t r) {
  const std::uint32_t sign = r & kSign;
  const std::uint32_t low = static_cast<std::uint32_t>(s.MinNormalExponent() + 127);
  const std::uint32_t steps = (r >> 8) % 4;
  // Fields below the smallest normal (FP32 subnormals for BF16).
  const std::uint32_t below = low > 1 + steps ? low - 1 - steps : 0;
  // The E2M1 table takes zeros and subnormals: out of range there is 2^4.
  if (SmallFormat(s) && (k % 7 == 0 || k % 7 == 3)) k = 5;
  switch (k % 7) {
    case 0: return sign;                                        // zero
    case 1: return sign | 0x7F800000u;                          // Inf
    case 2: return sign | 0x7F800000u | 1u | (r & 0x7FFFFFu);   // NaN
    case 3: return sign | (r & 0x7FFFFFu) | 1u;                 // FP32 subnormal
    case 4: return sign | 0x7FC00000u;                          // quiet NaN
    case 5:
      // Just below the destination's smallest normal, or 2^4 and above.
      return SmallFormat(s) ? sign | (0x41800000u + (r & 0x3FFFFFFu))
                            : sign | (below << 23) | (r & 0x7FFFFFu);
    default: return SmallFormat(s) ? sign | 0x7F7FFFFFu : sign | ((low - 1) << 23) | 0x7FFFFFu;
  }
}

LOWBIT_SIMD_TARGET_SUITE(SimdEncodeGroups);
TEST_P(SimdEncodeGroups, MixedGroupsMatchModel) {
  const bool smoke = testing::CurrentTestLevel() == testing::TestLevel::kSmoke;
  for (FormatId id : Destinations()) {
    const FormatSpec& dst = Spec(id);
    // Group g < kGroup has one excluded lane at position g; the rest qualify
    // whole. A tail that fills no whole group follows.
    std::vector<std::uint32_t> in;
    std::size_t mixed = 0, whole = 0;
    for (std::size_t g = 0; g < 2 * kGroup; ++g) {
      for (std::size_t j = 0; j < kGroup; ++j) {
        const std::uint32_t r = testing::MixedWord(g * kGroup + j + 1000 * static_cast<int>(id));
        in.push_back(g < kGroup && j == g ? ExcludedInput(dst, static_cast<std::uint32_t>(g + j), r)
                                          : QualifyingInput(dst, r));
      }
      std::size_t qualifying = 0;
      for (std::size_t j = 0; j < kGroup; ++j) qualifying += Qualifies(dst, in[g * kGroup + j]);
      if (qualifying == kGroup) ++whole;
      if (qualifying == kGroup - 1) ++mixed;
    }
    for (std::uint32_t j = 0; j < 37; ++j) in.push_back(QualifyingInput(dst, testing::MixedWord(j)));
    ASSERT_EQ(whole, kGroup) << dst.name;
    ASSERT_EQ(mixed, kGroup) << dst.name;

    for (const testing::OptionSet& set : testing::OptionSetsFor(dst)) {
      if (set.options.rounding == RoundingMode::kStochastic) continue;  // no fast path; simd_convert_test
      if (smoke && set.options.rounding != RoundingMode::kNearestEven) continue;
      EncodeOptions o = set.options;
      std::vector<std::uint8_t> out(in.size() * registry::CodeBytes(dst), 0xCD);
      ConvertArgs args{};
      args.operation = Operation::kEncodeF32;
      args.format = id;
      args.input = in.data();
      args.output = out.data();
      args.count = in.size();
      args.encode = o;
      const registry::Status status = simd::ConvertOnTarget(target(), args);
      ASSERT_TRUE(status.ok) << status.message;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        std::uint64_t got = 0;
        std::memcpy(&got, out.data() + i * registry::CodeBytes(dst), registry::CodeBytes(dst));
        const std::uint64_t want = EncodeF32Bits(dst, in[i], o).code;
        if (got != want && ++bad <= 3) {
          ADD_FAILURE() << dst.name << " on " << target_name() << " [" << testing::Describe(o)
                        << "] input " << Hex(in[i]) << " at " << i << ": model " << Hex(want)
                        << ", simd " << Hex(got);
        }
      }
      EXPECT_EQ(bad, 0u);
    }
  }
}

}  // namespace
}  // namespace lowbit
