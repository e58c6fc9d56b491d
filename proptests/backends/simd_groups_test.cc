// SIMD scaled-group quantization with one code per byte (simd.h
// QuantizeGroups, DequantizeGroups) against the model (formats/block/
// int_quant.h QuantizeMatrix / DequantizeMatrix) on each compiled target
// (simd_test_util.h): every recipe of int_quant_recipe.h (INT8, INT4, UINT4,
// TE FP8 E4M3 / E5M2) over per-group (odd group sizes), per-row, per-tensor
// and 2-D block layouts, odd row counts, unaligned inputs. Groups are biased
// to where bugs live (docs/design.md "Tests"): all-zero groups, NaN / Inf
// inside groups, elements on the rounding ties of a power-of-two scale,
// values just below a power of two, one outlier.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

using testing::Guarded;
using testing::GuardIntact;
using testing::kGuardByte;
using testing::kGuardFloat;
using testing::RecipeName;
using testing::Shifted;

std::vector<const block::IntQuantRecipe*> AllRecipes() {
  return {std::begin(block::kAllIntQuantRecipes), std::end(block::kAllIntQuantRecipes)};
}

TEST(SimdGroups, EveryRecipeAndLayoutIsSupported) {
  ASSERT_EQ(AllRecipes().size(), 18u);  // 4 TE FP8, 6 INT8, 8 INT4 / UINT4
  for (const block::IntQuantRecipe* r : AllRecipes()) {
    for (const block::QuantLayout layout :
         {block::QuantLayout{block::Granularity::kPerTensor, 0, 0},
          block::QuantLayout{block::Granularity::kPerRow, 0, 0},
          block::QuantLayout{block::Granularity::kPerGroup, 128, 0},
          block::QuantLayout{block::Granularity::kBlock2d, 128, 128}}) {
      EXPECT_TRUE(simd::SupportsScaledGroups(*r, layout)) << RecipeName(*r);
    }
  }
}

// Draws per property and target at smoke / ci / full (about 0.1 ms each).
constexpr testing::LevelCounts kDraws{50, 1000, 50000};

void QuantizeMatchesModel(std::int64_t target) {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(AllRecipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32, 64, 40);
  const int block_rows = *rc::gen::inRange(1, 4);
  const int layout_kind = *rc::gen::weightedOneOf<int>(
      {{4, rc::gen::just(0)}, {2, rc::gen::just(1)}, {1, rc::gen::just(2)}, {2, rc::gen::just(3)}});
  const block::QuantLayout layout = testing::LayoutOfKind(layout_kind, group, block_rows);
  // Small groups get more rows: the SIMD quantizer takes up to 16 groups a
  // batch (int_group_quantize-inl.h QuantizeGroupsLoop), so several batches
  // and a short one are drawn.
  const std::size_t row_blocks = *rc::gen::inRange<std::size_t>(1, group <= 17 ? 24 : 4);
  const std::size_t rows = static_cast<std::size_t>(block_rows) * row_blocks;
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(count);
  const std::size_t fill = layout_kind == 0 || layout_kind == 3 ? static_cast<std::size_t>(group) : cols;
  for (std::size_t s = 0; s < count; s += fill) testing::FillBiasedRun(recipe, x.data() + s, fill);
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  std::vector<std::uint8_t> codes(count);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  RC_ASSERT(block::QuantizeMatrix(recipe, layout, x.data(), static_cast<long>(rows),
                                  static_cast<long>(cols), codes.data(), params.data()) ==
            block::QuantStatus::kOk);
  const std::vector<float> shifted = Shifted(x, offset);
  std::vector<std::uint8_t> simd_codes = Guarded(count, kGuardByte);
  std::vector<block::QuantParams> simd_params(params.size() + 1);
  RC_ASSERT(simd::QuantizeGroups(target, recipe, layout, shifted.data() + offset, rows, cols,
                                 simd_codes.data(), simd_params.data())
                .ok);
  for (std::size_t g = 0; g < params.size(); ++g) {
    RC_ASSERT(block::F32Bits(simd_params[g].encode) == block::F32Bits(params[g].encode));
    RC_ASSERT(block::F32Bits(simd_params[g].decode) == block::F32Bits(params[g].decode));
    RC_ASSERT(simd_params[g].zero_point == params[g].zero_point);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (simd_codes[i] != codes[i]) {
      RC_FAIL(RecipeName(recipe) + " layout " + std::to_string(layout_kind) + " group " +
              std::to_string(group) + " element " + std::to_string(i) + " x=" +
              testing::F32Hex(x[i]) + " model " + std::to_string(codes[i]) + " simd " +
              std::to_string(simd_codes[i]));
    }
  }
  RC_ASSERT(GuardIntact(simd_codes, kGuardByte));
}

// Any codes and any parameters (NaN, Inf, subnormal scales, odd zero
// points): dequantized FP32 bits equal the model's.
void DequantizeMatchesModel(std::int64_t target) {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(AllRecipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32);
  const int block_rows = *rc::gen::inRange(1, 3);
  const int layout_kind = *rc::gen::inRange(0, 4);
  const block::QuantLayout layout = testing::LayoutOfKind(layout_kind, group, block_rows);
  const std::size_t rows = static_cast<std::size_t>(block_rows) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  const std::vector<std::uint8_t> codes = testing::Codes(count, 0xFF);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  for (auto& p : params) {
    p.decode = *rc::gen::oneOf(testing::BiasedFloat(), rc::gen::map(rc::gen::inRange(-40, 10), [](int k) {
      return std::ldexp(1.0f, k);
    }));
    p.zero_point = *rc::gen::oneOf(rc::gen::inRange(-130, 130), rc::gen::just(0), rc::gen::just(8));
  }
  std::vector<float> expected(count);
  RC_ASSERT(block::DequantizeMatrix(recipe, layout, codes.data(), static_cast<long>(rows),
                                    static_cast<long>(cols), params.data(), expected.data()) ==
            block::QuantStatus::kOk);
  std::vector<float> out = Guarded(count, kGuardFloat);
  RC_ASSERT(simd::DequantizeGroups(target, recipe, layout, codes.data(), rows, cols, params.data(),
                                   out.data())
                .ok);
  for (std::size_t i = 0; i < count; ++i) {
    if (block::F32Bits(out[i]) != block::F32Bits(expected[i])) {
      const std::size_t g = static_cast<std::size_t>(
          block::GroupOf(grid, static_cast<long>(i / cols), static_cast<long>(i % cols)));
      RC_FAIL(RecipeName(recipe) + " element " + std::to_string(i) + " code " +
              std::to_string(codes[i]) + " model " + testing::F32Hex(expected[i]) + " simd " +
              testing::F32Hex(out[i]) + " scale " + testing::F32Hex(params[g].decode));
    }
  }
  RC_ASSERT(GuardIntact(out, kGuardFloat));
}

LOWBIT_SIMD_TARGET_SUITE(SimdGroupsQuantize);
TEST_P(SimdGroupsQuantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { QuantizeMatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdGroupsDequantize);
TEST_P(SimdGroupsDequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { DequantizeMatchesModel(target()); });
}

TEST_P(SimdGroupsQuantize, ShapeErrorsAreReported) {
  std::vector<float> x(512);
  std::vector<std::uint8_t> codes(512);
  std::vector<block::QuantParams> params(4);
  const block::QuantLayout g128{block::Granularity::kPerGroup, 128, 0};
  const block::QuantLayout b2x128{block::Granularity::kBlock2d, 128, 2};
  const std::int64_t t = target();
  EXPECT_FALSE(simd::QuantizeGroups(t, block::kAoSymInt8, g128, x.data(), 2, 100, codes.data(), params.data()).ok);
  EXPECT_FALSE(simd::QuantizeGroups(t, block::kTeFp8E4m3, b2x128, x.data(), 3, 128, codes.data(), params.data()).ok);
  EXPECT_TRUE(simd::QuantizeGroups(t, block::kTeFp8E4m3, b2x128, x.data(), 4, 128, codes.data(), params.data()).ok);
  EXPECT_FALSE(simd::QuantizeGroups(t, block::kTeFp8E4m3, g128, nullptr, 2, 128, codes.data(), params.data()).ok);
}

}  // namespace
}  // namespace lowbit
