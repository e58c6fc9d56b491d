// SIMD INT4 / UINT4 group quantization (simd.h QuantizeInt4Groups,
// DequantizeInt4Groups) against the model (formats/block/int_quant.h
// QuantizeMatrix / DequantizeMatrix, then packing.h PackNibbles kLowFirst) on
// each compiled target (simd_test_util.h): every INT4 / UINT4 recipe,
// per-group (g128 and odd group sizes, so groups straddle packed bytes),
// per-row and per-tensor layouts, odd row counts, unaligned inputs, groups
// biased as in simd_groups_test.cc.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/packing.h"
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

std::vector<const block::IntQuantRecipe*> Int4Recipes() {
  std::vector<const block::IntQuantRecipe*> v;
  for (const block::IntQuantRecipe* r : block::kAllIntQuantRecipes) {
    if (r->element->total_bits == 4) v.push_back(r);
  }
  return v;
}

TEST(SimdInt4, EveryInt4RecipeIsSupported) {
  ASSERT_EQ(Int4Recipes().size(), 8u);  // AO sym/asym (CPU, CUDA), GPTQ sym/asym, common x2
  for (const block::IntQuantRecipe* r : Int4Recipes()) {
    EXPECT_TRUE(simd::SupportsInt4Groups(*r, {block::Granularity::kPerGroup, 128, 0})) << r->name;
  }
  EXPECT_FALSE(simd::SupportsInt4Groups(block::kAoSymInt8, {block::Granularity::kPerGroup, 128, 0}));
  // 2-D blocks run as block_rows runs per group (int_group_quantize-inl.h).
  EXPECT_TRUE(simd::SupportsInt4Groups(block::kAoSymInt4, {block::Granularity::kBlock2d, 128, 2}));
}

// Draws per property and target at smoke / ci / full.
constexpr testing::LevelCounts kDraws{50, 1000, 50000};

void QuantizeMatchesModel(std::int64_t target) {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(Int4Recipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32, 64, 40);
  const int layout_kind = *rc::gen::weightedOneOf<int>(
      {{6, rc::gen::just(0)}, {1, rc::gen::just(1)}, {1, rc::gen::just(2)}});
  const block::QuantLayout layout = testing::LayoutOfKind(layout_kind, group, 0);
  // Small groups get more rows: the SIMD quantizer takes up to 16 groups a
  // batch (int_group_quantize-inl.h QuantizeGroupsLoop), so several batches
  // and a short one are drawn.
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, group <= 17 ? 48 : 6);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(count);
  const std::size_t fill = layout_kind == 0 ? static_cast<std::size_t>(group) : cols;
  for (std::size_t s = 0; s < count; s += fill) testing::FillBiasedRun(recipe, x.data() + s, fill);
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  std::vector<std::uint8_t> codes(count), packed((count + 1) / 2);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  RC_ASSERT(block::QuantizeMatrix(recipe, layout, x.data(), static_cast<long>(rows),
                                  static_cast<long>(cols), codes.data(), params.data()) ==
            block::QuantStatus::kOk);
  block::PackNibbles(codes.data(), static_cast<long>(count), block::NibbleOrder::kLowFirst, packed.data());
  const std::vector<float> shifted = Shifted(x, offset);
  std::vector<std::uint8_t> simd_packed = Guarded(packed.size(), kGuardByte);
  std::vector<block::QuantParams> simd_params(params.size() + 1);
  RC_ASSERT(simd::QuantizeInt4Groups(target, recipe, layout, shifted.data() + offset, rows, cols,
                                     simd_packed.data(), simd_params.data())
                .ok);
  for (std::size_t g = 0; g < params.size(); ++g) {
    RC_ASSERT(block::F32Bits(simd_params[g].encode) == block::F32Bits(params[g].encode));
    RC_ASSERT(block::F32Bits(simd_params[g].decode) == block::F32Bits(params[g].decode));
    RC_ASSERT(simd_params[g].zero_point == params[g].zero_point);
  }
  for (std::size_t i = 0; i < packed.size(); ++i) {
    if (simd_packed[i] != packed[i]) {
      RC_FAIL(RecipeName(recipe) + " group " + std::to_string(group) + " byte " +
              std::to_string(i) + " x=" + testing::F32Hex(x[2 * i]) + "," +
              (2 * i + 1 < count ? testing::F32Hex(x[2 * i + 1]) : "-") + " model " +
              std::to_string(packed[i]) + " simd " + std::to_string(simd_packed[i]));
    }
  }
  RC_ASSERT(GuardIntact(simd_packed, kGuardByte));
}

// Any packed bytes (an odd count leaves the last high nibble 0) and any
// parameters: dequantized FP32 bits equal the model's.
void DequantizeMatchesModel(std::int64_t target) {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(Int4Recipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32);
  const block::QuantLayout layout{block::Granularity::kPerGroup, group, 0};
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 6);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  std::vector<std::uint8_t> packed = testing::Codes((count + 1) / 2, 0xFF);
  if (count % 2) packed.back() &= 0xF;
  std::vector<block::QuantParams> params(count / static_cast<std::size_t>(group));
  for (auto& p : params) {
    p.decode = *rc::gen::oneOf(testing::BiasedFloat(), rc::gen::map(rc::gen::inRange(-40, 10), [](int k) {
      return std::ldexp(1.0f, k);
    }));
    p.zero_point = *rc::gen::oneOf(rc::gen::inRange(-16, 17), rc::gen::just(0), rc::gen::just(8));
  }
  std::vector<std::uint8_t> codes(count);
  block::UnpackNibbles(packed.data(), static_cast<long>(count), block::NibbleOrder::kLowFirst, codes.data());
  std::vector<float> expected(count);
  RC_ASSERT(block::DequantizeMatrix(recipe, layout, codes.data(), static_cast<long>(rows),
                                    static_cast<long>(cols), params.data(), expected.data()) ==
            block::QuantStatus::kOk);
  std::vector<float> out = Guarded(count, kGuardFloat);
  RC_ASSERT(simd::DequantizeInt4Groups(target, recipe, layout, packed.data(), rows, cols,
                                       params.data(), out.data())
                .ok);
  for (std::size_t i = 0; i < count; ++i) {
    if (block::F32Bits(out[i]) != block::F32Bits(expected[i])) {
      RC_FAIL(RecipeName(recipe) + " element " + std::to_string(i) + " model " +
              testing::F32Hex(expected[i]) + " simd " + testing::F32Hex(out[i]));
    }
  }
  RC_ASSERT(GuardIntact(out, kGuardFloat));
}

LOWBIT_SIMD_TARGET_SUITE(SimdInt4Quantize);
TEST_P(SimdInt4Quantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { QuantizeMatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdInt4Dequantize);
TEST_P(SimdInt4Dequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { DequantizeMatchesModel(target()); });
}

TEST_P(SimdInt4Quantize, ShapeErrorsAreReported) {
  std::vector<float> x(256);
  std::vector<std::uint8_t> packed(128);
  std::vector<block::QuantParams> params(2);
  const block::QuantLayout g128{block::Granularity::kPerGroup, 128, 0};
  EXPECT_FALSE(simd::QuantizeInt4Groups(target(), block::kAoSymInt4, g128, x.data(), 2, 100,
                                        packed.data(), params.data()).ok);
  EXPECT_TRUE(simd::QuantizeInt4Groups(target(), block::kAoSymInt4, g128, x.data(), 2, 128,
                                       packed.data(), params.data()).ok);
}

}  // namespace
}  // namespace lowbit
