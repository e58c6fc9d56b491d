// Layouts of the scaled recipes (recipe::Layout, recipe/tensor.h): per tensor, per row
// (channel / token), per group along K (32, 64, 128) and 2-D tiles
// (128 x 128), with worked examples whose scales are powers of two so that
// every expected code follows from the formulas by hand, and the errors for
// shapes that do not tile ([AO] _get_reduction_params: no padding).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

using ::lowbit::testing::CatalogRecipe;

const Recipe& kAoSymInt8 = CatalogRecipe("int8", "ao-sym");
const Recipe& kCommonInt8 = CatalogRecipe("int8", "common");
const Recipe& kTeFp8E4m3 = CatalogRecipe("e4m3", "te");
const Recipe& kTeFp8E4m3Pow2 = CatalogRecipe("e4m3", "te-pow2");

using Codes = std::vector<std::uint8_t>;

struct Result {
  TensorStatus status;
  Codes codes;                // one element code per entry (unpacked)
  std::vector<float> scales;  // decode scale per group
};

Result QuantizeWith(const Recipe& r, Layout layout, long rows, long cols, const std::vector<float>& x) {
  GroupGrid grid;
  Result out{MakeGroupGrid(r, layout, rows, cols, &grid), {}, {}};
  if (out.status != TensorStatus::kOk) return out;
  const BufferSizes sizes = SizesOf(r, grid);
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(sizes.code_bytes));
  out.scales.resize(static_cast<std::size_t>(sizes.scales));
  std::vector<std::int32_t> zero_points(static_cast<std::size_t>(sizes.zero_points));
  QuantizedTensor q;
  q.codes = packed.data();
  q.scales = out.scales.data();
  q.zero_points = zero_points.empty() ? nullptr : zero_points.data();
  out.status = QuantizeTensor(r, layout, x.data(), rows, cols, q);
  for (long k = 0; k < rows * cols; ++k) out.codes.push_back(LoadCode(r.packing, packed.data(), k));
  return out;
}

constexpr Layout PerTensor() { return {Geometry::kPerTensor, 0, 0}; }
constexpr Layout PerRow() { return {Geometry::kPerRow, 0, 0}; }
constexpr Layout PerGroup(int g) { return {Geometry::kGroup, g, 0}; }
constexpr Layout Block(int rows, int cols) { return {Geometry::kTile2d, cols, rows}; }

// [AO] int8 SYMMETRIC: amax 127.5 -> scale 1, amax 255 -> scale 2 (1/scale
// 0.5); a tie y = 127.5 rounds to 128 and clamps to 127, y = -127.5 -> -128.
TEST(QuantLayoutTest, PerRowVersusPerTensor) {
  const std::vector<float> x{127.5f, 10.0f, 255.0f, -20.0f};
  const Result row = QuantizeWith(kAoSymInt8, PerRow(), 2, 2, x);
  EXPECT_EQ(row.scales, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(row.codes, (Codes{0x7F, 0x0A, 0x7F, 0xF6}));
  // One scale 2 for all: 127.5 * 0.5 = 63.75 -> 64, 10 * 0.5 = 5.
  const Result tensor = QuantizeWith(kAoSymInt8, PerTensor(), 2, 2, x);
  EXPECT_EQ(tensor.scales, (std::vector<float>{2.0f}));
  EXPECT_EQ(tensor.codes, (Codes{0x40, 0x05, 0x7F, 0xF6}));
}

TEST(QuantLayoutTest, PerGroupAlongK) {
  const Result g = QuantizeWith(kAoSymInt8, PerGroup(2), 1, 4, {127.5f, 10.0f, 255.0f, -20.0f});
  EXPECT_EQ(g.scales, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(g.codes, (Codes{0x7F, 0x0A, 0x7F, 0xF6}));
}

TEST(QuantLayoutTest, TwoDimensionalBlocks) {
  // 2 x 2 blocks of a 2 x 4 matrix: {127.5, 1, -127.5, 3} scale 1 and
  // {255, 2, 0, -255} scale 2.
  const Result b = QuantizeWith(kAoSymInt8, Block(2, 2), 2, 4, {127.5f, 1.0f, 255.0f, 2.0f, -127.5f, 3.0f, 0.0f, -255.0f});
  EXPECT_EQ(b.scales, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(b.codes, (Codes{0x7F, 0x01, 0x7F, 0x01, 0x80, 0x03, 0x00, 0x80}));
}

TEST(QuantLayoutTest, PerTokenFp8UsesEachRowsAmax) {
  // [TE] scale per row: row 0 amax 2 -> 224 (1 -> 224 = 0x76, -2 -> -448 =
  // 0xFE), scale_inv fp32(1/224) = 0x3B924925; row 1 amax 448 -> scale 1
  // (448 -> 0x7E, 0.5 -> 0x30).
  const Result t = QuantizeWith(kTeFp8E4m3, PerRow(), 2, 2, {1.0f, -2.0f, 448.0f, 0.5f});
  ASSERT_EQ(t.scales.size(), 2u);
  EXPECT_EQ(F32Bits(t.scales[0]), 0x3B924925u);
  EXPECT_EQ(t.scales[1], 1.0f);
  EXPECT_EQ(t.codes, (Codes{0x76, 0xFE, 0x7E, 0x30}));
}

TEST(QuantLayoutTest, GroupCountsFor32And64And128And128x128) {
  GroupGrid g;
  for (int size : {32, 64, 128}) {
    ASSERT_EQ(MakeGroupGrid(kAoSymInt8, PerGroup(size), 2, 256, &g), TensorStatus::kOk);
    EXPECT_EQ(g.Count(), 2 * 256 / size);
  }
  ASSERT_EQ(MakeGroupGrid(kAoSymInt8, Block(128, 128), 256, 384, &g), TensorStatus::kOk);
  EXPECT_EQ(g.Count(), 6);
  EXPECT_EQ(GroupOf(g, 130, 129), 4);  // block row 1, block column 1: 1 * 3 + 1
}

TEST(QuantLayoutTest, TePow2On128x128Blocks) {
  // [TE] Float8BlockScaling: block 0 (rows 0-127) amax 2 -> scale 448 / 2 =
  // 224 -> power of two 128; 1 -> 128 = E4M3 0x70, 2 -> 256 = 0x78. Block 1
  // (rows 128-255) all zero -> scale 1, scale_inv 1.
  std::vector<float> x(256 * 128, 0.0f);
  for (int i = 0; i < 128 * 128; ++i) x[static_cast<std::size_t>(i)] = 1.0f;
  x[5] = 2.0f;
  const Result r = QuantizeWith(kTeFp8E4m3Pow2, Block(128, 128), 256, 128, x);
  ASSERT_EQ(r.status, TensorStatus::kOk);
  EXPECT_EQ(r.scales, (std::vector<float>{1.0f / 128.0f, 1.0f}));
  EXPECT_EQ(r.codes[0], 0x70);
  EXPECT_EQ(r.codes[5], 0x78);
  EXPECT_EQ(r.codes[128 * 128], 0x00);
}

TEST(QuantLayoutTest, ShapesThatDoNotTileAreErrors) {
  GroupGrid g;
  EXPECT_EQ(MakeGroupGrid(kCommonInt8, PerGroup(32), 2, 48, &g), TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(MakeGroupGrid(kCommonInt8, PerGroup(128), 1, 100, &g), TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(MakeGroupGrid(kCommonInt8, Block(128, 128), 200, 128, &g), TensorStatus::kRowsNotMultipleOfTile);
  EXPECT_EQ(MakeGroupGrid(kCommonInt8, PerGroup(0), 1, 4, &g), TensorStatus::kBadGroup);
  EXPECT_EQ(MakeGroupGrid(kCommonInt8, PerTensor(), 0, 4, &g), TensorStatus::kEmpty);
  // The whole-matrix calls refuse them too, writing nothing.
  std::uint8_t codes[3] = {0xAA, 0xAA, 0xAA};
  float scales[1];
  const float x[3] = {1.0f, 2.0f, 3.0f};
  QuantizedTensor q;
  q.codes = codes;
  q.scales = scales;
  EXPECT_EQ(QuantizeTensor(kCommonInt8, PerGroup(2), x, 1, 3, q), TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(codes[0], 0xAA);
}

}  // namespace
}  // namespace lowbit::recipe
