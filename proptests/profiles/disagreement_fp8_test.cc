// docs/formats-reference.md §9 rows 1-3 (FP32 -> FP8 overflow, Inf and NaN), one test per
// profile. Expected codes are the literals of docs/formats-reference.md §4.1 (E4M3 table), §4.2
// and §9; the `ocp` expectations follow the profile's stated choice (OFP8
// non-saturating mode, see profiles/ocp.h).
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"
#include "profile_encode.h"

namespace lowbit {
namespace {

using ::lowbit::testing::ProfileEncodeF32;

// Row 1 inputs: just above the 464 tie, 480, FLT_MAX, +Inf, -Inf, -(464+ulp).
constexpr std::uint32_t kE4m3Overflows[] = {0x43E80001u, 0x43F00000u, 0x7F7FFFFFu,
                                            0x7F800000u, 0xFF800000u, 0xC3E80001u};
constexpr std::uint64_t kSaturated[] = {0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0xFE};
constexpr std::uint64_t kNanWithSign[] = {0x7F, 0x7F, 0x7F, 0x7F, 0xFF, 0xFF};

void ExpectE4m3Overflow(ProfileId p, const std::uint64_t* expected) {
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ProfileEncodeF32(p, kE4m3Overflows[i], kE4m3), expected[i]) << std::hex << kE4m3Overflows[i];
  }
}

TEST(E4m3Overflow, NvidiaSaturatesTo448) { ExpectE4m3Overflow(ProfileId::kNvidia, kSaturated); }
TEST(E4m3Overflow, NvidiaNosatGivesNanWithSign) {
  ExpectE4m3Overflow(ProfileId::kNvidiaNosat, kNanWithSign);
}
TEST(E4m3Overflow, PytorchCpuGivesNanWithSign) {
  ExpectE4m3Overflow(ProfileId::kPytorchCpu, kNanWithSign);
}
TEST(E4m3Overflow, PytorchCudaGivesNanWithSign) {
  ExpectE4m3Overflow(ProfileId::kPytorchCuda, kNanWithSign);
}
TEST(E4m3Overflow, MlDtypesGivesNanWithSign) {
  ExpectE4m3Overflow(ProfileId::kMlDtypes, kNanWithSign);
}
TEST(E4m3Overflow, OcpNonSaturatingGivesNanWithSign) {
  ExpectE4m3Overflow(ProfileId::kOcp, kNanWithSign);
}

// "Boundary 464 rounds to 448 everywhere" (row 1); 448 < |x| < 464 as well.
TEST(E4m3Overflow, TieAt464RoundsTo448InEveryProfile) {
  for (ProfileId p : kAllProfiles) {
    if (p == ProfileId::kNumpy) continue;  // NumPy has no E4M3 (ml_dtypes' type)
    EXPECT_EQ(ProfileEncodeF32(p, 0x43E80000u, kE4m3), 0x7Eu) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x43E7FFFFu, kE4m3), 0x7Eu) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0xC3E80000u, kE4m3), 0xFEu) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x80000000u, kE4m3), 0x80u) << ProfileName(p);  // -0.0, §4.1 table
  }
}

// Row 2: the sign of a NaN. +NaN and -NaN with several payloads.
constexpr std::uint32_t kPositiveNans[] = {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu};
constexpr std::uint32_t kNegativeNans[] = {0xFFC00000u, 0xFF800001u, 0xFFFFFFFFu};

void ExpectFp8Nan(ProfileId p, const FormatSpec& dst, std::uint64_t positive,
                  std::uint64_t negative) {
  for (std::uint32_t x : kPositiveNans) EXPECT_EQ(ProfileEncodeF32(p, x, dst), positive) << std::hex << x;
  for (std::uint32_t x : kNegativeNans) EXPECT_EQ(ProfileEncodeF32(p, x, dst), negative) << std::hex << x;
}

TEST(NanSignOnFp8Encode, NvidiaGivesPositive7F) {
  ExpectFp8Nan(ProfileId::kNvidia, kE4m3, 0x7F, 0x7F);
  ExpectFp8Nan(ProfileId::kNvidia, kE5m2, 0x7F, 0x7F);
}
TEST(NanSignOnFp8Encode, NvidiaNosatGivesPositive7F) {
  ExpectFp8Nan(ProfileId::kNvidiaNosat, kE4m3, 0x7F, 0x7F);
  ExpectFp8Nan(ProfileId::kNvidiaNosat, kE5m2, 0x7F, 0x7F);
}
TEST(NanSignOnFp8Encode, PytorchCpuKeepsSign) {
  ExpectFp8Nan(ProfileId::kPytorchCpu, kE4m3, 0x7F, 0xFF);
  ExpectFp8Nan(ProfileId::kPytorchCpu, kE5m2, 0x7F, 0xFF);
}
TEST(NanSignOnFp8Encode, PytorchCudaKeepsSign) {
  ExpectFp8Nan(ProfileId::kPytorchCuda, kE4m3, 0x7F, 0xFF);
  ExpectFp8Nan(ProfileId::kPytorchCuda, kE5m2, 0x7F, 0xFF);
}
// Row 3: ml_dtypes' E5M2 NaN is its quiet NaN 0x7E | sign.
TEST(NanSignOnFp8Encode, MlDtypesKeepsSign) {
  ExpectFp8Nan(ProfileId::kMlDtypes, kE4m3, 0x7F, 0xFF);
  ExpectFp8Nan(ProfileId::kMlDtypes, kE5m2, 0x7E, 0xFE);
}

// Row 3: E5M2 overflow. 61440 is the tie between 57344 and 65536 and goes up.
constexpr std::uint32_t kE5m2Inputs[] = {0x476FFFFFu, 0x47700000u, 0x477FF000u,
                                         0x7F800000u, 0xFF800000u, 0xC7700000u};

void ExpectE5m2(ProfileId p, const std::uint64_t (&expected)[6]) {
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ProfileEncodeF32(p, kE5m2Inputs[i], kE5m2), expected[i]) << std::hex << kE5m2Inputs[i];
  }
}

TEST(E5m2Overflow, NvidiaSaturatesInfTo57344) {
  ExpectE5m2(ProfileId::kNvidia, {0x7B, 0x7B, 0x7B, 0x7B, 0xFB, 0xFB});
}
TEST(E5m2Overflow, NvidiaNosatGivesInf) {
  ExpectE5m2(ProfileId::kNvidiaNosat, {0x7B, 0x7C, 0x7C, 0x7C, 0xFC, 0xFC});
}
TEST(E5m2Overflow, PytorchCpuGivesInf) {
  ExpectE5m2(ProfileId::kPytorchCpu, {0x7B, 0x7C, 0x7C, 0x7C, 0xFC, 0xFC});
}
TEST(E5m2Overflow, PytorchCudaGivesInf) {
  ExpectE5m2(ProfileId::kPytorchCuda, {0x7B, 0x7C, 0x7C, 0x7C, 0xFC, 0xFC});
}
TEST(E5m2Overflow, MlDtypesGivesInf) {
  ExpectE5m2(ProfileId::kMlDtypes, {0x7B, 0x7C, 0x7C, 0x7C, 0xFC, 0xFC});
}

// docs/formats-reference.md §4.3: FNUZ (PyTorch == ml_dtypes): NaN, Inf and overflow -> 0x80;
// 248 is the E4M3FNUZ tie and goes to NaN; -0.0 -> 0x00.
TEST(FnuzEncode, PytorchAndMlDtypesAgree) {
  for (ProfileId p : {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda, ProfileId::kMlDtypes}) {
    EXPECT_EQ(ProfileEncodeF32(p, 0x43780000u, kE4m3Fnuz), 0x80u) << ProfileName(p);  // 248
    EXPECT_EQ(ProfileEncodeF32(p, 0x4377E666u, kE4m3Fnuz), 0x7Fu) << ProfileName(p);  // 247.9
    EXPECT_EQ(ProfileEncodeF32(p, 0x43E00000u, kE4m3Fnuz), 0x80u) << ProfileName(p);  // 448
    EXPECT_EQ(ProfileEncodeF32(p, 0x7F800000u, kE4m3Fnuz), 0x80u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0xFFC00000u, kE4m3Fnuz), 0x80u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x80000000u, kE4m3Fnuz), 0x00u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x47700000u, kE5m2Fnuz), 0x80u) << ProfileName(p);  // 61440
    EXPECT_EQ(ProfileEncodeF32(p, 0x47600000u, kE5m2Fnuz), 0x7Fu) << ProfileName(p);  // 57344
  }
}

}  // namespace
}  // namespace lowbit
