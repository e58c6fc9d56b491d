// The options the cuda-hw backend claims to implement are exactly the
// `nvidia` profile's (formats/include/lowbit/formats/profiles/nvidia.h), for
// the cvt forms this build and device have. Host code: it needs no GPU, so CI
// runs it wherever nvcc builds the library.
//
// The instruction list below is typed from PTX ISA 9.0 §9.7.9.21 ("cvt",
// Target ISA notes) for sm_90, independently of cuda/src/dispatch.cuh; the
// expected options are the profile's own function. The one difference is
// written out: the .satfinite forms of the BF16 / FP16 conversions saturate,
// which no CUDA header function (and so no profile) has.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/nvidia.h"
#include "options_match.h"

namespace lowbit::cuda {
namespace {

struct Instruction {
  ElementOp op;
  FormatId format;
  RoundingMode rounding;
  bool satfinite;
};

constexpr RoundingMode kRn = RoundingMode::kNearestEven;
constexpr RoundingMode kRz = RoundingMode::kTowardZero;
constexpr RoundingMode kRm = RoundingMode::kDown;
constexpr RoundingMode kRp = RoundingMode::kUp;

// sm_89 / sm_90 encodes: cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2};
// cvt.{rn,rz}[.satfinite].{bf16x2,f16x2}.f32; cvt.{rm,rp}.bf16.f32. BF16
// sources go through the FP32 form (an exact widening).
const std::vector<Instruction> kHopperEncodes = {
    {ElementOp::kEncodeF32, FormatId::kE4m3, kRn, true},  {ElementOp::kEncodeF32, FormatId::kE5m2, kRn, true},
    {ElementOp::kEncodeF32, FormatId::kBf16, kRn, false}, {ElementOp::kEncodeF32, FormatId::kBf16, kRn, true},
    {ElementOp::kEncodeF32, FormatId::kBf16, kRz, false}, {ElementOp::kEncodeF32, FormatId::kBf16, kRm, false},
    {ElementOp::kEncodeF32, FormatId::kBf16, kRp, false}, {ElementOp::kEncodeF32, FormatId::kFp16, kRn, false},
    {ElementOp::kEncodeF32, FormatId::kFp16, kRn, true},  {ElementOp::kEncodeF32, FormatId::kFp16, kRz, false},
    {ElementOp::kEncodeBf16, FormatId::kE4m3, kRn, true}, {ElementOp::kEncodeBf16, FormatId::kE5m2, kRn, true},
    {ElementOp::kEncodeF16, FormatId::kE4m3, kRn, true},  {ElementOp::kEncodeF16, FormatId::kE5m2, kRn, true},
};
// Decodes: cvt.rn.f16x2.{e4m3x2,e5m2x2} (+ cvt.f32.f16), cvt.f32.f16.
struct Decode {
  ElementOp op;
  FormatId format;
};
const std::vector<Decode> kHopperDecodes = {
    {ElementOp::kDecodeToF32, FormatId::kE4m3},  {ElementOp::kDecodeToF32, FormatId::kE5m2},
    {ElementOp::kDecodeToF32, FormatId::kFp16},  {ElementOp::kDecodeToBf16, FormatId::kE4m3},
    {ElementOp::kDecodeToBf16, FormatId::kE5m2},
};

constexpr ElementOp kEncodes[] = {ElementOp::kEncodeF32, ElementOp::kEncodeBf16, ElementOp::kEncodeF16};
constexpr ElementOp kDecodes[] = {ElementOp::kDecodeToF32, ElementOp::kDecodeToBf16};
constexpr RoundingMode kModes[] = {kRn,
                                   RoundingMode::kNearestAway,
                                   kRz,
                                   kRp,
                                   kRm,
                                   RoundingMode::kOdd,
                                   RoundingMode::kStochastic};

bool InHopperList(ElementOp op, FormatId f, RoundingMode m, bool sat) {
  for (const Instruction& i : kHopperEncodes) {
    if (i.op == op && i.format == f && i.rounding == m && i.satfinite == sat) return true;
  }
  return false;
}

// What the profile says cuda-hw must implement for one instruction: the
// `nvidia` (satfinite) or `nvidia-nosat` options, and for the .satfinite
// BF16 / FP16 forms that no header function has, saturation on top.
EncodeOptions ProfileOptions(FormatId f, RoundingMode m, bool sat) {
  EncodeOptions o;
  EXPECT_TRUE(profile_detail::NvidiaEncodeOptions(sat, f, m, &o))
      << "the profile has no " << Spec(f).name << " conversion the hardware has";
  if (sat && (f == FormatId::kBf16 || f == FormatId::kFp16)) {
    EXPECT_EQ(o.overflow, Overflow::kFormatDefault) << "the header functions do not saturate";
    o.overflow = Overflow::kSaturate;
  }
  return o;
}

void ExpectSameOptions(const EncodeOptions& a, const EncodeOptions& b, const std::string& what) {
  EXPECT_EQ(a.rounding, b.rounding) << what;
  EXPECT_EQ(a.overflow, b.overflow) << what;
  EXPECT_EQ(a.inf_input, b.inf_input) << what;
  EXPECT_EQ(a.nan_sign, b.nan_sign) << what;
  EXPECT_EQ(a.nan_payload, b.nan_payload) << what;
  EXPECT_EQ(a.nan_into_no_nan, b.nan_into_no_nan) << what;
  EXPECT_EQ(a.keep_negative_zero, b.keep_negative_zero) << what;
  EXPECT_EQ(a.zero_into_no_zero, b.zero_into_no_zero) << what;
  EXPECT_EQ(a.negative_into_unsigned, b.negative_into_unsigned) << what;
}

std::string Name(ElementOp op, FormatId f, RoundingMode m, bool sat) {
  return std::string(ElementOpName(op)) + " " + Spec(f).name + " rounding " + std::to_string(static_cast<int>(m)) +
         (sat ? " .satfinite" : "");
}

// Every (operation, format, rounding, .satfinite): an instruction exactly
// where the PTX list has one, with exactly the profile's options.
TEST(CudaHardwareProfile, EncodeOptionsAreTheNvidiaProfiles) {
  if (HardwareHasBlackwellCvt()) GTEST_SKIP() << "the list below is sm_90's; this device has sm_100a cvt forms";
  int instructions = 0;
  for (ElementOp op : kEncodes) {
    for (FormatId f : kAllFormats) {
      for (RoundingMode m : kModes) {
        for (bool sat : {false, true}) {
          EncodeOptions got;
          const bool has = HardwareEncodeOptions(op, f, m, sat, &got);
          const std::string what = Name(op, f, m, sat);
          EXPECT_EQ(has, InHopperList(op, f, m, sat)) << what;
          if (!has) continue;
          ++instructions;
          ExpectSameOptions(got, ProfileOptions(f, m, sat), what);
        }
      }
    }
  }
  EXPECT_EQ(instructions, static_cast<int>(kHopperEncodes.size()));
}

TEST(CudaHardwareProfile, DecodeOptionsAreTheNvidiaProfiles) {
  if (HardwareHasBlackwellCvt()) GTEST_SKIP() << "the list below is sm_90's; this device has sm_100a cvt forms";
  for (const Decode& d : kHopperDecodes) {
    const DecodeOptions want = profile_detail::NvidiaDecodeOptions(d.format);
    const DecodeOptions got = HardwareDecodeOptions(d.format);
    EXPECT_EQ(got.nan_sign, want.nan_sign) << Spec(d.format).name;
    EXPECT_EQ(got.nan_payload, want.nan_payload) << Spec(d.format).name;
    EXPECT_TRUE(Supports(Backend::kHardware, d.op, d.format, EncodeOptions{}, want)) << Spec(d.format).name;
  }
  // The format-free overload is the rule of every format decoded above.
  EXPECT_EQ(HardwareDecodeOptions().nan_sign, profile_detail::NvidiaDecodeOptions(FormatId::kE4m3).nan_sign);
  EXPECT_EQ(HardwareDecodeOptions().nan_payload, profile_detail::NvidiaDecodeOptions(FormatId::kE4m3).nan_payload);
  for (ElementOp op : kDecodes) {
    for (FormatId f : kAllFormats) {
      bool listed = false;
      for (const Decode& d : kHopperDecodes) listed = listed || (d.op == op && d.format == f);
      EXPECT_EQ(Supports(Backend::kHardware, op, f, EncodeOptions{}, profile_detail::NvidiaDecodeOptions(f)), listed)
          << ElementOpName(op) << " " << Spec(f).name;
    }
  }
}

// Supports() over a grid of option sets accepts exactly those that mean the
// same for the destination as the profile's options of an instruction
// (detail::SameEncodeSemantics: E4M3's NaN payload, FP4's NaN sign and the
// like do not matter).
TEST(CudaHardwareProfile, SupportsExactlyTheProfilesOptionSets) {
  if (HardwareHasBlackwellCvt()) GTEST_SKIP() << "the list below is sm_90's; this device has sm_100a cvt forms";
  std::uint64_t accepted = 0, checked = 0;
  for (ElementOp op : kEncodes) {
    for (FormatId f : kAllFormats) {
      const FormatSpec& spec = Spec(f);
      for (RoundingMode m : kModes) {
        for (Overflow ov : {Overflow::kFormatDefault, Overflow::kSaturate, Overflow::kWrap}) {
          for (InfInput inf : {InfInput::kLikeOverflow, InfInput::kAlwaysNonFinite}) {
            for (NanSign ns : {NanSign::kKeep, NanSign::kPositive, NanSign::kNegative}) {
              for (NanPayload np : {NanPayload::kAllOnes, NanPayload::kQuietOnly, NanPayload::kTruncate}) {
                for (bool keep_neg_zero : {false, true}) {
                  EncodeOptions o;
                  o.rounding = m;
                  o.overflow = ov;
                  o.inf_input = inf;
                  o.nan_sign = ns;
                  o.nan_payload = np;
                  o.keep_negative_zero = keep_neg_zero;
                  const bool sat = ov == Overflow::kSaturate;
                  const bool want = InHopperList(op, f, m, sat) &&
                                    detail::SameEncodeSemantics(spec, o, ProfileOptions(f, m, sat));
                  const bool got = Supports(Backend::kHardware, op, f, o, DecodeOptions{});
                  ++checked;
                  accepted += got;
                  if (got != want) {
                    ADD_FAILURE() << Name(op, f, m, sat) << " overflow " << int(ov) << " inf " << int(inf)
                                  << " nan sign " << int(ns) << " payload " << int(np) << " -0 " << keep_neg_zero
                                  << ": Supports " << got << ", profile " << want;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 0u);
  EXPECT_GT(checked, accepted);
}

// The NVFP4 kernels decode a stored UE4M3 scale byte with the E4M3
// instruction on its low 7 bits (cuda/src/nvfp4.cu HwUe4m3Codec): the model
// gives the two the same value for every byte.
TEST(CudaHardwareProfile, Ue4m3ByteDecodesAsE4m3OfItsLowSevenBits) {
  for (std::uint32_t b = 0; b < 256; ++b) {
    const float ue4m3 = DecodeToF32(kUe4m3, b);
    const float e4m3 = DecodeToF32(kE4m3, b & static_cast<std::uint32_t>(kUe4m3.CodeMask()));
    if (ue4m3 != ue4m3) {
      EXPECT_NE(e4m3, e4m3) << b;
    } else {
      EXPECT_EQ(DecodeToF32Bits(kUe4m3, b), DecodeToF32Bits(kE4m3, b & 0x7Fu)) << b;
    }
  }
}

}  // namespace
}  // namespace lowbit::cuda
