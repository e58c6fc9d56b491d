// The weight as a tensor-core operand (formats/matmul/weight_operand.h),
// exhaustively: every element x scale pair of NVFP4 (E2M1 x UE4M3), MXFP4
// (E2M1 x E8M0), MXFP8 (E4M3 and E5M2 x E8M0) and every INT4 offset x
// FP16 / BF16 scale, into BF16 and FP16 operands. Each operand is checked
// against a witness written here from the spec tables (OCP MX v1.0 §5.3 for
// the element and scale values, IEEE 754 for the 16-bit operands) in plain
// binary64 arithmetic, and, for INT4 into FP16, the CPU's own F16C
// conversion; the scale ranges where the rounding is exact are pinned as
// the literals the header states. About 1 s at every test level.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fp16_by_f16c.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit {
namespace {

using matmul::OperandWeight;
using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

// ---- the witness: values from the spec tables, rounding from the definition ----

double E2m1Value(unsigned c) {
  static const double kMagnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};  // OCP MX §5.3.3
  return (c & 8) ? -kMagnitude[c & 7] : kMagnitude[c & 7];
}
// E4M3 (OCP OFP8): bias 7, subnormals f * 2^-9, S.1111.111 NaN, no Inf.
double E4m3Value(unsigned c, bool has_sign = true) {
  const bool negative = has_sign && (c & 0x80);
  const unsigned m = c & 0x7F;
  if (m == 0x7F) return NAN;
  const unsigned e = m >> 3, f = m & 7;
  const double v = e == 0 ? std::ldexp(f, -9) : std::ldexp(8 + f, static_cast<int>(e) - 7 - 3);
  return negative ? -v : v;
}
// E5M2 (OCP OFP8, IEEE-like): bias 15, exponent 31 is Inf / NaN.
double E5m2Value(unsigned c) {
  const bool negative = c & 0x80;
  const unsigned e = (c >> 2) & 0x1F, f = c & 3;
  double v = 0;
  if (e == 31) {
    v = f == 0 ? INFINITY : NAN;
  } else {
    v = e == 0 ? std::ldexp(f, -16) : std::ldexp(4 + f, static_cast<int>(e) - 15 - 2);
  }
  return negative ? -v : v;
}
// E8M0 (OCP MX §5.4.1): 2^(c - 127), 0xFF NaN.
double E8m0Value(unsigned c) { return c == 0xFF ? NAN : std::ldexp(1.0, static_cast<int>(c) - 127); }
// IEEE binary16 and bfloat16 from their bits.
double Fp16Value(std::uint32_t c) {
  const bool negative = c & 0x8000;
  const unsigned e = (c >> 10) & 0x1F, f = c & 0x3FF;
  double v = 0;
  if (e == 31) {
    v = f == 0 ? INFINITY : NAN;
  } else {
    v = e == 0 ? std::ldexp(f, -24) : std::ldexp(1024 + f, static_cast<int>(e) - 15 - 10);
  }
  return negative ? -v : v;
}
double Bf16Value(std::uint32_t c) {
  const std::uint32_t bits = c << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round-to-nearest-even of a binary64 value into a binary format of
// `precision` bits and exponents [emin, emax], from the definition: the
// quantum 2^(max(floor(log2 |v|), emin) - precision + 1), ties to the even
// multiple (nearbyint in the default rounding mode), 2^(emax + 1) or more
// is Inf.
double RoundToBinary(double v, int precision, int emin, int emax) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| in [2^(e-1), 2^e)
  const int quantum = (e - 1 < emin ? emin : e - 1) - precision + 1;
  const double r = std::ldexp(std::nearbyint(std::ldexp(std::fabs(v), -quantum)), quantum);
  const double out = r >= std::ldexp(1.0, emax + 1) ? INFINITY : r;
  return v < 0 ? -out : out;
}
double RoundToBf16(double v) { return RoundToBinary(v, 8, -126, 127); }
double RoundToFp16(double v) { return RoundToBinary(v, 11, -14, 15); }

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

struct Operand {
  const char* name;
  FormatSpec spec;
  double (*round)(double);
  double (*value)(std::uint32_t);
};
const Operand kOperands[] = {{"bf16", kBf16, RoundToBf16, Bf16Value}, {"fp16", kFp16, RoundToFp16, Fp16Value}};

// Checks one operand against the witness; returns whether it was exact.
bool CheckOperand(const Operand& op, const OperandWeight& got, double product, const char* what, unsigned element,
                  unsigned scale, int* failures) {
  const double want = op.round(product);
  const bool want_exact = SameValue(want, product);
  if (!SameValue(op.value(got.code), want) || got.exact != want_exact) {
    if ((*failures)++ < 5) {
      ADD_FAILURE() << what << " element 0x" << std::hex << element << " scale 0x" << scale << " into " << op.name
                    << ": operand 0x" << got.code << " (" << op.value(got.code) << "), exact " << got.exact
                    << "; want " << want << ", exact " << want_exact << " (product " << product << ")";
    }
  }
  return want_exact;
}

// The smallest and largest scale exponent at which every non-NaN element of
// the format is exact; `exact_at[s]` says whether every element with scale
// code s was exact.
struct ExactRange {
  int low = 1000, high = -1000;
};
ExactRange RangeOf(const std::vector<bool>& exact_at) {
  ExactRange r;
  // The longest run of exact scale codes (E8M0 code s is 2^(s - 127)).
  int best_begin = 0, best_len = 0, begin = 0;
  for (int s = 0; s <= static_cast<int>(exact_at.size()); ++s) {
    if (s == static_cast<int>(exact_at.size()) || !exact_at[static_cast<std::size_t>(s)]) {
      if (s - begin > best_len) best_begin = begin, best_len = s - begin;
      begin = s + 1;
    }
  }
  if (best_len > 0) r.low = best_begin - 127, r.high = best_begin + best_len - 1 - 127;
  return r;
}

// A [n][k] weight of `format` whose row n holds `codes` and has every scale
// equal to scale code n (lowbit packing, per-row blocks).
struct PairWeights {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> scales;
  recipe::TensorScale tensor{1.0f, 1.0f};
  matmul::WeightView view;
  PairWeights(WeightFormat format, ScaleType scale_type, int block, const std::vector<std::uint8_t>& codes,
              int scale_codes) {
    const auto k = static_cast<std::int64_t>(codes.size());
    const bool four = matmul::IsFourBit(format);
    for (int n = 0; n < scale_codes; ++n) {
      if (four) {
        for (std::size_t i = 0; i < codes.size(); i += 2) {
          bytes.push_back(static_cast<std::uint8_t>(codes[i] | (codes[i + 1] << 4)));
        }
      } else {
        bytes.insert(bytes.end(), codes.begin(), codes.end());
      }
      for (std::int64_t b = 0; b < k / block; ++b) scales.push_back(static_cast<std::uint8_t>(n));
    }
    view = matmul::DenseWeights(format, WeightPacking::kLowbit, ScaleGeometry::kRowGroups, scale_type, scale_codes, k,
                                block, 1, bytes.data(), scales.data(), nullptr,
                                format == WeightFormat::kNvfp4 ? &tensor : nullptr);
    EXPECT_TRUE(matmul::ValidateWeights(view).ok) << matmul::ValidateWeights(view).error;
  }
};

std::vector<std::uint8_t> AllCodes(int count, int repeat = 1) {
  std::vector<std::uint8_t> c;
  for (int r = 0; r < repeat; ++r) {
    for (int i = 0; i < count; ++i) c.push_back(static_cast<std::uint8_t>(i));
  }
  return c;
}

// NVFP4: every E2M1 code times every UE4M3 code (7 bits, 0x7F NaN) is exact
// in BF16 and FP16.
TEST(WeightOperand, Nvfp4EveryPairIsExactInBf16AndFp16) {
  PairWeights w(WeightFormat::kNvfp4, ScaleType::kUe4m3, 16, AllCodes(16), 128);
  for (const Operand& op : kOperands) {
    int failures = 0, checked = 0, inexact = 0;
    for (unsigned s = 0; s < 128; ++s) {
      for (unsigned e = 0; e < 16; ++e) {
        const OperandWeight got = matmul::WeightOperand(w.view, 0, s, e, op.spec);
        inexact += CheckOperand(op, got, E2m1Value(e) * E4m3Value(s, false), "nvfp4", e, s, &failures) ? 0 : 1;
        ++checked;
      }
    }
    EXPECT_EQ(checked, 16 * 128);
    EXPECT_EQ(failures, 0) << op.name;
    EXPECT_EQ(inexact, 0) << op.name;
  }
}

// MXFP4: exact in BF16 for scale exponents [-127, 125]; 12 pairs overflow
// (e = 127: |q| in {2, 3, 4, 6}; e = 126: |q| in {4, 6}; both signs).
// FP16 holds every element for e in [-23, 13].
TEST(WeightOperand, Mxfp4ExactWhereTheOperandRangeHoldsIt) {
  PairWeights w(WeightFormat::kMxfp4, ScaleType::kE8m0, 32, AllCodes(16, 2), 255);  // 0xFF (NaN) apart
  for (const Operand& op : kOperands) {
    int failures = 0, inexact = 0;
    std::vector<bool> exact_at(255, true);
    for (unsigned s = 0; s < 255; ++s) {
      for (unsigned e = 0; e < 16; ++e) {
        const OperandWeight got = matmul::WeightOperand(w.view, 0, s, e, op.spec);
        if (!CheckOperand(op, got, E2m1Value(e) * E8m0Value(s), "mxfp4", e, s, &failures)) {
          exact_at[s] = false;
          ++inexact;
        }
      }
    }
    EXPECT_EQ(failures, 0) << op.name;
    const ExactRange r = RangeOf(exact_at);
    // The view holds each code twice per row (one block of 32).
    EXPECT_EQ(matmul::DequantizeToOperand(w.view, 0, op.spec).inexact, 2 * inexact) << op.name;
    if (op.spec.exponent_bits == 8) {
      EXPECT_EQ(inexact, 12);
      EXPECT_EQ(r.low, -127);
      EXPECT_EQ(r.high, 125);
    } else {
      EXPECT_EQ(r.low, -23);
      EXPECT_EQ(r.high, 13);
    }
  }
  // The NaN scale gives a NaN operand, which counts as exact.
  const double nan_product = E2m1Value(2) * E8m0Value(0xFF);
  EXPECT_TRUE(std::isnan(Bf16Value(matmul::RoundIntoOperand(kBf16, nan_product).code)));
  EXPECT_TRUE(matmul::RoundIntoOperand(kBf16, nan_product).exact);
}

// MXFP8 E4M3: BF16 exact for e in [-124, 119], FP16 for [-15, 7]; every pair
// equals the witness's one rounding. Through the packed view.
TEST(WeightOperand, Mxfp8E4m3ExactWhereTheOperandRangeHoldsIt) {
  PairWeights w(WeightFormat::kMxfp8E4m3, ScaleType::kE8m0, 32, AllCodes(256), 256);
  for (const Operand& op : kOperands) {
    int failures = 0;
    std::vector<bool> exact_at(256, true);
    for (unsigned s = 0; s < 256; ++s) {
      for (unsigned e = 0; e < 256; ++e) {
        const OperandWeight got = matmul::WeightOperand(w.view, 0, s, e, op.spec);
        if (!CheckOperand(op, got, E4m3Value(e) * E8m0Value(s), "mxfp8 e4m3", e, s, &failures)) exact_at[s] = false;
      }
    }
    EXPECT_EQ(failures, 0) << op.name;
    exact_at.pop_back();  // 0xFF: NaN, exact by convention, not a scale exponent
    const ExactRange r = RangeOf(exact_at);
    EXPECT_EQ(r.low, op.spec.exponent_bits == 8 ? -124 : -15) << op.name;
    EXPECT_EQ(r.high, op.spec.exponent_bits == 8 ? 119 : 7) << op.name;
  }
}

// MXFP8 E5M2 (the recipes exist, no packed matmul kind does): the element
// times 2^e as the model forms it (dequantize.h: one binary64 product),
// rounded by RoundIntoOperand. BF16 exact for e in [-117, 112], FP16 for
// [-8, 0].
TEST(WeightOperand, Mxfp8E5m2ExactWhereTheOperandRangeHoldsIt) {
  for (const Operand& op : kOperands) {
    int failures = 0;
    std::vector<bool> exact_at(255, true);
    for (unsigned s = 0; s < 255; ++s) {
      for (unsigned e = 0; e < 256; ++e) {
        const double model_product = DecodeToF64(kE5m2, e) * DecodeToF64(kE8m0, s);
        const OperandWeight got = matmul::RoundIntoOperand(op.spec, model_product);
        if (!CheckOperand(op, got, E5m2Value(e) * E8m0Value(s), "mxfp8 e5m2", e, s, &failures)) exact_at[s] = false;
      }
    }
    EXPECT_EQ(failures, 0) << op.name;
    const ExactRange r = RangeOf(exact_at);
    EXPECT_EQ(r.low, op.spec.exponent_bits == 8 ? -117 : -8) << op.name;
    EXPECT_EQ(r.high, op.spec.exponent_bits == 8 ? 112 : 0) << op.name;
  }
}

// INT4 / UINT4 with FP16 and BF16 scales: every offset q - z in [-15, 15]
// times every scale, rounded once from the exact product. The product is
// exact in FP32 (4 + 11 or 4 + 8 bits, or past 2^128 where every type
// overflows), so the witness is the CPU's F16C
// conversion for FP16 operands and the round-half-even bit formula for BF16.
TEST(WeightOperand, Int4OffsetTimesEvery16BitScaleIsRoundedOnce) {
  // Codes 0..15 in two groups of 16 per row, zero points 0 and 15: offsets
  // 0..15 and -15..0. One row per scale code.
  const std::int64_t n = 65536, k = 32;
  std::vector<std::uint8_t> bytes;
  for (std::int64_t r = 0; r < n; ++r) {
    for (int g = 0; g < 2; ++g) {
      for (int i = 0; i < 16; i += 2) bytes.push_back(static_cast<std::uint8_t>(i | ((i + 1) << 4)));
    }
  }
  std::vector<std::uint16_t> scales;
  std::vector<std::int32_t> zeros;
  for (std::int64_t r = 0; r < n; ++r) {
    scales.push_back(static_cast<std::uint16_t>(r));
    scales.push_back(static_cast<std::uint16_t>(r));
    zeros.push_back(0);
    zeros.push_back(15);
  }
  for (ScaleType scale_type : {ScaleType::kFp16, ScaleType::kBf16}) {
    const matmul::WeightView w =
        matmul::DenseWeights(WeightFormat::kUint4, WeightPacking::kLowbit, ScaleGeometry::kRowGroups, scale_type, n, k,
                             16, 1, bytes.data(), scales.data(), zeros.data(), nullptr);
    ASSERT_TRUE(matmul::ValidateWeights(w).ok) << matmul::ValidateWeights(w).error;
    int failures = 0;
    std::int64_t checked = 0, inexact_fp16 = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const double scale = scale_type == ScaleType::kFp16 ? Fp16Value(static_cast<std::uint32_t>(r))
                                                          : Bf16Value(static_cast<std::uint32_t>(r));
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const int offset = static_cast<int>(kk % 16) - (kk < 16 ? 0 : 15);
        const double exact = offset * scale;
        const auto as_float = static_cast<float>(exact);
        // Exact in FP32, or at least 2^128 (BF16 scales near their top):
        // then FP32, BF16 and FP16 all give the infinity.
        ASSERT_TRUE(std::isnan(exact) || static_cast<double>(as_float) == exact ||
                    (std::isinf(as_float) && std::fabs(exact) >= std::ldexp(1.0, 128)))
            << exact;
        for (const Operand& op : kOperands) {
          const OperandWeight got = matmul::WeightOperand(w, 0, r, kk, op.spec);
          std::uint32_t want_code = 0;
          if (op.spec.exponent_bits == 5) {
            want_code = testing::Fp16ByCpu(as_float);
          } else {
            std::uint32_t bits;
            std::memcpy(&bits, &as_float, 4);
            want_code = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;  // round half to even on the kept bits
          }
          const bool same = std::isnan(exact) ? std::isnan(op.value(got.code)) : got.code == want_code;
          const bool want_exact = SameValue(op.value(want_code), exact);
          if ((!same || got.exact != want_exact) && failures++ < 5) {
            ADD_FAILURE() << "offset " << offset << " scale 0x" << std::hex << r << " into " << op.name
                          << ": operand 0x" << got.code << ", want 0x" << want_code;
          }
          if (op.spec.exponent_bits == 5 && !got.exact) ++inexact_fp16;
          ++checked;
        }
      }
    }
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(checked, n * k * 2);
    // FP16 scales into an FP16 operand do round (4 + 11 bits > 11), so the
    // test sees the rounding it checks.
    if (scale_type == ScaleType::kFp16) EXPECT_GT(inexact_fp16, 0);
  }
}

// INT4 / UINT4 with FP32 scales: (q - z) * s has up to 28 bits, and rounding it to
// FP32 first could land on a BF16 / FP16 tie that the exact product is
// above or below. The cases where that double rounding differs from the one
// rounding are searched for here (q in 3..15, s within 4096 FP32 steps of
// (1 + 2^-8) / q and (1 + 2^-11) / q, the BF16 and FP16 ties above 1), and
// the model must give the one rounding for each.
TEST(WeightOperand, Int4WithFp32ScaleIsNotRoundedThroughFp32) {
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
  std::vector<double> products;
  for (const Operand& op : kOperands) {
    const double tie = 1.0 + std::ldexp(1.0, op.spec.exponent_bits == 8 ? -8 : -11);
    for (int q = 3; q <= 15; ++q) {
      float s = static_cast<float>(tie / q);
      for (int i = 0; i < 4096; ++i) s = std::nextafter(s, 0.0f);
      for (int i = 0; i < 8192; ++i, s = std::nextafter(s, 2.0f)) {
        const double exact = q * static_cast<double>(s);  // exact: 4 + 24 bits
        const double twice = op.round(static_cast<float>(exact));
        if (twice == op.round(exact)) continue;
        codes.push_back(static_cast<std::uint8_t>(q));
        scales.push_back(s);
        products.push_back(exact);
      }
    }
  }
  ASSERT_GT(codes.size(), 10u);  // the search finds double-rounding cases
  // One row per case: a group of 8 holding the code once, then zeros.
  const auto n = static_cast<std::int64_t>(codes.size());
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n * 4), 0);
  for (std::int64_t r = 0; r < n; ++r) bytes[static_cast<std::size_t>(r * 4)] = codes[static_cast<std::size_t>(r)];
  const matmul::WeightView w =
      matmul::DenseWeights(WeightFormat::kUint4, WeightPacking::kLowbit, ScaleGeometry::kRowGroups, ScaleType::kFp32, n,
                           8, 8, 1, bytes.data(), scales.data(), nullptr, nullptr);
  ASSERT_TRUE(matmul::ValidateWeights(w).ok) << matmul::ValidateWeights(w).error;
  for (const Operand& op : kOperands) {
    int failures = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      CheckOperand(op, matmul::WeightOperand(w, 0, r, 0, op.spec), products[static_cast<std::size_t>(r)], "int4 fp32",
                   codes[static_cast<std::size_t>(r)], static_cast<unsigned>(r), &failures);
    }
    EXPECT_EQ(failures, 0) << op.name;
  }
}

// FP8 per channel: the E4M3 element is the operand, exact in both types;
// the channel scale stays outside (the epilogue's).
TEST(WeightOperand, Fp8PerChannelElementIsTheOperand) {
  const std::vector<std::uint8_t> codes = AllCodes(256);
  const float channel_scale = 3.0e-3f;
  const matmul::WeightView w =
      matmul::DenseWeights(WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleGeometry::kPerRow,
                           ScaleType::kFp32, 1, 256, 0, 1, codes.data(), &channel_scale, nullptr, nullptr);
  ASSERT_TRUE(matmul::ValidateWeights(w).ok);
  for (const Operand& op : kOperands) {
    int failures = 0;
    for (unsigned e = 0; e < 256; ++e) {
      EXPECT_TRUE(CheckOperand(op, matmul::WeightOperand(w, 0, 0, e, op.spec), E4m3Value(e), "e4m3", e, 0, &failures));
    }
    EXPECT_EQ(failures, 0);
  }
  EXPECT_EQ(matmul::OuterScaleOf(w, 0, 0), channel_scale);
  EXPECT_TRUE(matmul::HasOuterScale(WeightFormat::kFp8E4m3PerChannel));
  EXPECT_FALSE(matmul::HasOuterScale(WeightFormat::kMxfp8E4m3));
}

}  // namespace
}  // namespace lowbit
