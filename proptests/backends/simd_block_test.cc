// SIMD MX and NVFP4 block quantization and dequantization, and low-first
// nibble packing, against the model (formats/block/mx_recipe.h,
// nvfp4_recipe.h, packing.h) on each compiled target (simd_test_util.h):
// every MX block format x every MX recipe and every NVFP4 recipe, RapidCheck
// arrays of odd lengths at unaligned offsets whose blocks are biased to where
// bugs live: amax of the form 2^k * (1 - 2^-24), element ties, NaN/Inf inside
// blocks, all-zero blocks, one outlier, subnormal scales.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

using testing::BiasedBlocks;
using testing::Guarded;
using testing::GuardIntact;
using testing::kGuardByte;
using testing::kGuardFloat;
using testing::kGuardWord;
using testing::Shifted;

const block::BlockSpec* const kMxSpecs[] = {&block::kMxfp8E4m3, &block::kMxfp8E5m2,
                                            &block::kMxfp6E2m3, &block::kMxfp6E3m2,
                                            &block::kMxfp4,     &block::kMxint8};

// Every NVFP4 recipe of the catalog (recipe/catalog.h kNvfp4Profiles), so a
// new profile there is drawn here without another list.
std::vector<block::Nvfp4Recipe> Nvfp4Recipes() {
  std::vector<block::Nvfp4Recipe> all;
  for (const recipe::Nvfp4Profile& p : recipe::kNvfp4Profiles) {
    block::Nvfp4Recipe r{};
    if (block::Nvfp4RecipeOf(p.rule, &r)) all.push_back(r);
  }
  return all;
}
const std::vector<block::Nvfp4Recipe> kNvfp4Recipes = Nvfp4Recipes();

TEST(SimdBlockRecipes, EveryCatalogNvfp4RecipeIsDrawn) {
  EXPECT_EQ(kNvfp4Recipes.size(), std::size(recipe::kNvfp4Profiles));
}

// Draws per property and target at smoke / ci / full.
constexpr testing::LevelCounts kDraws{50, 500, 5000};

void MxQuantizeMatchesModel(std::int64_t target) {
  const block::BlockSpec& spec = **rc::gen::elementOf(
      std::vector<const block::BlockSpec*>(std::begin(kMxSpecs), std::end(kMxSpecs)));
  const block::MxRecipe& recipe = **rc::gen::elementOf(std::vector<const block::MxRecipe*>(
      std::begin(block::kAllMxRecipes), std::end(block::kAllMxRecipes)));
  // Up to 50 blocks of 32: the SIMD quantizer takes Lanes blocks at once (16
  // on AVX-512, 512 elements) for the scales and the element encode, so
  // several whole groups and a short one are drawn.
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 1600);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  const std::vector<float> x = BiasedBlocks(count);
  const std::size_t blocks = (count + spec.block_size - 1) / spec.block_size;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  if (!block::MxRecipeApplies(spec, recipe)) {
    // A pairing the catalog (and so the name parser) does not have, e.g.
    // mxint8:te: refused, as the name would be (docs/bad-input.md).
    RC_ASSERT(!simd::QuantizeMx(target, spec, recipe, x.data(), count, codes.data(), scales.data()).ok);
    return;
  }
  block::QuantizeMx(spec, recipe, x.data(), static_cast<long>(count), codes.data(), scales.data());
  const std::vector<float> shifted = Shifted(x, offset);
  std::vector<std::uint8_t> simd_codes = Guarded(count, kGuardByte);
  std::vector<std::uint8_t> simd_scales = Guarded(blocks, kGuardByte);
  RC_ASSERT(simd::QuantizeMx(target, spec, recipe, shifted.data() + offset, count,
                             simd_codes.data(), simd_scales.data())
                .ok);
  for (std::size_t b = 0; b < blocks; ++b) RC_ASSERT(simd_scales[b] == scales[b]);
  for (std::size_t i = 0; i < count; ++i) {
    if (simd_codes[i] != codes[i]) {
      RC_FAIL(std::string(spec.name) + " " + recipe.name + " element " + std::to_string(i) +
              " x=" + testing::F32Hex(x[i]) + " model " + std::to_string(codes[i]) + " simd " +
              std::to_string(simd_codes[i]));
    }
  }
  RC_ASSERT(GuardIntact(simd_codes, kGuardByte));
  RC_ASSERT(GuardIntact(simd_scales, kGuardByte));
}

void Nvfp4QuantizeMatchesModel(std::int64_t target) {
  const block::Nvfp4Recipe recipe = *rc::gen::elementOf(
      kNvfp4Recipes);
  // Up to 40 blocks: the SIMD quantizer picks the scales of Lanes blocks at
  // once (16 on AVX-512), so several full groups and a short one are drawn.
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 640);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);
  const std::vector<float> x = BiasedBlocks(count);
  const std::size_t blocks = (count + 15) / 16;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  const block::Nvfp4TensorScale t =
      block::QuantizeNvfp4(recipe, x.data(), static_cast<long>(count), codes.data(), scales.data());
  const std::vector<float> shifted = Shifted(x, offset);
  std::vector<std::uint8_t> simd_codes = Guarded(count, kGuardByte);
  std::vector<std::uint8_t> simd_scales = Guarded(blocks, kGuardByte);
  block::Nvfp4TensorScale simd_t;
  RC_ASSERT(simd::QuantizeNvfp4(target, recipe, shifted.data() + offset, count, simd_codes.data(),
                                simd_scales.data(), &simd_t)
                .ok);
  RC_ASSERT(block::F32Bits(simd_t.decode) == block::F32Bits(t.decode));
  RC_ASSERT(block::F32Bits(simd_t.encode) == block::F32Bits(t.encode));
  for (std::size_t b = 0; b < blocks; ++b) RC_ASSERT(simd_scales[b] == scales[b]);
  for (std::size_t i = 0; i < count; ++i) {
    if (simd_codes[i] != codes[i]) {
      RC_FAIL(std::string("nvfp4 element ") + std::to_string(i) + " x=" + testing::F32Hex(x[i]) +
              " model " + std::to_string(codes[i]) + " simd " + std::to_string(simd_codes[i]));
    }
  }
  RC_ASSERT(GuardIntact(simd_codes, kGuardByte));
  RC_ASSERT(GuardIntact(simd_scales, kGuardByte));
}

// Any codes (masked to the element width) and any scale bytes, 0xFF (NaN)
// included: dequantized FP32 bits equal the model's.
void MxDequantizeMatchesModel(std::int64_t target) {
  const block::BlockSpec& spec = **rc::gen::elementOf(
      std::vector<const block::BlockSpec*>(std::begin(kMxSpecs), std::end(kMxSpecs)));
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t blocks = (count + spec.block_size - 1) / spec.block_size;
  const std::vector<std::uint8_t> codes =
      testing::Codes(count, static_cast<std::uint8_t>(spec.element->CodeMask()));
  const std::vector<std::uint8_t> scales = testing::ScaleBytes(blocks);
  std::vector<float> expected(count);
  block::DequantizeMx(spec, codes.data(), scales.data(), static_cast<long>(count), expected.data());
  std::vector<float> out = Guarded(count, kGuardFloat);
  RC_ASSERT(simd::DequantizeMx(target, spec, codes.data(), scales.data(), count, out.data()).ok);
  for (std::size_t i = 0; i < count; ++i) RC_ASSERT(block::F32Bits(out[i]) == block::F32Bits(expected[i]));
  RC_ASSERT(GuardIntact(out, kGuardFloat));
}

// Any E2M1 codes, any scale bytes (0x7F/0xFF are NaN) and tensor scales
// including NaN, 0 and Inf.
void Nvfp4DequantizeMatchesModel(std::int64_t target) {
  const block::Nvfp4Recipe recipe = *rc::gen::elementOf(
      kNvfp4Recipes);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t blocks = (count + 15) / 16;
  const std::vector<std::uint8_t> codes = testing::Codes(count, 0xF);
  const std::vector<std::uint8_t> scales = testing::Codes(blocks, 0xFF);
  block::Nvfp4TensorScale t;
  t.decode = *testing::BiasedFloat();
  t.encode = *testing::BiasedFloat();
  std::vector<float> expected(count);
  block::DequantizeNvfp4(recipe, t, codes.data(), scales.data(), static_cast<long>(count),
                         expected.data());
  std::vector<float> out = Guarded(count, kGuardFloat);
  RC_ASSERT(simd::DequantizeNvfp4(target, recipe, t, codes.data(), scales.data(), count, out.data()).ok);
  for (std::size_t i = 0; i < count; ++i) RC_ASSERT(block::F32Bits(out[i]) == block::F32Bits(expected[i]));
  RC_ASSERT(GuardIntact(out, kGuardFloat));
}

void PackLowFirstMatchesModel(std::int64_t target) {
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 300);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 3);
  const std::vector<std::uint8_t> codes = testing::Codes(count + offset, 0xF);
  std::vector<std::uint8_t> expected((count + 1) / 2);
  block::PackNibbles(codes.data() + offset, static_cast<long>(count), block::NibbleOrder::kLowFirst,
                     expected.data());
  std::vector<std::uint8_t> packed = Guarded(expected.size(), kGuardByte);
  RC_ASSERT(simd::PackNibbles(target, codes.data() + offset, count, packed.data()).ok);
  for (std::size_t i = 0; i < expected.size(); ++i) RC_ASSERT(packed[i] == expected[i]);
  RC_ASSERT(GuardIntact(packed, kGuardByte));
}

LOWBIT_SIMD_TARGET_SUITE(SimdMxQuantize);
TEST_P(SimdMxQuantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { MxQuantizeMatchesModel(target()); });
}

TEST_P(SimdMxQuantize, RejectsWhatIsWrong) {
  float x[4] = {1, 2, 3, 4};
  std::uint8_t codes[4], scales[1];
  const std::int64_t t = target();
  EXPECT_FALSE(simd::QuantizeMx(t, block::kMxfp4, block::kOcpMx, nullptr, 4, codes, scales).ok);
  EXPECT_FALSE(simd::QuantizeMx(t, block::kMxfp4, block::kOcpMx, x, 4, nullptr, scales).ok);
  EXPECT_FALSE(simd::QuantizeMx(t, block::kNvfp4, block::kOcpMx, x, 4, codes, scales).ok);
  EXPECT_TRUE(simd::QuantizeMx(t, block::kMxfp4, block::kOcpMx, nullptr, 0, nullptr, nullptr).ok);
  EXPECT_TRUE(simd::QuantizeMx(t, block::kMxfp4, block::kOcpMx, x, 4, codes, scales).ok);
}

LOWBIT_SIMD_TARGET_SUITE(SimdNvfp4Quantize);
TEST_P(SimdNvfp4Quantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { Nvfp4QuantizeMatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdMxDequantize);
TEST_P(SimdMxDequantize, EveryFormatMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { MxDequantizeMatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdNvfp4Dequantize);
TEST_P(SimdNvfp4Dequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { Nvfp4DequantizeMatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdPackNibbles);
TEST_P(SimdPackNibbles, MatchesModelLowFirst) {
  testing::CheckAtLevel(kDraws, [this] { PackLowFirstMatchesModel(target()); });
}

// Target errors, the same for every kernel (target_dispatch.h): a bit that
// names no compiled target, and kBestTarget, which always runs.
TEST(SimdBlockTargets, UnknownTargetIsAnErrorBestTargetRuns) {
  float x[4] = {1, 2, 3, 4};
  std::uint8_t codes[4], scales[1];
  const registry::Status s = simd::QuantizeMx(std::int64_t{1} << 60, block::kMxfp4, block::kOcpMx,
                                              x, 4, codes, scales);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("not compiled in"), std::string::npos) << s.message;
  EXPECT_TRUE(simd::QuantizeMx(simd::kBestTarget, block::kMxfp4, block::kOcpMx, x, 4, codes, scales).ok);
}

}  // namespace
}  // namespace lowbit
