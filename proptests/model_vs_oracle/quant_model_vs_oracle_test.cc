// Model == oracle for every scaled recipe of the catalog (recipe::kAllRecipes:
// TE FP8, torchao, GPTQ and the common kernel over INT8 / INT4 / UINT4 / FP8),
// the model through recipe::QuantizeTensor / DequantizeTensor and its scale
// step for calibrated ranges, over every layout, on RapidCheck matrices
// biased to where these recipes differ (docs/design.md "Tests"): all-zero
// rows, one outlier, ties after scaling (x = (k + 1/2) * scale with the scale
// a power of two for the recipe's divisor), amax just below a power of two,
// NaN and Inf, subnormals, odd shapes and shapes that do not tile (the error
// must agree too).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "generators_at_level.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/reference/block/recipe_oracle.h"
#include "recipe_vs_oracle.h"

namespace lowbit::testing {
namespace {

// The amax that makes each recipe's scale 2^e exactly, so that multiples of
// 2^(e-1) are ties after scaling: 127.5 (AO int8), 7.5 (AO int4 and GPTQ
// sym: 2 * 7.5 / 15), 127 / 7 (common), 448 / 57344 (TE), 255 / 15 (asym
// range over qmax - qmin).
rc::Gen<float> TieAmax(int e) {
  return rc::gen::map(rc::gen::element(127.5f, 7.5f, 127.0f, 7.0f, 448.0f, 57344.0f, 255.0f, 15.0f),
                      [e](float m) { return std::ldexp(m, e); });
}

rc::Gen<float> HalfGrid(int e) {  // (k + 1/2) 2^e and k 2^e
  return rc::gen::map(rc::gen::inRange(-260, 261), [e](int k) { return std::ldexp(static_cast<float>(k), e - 1); });
}

rc::Gen<float> NearPowerOfTwo(int e) {
  return rc::gen::element(std::ldexp(1.0f - std::ldexp(1.0f, -24), e), std::ldexp(1.0f, e),
                          std::ldexp(1.0f + std::ldexp(1.0f, -23), e), -std::ldexp(1.0f - std::ldexp(1.0f, -24), e));
}

rc::Gen<float> AnyNear(int e) {
  return rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::uint32_t>(), rc::gen::inRange(-8, 2)),
                      [e](std::pair<std::uint32_t, int> p) {
                        int field = e + p.second + 127;
                        field = field < 1 ? 1 : (field > 254 ? 254 : field);
                        return F32FromBits((p.first & 0x807FFFFFu) | (static_cast<std::uint32_t>(field) << 23));
                      });
}

rc::Gen<float> Special() {
  const float inf = std::numeric_limits<float>::infinity();
  return rc::gen::element(0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          inf, -inf, F32FromBits(1), F32FromBits(0x807FFFFFu), F32FromBits(0x7F7FFFFFu),
                          F32FromBits(0xFF7FFFFFu));
}

// One group's values, in one of the biased shapes.
void FillGroup(std::vector<float>* x, const std::vector<long>& where) {
  const int e = *rc::gen::weightedOneOf<int>({{6, rc::gen::inRange(-10, 12)}, {1, rc::gen::inRange(-140, 128)}});
  const int shape = *rc::gen::inRange(0, 8);
  for (long i : where) {
    float& v = (*x)[static_cast<std::size_t>(i)];
    switch (shape) {
      case 0: v = 0.0f; break;                                              // all-zero row / group
      case 1: v = *HalfGrid(e); break;                                      // ties after scaling
      case 2: v = *AnyNear(e); break;                                       // random
      case 3: v = *rc::gen::oneOf(HalfGrid(e), NearPowerOfTwo(e)); break;   // amax near 2^e
      case 4: v = *rc::gen::oneOf(AnyNear(e), Special()); break;            // NaN / Inf inside
      case 5: v = F32FromBits(*rc::gen::arbitrary<std::uint32_t>() & 0x807FFFFFu); break;  // subnormal
      case 7: v = *rc::gen::oneOf(HalfGrid(e), rc::gen::element(0.0f, -0.0f)); break;     // signed zeros
      default: v = *HalfGrid(e - 8); break;                                 // small body ...
    }
  }
  if (shape == 1 || shape == 6 || *rc::gen::inRange(0, 3) == 0) {
    // ... with one outlier or the tie-making amax.
    const long at = where[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, where.size()))];
    (*x)[static_cast<std::size_t>(at)] = *rc::gen::oneOf(TieAmax(e), rc::gen::map(TieAmax(e), [](float a) { return -a; }),
                                                         NearPowerOfTwo(e + 7));
  }
}

struct Case {
  recipe::Layout layout;
  long rows = 1;
  long cols = 1;
};

rc::Gen<Case> Shape() {
  return rc::gen::exec([] {
    Case c;
    const int kind = *rc::gen::inRange(0, 10);
    if (kind <= 1) {
      c.layout = {recipe::Geometry::kPerTensor, 0, 0};
      c.rows = *rc::gen::inRange(1, 5);
      c.cols = *rc::gen::inRange(1, 24);
    } else if (kind <= 3) {
      c.layout = {recipe::Geometry::kPerRow, 0, 0};
      c.rows = *rc::gen::inRange(1, 6);
      c.cols = *rc::gen::inRange(1, 24);
    } else if (kind <= 6) {
      c.layout = {recipe::Geometry::kGroup, *rc::gen::element(2, 4, 8, 32, 64, 128), 0};
      c.rows = *rc::gen::inRange(1, c.layout.size >= 64 ? 2 : 4);
      c.cols = c.layout.size * *rc::gen::inRange(1, 3);
    } else if (kind <= 8) {
      c.layout = {recipe::Geometry::kTile2d, *rc::gen::element(2, 4, 8), *rc::gen::element(1, 2, 3)};
      c.rows = c.layout.tile_rows * *rc::gen::inRange(1, 3);
      c.cols = c.layout.size * *rc::gen::inRange(1, 3);
    } else {
      // A flattened 1-D block, or a group / tile size of 0: refused alike.
      c.layout = *rc::gen::element(recipe::Layout{recipe::Geometry::kBlock1d, 32, 0},
                                   recipe::Layout{recipe::Geometry::kGroup, 0, 0},
                                   recipe::Layout{recipe::Geometry::kTile2d, 4, 0});
      c.rows = 4;
      c.cols = 8;
    }
    // Sometimes a shape that does not tile: both sides must refuse it alike.
    if (*rc::gen::inRange(0, 12) == 0) {
      c.cols += *rc::gen::inRange(-1, 2);
      c.rows += *rc::gen::inRange(-1, 2);
    }
    return c;
  });
}

class QuantModelVsOracle : public ::testing::TestWithParam<int> {
 protected:
  const recipe::Recipe& TheRecipe() const { return recipe::kAllRecipes[static_cast<std::size_t>(GetParam())]; }
};

TEST_P(QuantModelVsOracle, DynamicQuantizeAndDequantizeMatch) {
  const recipe::Recipe& r = TheRecipe();
  CheckAtLevel(LevelCounts{5, 150, 4000}, [&r] {
    const Case c = *Shape();
    std::vector<float> x;
    FillByGroup(r, c.layout, c.rows, c.cols, &x, FillGroup);
    CheckTensorAgainstOracle(r, c.layout, x, c.rows, c.cols);
  });
}

// Static quantization: the scale of a calibrated range (the model's scale
// step on StatsOfRange), and the codes of values beyond that range: clamped
// (integers) or saturated (FP8).
TEST_P(QuantModelVsOracle, StaticRangeScaleAndCodesMatch) {
  const recipe::Recipe& r = TheRecipe();
  CheckAtLevel(LevelCounts{5, 150, 4000}, [&r] {
    const int e = *rc::gen::inRange(-20, 20);
    float lo = *rc::gen::oneOf(HalfGrid(e), AnyNear(e), Special());
    float hi = *rc::gen::oneOf(TieAmax(e), AnyNear(e), Special());
    if (*rc::gen::arbitrary<bool>()) lo = -std::fabs(lo);
    RC_LOG() << r.name << ":" << r.profile << " range " << lo << " " << hi << "\n";
    const recipe::BlockScale s = recipe::ChooseScale(r, recipe::StatsOfRange(lo, hi));
    const ref::OracleScale want = ref::OracleScaleFromRange(r, lo, hi);
    RC_ASSERT(SameF32(F32Bits(s.factor), want.factor_bits));
    RC_ASSERT(SameF32(F32Bits(s.decode), want.decode_bits));
    RC_ASSERT(s.zero_point == want.zero_point);

    std::vector<float> x(8);
    FillGroup(&x, {0, 1, 2, 3, 4, 5, 6, 7});
    x[0] = hi * 4.0f;
    const recipe::Layout per_tensor{recipe::Geometry::kPerTensor, 0, 0};
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(recipe::PackedBytes(r.packing, 8)), 0);
    RC_ASSERT(recipe::QuantizeWithScales(r, per_tensor, x.data(), 1, 8, [&](long) { return s; }, codes.data()) ==
              recipe::TensorStatus::kOk);
    const ref::OracleQuantized got = ref::OracleQuantizeWithScales(r, per_tensor, x, 1, 8, {want});
    RC_ASSERT(codes == got.packed);
  });
}

bool IsScaledFamily(recipe::Family f) { return f == recipe::Family::kScaled; }

INSTANTIATE_TEST_SUITE_P(Catalog, QuantModelVsOracle, ::testing::ValuesIn(RecipesOf(IsScaledFamily)),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return TestName(recipe::kAllRecipes[static_cast<std::size_t>(info.param)]);
                         });

// Every scaled recipe of the catalog is a parameter above.
TEST(QuantModelVsOracleCoverage, EveryScaledRecipeIsChecked) {
  EXPECT_EQ(RecipesOf(IsScaledFamily).size(), 18u + 9u);  // kScaledPairs + kServingScaledPairs
}

}  // namespace
}  // namespace lowbit::testing
