// alternatives/weight_operand_fp32.h against the model's WeightOperand
// (matmul/weight_operand.h), into BF16 and FP16 operands: every (element
// code, scale code) pair of NVFP4, MXFP4, MXFP8 E4M3 and FP8 per channel;
// every integer offset q - z in -15..15 with every FP16 and every BF16
// scale; and every offset with FP32 scales of every exponent whose product
// falls on, just above and just below the operand's ties and rounding
// boundaries, plus random mantissas (more at LOWBIT_TEST_LEVEL=full). The
// alternatives are fed the model's decoded values (DecodeToF32), as the
// dequantizing kernel's tables hold them. NaN operands count as equal when
// both are NaN (the MMA reads any NaN as NaN). About 2 s at ci.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lowbit/formats/alternatives/weight_operand_fp32.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit {
namespace {

using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

bool IsNanCode(const FormatSpec& f, std::uint32_t code) {
  const float v = DecodeToF32(f, code);
  return v != v;
}

// One weight element with one scale (and a zero point for the integer
// formats): a 1 x 1 view in the lowbit packing.
struct OneWeight {
  std::uint8_t code = 0;
  std::uint32_t scale = 0;  // the stored bits, ScaleBytes(scale_type) wide (little-endian)
  std::int32_t zero = 0;
  recipe::TensorScale tensor{1.0f, 1.0f};
  matmul::WeightView view;
  OneWeight(WeightFormat format, ScaleType type) {
    const bool per_row = format == WeightFormat::kFp8E4m3PerChannel;
    const std::int64_t block = format == WeightFormat::kNvfp4   ? matmul::kNvfp4Block
                               : matmul::IsIntegerFormat(format) ? matmul::kDefaultIntGroup
                                                                 : matmul::kMxBlock;
    view = matmul::DenseWeights(format, WeightPacking::kLowbit,
                                per_row ? ScaleGeometry::kPerRow : ScaleGeometry::kRowGroups, type, 1, 1, block, 1,
                                &code, &scale, matmul::IsIntegerFormat(format) ? &zero : nullptr,
                                format == WeightFormat::kNvfp4 ? &tensor : nullptr);
  }
};

struct Tally {
  int checked = 0, failures = 0;
};

void Compare(const OneWeight& w, float element, float scale, Tally* t, const char* what) {
  const bool integer = matmul::IsIntegerFormat(w.view.format);
  for (const bool bf16 : {true, false}) {
    const FormatSpec operand = bf16 ? kBf16 : kFp16;
    const std::uint32_t want = matmul::WeightOperand(w.view, 0, 0, 0, operand).code;
    const std::uint32_t got = integer ? alternatives::OperandOfSmallIntegerProduct(bf16, element, scale)
                                      : alternatives::OperandOfFp32Product(bf16, element, scale);
    ++t->checked;
    const bool same = got == want || (IsNanCode(operand, got) && IsNanCode(operand, want));
    if (!same && t->failures++ < 5) {
      ADD_FAILURE() << what << " code 0x" << std::hex << unsigned{w.code} << " scale 0x" << w.scale << " zero "
                    << std::dec << w.zero << " into " << (bf16 ? "bf16" : "fp16") << ": 0x" << std::hex << got
                    << ", the model 0x" << want;
    }
  }
}

// A floating-point element format times every code of an 8-bit scale.
void EveryElementAndScale(WeightFormat format, ScaleType type, const char* what) {
  ASSERT_TRUE(alternatives::HasFp32Operand(format, type));
  OneWeight w(format, type);
  ASSERT_TRUE(matmul::ValidateWeights(w.view).ok) << matmul::ValidateWeights(w.view).error;
  const FormatSpec element = matmul::ElementFormatOf(format);
  const FormatSpec scale = matmul::ScaleFormatOf(type);
  const int codes = 1 << element.total_bits;
  Tally t;
  for (std::uint32_t s = 0; s < 256; ++s) {
    for (int c = 0; c < codes; ++c) {
      w.code = static_cast<std::uint8_t>(c);
      w.scale = s;
      Compare(w, DecodeToF32(element, static_cast<std::uint32_t>(c)), DecodeToF32(scale, s), &t, what);
    }
  }
  EXPECT_EQ(t.checked, 2 * 256 * codes);
  EXPECT_EQ(t.failures, 0);
}

TEST(WeightOperandFp32, Nvfp4EveryElementAndScale) { EveryElementAndScale(WeightFormat::kNvfp4, ScaleType::kUe4m3, "nvfp4"); }
TEST(WeightOperandFp32, Mxfp4EveryElementAndScale) { EveryElementAndScale(WeightFormat::kMxfp4, ScaleType::kE8m0, "mxfp4"); }
TEST(WeightOperandFp32, Mxfp8EveryElementAndScale) {
  EveryElementAndScale(WeightFormat::kMxfp8E4m3, ScaleType::kE8m0, "mxfp8");
}

// FP8 per channel: the operand is the element; its FP32 channel scale (any
// value) stays out of it.
TEST(WeightOperandFp32, Fp8PerChannelEveryElement) {
  OneWeight w(WeightFormat::kFp8E4m3PerChannel, ScaleType::kFp32);
  ASSERT_TRUE(matmul::ValidateWeights(w.view).ok) << matmul::ValidateWeights(w.view).error;
  Tally t;
  for (const float channel : {1.0f, 0.0078125f, 3.0e38f}) {
    w.scale = F32Bits(channel);
    for (int c = 0; c < 256; ++c) {
      w.code = static_cast<std::uint8_t>(c);
      Compare(w, DecodeToF32(kE4m3, static_cast<std::uint32_t>(c)), 1.0f, &t, "e4m3/row");
    }
  }
  EXPECT_EQ(t.checked, 2 * 3 * 256);
  EXPECT_EQ(t.failures, 0);
}

// UINT4 codes 0..15 against zero points 0..15 (every offset -15..15) times
// every 16-bit scale; INT4 codes -8..7 with zero 0.
void EveryOffsetAndScale(ScaleType type) {
  const FormatSpec scale = matmul::ScaleFormatOf(type);
  Tally t;
  for (const WeightFormat format : {WeightFormat::kUint4, WeightFormat::kInt4}) {
    ASSERT_TRUE(alternatives::HasFp32Operand(format, type));
    OneWeight w(format, type);
    ASSERT_TRUE(matmul::ValidateWeights(w.view).ok) << matmul::ValidateWeights(w.view).error;
    const FormatSpec element = matmul::ElementFormatOf(format);
    std::vector<std::pair<int, int>> code_zero;  // (code, zero point)
    if (format == WeightFormat::kUint4) {
      for (int z = 1; z < 16; ++z) code_zero.push_back({0, z});  // offsets -1 .. -15
      for (int q = 0; q < 16; ++q) code_zero.push_back({q, 0});  // offsets 0 .. 15
    } else {
      for (int c = 0; c < 16; ++c) code_zero.push_back({c, 0});
    }
    for (const auto& [code, zero] : code_zero) {
      w.code = static_cast<std::uint8_t>(code);
      w.zero = zero;
      const auto q = recipe::IntegerOfCode(element, w.code);
      const float offset = static_cast<float>(q - zero);
      ASSERT_LE(q - zero, alternatives::kFp32IntegerOffset);
      ASSERT_GE(q - zero, -alternatives::kFp32IntegerOffset);
      for (std::uint32_t s = 0; s < 65536; ++s) {
        w.scale = s;
        Compare(w, offset, DecodeToF32(scale, s), &t, matmul::WeightFormatName(format));
      }
    }
  }
  EXPECT_EQ(t.failures, 0);
  EXPECT_GT(t.checked, 2 * 31 * 65536);
}

TEST(WeightOperandFp32, IntegerOffsetsTimesEveryFp16Scale) { EveryOffsetAndScale(ScaleType::kFp16); }
TEST(WeightOperandFp32, IntegerOffsetsTimesEveryBf16Scale) { EveryOffsetAndScale(ScaleType::kBf16); }

// FP32 scales: the FP32 product rounds (4 + 24 bits), and a plain second
// rounding into the operand can land on the other side of a tie. One case:
// 3 x 0x3F95AAAB (1.16927...) = 3.50781261..., which rounds to BF16
// 3.515625; its FP32 product is 3.5078125, a BF16 tie, which rounds to
// even, 3.5. OperandOfSmallIntegerProduct rounds to odd first.
TEST(WeightOperandFp32, Fp32ScaleTieNeedsRoundToOdd) {
  ASSERT_TRUE(alternatives::HasFp32Operand(WeightFormat::kUint4, ScaleType::kFp32));
  OneWeight w(WeightFormat::kUint4, ScaleType::kFp32);
  ASSERT_TRUE(matmul::ValidateWeights(w.view).ok) << matmul::ValidateWeights(w.view).error;
  w.code = 3;
  w.scale = 0x3F95AAABu;
  const float scale = F32FromBits(w.scale);
  EXPECT_EQ(DecodeToF32(kBf16, matmul::WeightOperand(w.view, 0, 0, 0, kBf16).code), 3.515625f);
  EXPECT_EQ(DecodeToF32(kBf16, alternatives::OperandOfFp32Product(true, 3.0f, scale)), 3.5f);  // the plain rounding
  EXPECT_EQ(DecodeToF32(kBf16, alternatives::OperandOfSmallIntegerProduct(true, 3.0f, scale)), 3.515625f);
}

// The FP32 scales whose products o x s sit on, and one or two FP32 steps
// either side of, the operand's ties (midpoints between neighbouring BF16 /
// FP16 values) and of its exact values, in every binade the scale reaches;
// plus specials. s = t / o rounded, then its FP32 neighbours.
std::vector<std::uint32_t> TieScales(int offset, std::mt19937& rng, int random_per_binade) {
  std::vector<std::uint32_t> scales = {0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                                       0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x3F800000u, 0xBF800000u};
  const int o = std::abs(offset);
  if (o == 0) return scales;
  for (int exponent = -149; exponent <= 127; ++exponent) {
    // Targets t in [2^exponent, 2^(exponent + 1)): BF16 (8 bits) and FP16
    // (11 bits) grid points and midpoints, a few of each.
    for (const int bits : {8, 11}) {
      for (int j = 0; j < 6; ++j) {
        const int step = bits;  // t = 2^e (1 + m / 2^(bits - 1)) with m random, plus a half step: a tie
        const std::uint32_t m = static_cast<std::uint32_t>(rng() % (1u << (step - 1)));
        for (const double half : {0.0, 0.5}) {
          const double t = std::ldexp(1.0 + (m + half) / std::ldexp(1.0, step - 1), exponent);
          const float s = static_cast<float>(t / o);
          if (!std::isfinite(s)) continue;
          const std::uint32_t b = F32Bits(s);
          for (const int d : {-2, -1, 0, 1, 2}) scales.push_back(static_cast<std::uint32_t>(static_cast<std::int64_t>(b) + d));
        }
      }
    }
    for (int r = 0; r < random_per_binade; ++r) {
      const int biased = exponent + 127;
      if (biased < 1 || biased > 254) continue;
      scales.push_back(static_cast<std::uint32_t>(biased) << 23 | static_cast<std::uint32_t>(rng() & 0x7FFFFF));
    }
  }
  return scales;
}

int RandomPerBinade() {
  const char* level = std::getenv("LOWBIT_TEST_LEVEL");
  const std::string l = level ? level : "ci";
  return l == "full" ? 20000 : l == "smoke" ? 8 : 64;
}

TEST(WeightOperandFp32, IntegerOffsetsTimesFp32ScalesAtTies) {
  std::mt19937 rng(23);
  Tally t;
  for (const WeightFormat format : {WeightFormat::kUint4, WeightFormat::kInt4}) {
    OneWeight w(format, ScaleType::kFp32);
    ASSERT_TRUE(matmul::ValidateWeights(w.view).ok) << matmul::ValidateWeights(w.view).error;
    const FormatSpec element = matmul::ElementFormatOf(format);
    for (int code = 0; code < 16; ++code) {
      for (const int zero : format == WeightFormat::kUint4 ? std::vector<int>{0, 15} : std::vector<int>{0}) {
        w.code = static_cast<std::uint8_t>(code);
        w.zero = zero;
        const int offset = recipe::IntegerOfCode(element, w.code) - zero;
        for (const std::uint32_t s : TieScales(offset, rng, RandomPerBinade())) {
          for (const std::uint32_t sign : {0u, 0x80000000u}) {
            w.scale = s ^ sign;
            Compare(w, static_cast<float>(offset), F32FromBits(w.scale), &t, matmul::WeightFormatName(format));
          }
        }
      }
    }
  }
  EXPECT_EQ(t.failures, 0);
  EXPECT_GT(t.checked, 1000000);
}

}  // namespace
}  // namespace lowbit
