// docs/formats-reference.md §9 row 12 (element casts to integers), literals from
// docs/formats-reference.md §8.1 and the s8 / s8z columns of §10.2. Quantizer
// scale conventions (the rest of row 12) belong to the recipes, not to element
// profiles.
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/profiles/profiles.h"
#include "profile_encode.h"

namespace lowbit {
namespace {

using ::lowbit::testing::ProfileEncodeF32;

// cvt.rni.s8.f32: RNE then saturate to [-128, 127], NaN -> 0 [HW-verified].
TEST(IntCast, NvidiaRoundsEvenAndSaturates) {
  struct Case {
    std::uint32_t x;
    std::uint64_t rni, rzi;
  };
  const Case cases[] = {
      {0x42FF0000u, 0x7F, 0x7F},  // 127.5
      {0xC3008000u, 0x80, 0x80},  // -128.5
      {0x40200000u, 0x02, 0x02},  // 2.5
      {0xC0200000u, 0xFE, 0xFE},  // -2.5
      {0x40600000u, 0x04, 0x03},  // 3.5
      {0x43E80000u, 0x7F, 0x7F},  // 464
      {0x7F800000u, 0x7F, 0x7F},  // +Inf
      {0xFF800000u, 0x80, 0x80},  // -Inf
      {0x7FC00000u, 0x00, 0x00},  // NaN
      {0xFFFFFFFFu, 0x00, 0x00},  // -NaN
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, c.x, kInt8, RoundingMode::kNearestEven), c.rni) << std::hex << c.x;
    EXPECT_EQ(ProfileEncodeF32(ProfileId::kNvidia, c.x, kInt8, RoundingMode::kTowardZero), c.rzi) << std::hex << c.x;
  }
}

// ml_dtypes astype(int4/uint4): truncate toward zero, then wrap modulo 16:
// 8.0 -> -8, 9.0 -> -7, 16 -> 0, -9 -> 7; uint4: -2.5 -> 14.
TEST(IntCast, MlDtypesTruncatesAndWraps) {
  constexpr RoundingMode kRz = RoundingMode::kTowardZero;
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x41000000u, kInt4, kRz), 0x8u);  // 8.0
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x41100000u, kInt4, kRz), 0x9u);  // 9.0
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x41800000u, kInt4, kRz), 0x0u);  // 16.0
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0xC1100000u, kInt4, kRz), 0x7u);  // -9.0
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0x40F00000u, kInt4, kRz), 0x7u);  // 7.5
  EXPECT_EQ(ProfileEncodeF32(ProfileId::kMlDtypes, 0xC0200000u, kUint4, kRz), 0xEu);  // -2.5
}

// torch .to(int8) truncates and wraps device-dependently (CPU 200 -> -56,
// CUDA Inf -> -1): the profiles have no such conversion rather than a guess.
TEST(IntCast, PytorchHasNoConversion) {
  EncodeResult r;
  for (ProfileId p : {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda}) {
    for (RoundingMode m : {RoundingMode::kNearestEven, RoundingMode::kTowardZero}) {
      EXPECT_FALSE(ProfileEncode(p, kFp32, 0x43480000u, kInt8, m, &r)) << ProfileName(p);
    }
  }
}

}  // namespace
}  // namespace lowbit
