// The three tie rules of policy.h beside even and away: kNearestUp (ties
// toward +Inf, what floor(y + 0.5) does), kNearestDown (ties toward -Inf, an
// argmin over an ascending table that keeps the first of two equal
// distances) and kNearestTowardZero (ties toward zero). The expected codes
// below are worked out by hand from the tie rule alone; the exhaustive
// comparison with the oracle is model_vs_oracle_sweep16_test (kAllModes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace lowbit {
namespace {

std::int64_t Int8Of(RoundingMode mode, float x) {
  EncodeOptions o;
  o.rounding = mode;
  return static_cast<std::int8_t>(EncodeF32(kInt8, x, o).code);
}

struct TieCase {
  float x;
  std::int64_t up, down, toward_zero;
};

// Ties go by the rule and sign; everything off a tie goes to the nearest.
TEST(TiesRounding, IntegerTiesGoWhereTheRuleSays) {
  constexpr TieCase kCases[] = {
      {2.5f, 3, 2, 2},     {-2.5f, -2, -3, -2}, {3.5f, 4, 3, 3},    {-3.5f, -3, -4, -3},
      {0.5f, 1, 0, 0},     {-0.5f, 0, -1, 0},   {2.4f, 2, 2, 2},    {-2.6f, -3, -3, -3},
      {2.6f, 3, 3, 3},     {-2.4f, -2, -2, -2}, {126.5f, 127, 126, 126}, {-127.5f, -127, -128, -127},
  };
  for (const TieCase& c : kCases) {
    EXPECT_EQ(Int8Of(RoundingMode::kNearestUp, c.x), c.up) << c.x;
    EXPECT_EQ(Int8Of(RoundingMode::kNearestDown, c.x), c.down) << c.x;
    EXPECT_EQ(Int8Of(RoundingMode::kNearestTowardZero, c.x), c.toward_zero) << c.x;
  }
}

// FP32 -> BF16 at the bit level: 0x3F808000 is halfway between 0x3F80
// and 0x3F81 (even below), 0x3F818000 between 0x3F81 and 0x3F82 (even above).
TEST(TiesRounding, FloatTiesIgnoreParity) {
  const auto bf16 = [](RoundingMode mode, std::uint32_t bits) {
    EncodeOptions o;
    o.rounding = mode;
    return EncodeF32Bits(kBf16, bits, o).code;
  };
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    const std::uint64_t s16 = sign >> 16;
    const bool negative = sign != 0;
    for (std::uint32_t tie : {0x3F808000u, 0x3F818000u}) {
      const std::uint64_t below = (tie >> 16) | s16, above = ((tie >> 16) + 1) | s16;  // in magnitude
      EXPECT_EQ(bf16(RoundingMode::kNearestUp, sign | tie), negative ? below : above);
      EXPECT_EQ(bf16(RoundingMode::kNearestDown, sign | tie), negative ? above : below);
      EXPECT_EQ(bf16(RoundingMode::kNearestTowardZero, sign | tie), below);
      // One ulp of FP32 off the tie: the nearest, whatever the rule.
      for (RoundingMode m : {RoundingMode::kNearestUp, RoundingMode::kNearestDown, RoundingMode::kNearestTowardZero}) {
        EXPECT_EQ(bf16(m, sign | (tie + 1)), above);
        EXPECT_EQ(bf16(m, sign | (tie - 1)), below);
      }
    }
  }
}

// Overflow: the three are round-to-nearest modes, so a value past the
// largest finite one by more than half an ulp goes to Inf (IEEE 754 §7.4
// for nearest); the tie at max + half an ulp goes to Inf only when the tie
// rule rounds it away from zero. FP16: max 65504, ulp 32, tie 65520.
TEST(TiesRounding, OverflowFollowsTheTie) {
  const auto fp16 = [](RoundingMode mode, float x) {
    EncodeOptions o;
    o.rounding = mode;
    return EncodeF32(kFp16, x, o).code;
  };
  EXPECT_EQ(fp16(RoundingMode::kNearestUp, 65520.0f), 0x7C00u);
  EXPECT_EQ(fp16(RoundingMode::kNearestUp, -65520.0f), 0xFBFFu);
  EXPECT_EQ(fp16(RoundingMode::kNearestDown, 65520.0f), 0x7BFFu);
  EXPECT_EQ(fp16(RoundingMode::kNearestDown, -65520.0f), 0xFC00u);
  EXPECT_EQ(fp16(RoundingMode::kNearestTowardZero, 65520.0f), 0x7BFFu);
  EXPECT_EQ(fp16(RoundingMode::kNearestTowardZero, -65520.0f), 0xFBFFu);
  for (RoundingMode m : {RoundingMode::kNearestUp, RoundingMode::kNearestDown, RoundingMode::kNearestTowardZero}) {
    EXPECT_EQ(fp16(m, 65536.0f), 0x7C00u);
    EXPECT_EQ(fp16(m, -65536.0f), 0xFC00u);
  }
}

}  // namespace
}  // namespace lowbit
