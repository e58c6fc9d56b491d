// The product check (lowbit/check/matmul_diagnosis.h) against kernels
// written here, each in plain C++ without lowbit's candidates: an fmaf loop
// in K order, a pairwise tree, blocks, split-K, an exact sum in binary64
// (exact for the narrow inputs below), scaled epilogues, and three
// deliberate bugs (a dropped K tail, a wrong scale index, B transposed).
// Each must be named by the diagnosis. For the tensor-core candidates the
// model is the semantics: a product made with ModelMatmul under a schedule
// must be named as that schedule and not as its neighbours.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lowbit/check/matmul_diagnosis.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/testing/matmul.h"

namespace lowbit::testing {
namespace {

using check::CheckMatmul;
using check::MatmulInputs;
using check::MatmulReport;

// BF16 codes with exponents in [-4, 4]: every product has at most 16
// significant bits between 2^-8 and 2^10, so a binary64 sum of up to 2^20
// of them is exact.
std::vector<std::uint16_t> NarrowBf16(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> out(count);
  for (auto& c : out) {
    const std::uint32_t sign = rng() & 1u, exponent = 127 - 4 + rng() % 9, mantissa = rng() & 0x7Fu;
    c = static_cast<std::uint16_t>((sign << 15) | (exponent << 7) | mantissa);
  }
  return out;
}

float Bf16Value(std::uint16_t c) { return std::bit_cast<float>(static_cast<std::uint32_t>(c) << 16); }

// Row-major A (M x K) and B (K x N) values.
struct Problem {
  long m, n, k;
  std::vector<std::uint16_t> a, b;
  float A(long i, long kk) const { return Bf16Value(a[static_cast<std::size_t>(i * k + kk)]); }
  float B(long kk, long j) const { return Bf16Value(b[static_cast<std::size_t>(kk * n + j)]); }
};

Problem MakeProblem(long m, long n, long k, std::uint32_t seed) {
  return {m, n, k, NarrowBf16(static_cast<std::size_t>(m * k), seed),
          NarrowBf16(static_cast<std::size_t>(k * n), seed + 1)};
}

template <typename F>
std::vector<std::uint32_t> Fp32Kernel(const Problem& p, F dot) {
  std::vector<std::uint32_t> d(static_cast<std::size_t>(p.m * p.n));
  for (long i = 0; i < p.m; ++i) {
    for (long j = 0; j < p.n; ++j) d[static_cast<std::size_t>(i * p.n + j)] = F32Bits(dot(i, j));
  }
  return d;
}

MatmulReport Check(const Problem& p, const std::vector<std::uint32_t>& d) {
  return CheckMatmul(MatmulOf(p.m, p.n, p.k, "bf16", p.a, "bf16", p.b, d));
}

TEST(MatmulDiagnosis, FmaInKOrderIsNamed) {
  const Problem p = MakeProblem(6, 5, 200, 1);
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0.0f;
    for (long k = 0; k < p.k; ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    return acc;
  });
  const MatmulReport r = Check(p, d);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "fp32 fma, K order"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 pairwise tree of products"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "mma.m16n8k16.f32.bf16.bf16"));
  EXPECT_TRUE(r.Passed());
}

TEST(MatmulDiagnosis, ExactSumRoundedOnceIsNamedAndIsTheReference) {
  const Problem p = MakeProblem(7, 4, 300, 2);
  // Exact in binary64 (NarrowBf16), then one rounding to FP32.
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    double s = 0;
    for (long k = 0; k < p.k; ++k) s += static_cast<double>(p.A(i, k)) * static_cast<double>(p.B(k, j));
    return static_cast<float>(s);
  });
  const MatmulReport r = Check(p, d);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "exact product rounded once"));
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.checked, 28u);
  ASSERT_FALSE(r.ulp_distribution.empty());
  EXPECT_EQ(r.ulp_distribution[0].count, 28u);
}

TEST(MatmulDiagnosis, MismatchesAreDecodedAgainstTheExactProduct) {
  const Problem p = MakeProblem(8, 8, 400, 3);
  std::vector<std::uint32_t> exact(64), fma(64);
  std::uint64_t differ = 0;
  for (long i = 0; i < 8; ++i) {
    for (long j = 0; j < 8; ++j) {
      double s = 0;
      float acc = 0;
      for (long k = 0; k < p.k; ++k) {
        s += static_cast<double>(p.A(i, k)) * static_cast<double>(p.B(k, j));
        acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
      }
      exact[static_cast<std::size_t>(i * 8 + j)] = F32Bits(static_cast<float>(s));
      fma[static_cast<std::size_t>(i * 8 + j)] = F32Bits(acc);
      differ += F32Bits(static_cast<float>(s)) != F32Bits(acc);
    }
  }
  ASSERT_GT(differ, 0u) << "the inputs must make the K-order sum differ from the exact one somewhere";
  const MatmulReport r = Check(p, fma);
  EXPECT_EQ(r.mismatches, differ);
  ASSERT_FALSE(r.first_mismatches.empty());
  const check::MatmulMismatch& m = r.first_mismatches[0];
  const std::size_t at = static_cast<std::size_t>(m.row * 8 + m.column);
  EXPECT_EQ(m.expected, exact[at]);
  EXPECT_EQ(m.actual, fma[at]);
  const auto key = [](std::uint32_t c) {
    return (c >> 31) != 0 ? -static_cast<std::int64_t>(c & 0x7FFFFFFFu) : static_cast<std::int64_t>(c);
  };
  EXPECT_EQ(m.ulps, static_cast<std::uint64_t>(std::llabs(key(exact[at]) - key(fma[at]))));
  std::uint64_t total = 0;
  for (const auto& bucket : r.ulp_distribution) total += bucket.count;
  EXPECT_EQ(total, 64u);
  EXPECT_EQ(r.ulp_distribution[0].count, 64u - differ);
}

// A sign error: the distance counts through zero (the codes of -x and x are
// 2 * |code of x| apart).
TEST(MatmulDiagnosis, UlpDistanceCountsThroughZero) {
  const Problem p = MakeProblem(2, 2, 50, 12);
  auto d = Fp32Kernel(p, [&](long i, long j) {
    double s = 0;
    for (long k = 0; k < p.k; ++k) s += static_cast<double>(p.A(i, k)) * static_cast<double>(p.B(k, j));
    return static_cast<float>(s);
  });
  const std::uint32_t exact = d[3];
  d[3] ^= 0x80000000u;  // d[1][1] negated
  const MatmulReport r = Check(p, d);
  ASSERT_EQ(r.first_mismatches.size(), 1u) << check::MatmulReportText(r);
  EXPECT_EQ(r.first_mismatches[0].row, 1);
  EXPECT_EQ(r.first_mismatches[0].column, 1);
  EXPECT_EQ(r.first_mismatches[0].ulps, 2u * (exact & 0x7FFFFFFFu));
  EXPECT_EQ(r.Match(), nullptr);
}

TEST(MatmulDiagnosis, PairwiseTreeIsNamed) {
  const Problem p = MakeProblem(5, 6, 77, 4);
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    std::vector<float> v(static_cast<std::size_t>(p.k));
    for (long k = 0; k < p.k; ++k) v[static_cast<std::size_t>(k)] = p.A(i, k) * p.B(k, j);
    // Strided in place: the same tree as pairing neighbours level by level.
    for (std::size_t stride = 1; stride < v.size(); stride *= 2) {
      for (std::size_t t = 0; t + stride < v.size(); t += 2 * stride) v[t] = v[t] + v[t + stride];
    }
    return v[0];
  });
  const MatmulReport r = Check(p, d);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "fp32 pairwise tree of products"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma, K order"));
}

TEST(MatmulDiagnosis, BlocksOf64AreNamed) {
  const Problem p = MakeProblem(4, 6, 300, 5);
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float total = 0;
    for (long first = 0; first < p.k; first += 64) {
      float part = 0;
      for (long k = first; k < std::min(p.k, first + 64); ++k) part = std::fmaf(p.A(i, k), p.B(k, j), part);
      total += part;
    }
    return total;
  });
  const MatmulReport r = Check(p, d);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "fp32 fma in blocks of 64"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma in blocks of 32"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma in blocks of 128"));
}

// Split-K as a kernel launches it: part p of ceil(K / P) elements, the
// partial sums stored and reduced afterwards.
float SplitK(const Problem& p, long i, long j, int parts, bool tree) {
  const long per = (p.k + parts - 1) / parts;
  std::vector<float> partial;
  for (int q = 0; q < parts; ++q) {
    float acc = 0;
    for (long k = q * per; k < std::min(p.k, (q + 1) * per); ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    partial.push_back(acc);
  }
  if (!tree) {
    float s = partial[0];
    for (int q = 1; q < parts; ++q) s += partial[static_cast<std::size_t>(q)];
    return s;
  }
  while (partial.size() > 1) {  // neighbours paired level by level, an odd last passes up
    std::vector<float> next;
    for (std::size_t t = 0; t + 1 < partial.size(); t += 2) next.push_back(partial[t] + partial[t + 1]);
    if (partial.size() % 2 == 1) next.push_back(partial.back());
    partial = next;
  }
  return partial[0];
}

TEST(MatmulDiagnosis, SplitKInOrderAndAsATreeAreNamed) {
  const Problem p = MakeProblem(6, 6, 480, 6);
  const MatmulReport in_order = Check(p, Fp32Kernel(p, [&](long i, long j) { return SplitK(p, i, j, 5, false); }));
  EXPECT_TRUE(MatmulDiagnosedAs(in_order, "fp32 fma, K order, split-K 5 in order"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(in_order, "fp32 fma, K order, split-K 4 in order"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(in_order, "fp32 fma, K order, split-K 6 in order"));
  const MatmulReport tree = Check(p, Fp32Kernel(p, [&](long i, long j) { return SplitK(p, i, j, 7, true); }));
  EXPECT_TRUE(MatmulDiagnosedAs(tree, "fp32 fma, K order, split-K 7 tree"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(tree, "fp32 fma, K order, split-K 7 in order"));
}

TEST(MatmulDiagnosis, ScalesAfterTheAccumulatorAreNamed) {
  const Problem p = MakeProblem(5, 7, 150, 7);
  std::vector<float> rows = {0.37f, 1.1f, 3.3f, 0.013f, 7.7f}, cols = {1.7f, 0.3f, 2.9f, 0.51f, 1.13f, 9.1f, 0.07f};
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0;
    for (long k = 0; k < p.k; ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    return (acc * rows[static_cast<std::size_t>(i)]) * cols[static_cast<std::size_t>(j)];
  });
  MatmulInputs in = MatmulOf(p.m, p.n, p.k, "bf16", p.a, "bf16", p.b, d);
  in.row_scales = rows;
  in.column_scales = cols;
  const MatmulReport r = CheckMatmul(in);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "fp32 fma, K order, scales one after another"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma, K order, scales on the operands"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma, K order, column scale before row scale"));
  const auto column_first = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0;
    for (long k = 0; k < p.k; ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    return (acc * cols[static_cast<std::size_t>(j)]) * rows[static_cast<std::size_t>(i)];
  });
  MatmulInputs in2 = MatmulOf(p.m, p.n, p.k, "bf16", p.a, "bf16", p.b, column_first);
  in2.row_scales = rows;
  in2.column_scales = cols;
  const MatmulReport r2 = CheckMatmul(in2);
  EXPECT_TRUE(MatmulDiagnosedAs(r2, "fp32 fma, K order, column scale before row scale"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r2, "fp32 fma, K order, scales one after another"));
}

TEST(MatmulDiagnosis, ADroppedKTailIsNamed) {
  const Problem p = MakeProblem(6, 6, 100, 8);
  // A kernel with tiles of 32 along K that forgets the last partial tile.
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0;
    for (long k = 0; k < 96; ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    return acc;
  });
  const MatmulReport r = Check(p, d);
  ASSERT_NE(r.Match(), nullptr) << check::MatmulReportText(r);
  EXPECT_EQ(r.Match()->kind, "bug");
  EXPECT_EQ(r.Match()->name, "K tail dropped after 96 (tile 16), fp32 fma, K order");
}

TEST(MatmulDiagnosis, BReadTransposedIsNamed) {
  const Problem p = MakeProblem(4, 24, 24, 9);
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0;
    for (long k = 0; k < p.k; ++k) acc = std::fmaf(p.A(i, k), p.B(j, k), acc);  // the bug: B[j][k]
    return acc;
  });
  const MatmulReport r = Check(p, d);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "B read transposed, fp32 fma, K order"));
  EXPECT_EQ(r.candidates.front().kind, "bug") << check::MatmulReportText(r);
}

// MXFP8 B: E4M3 codes with an E8M0 scale per 32 of K, stored [n][block].
TEST(MatmulDiagnosis, AWrongBlockScaleIndexIsNamed) {
  const long m = 3, n = 4, k = 96, blocks = 3;
  const Problem base = MakeProblem(m, n, k, 10);
  std::mt19937 rng(11);
  std::vector<std::uint8_t> b(static_cast<std::size_t>(k * n)), scales(static_cast<std::size_t>(n * blocks));
  for (auto& c : b) c = static_cast<std::uint8_t>((rng() & 0x80u) | (0x20u + rng() % 0x40u));  // finite E4M3, 2^-3 .. 2^4
  for (auto& s : scales) s = static_cast<std::uint8_t>(127 - 3 + rng() % 7);                    // 2^-3 .. 2^3
  const auto e4m3 = [](std::uint8_t c) {
    const int e = (c >> 3) & 0xF, f = c & 7;
    const float v = e == 0 ? std::ldexp(static_cast<float>(f), -9) : std::ldexp(1.0f + f / 8.0f, e - 7);
    return (c & 0x80) ? -v : v;
  };
  const auto e8m0 = [](std::uint8_t s) { return std::ldexp(1.0f, static_cast<int>(s) - 127); };
  std::vector<std::uint32_t> d(static_cast<std::size_t>(m * n));
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      float acc = 0;
      for (long kk = 0; kk < k; ++kk) {
        // The bug: the scale of (j, block) read at [block][j].
        const float w = e4m3(b[static_cast<std::size_t>(kk * n + j)]) * e8m0(scales[static_cast<std::size_t>((kk / 32) * n + j)]);
        acc = std::fmaf(base.A(i, kk), w, acc);
      }
      d[static_cast<std::size_t>(i * n + j)] = F32Bits(acc);
    }
  }
  MatmulInputs in = MatmulOf(m, n, k, "bf16", base.a, "mxfp8", b, d);
  in.b.block_scales = scales.data();
  in.b.block_scale_count = scales.size();
  const MatmulReport r = CheckMatmul(in);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "B's block scales read transposed, fp32 fma, K order"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma, K order"));
}

// ---- tensor-core schedules: the model is the semantics ------------------------------

std::vector<std::uint32_t> ModelProduct(const matmul::AccumulationSchedule& s, const std::vector<std::uint32_t>& x,
                                        const std::vector<std::uint32_t>& w_nk, long m, long n, long k) {
  std::vector<std::uint32_t> y(static_cast<std::size_t>(m * n));
  matmul::ModelMatmul(s, x.data(), w_nk.data(), m, n, k, nullptr, y.data(), 2);
  return y;
}

// Finite E4M3 codes of magnitudes 2^-4 .. 2^4 with both signs.
std::vector<std::uint32_t> E4m3Codes(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> out(count);
  for (auto& c : out) c = (rng() & 0x80u) | ((3u + rng() % 9u) << 3) | (rng() & 7u);
  return out;
}

TEST(MatmulDiagnosis, Fp8PromotionEvery128IsToldFromNoPromotionAtK4096) {
  const long m = 4, n = 4, k = 4096;
  const auto a = E4m3Codes(static_cast<std::size_t>(m * k), 21);
  const auto w = E4m3Codes(static_cast<std::size_t>(n * k), 22);  // N x K
  for (int promotion : {128, 0}) {
    matmul::AccumulationSchedule s;
    ASSERT_TRUE(FindTensorCoreInstruction("wgmma.m64nNk32.f32.e4m3.e4m3", &s.instruction));
    s.promotion_interval = promotion;
    const auto d = ModelProduct(s, a, w, m, n, k);
    const MatmulReport r = CheckMatmul(MatmulOf(m, n, k, "e4m3", a, "e4m3", w, d, FormatId::kFp32, true));
    const std::string every128 = "wgmma.m64nNk32.f32.e4m3.e4m3, promotion every 128";
    const std::string none = "wgmma.m64nNk32.f32.e4m3.e4m3, no promotion";
    EXPECT_TRUE(MatmulDiagnosedAs(r, promotion == 128 ? every128 : none));
    EXPECT_TRUE(MatmulNotDiagnosedAs(r, promotion == 128 ? none : every128));
    EXPECT_TRUE(MatmulNotDiagnosedAs(r, "wgmma.m64nNk32.f32.e4m3.e4m3, promotion every 256"));
    EXPECT_TRUE(MatmulNotDiagnosedAs(r, "fp32 fma, K order"));
    EXPECT_TRUE(MatmulNotDiagnosedAs(r, "exact product rounded once"));
  }
}

TEST(MatmulDiagnosis, Bf16MmaChainAndItsSplitsAreNamedAsThemselves) {
  const long m = 4, n = 5, k = 512;
  const auto a16 = NarrowBf16(static_cast<std::size_t>(m * k), 31);
  const auto w16 = NarrowBf16(static_cast<std::size_t>(n * k), 32);
  const std::vector<std::uint32_t> a(a16.begin(), a16.end()), w(w16.begin(), w16.end());
  struct Case {
    int split;
    matmul::SplitReduction reduction;
    std::string name, neighbour;
  };
  const std::string mma = "mma.m16n8k16.f32.bf16.bf16";
  for (const Case& c : {Case{1, matmul::SplitReduction::kInOrder, mma, mma + ", split-K 2 in order"},
                        Case{4, matmul::SplitReduction::kPairwiseTree, mma + ", split-K 4 tree", mma + ", split-K 4 in order"},
                        Case{5, matmul::SplitReduction::kInOrder, mma + ", split-K 5 in order", mma + ", split-K 6 in order"}}) {
    matmul::AccumulationSchedule s;
    ASSERT_TRUE(FindTensorCoreInstruction(mma, &s.instruction));
    s.split_k = c.split;
    s.split_reduction = c.reduction;
    const auto d = ModelProduct(s, a, w, m, n, k);
    const MatmulReport r = CheckMatmul(MatmulOf(m, n, k, "bf16", a16, "bf16", w16, d, FormatId::kFp32, true));
    EXPECT_TRUE(MatmulDiagnosedAs(r, c.name));
    EXPECT_TRUE(MatmulNotDiagnosedAs(r, c.neighbour));
  }
}

TEST(MatmulDiagnosis, Fp8WithAlphaAndBf16OutputIsNamedWithItsEpilogue) {
  const long m = 3, n = 4, k = 256;
  const auto a = E4m3Codes(static_cast<std::size_t>(m * k), 41);
  const auto w = E4m3Codes(static_cast<std::size_t>(n * k), 42);
  matmul::AccumulationSchedule s;
  ASSERT_TRUE(FindTensorCoreInstruction("wgmma.m64nNk32.f32.e4m3.e4m3", &s.instruction));
  s.output = FormatId::kBf16;
  s.alpha = 0.37f * 1.9f;
  const auto d32 = ModelProduct(s, a, w, m, n, k);
  const std::vector<std::uint16_t> d(d32.begin(), d32.end());
  MatmulInputs in = MatmulOf(m, n, k, "e4m3", a, "e4m3", w, d, FormatId::kBf16, true);
  in.a.tensor_scale = 0.37f;
  in.b.tensor_scale = 1.9f;
  const MatmulReport r = CheckMatmul(in);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "wgmma.m64nNk32.f32.e4m3.e4m3, no promotion, scales one after another"));
}

// FP16 operands with an FP16 accumulator and FP16 output, and TF32 from FP32
// operands: the model's products are named as their instruction.
TEST(MatmulDiagnosis, Fp16AccumulatorAndTf32ChainsAreNamed) {
  const long m = 3, n = 4, k = 96;
  std::mt19937 rng(71);
  std::vector<std::uint16_t> a16(static_cast<std::size_t>(m * k)), w16(static_cast<std::size_t>(n * k));
  for (auto* v : {&a16, &w16}) {
    for (auto& c : *v) c = static_cast<std::uint16_t>(((rng() & 1u) << 15) | ((13u + rng() % 4u) << 10) | (rng() & 0x3FFu));
  }
  const std::vector<std::uint32_t> a(a16.begin(), a16.end()), w(w16.begin(), w16.end());
  matmul::AccumulationSchedule s;
  ASSERT_TRUE(FindTensorCoreInstruction("mma.m16n8k16.f16.f16.f16", &s.instruction));
  s.output = FormatId::kFp16;
  const auto d32 = ModelProduct(s, a, w, m, n, k);
  const std::vector<std::uint16_t> d(d32.begin(), d32.end());
  const MatmulReport r = CheckMatmul(MatmulOf(m, n, k, "fp16", a16, "fp16", w16, d, FormatId::kFp16, true));
  EXPECT_TRUE(MatmulDiagnosedAs(r, "mma.m16n8k16.f16.f16.f16"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(r, "mma.m16n8k16.f32.f16.f16"));

  std::vector<std::uint32_t> x32(static_cast<std::size_t>(m * k)), w32(static_cast<std::size_t>(n * k));
  for (auto* v : {&x32, &w32}) {
    for (auto& c : *v) c = ((rng() & 1u) << 31) | ((124u + rng() % 8u) << 23) | (rng() & 0x7FFFFFu);
  }
  matmul::AccumulationSchedule t;
  ASSERT_TRUE(FindTensorCoreInstruction("mma.m16n8k8.f32.tf32.tf32", &t.instruction));
  const auto y = ModelProduct(t, x32, w32, m, n, k);
  const MatmulReport tf32 = CheckMatmul(MatmulOf(m, n, k, "fp32", x32, "fp32", w32, y, FormatId::kFp32, true));
  EXPECT_TRUE(MatmulDiagnosedAs(tf32, "mma.m16n8k8.f32.tf32.tf32"));
  EXPECT_TRUE(MatmulNotDiagnosedAs(tf32, "fp32 fma, K order"));
}

// The sampled path: a product above the small-product bound is pruned on 16 x
// 16 outputs first; the match is then confirmed on every output.
TEST(MatmulDiagnosis, LargeProductsArePrunedOnASampleThenCheckedWhole) {
  const Problem p = MakeProblem(40, 40, 3000, 51);
  const auto d = Fp32Kernel(p, [&](long i, long j) {
    float acc = 0;
    for (long k = 0; k < p.k; ++k) acc = std::fmaf(p.A(i, k), p.B(k, j), acc);
    return acc;
  });
  const MatmulReport r = Check(p, d);
  EXPECT_EQ(r.sample_outputs, 256u);
  EXPECT_TRUE(r.Passed()) << check::MatmulReportText(r);
  EXPECT_TRUE(MatmulDiagnosedAs(r, "fp32 fma, K order"));
  EXPECT_EQ(r.checked, 1600u);
}

// ---- bad input: one line naming the problem --------------------------------------------

TEST(MatmulDiagnosis, BadInputIsOneLineNamingTheProblem) {
  const Problem p = MakeProblem(2, 3, 4, 61);
  std::vector<std::uint32_t> d(6);
  MatmulInputs in = MatmulOf(2, 3, 4, "bf16", p.a, "bf16", p.b, d);
  EXPECT_EQ(check::MatmulInputsProblem(in), "");
  MatmulInputs wrong_k = in;
  wrong_k.k = 5;
  EXPECT_EQ(CheckMatmul(wrong_k).error, "A holds 8 codes, M x K = 2 x 5 needs 10");
  MatmulInputs short_d = in;
  short_d.d_count = 5;
  EXPECT_EQ(CheckMatmul(short_d).error, "the output D holds 5 values, M x N = 2 x 3 needs 6");
  MatmulInputs d_type = in;
  d_type.d_type = FormatId::kE4m3;
  EXPECT_EQ(CheckMatmul(d_type).error, "the output D: type e4m3 is not fp32, bf16 or fp16");
  MatmulInputs rows = in;
  rows.row_scales = {1.0f};
  EXPECT_EQ(CheckMatmul(rows).error, "row scales: 1 given, one per row of A needs M = 2");
  MatmulInputs format = in;
  format.a.format = "bf\n16";
  EXPECT_EQ(CheckMatmul(format).error,
            "A: unknown format 'bf\\x0a16' (bf16, fp16, fp32, e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8)");
  std::vector<std::uint8_t> codes(12), scales(2);
  MatmulInputs mx = MatmulOf(2, 3, 4, "bf16", p.a, "mxfp8", codes, d);
  mx.b.block_scales = scales.data();
  mx.b.block_scale_count = scales.size();
  EXPECT_EQ(CheckMatmul(mx).error, "B's block scales: 2 given, mxfp8 needs N x ceil(K / 32) = 3 x 1 = 3");
  MatmulInputs no_scales = MatmulOf(2, 3, 4, "bf16", p.a, "mxfp8", codes, d);
  EXPECT_EQ(CheckMatmul(no_scales).error, "B's block scales: 0 given, mxfp8 needs N x ceil(K / 32) = 3 x 1 = 3");
}

}  // namespace
}  // namespace lowbit::testing
