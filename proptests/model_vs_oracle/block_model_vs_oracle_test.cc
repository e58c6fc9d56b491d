// Model == oracle for every MX and NVFP4 recipe of the catalog
// (recipe::kAllRecipes), the model through recipe::QuantizeTensor /
// DequantizeTensor, on RapidCheck tensors biased block by block to what
// breaks recipes (docs/design.md "Tests"): amax just below a power of two,
// one outlier, ties after scaling, all-zero blocks, subnormal amax, NaN and
// Inf inside a block, lengths that are not a multiple of the block size, and
// layouts that do not apply (both sides must refuse them alike).
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "catalog_recipe.h"
#include "generators_at_level.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/reference/block/recipe_oracle.h"
#include "recipe_vs_oracle.h"

namespace lowbit::testing {
namespace {

// Multiples of 2^(k-4): every E2M1/FP6 value and midpoint at scale 2^k, and
// many FP8 ones, so that ties after scaling are common.
rc::Gen<float> GridValue(int k) {
  return rc::gen::map(rc::gen::inRange(-128, 129), [k](int m) { return std::ldexp(static_cast<float>(m), k - 4); });
}

rc::Gen<float> NearPowerOfTwo(int k) {
  // +-2^k (1 - 2^-24) (0x..FFFFFF), 2^k, 2^k (1 + 2^-23), 6 * 2^k * 1.01,
  // 448 * 2^k * 1.01, 7.5 * 2^k, and 2^k (1 - 2^-8), which MXINT8 scales to
  // the tie +-127.5 (rounding to +-128: saturated, or clamped to -127).
  return rc::gen::map(
      rc::gen::pair(rc::gen::element(1.0f - std::ldexp(1.0f, -24), 1.0f, 1.0f + std::ldexp(1.0f, -23), 6.06f,
                                     448.0f * 1.01f, 7.5f, 1.0f - std::ldexp(1.0f, -8)),
                    rc::gen::arbitrary<bool>()),
      [k](std::pair<float, bool> p) { return std::ldexp(p.second ? -p.first : p.first, k); });
}

rc::Gen<float> AnyFloatNear(int k) {
  return rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::uint32_t>(), rc::gen::inRange(-3, 4)),
                      [k](std::pair<std::uint32_t, int> p) {
                        int e = k + p.second + 127;
                        e = e < 1 ? 1 : (e > 254 ? 254 : e);
                        return F32FromBits((p.first & 0x807FFFFFu) | (static_cast<std::uint32_t>(e) << 23));
                      });
}

rc::Gen<float> Special() {
  return rc::gen::element(0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), F32FromBits(0x00000001u), F32FromBits(0x80400000u),
                          F32FromBits(0x7F7FFFFFu));
}

rc::Gen<float> Subnormal() {
  return rc::gen::map(rc::gen::arbitrary<std::uint32_t>(), [](std::uint32_t b) { return F32FromBits(b & 0x807FFFFFu); });
}

// One block's values around 2^k in one of the biased shapes.
void FillBlock(std::vector<float>* x, const std::vector<long>& where) {
  const int k = *rc::gen::inRange(-135, 130);
  const int shape = *rc::gen::inRange(0, 8);
  for (long i : where) {
    float& v = (*x)[static_cast<std::size_t>(i)];
    switch (shape) {
      case 0: v = *GridValue(k); break;                                     // ties after scaling
      case 1: v = *AnyFloatNear(k); break;                                  // random near 2^k
      case 2: v = *rc::gen::oneOf(GridValue(k), NearPowerOfTwo(k)); break;  // amax near 2^k
      case 3: v = 0.0f; break;                                              // all zero
      case 4: v = *Subnormal(); break;                                      // subnormal amax
      case 5: v = *rc::gen::oneOf(AnyFloatNear(k), Special()); break;       // NaN / Inf inside
      case 7: v = *rc::gen::oneOf(GridValue(k), rc::gen::element(0.0f, -0.0f)); break;  // signed zeros
      default: v = *GridValue(k - 10); break;                               // small body ...
    }
  }
  if (shape == 6 || *rc::gen::inRange(0, 4) == 0) {
    // ... and one outlier (also mixed into the other shapes).
    const long at = where[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, where.size()))];
    (*x)[static_cast<std::size_t>(at)] = *rc::gen::oneOf(NearPowerOfTwo(k), AnyFloatNear(k));
  }
}

struct Case {
  recipe::Layout layout;
  long rows = 1;
  long cols = 1;
};

// Mostly 1-D blocks of the recipe's size over 1..2 rows (a short last
// block included), or groups of that size along rows; now and then a layout
// the recipe does not take, or groups that do not tile the rows.
Case BlockShape(const recipe::Recipe& r) {
  const int size = r.layout.size;
  Case c;
  const int kind = *rc::gen::inRange(0, 12);
  if (kind <= 6) {
    c.layout = {recipe::Geometry::kBlock1d, size, 0};
    c.rows = *rc::gen::inRange(1, 3);
    c.cols = *rc::gen::element(size, *rc::gen::inRange(1, 2 * size + 1));
  } else if (kind <= 9) {
    c.layout = {recipe::Geometry::kGroup, size, 0};
    c.rows = *rc::gen::inRange(1, 4);
    c.cols = size * *rc::gen::inRange(1, 3);
  } else if (kind == 10) {
    c.layout = *rc::gen::element(recipe::Layout{recipe::Geometry::kPerTensor, 0, 0},
                                 recipe::Layout{recipe::Geometry::kPerRow, 0, 0},
                                 recipe::Layout{recipe::Geometry::kTile2d, size, 2},
                                 recipe::Layout{recipe::Geometry::kBlock1d, size / 2, 0},
                                 recipe::Layout{recipe::Geometry::kGroup, 2 * size, 0});
    c.rows = 2;
    c.cols = 2 * size;
  } else {
    c.layout = {recipe::Geometry::kGroup, size, 0};
    c.rows = *rc::gen::inRange(0, 3);
    c.cols = size + *rc::gen::element(-1, 1, -size);
  }
  return c;
}

class BlockModelVsOracle : public ::testing::TestWithParam<int> {};

TEST_P(BlockModelVsOracle, TensorsMatch) {
  const recipe::Recipe& r = recipe::kAllRecipes[static_cast<std::size_t>(GetParam())];
  // NVFP4's tensor scale ties all blocks together: more cases per recipe
  // (there are 3 NVFP4 recipes and 48 MX ones).
  const LevelCounts counts = r.family() == recipe::Family::kNvfp4 ? LevelCounts{5, 300, 5000} : LevelCounts{2, 100, 1500};
  CheckAtLevel(counts, [&r] {
    const Case c = BlockShape(r);
    std::vector<float> x;
    FillByGroup(r, c.layout, c.rows, c.cols, &x, FillBlock);
    CheckTensorAgainstOracle(r, c.layout, x, c.rows, c.cols);
  });
}

bool IsBlockFamily(recipe::Family f) { return f != recipe::Family::kScaled; }

INSTANTIATE_TEST_SUITE_P(Catalog, BlockModelVsOracle, ::testing::ValuesIn(RecipesOf(IsBlockFamily)),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return TestName(recipe::kAllRecipes[static_cast<std::size_t>(info.param)]);
                         });

// Every MX and NVFP4 recipe of the catalog is a parameter above.
TEST(BlockModelVsOracleCoverage, EveryBlockRecipeIsChecked) {
  EXPECT_EQ(RecipesOf(IsBlockFamily).size(), 10u * 5u + 3u + 5u);
}

// ---- the worked examples of docs/formats-reference.md, through the oracle ----
// They pin the oracle to the spec text independently of the model (a bug
// shared by both would otherwise pass the properties above).

using ::lowbit::testing::CatalogRecipe;

// One row of values under the recipe's own layout.
ref::OracleQuantized Oracle(const recipe::Recipe& r, const std::vector<float>& x) {
  return ref::OracleQuantizeTensor(r, r.layout, x, 1, static_cast<long>(x.size()));
}

TEST(BlockOracleTest, IssueExampleFloorVersusRceilOnMxfp4) {
  const ref::OracleQuantized floor = Oracle(CatalogRecipe("mxfp4", "ocp"), {6.06f, 1.0f});
  EXPECT_EQ(floor.scales.at(0).code, 127);
  EXPECT_EQ(floor.codes, (std::vector<std::uint8_t>{0x7, 0x2}));
  EXPECT_EQ(floor.packed, (std::vector<std::uint8_t>{0x27}));  // element 0 in the low nibble
  const ref::OracleQuantized rceil = Oracle(CatalogRecipe("mxfp4", "te"), {6.06f, 1.0f});
  EXPECT_EQ(rceil.scales.at(0).code, 128);
  EXPECT_EQ(rceil.codes, (std::vector<std::uint8_t>{0x5, 0x1}));
  // docs/formats-reference.md §5.3: the RCEIL product rounds into the FP32 subnormals.
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp8_e4m3", "te"), {F32FromBits(0x04600001u)}).scales.at(0).code, 0x00);
}

// The nearest rule's tie: MXFP4 amax 9 gives the product 1.5 exactly, which
// goes up to 2^1; 8.9 stays at 2^0.
TEST(BlockOracleTest, NearestRuleTieGoesUp) {
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp4", "nearest"), {9.0f}).scales.at(0).code, 128);
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp4", "nearest"), {8.9f}).scales.at(0).code, 127);
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp8_e4m3", "nearest"), {600.0f}).scales.at(0).code, 127);
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp8_e4m3", "nearest"), {700.0f}).scales.at(0).code, 128);
}

// [MSX]: an all-zero block takes FP32_MIN_NORMAL as amax: 2^(-126 - 2) for
// MXFP4 clips to 2^-127; for MXINT8 (emax 0) it is 2^-126 (code 1). OCP:
// 2^-127 either way. MXINT8 never gives -128 (+-127, §5.2).
TEST(BlockOracleTest, MicroxcalingZeroBlockAndMxint8Range) {
  EXPECT_EQ(Oracle(CatalogRecipe("mxint8", "msx"), {0.0f, -0.0f}).scales.at(0).code, 1);
  EXPECT_EQ(Oracle(CatalogRecipe("mxfp4", "msx"), {0.0f}).scales.at(0).code, 0);
  EXPECT_EQ(Oracle(CatalogRecipe("mxint8", "ocp"), {0.0f}).scales.at(0).code, 0);
  // amax 1 -> X = 1; -1 * 64 = -64 (0xC0); 1.0 -> 64.
  const ref::OracleQuantized int8 = Oracle(CatalogRecipe("mxint8", "ocp"), {-1.0f, 1.0f, 1.0f / 128.0f});
  EXPECT_EQ(int8.scales.at(0).code, 127);
  EXPECT_EQ(int8.codes, (std::vector<std::uint8_t>{0xC0, 0x40, 0x00}));  // 0.5 ties to even 0
  // +-(2 - 2^-8): X = 1, the grid value +-127.75 rounds to +-128; +128
  // saturates to 127 and -128 is clamped to -127 (0x81).
  EXPECT_EQ(Oracle(CatalogRecipe("mxint8", "ocp"), {-1.99609375f, 1.99609375f}).codes,
            (std::vector<std::uint8_t>{0x81, 0x7F}));
}

TEST(BlockOracleTest, Nvfp4TeReciprocalTie) {
  // The block {0.17578125, 0x3D960000} under the tensor scale of amax 2688
  // (S_enc = 1): the 2688 sits in a second block.
  std::vector<float> x(17, 0.0f);
  x[0] = 0.17578125f;
  x[1] = F32FromBits(0x3D960000u);
  x[16] = 2688.0f;
  const ref::OracleQuantized te = Oracle(CatalogRecipe("nvfp4", "te"), x);
  EXPECT_EQ(te.tensor_scale.encode_bits, 0x3F800000u);
  EXPECT_EQ(te.scales.at(0).code, 0x0F);
  EXPECT_EQ(te.codes[0], 0x7);
  EXPECT_EQ(te.codes[1], 0x5);
  EXPECT_EQ(Oracle(CatalogRecipe("nvfp4", "te"), {5.0f}).tensor_scale.decode_bits, 0x3AF3CF3Eu);
  EXPECT_EQ(Oracle(CatalogRecipe("nvfp4", "modelopt"), {5.0f}).tensor_scale.decode_bits, 0x3AF3CF3Du);
}

}  // namespace
}  // namespace lowbit::testing
