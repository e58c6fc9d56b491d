// The one recipe shape (formats/.../recipe/): the catalog holds every named
// recipe exactly once, with the constants it derives equal to the spec
// values; the one name grammar round-trips every name and answers the
// spellings users type; and the whole-tensor model (recipe/tensor.h) refuses
// shapes that do not tile.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "test_level.h"

namespace lowbit::recipe {
namespace {

TEST(RecipeCatalogTest, EveryNameIsListedOnce) {
  std::set<std::string> names;
  for (const Recipe& r : kAllRecipes) EXPECT_TRUE(names.insert(RecipeName(r)).second) << RecipeName(r);
  // 10 MX profiles x 5 float MX formats + 3 (ocp, msx, msx-even) x MXINT8, 5
  // NVFP4, 18 scaled + 9 (vLLM FP8 five ways, INT8 amax-clamp, GPTQ / AWQ
  // with FP16 scales three ways; docs/profiles.md).
  EXPECT_EQ(names.size(), 10u * 5 + 3 + 5 + 18 + 9);
}

TEST(RecipeCatalogTest, DerivedConstantsAreTheSpecValues) {
  // Typed from the specifications, not from the code: E4M3 max 448, E5M2
  // 57344, E2M1 6 (OCP 8-bit FP spec Table 1; OCP MX §5.3.3), NVFP4 tensor
  // range 448 * 6 = 2688 (docs/formats-reference.md §6.1), MXINT8 max 127/64.
  EXPECT_EQ(MaxFiniteF32(kE4m3), 448.0f);
  EXPECT_EQ(MaxFiniteF32(kE5m2), 57344.0f);
  EXPECT_EQ(MaxFiniteF32(kE2m1), 6.0f);
  EXPECT_EQ(MaxFiniteF32(kUe4m3), 448.0f);
  EXPECT_EQ(TensorRange(*FindRecipe("nvfp4", "te")), 2688.0f);
  EXPECT_EQ(ElementMaxF32(*FindRecipe("mxint8", "ocp")), 127.0f / 64.0f);
  // fp32(1/448) = 0x3B124925, fp32(1/6) = 0x3E2AAAAB (§5.3).
  EXPECT_EQ(F32Bits(MaxNormReciprocal(*FindRecipe("mxfp8_e4m3", "te"))), 0x3B124925u);
  EXPECT_EQ(F32Bits(MaxNormReciprocal(*FindRecipe("mxfp4", "te"))), 0x3E2AAAABu);
  // emax_elem, OCP MX §6.3: E4M3 8, E5M2 15, E3M2 4, E2M3 2, E2M1 2, INT8 0.
  EXPECT_EQ(FindRecipe("mxfp8_e4m3", "ocp")->element_emax, 8);
  EXPECT_EQ(FindRecipe("mxfp8_e5m2", "ocp")->element_emax, 15);
  EXPECT_EQ(FindRecipe("mxfp6_e3m2", "ocp")->element_emax, 4);
  EXPECT_EQ(FindRecipe("mxfp6_e2m3", "ocp")->element_emax, 2);
  EXPECT_EQ(FindRecipe("mxfp4", "ocp")->element_emax, 2);
  EXPECT_EQ(FindRecipe("mxint8", "ocp")->element_emax, 0);
}

// The UE4M3 block scale of NVFP4 is encoded as UE4M3 (7 bits, unsigned), and
// the implementations encode an E4M3 byte; for the non-negative and NaN
// values a block-scale rule hands over the two are the same byte. Swept over
// every FP32 bit pattern with the sign clear, strided at the ci level.
TEST(RecipeCatalogTest, Ue4m3ScaleEncodingEqualsE4m3OnNonNegativeInputs) {
  EncodeOptions te;  // the two scale policies of steps.h
  te.overflow = Overflow::kSaturate;
  te.nan_sign = NanSign::kPositive;
  te.nan_payload = NanPayload::kAllOnes;
  EncodeOptions torch = te;
  torch.overflow = Overflow::kFormatDefault;
  const std::uint32_t stride =
      lowbit::testing::CurrentTestLevel() == lowbit::testing::TestLevel::kFull ? 1 : 97;
  std::uint64_t checked = 0;
  for (std::uint64_t b = 0; b <= 0x7FFFFFFFu; b += stride) {
    const float x = F32FromBits(static_cast<std::uint32_t>(b));
    for (const EncodeOptions& o : {te, torch}) {
      const std::uint64_t e4m3 = EncodeF32(kE4m3, x, o).code;
      const std::uint64_t ue4m3 = EncodeF32(kUe4m3, x, o).code;
      if (e4m3 != ue4m3) {
        FAIL() << std::hex << "input 0x" << b << ": E4M3 0x" << e4m3 << ", UE4M3 0x" << ue4m3;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0x7FFFFFFFu / 97);
}

// ---- the name grammar ------------------------------------------------------

std::string Canonical(const std::string& text) {
  Target t;
  std::string error;
  if (!ParseTarget(text, &t, &error)) return "error: " + error;
  return CanonicalName(t);
}

TEST(RecipeNamesTest, EveryCatalogNameRoundTrips) {
  for (const Recipe& r : kAllRecipes) {
    Target t;
    std::string error;
    ASSERT_TRUE(ParseTarget(RecipeName(r), &t, &error)) << RecipeName(r) << ": " << error;
    EXPECT_EQ(t.recipe, &r);
    EXPECT_EQ(CanonicalName(t), RecipeName(r));
  }
  for (FormatId id : kAllFormats) EXPECT_EQ(Canonical(Spec(id).name), Spec(id).name);
}

TEST(RecipeNamesTest, SpellingsUsersType) {
  EXPECT_EQ(Canonical("mxfp8"), "mxfp8_e4m3:ocp");
  EXPECT_EQ(Canonical("mxfp8:te"), "mxfp8_e4m3:te");
  EXPECT_EQ(Canonical("mxfp4:ao"), "mxfp4:ao-floor");
  EXPECT_EQ(Canonical("mxfp4:torchao"), "mxfp4:ao-floor");
  EXPECT_EQ(Canonical("nvfp4"), "nvfp4:te");
  EXPECT_EQ(Canonical("nvfp4:torchao"), "nvfp4:ao");
  EXPECT_EQ(Canonical("e4m3:cuda"), "e4m3:nvidia");
  EXPECT_EQ(Canonical("e4m3:torch"), "e4m3:pytorch-cpu");
  EXPECT_EQ(Canonical("float8_e4m3fn:ml_dtypes"), "e4m3:ml_dtypes");
  EXPECT_EQ(Canonical("int4:ao-sym/g128"), "int4:ao-sym/g128");
  EXPECT_EQ(Canonical("int4:ao-sym/group:128"), "int4:ao-sym/g128");
  EXPECT_EQ(Canonical("int8:ao-sym/channel"), "int8:ao-sym/row");
  EXPECT_EQ(Canonical("int8:ao-sym/token"), "int8:ao-sym/row");
  EXPECT_EQ(Canonical("int8:ao-sym/tensor"), "int8:ao-sym");
  EXPECT_EQ(Canonical("e4m3:te/block:128x128"), "e4m3:te/tile:128x128");
}

TEST(RecipeNamesTest, MistakesGetAMessageThatNamesThem) {
  EXPECT_EQ(Canonical("nvfp5"), "error: unknown format 'nvfp5'; did you mean 'nvfp4'?");
  EXPECT_NE(Canonical("int4:ao-sm").find("did you mean 'ao-sym'?"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4:ao-flor").find("did you mean 'ao-floor'?"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4/g64").find("fixed block of 32"), std::string::npos);
  EXPECT_NE(Canonical("e4m3/g128").find("a layout applies to recipes"), std::string::npos);
  // A group size that does not fit is an error, never a wrapped number.
  EXPECT_NE(Canonical("int4:ao-sym/group:4294967297").find("not a whole number"), std::string::npos);
  EXPECT_NE(Canonical("int4:ao-sym/g0").find("not a whole number"), std::string::npos);
  EXPECT_NE(Canonical("int4:ao-sym/diagonal").find("unknown layout"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4:").find("empty profile"), std::string::npos);
}

// ---- whole tensors ----------------------------------------------------------

TEST(RecipeTensorTest, ShapesThatDoNotTileAreErrorsNotPadding) {
  const Recipe& int4 = *FindRecipe("int4", "ao-sym");
  GroupGrid g;
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kGroup, 128, 0}, 2, 100, &g), TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kTile2d, 4, 3}, 4, 8, &g), TensorStatus::kRowsNotMultipleOfTile);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kGroup, 0, 0}, 4, 8, &g), TensorStatus::kBadGroup);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kPerRow, 0, 0}, 0, 8, &g), TensorStatus::kEmpty);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kBlock1d, 16, 0}, 4, 8, &g), TensorStatus::kLayoutNotForRecipe);
  const Recipe& mxfp4 = *FindRecipe("mxfp4", "ocp");
  EXPECT_EQ(MakeGroupGrid(mxfp4, {Geometry::kPerRow, 0, 0}, 4, 8, &g), TensorStatus::kLayoutNotForRecipe);
  EXPECT_EQ(MakeGroupGrid(mxfp4, {Geometry::kBlock1d, 32, 0}, 3, 7, &g), TensorStatus::kOk);
  EXPECT_EQ(g.Count(), 1);  // 21 elements, one short block
  const long huge = 1L << 40;
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kPerRow, 0, 0}, huge, huge, &g), TensorStatus::kSizeOverflow);
}

}  // namespace
}  // namespace lowbit::recipe
