// Literal value tables typed from the format specifications, checked against
// BOTH the model (DecodeToF64 / DecodeToF32) and the oracle (ExactValue).
// Neither side computed these numbers: they are copied from
// docs/formats-reference.md §1, OCP MX v1.0 §5.3.3 Table 5 (FP6/FP4) and
// §5.4.1 Table 7 (E8M0), PTX ISA §5.2.3 (E4M3/E5M2/UE4M3/UE8M0), IEEE
// 754-2019 §3.6 (FP16/FP32), ml_dtypes 0.6 float8.h (FNUZ, float8_e3m4,
// float8_e4m3), so a bias or field error in either shows up here. Every
// format of format_list.h must have a table (EveryFormatHasALiteralTable):
// a new format fails here until its values are typed in.
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/value_grid.h"

namespace lowbit {
namespace {

using reference::BigInt;
using reference::ExactClass;
using reference::Rational;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Landmark {
  std::uint64_t code;
  double value;  // NaN for NaN codes; -0.0 for negative zero
};

// An exact rational from a double by frexp (libm), a route independent of
// the oracle's own field reader.
Rational RationalOfDouble(double x) {
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(x), &exponent);  // [0.5, 1)
  const auto significand = static_cast<std::int64_t>(std::ldexp(fraction, 53));
  Rational r = Rational(BigInt(significand));
  const int shift = exponent - 53;
  r *= shift >= 0 ? Rational(BigInt(1) << shift) : Rational(BigInt(1), BigInt(1) << -shift);
  return x < 0 ? Rational(-r) : r;
}

void CheckLandmark(const FormatSpec& spec, const Landmark& lm) {
  SCOPED_TRACE(::testing::Message() << spec.name << " code 0x" << std::hex << lm.code);
  // Model.
  const double d = DecodeToF64(spec, lm.code);
  const float f = DecodeToF32(spec, lm.code);
  if (std::isnan(lm.value)) {
    EXPECT_TRUE(std::isnan(d)) << d;
    EXPECT_TRUE(std::isnan(f)) << f;
  } else {
    EXPECT_EQ(BitCast<std::uint64_t>(d), BitCast<std::uint64_t>(lm.value)) << d << " vs " << lm.value;
    EXPECT_EQ(BitCast<std::uint32_t>(f), BitCast<std::uint32_t>(static_cast<float>(lm.value)))
        << f << " vs " << lm.value;
  }
  // Oracle.
  const reference::Exact e = reference::ExactValue(spec, lm.code);
  if (std::isnan(lm.value)) {
    EXPECT_EQ(e.value_class, ExactClass::kNan);
  } else if (std::isinf(lm.value)) {
    EXPECT_EQ(e.value_class, ExactClass::kInf);
    EXPECT_EQ(e.negative, std::signbit(lm.value));
  } else if (lm.value == 0) {
    EXPECT_EQ(e.value_class, ExactClass::kZero);
    EXPECT_EQ(e.negative, std::signbit(lm.value));
  } else {
    EXPECT_EQ(e.value_class, ExactClass::kFinite);
    EXPECT_EQ(e.Signed(), RationalOfDouble(lm.value)) << e.Signed();
  }
}

void CheckTable(const FormatSpec& spec, const std::vector<Landmark>& table) {
  for (const Landmark& lm : table) CheckLandmark(spec, lm);
}

struct LiteralTable {
  const FormatSpec* spec;
  std::vector<Landmark> landmarks;
};

// One table per format of format_list.h, each with its source.
const std::vector<LiteralTable>& Tables() {
  static const std::vector<LiteralTable> kTables = {
      // OCP MX v1.0 §5.3.3 Table 5, docs/formats-reference.md §1: E2M1 = {0,
      // ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6}, 0x8 is -0, no NaN/Inf.
      {&kE2m1,
       {{0x0, 0.0},  {0x1, 0.5},  {0x2, 1.0},  {0x3, 1.5},
        {0x4, 2.0},  {0x5, 3.0},  {0x6, 4.0},  {0x7, 6.0},
        {0x8, -0.0}, {0x9, -0.5}, {0xA, -1.0}, {0xB, -1.5},
        {0xC, -2.0}, {0xD, -3.0}, {0xE, -4.0}, {0xF, -6.0}}},
      // OCP MX Table 5: E2M3, bias 1, max 7.5 (0x1F), min normal 1.0 (0x08),
      // min subnormal 0.125 (0x01), 0x20 is -0.
      {&kE2m3,
       {{0x00, 0.0},    {0x01, 0.125},  {0x02, 0.25},   {0x03, 0.375},
        {0x04, 0.5},    {0x05, 0.625},  {0x06, 0.75},   {0x07, 0.875},
        {0x08, 1.0},    {0x09, 1.125},  {0x0A, 1.25},   {0x0B, 1.375},
        {0x0C, 1.5},    {0x0D, 1.625},  {0x0E, 1.75},   {0x0F, 1.875},
        {0x10, 2.0},    {0x11, 2.25},   {0x12, 2.5},    {0x13, 2.75},
        {0x14, 3.0},    {0x15, 3.25},   {0x16, 3.5},    {0x17, 3.75},
        {0x18, 4.0},    {0x19, 4.5},    {0x1A, 5.0},    {0x1B, 5.5},
        {0x1C, 6.0},    {0x1D, 6.5},    {0x1E, 7.0},    {0x1F, 7.5},
        {0x20, -0.0},   {0x21, -0.125}, {0x22, -0.25},  {0x23, -0.375},
        {0x24, -0.5},   {0x25, -0.625}, {0x26, -0.75},  {0x27, -0.875},
        {0x28, -1.0},   {0x29, -1.125}, {0x2A, -1.25},  {0x2B, -1.375},
        {0x2C, -1.5},   {0x2D, -1.625}, {0x2E, -1.75},  {0x2F, -1.875},
        {0x30, -2.0},   {0x31, -2.25},  {0x32, -2.5},   {0x33, -2.75},
        {0x34, -3.0},   {0x35, -3.25},  {0x36, -3.5},   {0x37, -3.75},
        {0x38, -4.0},   {0x39, -4.5},   {0x3A, -5.0},   {0x3B, -5.5},
        {0x3C, -6.0},   {0x3D, -6.5},   {0x3E, -7.0},   {0x3F, -7.5}}},
      // OCP MX Table 5: E3M2, bias 3, max 28 (0x1F), min normal 0.25 (0x04),
      // min subnormal 0.0625 (0x01), 0x20 is -0.
      {&kE3m2,
       {{0x00, 0.0},     {0x01, 0.0625},  {0x02, 0.125},   {0x03, 0.1875},
        {0x04, 0.25},    {0x05, 0.3125},  {0x06, 0.375},   {0x07, 0.4375},
        {0x08, 0.5},     {0x09, 0.625},   {0x0A, 0.75},    {0x0B, 0.875},
        {0x0C, 1.0},     {0x0D, 1.25},    {0x0E, 1.5},     {0x0F, 1.75},
        {0x10, 2.0},     {0x11, 2.5},     {0x12, 3.0},     {0x13, 3.5},
        {0x14, 4.0},     {0x15, 5.0},     {0x16, 6.0},     {0x17, 7.0},
        {0x18, 8.0},     {0x19, 10.0},    {0x1A, 12.0},    {0x1B, 14.0},
        {0x1C, 16.0},    {0x1D, 20.0},    {0x1E, 24.0},    {0x1F, 28.0},
        {0x20, -0.0},    {0x21, -0.0625}, {0x22, -0.125},  {0x23, -0.1875},
        {0x24, -0.25},   {0x25, -0.3125}, {0x26, -0.375},  {0x27, -0.4375},
        {0x28, -0.5},    {0x29, -0.625},  {0x2A, -0.75},   {0x2B, -0.875},
        {0x2C, -1.0},    {0x2D, -1.25},   {0x2E, -1.5},    {0x2F, -1.75},
        {0x30, -2.0},    {0x31, -2.5},    {0x32, -3.0},    {0x33, -3.5},
        {0x34, -4.0},    {0x35, -5.0},    {0x36, -6.0},    {0x37, -7.0},
        {0x38, -8.0},    {0x39, -10.0},   {0x3A, -12.0},   {0x3B, -14.0},
        {0x3C, -16.0},   {0x3D, -20.0},   {0x3E, -24.0},   {0x3F, -28.0}}},
      // docs/formats-reference.md §1 / PTX §5.2.3: OCP E4M3 ("FN"), bias 7, max
      // 448 (0x7E), min normal 2^-6 (0x08), min subnormal 2^-9 (0x01), NaN
      // only 0x7F and 0xFF.
      {&kE4m3,
       {{0x00, 0.0},     {0x80, -0.0},    {0x01, 0x1p-9},   {0x81, -0x1p-9},
        {0x07, 0x1.cp-7}, {0x08, 0x1p-6}, {0x38, 1.0},      {0x3C, 1.5},
        {0x40, 2.0},     {0x5C, 24.0},    {0x77, 240.0},    {0x78, 256.0},
        {0x7D, 416.0},   {0x7E, 448.0},   {0xFE, -448.0},   {0x7F, kNan},
        {0xFF, kNan},    {0x7C, 384.0}}},
      // ml_dtypes float8_e4m3fnuz: bias 8, max 240 (0x7F), min normal 2^-7,
      // min subnormal 2^-10, the single NaN 0x80, no -0, no Inf.
      {&kE4m3Fnuz,
       {{0x00, 0.0},      {0x80, kNan},   {0x01, 0x1p-10}, {0x81, -0x1p-10},
        {0x08, 0x1p-7},   {0x40, 1.0},    {0x48, 2.0},     {0x7F, 240.0},
        {0xFF, -240.0},   {0x7E, 224.0},  {0xC0, -1.0}}},
      // docs/formats-reference.md §1: E5M2, bias 15, max 57344 (0x7B), min
      // normal 2^-14 (0x04), min subnormal 2^-16 (0x01), Inf 0x7C/0xFC, NaN
      // 0x7D-0x7F, 0xFD-0xFF.
      {&kE5m2,
       {{0x00, 0.0},     {0x80, -0.0},     {0x01, 0x1p-16},  {0x03, 0x1.8p-15},
        {0x04, 0x1p-14}, {0x3C, 1.0},      {0x3E, 1.5},      {0x40, 2.0},
        {0x7B, 57344.0}, {0xFB, -57344.0}, {0x7A, 49152.0},  {0x7C, kInf},
        {0xFC, -kInf},   {0x7D, kNan},     {0x7E, kNan},     {0x7F, kNan},
        {0xFD, kNan},    {0xFE, kNan},     {0xFF, kNan}}},
      // ml_dtypes float8_e5m2fnuz: bias 16, max 57344 (0x7F), min normal
      // 2^-15, min subnormal 2^-17, single NaN 0x80.
      {&kE5m2Fnuz,
       {{0x00, 0.0},      {0x80, kNan},     {0x01, 0x1p-17},  {0x04, 0x1p-15},
        {0x40, 1.0},      {0x7F, 57344.0},  {0xFF, -57344.0}, {0x7C, 32768.0},
        {0x81, -0x1p-17}}},
      // ml_dtypes 0.6 float8_e4m3 (finfo: bias 7, max 240, smallest normal
      // 2^-6, smallest subnormal 2^-9), IEEE-style: exponent field 15 holds
      // Inf (0x78/0xF8) and NaN (0x79-0x7F, 0xF9-0xFF), -0 is 0x80. Where OCP
      // E4M3 has 256..448 (0x78..0x7E) this format has Inf and NaN.
      {&kE4m3Ieee,
       {{0x00, 0.0},      {0x80, -0.0},     {0x01, 0x1p-9},   {0x81, -0x1p-9},
        {0x07, 0x1.cp-7}, {0x08, 0x1p-6},   {0x38, 1.0},      {0x3C, 1.5},
        {0x40, 2.0},      {0x5C, 24.0},     {0x70, 128.0},    {0x76, 224.0},
        {0x77, 240.0},    {0xF7, -240.0},   {0x78, kInf},     {0xF8, -kInf},
        {0x79, kNan},     {0x7C, kNan},     {0x7E, kNan},     {0x7F, kNan},
        {0xF9, kNan},     {0xFF, kNan}}},
      // ml_dtypes 0.6 float8_e3m4 (finfo: bias 3, max 15.5, smallest normal
      // 0.25, smallest subnormal 2^-6 = 0.015625), IEEE-style: exponent field
      // 7 holds Inf (0x70/0xF0) and NaN (0x71-0x7F, 0xF1-0xFF), -0 is 0x80.
      {&kE3m4,
       {{0x00, 0.0},      {0x80, -0.0},     {0x01, 0.015625}, {0x81, -0.015625},
        {0x0F, 0.234375}, {0x10, 0.25},     {0x11, 0.265625}, {0x30, 1.0},
        {0x38, 1.5},      {0x40, 2.0},      {0x5F, 7.75},     {0x60, 8.0},
        {0x6E, 15.0},     {0x6F, 15.5},     {0xEF, -15.5},    {0x70, kInf},
        {0xF0, -kInf},    {0x71, kNan},     {0x78, kNan},     {0x7F, kNan},
        {0xF1, kNan},     {0xF8, kNan},     {0xFF, kNan}}},
      // PTX §5.2.3: UE4M3, 7 bits, bias 7, max 448 (0x7E), NaN 0x7F, no sign.
      {&kUe4m3,
       {{0x00, 0.0},    {0x01, 0x1p-9}, {0x08, 0x1p-6}, {0x38, 1.0},
        {0x7E, 448.0},  {0x7F, kNan},   {0x3F, 1.875},  {0x40, 2.0}}},
      // OCP MX §5.4.1 Table 7: E8M0 code c is 2^(c-127), 0xFF is NaN, no zero.
      {&kE8m0,
       {{0x00, 0x1p-127}, {0x01, 0x1p-126}, {0x7F, 1.0},    {0x80, 2.0},
        {0x7E, 0.5},      {0xFE, 0x1p127},  {0xFF, kNan}}},
      // docs/formats-reference.md §1: BF16 (1.8.7, bias 127).
      {&kBf16,
       {{0x0000, 0.0},       {0x8000, -0.0},       {0x0001, 0x1p-133},
        {0x0080, 0x1p-126},  {0x3F80, 1.0},        {0xC000, -2.0},
        {0x3EAB, 0x1.56p-2}, {0x7F7F, 0x1.fep127}, {0xFF7F, -0x1.fep127},
        {0x7F80, kInf},      {0xFF80, -kInf},      {0x7FC0, kNan},
        {0xFFC0, kNan},      {0x7F81, kNan},       {0x007F, 0x1.fcp-127}}},
      // IEEE 754 binary16: max 65504 (0x7BFF), min normal 2^-14, min
      // subnormal 2^-24.
      {&kFp16,
       {{0x0000, 0.0},           {0x8000, -0.0},      {0x0001, 0x1p-24},
        {0x03FF, 0x1.ff8p-15},   {0x0400, 0x1p-14},   {0x3C00, 1.0},
        {0x3555, 0.333251953125}, {0xC000, -2.0},     {0x7BFF, 65504.0},
        {0xFBFF, -65504.0},      {0x7C00, kInf},      {0xFC00, -kInf},
        {0x7E00, kNan},          {0x7C01, kNan},      {0xFE00, kNan}}},
      // IEEE 754 binary32.
      {&kFp32,
       {{0x00000000, 0.0},             {0x80000000, -0.0},
        {0x00000001, 0x1p-149},        {0x007FFFFF, 0x1.fffffcp-127},
        {0x00800000, 0x1p-126},        {0x3F800000, 1.0},
        {0x3EAAAAAB, 0x1.555556p-2},   {0x7F7FFFFF, 0x1.fffffep127},
        {0xFF7FFFFF, -0x1.fffffep127}, {0x7F800000, kInf},
        {0xFF800000, -kInf},           {0x7FC00000, kNan},
        {0xFF800001, kNan},            {0x43E80000, 464.0}}},
      // IEEE 754 binary64 (the model's and the oracle's widest input).
      {&kFp64,
       {{0x0000000000000000, 0.0},      {0x8000000000000000, -0.0},
        {0x0000000000000001, 0x1p-1074}, {0x0010000000000000, 0x1p-1022},
        {0x3FF0000000000000, 1.0},      {0x3FF8000000000000, 1.5},
        {0xC000000000000000, -2.0},     {0x7FEFFFFFFFFFFFFF, 0x1.fffffffffffffp1023},
        {0x7FF0000000000000, kInf},     {0xFFF0000000000000, -kInf},
        {0x7FF8000000000000, kNan},     {0xFFF0000000000001, kNan}}},
      // Two's complement INT8/INT4, plain binary UINT4
      // (docs/formats-reference.md §1).
      {&kInt8,
       {{0x00, 0.0}, {0x01, 1.0}, {0x7F, 127.0}, {0x80, -128.0}, {0xFF, -1.0},
        {0x81, -127.0}}},
      {&kInt4,
       {{0x0, 0.0}, {0x1, 1.0}, {0x7, 7.0}, {0x8, -8.0}, {0xF, -1.0}, {0x9, -7.0}}},
      {&kUint4, {{0x0, 0.0}, {0x1, 1.0}, {0x8, 8.0}, {0xF, 15.0}}},
  };
  return kTables;
}

// Readable ctest names ("... GetParam() = e3m4").
void PrintTo(const LiteralTable& t, std::ostream* os) { *os << t.spec->name; }

class LiteralTables : public ::testing::TestWithParam<LiteralTable> {};

TEST_P(LiteralTables, ModelAndOracleDecodeEveryEntry) {
  ASSERT_FALSE(GetParam().landmarks.empty());
  CheckTable(*GetParam().spec, GetParam().landmarks);
}

INSTANTIATE_TEST_SUITE_P(Spec, LiteralTables, ::testing::ValuesIn(Tables()),
                         [](const auto& info) { return std::string(info.param.spec->name); });

// A format without a table would be checked only against the code itself.
TEST(LiteralTablesCoverage, EveryFormatHasALiteralTable) {
  std::set<std::string> tabled;
  for (const LiteralTable& t : Tables()) {
    EXPECT_TRUE(tabled.insert(t.spec->name).second) << "two tables for " << t.spec->name;
  }
  for (FormatId id : kAllFormats) {
    EXPECT_EQ(tabled.count(Spec(id).name), 1u)
        << Spec(id).name << " has no literal table: type its landmarks (zero, -0, smallest "
                            "subnormal and normal, 1, max, Inf, NaN codes) from its spec here";
  }
}

// docs/formats-reference.md §1 "Distinct finite" column (±0 counted once) and "Max finite",
// against the oracle's value grid.
TEST(LiteralTables, OracleGridCountsAndMaxima) {
  struct Row {
    const FormatSpec* spec;
    std::size_t distinct_finite;
    double max_finite;
  };
  const Row rows[] = {
      {&kBf16, 65279, 0x1.fep127}, {&kFp16, 63487, 65504.0},   {&kE4m3, 253, 448.0},
      {&kE4m3Fnuz, 255, 240.0},    {&kE5m2, 247, 57344.0},     {&kE5m2Fnuz, 255, 57344.0},
      {&kE4m3Ieee, 239, 240.0},    {&kE3m4, 223, 15.5},
      {&kE3m2, 63, 28.0},          {&kE2m3, 63, 7.5},          {&kE2m1, 15, 6.0},
      {&kE8m0, 255, 0x1p127},      {&kUe4m3, 127, 448.0},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.spec->name);
    const reference::ValueGrid& grid = reference::GridFor(*row.spec);
    const bool zero_first = grid.points.front().magnitude == 0;
    const std::size_t n = grid.points.size();
    const std::size_t distinct = row.spec->has_sign ? 2 * n - (zero_first ? 1 : 0) : n;
    EXPECT_EQ(distinct, row.distinct_finite);
    EXPECT_EQ(grid.points.back().magnitude, RationalOfDouble(row.max_finite));
  }
}

// The first value past max of the unbounded-exponent format, at which every
// rounding overflows (docs/formats-reference.md §4.1: 480 for E4M3 with 464 the tie; §4.2:
// 61440 the E5M2 tie toward 65536; §4.3: E4M3FNUZ tie 248 toward 256).
TEST(LiteralTables, OracleBeyondMax) {
  EXPECT_EQ(reference::GridFor(kE4m3).beyond_max.magnitude, RationalOfDouble(480.0));
  EXPECT_EQ(reference::GridFor(kE5m2).beyond_max.magnitude, RationalOfDouble(65536.0));
  EXPECT_EQ(reference::GridFor(kE4m3Fnuz).beyond_max.magnitude, RationalOfDouble(256.0));
  EXPECT_EQ(reference::GridFor(kE2m1).beyond_max.magnitude, RationalOfDouble(8.0));
  EXPECT_EQ(reference::GridFor(kE8m0).beyond_max.magnitude, RationalOfDouble(0x1p128));
  EXPECT_EQ(reference::GridFor(kFp16).beyond_max.magnitude, RationalOfDouble(65536.0));
  // ml_dtypes float8_e4m3 / float8_e3m4: the next step past 240 (step 16)
  // and past 15.5 (step 0.5).
  EXPECT_EQ(reference::GridFor(kE4m3Ieee).beyond_max.magnitude, RationalOfDouble(256.0));
  EXPECT_EQ(reference::GridFor(kE3m4).beyond_max.magnitude, RationalOfDouble(16.0));
}

}  // namespace
}  // namespace lowbit
