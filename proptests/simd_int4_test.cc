// SIMD INT4 / UINT4 group quantization (simd.h QuantizeInt4Groups,
// DequantizeInt4Groups) against the model (formats/block/int_quant.h
// QuantizeMatrix / DequantizeMatrix, then packing.h PackNibbles kLowFirst) on
// every compiled target: every INT4 / UINT4 recipe, per-group (g128 and odd
// group sizes, so groups straddle packed bytes), per-row and per-tensor
// layouts, odd row counts, unaligned inputs. Groups are biased to where bugs
// live (docs/design.md "Tests"): all-zero groups, NaN / Inf inside groups,
// elements on the rounding ties of a power-of-two scale, values just below a
// power of two, one outlier.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/packing.h"
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

// One group of n values of a biased kind.
void FillGroup(float* x, std::size_t n) {
  const int kind = *rc::gen::inRange(0, 5);
  const int k = *rc::gen::inRange(-20, 20);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:  // all zero (both signs)
        x[i] = *rc::gen::element(0.0f, -0.0f);
        break;
      case 1:  // half-integer multiples of 2^k: ties of a power-of-two scale
        x[i] = std::ldexp(static_cast<float>(*rc::gen::inRange(-15, 16)) / 2.0f, k);
        break;
      case 2:  // mostly ordinary, sometimes special
        x[i] = *rc::gen::weightedOneOf<float>(
            {{9, rc::gen::map(rc::gen::inRange(-4000, 4000), [k](int v) { return std::ldexp(v / 512.0f, k); })},
             {1, AnyValue()}});
        break;
      default:
        x[i] = *AnyValue();
        break;
    }
  }
  // Pin the range so that the ties above are ties: amax 7 * 2^k (common:
  // scale 2^k), 7.5 * 2^k (AO sym, GPTQ sym: scale 2^k), or an outlier.
  if (n > 0 && kind == 1) {
    x[*rc::gen::inRange<std::size_t>(0, n)] =
        std::ldexp(*rc::gen::element(7.0f, -7.0f, 7.5f, -7.5f, 4096.0f), k);
  }
}

block::QuantLayout LayoutOf(int kind, int group) {
  switch (kind) {
    case 0:
      return {block::Granularity::kPerGroup, group, 0};
    case 1:
      return {block::Granularity::kPerRow, 0, 0};
    default:
      return {block::Granularity::kPerTensor, 0, 0};
  }
}

std::string Name(const block::IntQuantRecipe& r) {
  return std::string(r.element->name) + ":" + r.name;
}

// Draws per property at smoke / ci / full (about 0.1 ms each).
constexpr testing::LevelCounts kDraws{100, 2000, 50000};

void QuantizeMatchesModel() {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(Int4Recipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32, 64, 40);
  const int layout_kind = *rc::gen::weightedOneOf<int>(
      {{6, rc::gen::just(0)}, {1, rc::gen::just(1)}, {1, rc::gen::just(2)}});
  const block::QuantLayout layout = LayoutOf(layout_kind, group);
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 6);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(count);
  const std::size_t fill = layout_kind == 0 ? static_cast<std::size_t>(group) : cols;
  for (std::size_t s = 0; s < count; s += fill) FillGroup(x.data() + s, fill);
  block::GroupGrid grid;
  RC_ASSERT(block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            block::QuantStatus::kOk);
  std::vector<std::uint8_t> codes(count), packed((count + 1) / 2);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  RC_ASSERT(block::QuantizeMatrix(recipe, layout, x.data(), static_cast<long>(rows),
                                  static_cast<long>(cols), codes.data(), params.data()) ==
            block::QuantStatus::kOk);
  block::PackNibbles(codes.data(), static_cast<long>(count), block::NibbleOrder::kLowFirst, packed.data());
  std::vector<float> shifted(count + offset);
  std::memcpy(shifted.data() + offset, x.data(), count * sizeof(float));
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> simd_packed(packed.size() + 1, 0xCD);
    std::vector<block::QuantParams> simd_params(params.size() + 1);
    const registry::Status s = simd::QuantizeInt4Groups(target, recipe, layout, shifted.data() + offset,
                                                        rows, cols, simd_packed.data(), simd_params.data());
    RC_ASSERT(s.ok);
    for (std::size_t g = 0; g < params.size(); ++g) {
      RC_ASSERT(block::F32Bits(simd_params[g].encode) == block::F32Bits(params[g].encode));
      RC_ASSERT(block::F32Bits(simd_params[g].decode) == block::F32Bits(params[g].decode));
      RC_ASSERT(simd_params[g].zero_point == params[g].zero_point);
    }
    for (std::size_t i = 0; i < packed.size(); ++i) {
      if (simd_packed[i] != packed[i]) {
        RC_FAIL(Name(recipe) + " group " + std::to_string(group) + " on " +
                simd::TargetName(target) + " byte " + std::to_string(i) + " x=" +
                std::to_string(x[2 * i]) + "," + (2 * i + 1 < count ? std::to_string(x[2 * i + 1]) : "-") +
                " model " + std::to_string(packed[i]) + " simd " + std::to_string(simd_packed[i]));
      }
    }
    RC_ASSERT(simd_packed[packed.size()] == 0xCD);
  }
}

// Any codes and any parameters (NaN, Inf, subnormal scales, odd zero
// points): dequantized FP32 bits equal the model's.
void DequantizeMatchesModel() {
  const block::IntQuantRecipe& recipe = **rc::gen::elementOf(Int4Recipes());
  const int group = *rc::gen::element(128, 1, 3, 16, 17, 32);
  const block::QuantLayout layout{block::Granularity::kPerGroup, group, 0};
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, 6);
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 4);
  const std::size_t count = rows * cols;
  std::vector<std::uint8_t> packed((count + 1) / 2);
  for (auto& b : packed) b = *rc::gen::arbitrary<std::uint8_t>();
  if (count % 2) packed.back() &= 0xF;
  std::vector<block::QuantParams> params(count / static_cast<std::size_t>(group));
  for (auto& p : params) {
    p.decode = *rc::gen::oneOf(AnyValue(), rc::gen::map(rc::gen::inRange(-40, 10), [](int k) {
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
  for (std::int64_t target : RunnableTargets()) {
    std::vector<float> out(count + 1, -1.0f);
    RC_ASSERT(simd::DequantizeInt4Groups(target, recipe, layout, packed.data(), rows, cols,
                                         params.data(), out.data())
                  .ok);
    for (std::size_t i = 0; i < count; ++i) {
      if (block::F32Bits(out[i]) != block::F32Bits(expected[i])) {
        RC_FAIL(Name(recipe) + " on " + simd::TargetName(target) + " element " +
                std::to_string(i) + " model " + std::to_string(expected[i]) + " simd " +
                std::to_string(out[i]));
      }
    }
    RC_ASSERT(out[count] == -1.0f);
  }
}

TEST(SimdInt4Quantize, EveryRecipeMatchesModel) { testing::CheckAtLevel(kDraws, QuantizeMatchesModel); }
TEST(SimdInt4Dequantize, EveryRecipeMatchesModel) { testing::CheckAtLevel(kDraws, DequantizeMatchesModel); }

TEST(SimdInt4, ShapeErrorsAreReported) {
  std::vector<float> x(256);
  std::vector<std::uint8_t> packed(128);
  std::vector<block::QuantParams> params(2);
  const block::QuantLayout g128{block::Granularity::kPerGroup, 128, 0};
  EXPECT_FALSE(simd::QuantizeInt4Groups(0, block::kAoSymInt4, g128, x.data(), 2, 100,
                                        packed.data(), params.data()).ok);
  EXPECT_TRUE(simd::QuantizeInt4Groups(0, block::kAoSymInt4, g128, x.data(), 2, 128,
                                       packed.data(), params.data()).ok);
}

}  // namespace
}  // namespace lowbit
