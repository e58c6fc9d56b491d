// MX block formats in the model: worked examples derived by hand from the spec
// text and the profiled sources (docs/formats-reference.md §5), and one named test per MX
// row of docs/formats-reference.md §9 (rows 8, 9, 10) and per profile. Expected codes are
// written out from the definitions, never produced by running the model. The
// recipes are the catalog's (recipe::FindRecipe); a block goes through the
// model's steps (recipe/steps.h), whole vectors through recipe/tensor.h.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
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

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using ::lowbit::testing::CatalogRecipe;

struct Quantized {
  std::uint8_t scale;
  std::vector<std::uint8_t> codes;
};

// One block (x.size() <= 32): amax, the E8M0 scale, one code per element.
Quantized QuantizeOne(const Recipe& r, std::vector<float> x) {
  const BlockScale s = ChooseScale(r, StatsOf(r, x.data(), static_cast<long>(x.size())));
  Quantized q{s.code, {}};
  for (float v : x) q.codes.push_back(EncodeElement(r, s, v));
  return q;
}

// Element codes -> values under one stored E8M0 scale byte.
std::vector<float> DequantizeOne(const Recipe& r, std::uint8_t scale, const std::vector<std::uint8_t>& codes) {
  const BlockScale s = StoredScale(r, scale, 0.0f, 0);
  std::vector<float> out;
  for (std::uint8_t c : codes) out.push_back(DecodeElement(r, s, {}, c));
  return out;
}

TEST(MxRecipeSpecTest, ReciprocalConstantsAreTheFp32RoundingsOfOneOverMax) {
  // docs/formats-reference.md §5.3: fp32(1/448) = 0x3B124925, fp32(1/6) = 0x3E2AAAAB.
  EXPECT_EQ(F32Bits(MaxNormReciprocal(CatalogRecipe("mxfp8_e4m3", "ocp"))), 0x3B124925u);
  EXPECT_EQ(F32Bits(MaxNormReciprocal(CatalogRecipe("mxfp4", "ocp"))), 0x3E2AAAABu);
}

TEST(MxRecipeSpecTest, SpecTableOneBlockSizesAndScales) {
  // OCP MX §5.2 Table 1: k = 32, E8M0 scale; NVFP4: 16, UE4M3 (docs/formats-reference.md §6).
  int mx = 0;
  for (const Recipe& r : kAllRecipes) {
    if (r.family() != Family::kMx) continue;
    ++mx;
    EXPECT_EQ(r.layout.geometry, Geometry::kBlock1d) << RecipeName(r);
    EXPECT_EQ(r.layout.size, 32) << RecipeName(r);
    EXPECT_EQ(std::string_view(r.scale_format.name), "e8m0") << RecipeName(r);
    EXPECT_EQ(r.tensor_scale, TensorScaleRule::kNone) << RecipeName(r);
  }
  EXPECT_EQ(mx, 10 * 5 + 3);  // 10 profiles over 5 float formats, 3 over MXINT8
  for (std::string_view profile : {"te", "ao", "modelopt"}) {
    const Recipe& r = CatalogRecipe("nvfp4", profile);
    EXPECT_EQ(r.layout.geometry, Geometry::kBlock1d) << profile;
    EXPECT_EQ(r.layout.size, 16) << profile;
    EXPECT_EQ(std::string_view(r.scale_format.name), "ue4m3") << profile;
    EXPECT_NE(r.tensor_scale, TensorScaleRule::kNone) << profile;
  }
}

TEST(MxRecipeSpecTest, E8m0CodeZeroDecodesToTheFp32Subnormal2PowMinus127) {
  // docs/formats-reference.md §1: E8M0 0x00 -> 2^-127 = FP32 0x00400000; 0xFF is NaN.
  EXPECT_EQ(F32Bits(StoredScale(CatalogRecipe("mxfp4", "ocp"), 0x00, 0.0f, 0).decode), 0x00400000u);
  EXPECT_TRUE(std::isnan(StoredScale(CatalogRecipe("mxfp4", "ocp"), 0xFF, 0.0f, 0).decode));
  EXPECT_EQ(F32Bits(E8m0ReciprocalF32(254)), 0x00400000u);  // TE exp2f_rcp special case
  EXPECT_EQ(E8m0ReciprocalF32(0), std::ldexp(1.0f, 127));
}

// The acceptance example: MXFP4 amax = 6 * 2^k * 1.01. OCP floor picks
// X = 2^k (6.06 * 2^k has exponent k + 2, minus emax 2) and clamps the largest
// element to 6; RCEIL picks 2^(k+1) (ceil(log2(1.01 * 2^k)) = k + 1) and the
// largest element becomes 3.03 -> 3.
TEST(Row8ScaleRuleTest, Mxfp4FloorClipsWhereRceilDoesNot) {
  for (int k : {-3, 0, 5}) {
    const float amax = std::ldexp(6.0f * 1.01f, k);
    const Quantized floor = QuantizeOne(CatalogRecipe("mxfp4", "ocp"), {amax, std::ldexp(1.0f, k)});
    EXPECT_EQ(floor.scale, 127 + k);
    EXPECT_EQ(floor.codes[0], 0x7);  // clamped to 6.0
    EXPECT_EQ(floor.codes[1], 0x2);  // 1.0
    const Quantized rceil = QuantizeOne(CatalogRecipe("mxfp4", "te"), {amax, std::ldexp(1.0f, k)});
    EXPECT_EQ(rceil.scale, 128 + k);
    EXPECT_EQ(rceil.codes[0], 0x5);  // 3.03 -> 3.0
    EXPECT_EQ(rceil.codes[1], 0x1);  // 0.5
  }
}

TEST(Row8ScaleRuleTest, Mxfp8E4m3FloorClampsTo448RceilRoundsTo256) {
  // amax 500: floor e = 8 - 8 = 0, 500 clamps to 448 (0x7E); RCEIL
  // 500/448 -> 2, e = 1, 250 rounds to 256 (0x78).
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ocp"), {500.0f}).scale, 127);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ocp"), {500.0f}).codes[0], 0x7E);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {500.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {500.0f}).codes[0], 0x78);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-rceil"), {500.0f}).scale, 128);
}

TEST(Row8ScaleRuleTest, AoCeilAddsOneWhenTheMantissaIsNonZero) {
  // [AO] CEIL: exponent_field + (mantissa != 0) - emax. 256 = 2^8 -> 0;
  // 257 -> 1.
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-ceil"), {256.0f}).scale, 127);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-ceil"), {257.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-floor"), {257.0f}).scale, 127);
}

TEST(Row8ScaleRuleTest, AoEvenRoundsAmaxToTheElementMantissaFirst) {
  // [AO] EVEN, E4M3 (3 mantissa bits): 496 = 1.9375 * 2^8 rounds half-up to
  // 2^9 -> e = 1; 480 = 1.875 * 2^8 stays -> e = 0.
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-even"), {496.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-even"), {480.0f}).scale, 127);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-floor"), {496.0f}).scale, 127);
}

TEST(Row8ScaleRuleTest, AmaxJustBelowAPowerOfTwoUsesTheLowerExponent) {
  // 2^k (1 - 2^-24) has exponent k - 1; a float log2 would round to k.
  const float amax = std::ldexp(1.0f - std::ldexp(1.0f, -24), 3);  // 0x40FFFFFF
  EXPECT_EQ(F32Bits(amax), 0x40FFFFFFu);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "ocp"), {amax}).scale, 127 + 2 - 2);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "ocp"), {amax}).codes[0], 0x7);  // 7.99.. clamps to 6
}

TEST(Row8ScaleRuleTest, RceilProductRoundedIntoTheFp32SubnormalsLandsOn2PowMinus127) {
  // docs/formats-reference.md §5.3: amax * fp32(1/448) is an FP32 multiply. For amax =
  // 0x04600001 (one ulp above 448 * 2^-127) the exact quotient is above
  // 2^-127 (ceil -> 2^-126, code 1), but the FP32 product is
  // (2^22 + 0.47) * 2^-149, which rounds to 2^-127 exactly: code 0.
  const float amax = F32FromBits(0x04600001u);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {amax}).scale, 0x00);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-rceil"), {amax}).scale, 0x00);
}

TEST(ZeroBlockTest, EveryRuleGivesScaleCodeZeroAndZeroElements) {
  int profiles = 0;
  for (const Recipe& r : kAllRecipes) {
    if (std::string_view(r.name) != "mxfp4") continue;
    ++profiles;
    const Quantized q = QuantizeOne(r, std::vector<float>(32, 0.0f));
    EXPECT_EQ(q.scale, 0x00) << r.profile;
    for (std::uint8_t c : q.codes) EXPECT_EQ(c, 0x0) << r.profile;
  }
  EXPECT_EQ(profiles, 10);
}

TEST(ZeroBlockTest, MsxMxint8UsesFp32MinNormalForAZeroBlock) {
  // docs/formats-reference.md §5.2: zero block -> -126 - emax; MXINT8 emax 0 -> -126 =
  // code 0x01 (the floor rule clamps at -127 = 0x00 for the others).
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxint8", "msx"), std::vector<float>(32, 0.0f)).scale, 0x01);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxint8", "ocp"), std::vector<float>(32, 0.0f)).scale, 0x00);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "msx"), std::vector<float>(32, 0.0f)).scale, 0x00);
}

// Row 9: the spec requires RNE; microxcaling's default is half-away.
TEST(Row9ElementRoundingTest, MsxHalfAwayVersusEvenOnE2m1Midpoints) {
  // amax 7 -> X = 1. Midpoints from docs/formats-reference.md §4.5: 0.25 0.75 1.25 1.75
  // 2.5 5; RNE: 0, 1, 1, 2, 2, 4; half-away: 0.5, 1, 1.5, 2, 3, 6.
  const std::vector<float> x = {7.0f, 2.5f, 0.25f, 5.0f, 1.25f, -2.5f, 0.75f, 1.75f};
  const Quantized away = QuantizeOne(CatalogRecipe("mxfp4", "msx"), x);
  const Quantized even = QuantizeOne(CatalogRecipe("mxfp4", "msx-even"), x);
  EXPECT_EQ(away.scale, 127);
  EXPECT_EQ(even.scale, 127);
  EXPECT_EQ(away.codes, (std::vector<std::uint8_t>{0x7, 0x5, 0x1, 0x7, 0x3, 0xD, 0x2, 0x4}));
  EXPECT_EQ(even.codes, (std::vector<std::uint8_t>{0x7, 0x4, 0x0, 0x6, 0x2, 0xC, 0x2, 0x4}));
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "ocp"), x).codes, even.codes);
}

TEST(Row9ElementRoundingTest, MsxMxint8HalfAwayAndClampTo127) {
  // X = 1 (amax 1.0): codes = round(x * 64); 2^-7 * 64 = 0.5 -> 1 (away) or
  // 0 (even). docs/formats-reference.md §5.2: codes are clamped to +-127, -128 never produced.
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxint8", "msx"), {1.0f, -0.5f, 0.0078125f}).codes,
            (std::vector<std::uint8_t>{64, 0xE0, 1}));
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxint8", "msx-even"), {1.0f, -0.5f, 0.0078125f}).codes,
            (std::vector<std::uint8_t>{64, 0xE0, 0}));
  // amax 1.999 -> e = 0; -1.999 * 64 = -127.9 -> -128 -> clamp -127 (0x81).
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxint8", "ocp"), {-1.999f, 1.99f}).codes, (std::vector<std::uint8_t>{0x81, 0x7F}));
}

// Row 10: NaN inside a block.
TEST(Row10NanInBlockTest, TeIgnoresNanForTheScaleAndEncodesItAsE4m3Nan) {
  // amax = 2 (NaN skipped by fmaxf); 2 * fp32(1/448) rounds up to 2^-7 ->
  // code 120; 2 * 2^7 = 256 -> 0x78; -1 * 2^7 = -128 -> 0xF0; NaN -> 0x7F.
  const Quantized q = QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {kNan, 2.0f, -1.0f});
  EXPECT_EQ(q.scale, 120);
  EXPECT_EQ(q.codes, (std::vector<std::uint8_t>{0x7F, 0x78, 0xF0}));
}

TEST(Row10NanInBlockTest, TeMxfp4NanElementBecomesPlusSix) {
  // amax 2: 2 * fp32(1/6) -> 0.5 -> e = -1 (code 126); 2 / 0.5 = 4 -> 0x6;
  // NaN -> +6 (0x7) through the satfinite conversion (docs/formats-reference.md §5.3).
  const Quantized q = QuantizeOne(CatalogRecipe("mxfp4", "te"), {kNan, 2.0f});
  EXPECT_EQ(q.scale, 126);
  EXPECT_EQ(q.codes, (std::vector<std::uint8_t>{0x7, 0x6}));
}

TEST(Row10NanInBlockTest, TorchaoAndMicroxcalingPropagateNanToTheScale) {
  for (std::string_view profile : {"ocp", "msx", "ao-floor", "ao-ceil", "ao-even", "ao-rceil"}) {
    const Recipe& r = CatalogRecipe("mxfp8_e4m3", profile);
    const Quantized q = QuantizeOne(r, {kNan, 2.0f, -1.0f});
    EXPECT_EQ(q.scale, 0xFF) << profile;
    for (float v : DequantizeOne(r, q.scale, q.codes)) EXPECT_TRUE(std::isnan(v)) << profile;
  }
}

TEST(Row10NanInBlockTest, InfAmaxTeSaturatesTheScaleTorchaoGivesNan) {
  // docs/formats-reference.md §5.3: TE float_to_e8m0(Inf) = 0xFE (2^127); torchao 0xFF. TE's
  // elements: Inf * 2^-127 = Inf -> 448 (0x7E); 1 * 2^-127 -> 0.
  const Quantized te = QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {kInf, 1.0f});
  EXPECT_EQ(te.scale, 0xFE);
  EXPECT_EQ(te.codes, (std::vector<std::uint8_t>{0x7E, 0x00}));
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-rceil"), {kInf, 1.0f}).scale, 0xFF);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "ao-floor"), {kInf, 1.0f}).scale, 0xFF);
}

TEST(DequantizeTest, ElementTimesPowerOfTwo) {
  // MXFP4 code 0x5 (3.0) with scale 128 (2^1) -> 6; MXINT8 code 64 (1.0)
  // with scale 126 (2^-1) -> 0.5; E8M0 code 0 keeps its subnormal 2^-127.
  const std::vector<float> fp4 = DequantizeOne(CatalogRecipe("mxfp4", "ocp"), 128, {0x5, 0xD});
  EXPECT_EQ(fp4[0], 6.0f);
  EXPECT_EQ(fp4[1], -6.0f);
  EXPECT_EQ(DequantizeOne(CatalogRecipe("mxint8", "ocp"), 126, {64})[0], 0.5f);
  EXPECT_EQ(F32Bits(DequantizeOne(CatalogRecipe("mxfp8_e4m3", "ocp"), 0, {0x38})[0]), 0x00400000u);
}

TEST(TensorTest, ASizeThatIsNotAMultipleOfTheBlockEndsInAShortBlock) {
  // 33 elements: block 0 has amax 1 (floor e = -2, code 125), block 1 is the
  // single element 4 (e = 0, code 127).
  const Recipe& r = CatalogRecipe("mxfp4", "ocp");
  std::vector<float> x(33, 1.0f);
  x[32] = 4.0f;
  GroupGrid grid;
  ASSERT_EQ(MakeGroupGrid(r, r.layout, 1, 33, &grid), TensorStatus::kOk);
  const BufferSizes sizes = SizesOf(r, grid);
  EXPECT_EQ(sizes.scale_codes, 2);
  EXPECT_EQ(sizes.code_bytes, 17);  // two E2M1 codes per byte (docs/formats-reference.md §4.5)
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::uint8_t scales[2];
  QuantizedTensor q;
  q.codes = codes.data();
  q.scale_codes = scales;
  ASSERT_EQ(QuantizeTensor(r, r.layout, x.data(), 1, 33, q), TensorStatus::kOk);
  EXPECT_EQ(scales[0], 125);
  EXPECT_EQ(scales[1], 127);
  EXPECT_EQ(LoadCode(r.packing, codes.data(), 0), 0x6);   // 1 / 2^-2 = 4
  EXPECT_EQ(LoadCode(r.packing, codes.data(), 32), 0x6);  // 4 / 1 = 4
}

// kMxNearest (E8M0 round-to-nearest of amax * fp32(1/max_elem), ties up,
// docs/formats-reference.md §4.7). MXFP8 E4M3: amax 600 -> 600/448 = 1.34 -> 2^0 (RCEIL
// would pick 2^1), so 600 clamps to 448; amax 700 -> 1.5625 >= 1.5 -> 2^1.
TEST(NearestScaleRuleTest, PicksThePowerOfTwoNearestToAmaxOverMax) {
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "nearest"), {600.0f}).scale, 127);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "nearest"), {600.0f}).codes[0], 0x7E);  // clamped to 448
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "te"), {600.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "nearest"), {700.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp8_e4m3", "nearest"), {700.0f}).codes[0], 0x7B);  // 350 -> 352 = 1.375 * 2^8
}

TEST(NearestScaleRuleTest, TheTieOneAndAHalfGoesUp) {
  // MXFP4: amax 9 -> 9 * fp32(1/6) = 1.5 (exactly: fp32(1/6) * 9 rounds to
  // 1.5f) -> 2^1; amax 8.9 -> 1.48 -> 2^0.
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "nearest"), {9.0f}).scale, 128);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "nearest"), {8.9f}).scale, 127);
  EXPECT_EQ(QuantizeOne(CatalogRecipe("mxfp4", "nearest"), {8.9f}).codes[0], 0x7);  // 8.9 clamps to 6
}

}  // namespace
}  // namespace lowbit::recipe
