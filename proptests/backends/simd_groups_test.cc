// SIMD scaled-group quantization (simd.h Quantize, Dequantize) against the
// model (recipe/tensor.h QuantizeTensor / DequantizeTensor) on each compiled
// target (simd_test_util.h): every scaled recipe of the catalog (INT8, INT4,
// UINT4 with one code per byte or two per byte, FP8 E4M3 / E5M2) over
// per-group (odd group sizes, so 4-bit groups straddle packed bytes),
// per-row, per-tensor and 2-D tile layouts, odd row counts, unaligned inputs.
// Groups are biased to where bugs live (docs/design.md "Tests"): all-zero
// groups, NaN / Inf inside groups, elements on the rounding ties of a
// power-of-two scale, values just below a power of two, one outlier.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

const std::vector<const recipe::Recipe*> kScaled = testing::CatalogRecipes(recipe::Family::kScaled);

// Every scaled recipe of the catalog runs on the SIMD kernels at every
// layout the registry lists, read off its fields (simd.h Runs).
TEST(SimdGroups, EveryCatalogScaledRecipeRuns) {
  ASSERT_EQ(kScaled.size(), std::size(recipe::kScaledPairs) + std::size(recipe::kServingScaledPairs));
  for (const recipe::Recipe* r : kScaled) {
    for (const recipe::Layout layout : {recipe::Layout{recipe::Geometry::kPerTensor, 0, 0},
                                        recipe::Layout{recipe::Geometry::kPerRow, 0, 0},
                                        recipe::Layout{recipe::Geometry::kGroup, 128, 0},
                                        recipe::Layout{recipe::Geometry::kTile2d, 128, 128}}) {
      EXPECT_TRUE(simd::Runs(*r, layout)) << testing::NameOf(*r, layout);
    }
    // A scaled recipe takes groups along rows, never a flattened block.
    EXPECT_FALSE(simd::Runs(*r, {recipe::Geometry::kBlock1d, 32, 0})) << recipe::RecipeName(*r);
  }
}

// Fields the group kernels do not implement are refused, whatever the name.
TEST(SimdGroups, RecipesOutsideTheKernelsAreRefused) {
  const recipe::Layout row{recipe::Geometry::kPerRow, 0, 0};
  recipe::Recipe r = recipe::MakeScaledRecipe(kInt8, recipe::kAoSymProfile);
  ASSERT_TRUE(simd::Runs(r, row));
  r.element_encode.rounding = RoundingMode::kTowardZero;
  EXPECT_FALSE(simd::Runs(r, row));
  r = recipe::MakeScaledRecipe(kInt4, recipe::kAoSymProfile);
  r.packing = recipe::Packing::kNibblesHighFirst;
  EXPECT_FALSE(simd::Runs(r, row));
  float x[8] = {};
  std::uint8_t codes[8];
  float scales[1];
  const registry::Status s = simd::Quantize(simd::kBestTarget, r, row, x, 1, 8, {codes, nullptr, scales});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("no kernel for int4:ao-sym"), std::string::npos) << s.message;
}

// Draws per property and target at smoke / ci / full (about 0.1 ms each).
constexpr testing::LevelCounts kDraws{50, 1000, 50000};

void QuantizeMatchesModel(std::int64_t target) {
  const recipe::Recipe& r = **rc::gen::elementOf(kScaled);
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32, 64, 40);
  const int tile_rows = *rc::gen::inRange(1, 4);
  const int layout_kind = *rc::gen::weightedOneOf<int>(
      {{4, rc::gen::just(0)}, {2, rc::gen::just(1)}, {1, rc::gen::just(2)}, {2, rc::gen::just(3)}});
  const recipe::Layout layout = testing::LayoutOfKind(layout_kind, group, tile_rows);
  // Small groups get more rows: the SIMD quantizer takes up to 16 groups a
  // batch (int_group_quantize-inl.h QuantizeGroupsLoop), so several batches
  // and a short one are drawn.
  const std::size_t row_blocks = *rc::gen::inRange<std::size_t>(1, group <= 17 ? 24 : 4);
  const std::size_t rows = static_cast<std::size_t>(tile_rows) * row_blocks;
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(count);
  const std::size_t fill = layout_kind == 0 || layout_kind == 3 ? static_cast<std::size_t>(group) : cols;
  for (std::size_t s = 0; s < count; s += fill) testing::FillBiasedRun(r, x.data() + s, fill);
  testing::CheckQuantizeMatchesModel(target, r, layout, x, rows, cols, offset);
}

// Any codes and any parameters (NaN, Inf, subnormal scales, odd zero
// points): dequantized FP32 bits equal the model's.
void DequantizeMatchesModel(std::int64_t target) {
  const recipe::Recipe& r = **rc::gen::elementOf(kScaled);
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32);
  const int tile_rows = *rc::gen::inRange(1, 3);
  const recipe::Layout layout = testing::LayoutOfKind(*rc::gen::inRange(0, 4), group, tile_rows);
  const std::size_t rows = static_cast<std::size_t>(tile_rows) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const recipe::BufferSizes sizes = testing::SizesFor(r, layout, rows, cols);
  const std::vector<std::uint8_t> codes = testing::Codes(static_cast<std::size_t>(sizes.code_bytes), 0xFF);
  std::vector<float> scales(static_cast<std::size_t>(sizes.scales));
  for (float& s : scales) {
    s = *rc::gen::oneOf(testing::BiasedFloat(),
                        rc::gen::map(rc::gen::inRange(-40, 10), [](int k) { return std::ldexp(1.0f, k); }));
  }
  std::vector<std::int32_t> zero_points(static_cast<std::size_t>(sizes.zero_points));
  for (std::int32_t& z : zero_points) {
    z = *rc::gen::oneOf(rc::gen::inRange(-130, 130), rc::gen::just(0), rc::gen::just(8));
  }
  const recipe::ConstQuantizedTensor q{codes.data(), nullptr, scales.data(),
                                       zero_points.empty() ? nullptr : zero_points.data(), nullptr};
  testing::CheckDequantizeMatchesModel(target, r, layout, q, rows, cols);
}

LOWBIT_SIMD_TARGET_SUITE(SimdGroupsQuantize);
TEST_P(SimdGroupsQuantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { QuantizeMatchesModel(target()); });
}

// Integer recipes over groups of 64 or 128 along rows of 16 to 40 groups:
// whole batches of sixteen consecutive groups, which the vector batches of
// simd/src/int_group_quantize-inl.h QuantizeGroupsLoop take (the
// statistics of sixteen groups at once, their scales in vectors, packed
// codes straight from the vectors), and a short batch. The shapes above
// hold sixteen such groups in few draws.
// Half the draws take a GPTQ recipe, whose batches carry three statistics
// and a zero point per group.
constexpr testing::LevelCounts kBatchDraws{20, 100, 2000};

std::vector<const recipe::Recipe*> IntegerRecipes(bool gptq_only) {
  std::vector<const recipe::Recipe*> out;
  for (const recipe::Recipe* r : kScaled) {
    const bool gptq =
        r->scale_rule == recipe::ScaleRule::kGptqSymmetric || r->scale_rule == recipe::ScaleRule::kGptqAsymmetric;
    if (!r->element.IsFloat() && (gptq || !gptq_only)) out.push_back(r);
  }
  return out;
}

void WholeBatchesMatchModel(std::int64_t target) {
  static const std::vector<const recipe::Recipe*> kIntegers = IntegerRecipes(false);
  static const std::vector<const recipe::Recipe*> kGptq = IntegerRecipes(true);
  RC_ASSERT(!kGptq.empty());
  const recipe::Recipe& r = **rc::gen::elementOf(*rc::gen::arbitrary<bool>() ? kGptq : kIntegers);
  const int group = *rc::gen::element(64, 128);
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(16, 41);
  std::vector<float> x(rows * cols);
  for (std::size_t s = 0; s < x.size(); s += static_cast<std::size_t>(group)) {
    testing::FillBiasedRun(r, x.data() + s, static_cast<std::size_t>(group));
  }
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);
  testing::CheckQuantizeMatchesModel(target, r, {recipe::Geometry::kGroup, group, 0}, x, rows, cols, offset);
}

TEST_P(SimdGroupsQuantize, WholeBatchesMatchModel) {
  testing::CheckAtLevel(kBatchDraws, [this] { WholeBatchesMatchModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdGroupsDequantize);
TEST_P(SimdGroupsDequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { DequantizeMatchesModel(target()); });
}

TEST_P(SimdGroupsQuantize, ShapeErrorsAreReported) {
  std::vector<float> x(512);
  std::vector<std::uint8_t> codes(512);
  std::vector<float> scales(4);
  const recipe::Recipe int8 = recipe::MakeScaledRecipe(kInt8, recipe::kAoSymProfile);
  const recipe::Recipe e4m3 = recipe::MakeScaledRecipe(kE4m3, recipe::kTeFp8Profile);
  const recipe::Layout g128{recipe::Geometry::kGroup, 128, 0};
  const recipe::Layout t2x128{recipe::Geometry::kTile2d, 128, 2};
  const recipe::QuantizedTensor q{codes.data(), nullptr, scales.data()};
  const std::int64_t t = target();
  EXPECT_FALSE(simd::Quantize(t, int8, g128, x.data(), 2, 100, q).ok);
  EXPECT_FALSE(simd::Quantize(t, e4m3, t2x128, x.data(), 3, 128, q).ok);
  EXPECT_TRUE(simd::Quantize(t, e4m3, t2x128, x.data(), 4, 128, q).ok);
  EXPECT_FALSE(simd::Quantize(t, e4m3, g128, nullptr, 2, 128, q).ok);
}

}  // namespace
}  // namespace lowbit
