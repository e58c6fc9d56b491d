// formats/include/lowbit/formats/matmul/gemm_bound.h: the error bound a GEMM
// row may state holds for an emulation of the arithmetic it models, and is
// tight: built inputs reach a stated fraction of it.
//
// The emulated tensor-core step is the bound's term 2 taken literally, its
// worst case: the 16 products and the accumulator aligned to the largest
// exponent, every addend truncated to FP32's 23 fraction bits at that
// exponent, summed exactly, and the sum truncated to 24 significant bits.
// The weights go through the model's BF16 rounding (EncodeF64 to kBf16,
// round to nearest even) where the kernel rounds them (INT4 (q - z) * s).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/gemm_bound.h"
#include "lowbit/formats/matmul/weights.h"
#include "test_level.h"

namespace lowbit::matmul {
namespace {

using lowbit::testing::CurrentTestLevel;
using lowbit::testing::TestLevel;

// x truncated toward zero to a multiple of 2^e (exact in double for the
// magnitudes used here).
double TruncateToMultiple(double x, int e) {
  const double unit = std::ldexp(1.0, e);
  return std::trunc(x / unit) * unit;
}

// x truncated to 24 significant bits (FP32's precision), toward zero.
double TruncateTo24Bits(double x) {
  if (x == 0) return 0;
  int e;
  std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
  return TruncateToMultiple(x, e - 24);
}

// One tensor-core step as the bound's model has it (comment above).
double TruncatingStep(double c, const double* products, int n) {
  double largest = std::fabs(c);
  for (int i = 0; i < n; ++i) largest = std::max(largest, std::fabs(products[i]));
  if (largest == 0) return 0;
  int e;
  std::frexp(largest, &e);
  const int unit = e - 24;  // FP32's last bit at the largest addend's exponent
  double sum = TruncateToMultiple(c, unit);
  for (int i = 0; i < n; ++i) sum += TruncateToMultiple(products[i], unit);  // exact: few bits
  return TruncateTo24Bits(sum);
}

// The kernel's sum over K in steps of kMmaSyncK products.
double EmulatedDot(const std::vector<double>& x, const std::vector<double>& w) {
  double c = 0;
  double p[kMmaSyncK];
  for (std::size_t k0 = 0; k0 < x.size(); k0 += kMmaSyncK) {
    int n = 0;
    for (std::size_t k = k0; k < x.size() && k < k0 + kMmaSyncK; ++k) p[n++] = x[k] * w[k];
    c = TruncatingStep(c, p, n);
  }
  return c;
}

// Exact enough: double-double (below 2^-100 of sum |x w|).
double ExactDot(const std::vector<double>& x, const std::vector<double>& w) {
  double hi = 0, lo = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double p = x[k] * w[k];
    const double s = hi + p;
    const double bp = s - hi;
    lo += (hi - (s - bp)) + (p - bp);
    hi = s;
  }
  return hi + lo;
}

double RoundToBf16(double v) { return DecodeToF64(kBf16, EncodeF64(kBf16, v).code); }

GemmErrorModel KernelModel(double weight_rel) {
  GemmErrorModel m;
  m.weight_rel = weight_rel;
  m.step_rel = TensorCoreStepRel();
  m.step_abs = Fp32MinNormal();
  return m;
}

GemmBoundTerms Terms(const std::vector<double>& x, const std::vector<double>& w) {
  GemmBoundTerms t;
  t.k = static_cast<std::int64_t>(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    t.sum_abs_xw += std::fabs(x[k] * w[k]);
    t.sum_abs_x += std::fabs(x[k]);
  }
  return t;
}

int Trials() {
  switch (CurrentTestLevel()) {
    case TestLevel::kSmoke: return 20;
    case TestLevel::kCi: return 200;
    case TestLevel::kFull: return 2000;
  }
  return 200;
}

// A BF16 value with a random sign, exponent in [lo, hi] and mantissa.
double RandomBf16(std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> e(lo, hi), m(0, 127), s(0, 1);
  return (s(rng) ? -1.0 : 1.0) * std::ldexp(1.0 + m(rng) / 128.0, e(rng));
}

// The bound holds for the emulated kernel on random inputs: exact weights
// (NVFP4-like, within 6 significant bits), K not a multiple of 16 included,
// and INT4-like weights rounded to BF16 by the model.
TEST(GemmBound, HoldsForTheModelledKernel) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> kdist(1, 2048);
  double worst = 0;
  for (int trial = 0; trial < Trials(); ++trial) {
    const int k = trial < 4 ? (16 << trial) + trial : kdist(rng);
    const bool rounded = trial % 2 == 1;
    std::vector<double> x(k), w(k), w_kernel(k);
    std::uniform_int_distribution<int> q(-15, 15), sm(0, 1023), se(-6, 2);
    for (int i = 0; i < k; ++i) {
      x[i] = RandomBf16(rng, -8, 8);
      if (rounded) {
        // (q - z) * s with an FP16 scale: exact in double, rounded to BF16
        // by the kernel.
        w[i] = q(rng) * std::ldexp(1.0 + sm(rng) / 1024.0, se(rng));
        w_kernel[i] = RoundToBf16(w[i]);
      } else {
        w[i] = RandomBf16(rng, -10, 10);
        w[i] = std::ldexp(std::round(std::ldexp(w[i], 5)), -5);  // fewer significant bits
        w_kernel[i] = w[i];
      }
    }
    const double got = EmulatedDot(x, w_kernel);
    const double exact = ExactDot(x, w);
    const double bound = GemmErrorBound(KernelModel(rounded ? Bf16UnitRoundoff() : 0), Terms(x, w));
    const double err = std::fabs(got - exact);
    ASSERT_LE(err, bound) << "k " << k << " rounded " << rounded;
    worst = std::max(worst, err / bound);
  }
  EXPECT_GT(worst, 0.0);
  std::printf("[gemm_bound] random inputs: max error / bound = %.3g\n", worst);
}

// Tight for the step term: one product 1, then K - 1 products of
// (1 - 2^-7) * 2^-23, each under one ulp of the accumulator and truncated
// away: the loss is (K - 1)(1 - 2^-7) 2^-23 against a bound of about
// (K / 16) * 2^-18 = (K - 1) * 2^-23 * 2: half of it.
TEST(GemmBound, TightForTheStepTerm) {
  for (int k : {256, 4096, 8192}) {
    std::vector<double> x(k, 1.0), w(k, (1.0 - std::ldexp(1.0, -7)) * std::ldexp(1.0, -23));
    w[0] = 1.0;
    const double err = std::fabs(EmulatedDot(x, w) - ExactDot(x, w));
    const double bound = GemmErrorBound(KernelModel(0), Terms(x, w));
    EXPECT_LE(err, bound);
    EXPECT_GE(err / bound, 0.45) << "k " << k;
    EXPECT_LE(err / bound, 0.5) << "k " << k;
  }
}

// Tight for the weight-rounding term: (q - z) * s = s = FP16 1 + 3 * 2^-10,
// which the model rounds to the BF16 1 (0.75 of BF16's unit roundoff), with
// x = 1: the kernel's sum is exactly K, the exact one K * s.
TEST(GemmBound, TightForTheWeightRoundingTerm) {
  const double s = DecodeToF64(kFp16, (15u << 10) | 3u);
  ASSERT_EQ(s, 1.0 + 3.0 / 1024.0);
  ASSERT_EQ(RoundToBf16(s), 1.0);
  for (int k : {128, 512}) {
    std::vector<double> x(k, 1.0), w(k, s), w_kernel(k, RoundToBf16(s));
    const double err = std::fabs(EmulatedDot(x, w_kernel) - ExactDot(x, w));
    const double bound = GemmErrorBound(KernelModel(Bf16UnitRoundoff()), Terms(x, w));
    EXPECT_LE(err, bound);
    EXPECT_GE(err / bound, 0.7) << "k " << k;
  }
}

// Output rounding and epilogue terms: BF16 output of a value t * sum keeps
// within the bound, and the output term alone is reached at a BF16 tie-free
// worst case (relative 2^-8 minus a little).
TEST(GemmBound, OutputAndEpilogueTerms) {
  GemmErrorModel m = KernelModel(0);
  m.output_rel = Bf16UnitRoundoff();
  m.epilogue_muls = 1;
  // sum = 1 + 2^-8 - 2^-20 rounds to 1 in BF16: error just under 2^-8.
  const int k = 16;
  std::vector<double> x(k, 0.0), w(k, 0.0);
  x[0] = 1.0;
  w[0] = 1.0;
  x[1] = std::ldexp(1.0, -8) - std::ldexp(1.0, -20);
  w[1] = 1.0;
  const double t = 1.0;
  const double got = RoundToBf16(static_cast<float>(t * EmulatedDot(x, w)));
  const double exact = t * ExactDot(x, w);
  GemmBoundTerms terms = Terms(x, w);
  const double bound = GemmErrorBound(m, terms);
  const double err = std::fabs(got - exact);
  EXPECT_LE(err, bound);
  EXPECT_GE(err / bound, 0.95);
}

// The bound grows with K and with each term's constant, and is zero only
// for an exact model over zero magnitudes.
TEST(GemmBound, MonotoneInItsArguments) {
  GemmErrorModel m = KernelModel(0);
  GemmBoundTerms t{1024, 100.0, 10.0, 1.0};
  const double base = GemmErrorBound(m, t);
  EXPECT_GT(base, 0.0);
  GemmBoundTerms longer = t;
  longer.k = 2048;
  EXPECT_GT(GemmErrorBound(m, longer), base);
  GemmErrorModel rounded = m;
  rounded.weight_rel = Bf16UnitRoundoff();
  EXPECT_GT(GemmErrorBound(rounded, t), base);
  EXPECT_EQ(GemmErrorBound(GemmErrorModel{}, GemmBoundTerms{16, 0, 0, 1}), 0.0);
}

// BoundTermsOf on a hand-worked NVFP4 problem: K = 16, one block with scale
// UE4M3 0x38 = 1, codes 1 (0.5) and 0x9 (-0.5) alternating, tensor scale
// 0.25, x = 1, 2, 1, 2, ...: S = 8 * 0.5 * (1 + 2) = 12, X = 24, t = 0.25.
TEST(GemmBound, BoundTermsOfHandWorkedNvfp4) {
  const std::int64_t n = 1, k = 16;
  std::vector<std::uint8_t> codes(8, 0x91);  // element 2j: 0x1, element 2j+1: 0x9
  std::vector<std::uint8_t> scales = {0x38};
  recipe::TensorScale t;
  t.decode = 0.25f;
  const WeightView w = DenseWeights(WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleGeometry::kFlatBlocks,
                                    ScaleType::kUe4m3, n, k, 16, 1, codes.data(), scales.data(), nullptr, &t);
  std::vector<std::uint16_t> x(k);
  for (int i = 0; i < k; ++i) x[i] = i % 2 == 0 ? 0x3F80 : 0x4000;  // BF16 1, 2
  std::vector<float> y(1);
  MatmulProblem p;
  p.w = w;
  p.m = 1;
  p.x = {ActivationType::kBf16, x.data(), k, k, 0};
  p.y = {OutputType::kFp32, y.data(), 1, 1, 0};
  ASSERT_TRUE(Validate(p).ok) << Validate(p).error;
  const GemmBoundTerms terms = BoundTermsOf(p, 0, 0, 0);
  EXPECT_EQ(terms.k, 16);
  EXPECT_EQ(terms.sum_abs_xw, 12.0);
  EXPECT_EQ(terms.sum_abs_x, 24.0);
  EXPECT_EQ(terms.abs_scale, 0.25);
}

}  // namespace
}  // namespace lowbit::matmul
