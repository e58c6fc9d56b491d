// docs/formats-reference.md §9 row 6: NaN into FP4/FP6 (formats without NaN), and -0.0.
// Literals from docs/formats-reference.md §4.4 and the §4.5 table (CUDA and ml_dtypes columns).
// PyTorch has no FP4/FP6 casts (row 6 names torchao and TE references, which
// are recipes, not element profiles); the ocp profile refuses NaN there.
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"
#include "profile_encode.h"

namespace lowbit {
namespace {

using ::lowbit::testing::ProfileEncodeF32;

// +NaN, -NaN, -0.0, +Inf, -Inf.
constexpr std::uint32_t kInputs[] = {0x7FC00000u, 0xFFC00000u, 0x80000000u, 0x7F800000u,
                                     0xFF800000u};

TEST(NanIntoFp4, NvidiaGivesPositiveMax) {
  const std::uint64_t want[] = {0x7, 0x7, 0x8, 0x7, 0xF};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, kInputs[i], kE2m1), want[i]) << i;
}
TEST(NanIntoFp4, MlDtypesGivesOppositeSignZero) {
  const std::uint64_t want[] = {0x8, 0x0, 0x8, 0x7, 0xF};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, kInputs[i], kE2m1), want[i]) << i;
}
TEST(NanIntoFp6, NvidiaGivesPositiveMax) {
  for (const FormatSpec* f : {&kE2m3, &kE3m2}) {
    const std::uint64_t want[] = {0x1F, 0x1F, 0x20, 0x1F, 0x3F};
    for (int i = 0; i < 5; ++i) EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, kInputs[i], *f), want[i]) << f->name << i;
  }
}
TEST(NanIntoFp6, MlDtypesGivesOppositeSignZero) {
  for (const FormatSpec* f : {&kE2m3, &kE3m2}) {
    const std::uint64_t want[] = {0x20, 0x00, 0x20, 0x1F, 0x3F};
    for (int i = 0; i < 5; ++i) EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, kInputs[i], *f), want[i]) << f->name << i;
  }
}
TEST(NanIntoFp4, PytorchAndOcpHaveNoConversion) {
  EncodeResult r;
  for (ProfileId p : {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda, ProfileId::kOcp}) {
    EXPECT_FALSE(ProfileEncode(p, kFp32, 0x7FC00000u, kE2m1, RoundingMode::kNearestEven, &r))
        << ProfileName(p);
  }
}

// The docs/formats-reference.md §4.5 RNE tie table (value -> code), the same for
// CUDA and ml_dtypes:
// 0.25->0, 0.75->2, 1.25->2, 1.75->4, 2.5->4, 3.5->6, 5->6.
TEST(E2m1Ties, NvidiaAndMlDtypesRoundToEven) {
  const std::uint32_t x[] = {0x3E800000u, 0x3F400000u, 0x3FA00000u, 0x3FE00000u,
                             0x40200000u, 0x40600000u, 0x40A00000u};
  const std::uint64_t want[] = {0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6};
  for (ProfileId p : {ProfileId::kNvidia, ProfileId::kMlDtypes, ProfileId::kOcp}) {
    for (int i = 0; i < 7; ++i) EXPECT_EQ(ProfileEncodeF32(p, x[i], kE2m1), want[i]) << ProfileName(p) << " " << i;
  }
}

}  // namespace
}  // namespace lowbit
