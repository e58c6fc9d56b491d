// alternatives/rceil_eager.h against the model's
// recipe::detail::RceilEagerExponent (torchao 0.18's eager RCEIL exponent):
// every finite nonzero FP32 pattern (the model's domain) at
// LOWBIT_TEST_LEVEL=full; at ci every exponent field
// with the mantissas 0 .. 64 (every threshold is at most 23) and their
// largest ones, both signs, and a strided sample; at smoke the sample. And
// ChooseScaleWith the alternative gives ChooseScale's BlockScale, every
// field, for every MX eager recipe of the catalog on the same patterns
// taken as amax.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "f32_pattern_sweep.h"
#include "lowbit/formats/alternatives/rceil_eager.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "test_level.h"

namespace lowbit {
namespace {

template <class Check>
void TargetedPatterns(const Check& check) {
  for (std::uint32_t field = 0; field < 256; ++field) {
    for (std::uint32_t m = 0; m <= 64; ++m) {
      for (const std::uint32_t mantissa : {m, 0x7FFFFFu - m}) {
        const std::uint32_t bits = (field << 23) | mantissa;
        check(bits);
        check(bits | 0x80000000u);
      }
    }
  }
}

TEST(AlternativeRceilEager, ExponentEqualsTheModel) {
  testing::ExpectSameOnF32Patterns(
      [](std::uint32_t bits) {
        // The model's domain: a finite nonzero d (ChooseMxScale hands it no
        // other; at zero its normalizing loop would not end).
        if ((bits & 0x7FFFFFFFu) == 0 || !F32IsFinite(bits)) return true;
        const float d = F32FromBits(bits);
        return alternatives::RceilEagerExponentFromBits(d) == recipe::detail::RceilEagerExponent(d);
      },
      [](const auto& check) { TargetedPatterns(check); });
}

// The model's steps with the alternative's exponent (as a kernel passes
// them to recipe::ChooseScaleWith).
struct Steps {
  alternatives::RceilEagerExponentAlternative eager_exponent;
  recipe::detail::Nvfp4ScaleCodecOfModel nvfp4_scale;
  recipe::detail::ScaleArithmeticOfModel arithmetic;
};

bool SameScale(const recipe::BlockScale& a, const recipe::BlockScale& b) {
  return a.code == b.code && F32Bits(a.decode) == F32Bits(b.decode) &&
         F32Bits(a.factor) == F32Bits(b.factor) && a.zero_point == b.zero_point &&
         a.exponent == b.exponent && F32Bits(a.rule_value) == F32Bits(b.rule_value);
}
static_assert(sizeof(recipe::BlockScale) == 24, "BlockScale changed: compare its new field in SameScale");

TEST(AlternativeRceilEager, ScaleEqualsChooseScaleForEveryEagerRecipe) {
  int recipes = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.scale_rule != recipe::ScaleRule::kMxRceilEager) continue;
    ++recipes;
    std::uint64_t checked = 0, wrong = 0;
    const auto check = [&](std::uint32_t bits) {
      ++checked;
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = F32FromBits(bits);
      const recipe::BlockScale want = recipe::ChooseScale(r, stats);
      const recipe::BlockScale have = recipe::ChooseScaleWith(r, stats, recipe::TensorScale{}, Steps{});
      if (!SameScale(want, have) && wrong++ == 0) {
        ADD_FAILURE() << r.name << ":" << r.profile << " amax 0x" << std::hex << bits;
      }
    };
    if (testing::CurrentTestLevel() != testing::TestLevel::kSmoke) TargetedPatterns(check);
    for (std::uint64_t p = 0; p < (std::uint64_t{1} << 32); p += 65521) check(static_cast<std::uint32_t>(p));
    EXPECT_EQ(wrong, 0u) << r.name << ":" << r.profile;
    EXPECT_GT(checked, 65000u);
  }
  EXPECT_EQ(recipes, 5);
}

}  // namespace
}  // namespace lowbit
