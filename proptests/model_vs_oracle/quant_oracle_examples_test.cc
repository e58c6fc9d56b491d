// The hand-worked docs/formats-reference.md §7 / §9 row 12 examples of quant_profiles_test.cc,
// run through the oracle, so that the oracle is pinned to the recipes' text
// independently of the model (a bug shared by both would otherwise pass the
// model == oracle properties).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog_recipe.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/reference/block/recipe_oracle.h"

namespace lowbit::reference::block {
namespace {

using Codes = std::vector<std::uint8_t>;

using ::lowbit::testing::CatalogRecipe;

constexpr recipe::Layout kPerTensor{recipe::Geometry::kPerTensor, 0, 0};

OracleQuantized PerTensor(const recipe::Recipe& r, const std::vector<float>& x) {
  return OracleQuantizeTensor(r, kPerTensor, x, 1, static_cast<long>(x.size()));
}

TEST(QuantOracleExamplesTest, AoReachesMinus128CommonStopsAtMinus127) {
  const OracleQuantized ao = PerTensor(CatalogRecipe("int8", "ao-sym"), {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(ao.scales[0].decode_bits, 0x3F800000u);
  EXPECT_EQ(ao.codes, (Codes{0x7F, 0x80, 0x02, 0x00}));
  const OracleQuantized common = PerTensor(CatalogRecipe("int8", "common"), {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(common.scales[0].decode_bits, 0x3F808102u);
  EXPECT_EQ(common.codes, (Codes{0x7F, 0x81, 0x02, 0x00}));
  EXPECT_EQ(OracleDequantizeTensor(CatalogRecipe("int8", "common"), kPerTensor, common.packed, common.scales, {}, 1, 4),
            (std::vector<std::uint32_t>{0x42FF0000u, 0xC2FF0000u, 0x40008102u, 0x00000000u}));
}

TEST(QuantOracleExamplesTest, TorchaoCpuVersusCudaScalarDivision) {
  const OracleQuantized cpu = PerTensor(CatalogRecipe("int8", "ao-sym"), {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(cpu.scales[0].decode_bits, 0x3CC0C0C1u);
  EXPECT_EQ(cpu.codes, (Codes{0x7F, 0x80, 42}));
  const OracleQuantized cuda = PerTensor(CatalogRecipe("int8", "ao-sym-cuda"), {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(cuda.scales[0].decode_bits, 0x3CC0C0C2u);
  EXPECT_EQ(cuda.codes, (Codes{0x7F, 0x81, 42}));
}

TEST(QuantOracleExamplesTest, HalfEvenVersusHalfAway) {
  const std::vector<float> x{127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f};
  EXPECT_EQ(PerTensor(CatalogRecipe("int8", "common"), x).codes, (Codes{0x7F, 0x02, 0xFE, 0x00, 0x00, 0x02}));
  EXPECT_EQ(PerTensor(CatalogRecipe("int8", "common-away"), x).codes, (Codes{0x7F, 0x03, 0xFD, 0x01, 0xFF, 0x02}));
}

TEST(QuantOracleExamplesTest, GptqClipsPlusAmaxToPlusSevenAndGuardsZeroRows) {
  const OracleQuantized sym = PerTensor(CatalogRecipe("uint4", "gptq-sym"), {7.5f, -7.5f, 1.0f, 0.0f});
  EXPECT_EQ(sym.scales[0].zero_point, 8);
  EXPECT_EQ(sym.codes, (Codes{15, 0, 9, 8}));
  EXPECT_EQ(PerTensor(CatalogRecipe("uint4", "gptq-sym"), {3.0f, 1.5f, 0.0f}).codes, (Codes{15, 15, 8}));
  const OracleQuantized zero = PerTensor(CatalogRecipe("uint4", "gptq-asym"), {0.0f, -0.0f});
  EXPECT_EQ(zero.scales[0].decode_bits, 0x3E088889u);
  EXPECT_EQ(zero.scales[0].zero_point, 7);
}

TEST(QuantOracleExamplesTest, TeCurrentScalingAndPow2) {
  const OracleQuantized te = PerTensor(CatalogRecipe("e4m3", "te"), {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(te.scales[0].factor_bits, 0x43600000u);  // 224
  EXPECT_EQ(te.scales[0].decode_bits, 0x3B924925u);
  EXPECT_EQ(te.codes, (Codes{0x76, 0xFE, 0x6E, 0x00}));
  const OracleQuantized pow2 = PerTensor(CatalogRecipe("e4m3", "te-pow2"), {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(pow2.scales[0].factor_bits, 0x43000000u);  // 128
  EXPECT_EQ(pow2.codes, (Codes{0x70, 0xF8, 0x68, 0x00}));
  EXPECT_EQ(OracleScaleFromRange(CatalogRecipe("e4m3", "te"), 0.0f, 0.0f).factor_bits, 0x3F800000u);
}

TEST(QuantOracleExamplesTest, AoAsymmetricZeroPointAndFloor) {
  const OracleQuantized u4 = PerTensor(CatalogRecipe("uint4", "ao-asym"), {-1.0f, 0.0f, 2.0f, 14.0f, 0.5f});
  EXPECT_EQ(u4.scales[0].zero_point, 1);
  EXPECT_EQ(u4.codes, (Codes{0, 1, 3, 15, 1}));
  const OracleQuantized zero = PerTensor(CatalogRecipe("int8", "ao-asym"), {0.0f, 0.0f});
  EXPECT_EQ(zero.scales[0].decode_bits, 0x34000000u);
  EXPECT_EQ(zero.scales[0].zero_point, -128);
  EXPECT_EQ(zero.codes, (Codes{0x80, 0x80}));
}

TEST(QuantOracleExamplesTest, ShapeErrors) {
  const recipe::Layout group3{recipe::Geometry::kGroup, 3, 0};
  EXPECT_EQ(OracleQuantizeTensor(CatalogRecipe("int8", "common"), group3, {1, 2, 3, 4}, 1, 4).status,
            OracleStatus::kColsNotMultipleOfGroup);
  const recipe::Layout flat{recipe::Geometry::kBlock1d, 4, 0};
  EXPECT_EQ(OracleQuantizeTensor(CatalogRecipe("int8", "common"), flat, {1, 2, 3, 4}, 1, 4).status,
            OracleStatus::kLayoutNotForRecipe);
}

// UINT4 codes are stored two per byte, element 0 in the low nibble.
TEST(QuantOracleExamplesTest, Uint4CodesArePackedLowNibbleFirst) {
  const OracleQuantized u4 = PerTensor(CatalogRecipe("uint4", "ao-asym"), {-1.0f, 0.0f, 2.0f, 14.0f, 0.5f});
  EXPECT_EQ(u4.packed, (Codes{0x10, 0xF3, 0x01}));
}

}  // namespace
}  // namespace lowbit::reference::block
