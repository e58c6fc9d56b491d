// The `pytorch-cpu-2.15` profile (PyTorch 2.15 CPU casts): the saturating
// float8_e4m3fn cast of pytorch/pytorch PR #178817 and nothing else changed
// from `pytorch-cpu` (PyTorch 2.11). Expected codes are literals worked out
// from torch/headeronly/util/Float8_e4m3fn.h fp8e4m3fn_from_fp32_value at
// torch 2.15.0: |x| >= 480 (0x43F00000) and +-Inf -> 0x7E|s, a rounding carry
// into 0x7F (464 < |x| < 480) -> 0x7E|s, NaN -> 0x7F|s; docs/formats-reference.md §4.1 for
// the E4M3 table. The live comparison with torch is tests/peers/test_torch_casts.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "lowbit/formats/profiles/profiles.h"

namespace lowbit {
namespace {

constexpr RoundingMode kRne = RoundingMode::kNearestEven;

std::uint64_t Enc(ProfileId p, const FormatSpec& src, std::uint64_t code, const FormatSpec& dst) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(p, src, code, dst, kRne, &r)) << ProfileName(p) << " " << dst.name;
  return r.code;
}

TEST(PytorchCpu215, NameVersionAndAlias) {
  ProfileId id{};
  ASSERT_TRUE(FindProfile("pytorch-cpu-2.15", &id));
  EXPECT_EQ(id, ProfileId::kPytorchCpu215);
  ASSERT_TRUE(FindProfile("torch-cpu-2.15", &id));
  EXPECT_EQ(id, ProfileId::kPytorchCpu215);
  EXPECT_NE(std::string_view(ProfileSource(ProfileId::kPytorchCpu215)).find("2.15.0"), std::string_view::npos);
  EXPECT_NE(std::string_view(ProfileSource(ProfileId::kPytorchCpu215)).find("178817"), std::string_view::npos);
}

TEST(PytorchCpu215, E4m3FromFp32Saturates) {
  struct Case {
    std::uint32_t x;
    std::uint64_t code;
  };
  constexpr Case kCases[] = {
      {0x43E00000u, 0x7E},  // 448
      {0x43E80000u, 0x7E},  // 464, the tie: even is 448
      {0x43E80001u, 0x7E},  // just above the tie: the carry into 0x7F saturates
      {0x43EFFFFFu, 0x7E},  // just below 480
      {0x43F00000u, 0x7E},  // 480, fp8_max in the source
      {0x7F7FFFFFu, 0x7E},  // FLT_MAX
      {0x7F800000u, 0x7E},  // +Inf
      {0xFF800000u, 0xFE},  // -Inf
      {0xC3F00000u, 0xFE},  // -480
      {0x7FC00000u, 0x7F},  // NaN keeps its sign
      {0xFFC00000u, 0xFF},
      {0x7F800001u, 0x7F},
      {0xFF800001u, 0xFF},
      {0x3F800000u, 0x38},  // 1.0, unchanged
      {0x3B000000u, 0x01},  // 2^-9, the smallest subnormal
      {0x80000000u, 0x80},  // -0
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kFp32, c.x, kE4m3), c.code) << std::hex << c.x;
  }
}

TEST(PytorchCpu215, E4m3From16BitSourcesSaturatesThroughFloat) {
  // FP16 and BF16 go through float (c10 static_cast<float>), so the same rule.
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kFp16, 0x5F80u, kE4m3), 0x7Eu);  // 480
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kFp16, 0x7C00u, kE4m3), 0x7Eu);  // +Inf
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kFp16, 0xFC00u, kE4m3), 0xFEu);  // -Inf
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kFp16, 0xFE00u, kE4m3), 0xFFu);  // -NaN
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kBf16, 0x43F0u, kE4m3), 0x7Eu);  // 480
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kBf16, 0xFF80u, kE4m3), 0xFEu);  // -Inf
  EXPECT_EQ(Enc(ProfileId::kPytorchCpu215, kBf16, 0x7FC0u, kE4m3), 0x7Fu);  // NaN
}

// Every other conversion is pytorch-cpu's: every code of every 8-bit torch
// dtype decoded and every 8/16-bit source into every torch dtype, plus the
// FP32 inputs of the table above, agree with pytorch-cpu except E4M3 overflow.
TEST(PytorchCpu215, EverythingElseIsPytorchCpu) {
  const FormatSpec* formats[] = {&kE4m3, &kE5m2, &kE4m3Fnuz, &kE5m2Fnuz, &kE8m0, &kBf16, &kFp16};
  int e4m3_differences = 0;
  for (const FormatSpec* src : formats) {
    const std::uint64_t codes = std::uint64_t{1} << src->total_bits;
    for (const FormatSpec* dst : {&kFp32, &kE4m3, &kE5m2, &kE4m3Fnuz, &kE5m2Fnuz, &kE8m0, &kBf16, &kFp16}) {
      for (std::uint64_t code = 0; code < codes; ++code) {
        EncodeResult old_r;
        EncodeResult new_r;
        const bool old_ok = ProfileEncode(ProfileId::kPytorchCpu, *src, code, *dst, kRne, &old_r);
        const bool new_ok = ProfileEncode(ProfileId::kPytorchCpu215, *src, code, *dst, kRne, &new_r);
        ASSERT_EQ(old_ok, new_ok) << src->name << "->" << dst->name << " " << code;
        if (!old_ok || old_r.code == new_r.code) continue;
        // The one allowed difference: 2.11's overflow NaN became +-448.
        ASSERT_EQ(dst, &kE4m3) << src->name << "->" << dst->name << " " << std::hex << code;
        ASSERT_EQ(old_r.code & 0x7F, 0x7Fu) << src->name << " " << std::hex << code;
        ASSERT_EQ(new_r.code, (old_r.code & 0x80) | 0x7E) << src->name << " " << std::hex << code;
        ++e4m3_differences;
      }
    }
  }
  EXPECT_GT(e4m3_differences, 0);
}

}  // namespace
}  // namespace lowbit
