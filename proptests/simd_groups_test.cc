// SIMD scaled-group quantization with one code per byte (simd.h
// QuantizeGroups, DequantizeGroups) against the model (formats/block/
// int_quant.h QuantizeMatrix / DequantizeMatrix) on every compiled target:
// every recipe of int_quant_recipe.h (INT8, INT4, UINT4, TE FP8 E4M3 / E5M2)
// over per-group (odd group sizes), per-row, per-tensor and 2-D block
// layouts, odd row counts, unaligned inputs. Groups are biased to where bugs
// live (docs/design.md "Tests"): all-zero groups, NaN / Inf inside groups,
// elements on the rounding ties of a power-of-two scale, values just below a
// power of two, one outlier.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/simd/simd.h"

namespace lowbit {
namespace {

std::vector<std::int64_t> RunnableTargets() {
  std::vector<std::int64_t> v;
  for (std::int64_t t : simd::CompiledTargets()) {
    if (simd::TargetAvailable(t)) v.push_back(t);
  }
  return v;
}

std::vector<const block::IntQuantRecipe*> AllRecipes() {
  return {std::begin(block::kAllIntQuantRecipes), std::end(block::kAllIntQuantRecipes)};
}

std::string Name(const block::IntQuantRecipe& r) {
  return std::string(r.element->name) + ":" + r.name;
}

TEST(SimdGroups, EveryRecipeAndLayoutIsSupported) {
  ASSERT_EQ(AllRecipes().size(), 18u);  // 4 TE FP8, 6 INT8, 8 INT4 / UINT4
  for (const block::IntQuantRecipe* r : AllRecipes()) {
    for (const block::QuantLayout layout :
         {block::QuantLayout{block::Granularity::kPerTensor, 0, 0},
          block::QuantLayout{block::Granularity::kPerRow, 0, 0},
          block::QuantLayout{block::Granularity::kPerGroup, 128, 0},
          block::QuantLayout{block::Granularity::kBlock2d, 128, 128}}) {
      EXPECT_TRUE(simd::SupportsScaledGroups(*r, layout)) << Name(*r);
    }
  }
}

rc::Gen<float> AnyValue() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<std::uint32_t>(),
                   [](std::uint32_t b) { return block::F32FromBits(b); }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-30, 30), rc::gen::arbitrary<bool>()),
                   [](std::pair<int, bool> p) {  // 2^k (1 - 2^-24)
                     const float v = std::ldexp(1.0f - 0x1p-24f, p.first);
                     return p.second ? -v : v;
                   }),
      rc::gen::element(0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-149f, 3.4028235e38f),
      rc::gen::map(rc::gen::inRange(-1000, 1000), [](int i) { return i / 64.0f; }));
}

// The largest |code value| of a recipe's element: the integer range, or the
// FP8 max_norm TE scales amax to.
float RangeOf(const block::IntQuantRecipe& r) {
  if (r.scheme == block::QuantScheme::kTeFp8) return r.element->exponent_bits == 5 ? 57344.0f : 448.0f;
  return static_cast<float>(r.qmax);
}

// One run of n values of a biased kind.
void FillRun(const block::IntQuantRecipe& r, float* x, std::size_t n) {
  const int kind = *rc::gen::inRange(0, 5);
  const int k = *rc::gen::inRange(-20, 20);
  const int range = static_cast<int>(RangeOf(r) > 255.0f ? 255.0f : RangeOf(r));
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:  // all zero (both signs)
        x[i] = *rc::gen::element(0.0f, -0.0f);
        break;
      case 1:  // half-integer multiples of 2^k: ties of a power-of-two scale
        x[i] = std::ldexp(static_cast<float>(*rc::gen::inRange(-2 * range - 1, 2 * range + 2)) / 2.0f, k);
        break;
      case 2:  // mostly ordinary, sometimes special
        x[i] = *rc::gen::weightedOneOf<float>(
            {{9, rc::gen::map(rc::gen::inRange(-40000, 40000), [k](int v) { return std::ldexp(v / 512.0f, k); })},
             {1, AnyValue()}});
        break;
      default:
        x[i] = *AnyValue();
        break;
    }
  }
  // Pin the range so that the ties above are ties: amax qmax * 2^k (common:
  // scale 2^k), (qmax + 0.5) * 2^k (AO sym: scale 2^k), the FP8 max_norm
  // (TE: scale 2^-k), or an outlier.
  if (n > 0 && kind == 1) {
    const float q = RangeOf(r);
    x[*rc::gen::inRange<std::size_t>(0, n)] =
        std::ldexp(*rc::gen::element(q, -q, q + 0.5f, -(q + 0.5f), 4096.0f), k);
  }
}

block::QuantLayout LayoutOf(int kind, int group, int block_rows) {
  switch (kind) {
    case 0:
      return {block::Granularity::kPerGroup, group, 0};
    case 1:
      return {block::Granularity::kPerRow, 0, 0};
    case 2:
      return {block::Granularity::kPerTensor, 0, 0};
    default:
      return {block::Granularity::kBlock2d, group, block_rows};
  }
}

// Draws per property at smoke / ci / full (about 0.1 ms each).
constexpr testing::LevelCounts kDraws{100, 2000, 50000};

void QuantizeMatchesModel() {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(AllRecipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32, 64, 40);
  const int block_rows = *rc::gen::inRange(1, 4);
  const int layout_kind = *rc::gen::weightedOneOf<int>(
      {{4, rc::gen::just(0)}, {2, rc::gen::just(1)}, {1, rc::gen::just(2)}, {2, rc::gen::just(3)}});
  const block::QuantLayout layout = LayoutOf(layout_kind, group, block_rows);
  const std::size_t rows = static_cast<std::size_t>(block_rows) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(count);
  const std::size_t fill = layout_kind == 0 || layout_kind == 3 ? static_cast<std::size_t>(group) : cols;
  for (std::size_t s = 0; s < count; s += fill) FillRun(recipe, x.data() + s, fill);
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  std::vector<std::uint8_t> codes(count);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  RC_ASSERT(block::QuantizeMatrix(recipe, layout, x.data(), static_cast<long>(rows),
                                  static_cast<long>(cols), codes.data(), params.data()) ==
            block::QuantStatus::kOk);
  std::vector<float> shifted(count + offset);
  std::memcpy(shifted.data() + offset, x.data(), count * sizeof(float));
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> simd_codes(count + 1, 0xCD);
    std::vector<block::QuantParams> simd_params(params.size() + 1);
    const registry::Status s = simd::QuantizeGroups(target, recipe, layout, shifted.data() + offset,
                                                    rows, cols, simd_codes.data(), simd_params.data());
    RC_ASSERT(s.ok);
    for (std::size_t g = 0; g < params.size(); ++g) {
      RC_ASSERT(block::F32Bits(simd_params[g].encode) == block::F32Bits(params[g].encode));
      RC_ASSERT(block::F32Bits(simd_params[g].decode) == block::F32Bits(params[g].decode));
      RC_ASSERT(simd_params[g].zero_point == params[g].zero_point);
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (simd_codes[i] != codes[i]) {
        RC_FAIL(Name(recipe) + " layout " + std::to_string(layout_kind) + " group " +
                std::to_string(group) + " on " + simd::TargetName(target) + " element " +
                std::to_string(i) + " x=" + std::to_string(x[i]) + " model " +
                std::to_string(codes[i]) + " simd " + std::to_string(simd_codes[i]));
      }
    }
    RC_ASSERT(simd_codes[count] == 0xCD);
  }
}

// Any codes and any parameters (NaN, Inf, subnormal scales, odd zero
// points): dequantized FP32 bits equal the model's.
void DequantizeMatchesModel() {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(AllRecipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32);
  const int block_rows = *rc::gen::inRange(1, 3);
  const int layout_kind = *rc::gen::inRange(0, 4);
  const block::QuantLayout layout = LayoutOf(layout_kind, group, block_rows);
  const std::size_t rows = static_cast<std::size_t>(block_rows) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  std::vector<std::uint8_t> codes(count);
  for (auto& c : codes) c = *rc::gen::arbitrary<std::uint8_t>();
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  for (auto& p : params) {
    p.decode = *rc::gen::oneOf(AnyValue(), rc::gen::map(rc::gen::inRange(-40, 10), [](int k) {
      return std::ldexp(1.0f, k);
    }));
    p.zero_point = *rc::gen::oneOf(rc::gen::inRange(-130, 130), rc::gen::just(0), rc::gen::just(8));
  }
  std::vector<float> expected(count);
  RC_ASSERT(block::DequantizeMatrix(recipe, layout, codes.data(), static_cast<long>(rows),
                                    static_cast<long>(cols), params.data(), expected.data()) ==
            block::QuantStatus::kOk);
  for (std::int64_t target : RunnableTargets()) {
    std::vector<float> out(count + 1, -1.0f);
    RC_ASSERT(simd::DequantizeGroups(target, recipe, layout, codes.data(), rows, cols,
                                     params.data(), out.data())
                  .ok);
    for (std::size_t i = 0; i < count; ++i) {
      if (block::F32Bits(out[i]) != block::F32Bits(expected[i])) {
        RC_FAIL(Name(recipe) + " on " + simd::TargetName(target) + " element " +
                std::to_string(i) + " code " + std::to_string(codes[i]) + " model bits " +
                std::to_string(block::F32Bits(expected[i])) + " simd " +
                std::to_string(block::F32Bits(out[i])) + " scale bits " +
                std::to_string(block::F32Bits(params[static_cast<std::size_t>(
                    block::GroupOf(grid, static_cast<long>(i / cols), static_cast<long>(i % cols)))].decode)));
      }
    }
    RC_ASSERT(out[count] == -1.0f);
  }
}

TEST(SimdGroupsQuantize, EveryRecipeMatchesModel) { testing::CheckAtLevel(kDraws, QuantizeMatchesModel); }
TEST(SimdGroupsDequantize, EveryRecipeMatchesModel) { testing::CheckAtLevel(kDraws, DequantizeMatchesModel); }

TEST(SimdGroups, ShapeErrorsAreReported) {
  std::vector<float> x(512);
  std::vector<std::uint8_t> codes(512);
  std::vector<block::QuantParams> params(4);
  const block::QuantLayout g128{block::Granularity::kPerGroup, 128, 0};
  const block::QuantLayout b2x128{block::Granularity::kBlock2d, 128, 2};
  EXPECT_FALSE(simd::QuantizeGroups(0, block::kAoSymInt8, g128, x.data(), 2, 100, codes.data(), params.data()).ok);
  EXPECT_FALSE(simd::QuantizeGroups(0, block::kTeFp8E4m3, b2x128, x.data(), 3, 128, codes.data(), params.data()).ok);
  EXPECT_TRUE(simd::QuantizeGroups(0, block::kTeFp8E4m3, b2x128, x.data(), 4, 128, codes.data(), params.data()).ok);
  EXPECT_FALSE(simd::QuantizeGroups(0, block::kTeFp8E4m3, g128, nullptr, 2, 128, codes.data(), params.data()).ok);
}

}  // namespace
}  // namespace lowbit
