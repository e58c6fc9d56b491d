// docs/formats-reference.md §9 row 4: what a NaN code decodes to, per profile. Literals
// from docs/formats-reference.md §4.1 (E4M3 decode), §4.2 (E5M2 decode), §3.2/§3.3 (BF16/FP16 ->
// FP32), §4.3 (FNUZ) and §10.2 (the decode line under the table).
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"

namespace lowbit {
namespace {

std::uint64_t Dec(ProfileId p, const FormatSpec& src, std::uint64_t code, const FormatSpec& dst) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(p, src, code, dst, RoundingMode::kNearestEven, &r))
      << ProfileName(p) << " " << src.name << "->" << dst.name;
  return r.code;
}

// Hopper cvt.rn.f16x2.e4m3x2/e5m2x2: every NaN -> 0x7FFF, sign dropped; Inf kept.
TEST(NanOnDecode, NvidiaFp8ToFp16Is7FFF) {
  for (ProfileId p : {ProfileId::kNvidia, ProfileId::kNvidiaNosat}) {
    EXPECT_EQ(Dec(p, kE4m3, 0x7F, kFp16), 0x7FFFu);
    EXPECT_EQ(Dec(p, kE4m3, 0xFF, kFp16), 0x7FFFu);
    EXPECT_EQ(Dec(p, kE4m3, 0xFD, kFp16), 0xDE80u);  // -416, finite
    EXPECT_EQ(Dec(p, kE5m2, 0x7C, kFp16), 0x7C00u);
    for (std::uint64_t c : {0x7D, 0x7E, 0xFD, 0xFE, 0xFF}) EXPECT_EQ(Dec(p, kE5m2, c, kFp16), 0x7FFFu);
  }
}

// cvt.f32.f16: NaN -> 0x7FFFFFFF; cvt.f32.bf16: exact bit shift
// (docs/formats-reference.md §3.2-3.3).
TEST(NanOnDecode, NvidiaFp16CanonicalBf16Preserved) {
  for (std::uint64_t c : {0x7C01, 0x7E00, 0xFE00, 0xFFFF}) {
    EXPECT_EQ(Dec(ProfileId::kNvidia, kFp16, c, kFp32), 0x7FFFFFFFu) << std::hex << c;
  }
  EXPECT_EQ(Dec(ProfileId::kNvidia, kBf16, 0xFFC0, kFp32), 0xFFC00000u);
  EXPECT_EQ(Dec(ProfileId::kNvidia, kBf16, 0xFF81, kFp32), 0xFF810000u);
  EXPECT_EQ(Dec(ProfileId::kNvidia, kBf16, 0x0001, kFp32), 0x00010000u);  // no FTZ (row 14)
  // __nv_fp8_e4m3::operator float = f16 decode then cvt.f32.f16.
  EXPECT_EQ(Dec(ProfileId::kNvidia, kE4m3, 0xFF, kFp32), 0x7FFFFFFFu);
}

// torch: E4M3 NaN -> 0x7FF00000 | sign; E5M2 0x7D -> 0x7FE00000, 0xFD -> 0xFFE00000.
TEST(NanOnDecode, PytorchCpuKeepsSignAndPayload) {
  EXPECT_EQ(Dec(ProfileId::kPytorchCpu, kE4m3, 0x7F, kFp32), 0x7FF00000u);
  EXPECT_EQ(Dec(ProfileId::kPytorchCpu, kE4m3, 0xFF, kFp32), 0xFFF00000u);
  EXPECT_EQ(Dec(ProfileId::kPytorchCpu, kE5m2, 0x7D, kFp32), 0x7FE00000u);
  EXPECT_EQ(Dec(ProfileId::kPytorchCpu, kE5m2, 0xFD, kFp32), 0xFFE00000u);
}

TEST(NanOnDecode, PytorchCudaE4m3KeepsSignAndPayload) {
  EXPECT_EQ(Dec(ProfileId::kPytorchCuda, kE4m3, 0x7F, kFp32), 0x7FF00000u);
  EXPECT_EQ(Dec(ProfileId::kPytorchCuda, kE4m3, 0xFF, kFp32), 0xFFF00000u);
}

// docs/formats-reference.md §4.2, §3.3; measured on an H200 with torch 2.11.0+cu130 by
// scripts/gpu/pytorch_profile_check: on CUDA the E5M2 NaN keeps its sign but
// not its payload (the GPU's canonical NaN, sign ORed back), and FP16 NaNs
// decode through cvt.f32.f16 to +0x7FFFFFFF.
TEST(NanOnDecode, PytorchCudaE5m2KeepsSignOnly) {
  EXPECT_EQ(Dec(ProfileId::kPytorchCuda, kE5m2, 0x7D, kFp32), 0x7FFFFFFFu);
  EXPECT_EQ(Dec(ProfileId::kPytorchCuda, kE5m2, 0xFD, kFp32), 0xFFFFFFFFu);
  EXPECT_EQ(Dec(ProfileId::kPytorchCuda, kFp16, 0xFE00, kFp32), 0x7FFFFFFFu);
}

// docs/formats-reference.md §4.3: fp8_fnuz_to_fp32_value(0x80) = 0x7F800001 (and E8M0 0xFF, §4.7
// Float8_e8m0fnu::operator float).
TEST(NanOnDecode, PytorchSingleNanIs7F800001) {
  for (ProfileId p : {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda}) {
    EXPECT_EQ(Dec(p, kE4m3Fnuz, 0x80, kFp32), 0x7F800001u);
    EXPECT_EQ(Dec(p, kE5m2Fnuz, 0x80, kFp32), 0x7F800001u);
    EXPECT_EQ(Dec(p, kE8m0, 0xFF, kFp32), 0x7F800001u);
  }
}

// ml_dtypes: quiet NaN with the sign, 0x7FC00000 | sign.
TEST(NanOnDecode, MlDtypesGivesQuietNanWithSign) {
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE4m3, 0x7F, kFp32), 0x7FC00000u);
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE4m3, 0xFF, kFp32), 0xFFC00000u);
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE5m2, 0x7D, kFp32), 0x7FC00000u);
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE5m2, 0xFF, kFp32), 0xFFC00000u);
  // docs/formats-reference.md §4.3, §4.7; measured with ml_dtypes 0.6.0 by scripts/gpu/
  // pytorch_profile_check: the FNUZ NaN 0x80 reads its top bit as the sign,
  // E8M0's 0xFF gives +NaN.
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE4m3Fnuz, 0x80, kFp32), 0xFFC00000u);
  EXPECT_EQ(Dec(ProfileId::kMlDtypes, kE8m0, 0xFF, kFp32), 0x7FC00000u);
}

}  // namespace
}  // namespace lowbit
