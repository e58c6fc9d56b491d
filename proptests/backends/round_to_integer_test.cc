// alternatives/round_to_integer.h against the model's
// recipe::RoundToIntegerF32 under round to nearest even: every FP32 pattern
// at LOWBIT_TEST_LEVEL=full (53 s here, 0 mismatches); at ci every
// half-integer below 2^16 and its neighbours, every 16th pattern below 2^16
// and a strided sample of the rest; at smoke the strided sample. Results compared as bits (+0 against -0 would differ).
#include <gtest/gtest.h>

#include <cstdint>

#include "f32_pattern_sweep.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit {
namespace {

// Every k + 1/2 for 0 <= k < `bound` (the ties) and the patterns either
// side of it, both signs.
template <typename Check>
void CheckHalfIntegersBelow(std::uint32_t bound, const Check& check) {
  for (std::uint32_t k = 0; k < bound; ++k) {
    const std::uint32_t half = F32Bits(static_cast<float>(k) + 0.5f);
    for (const std::uint32_t b : {half - 1, half, half + 1}) {
      check(b);
      check(b | 0x80000000u);
    }
  }
}

bool Same(std::uint32_t bits) {
  const float y = F32FromBits(bits);
  return F32Bits(alternatives::RoundToIntegerNearestEvenF32(y)) ==
         F32Bits(recipe::RoundToIntegerF32(y, RoundingMode::kNearestEven));
}

TEST(AlternativeRoundToInteger, NearestEvenEqualsTheModel) {
  testing::ExpectSameOnF32Patterns(Same, [](const auto& check) {
    // Every half-integer below 2^16 in magnitude and its two neighbours
    // (the ties and the patterns either side), both signs, then every
    // 16th pattern of magnitude below 2^16 (the range the model's callers
    // reach after their clamp).
    CheckHalfIntegersBelow(65536, check);
    for (std::uint32_t m = 0; m < 0x47800000u; m += 16) {
      check(m);
      check(m | 0x80000000u);
    }
  });
}

bool SameInGrid(std::uint32_t bits) {
  const float y = F32FromBits(bits);
  if (!(F32Abs(y) <= alternatives::kInGridLimit)) return true;  // outside its domain
  return F32Bits(alternatives::RoundToIntegerNearestEvenInGrid(y)) ==
         F32Bits(recipe::RoundToIntegerF32(y, RoundingMode::kNearestEven));
}

TEST(AlternativeRoundToInteger, InGridEqualsTheModelUpTo32767) {
  testing::ExpectSameOnF32Patterns(SameInGrid, [](const auto& check) {
    // Every half-integer up to the limit and its neighbours, both signs;
    // the limit itself and its neighbours; every 16th pattern below it.
    CheckHalfIntegersBelow(32767, check);
    const std::uint32_t limit = F32Bits(alternatives::kInGridLimit);
    for (const std::uint32_t b : {limit - 1, limit, limit + 1}) {
      check(b);
      check(b | 0x80000000u);
    }
    for (std::uint32_t m = 0; m < limit; m += 16) {
      check(m);
      check(m | 0x80000000u);
    }
  });
}

}  // namespace
}  // namespace lowbit
