// The hand-worked docs/formats-reference.md §7 / §9 row 12 examples of quant_profiles_test.cc,
// run through the oracle, so that the oracle is pinned to the recipes' text
// independently of the model (a bug shared by both would otherwise pass the
// model == oracle properties).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/reference/block/int_quant_oracle.h"

namespace lowbit::reference::block {
namespace {

using lowbit::block::QuantLayout;
using Codes = std::vector<std::uint8_t>;

OracleQuantResult PerTensor(const lowbit::block::IntQuantRecipe& r, const std::vector<float>& x) {
  return OracleQuantizeMatrix(r, QuantLayout{}, x, 1, static_cast<long>(x.size()));
}

TEST(QuantOracleExamplesTest, AoReachesMinus128CommonStopsAtMinus127) {
  const OracleQuantResult ao = PerTensor(lowbit::block::kAoSymInt8, {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(ao.params[0].decode_bits, 0x3F800000u);
  EXPECT_EQ(ao.codes, (Codes{0x7F, 0x80, 0x02, 0x00}));
  const OracleQuantResult common = PerTensor(lowbit::block::kCommonInt8, {127.5f, -127.5f, 2.5f, -0.5f});
  EXPECT_EQ(common.params[0].decode_bits, 0x3F808102u);
  EXPECT_EQ(common.codes, (Codes{0x7F, 0x81, 0x02, 0x00}));
  EXPECT_EQ(OracleDequantizeMatrix(lowbit::block::kCommonInt8, QuantLayout{}, common.codes, 1, 4, common.params),
            (std::vector<std::uint32_t>{0x42FF0000u, 0xC2FF0000u, 0x40008102u, 0x00000000u}));
}

TEST(QuantOracleExamplesTest, TorchaoCpuVersusCudaScalarDivision) {
  const OracleQuantResult cpu = PerTensor(lowbit::block::kAoSymInt8, {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(cpu.params[0].decode_bits, 0x3CC0C0C1u);
  EXPECT_EQ(cpu.codes, (Codes{0x7F, 0x80, 42}));
  const OracleQuantResult cuda = PerTensor(lowbit::block::kAoSymCudaInt8, {3.0f, -3.0f, 1.0f});
  EXPECT_EQ(cuda.params[0].decode_bits, 0x3CC0C0C2u);
  EXPECT_EQ(cuda.codes, (Codes{0x7F, 0x81, 42}));
}

TEST(QuantOracleExamplesTest, HalfEvenVersusHalfAway) {
  const std::vector<float> x{127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f};
  EXPECT_EQ(PerTensor(lowbit::block::kCommonInt8, x).codes, (Codes{0x7F, 0x02, 0xFE, 0x00, 0x00, 0x02}));
  EXPECT_EQ(PerTensor(lowbit::block::kCommonAwayInt8, x).codes, (Codes{0x7F, 0x03, 0xFD, 0x01, 0xFF, 0x02}));
}

TEST(QuantOracleExamplesTest, GptqClipsPlusAmaxToPlusSevenAndGuardsZeroRows) {
  const OracleQuantResult sym = PerTensor(lowbit::block::kGptqSymUint4, {7.5f, -7.5f, 1.0f, 0.0f});
  EXPECT_EQ(sym.params[0].zero_point, 8);
  EXPECT_EQ(sym.codes, (Codes{15, 0, 9, 8}));
  EXPECT_EQ(PerTensor(lowbit::block::kGptqSymUint4, {3.0f, 1.5f, 0.0f}).codes, (Codes{15, 15, 8}));
  const OracleQuantResult zero = PerTensor(lowbit::block::kGptqAsymUint4, {0.0f, -0.0f});
  EXPECT_EQ(zero.params[0].decode_bits, 0x3E088889u);
  EXPECT_EQ(zero.params[0].zero_point, 7);
}

TEST(QuantOracleExamplesTest, TeCurrentScalingAndPow2) {
  const OracleQuantResult te = PerTensor(lowbit::block::kTeFp8E4m3, {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(te.params[0].encode_bits, 0x43600000u);  // 224
  EXPECT_EQ(te.params[0].decode_bits, 0x3B924925u);
  EXPECT_EQ(te.codes, (Codes{0x76, 0xFE, 0x6E, 0x00}));
  const OracleQuantResult pow2 = PerTensor(lowbit::block::kTeFp8E4m3Pow2, {1.0f, -2.0f, 0.5f, 0.0f});
  EXPECT_EQ(pow2.params[0].encode_bits, 0x43000000u);  // 128
  EXPECT_EQ(pow2.codes, (Codes{0x70, 0xF8, 0x68, 0x00}));
  EXPECT_EQ(OracleQuantParamsFromRange(lowbit::block::kTeFp8E4m3, 0.0f, 0.0f).encode_bits, 0x3F800000u);
}

TEST(QuantOracleExamplesTest, AoAsymmetricZeroPointAndFloor) {
  const OracleQuantResult u4 = PerTensor(lowbit::block::kAoAsymUint4, {-1.0f, 0.0f, 2.0f, 14.0f, 0.5f});
  EXPECT_EQ(u4.params[0].zero_point, 1);
  EXPECT_EQ(u4.codes, (Codes{0, 1, 3, 15, 1}));
  const OracleQuantResult zero = PerTensor(lowbit::block::kAoAsymInt8, {0.0f, 0.0f});
  EXPECT_EQ(zero.params[0].decode_bits, 0x34000000u);
  EXPECT_EQ(zero.params[0].zero_point, -128);
  EXPECT_EQ(zero.codes, (Codes{0x80, 0x80}));
}

TEST(QuantOracleExamplesTest, ShapeErrors) {
  const lowbit::block::QuantLayout group3{lowbit::block::Granularity::kPerGroup, 3, 0};
  EXPECT_EQ(OracleQuantizeMatrix(lowbit::block::kCommonInt8, group3, {1, 2, 3, 4}, 1, 4).status,
            lowbit::block::QuantStatus::kColsNotMultipleOfGroup);
}

}  // namespace
}  // namespace lowbit::reference::block
