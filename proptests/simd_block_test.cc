// SIMD MX block quantization against the model (formats/block/mx_recipe.h
// QuantizeMx) on every compiled target: every MX block format x every MX
// recipe, RapidCheck arrays of odd lengths at unaligned offsets whose blocks
// are biased to where bugs live (docs/design.md "Tests"): amax of the form
// 2^k * (1 - 2^-24), element ties, NaN/Inf inside blocks, all-zero blocks,
// one outlier, subnormal scales.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
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

const block::BlockSpec* const kMxSpecs[] = {&block::kMxfp8E4m3, &block::kMxfp8E5m2,
                                            &block::kMxfp6E2m3, &block::kMxfp6E3m2,
                                            &block::kMxfp4,     &block::kMxint8};

// One value of a biased kind.
rc::Gen<float> Value() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<std::uint32_t>(),
                   [](std::uint32_t b) { return block::F32FromBits(b); }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-30, 30), rc::gen::arbitrary<bool>()),
                   [](std::pair<int, bool> p) {  // 2^k (1 - 2^-24), just below a power of two
                     const float v = std::ldexp(1.0f - 0x1p-24f, p.first);
                     return p.second ? -v : v;
                   }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-12, 12), rc::gen::inRange(0, 16)),
                   [](std::pair<int, int> p) {  // ties and grid points of small formats
                     return std::ldexp(static_cast<float>(2 * p.second + 1), p.first) / 4.0f;
                   }),
      rc::gen::element(0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-127f, 0x1p-149f,
                       448.0f, 464.0f, 6.0f, 5.0f, 3.4028235e38f),
      rc::gen::map(rc::gen::inRange(-1000, 1000), [](int i) { return i / 64.0f; }));
}

std::vector<float> Blocks(std::size_t count) {
  std::vector<float> x(count);
  const float zero_block = *rc::gen::element(0, 1, 2);  // sometimes whole zero blocks
  for (std::size_t i = 0; i < count; ++i) x[i] = *Value();
  if (zero_block == 0) {
    for (std::size_t i = 0; i < count && i < 32; ++i) x[i] = 0;
  }
  return x;
}

RC_GTEST_PROP(SimdMxQuantize, EveryRecipeMatchesModel, ()) {
  const block::BlockSpec& spec = **rc::gen::elementOf(std::vector<const block::BlockSpec*>(std::begin(kMxSpecs), std::end(kMxSpecs)));
  const block::MxRecipe& recipe = **rc::gen::elementOf(std::vector<const block::MxRecipe*>(
      std::begin(block::kAllMxRecipes), std::end(block::kAllMxRecipes)));
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  const std::vector<float> x = Blocks(count);
  const std::size_t blocks = (count + spec.block_size - 1) / spec.block_size;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  block::QuantizeMx(spec, recipe, x.data(), static_cast<long>(count), codes.data(),
                    scales.data());
  std::vector<float> shifted(count + offset);
  if (count) std::memcpy(shifted.data() + offset, x.data(), count * sizeof(float));
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> simd_codes(count + 1, 0xCD), simd_scales(blocks + 1, 0xCD);
    const registry::Status s =
        simd::QuantizeMx(target, spec, recipe, shifted.data() + offset, count,
                         simd_codes.data(), simd_scales.data());
    RC_ASSERT(s.ok);
    for (std::size_t b = 0; b < blocks; ++b) {
      RC_ASSERT(simd_scales[b] == scales[b]);
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (simd_codes[i] != codes[i]) {
        RC_FAIL(std::string(spec.name) + " " + recipe.name + " on " + simd::TargetName(target) +
                " element " + std::to_string(i) + " x=" + std::to_string(x[i]) + " model " +
                std::to_string(codes[i]) + " simd " + std::to_string(simd_codes[i]));
      }
    }
    RC_ASSERT(simd_codes[count] == 0xCD);
    RC_ASSERT(simd_scales[blocks] == 0xCD);
  }
}

RC_GTEST_PROP(SimdNvfp4Quantize, EveryRecipeMatchesModel, ()) {
  const auto recipe = *rc::gen::element(block::Nvfp4Recipe::kTe, block::Nvfp4Recipe::kTorchao,
                                        block::Nvfp4Recipe::kModelOpt);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);
  const std::vector<float> x = Blocks(count);
  const std::size_t blocks = (count + 15) / 16;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  const block::Nvfp4TensorScale t = block::QuantizeNvfp4(
      recipe, x.data(), static_cast<long>(count), codes.data(), scales.data());
  std::vector<float> shifted(count + offset);
  if (count) std::memcpy(shifted.data() + offset, x.data(), count * sizeof(float));
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> simd_codes(count + 1, 0xCD), simd_scales(blocks + 1, 0xCD);
    block::Nvfp4TensorScale simd_t;
    RC_ASSERT(simd::QuantizeNvfp4(target, recipe, shifted.data() + offset, count,
                                  simd_codes.data(), simd_scales.data(), &simd_t)
                  .ok);
    RC_ASSERT(block::F32Bits(simd_t.decode) == block::F32Bits(t.decode));
    RC_ASSERT(block::F32Bits(simd_t.encode) == block::F32Bits(t.encode));
    for (std::size_t b = 0; b < blocks; ++b) RC_ASSERT(simd_scales[b] == scales[b]);
    for (std::size_t i = 0; i < count; ++i) {
      if (simd_codes[i] != codes[i]) {
        RC_FAIL(std::string("nvfp4 on ") + simd::TargetName(target) + " element " +
                std::to_string(i) + " x=" + std::to_string(x[i]) + " model " +
                std::to_string(codes[i]) + " simd " + std::to_string(simd_codes[i]));
      }
    }
    RC_ASSERT(simd_codes[count] == 0xCD);
    RC_ASSERT(simd_scales[blocks] == 0xCD);
  }
}

// Any codes (masked to the element width) and any scale bytes, 0xFF (NaN)
// included: dequantized FP32 bits equal the model's.
RC_GTEST_PROP(SimdMxDequantize, EveryFormatMatchesModel, ()) {
  const block::BlockSpec& spec = **rc::gen::elementOf(
      std::vector<const block::BlockSpec*>(std::begin(kMxSpecs), std::end(kMxSpecs)));
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t blocks = (count + spec.block_size - 1) / spec.block_size;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  for (auto& c : codes) c = *rc::gen::arbitrary<std::uint8_t>() & spec.element->CodeMask();
  for (auto& c : scales) c = *rc::gen::oneOf(rc::gen::arbitrary<std::uint8_t>(),
                                              rc::gen::element<std::uint8_t>(0, 1, 127, 254, 255));
  std::vector<float> expected(count);
  block::DequantizeMx(spec, codes.data(), scales.data(), static_cast<long>(count),
                      expected.data());
  for (std::int64_t target : RunnableTargets()) {
    std::vector<float> out(count + 1, -1.0f);
    RC_ASSERT(simd::DequantizeMx(target, spec, codes.data(), scales.data(), count, out.data()).ok);
    for (std::size_t i = 0; i < count; ++i) {
      RC_ASSERT(block::F32Bits(out[i]) == block::F32Bits(expected[i]));
    }
    RC_ASSERT(out[count] == -1.0f);
  }
}

// Any E2M1 codes, any scale bytes (0x7F/0xFF are NaN) and tensor scales
// including NaN, 0 and Inf.
RC_GTEST_PROP(SimdNvfp4Dequantize, EveryRecipeMatchesModel, ()) {
  const auto recipe = *rc::gen::element(block::Nvfp4Recipe::kTe, block::Nvfp4Recipe::kTorchao,
                                        block::Nvfp4Recipe::kModelOpt);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 200);
  const std::size_t blocks = (count + 15) / 16;
  std::vector<std::uint8_t> codes(count), scales(blocks);
  for (auto& c : codes) c = *rc::gen::arbitrary<std::uint8_t>() & 0xF;
  for (auto& c : scales) c = *rc::gen::arbitrary<std::uint8_t>();
  block::Nvfp4TensorScale t;
  t.decode = *Value();
  t.encode = *Value();
  std::vector<float> expected(count);
  block::DequantizeNvfp4(recipe, t, codes.data(), scales.data(), static_cast<long>(count),
                         expected.data());
  for (std::int64_t target : RunnableTargets()) {
    std::vector<float> out(count + 1, -1.0f);
    RC_ASSERT(simd::DequantizeNvfp4(target, recipe, t, codes.data(), scales.data(), count,
                                    out.data())
                  .ok);
    for (std::size_t i = 0; i < count; ++i) {
      RC_ASSERT(block::F32Bits(out[i]) == block::F32Bits(expected[i]));
    }
    RC_ASSERT(out[count] == -1.0f);
  }
}

RC_GTEST_PROP(SimdPackNibbles, MatchesModelLowFirst, ()) {
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 300);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 3);
  std::vector<std::uint8_t> codes(count + offset);
  for (auto& c : codes) c = *rc::gen::arbitrary<std::uint8_t>() & 0xF;
  std::vector<std::uint8_t> expected((count + 1) / 2);
  block::PackNibbles(codes.data() + offset, static_cast<long>(count), block::NibbleOrder::kLowFirst,
                     expected.data());
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> packed((count + 1) / 2 + 1, 0xCD);
    RC_ASSERT(simd::PackNibbles(target, codes.data() + offset, count, packed.data()).ok);
    for (std::size_t i = 0; i < expected.size(); ++i) RC_ASSERT(packed[i] == expected[i]);
    RC_ASSERT(packed[expected.size()] == 0xCD);
  }
}

TEST(SimdMxQuantize, RejectsWhatIsWrong) {
  float x[4] = {1, 2, 3, 4};
  std::uint8_t codes[4], scales[1];
  EXPECT_FALSE(simd::QuantizeMx(0, block::kMxfp4, block::kOcpMx, nullptr, 4, codes, scales).ok);
  EXPECT_FALSE(simd::QuantizeMx(0, block::kMxfp4, block::kOcpMx, x, 4, nullptr, scales).ok);
  EXPECT_FALSE(simd::QuantizeMx(0, block::kNvfp4, block::kOcpMx, x, 4, codes, scales).ok);
  EXPECT_FALSE(simd::QuantizeMx(std::int64_t{1} << 60, block::kMxfp4, block::kOcpMx, x, 4, codes,
                                scales).ok);
  EXPECT_TRUE(simd::QuantizeMx(0, block::kMxfp4, block::kOcpMx, nullptr, 0, nullptr, nullptr).ok);
  ASSERT_TRUE(simd::QuantizeMx(0, block::kMxfp4, block::kOcpMx, x, 4, codes, scales).ok);
}

}  // namespace
}  // namespace lowbit
