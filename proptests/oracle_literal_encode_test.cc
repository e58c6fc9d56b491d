// Encodings typed from docs/formats-reference.md (§3.3, §4.1-4.5, §4.7, §8.1, §9 boundary
// vectors, §10.2 Hopper table) with flags worked out by hand from the
// policy.h words (inexact 1, underflow 2, overflow 4, invalid 8). Checked
// against the oracle AND the model, so that the exhaustive model == oracle
// sweeps are anchored to the documents, not only to each other.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"

namespace lowbit {
namespace {

struct Row {
  const FormatSpec* dst;
  std::uint32_t f32_bits;
  RoundingMode mode;
  Overflow overflow;
  std::uint64_t code;
  std::uint8_t flags;
};

constexpr RoundingMode kRne = RoundingMode::kNearestEven;
constexpr RoundingMode kRna = RoundingMode::kNearestAway;
constexpr RoundingMode kRtz = RoundingMode::kTowardZero;
constexpr RoundingMode kUp = RoundingMode::kUp;
constexpr Overflow kDef = Overflow::kFormatDefault;
constexpr Overflow kSat = Overflow::kSaturate;
constexpr Overflow kWrap = Overflow::kWrap;

void CheckRows(const std::vector<Row>& rows, EncodeOptions base = {}) {
  for (const Row& row : rows) {
    EncodeOptions o = base;
    o.rounding = row.mode;
    o.overflow = row.overflow;
    const EncodeResult oracle =
        reference::OracleEncode(*row.dst, reference::ExactValue(kFp32, row.f32_bits), o);
    const EncodeResult model = EncodeF32Bits(*row.dst, row.f32_bits, o);
    SCOPED_TRACE(::testing::Message() << row.dst->name << " <- 0x" << std::hex << row.f32_bits
                                      << " mode " << int(row.mode) << " overflow " << int(row.overflow));
    EXPECT_EQ(oracle.code, row.code) << "oracle";
    EXPECT_EQ(int(oracle.flags), int(row.flags)) << "oracle";
    EXPECT_EQ(model.code, row.code) << "model";
    EXPECT_EQ(int(model.flags), int(row.flags)) << "model";
  }
}

// §4.1: 464 is the tie between 448 and the missing 480 and goes to 448; only
// values above it overflow (NaN non-saturating, 448 saturating); 2^-10 is the
// tie at half the smallest subnormal and goes to 0; -0 stays -0.
TEST(OracleLiteralEncode, E4m3) {
  CheckRows({{&kE4m3, 0x43E00000, kRne, kDef, 0x7E, 0},
             {&kE4m3, 0x43E80000, kRne, kDef, 0x7E, 1},
             {&kE4m3, 0x43E80001, kRne, kDef, 0x7F, 5},
             {&kE4m3, 0x43E80001, kRne, kSat, 0x7E, 5},
             {&kE4m3, 0xC3E80001, kRne, kSat, 0xFE, 5},
             {&kE4m3, 0x43F00000, kRtz, kDef, 0x7E, 5},
             {&kE4m3, 0x3A800000, kRne, kDef, 0x00, 3},
             {&kE4m3, 0x3A800001, kRne, kDef, 0x01, 3},
             {&kE4m3, 0x80000000, kRne, kDef, 0x80, 0},
             {&kE4m3, 0x7F800000, kRne, kSat, 0x7E, 1},
             {&kE4m3, 0x7F800000, kRne, kDef, 0x7F, 8},
             {&kE4m3, 0xFFC00000, kRne, kDef, 0xFF, 0}});
  EncodeOptions hardware;  // §9.2: NVIDIA drops the NaN sign
  hardware.nan_sign = NanSign::kPositive;
  CheckRows({{&kE4m3, 0xFFC00000, kRne, kSat, 0x7F, 0}}, hardware);
}

// §4.2: 61440 is the tie between 57344 (odd) and 65536, so it overflows.
TEST(OracleLiteralEncode, E5m2) {
  CheckRows({{&kE5m2, 0x47700000, kRne, kDef, 0x7C, 5},
             {&kE5m2, 0x47700000, kRne, kSat, 0x7B, 5},
             {&kE5m2, 0x476FFFFF, kRne, kDef, 0x7B, 1},
             {&kE5m2, 0x37000000, kRne, kDef, 0x00, 3},
             {&kE5m2, 0x37000001, kRne, kDef, 0x01, 3},
             {&kE5m2, 0x7F800000, kRne, kDef, 0x7C, 0}});
}

// §4.3: E4M3FNUZ 248 is the tie between 240 (odd) and 256 and becomes the NaN
// 0x80; -0 becomes +0.
TEST(OracleLiteralEncode, E4m3Fnuz) {
  CheckRows({{&kE4m3Fnuz, 0x43780000, kRne, kDef, 0x80, 5},
             {&kE4m3Fnuz, 0x43778000, kRne, kDef, 0x7F, 1},
             {&kE4m3Fnuz, 0x80000000, kRne, kDef, 0x00, 0},
             {&kE4m3Fnuz, 0x43E00000, kRne, kDef, 0x80, 5}});
}

// §4.5 RNE tie table 0.25->0, 0.75->2, 1.25->2, 1.75->4, 2.5->4, 3.5->6,
// 5->6; above 6 saturates (no Inf/NaN); NaN -> +6 under kPositiveMax.
TEST(OracleLiteralEncode, E2m1) {
  CheckRows({{&kE2m1, 0x3E800000, kRne, kDef, 0x0, 3},
             {&kE2m1, 0x3F400000, kRne, kDef, 0x2, 3},
             {&kE2m1, 0x3FA00000, kRne, kDef, 0x2, 1},
             {&kE2m1, 0x3FE00000, kRne, kDef, 0x4, 1},
             {&kE2m1, 0x40200000, kRne, kDef, 0x4, 1},
             {&kE2m1, 0x40600000, kRne, kDef, 0x6, 1},
             {&kE2m1, 0x40A00000, kRne, kDef, 0x6, 1},
             {&kE2m1, 0x40C00001, kRne, kDef, 0x7, 1},
             {&kE2m1, 0x41000000, kRne, kDef, 0x7, 5},
             {&kE2m1, 0x80000000, kRne, kDef, 0x8, 0},
             {&kE2m1, 0x7F800000, kRne, kDef, 0x7, 1},
             {&kE2m1, 0x7FC00000, kRne, kDef, 0x7, 8},
             {&kE2m1, 0xFFC00000, kRne, kDef, 0x7, 8}});
}

// §4.7: E8M0 ties go up under nearest (PyTorch / ml_dtypes), 2^-127 is code
// 0, zero clips to 2^-127 (NVIDIA) or is NaN (ml_dtypes), |x| for negatives
// (NVIDIA) or NaN (ml_dtypes), overflow NaN (non-saturating) or 0xFE.
TEST(OracleLiteralEncode, E8m0) {
  EncodeOptions nvidia;
  nvidia.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  CheckRows({{&kE8m0, 0x3FC00000, kRne, kDef, 0x80, 1},
             {&kE8m0, 0x3FB33333, kRne, kDef, 0x7F, 1},
             {&kE8m0, 0x00400000, kRne, kDef, 0x00, 0},
             {&kE8m0, 0x00400001, kRne, kDef, 0x00, 1},
             {&kE8m0, 0x00400001, kUp, kDef, 0x01, 1},
             {&kE8m0, 0x00200000, kRne, kDef, 0x00, 3},
             {&kE8m0, 0x00000000, kRne, kDef, 0x00, 1},
             {&kE8m0, 0x3FFFFFFF, kRtz, kDef, 0x7F, 1},
             {&kE8m0, 0x3F800001, kUp, kDef, 0x80, 1},
             {&kE8m0, 0x7F400000, kRne, kDef, 0xFF, 5},
             {&kE8m0, 0x7F400000, kRne, kSat, 0xFE, 5},
             {&kE8m0, 0xC0800000, kRne, kDef, 0x81, 0}},
            nvidia);
  EncodeOptions ml_dtypes;
  ml_dtypes.negative_into_unsigned = NegativeIntoUnsigned::kNan;
  ml_dtypes.zero_into_no_zero = ZeroIntoNoZero::kNan;
  CheckRows({{&kE8m0, 0x00000000, kRne, kDef, 0xFF, 8},
             {&kE8m0, 0xC0800000, kRne, kDef, 0xFF, 8}},
            ml_dtypes);
}

// §8.1: RNE then clamp (PTX cvt.rni), wrap modulo 2^bits (ml_dtypes, after
// truncation), negatives into unsigned clamp to 0 unless wrapping.
TEST(OracleLiteralEncode, Integers) {
  CheckRows({{&kInt8, 0x42FF0000, kRne, kDef, 0x7F, 5},
             {&kInt8, 0xC3008000, kRne, kDef, 0x80, 1},
             {&kInt8, 0x40200000, kRne, kDef, 0x02, 1},
             {&kInt8, 0xC0200000, kRne, kDef, 0xFE, 1},
             {&kInt8, 0x40200000, kRna, kDef, 0x03, 1},
             {&kInt8, 0x7F800000, kRne, kDef, 0x7F, 8},
             {&kInt8, 0x7FC00000, kRne, kDef, 0x7F, 8},
             {&kInt4, 0x40F00000, kRne, kDef, 0x7, 5},
             {&kInt4, 0xC1080000, kRne, kDef, 0x8, 1},
             {&kInt4, 0x41000000, kRtz, kWrap, 0x8, 5},
             {&kInt4, 0x41100000, kRtz, kWrap, 0x9, 5},
             {&kInt4, 0x41800000, kRtz, kWrap, 0x0, 5},
             {&kUint4, 0xC0200000, kRtz, kWrap, 0xE, 5},
             {&kUint4, 0xC0200000, kRne, kDef, 0x0, 9},
             {&kUint4, 0x41780000, kRne, kDef, 0xF, 5}});
  EncodeOptions hardware;  // PTX cvt.rni: NaN -> 0
  hardware.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
  CheckRows({{&kInt8, 0x7FC00000, kRne, kSat, 0x00, 8}}, hardware);
}

// §3.2 / §3.3 / §10.2: FP32 -> BF16 and FP16 around the top and bottom.
TEST(OracleLiteralEncode, Bf16AndFp16) {
  CheckRows({{&kBf16, 0x477FF000, kRne, kDef, 0x4780, 1},
             {&kBf16, 0x477FF000, kRtz, kDef, 0x477F, 1},
             {&kBf16, 0x7F7FFFFF, kRne, kDef, 0x7F80, 5},
             {&kBf16, 0x7F7FFFFF, kRtz, kDef, 0x7F7F, 1},
             {&kBf16, 0x7F800000, kRne, kSat, 0x7F7F, 1},
             {&kBf16, 0x00000001, kUp, kDef, 0x0001, 3},
             {&kFp16, 0x477FF000, kRne, kDef, 0x7C00, 5},
             {&kFp16, 0x477FF000, kRtz, kDef, 0x7BFF, 1},
             {&kFp16, 0x477FF000, kRne, kSat, 0x7BFF, 5},
             {&kFp16, 0x33000000, kRne, kDef, 0x0000, 3},
             {&kFp16, 0x33000001, kRne, kDef, 0x0001, 3}});
}

}  // namespace
}  // namespace lowbit
