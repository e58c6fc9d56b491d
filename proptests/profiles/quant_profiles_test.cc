// docs/formats-reference.md §9 row 12 and §7 as named per-profile tests of the scaled
// quantization recipes (the catalog's scaled entries, recipe/catalog.h). Every expected value is worked
// out by hand from the formulas of docs/formats-reference.md §7 / §8.2, with FP32 roundings of
// the stated operations taken from an FP32 calculator, never from lowbit.
// Tensors go through recipe/tensor.h, static scales through the steps.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "catalog_recipe.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::recipe {
namespace {

// The catalog entry FORMAT:PROFILE, found at compile time where the test
// needs a constant expression (the static_asserts below).
constexpr const Recipe* Lookup(std::string_view format, std::string_view profile) {
  for (const Recipe& r : kAllRecipes) {
    if (format == r.name && profile == r.profile) return &r;
  }
  return nullptr;
}

using ::lowbit::testing::CatalogRecipe;

const Recipe& kAoSymInt8 = CatalogRecipe("int8", "ao-sym");
const Recipe& kAoSymInt4 = CatalogRecipe("int4", "ao-sym");
const Recipe& kAoAsymInt8 = CatalogRecipe("int8", "ao-asym");
const Recipe& kAoAsymUint4 = CatalogRecipe("uint4", "ao-asym");
const Recipe& kAoSymCudaInt8 = CatalogRecipe("int8", "ao-sym-cuda");
const Recipe& kGptqSymUint4 = CatalogRecipe("uint4", "gptq-sym");
const Recipe& kGptqAsymUint4 = CatalogRecipe("uint4", "gptq-asym");
const Recipe& kCommonInt8 = CatalogRecipe("int8", "common");
const Recipe& kCommonAwayInt8 = CatalogRecipe("int8", "common-away");
const Recipe& kCommonInt4 = CatalogRecipe("int4", "common");
const Recipe& kTeFp8E4m3 = CatalogRecipe("e4m3", "te");
const Recipe& kTeFp8E4m3Pow2 = CatalogRecipe("e4m3", "te-pow2");
const Recipe& kTeFp8E5m2 = CatalogRecipe("e5m2", "te");

struct Quantized {
  std::vector<std::uint8_t> codes;  // one element code per entry (unpacked)
  BlockScale params;                // the group's scale as chosen (factor, decode, zero point)
  std::vector<float> back;
};

// One group: the whole vector, per tensor, through QuantizeTensor and
// DequantizeTensor. The scale the group stored must be the one ChooseScale
// gives for its statistics.
Quantized PerTensor(const Recipe& r, const std::vector<float>& x) {
  const long n = static_cast<long>(x.size());
  const Layout per_tensor{Geometry::kPerTensor, 0, 0};
  Quantized q{{}, ChooseScale(r, StatsOf(r, x.data(), n)), std::vector<float>(x.size())};
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(PackedBytes(r.packing, n)));
  float scale = 0.0f;
  std::int32_t zero_point = 0;
  QuantizedTensor t;
  t.codes = packed.data();
  t.scales = &scale;
  t.zero_points = r.zero_point == ZeroPoint::kInteger ? &zero_point : nullptr;
  EXPECT_EQ(QuantizeTensor(r, per_tensor, x.data(), 1, n, t), TensorStatus::kOk);
  EXPECT_EQ(F32Bits(scale), F32Bits(q.params.decode));
  EXPECT_EQ(zero_point, r.zero_point == ZeroPoint::kInteger ? q.params.zero_point : 0);
  EXPECT_EQ(DequantizeTensor(r, per_tensor, AsConst(t), 1, n, q.back.data()), TensorStatus::kOk);
  for (long k = 0; k < n; ++k) q.codes.push_back(LoadCode(r.packing, packed.data(), k));
  return q;
}

using Codes = std::vector<std::uint8_t>;
using Values = std::vector<float>;

TEST(Row12SymmetricScaleTest, AoDividesByHalfRangeAndReachesMinus128CommonDividesBy127) {
  // amax 127.5. [AO] SYMMETRIC: scale = 127.5 / ((127 - -128) / 2) = 1,
  // 1 / scale = 1; round_half_even(+-127.5) = +128 -> clamp 127, and -128
  // (kept: the clamp is [-128, 127]). common: scale = fp32(127.5 / 127) =
  // 0x3F808102; 127.5 / scale = 127, 2.5 / scale = 2.4901..., -0.5 / scale =
  // -0.498... -> -0 -> 0; clamp [-127, 127].
  const Quantized ao = PerTensor(kAoSymInt8, {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(ao.params.decode, 1.0f);
  EXPECT_EQ(ao.codes, (Codes{0x7F, 0x80, 0x02, 0x00}));
  EXPECT_EQ(ao.back, (Values{127.0f, -128.0f, 2.0f, 0.0f}));

  const Quantized common = PerTensor(kCommonInt8, {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(F32Bits(common.params.decode), 0x3F808102u);
  EXPECT_EQ(common.codes, (Codes{0x7F, 0x81, 0x02, 0x00}));
  // 127 * 0x3F808102 = 127.5 exactly after rounding; 2 * scale = 0x40008102.
  EXPECT_EQ(F32Bits(common.back[0]), 0x42FF0000u);
  EXPECT_EQ(F32Bits(common.back[1]), 0xC2FF0000u);
  EXPECT_EQ(F32Bits(common.back[2]), 0x40008102u);
}

TEST(Row12SymmetricScaleTest, Int4AoUsesSevenAndAHalfCommonUsesSeven) {
  // amax 7.5: [AO] scale 7.5 / 7.5 = 1, -7.5 -> -8 (even), 7.5 -> 8 -> 7.
  // common int4: scale = 7.5 / 7 (FP32), clamp [-7, 7]: -7.5 -> -7.
  EXPECT_EQ(PerTensor(kAoSymInt4, {7.5f, -7.5f, 0.5f}).codes, (Codes{0x7, 0x8, 0x0}));
  EXPECT_EQ(PerTensor(kCommonInt4, {7.5f, -7.5f}).codes, (Codes{0x7, 0x9}));
}

TEST(Row12SymmetricScaleTest, TorchaoOnCudaMultipliesByTheReciprocalOf127Point5) {
  // amax 3. CPU: scale = fp32(3 / 127.5) = 0x3CC0C0C1, 1 / scale = 42.5
  // exactly, -3 * 42.5 = -127.5 -> -128. CUDA: scale = 3 * fp32(1 / 127.5)
  // = 3 * 0x3C008081 = 0x3CC0C0C2, 1 / scale = 0x4229FFFF, -3 * that =
  // -127.499985 -> -127. The GPU machine (torch 2.11.0+cu130, H200) gave
  // scale bits 0x3cc0c0c1 / 0x3cc0c0c2 and codes [127, -128, 42] /
  // [127, -127, 42] for the torchao formula typed in torch.
  const Quantized cpu = PerTensor(kAoSymInt8, {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(F32Bits(cpu.params.decode), 0x3CC0C0C1u);
  EXPECT_EQ(cpu.codes, (Codes{0x7F, 0x80, 42}));
  const Quantized cuda = PerTensor(kAoSymCudaInt8, {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(F32Bits(cuda.params.decode), 0x3CC0C0C2u);
  EXPECT_EQ(F32Bits(cuda.params.factor), 0x4229FFFFu);
  EXPECT_EQ(cuda.codes, (Codes{0x7F, 0x81, 42}));
}

TEST(Row12RoundingTest, HalfEvenVersusHalfAway) {
  // amax 127 -> common scale 127 / 127 = 1: the ties stay ties (docs/formats-reference.md §8.1:
  // torch.round half-even, C roundf half-away).
  const Values x{127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f};
  EXPECT_EQ(PerTensor(kCommonInt8, x).codes, (Codes{0x7F, 0x02, 0xFE, 0x00, 0x00, 0x02}));
  EXPECT_EQ(PerTensor(kCommonAwayInt8, x).codes, (Codes{0x7F, 0x03, 0xFD, 0x01, 0xFF, 0x02}));
}

TEST(Row12GptqTest, SymmetricClipsPlusAmaxToPlusSeven) {
  // [GPTQ] sym: xmin = -7.5 < 0 -> xmin = -xmax; scale = (7.5 + 7.5) / 15 =
  // 1; zero = 8. 7.5 -> round 8 + 8 = 16 -> clamp 15 (= +7); -7.5 -> -8
  // + 8 = 0; 1 -> 9; 0 -> 8. Dequant scale * (q - zero) = 7, -8, 1, 0.
  const Quantized q = PerTensor(kGptqSymUint4, {7.5f, -7.5f, 1.0f, 0.0f});
  EXPECT_EQ(q.params.decode, 1.0f);
  EXPECT_EQ(q.params.zero_point, 8);
  EXPECT_EQ(q.codes, (Codes{15, 0, 9, 8}));
  EXPECT_EQ(q.back, (Values{7.0f, -8.0f, 1.0f, 0.0f}));
}

TEST(Row12GptqTest, SymmetricRowWithoutNegativesKeepsXminZero) {
  // xmin = 0 is not < 0, so it stays 0: scale = (3 - 0) / 15 = 0x3E4CCCCD;
  // 3 / scale = 15 -> 23 -> 15; 1.5 / scale = 7.5 -> 8 -> 16 -> 15. The row's
  // maximum comes back as 7 * scale = 0x3FB33333 (1.4), not 3.
  const Quantized q = PerTensor(kGptqSymUint4, {3.0f, 1.5f, 0.0f});
  EXPECT_EQ(F32Bits(q.params.decode), 0x3E4CCCCDu);
  EXPECT_EQ(q.codes, (Codes{15, 15, 8}));
  EXPECT_EQ(F32Bits(q.back[0]), 0x3FB33333u);
}

TEST(Row12GptqTest, AsymmetricZeroPointAndAllZeroRows) {
  // xmin = -3, xmax = 12: scale = 15 / 15 = 1, zero = round(3 / 1) = 3.
  const Quantized q = PerTensor(kGptqAsymUint4, {-3.0f, 12.0f, 0.5f, 1.5f});
  EXPECT_EQ(q.params.zero_point, 3);
  EXPECT_EQ(q.codes, (Codes{0, 15, 3, 5}));
  EXPECT_EQ(q.back, (Values{-3.0f, 12.0f, 0.0f, 2.0f}));
  // All-zero row: xmin = -1, xmax = 1. sym: scale 2/15, zero 8 -> code 8.
  // asym: scale = fp32(2 / 15) = 0x3E088889, 1 / scale = 7.4999995 -> zero 7.
  const Quantized sym0 = PerTensor(kGptqSymUint4, {0.0f, 0.0f});
  EXPECT_EQ(F32Bits(sym0.params.decode), 0x3E088889u);
  EXPECT_EQ(sym0.codes, (Codes{8, 8}));
  const Quantized asym0 = PerTensor(kGptqAsymUint4, {0.0f, -0.0f});
  EXPECT_EQ(asym0.params.zero_point, 7);
  EXPECT_EQ(asym0.codes, (Codes{7, 7}));
  EXPECT_EQ(asym0.back, (Values{0.0f, 0.0f}));
}

TEST(Row12AoTest, AsymmetricZeroPoint) {
  // min -1, max 14 -> uint4 scale = (14 - -1) / 15 = 1; zp = 0 - round(-1) = 1.
  const Quantized q = PerTensor(kAoAsymUint4, {-1.0f, 0.0f, 2.0f, 14.0f, 0.5f});
  EXPECT_EQ(q.params.zero_point, 1);
  EXPECT_EQ(q.codes, (Codes{0, 1, 3, 15, 1}));
  EXPECT_EQ(q.back, (Values{-1.0f, 0.0f, 2.0f, 14.0f, 0.0f}));
}

TEST(Row12ScaleFloorTest, AllZeroGroupsPerRecipe) {
  // [AO]: scale = 0 -> clamp(min = eps = 2^-23) = 0x34000000, codes 0;
  // asymmetric int8 zp = -128 - round(0) = -128, so 0.0 -> code 0x80.
  const Quantized sym = PerTensor(kAoSymInt8, {0.0f, 0.0f});
  EXPECT_EQ(F32Bits(sym.params.decode), 0x34000000u);
  EXPECT_EQ(sym.codes, (Codes{0, 0}));
  const Quantized asym = PerTensor(kAoAsymInt8, {0.0f, 0.0f});
  EXPECT_EQ(F32Bits(asym.params.decode), 0x34000000u);
  EXPECT_EQ(asym.params.zero_point, -128);
  EXPECT_EQ(asym.codes, (Codes{0x80, 0x80}));
  EXPECT_EQ(asym.back, (Values{0.0f, 0.0f}));
  // [TE]: amax 0 -> scale 1, scale_inv 1. common: scale 0 -> 1.
  const Quantized te = PerTensor(kTeFp8E4m3, {0.0f, -0.0f});
  EXPECT_EQ(te.params.factor, 1.0f);
  EXPECT_EQ(te.params.decode, 1.0f);
  EXPECT_EQ(te.codes, (Codes{0x00, 0x80}));
  EXPECT_EQ(PerTensor(kCommonInt8, {0.0f}).params.decode, 1.0f);
}

TEST(Fact7TeFp8Test, CurrentScalingPerTensor) {
  // amax 2: scale = 448 / 2 = 224; y = 224, -448, 112, 0 -> E4M3 0x76, 0xFE,
  // 0x6E, 0x00; scale_inv = fp32(1 / 224) = 0x3B924925.
  const Quantized q = PerTensor(kTeFp8E4m3, {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(q.params.factor, 224.0f);
  EXPECT_EQ(F32Bits(q.params.decode), 0x3B924925u);
  EXPECT_EQ(q.codes, (Codes{0x76, 0xFE, 0x6E, 0x00}));
  // force_pow_2_scales: 224 = 0x43600000 & 0xFF800000 = 0x43000000 = 128;
  // y = 128, -256, 64 -> 0x70, 0xF8, 0x68; scale_inv 2^-7.
  const Quantized p = PerTensor(kTeFp8E4m3Pow2, {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(p.params.factor, 128.0f);
  EXPECT_EQ(F32Bits(p.params.decode), 0x3C000000u);
  EXPECT_EQ(p.codes, (Codes{0x70, 0xF8, 0x68, 0x00}));
  EXPECT_EQ(p.back, (Values{1.0f, -2.0f, 0.5f, 0.0f}));
}

TEST(Fact7TeFp8Test, GuardsForInfNanAndTinyAmax) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Inf amax -> scale 1; Inf -> satfinite 448 (0x7E); 1 -> 0x38.
  const Quantized i = PerTensor(kTeFp8E4m3, {inf, 1.0f});
  EXPECT_EQ(i.params.factor, 1.0f);
  EXPECT_EQ(i.codes, (Codes{0x7E, 0x38}));
  // NaN is ignored by the fmaxf amax (amax 2 -> scale 224) and becomes 0x7F.
  const Quantized n = PerTensor(kTeFp8E4m3, {-nan, 2.0f});
  EXPECT_EQ(n.params.factor, 224.0f);
  EXPECT_EQ(n.codes, (Codes{0x7F, 0x7E}));
  // amax 2^-149: 448 / amax = Inf -> FLT_MAX; scale_inv = fp32(1 / FLT_MAX)
  // = 0x00200000; with pow2 FLT_MAX -> 2^127.
  EXPECT_EQ(F32Bits(PerTensor(kTeFp8E4m3, {F32FromBits(1)}).params.factor), 0x7F7FFFFFu);
  EXPECT_EQ(F32Bits(PerTensor(kTeFp8E4m3, {F32FromBits(1)}).params.decode), 0x00200000u);
  EXPECT_EQ(F32Bits(PerTensor(kTeFp8E4m3Pow2, {F32FromBits(1)}).params.factor), 0x7F000000u);
  // E5M2: max_fp8 57344; amax 57344 -> scale 1 -> 57344 = 0x7B.
  EXPECT_EQ(PerTensor(kTeFp8E5m2, {57344.0f}).codes, (Codes{0x7B}));
}

TEST(StaticScaleTest, CalibratedRangeClampsOutliers) {
  // Static per tensor: calibrated range [-1, 1]. common: scale = fp32(1/127)
  // = 0x3C010204, 2 / scale = 254 -> clamp 127. TE: scale 448, 2 * 448 =
  // 896 -> satfinite 448 (0x7E).
  const float x[] = {2.0f, -2.0f};
  const Layout per_tensor{Geometry::kPerTensor, 0, 0};
  std::uint8_t codes[2];
  const BlockScale common = ChooseScale(kCommonInt8, StatsOfRange(-1.0f, 1.0f));
  EXPECT_EQ(F32Bits(common.decode), 0x3C010204u);
  ASSERT_EQ(QuantizeWithScales(kCommonInt8, per_tensor, x, 1, 2, [&](long) { return common; }, codes),
            TensorStatus::kOk);
  EXPECT_EQ(codes[0], 0x7F);
  EXPECT_EQ(codes[1], 0x81);
  const BlockScale te = ChooseScale(kTeFp8E4m3, StatsOfRange(-1.0f, 1.0f));
  EXPECT_EQ(te.factor, 448.0f);
  ASSERT_EQ(QuantizeWithScales(kTeFp8E4m3, per_tensor, x, 1, 2, [&](long) { return te; }, codes), TensorStatus::kOk);
  EXPECT_EQ(codes[0], 0x7E);
  EXPECT_EQ(codes[1], 0xFE);
}

// The model is constexpr: the row-12 AO example evaluated at compile time.
constexpr const Recipe& kAoSymInt8Constant = *Lookup("int8", "ao-sym");
constexpr const Recipe& kGptqSymUint4Constant = *Lookup("uint4", "gptq-sym");
static_assert(ChooseScale(kAoSymInt8Constant, StatsOfRange(-127.5f, 127.5f)).decode == 1.0f);
static_assert(EncodeElement(kAoSymInt8Constant, ChooseScale(kAoSymInt8Constant, StatsOfRange(-127.5f, 127.5f)),
                            -127.5f) == 0x80);
static_assert(EncodeElement(kGptqSymUint4Constant, ChooseScale(kGptqSymUint4Constant, StatsOfRange(-7.5f, 7.5f)),
                            7.5f) == 15);

// FORMAT:PROFILE through the one grammar names the catalog entry; a profile
// the format lacks, or no profile, names no scaled recipe.
const Recipe* ParsedRecipe(std::string_view text) {
  Target t;
  std::string error;
  if (!ParseTarget(text, &t, &error) || t.kind != Target::Kind::kRecipe) return nullptr;
  return t.recipe;
}

TEST(RecipeNameTest, FormatColonProfile) {
  EXPECT_EQ(ParsedRecipe("int8:ao-sym"), &kAoSymInt8);
  EXPECT_EQ(ParsedRecipe("uint4:gptq-sym"), &kGptqSymUint4);
  EXPECT_EQ(ParsedRecipe("e4m3:te-pow2"), &kTeFp8E4m3Pow2);
  EXPECT_EQ(ParsedRecipe("e5m2:te"), &kTeFp8E5m2);
  EXPECT_EQ(ParsedRecipe("int8:gptq-sym"), nullptr);
  EXPECT_EQ(ParsedRecipe("int8"), nullptr);
}

}  // namespace
}  // namespace lowbit::recipe
