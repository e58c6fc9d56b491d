// Encodings typed from docs/formats-reference.md (§3.3, §4.1-4.5, §4.7, §8.1,
// §9 boundary vectors, §10.2 Hopper table) and, for the formats only ml_dtypes
// has, from ml_dtypes 0.6's finfo values, with flags worked out by hand from
// the policy.h words (inexact 1, underflow 2, overflow 4, invalid 8). Checked
// against the oracle AND the model, so that the exhaustive model == oracle
// sweeps are anchored to the documents, not only to each other. Every format
// that FP32 encodes into narrowly has rows (EveryNarrowFormatHasRows): a new
// format fails here until its ties at max, half the smallest subnormal, Inf,
// NaN and -0 are typed in.
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
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

struct Case {
  const char* name;
  EncodeOptions base;  // rounding and overflow come from each row
  std::vector<Row> rows;
};

// Options that differ from the EncodeOptions defaults.
EncodeOptions With(void (*set)(EncodeOptions&)) {
  EncodeOptions o;
  set(o);
  return o;
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      // §4.1: 464 is the tie between 448 and the missing 480 and goes to 448;
      // only values above it overflow (NaN non-saturating, 448 saturating);
      // 2^-10 is the tie at half the smallest subnormal and goes to 0; -0
      // stays -0.
      {"E4m3", {},
       {{&kE4m3, 0x43E00000, kRne, kDef, 0x7E, 0},
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
        {&kE4m3, 0xFFC00000, kRne, kDef, 0xFF, 0}}},
      // §9.2: NVIDIA drops the NaN sign.
      {"E4m3Hardware", With([](EncodeOptions& o) { o.nan_sign = NanSign::kPositive; }),
       {{&kE4m3, 0xFFC00000, kRne, kSat, 0x7F, 0}}},
      // §4.2: 61440 is the tie between 57344 (odd) and 65536, so it overflows.
      {"E5m2", {},
       {{&kE5m2, 0x47700000, kRne, kDef, 0x7C, 5},
        {&kE5m2, 0x47700000, kRne, kSat, 0x7B, 5},
        {&kE5m2, 0x476FFFFF, kRne, kDef, 0x7B, 1},
        {&kE5m2, 0x37000000, kRne, kDef, 0x00, 3},
        {&kE5m2, 0x37000001, kRne, kDef, 0x01, 3},
        {&kE5m2, 0x7F800000, kRne, kDef, 0x7C, 0}}},
      // §4.3: E4M3FNUZ 248 is the tie between 240 (odd) and 256 and becomes
      // the NaN 0x80; -0 becomes +0.
      {"E4m3Fnuz", {},
       {{&kE4m3Fnuz, 0x43780000, kRne, kDef, 0x80, 5},
        {&kE4m3Fnuz, 0x43778000, kRne, kDef, 0x7F, 1},
        {&kE4m3Fnuz, 0x80000000, kRne, kDef, 0x00, 0},
        {&kE4m3Fnuz, 0x43E00000, kRne, kDef, 0x80, 5}}},
      // §4.3: E5M2FNUZ max 57344 (0x7F) has an odd mantissa, so 61440, the tie
      // toward 65536, overflows into the NaN 0x80; -0 and negatives that round
      // to zero become +0 (no -0).
      {"E5m2Fnuz", {},
       {{&kE5m2Fnuz, 0x47600000, kRne, kDef, 0x7F, 0},
        {&kE5m2Fnuz, 0x47700000, kRne, kDef, 0x80, 5},
        {&kE5m2Fnuz, 0x47700000, kRne, kSat, 0x7F, 5},
        {&kE5m2Fnuz, 0x476FFFFF, kRne, kDef, 0x7F, 1},
        {&kE5m2Fnuz, 0x36800000, kRne, kDef, 0x00, 3},
        {&kE5m2Fnuz, 0xB6800000, kRne, kDef, 0x00, 3},
        {&kE5m2Fnuz, 0x80000000, kRne, kDef, 0x00, 0},
        {&kE5m2Fnuz, 0x7FC00000, kRne, kDef, 0x80, 0}}},
      // ml_dtypes float8_e4m3 (IEEE-style, max 240 = 0x77 with an odd
      // mantissa, Inf 0x78): 248, the tie toward 256, overflows to Inf, and so
      // does 448, OCP E4M3's max; RTZ keeps 248 finite (240: no overflow) but
      // not 256; 2^-10 is the tie at half the smallest subnormal 2^-9;
      // kTruncate NaNs keep the top 3 payload bits with the quiet bit set.
      {"E4m3Ieee", {},
       {{&kE4m3Ieee, 0x43700000, kRne, kDef, 0x77, 0},
        {&kE4m3Ieee, 0x43780000, kRne, kDef, 0x78, 5},
        {&kE4m3Ieee, 0xC3780000, kRne, kDef, 0xF8, 5},
        {&kE4m3Ieee, 0x43780000, kRne, kSat, 0x77, 5},
        {&kE4m3Ieee, 0x4377FFFF, kRne, kDef, 0x77, 1},
        {&kE4m3Ieee, 0x43780000, kRtz, kDef, 0x77, 1},
        {&kE4m3Ieee, 0x43800000, kRtz, kDef, 0x77, 5},
        {&kE4m3Ieee, 0x43E00000, kRne, kDef, 0x78, 5},
        {&kE4m3Ieee, 0x3A800000, kRne, kDef, 0x00, 3},
        {&kE4m3Ieee, 0x3A800001, kRne, kDef, 0x01, 3},
        {&kE4m3Ieee, 0x3B000000, kRne, kDef, 0x01, 0},
        {&kE4m3Ieee, 0x80000000, kRne, kDef, 0x80, 0},
        {&kE4m3Ieee, 0x7F800000, kRne, kDef, 0x78, 0},
        {&kE4m3Ieee, 0xFF800000, kRne, kDef, 0xF8, 0},
        {&kE4m3Ieee, 0x7F800000, kRne, kSat, 0x77, 1},
        {&kE4m3Ieee, 0x7FC00000, kRne, kDef, 0x7C, 0},
        {&kE4m3Ieee, 0xFFC00000, kRne, kDef, 0xFC, 0},
        {&kE4m3Ieee, 0x7FFFFFFF, kRne, kDef, 0x7F, 0}}},
      // ml_dtypes float8_e3m4 (IEEE-style, bias 3, max 15.5 = 0x6F with an odd
      // mantissa, Inf 0x70): 15.75, the tie toward 16, overflows; 2^-7 is the
      // tie at half the smallest subnormal 2^-6; 1.5 * 2^-6 ties to the even
      // 0x02; 0.2421875 ties between the largest subnormal 0x0F and the
      // smallest normal 0x10 and goes to 0x10 (tiny before rounding:
      // underflow); 1 + 2^-5 ties to 1.0 (even), 1 + 3 * 2^-5 to 0x32.
      {"E3m4", {},
       {{&kE3m4, 0x41780000, kRne, kDef, 0x6F, 0},
        {&kE3m4, 0x417C0000, kRne, kDef, 0x70, 5},
        {&kE3m4, 0xC17C0000, kRne, kDef, 0xF0, 5},
        {&kE3m4, 0x417C0000, kRne, kSat, 0x6F, 5},
        {&kE3m4, 0x417BFFFF, kRne, kDef, 0x6F, 1},
        {&kE3m4, 0x417C0000, kRtz, kDef, 0x6F, 1},
        {&kE3m4, 0x41800000, kRtz, kDef, 0x6F, 5},
        {&kE3m4, 0x41800000, kRne, kDef, 0x70, 5},
        {&kE3m4, 0x3C000000, kRne, kDef, 0x00, 3},
        {&kE3m4, 0x3C000001, kRne, kDef, 0x01, 3},
        {&kE3m4, 0x3C800000, kRne, kDef, 0x01, 0},
        {&kE3m4, 0x3CC00000, kRne, kDef, 0x02, 3},
        {&kE3m4, 0x3E780000, kRne, kDef, 0x10, 3},
        {&kE3m4, 0x3F840000, kRne, kDef, 0x30, 1},
        {&kE3m4, 0x3F840000, kRna, kDef, 0x31, 1},
        {&kE3m4, 0x3F8C0000, kRne, kDef, 0x32, 1},
        {&kE3m4, 0x80000000, kRne, kDef, 0x80, 0},
        {&kE3m4, 0x7F800000, kRne, kDef, 0x70, 0},
        {&kE3m4, 0xFF800000, kRne, kDef, 0xF0, 0},
        {&kE3m4, 0x7F800000, kRne, kSat, 0x6F, 1},
        {&kE3m4, 0x7FC00000, kRne, kDef, 0x78, 0},
        {&kE3m4, 0xFFC00000, kRne, kDef, 0xF8, 0},
        {&kE3m4, 0x7FFFFFFF, kRne, kDef, 0x7F, 0}}},
      // §4.4: FP6 has no Inf or NaN, so overflow saturates (E3M2 30 and E2M3
      // 7.75 are the ties past the odd maxima 28 and 7.5); NaN -> +max under
      // kPositiveMax (invalid), Inf -> max (inexact); -0 is 0x20.
      {"E3m2", {},
       {{&kE3m2, 0x41E00000, kRne, kDef, 0x1F, 0},
        {&kE3m2, 0x41F00000, kRne, kDef, 0x1F, 5},
        {&kE3m2, 0xC1F00000, kRne, kDef, 0x3F, 5},
        {&kE3m2, 0x41EFFFFF, kRne, kDef, 0x1F, 1},
        {&kE3m2, 0x40100000, kRne, kDef, 0x10, 1},
        {&kE3m2, 0x3D000000, kRne, kDef, 0x00, 3},
        {&kE3m2, 0x3D000001, kRne, kDef, 0x01, 3},
        {&kE3m2, 0x80000000, kRne, kDef, 0x20, 0},
        {&kE3m2, 0x7F800000, kRne, kDef, 0x1F, 1},
        {&kE3m2, 0xFFC00000, kRne, kDef, 0x1F, 8}}},
      {"E2m3", {},
       {{&kE2m3, 0x40F00000, kRne, kDef, 0x1F, 0},
        {&kE2m3, 0x40F80000, kRne, kDef, 0x1F, 5},
        {&kE2m3, 0x40F7FFFF, kRne, kDef, 0x1F, 1},
        {&kE2m3, 0x3F900000, kRne, kDef, 0x09, 0},
        {&kE2m3, 0x3F880000, kRne, kDef, 0x08, 1},
        {&kE2m3, 0x3D800000, kRne, kDef, 0x00, 3},
        {&kE2m3, 0x3D800001, kRne, kDef, 0x01, 3},
        {&kE2m3, 0x80000000, kRne, kDef, 0x20, 0},
        {&kE2m3, 0x7FC00000, kRne, kDef, 0x1F, 8}}},
      // §4.8 / PTX §5.2.3: UE4M3 has E4M3's magnitudes without a sign: 464
      // ties to 448 (even), above it overflows to the NaN 0x7F; a negative
      // input is NaN under NegativeIntoUnsigned::kNan (invalid).
      {"Ue4m3", {},
       {{&kUe4m3, 0x43E00000, kRne, kDef, 0x7E, 0},
        {&kUe4m3, 0x43E80000, kRne, kDef, 0x7E, 1},
        {&kUe4m3, 0x43E80001, kRne, kDef, 0x7F, 5},
        {&kUe4m3, 0x43E80001, kRne, kSat, 0x7E, 5},
        {&kUe4m3, 0x3F800000, kRne, kDef, 0x38, 0},
        {&kUe4m3, 0x3A800000, kRne, kDef, 0x00, 3},
        {&kUe4m3, 0xBF800000, kRne, kDef, 0x7F, 8}}},
      // §4.5 RNE tie table 0.25->0, 0.75->2, 1.25->2, 1.75->4, 2.5->4, 3.5->6,
      // 5->6; above 6 saturates (no Inf/NaN); NaN -> +6 under kPositiveMax.
      {"E2m1", {},
       {{&kE2m1, 0x3E800000, kRne, kDef, 0x0, 3},
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
        {&kE2m1, 0xFFC00000, kRne, kDef, 0x7, 8}}},
      // §4.7: E8M0 ties go up under nearest (PyTorch / ml_dtypes), 2^-127 is
      // code 0, zero clips to 2^-127 (NVIDIA) or is NaN (ml_dtypes), |x| for
      // negatives (NVIDIA) or NaN (ml_dtypes), overflow NaN (non-saturating)
      // or 0xFE.
      {"E8m0Nvidia",
       With([](EncodeOptions& o) { o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude; }),
       {{&kE8m0, 0x3FC00000, kRne, kDef, 0x80, 1},
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
        {&kE8m0, 0xC0800000, kRne, kDef, 0x81, 0}}},
      {"E8m0MlDtypes",
       With([](EncodeOptions& o) {
         o.negative_into_unsigned = NegativeIntoUnsigned::kNan;
         o.zero_into_no_zero = ZeroIntoNoZero::kNan;
       }),
       {{&kE8m0, 0x00000000, kRne, kDef, 0xFF, 8},
        {&kE8m0, 0xC0800000, kRne, kDef, 0xFF, 8}}},
      // §8.1: RNE then clamp (PTX cvt.rni), wrap modulo 2^bits (ml_dtypes,
      // after truncation), negatives into unsigned clamp to 0 unless wrapping.
      {"Integers", {},
       {{&kInt8, 0x42FF0000, kRne, kDef, 0x7F, 5},
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
        {&kUint4, 0x41780000, kRne, kDef, 0xF, 5}}},
      // PTX cvt.rni: NaN -> 0.
      {"IntegersHardware",
       With([](EncodeOptions& o) { o.nan_into_no_nan = NanIntoNoNan::kPositiveZero; }),
       {{&kInt8, 0x7FC00000, kRne, kSat, 0x00, 8}}},
      // §3.2 / §3.3 / §10.2: FP32 -> BF16 and FP16 around the top and bottom.
      {"Bf16AndFp16", {},
       {{&kBf16, 0x477FF000, kRne, kDef, 0x4780, 1},
        {&kBf16, 0x477FF000, kRtz, kDef, 0x477F, 1},
        {&kBf16, 0x7F7FFFFF, kRne, kDef, 0x7F80, 5},
        {&kBf16, 0x7F7FFFFF, kRtz, kDef, 0x7F7F, 1},
        {&kBf16, 0x7F800000, kRne, kSat, 0x7F7F, 1},
        {&kBf16, 0x00000001, kUp, kDef, 0x0001, 3},
        {&kFp16, 0x477FF000, kRne, kDef, 0x7C00, 5},
        {&kFp16, 0x477FF000, kRtz, kDef, 0x7BFF, 1},
        {&kFp16, 0x477FF000, kRne, kSat, 0x7BFF, 5},
        {&kFp16, 0x33000000, kRne, kDef, 0x0000, 3},
        {&kFp16, 0x33000001, kRne, kDef, 0x0001, 3}}},
  };
  return kCases;
}

// Readable ctest names ("... GetParam() = E3m4").
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class OracleLiteralEncode : public ::testing::TestWithParam<Case> {};

TEST_P(OracleLiteralEncode, ModelAndOracleGiveTheTypedCodeAndFlags) {
  ASSERT_FALSE(GetParam().rows.empty());
  CheckRows(GetParam().rows, GetParam().base);
}

INSTANTIATE_TEST_SUITE_P(Spec, OracleLiteralEncode, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// FP32 -> FP32 is the identity and FP64 is wider than the input: every other
// format needs typed rows, or the model == oracle sweeps over it are anchored
// to nothing but each other.
TEST(OracleLiteralEncodeCoverage, EveryNarrowFormatHasRows) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) {
    for (const Row& row : c.rows) covered.insert(row.dst->name);
  }
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits >= 32) continue;
    EXPECT_EQ(covered.count(Spec(id).name), 1u)
        << Spec(id).name << " has no literal encode rows: type its ties at max, half the "
                            "smallest subnormal, Inf, NaN and -0 from its spec here";
  }
}

}  // namespace
}  // namespace lowbit
