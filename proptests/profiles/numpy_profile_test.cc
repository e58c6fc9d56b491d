// Profile `numpy` (profiles/numpy.h): the NaN codes NumPy 2.4.6 gives, typed
// from a measurement (x.astype(np.float16) and back, on x86-64; the same
// codes NumPy's half_private.hpp FromFloatBits / FromDoubleBits / ToFloatBits
// compute), that the profile equals the model's round-to-nearest-even
// conversion on every other input, and which conversions it has. The live
// comparison with NumPy over all 2^32 FP32 inputs is
// tests/peers/test_numpy_profile.py.
#include <gtest/gtest.h>

#include <cstdint>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profiles.h"

namespace lowbit {
namespace {

constexpr RoundingMode kRne = RoundingMode::kNearestEven;

std::uint64_t Numpy(const FormatSpec& src, std::uint64_t code, const FormatSpec& dst) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(ProfileId::kNumpy, src, code, dst, kRne, &r)) << src.name << " -> " << dst.name;
  return r.code;
}

TEST(NumpyProfile, NameAndSource) {
  ProfileId id{};
  ASSERT_TRUE(FindProfile("numpy", &id));
  EXPECT_EQ(id, ProfileId::kNumpy);
  EXPECT_STREQ(ProfileName(ProfileId::kNumpy), "numpy");
}

TEST(NumpyProfile, Fp32NanKeepsItsPayloadUnquieted) {
  struct Case {
    std::uint32_t x;
    std::uint64_t fp16;
  };
  constexpr Case kCases[] = {
      {0x7F800001u, 0x7C01u},  // nothing survives: the lowest bit, not the quiet bit
      {0xFF800001u, 0xFC01u},  // with its sign
      {0x7F801FFFu, 0x7C01u},  // the 13 cut bits only
      {0x7F802000u, 0x7C01u},  // the lowest kept bit itself
      {0x7FA00000u, 0x7D00u},  // signalling, payload kept
      {0x7FC00001u, 0x7E00u},  // quiet stays quiet
      {0x7FFFFFFFu, 0x7FFFu},
      {0xFFC00000u, 0xFE00u},
  };
  for (const Case& c : kCases) EXPECT_EQ(Numpy(kFp32, c.x, kFp16), c.fp16) << std::hex << c.x;
}

TEST(NumpyProfile, Fp64NanAndDecodes) {
  EXPECT_EQ(Numpy(kFp64, 0x7FF0000000000001ull, kFp16), 0x7C01u);
  EXPECT_EQ(Numpy(kFp64, 0x7FF0040000000000ull, kFp16), 0x7C01u);
  EXPECT_EQ(Numpy(kFp64, 0x7FF00000000003FFull, kFp16), 0x7C01u);
  EXPECT_EQ(Numpy(kFp64, 0xFFF8000000000000ull, kFp16), 0xFE00u);
  // Widening keeps the payload as it is, signalling or not.
  EXPECT_EQ(Numpy(kFp16, 0x7C01u, kFp32), 0x7F802000u);
  EXPECT_EQ(Numpy(kFp16, 0xFC01u, kFp32), 0xFF802000u);
  EXPECT_EQ(Numpy(kFp16, 0x7E00u, kFp32), 0x7FC00000u);
  EXPECT_EQ(Numpy(kFp16, 0x7C01u, kFp64), 0x7FF0040000000000ull);
  EXPECT_EQ(Numpy(kFp16, 0xFD55u, kFp64), 0xFFF5540000000000ull);
}

// Off NaN the profile is the model's default conversion: every FP16 code
// widened, and FP32 inputs on a stride through all 2^32 plus every word
// whose low 13 bits sit at a rounding edge (0, 1, half - 1, half, half + 1,
// all ones) for each high 19-bit pattern.
TEST(NumpyProfile, EqualsRoundToNearestEvenOffNan) {
  for (std::uint64_t h = 0; h < 0x10000; ++h) {
    if (DecodeToF64(kFp16, h) != DecodeToF64(kFp16, h)) continue;
    EXPECT_EQ(Numpy(kFp16, h, kFp32), Convert(kFp16, h, kFp32).code) << std::hex << h;
    EXPECT_EQ(Numpy(kFp16, h, kFp64), Convert(kFp16, h, kFp64).code) << std::hex << h;
  }
  std::uint64_t compared = 0;
  const auto compare = [&](std::uint32_t x) {
    if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0) return;  // NaN
    ASSERT_EQ(Numpy(kFp32, x, kFp16), Convert(kFp32, x, kFp16).code) << std::hex << x;
    ++compared;
  };
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += 65521) compare(static_cast<std::uint32_t>(x));
  for (std::uint32_t high = 0; high < (1u << 19); ++high) {
    for (std::uint32_t low : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu}) compare(high << 13 | low);
  }
  EXPECT_GT(compared, 3000000u);
}

// NumPy's own casts only: FP32 / FP64 <-> FP16, round to nearest even.
TEST(NumpyProfile, HasOnlyNumpysOwnFloat16Casts) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kFp16, kRne, &r));
  EXPECT_TRUE(ProfileEncode(ProfileId::kNumpy, kFp64, 0, kFp16, kRne, &r));
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kFp16, RoundingMode::kTowardZero, &r));
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kBf16, kRne, &r));  // ml_dtypes' type
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kE4m3, kRne, &r));
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kInt8, kRne, &r));  // a C cast
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kFp32, 0, kFp64, kRne, &r));  // the CPU's cast
  EXPECT_FALSE(ProfileEncode(ProfileId::kNumpy, kBf16, 0, kFp16, kRne, &r));
}

}  // namespace
}  // namespace lowbit
