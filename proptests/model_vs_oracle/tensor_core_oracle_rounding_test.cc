// The tensor-core oracle's step-6 rounding (reference::RoundIntoAccumulator)
// against two routes it shares nothing with: the project's value-grid oracle
// (OracleEncode) for FP16 round to nearest even, and the host FPU's
// double -> float conversion under FE_TONEAREST / FE_TOWARDZERO for FP32
// (IEEE 754 §5.4.2; every drawn value is exact in double). FP8 products'
// 14-bit FP32 output is the toward-zero float with its low 10 bits cleared
// (truncating twice is truncating once). The bound test trusts this
// rounding, so it is pinned here on its own.
#include <cfenv>
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "generators_at_level.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/reference/oracle_encode.h"
#include "lowbit/reference/tensor_core_bound.h"
#include "tensor_core_step_cases.h"

namespace lowbit {
namespace {

using reference::Dyadic;
using reference::FusedStepOracle;
using reference::StepResult;

constexpr testing::LevelCounts kValues = {5000, 200000, 5000000};

// m * 2^q with |m| < 2^50, biased to ties (m odd after a shift that puts the
// cut exactly at a half), binade edges (m = 2^j - 1, 2^j), the subnormal
// range, and the overflow threshold of FP16 and FP32.
Dyadic DrawDyadic(testing::SplitMixSource& src) {
  Dyadic x;
  std::int64_t m = 0;
  switch (src.Uniform(0, 3)) {
    case 0: m = src.Uniform(1, (std::int64_t{1} << 50) - 1); break;
    case 1: {
      const int j = static_cast<int>(src.Uniform(1, 49));
      m = (std::int64_t{1} << j) + src.Uniform(-1, 1);
      break;
    }
    case 2: {  // a tie or one off for p = 11, 14 or 24 bits
      static constexpr int kBits[] = {11, 14, 24};
      const int p = kBits[src.Uniform(0, 2)];
      const int extra = static_cast<int>(src.Uniform(1, 20));
      m = (src.Uniform(std::int64_t{1} << (p - 1), (std::int64_t{1} << p) - 1) << extra) +
          (std::int64_t{1} << (extra - 1)) + src.Uniform(-1, 1);
      break;
    }
    default: m = src.Uniform(1, 4096); break;
  }
  if (m <= 0) m = 1;
  x.m = src.Uniform(0, 1) ? -m : m;
  static constexpr int kAround[] = {0, -24, -14, 16, -126, -149, 128, -139};
  const int top = static_cast<int>(boost::multiprecision::msb(reference::BigInt(m)));
  x.q = kAround[src.Uniform(0, 7)] - top + static_cast<int>(src.Uniform(-12, 3));
  return x;
}

double AsDouble(const Dyadic& x) { return std::ldexp(x.m.convert_to<double>(), x.q); }

float ToFloat(double v, int mode) {
  const int saved = std::fegetround();
  std::fesetround(mode);
  volatile double in = v;
  volatile float out = static_cast<float>(in);
  std::fesetround(saved);
  return out;
}

TEST(TensorCoreOracleRounding, Fp32NearestAndTruncationMatchTheFpu) {
  const FusedStepOracle fp32(tensor_core::kFp32Of16Bit, tensor_core::kBf16Operand, tensor_core::kBf16Operand);
  testing::SplitMixSource src{0xF0F0ull};
  const int n = testing::CountAtLevel(kValues);
  int ties = 0;
  for (int i = 0; i < n; ++i) {
    const Dyadic x = DrawDyadic(src);
    const double v = AsDouble(x);
    const float nearest = ToFloat(v, FE_TONEAREST);
    const float toward_zero = ToFloat(v, FE_TOWARDZERO);
    const StepResult rn = reference::RoundIntoAccumulator(kFp32, 24, FusedSumRounding::kNearestEven, x);
    const StepResult rz = reference::RoundIntoAccumulator(kFp32, 24, FusedSumRounding::kTruncate, x);
    const StepResult r14 = reference::RoundIntoAccumulator(kFp32, 14, FusedSumRounding::kTruncate, x);
    ASSERT_EQ(fp32.CodeOf(rn), F32Bits(nearest)) << v;
    // Truncation past the largest finite value is Inf (step 7), where the
    // FPU's toward-zero conversion stays at FLT_MAX.
    const bool beyond = std::fabs(v) >= std::ldexp(1.0, 128);
    const std::uint32_t rz_expected = beyond ? (F32Bits(toward_zero) & 0x80000000u) | 0x7F800000u : F32Bits(toward_zero);
    ASSERT_EQ(fp32.CodeOf(rz), rz_expected) << v;
    const std::uint32_t r14_expected = beyond ? rz_expected : F32Bits(toward_zero) & ~0x3FFu;
    ASSERT_EQ(fp32.CodeOf(r14), r14_expected) << v;
    ties += F32Bits(nearest) != F32Bits(toward_zero);
  }
  EXPECT_GT(ties, n / 10) << "values where the two roundings differ";
}

TEST(TensorCoreOracleRounding, Fp16NearestMatchesTheValueGridOracle) {
  const FusedStepOracle fp16(tensor_core::kFp16Of16Bit, tensor_core::kFp16Operand, tensor_core::kFp16Operand);
  testing::SplitMixSource src{0x0F0Full};
  const int n = testing::CountAtLevel(kValues) / 10;
  for (int i = 0; i < n; ++i) {
    const Dyadic x = DrawDyadic(src);
    const StepResult r = reference::RoundIntoAccumulator(kFp16, 11, FusedSumRounding::kNearestEven, x);
    const reference::Exact exact = reference::ExactFromRational(reference::ToRational(x));
    ASSERT_EQ(fp16.CodeOf(r), reference::OracleEncode(kFp16, exact).code) << AsDouble(x);
  }
}

}  // namespace
}  // namespace lowbit
