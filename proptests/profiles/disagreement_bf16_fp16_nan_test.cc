// docs/formats-reference.md §9 row 5: the NaN an FP32 -> BF16 / FP16 encode produces.
// Literals from docs/formats-reference.md §3.2 and §3.3 [PROBE] and §10.2 (NaN row).
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"
#include "profile_encode.h"

namespace lowbit {
namespace {

using ::lowbit::testing::ProfileEncodeF32;

constexpr std::uint32_t kNans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                                   0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu};

TEST(NanOnBf16Encode, NvidiaGives7FFF) {
  for (std::uint32_t x : kNans) EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, x, kBf16), 0x7FFFu) << std::hex << x;
}
TEST(NanOnBf16Encode, PytorchCudaGives7FFF) {
  for (std::uint32_t x : kNans) EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCuda, x, kBf16), 0x7FFFu) << std::hex << x;
}
TEST(NanOnBf16Encode, PytorchCpuGivesFFFF) {
  for (std::uint32_t x : kNans) EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCpu, x, kBf16), 0xFFFFu) << std::hex << x;
}
TEST(NanOnBf16Encode, MlDtypesGives7FC0WithSign) {
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x7F800001u, kBf16), 0x7FC0u);
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0xFF800001u, kBf16), 0xFFC0u);
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x7FFFFFFFu, kBf16), 0x7FC0u);
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0xFFFFFFFFu, kBf16), 0xFFC0u);
}

TEST(NanOnFp16Encode, NvidiaGives7FFF) {
  for (std::uint32_t x : kNans) EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, x, kFp16), 0x7FFFu) << std::hex << x;
}
TEST(NanOnFp16Encode, PytorchCudaGives7FFF) {
  for (std::uint32_t x : kNans) EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCuda, x, kFp16), 0x7FFFu) << std::hex << x;
}
// 0x7F800001 -> 0x7E00, 0xFF800001 -> 0xFE00, 0x7F807FFF -> 0x7E03.
TEST(NanOnFp16Encode, PytorchCpuKeepsSignAndTopPayload) {
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCpu, 0x7F800001u, kFp16), 0x7E00u);
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCpu, 0xFF800001u, kFp16), 0xFE00u);
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kPytorchCpu, 0x7F807FFFu, kFp16), 0x7E03u);
}
// docs/formats-reference.md §3.2, §4.1; measured (H200, torch 2.11.0+cu130, scripts/gpu/
// pytorch_profile_check): torch casts other dtypes through float, so the
// source's NaN decode shows through. CPU FP16 -> BF16 uses the scalar
// c10::BFloat16 path (0x7FC0 for every NaN); CUDA FP16 -> FP8 loses the sign.
TEST(NanThroughFloat, PytorchCpuFp16ToBf16Gives7FC0) {
  EncodeResult r;
  for (std::uint64_t h : {0x7C01, 0x7E00, 0xFC01, 0xFFFF}) {
    ASSERT_TRUE(ProfileEncode(ProfileId::kPytorchCpu, kFp16, h, kBf16, RoundingMode::kNearestEven, &r));
    EXPECT_EQ(r.code, 0x7FC0u) << std::hex << h;
  }
}
TEST(NanThroughFloat, PytorchCudaFp16ToFp8LosesSign) {
  EncodeResult r;
  ASSERT_TRUE(ProfileEncode(ProfileId::kPytorchCuda, kFp16, 0xFC01, kE4m3, RoundingMode::kNearestEven, &r));
  EXPECT_EQ(r.code, 0x7Fu);
  ASSERT_TRUE(ProfileEncode(ProfileId::kPytorchCuda, kFp16, 0xFC01, kE5m2, RoundingMode::kNearestEven, &r));
  EXPECT_EQ(r.code, 0x7Fu);
  ASSERT_TRUE(ProfileEncode(ProfileId::kPytorchCpu, kFp16, 0xFC01, kE4m3, RoundingMode::kNearestEven, &r));
  EXPECT_EQ(r.code, 0xFFu);
}

// ml_dtypes has no float16 of its own (numpy's); the profile has no such cast.
TEST(NanOnFp16Encode, MlDtypesHasNoConversion) {
  EncodeResult r;
  EXPECT_FALSE(ProfileEncode(ProfileId::kMlDtypes, kFp32, 0x7FC00000u, kFp16,
                             RoundingMode::kNearestEven, &r));
}

// Non-NaN results agree (docs/formats-reference.md §3.2: "Non-NaN results of all three agree"):
// 65520 is the FP16 tie that goes to Inf; BF16 RN of FLT_MAX is Inf.
TEST(NanOnBf16Encode, NonNanResultsAgree) {
  for (ProfileId p : {ProfileId::kNvidia, ProfileId::kPytorchCpu, ProfileId::kPytorchCuda,
                      ProfileId::kMlDtypes}) {
    EXPECT_EQ(ProfileEncodeF32(p, 0x7F7FFFFFu, kBf16), 0x7F80u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x477FF000u, kBf16), 0x4780u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x80000001u, kBf16), 0x8000u) << ProfileName(p);
  }
  for (ProfileId p : {ProfileId::kNvidia, ProfileId::kPytorchCpu, ProfileId::kPytorchCuda}) {
    EXPECT_EQ(ProfileEncodeF32(p, 0x477FF000u, kFp16), 0x7C00u) << ProfileName(p);
    EXPECT_EQ(ProfileEncodeF32(p, 0x477FEFFFu, kFp16), 0x7BFFu) << ProfileName(p);
  }
}

}  // namespace
}  // namespace lowbit
