// The exact mode (formats/matmul/exact.h) against Boost rationals: every
// output of random problems over every weight kind equals the one
// round-to-nearest-even of the rational sum computed from the oracle's
// decoders (matmul_support.h), including shapes that do not tile, M = 1, 3,
// 16, odd N, L > 1, NaN / Inf / zero blocks and extreme scales.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "lowbit/formats/matmul/exact.h"
#include "matmul_support.h"
#include "test_level.h"

namespace lowbit::matmul_test {
namespace {

int Trials() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return 8;
    case testing::TestLevel::kCi: return 40;
    case testing::TestLevel::kFull: return 600;
  }
  return 60;
}

std::string Describe(const Problem& p) {
  return std::string(p.kind.name) + " N=" + std::to_string(p.n) + " K=" + std::to_string(p.k) +
         " M=" + std::to_string(p.m) + " L=" + std::to_string(p.batch) + " block=" + std::to_string(p.block) +
         " geometry=" + std::to_string(static_cast<int>(p.geometry)) + " act=" +
         matmul::ActivationTypeName(p.act) + " out=" + matmul::OutputTypeName(p.out) +
         (p.with_zeros ? " zeros" : "");
}

// Runs the exact mode on p and compares every output with the rational
// reference; returns how many outputs were compared.
std::int64_t CheckAgainstRationals(Problem& p) {
  matmul::MatmulProblem view = p.View();
  const matmul::ExactMatmulResult r = matmul::ExactMatmul(view);
  EXPECT_TRUE(r.status.ok) << Describe(p) << ": " << r.status.error;
  if (!r.status.ok) return 0;
  std::int64_t compared = 0;
  std::size_t i = 0;
  for (std::int64_t l = 0; l < p.batch; ++l) {
    for (std::int64_t m = 0; m < p.m; ++m) {
      for (std::int64_t n = 0; n < p.n; ++n, ++i) {
        RationalSum sum;
        for (std::int64_t k = 0; k < p.k; ++k) {
          const Exact x = reference::ExactValue(matmul::ActivationFormatOf(p.act),
                                                p.x[static_cast<std::size_t>((l * p.m + m) * p.k + k)]);
          sum.Add(Multiply(x, ReferenceWeight(p, l, n, k)));
        }
        const std::string problem = CheckRounded(sum, p.out, r.codes[i]);
        EXPECT_EQ(problem, "") << Describe(p) << " y[" << l << "][" << m << "][" << n << "]";
        if (!problem.empty()) return compared;
        ++compared;
      }
    }
  }
  return compared;
}

class MatmulExactVsRationals : public ::testing::TestWithParam<registry::MatmulWeightKind> {};

TEST_P(MatmulExactVsRationals, ModerateValues) {
  Random r(0x5eed0000u + static_cast<std::uint64_t>(GetParam().format) * 131 +
           static_cast<std::uint64_t>(GetParam().packing) * 17 + static_cast<std::uint64_t>(GetParam().scale_type));
  std::int64_t compared = 0;
  for (int t = 0; t < Trials(); ++t) {
    Problem p = RandomProblem(r, GetParam(), 0.0);
    compared += CheckAgainstRationals(p);
    if (HasFailure()) return;
  }
  EXPECT_GT(compared, 0);
}

TEST_P(MatmulExactVsRationals, SpecialsAndExtremeScales) {
  Random r(0xabc00000u + static_cast<std::uint64_t>(GetParam().format) * 131 +
           static_cast<std::uint64_t>(GetParam().packing) * 17 + static_cast<std::uint64_t>(GetParam().scale_type));
  std::int64_t compared = 0;
  for (int t = 0; t < Trials(); ++t) {
    Problem p = RandomProblem(r, GetParam(), r.Pick<double>({0.01, 0.1, 0.5}));
    compared += CheckAgainstRationals(p);
    if (HasFailure()) return;
  }
  EXPECT_GT(compared, 0);
}

TEST_P(MatmulExactVsRationals, AllZeroBlocksGivePositiveZero) {
  Random r(7);
  Problem p = RandomProblem(r, GetParam(), 0.0, 3);
  for (auto& c : p.codes) c = 0;  // code 0 is +0 in every element format and q = 0 in the integer ones
  if (p.with_zeros) {
    for (auto& z : p.zero_points) z = 0;
  }
  Pack(p);
  matmul::MatmulProblem view = p.View();
  const matmul::ExactMatmulResult res = matmul::ExactMatmul(view);
  ASSERT_TRUE(res.status.ok) << res.status.error;
  // Terms are +0 or -0 (negative activations): the sum is +0 unless every
  // term is -0; finite NaN-free data here, so compare with the reference.
  CheckAgainstRationals(p);
}

// The kind's canonical name as a gtest name: "uint4/g128+gptq-fp16" ->
// "uint4_g128_gptq_fp16" (gtest takes letters, digits and '_').
std::string KindName(const ::testing::TestParamInfo<registry::MatmulWeightKind>& info) {
  std::string name = info.param.name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, MatmulExactVsRationals, ::testing::ValuesIn(registry::kMatmulWeightKinds),
                         KindName);

// ---- ExactSum alone -----------------------------------------------------------------

Rational RationalOf(double v) {
  int e = 0;
  const double f = std::frexp(v, &e);
  const std::int64_t mantissa = static_cast<std::int64_t>(std::ldexp(f, 53));
  return Rational(mantissa) * reference::PowerOfTwo(e - 53);
}

TEST(MatmulExactSum, CancellationAcrossTheWholeRange) {
  Random r(11);
  for (int t = 0; t < Trials() * 10; ++t) {
    matmul::ExactSum s;
    Rational want = 0;
    const int terms = static_cast<int>(r.Int(1, 40));
    for (int i = 0; i < terms; ++i) {
      // products of values 2^-150 .. 2^130 (inside the argued range), with
      // big cancelling pairs
      const double a = std::ldexp(static_cast<double>(r.Int(1, (1ll << 53) - 1)), static_cast<int>(r.Int(-200, 80)));
      const double b = std::ldexp(static_cast<double>(r.Int(1, 2047)) * (r.Chance(0.5) ? -1 : 1),
                                  static_cast<int>(r.Int(-90, 50)));
      s.AddProduct(a, b);
      want += RationalOf(a) * RationalOf(b);
      if (r.Chance(0.3)) {
        s.AddProduct(-a, b);
        want -= RationalOf(a) * RationalOf(b);
      }
    }
    ASSERT_FALSE(s.out_of_range());
    RationalSum ref;
    ref.total = want;
    ref.all_negative_zero = false;
    for (matmul::OutputType out : {matmul::OutputType::kFp32, matmul::OutputType::kBf16, matmul::OutputType::kFp16}) {
      ASSERT_EQ(CheckRounded(ref, out, matmul::RoundExactSum(s, out)), "") << "trial " << t;
    }
    // The sign and the nearest binary64 agree with the rationals too.
    ASSERT_EQ(s.Sign(), want > 0 ? 1 : want < 0 ? -1 : 0);
    const double nearest = s.RoundToNearest();
    if (want != 0) {
      Rational rounded;
      ASSERT_TRUE(RoundToBinary(want < 0 ? Rational(-want) : want, 53, -1022, 1023, &rounded));
      ASSERT_EQ(RationalOf(std::fabs(nearest)), rounded) << "trial " << t;
    }
  }
}

TEST(MatmulExactSum, SpecialsFollowIeee) {
  const double inf = std::numeric_limits<double>::infinity();
  {
    matmul::ExactSum s;
    s.AddProduct(inf, 1.0);
    s.AddProduct(-inf, 1.0);
    EXPECT_TRUE(std::isnan(s.RoundToOdd()));  // Inf - Inf
  }
  {
    matmul::ExactSum s;
    s.AddProduct(inf, 0.0);
    EXPECT_TRUE(std::isnan(s.RoundToOdd()));  // 0 * Inf
  }
  {
    matmul::ExactSum s;
    s.AddProduct(inf, -2.0);
    s.AddProduct(1e300, 1e-300);
    EXPECT_EQ(s.RoundToOdd(), -inf);
  }
  {
    matmul::ExactSum s;
    s.AddProduct(-0.0, 1.0);
    s.AddProduct(0.0, -3.0);
    EXPECT_TRUE(std::signbit(s.RoundToNearest()));  // every term -0
    s.AddProduct(0.0, 1.0);
    EXPECT_FALSE(std::signbit(s.RoundToNearest()));  // one +0 term
  }
  {
    matmul::ExactSum s;
    s.AddProduct(1.0, 1.0);
    s.AddProduct(-1.0, 1.0);
    EXPECT_FALSE(std::signbit(s.RoundToNearest()));  // x - x = +0
  }
}

TEST(MatmulExactSum, RefusesValuesOutsideItsRange) {
  matmul::ExactSum tiny;
  tiny.Add(std::ldexp(1.0, -400));
  EXPECT_TRUE(tiny.out_of_range());
  matmul::ExactSum huge;
  huge.Add(std::ldexp(1.0, 400));
  EXPECT_TRUE(huge.out_of_range());
  matmul::ExactSum fine;
  fine.Add(std::ldexp(1.0, -300));
  fine.Add(std::ldexp(1.0, 300));
  EXPECT_FALSE(fine.out_of_range());
}

// The double rounding through round-to-odd is one rounding: a sum just above
// a tie of the output rounds up, exactly at the tie to even.
TEST(MatmulExactSum, RoundToOddKeepsTheStickyBit) {
  // 1 + 2^-8 is a BF16 tie (8-bit significand): ties to even gives 1.0;
  // 1 + 2^-8 + 2^-200 must round up to 1 + 2^-7.
  matmul::ExactSum tie;
  tie.Add(1.0);
  tie.Add(std::ldexp(1.0, -8));
  EXPECT_EQ(matmul::RoundExactSum(tie, matmul::OutputType::kBf16), 0x3F80u);
  matmul::ExactSum above = tie;
  above.Add(std::ldexp(1.0, -200));
  EXPECT_EQ(matmul::RoundExactSum(above, matmul::OutputType::kBf16), 0x3F81u);
  // The same for FP32 (24 bits): 1 + 2^-24 + 2^-250.
  matmul::ExactSum fp32;
  fp32.Add(1.0);
  fp32.Add(std::ldexp(1.0, -24));
  fp32.Add(std::ldexp(1.0, -250));
  EXPECT_EQ(matmul::RoundExactSum(fp32, matmul::OutputType::kFp32), 0x3F800001u);
}

}  // namespace
}  // namespace lowbit::matmul_test
