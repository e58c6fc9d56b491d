// recipe::ScaleReadsOnlyAmax (steps.h) and the amax-only statistics steps
// beside Accumulate / Combine. The CUDA model recipe kernels
// (cuda/src/model_recipe.cu) keep only the amax for a compiled recipe the
// predicate holds for and hand ChooseScale EmptyStats' min and max, so:
//   - for every catalog recipe it holds for, ChooseScale gives the same
//     BlockScale, every field bit for bit, whatever min and max are (the
//     expected value is ChooseScale of the unmodified statistics), over
//     boundary-biased statistics and tensor scales;
//   - for every catalog recipe it does not hold for, some change of min or of
//     max changes the scale (the predicate is not more conservative than the
//     catalog needs), an asymmetric rule among them where min alone does (so
//     the comparison above can fail);
//   - AccumulateAmaxOnly / CombineAmaxOnly, over a sequence or two halves of
//     it, give the amax of AbsMax (the block models' own loop,
//     fp32_bits.h) and of Accumulate bit for bit under both NaN rules, the
//     first NaN winning, and leave min and max as they were.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "boundary_generators.h"
#include "catalog_recipe.h"
#include "generators_at_level.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::recipe {
namespace {

// A new field of BlockScale must be compared in SameScale too.
static_assert(sizeof(BlockScale) == 24, "BlockScale changed: compare its new field in SameScale");

bool SameScale(const BlockScale& a, const BlockScale& b) {
  return a.code == b.code && F32Bits(a.decode) == F32Bits(b.decode) && F32Bits(a.factor) == F32Bits(b.factor) &&
         a.zero_point == b.zero_point && a.exponent == b.exponent && F32Bits(a.rule_value) == F32Bits(b.rule_value);
}

std::string Hex(float v) {
  std::ostringstream os;
  os << "0x" << std::hex << F32Bits(v);
  return os.str();
}

std::string Describe(const BlockScale& s) {
  std::ostringstream os;
  os << "{code " << static_cast<int>(s.code) << ", decode " << Hex(s.decode) << ", factor " << Hex(s.factor)
     << ", zero_point " << s.zero_point << ", exponent " << s.exponent << ", rule_value " << Hex(s.rule_value) << "}";
  return os.str();
}

std::string Describe(const GroupStats& s) {
  return "{min " + Hex(s.min) + ", max " + Hex(s.max) + ", amax " + Hex(s.amax) + "}";
}

// Where a recipe's scale changes: its derived constants (the element max,
// its reciprocal, eps, qmax, the KV divisor, NVFP4's tensor range), FP32's
// extremes and 1, scaled by 2^k (mostly a few binades, sometimes far) and
// nudged by one ulp either way, either sign. 2^-9 is the amax where vLLM's
// per-token floor 1 / (max * 512) takes over (steps.h kVllmFp8PerToken).
std::vector<float> ScaleAnchors(const Recipe& r) {
  std::vector<float> anchors = {1.0f,           kF32Max,          F32Pow2(-126),       F32FromBits(1),
                                F32Pow2(-9),    ElementMaxF32(r), MaxNormReciprocal(r)};
  if (r.eps != 0.0f) {
    anchors.push_back(r.eps);
    if (r.qmax != 0) anchors.push_back(r.eps * static_cast<float>(r.qmax));
  }
  if (r.qmax != 0) anchors.push_back(static_cast<float>(r.qmax));
  if (r.amax_divisor != 0) anchors.push_back(static_cast<float>(r.amax_divisor));
  if (r.family() == Family::kNvfp4) anchors.push_back(TensorRange(r));
  return anchors;
}

rc::Gen<float> AnchoredValue(const Recipe& r) {
  return rc::gen::exec([&r]() -> float {
    const std::vector<float> anchors = ScaleAnchors(r);
    float v = anchors[*rc::gen::inRange<std::size_t>(0, anchors.size())];
    const int k = *rc::gen::weightedElement<int>({{3, 0}, {2, 1}, {1, 2}}) == 0
                      ? 0
                      : (*rc::gen::arbitrary<bool>() ? *rc::gen::inRange(-4, 5) : *rc::gen::inRange(-150, 130));
    v = std::ldexp(v, k);  // may reach 0 or Inf: both are wanted too
    const int nudge = *rc::gen::weightedElement<int>({{2, 0}, {1, -1}, {1, 1}});
    if (nudge != 0) v = std::nextafter(v, nudge > 0 ? std::numeric_limits<float>::infinity() : 0.0f);
    return *rc::gen::arbitrary<bool>() ? -v : v;
  });
}

// A NaN of either sign, quiet or signalling, with any payload.
rc::Gen<float> AnyNan() {
  return rc::gen::exec([]() -> float {
    const std::uint32_t sign = *rc::gen::arbitrary<bool>() ? 0x80000000u : 0u;
    const std::uint32_t payload = *rc::gen::weightedElement<std::uint32_t>(
        {{1, 0x400000u}, {1, 1u}, {1, 0x7FFFFFu}, {3, *rc::gen::inRange<std::uint32_t>(1, 1u << 23)}});
    return F32FromBits(sign | 0x7F800000u | payload);
  });
}

// One statistic (amax, min or max) for recipe r: the boundary values of its
// element and scale formats (testing/.../value_generators.h: ties, binade
// edges, max, subnormals, +-0, +-Inf, NaN payloads, random bits), its own
// anchors, EmptyStats' +-Inf, and NaNs.
rc::Gen<float> StatValue(const Recipe& r) {
  return rc::gen::exec([&r]() -> float {
    switch (*rc::gen::weightedElement<int>({{4, 0}, {2, 1}, {4, 2}, {1, 3}, {1, 4}, {1, 5}})) {
      case 0:
        return F32FromBits(*testing::BoundaryF32Bits(r.element));
      case 1:
        return F32FromBits(*testing::BoundaryF32Bits(r.scale_format));
      case 2:
        return *AnchoredValue(r);
      case 3:
        return *rc::gen::element(0.0f, -0.0f, F32FromBits(0x7F800000u), F32FromBits(0xFF800000u),
                                 F32FromBits(1), std::numeric_limits<float>::epsilon(), kF32Max, -kF32Max);
      case 4:
        return *AnyNan();
      default:
        return F32FromBits(*rc::gen::arbitrary<std::uint32_t>());
    }
  });
}

// The tensor scale ChooseScale is handed: NVFP4's from ChooseTensorScale of
// any tensor amax, or any pair of values; the default for the others (they
// ignore it).
rc::Gen<TensorScale> AnyTensorScale(const Recipe& r) {
  return rc::gen::exec([&r]() -> TensorScale {
    if (r.family() != Family::kNvfp4) return TensorScale{};
    if (*rc::gen::arbitrary<bool>()) return ChooseTensorScale(r, *StatValue(r));
    TensorScale t;
    t.encode = *StatValue(r);
    t.decode = *StatValue(r);
    return t;
  });
}

std::vector<int> RecipesWhere(bool reads_only_amax) {
  std::vector<int> indices;
  for (int i = 0; i < static_cast<int>(kAllRecipes.size()); ++i) {
    if (ScaleReadsOnlyAmax(kAllRecipes[i]) == reads_only_amax) indices.push_back(i);
  }
  return indices;
}

class AmaxOnlyRecipe : public ::testing::TestWithParam<int> {};

TEST_P(AmaxOnlyRecipe, ScaleIsTheSameWhateverMinAndMaxAre) {
  const Recipe& r = kAllRecipes[GetParam()];
  ASSERT_TRUE(ScaleReadsOnlyAmax(r));
  testing::CheckAtLevel({500, 6000, 200000}, [&r] {
    const GroupStats stats{*StatValue(r), *StatValue(r), *StatValue(r)};
    const TensorScale t = *AnyTensorScale(r);
    const BlockScale expected = ChooseScale(r, stats, t);
    // What the kernels hand over: EmptyStats' min and max with the amax.
    GroupStats kernel_stats = EmptyStats();
    kernel_stats.amax = stats.amax;
    // Any other min and max, and min or max alone changed.
    const GroupStats other{*StatValue(r), *StatValue(r), stats.amax};
    const GroupStats other_min{other.min, stats.max, stats.amax};
    const GroupStats other_max{stats.min, other.max, stats.amax};
    for (const GroupStats& changed : {kernel_stats, other, other_min, other_max}) {
      const BlockScale got = ChooseScale(r, changed, t);
      if (!SameScale(got, expected)) {
        RC_FAIL(RecipeName(r) + ": stats " + Describe(stats) + " give " + Describe(expected) + ", stats " +
                Describe(changed) + " give " + Describe(got));
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Catalog, AmaxOnlyRecipe, ::testing::ValuesIn(RecipesWhere(true)), testing::CatalogIndexTestName);

// Statistics a group of values in {-1000, -3, -1, -0.25, 0, 0.25, 1, 3,
// 1000} can have, and the same with min (or max) replaced by another value
// of the set: the first pair whose scales differ, if any.
struct Witness {
  bool found = false;
  GroupStats a, b;
};

Witness FindChange(const Recipe& r, bool change_min) {
  constexpr std::array<float, 9> kValues = {-1000.0f, -3.0f, -1.0f, -0.25f, 0.0f, 0.25f, 1.0f, 3.0f, 1000.0f};
  for (float lo : kValues) {
    for (float hi : kValues) {
      if (hi < lo) continue;
      const GroupStats a{lo, hi, std::fmax(std::fabs(lo), std::fabs(hi))};
      for (float other : kValues) {
        GroupStats b = a;
        (change_min ? b.min : b.max) = other;
        if (!SameScale(ChooseScale(r, a), ChooseScale(r, b))) return {true, a, b};
      }
    }
  }
  return {};
}

// The predicate is false only where the scale really reads min or max: the
// same comparison as above finds a change for every such catalog recipe.
TEST(ScaleReadsOnlyAmax, FalseOnlyWhereMinOrMaxChangesTheScale) {
  const std::vector<int> reads_min_max = RecipesWhere(false);
  ASSERT_FALSE(reads_min_max.empty());
  for (const int i : reads_min_max) {
    const Recipe& r = kAllRecipes[i];
    EXPECT_TRUE(FindChange(r, true).found || FindChange(r, false).found)
        << RecipeName(r) << ": ScaleReadsOnlyAmax is false, but no change of min or max changed its scale";
  }
}

// An asymmetric rule reads min: the predicate is false for it, and changing
// min alone changes its scale (so ScaleIsTheSameWhateverMinAndMaxAre's
// comparison would fail on it).
TEST(ScaleReadsOnlyAmax, AsymmetricRulesReadMin) {
  int asymmetric = 0;
  for (const Recipe& r : kAllRecipes) {
    if (r.scale_rule != ScaleRule::kAoAsymmetric && r.scale_rule != ScaleRule::kGptqAsymmetric &&
        r.scale_rule != ScaleRule::kAwqAsymmetric) {
      continue;
    }
    ++asymmetric;
    EXPECT_FALSE(ScaleReadsOnlyAmax(r)) << RecipeName(r);
    const Witness w = FindChange(r, true);
    EXPECT_TRUE(w.found) << RecipeName(r) << ": no change of min alone changed the scale";
    if (w.found) {
      EXPECT_FALSE(SameScale(ChooseScale(r, w.a), ChooseScale(r, w.b)));
      EXPECT_EQ(F32Bits(w.a.max), F32Bits(w.b.max));
      EXPECT_EQ(F32Bits(w.a.amax), F32Bits(w.b.amax));
    }
  }
  EXPECT_GT(asymmetric, 0) << "the catalog has no asymmetric recipe left to check the comparison against";
}

// Both amax NaN rules are in the catalog: the amax-only steps are checked
// under each.
std::vector<Recipe> OneRecipePerAmaxNanRule() {
  std::vector<Recipe> recipes;
  for (const AmaxNan rule : {AmaxNan::kPropagate, AmaxNan::kIgnore}) {
    for (const Recipe& r : kAllRecipes) {
      if (r.amax_nan == rule) {
        recipes.push_back(r);
        break;
      }
    }
  }
  return recipes;
}

// Statistics of values [begin, end) of x by Accumulate, or by
// AccumulateAmaxOnly.
GroupStats StatsOfSpan(const Recipe& r, const std::vector<float>& x, std::size_t begin, std::size_t end,
                       bool amax_only) {
  GroupStats s = EmptyStats();
  for (std::size_t i = begin; i < end; ++i) s = amax_only ? AccumulateAmaxOnly(r, s, x[i]) : Accumulate(r, s, x[i]);
  return s;
}

TEST(AmaxOnlySteps, GiveAccumulatesAmaxInOrderAndLeaveMinAndMax) {
  const std::vector<Recipe> recipes = OneRecipePerAmaxNanRule();
  ASSERT_EQ(recipes.size(), 2u) << "the catalog no longer has a recipe of each AmaxNan rule";
  for (const Recipe& r : recipes) {
    testing::CheckAtLevel({300, 3000, 100000}, [&r] {
      // NaNs often, so that which NaN wins is checked.
      const std::vector<float> x = *rc::gen::container<std::vector<float>>(
          *rc::gen::inRange<std::size_t>(0, 40),
          rc::gen::weightedOneOf<float>({{4, StatValue(r)}, {1, AnyNan()}}));
      const std::size_t cut = *rc::gen::inRange<std::size_t>(0, x.size() + 1);
      const GroupStats empty = EmptyStats();
      const GroupStats all = StatsOfSpan(r, x, 0, x.size(), false);
      const float abs_max = AbsMax(x.data(), static_cast<long>(x.size()), r.amax_nan);
      RC_ASSERT(F32Bits(all.amax) == F32Bits(abs_max));
      const GroupStats all_amax = StatsOfSpan(r, x, 0, x.size(), true);
      const GroupStats combined =
          CombineAmaxOnly(r, StatsOfSpan(r, x, 0, cut, true), StatsOfSpan(r, x, cut, x.size(), true));
      for (const GroupStats& s : {all_amax, combined}) {
        RC_ASSERT(F32Bits(s.amax) == F32Bits(all.amax));
        RC_ASSERT(F32Bits(s.min) == F32Bits(empty.min));
        RC_ASSERT(F32Bits(s.max) == F32Bits(empty.max));
      }
      // Combine's amax is CombineAmaxOnly's.
      const GroupStats left = StatsOfSpan(r, x, 0, cut, false);
      const GroupStats right = StatsOfSpan(r, x, cut, x.size(), false);
      RC_ASSERT(F32Bits(Combine(r, left, right).amax) == F32Bits(CombineAmaxOnly(r, left, right).amax));
    });
  }
}

}  // namespace
}  // namespace lowbit::recipe
