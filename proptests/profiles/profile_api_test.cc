// The profile API the CLI calls (profiles.h): names, lookup, which
// conversions each implementation has, the NanPayload::kPreserve policy added
// for bit-shift decodes, and the E8M0 subnormal quirk. Expected values are
// literals from docs/formats-reference.md (section cited per test).
#include "lowbit/formats/profiles/profiles.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

namespace lowbit {
namespace {

constexpr RoundingMode kRne = RoundingMode::kNearestEven;

std::uint64_t Enc(ProfileId p, const FormatSpec& src, std::uint64_t code, const FormatSpec& dst,
                  RoundingMode mode = kRne) {
  EncodeResult r;
  EXPECT_TRUE(ProfileEncode(p, src, code, dst, mode, &r))
      << ProfileName(p) << " " << src.name << "->" << dst.name;
  return r.code;
}

bool Has(ProfileId p, const FormatSpec& dst, RoundingMode mode) {
  EncodeOptions o;
  return ProfileEncodeOptions(p, dst, mode, &o);
}

TEST(ProfileNames, AreUniqueAndFoundBack) {
  std::set<std::string> names;
  for (ProfileId p : kAllProfiles) {
    const std::string name = ProfileName(p);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_GT(std::string(ProfileSource(p)).size(), 20u) << name;
    ProfileId found{};
    ASSERT_TRUE(FindProfile(name, &found)) << name;
    EXPECT_EQ(found, p);
  }
  EXPECT_EQ(names.size(), 8u);  // ... pytorch-cpu-2.15 and numpy
  ProfileId found{};
  EXPECT_FALSE(FindProfile("pytorch", &found));  // ambiguous: CPU and CUDA differ
  EXPECT_TRUE(FindProfile("ml-dtypes", &found));
  EXPECT_EQ(found, ProfileId::kMlDtypes);
}

TEST(ProfileApi, IsConstexpr) {
  static_assert([] {
    EncodeResult r;
    return ProfileEncode(ProfileId::kNvidia, kFp32, 0x7F800000u, kE4m3, RoundingMode::kNearestEven,
                         &r) &&
           r.code == 0x7E;
  }());
  SUCCEED();
}

// docs/formats-reference.md §2: FP8 has only cvt.rn; E8M0 only .rz/.rp; FP4/FP6 headers take
// cudaRoundNearest and cudaRoundZero.
TEST(ProfileSupport, NvidiaHasOnlyTheHardwareRoundings) {
  for (ProfileId p : {ProfileId::kNvidia, ProfileId::kNvidiaNosat}) {
    EXPECT_TRUE(Has(p, kE4m3, kRne));
    EXPECT_FALSE(Has(p, kE4m3, RoundingMode::kTowardZero));
    EXPECT_FALSE(Has(p, kE5m2, RoundingMode::kUp));
    EXPECT_TRUE(Has(p, kE8m0, RoundingMode::kTowardZero));
    EXPECT_TRUE(Has(p, kE8m0, RoundingMode::kUp));
    EXPECT_FALSE(Has(p, kE8m0, kRne));
    EXPECT_TRUE(Has(p, kE2m1, RoundingMode::kTowardZero));
    EXPECT_FALSE(Has(p, kE2m1, RoundingMode::kUp));
    for (RoundingMode m : {kRne, RoundingMode::kTowardZero, RoundingMode::kUp, RoundingMode::kDown}) {
      EXPECT_TRUE(Has(p, kBf16, m));
      EXPECT_TRUE(Has(p, kFp16, m));
      EXPECT_TRUE(Has(p, kInt8, m));
    }
    EXPECT_FALSE(Has(p, kBf16, RoundingMode::kStochastic));
    EXPECT_FALSE(Has(p, kE4m3Fnuz, kRne));
    EXPECT_FALSE(Has(p, kUe4m3, kRne));
    EXPECT_FALSE(Has(p, kInt4, kRne));
  }
}

// docs/formats-reference.md §8.1 (.to(int8) is UB-dependent) and §4.5 (no torch FP4 casts).
TEST(ProfileSupport, PytorchHasNoIntegerOrFp4Casts) {
  for (ProfileId p : {ProfileId::kPytorchCpu, ProfileId::kPytorchCuda}) {
    EXPECT_FALSE(Has(p, kInt8, kRne));
    EXPECT_FALSE(Has(p, kInt4, RoundingMode::kTowardZero));
    EXPECT_FALSE(Has(p, kE2m1, kRne));
    EXPECT_FALSE(Has(p, kE2m3, kRne));
    EXPECT_FALSE(Has(p, kE4m3, RoundingMode::kTowardZero));
    EXPECT_TRUE(Has(p, kE4m3, kRne));
    EXPECT_TRUE(Has(p, kE4m3Fnuz, kRne));
    EXPECT_TRUE(Has(p, kE8m0, kRne));
    EXPECT_FALSE(Has(p, kE8m0, RoundingMode::kUp));
    EncodeResult r;
    EXPECT_FALSE(ProfileEncode(p, kFp32, 0x3F800000u, kInt8, RoundingMode::kTowardZero, &r));
  }
}

TEST(ProfileSupport, MlDtypesInt4IsTruncationOnly) {
  EXPECT_TRUE(Has(ProfileId::kMlDtypes, kInt4, RoundingMode::kTowardZero));
  EXPECT_FALSE(Has(ProfileId::kMlDtypes, kInt4, kRne));
  EXPECT_FALSE(Has(ProfileId::kMlDtypes, kFp16, kRne));  // numpy's type
  EXPECT_FALSE(Has(ProfileId::kMlDtypes, kInt8, kRne));
  EncodeResult r;
  // static_cast<int8_t>(NaN / Inf) is undefined: no conversion.
  EXPECT_FALSE(ProfileEncode(ProfileId::kMlDtypes, kFp32, 0x7FC00000u, kInt4,
                             RoundingMode::kTowardZero, &r));
  EXPECT_FALSE(ProfileEncode(ProfileId::kMlDtypes, kFp32, 0x7F800000u, kUint4,
                             RoundingMode::kTowardZero, &r));
}

TEST(ProfileSupport, OcpRefusesWhatTheSpecLeavesOpen) {
  EncodeResult r;
  EXPECT_FALSE(ProfileEncode(ProfileId::kOcp, kFp32, 0x7FC00000u, kE2m1, kRne, &r));
  EXPECT_FALSE(ProfileEncode(ProfileId::kOcp, kFp32, 0x00000000u, kE8m0,
                             RoundingMode::kTowardZero, &r));
  EXPECT_FALSE(Has(ProfileId::kOcp, kE8m0, kRne));
  EXPECT_FALSE(Has(ProfileId::kOcp, kE4m3Fnuz, kRne));
  // §6.3 floor: 3.0 -> 2^1 = code 128; 448 -> 2^8 = 135.
  EXPECT_EQ(Enc(ProfileId::kOcp, kFp32, 0x40400000u, kE8m0, RoundingMode::kTowardZero), 0x80u);
  EXPECT_EQ(Enc(ProfileId::kOcp, kFp32, 0x43E00000u, kE8m0, RoundingMode::kTowardZero), 0x87u);
  // Non-saturating OFP8: 480 -> NaN (E4M3), 65536 -> Inf (E5M2).
  EXPECT_EQ(Enc(ProfileId::kOcp, kFp32, 0x43F00000u, kE4m3), 0x7Fu);
  EXPECT_EQ(Enc(ProfileId::kOcp, kFp32, 0x47800000u, kE5m2), 0x7Cu);
  EXPECT_EQ(Enc(ProfileId::kOcp, kFp32, 0x40E00000u, kE2m1), 0x7u);  // 7.0 -> 6.0
}

// Each listed format is identified as itself: the layout keys are unique.
TEST(ProfileSupport, EveryListedFormatIsIdentified) {
  for (FormatId id : kAllFormats) {
    FormatId found{};
    ASSERT_TRUE(profile_detail::IdentifyFormat(Spec(id), &found)) << Spec(id).name;
    EXPECT_EQ(found, id) << Spec(id).name;
  }
}

// An unknown FormatSpec (not in LOWBIT_FORMATS) has no conversion anywhere.
TEST(ProfileSupport, UnknownFormatIsRefused) {
  constexpr FormatSpec kOdd{"odd", FormatKind::kFloat, 8, true, 3, 4, 3, true, SpecialCodes::kNone};
  EncodeResult r;
  for (ProfileId p : kAllProfiles) {
    EncodeOptions o;
    EXPECT_FALSE(ProfileEncodeOptions(p, kOdd, kRne, &o));
    EXPECT_FALSE(ProfileEncode(p, kFp32, 0x3F800000u, kOdd, kRne, &r));
  }
}

// NanPayload::kPreserve (policy.h): BF16 0xFF81 -> FP32 0xFF810000, a
// signalling NaN kept as is (docs/formats-reference.md §3.2, cvt.f32.bf16 [HW-verified]).
TEST(NanPayloadPreserve, WidensWithoutQuieting) {
  EncodeOptions o;
  o.nan_sign = NanSign::kKeep;
  o.nan_payload = NanPayload::kPreserve;
  EXPECT_EQ(Convert(kBf16, 0xFF81, kFp32, o).code, 0xFF810000u);
  EXPECT_EQ(Convert(kBf16, 0x7FC0, kFp32, o).code, 0x7FC00000u);
  // Narrowing that drops every payload bit still gives a NaN: the quiet bit.
  EXPECT_EQ(Convert(kFp32, 0x7F800001u, kBf16, o).code, 0x7FC0u);
  EXPECT_EQ(Convert(kFp32, 0xFF810000u, kBf16, o).code, 0xFF81u);
  // kTruncate, by contrast, forces the quiet bit.
  o.nan_payload = NanPayload::kTruncate;
  EXPECT_EQ(Convert(kBf16, 0xFF81, kFp32, o).code, 0xFFC10000u);
}

// docs/formats-reference.md §4.7: PyTorch and ml_dtypes send FP32 subnormals in
// (2^-127, 1.5*2^-127) to 0x01; nearest would be 0x00.
TEST(E8m0SubnormalQuirk, OnlyTheOpenIntervalMoves) {
  struct Case {
    std::uint32_t bits;
    std::uint64_t code;
  };
  const Case cases[] = {
      {0x00000001u, 0x00}, {0x003FFFFFu, 0x00}, {0x00400000u, 0x00},  // <= 2^-127
      {0x00400001u, 0x01}, {0x005FFFFFu, 0x01},                       // the quirk
      {0x00600000u, 0x01}, {0x007FFFFFu, 0x01},                       // nearest agrees
      {0x00800000u, 0x01}, {0x00BFFFFFu, 0x01}, {0x00C00000u, 0x02},  // normals: ties up
      {0x3FC00000u, 0x80}, {0x3FBFFFFFu, 0x7F},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Enc(ProfileId::kPytorchCpu, kFp32, c.bits, kE8m0), c.code) << std::hex << c.bits;
    EXPECT_EQ(Enc(ProfileId::kMlDtypes, kFp32, c.bits, kE8m0), c.code) << std::hex << c.bits;
  }
  // Plain round-to-nearest (no quirk) keeps 0x00400001 at 2^-127.
  EXPECT_EQ(Convert(kFp32, 0x00400001u, kE8m0, {}).code, 0x00u);
  // The quirk uses |x| in PyTorch: -x behaves the same.
  EXPECT_EQ(Enc(ProfileId::kPytorchCuda, kFp32, 0x80500000u, kE8m0), 0x01u);
}

// A conversion into FP32 is a decode: ProfileEncode and ProfileDecodeToF32Bits
// agree with ProfileDecodeOptions wherever no quirk applies.
TEST(ProfileDecode, EncodeIntoFp32MatchesDecodeOptions) {
  for (ProfileId p : kAllProfiles) {
    for (FormatId id : kAllFormats) {
      const FormatSpec& src = Spec(id);
      if (src.total_bits > 16) continue;
      for (std::uint64_t code = 0; code <= src.CodeMask(); ++code) {
        std::uint32_t bits = 0;
        if (!ProfileDecodeToF32Bits(p, src, code, &bits)) break;
        const Unpacked u = Unpack(src, code);
        if (u.value_class != ValueClass::kNan) {
          ASSERT_EQ(bits, DecodeToF32Bits(src, code)) << ProfileName(p) << " " << src.name << " " << code;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lowbit
