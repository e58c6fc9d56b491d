// docs/formats-reference.md §9 rows 7 and 14: FP32 -> E8M0 per profile, literals from the
// docs/formats-reference.md §4.7 table, and E8M0 code 0 (2^-127, an FP32 subnormal) surviving
// the decode (no FTZ).
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"
#include "profile_encode.h"

namespace lowbit {
namespace {

constexpr RoundingMode kRn = RoundingMode::kNearestEven;
constexpr RoundingMode kRz = RoundingMode::kTowardZero;
constexpr RoundingMode kRp = RoundingMode::kUp;

using ::lowbit::testing::ProfileEncodeF32;

// Inputs (FP32 bits) and the docs/formats-reference.md §4.7 columns.
struct Row {
  const char* what;
  std::uint32_t x;
  std::uint64_t rz_sat, rp_sat, rz_nosat, rp_nosat, pytorch, ml_dtypes;
};
constexpr Row kRows[] = {
    //  what                        x            RZ    RP   RZns  RPns  torch  mld
    {"3.0 (tie 1.5*2^1)", 0x40400000u, 0x80, 0x81, 0x80, 0x81, 0x81, 0x81},
    {"2.9999998", 0x403FFFFFu, 0x80, 0x81, 0x80, 0x81, 0x80, 0x80},
    {"+0", 0x00000000u, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF},
    {"-0", 0x80000000u, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF},
    {"-4 (uses |x|)", 0xC0800000u, 0x81, 0x81, 0x81, 0x81, 0x81, 0xFF},
    {"2^127", 0x7F000000u, 0xFE, 0xFE, 0xFE, 0xFE, 0xFE, 0xFE},
    {"2^127+ulp", 0x7F000001u, 0xFE, 0xFE, 0xFE, 0xFF, 0xFE, 0xFE},
    {"1.5*2^127", 0x7F400000u, 0xFE, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF},
    {"+Inf", 0x7F800000u, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF},
    {"-Inf", 0xFF800000u, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF},
    {"NaN", 0x7FC00000u, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
    {"2^-127", 0x00400000u, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
    {"2^-127+ (subnormal quirk)", 0x00400001u, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01},
    {"2^-149", 0x00000001u, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
};

TEST(E8m0Encode, NvidiaHasOnlyRzAndRpOnMagnitude) {
  for (const Row& r : kRows) {
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, r.x, kE8m0, kRz), r.rz_sat) << r.what;
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, r.x, kE8m0, kRp), r.rp_sat) << r.what;
  }
  EncodeResult out;
  EXPECT_FALSE(ProfileEncode(ProfileId::kNvidia, kFp32, 0x40400000u, kE8m0, kRn, &out));
}
TEST(E8m0Encode, NvidiaNosatOverflowsToNan) {
  for (const Row& r : kRows) {
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidiaNosat, r.x, kE8m0, kRz), r.rz_nosat) << r.what;
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidiaNosat, r.x, kE8m0, kRp), r.rp_nosat) << r.what;
  }
}
TEST(E8m0Encode, PytorchRoundsNearestTiesUpWithSubnormalQuirk) {
  for (const Row& r : kRows) {
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCpu, r.x, kE8m0, kRn), r.pytorch) << r.what;
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCuda, r.x, kE8m0, kRn), r.pytorch) << r.what;
  }
}
TEST(E8m0Encode, MlDtypesMapsZeroAndNegativesToNan) {
  for (const Row& r : kRows) EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, r.x, kE8m0, kRn), r.ml_dtypes) << r.what;
}

// Row 14: code 0 is 2^-127 = FP32 0x00400000 (subnormal), BF16 0x0040; no
// profile flushes it ([CUDA-fp8] __internal_e8m0_to_bf16, [PT] operator float).
TEST(E8m0Code0Decode, StaysSubnormalInEveryProfile) {
  for (ProfileId p : kAllProfiles) {
    if (p == ProfileId::kNumpy) continue;  // NumPy has no E8M0 (ml_dtypes' type)
    std::uint32_t bits = 0;
    ASSERT_TRUE(ProfileDecodeToF32Bits(p, kE8m0, 0x00, &bits)) << ProfileName(p);
    EXPECT_EQ(bits, 0x00400000u) << ProfileName(p);
  }
  EncodeResult r;
  ASSERT_TRUE(ProfileEncode(ProfileId::kNvidia, kE8m0, 0x00, kBf16, kRn, &r));
  EXPECT_EQ(r.code, 0x0040u);
  ASSERT_TRUE(ProfileEncode(ProfileId::kNvidia, kE8m0, 0xFF, kBf16, kRn, &r));
  EXPECT_EQ(r.code, 0x7FFFu);
}

}  // namespace
}  // namespace lowbit
