// SIMD MX and NVFP4 block quantization and dequantization (simd.h Quantize,
// Dequantize), and low-first nibble packing, against the model
// (recipe/tensor.h QuantizeTensor / DequantizeTensor, packing.h) on each
// compiled target (simd_test_util.h): every MX and NVFP4 recipe of the
// catalog, RapidCheck arrays of odd lengths at unaligned offsets whose blocks
// are biased to where bugs live: amax of the form 2^k * (1 - 2^-24), element
// ties, NaN/Inf inside blocks, all-zero blocks, one outlier, subnormal scales.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

using testing::BiasedBlocks;
using testing::Guarded;
using testing::GuardIntact;
using testing::kGuardByte;
using testing::kGuardFloat;

const std::vector<const recipe::Recipe*> kMx = testing::CatalogRecipes(recipe::Family::kMx);
const std::vector<const recipe::Recipe*> kNvfp4 = testing::CatalogRecipes(recipe::Family::kNvfp4);

// Every MX and NVFP4 recipe of the catalog runs on the SIMD kernels, at its
// block layout and as groups along rows (simd.h Runs, read off the fields).
TEST(SimdBlockRecipes, EveryCatalogBlockRecipeRuns) {
  EXPECT_EQ(kNvfp4.size(), std::size(recipe::kNvfp4Profiles));
  EXPECT_EQ(kMx.size(), static_cast<std::size_t>(recipe::detail::CountMxRecipes()));
  for (const std::vector<const recipe::Recipe*>* family : {&kMx, &kNvfp4}) {
    for (const recipe::Recipe* r : *family) {
      EXPECT_TRUE(simd::Runs(*r, r->layout)) << recipe::RecipeName(*r);
      EXPECT_TRUE(simd::Runs(*r, {recipe::Geometry::kGroup, r->layout.size, 0})) << recipe::RecipeName(*r);
      EXPECT_FALSE(simd::Runs(*r, {recipe::Geometry::kPerRow, 0, 0})) << recipe::RecipeName(*r);
    }
  }
}

// What the block kernels do not implement is refused, whatever the name:
// stochastic MX rounding (no random bits), an NVFP4 recipe whose fields
// differ from the catalog's recipe of its rule (the kernels fold that one in).
TEST(SimdBlockRecipes, RecipesOutsideTheKernelsAreRefused) {
  recipe::Recipe mx = *kMx.front();
  mx.element_encode.rounding = RoundingMode::kStochastic;
  EXPECT_FALSE(simd::Runs(mx, mx.layout));
  recipe::Recipe nvfp4 = *kNvfp4.front();
  nvfp4.amax_nan = nvfp4.amax_nan == AmaxNan::kIgnore ? AmaxNan::kPropagate : AmaxNan::kIgnore;
  EXPECT_FALSE(simd::Runs(nvfp4, nvfp4.layout));
  float x[16] = {};
  std::uint8_t codes[8], scales[1];
  recipe::TensorScale t;
  const registry::Status s =
      simd::Quantize(simd::kBestTarget, nvfp4, nvfp4.layout, x, 1, 16, {codes, scales, nullptr, nullptr, &t});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("no kernel for nvfp4:"), std::string::npos) << s.message;
}

// Draws per property and target at smoke / ci / full.
constexpr testing::LevelCounts kDraws{50, 500, 5000};

// Up to 50 blocks of 32 (MX) or 40 of 16 (NVFP4): the SIMD quantizer takes
// Lanes blocks at once (16 on AVX-512) for the scales and the element
// encode, so several whole groups and a short one are drawn. An empty array
// is covered by the bad-input tests (the model's tensors are never empty).
void BlockQuantizeMatchesModel(std::int64_t target, const std::vector<const recipe::Recipe*>& recipes,
                               std::size_t max_count) {
  const recipe::Recipe& r = **rc::gen::elementOf(recipes);
  const std::size_t count = *rc::gen::inRange<std::size_t>(1, max_count);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  testing::CheckQuantizeMatchesModel(target, r, r.layout, BiasedBlocks(count), 1, count, offset);
}

// Any codes (every bit of a packed byte; masked to the element width where
// one code has a byte), any scale bytes (0xFF: NaN) and tensor scales
// including NaN, 0 and Inf.
void BlockDequantizeMatchesModel(std::int64_t target, const std::vector<const recipe::Recipe*>& recipes) {
  const recipe::Recipe& r = **rc::gen::elementOf(recipes);
  const std::size_t count = *rc::gen::inRange<std::size_t>(1, 200);
  const recipe::BufferSizes sizes = testing::SizesFor(r, r.layout, 1, count);
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  const std::vector<std::uint8_t> codes = testing::Codes(
      static_cast<std::size_t>(sizes.code_bytes), packed ? 0xFF : static_cast<std::uint8_t>(r.element.CodeMask()));
  const std::vector<std::uint8_t> scales = r.family() == recipe::Family::kMx
                                               ? testing::ScaleBytes(static_cast<std::size_t>(sizes.scale_codes))
                                               : testing::Codes(static_cast<std::size_t>(sizes.scale_codes), 0xFF);
  recipe::TensorScale t;
  t.decode = *testing::BiasedFloat();
  t.encode = *testing::BiasedFloat();
  const recipe::ConstQuantizedTensor q{codes.data(), scales.data(), nullptr, nullptr,
                                       sizes.tensor_scales > 0 ? &t : nullptr};
  testing::CheckDequantizeMatchesModel(target, r, r.layout, q, 1, count);
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
  testing::CheckAtLevel(kDraws, [this] { BlockQuantizeMatchesModel(target(), kMx, 1600); });
}

TEST_P(SimdMxQuantize, RejectsWhatIsWrong) {
  float x[4] = {1, 2, 3, 4};
  std::uint8_t codes[4], scales[1];
  const recipe::Recipe& mxfp8 = **std::find_if(kMx.begin(), kMx.end(), [](const recipe::Recipe* r) {
    return r->element.total_bits == 8 && r->element.IsFloat();
  });
  const std::int64_t t = target();
  const recipe::QuantizedTensor q{codes, scales};
  EXPECT_FALSE(simd::Quantize(t, mxfp8, mxfp8.layout, nullptr, 1, 4, q).ok);
  EXPECT_FALSE(simd::Quantize(t, mxfp8, mxfp8.layout, x, 1, 4, {nullptr, scales}).ok);
  EXPECT_FALSE(simd::Quantize(t, mxfp8, {recipe::Geometry::kPerRow, 0, 0}, x, 1, 4, q).ok);
  EXPECT_TRUE(simd::Quantize(t, mxfp8, mxfp8.layout, nullptr, 0, 4, {}).ok);
  EXPECT_TRUE(simd::Quantize(t, mxfp8, mxfp8.layout, x, 1, 4, q).ok);
}

LOWBIT_SIMD_TARGET_SUITE(SimdNvfp4Quantize);
TEST_P(SimdNvfp4Quantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { BlockQuantizeMatchesModel(target(), kNvfp4, 640); });
}

// NVFP4's whole groups of sixteen blocks go from the vectors that scaled
// them straight to packed bytes where the scaled values of four blocks all
// lie below 2^4 (simd/src/block_quantize-inl.h QuantizeNvfp4Loop: the
// GroupEncoder's FourCodes, then StorePackedFour). A tensor of hundreds of
// BiasedBlocks values almost always holds an Inf or values from across the
// whole FP32 range, which leave few blocks there. These tensors hold finite
// values a few binades apart (E2M1 ties and grid points, amaxes 2^k (1 -
// 2^-24), zeros of both signs, ordinary values), all scaled by one power of
// two, sometimes with an outlier or a NaN, over whole groups and a short
// tail.
rc::Gen<float> ModerateBlockValue() {
  const rc::Gen<float> magnitude = rc::gen::oneOf(
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-3, 4), rc::gen::inRange(0, 16)),
                   [](std::pair<int, int> p) { return std::ldexp(static_cast<float>(2 * p.second + 1), p.first) / 4.0f; }),
      rc::gen::map(rc::gen::inRange(-4, 5), [](int k) { return std::ldexp(1.0f - 0x1p-24f, k); }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-3, 4), rc::gen::inRange(0, 2)),
                   [](std::pair<int, int> p) {
                     return std::ldexp(p.second ? testing::OverflowTie(kE2m1) : testing::MaxFinite(kE2m1), p.first);
                   }),
      rc::gen::element(0.0f), rc::gen::map(rc::gen::inRange(1, 1000), [](int i) { return i / 64.0f; }));
  return rc::gen::map(rc::gen::pair(magnitude, rc::gen::arbitrary<bool>()),
                      [](std::pair<float, bool> p) { return p.second ? -p.first : p.first; });
}

constexpr testing::LevelCounts kModerateDraws{20, 200, 2000};

void ModerateNvfp4MatchesModel(std::int64_t target) {
  const recipe::Recipe& r = **rc::gen::elementOf(kNvfp4);
  const std::size_t count = *rc::gen::inRange<std::size_t>(256, 1200);
  const int binade = *rc::gen::inRange(-40, 40);
  std::vector<float> x(count);
  for (float& v : x) v = std::ldexp(*ModerateBlockValue(), binade);
  if (*rc::gen::inRange(0, 4) == 0) {
    x[*rc::gen::inRange<std::size_t>(0, count)] = std::ldexp(*ModerateBlockValue(), binade + *rc::gen::inRange(5, 20));
  }
  if (*rc::gen::inRange(0, 8) == 0) x[*rc::gen::inRange<std::size_t>(0, count)] = *rc::gen::element(NAN, -NAN);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);
  testing::CheckQuantizeMatchesModel(target, r, r.layout, x, 1, count, offset);
}

TEST_P(SimdNvfp4Quantize, ModerateTensorsMatchModel) {
  testing::CheckAtLevel(kModerateDraws, [this] { ModerateNvfp4MatchesModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdMxDequantize);
TEST_P(SimdMxDequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { BlockDequantizeMatchesModel(target(), kMx); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdNvfp4Dequantize);
TEST_P(SimdNvfp4Dequantize, EveryRecipeMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { BlockDequantizeMatchesModel(target(), kNvfp4); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdPackNibbles);
TEST_P(SimdPackNibbles, MatchesModelLowFirst) {
  testing::CheckAtLevel(kDraws, [this] { PackLowFirstMatchesModel(target()); });
}

// MXFP4 goes through the block kernels a chunk of whole blocks at a time
// (simd/src/recipe_quantize.cc PackChunkElements, 32 Ki elements); NVFP4's
// kernel packs a whole tensor and prefetches eight groups of blocks ahead:
// tensors of two to three chunks and an odd tail, with an outlier near the
// end half the time, so that NVFP4's tensor scale must come from the whole
// tensor (its amax pass runs from the end back to the start).
constexpr testing::LevelCounts kChunkDraws{2, 6, 40};

std::vector<const recipe::Recipe*> FourBitBlockRecipes() {
  std::vector<const recipe::Recipe*> out;
  for (const auto* family : {&kMx, &kNvfp4}) {
    for (const recipe::Recipe* r : *family) {
      if (r->packing != recipe::Packing::kOnePerByte) out.push_back(r);
    }
  }
  return out;
}

void SeveralChunksMatchModel(std::int64_t target) {
  static const std::vector<const recipe::Recipe*> kFourBit = FourBitBlockRecipes();
  RC_ASSERT(!kFourBit.empty());
  const recipe::Recipe& r = **rc::gen::elementOf(kFourBit);
  // The values: a small biased pattern (what a failure shrinks) spread over
  // the tensor by a seeded generator (drawn without shrinking: shrinking
  // 10^5 drawn values one by one would take hours).
  const std::size_t count = *rc::gen::noShrink(rc::gen::inRange<std::size_t>(2 * 32768 + 1, 3 * 32768 + 64));
  const std::vector<float> pattern = BiasedBlocks(96);
  std::mt19937 spread(*rc::gen::noShrink(rc::gen::arbitrary<std::uint32_t>()));
  std::vector<float> x(count);
  for (float& v : x) v = pattern[spread() % pattern.size()];
  if (*rc::gen::arbitrary<bool>()) x[count - 1 - *rc::gen::inRange<std::size_t>(0, 64)] = 3.0e5f;
  testing::CheckQuantizeMatchesModel(target, r, r.layout, x, 1, count, 0);
  // The model's own buffers back through the chunked dequantize.
  const recipe::BufferSizes sizes = testing::SizesFor(r, r.layout, 1, count);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<std::uint8_t> scales(static_cast<std::size_t>(sizes.scale_codes));
  recipe::TensorScale t;
  const recipe::QuantizedTensor q{codes.data(), scales.data(), nullptr, nullptr,
                                  sizes.tensor_scales > 0 ? &t : nullptr};
  RC_ASSERT(recipe::QuantizeTensor(r, r.layout, x.data(), 1, static_cast<long>(count), q) ==
            recipe::TensorStatus::kOk);
  testing::CheckDequantizeMatchesModel(target, r, r.layout, recipe::AsConst(q), 1, count);
}

LOWBIT_SIMD_TARGET_SUITE(SimdFourBitChunks);
TEST_P(SimdFourBitChunks, TensorsOfSeveralChunksMatchModel) {
  testing::CheckAtLevel(kChunkDraws, [this] { SeveralChunksMatchModel(target()); });
}

// Target errors, the same for every kernel (target_dispatch.h): a bit that
// names no compiled target, and kBestTarget, which always runs.
TEST(SimdBlockTargets, UnknownTargetIsAnErrorBestTargetRuns) {
  float x[4] = {1, 2, 3, 4};
  std::uint8_t codes[4], scales[1];
  const recipe::Recipe& r = *kMx.front();
  const registry::Status s = simd::Quantize(std::int64_t{1} << 60, r, r.layout, x, 1, 4, {codes, scales});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("not compiled in"), std::string::npos) << s.message;
  EXPECT_TRUE(simd::Quantize(simd::kBestTarget, r, r.layout, x, 1, 4, {codes, scales}).ok);
}

}  // namespace
}  // namespace lowbit
