// The tensor-core model (lowbit/formats/matmul/tensor_core.h) against the
// oracle's bound (lowbit/reference/tensor_core_bound.h): for every
// instruction of kTensorCoreInstructions, fused steps drawn by the
// boundary-biased families of tensor_core_step_cases.h must give a D inside
// [R(S - P u), R(S + N u)] around the exact sum S, the one code the spec fixes
// where no term loses bits, the NaN/Inf code of step 7 where a special decides,
// and the exact integer sum modulo 2^32 for integer MMAs. An instruction that
// runs several steps and adds C afterwards (FP8 mma.sync on sm_90) is also
// checked whole: its steps from +0, then one IEEE addition of C.
#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "generators_at_level.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/reference/tensor_core_bound.h"
#include "tensor_core_step_cases.h"

namespace lowbit {
namespace {

using reference::FusedStepBound;
using reference::FusedStepOracle;
using testing::StepCase;
using testing::StepFamily;

// Fused steps per instruction (smoke / ci / full).
constexpr testing::LevelCounts kSweepSteps = {3000, 100000, 2000000};
constexpr testing::LevelCounts kPropertySteps = {20, 200, 20000};
constexpr testing::LevelCounts kWholeInstructions = {500, 10000, 200000};
constexpr testing::LevelCounts kTracedSteps = {300, 10000, 100000};

// The model's D for one fused step of `inst` (count = L products). An
// instruction that is one native step is called through its public door,
// TensorCoreDot; otherwise the step is FusedDotStep on the model's decoded
// operands.
std::uint32_t ModelStep(const TensorCoreInstruction& inst, const StepCase& s) {
  const int count = inst.arithmetic.products_per_step;
  if (inst.Steps() == 1 && !inst.lowering.c_added_after_steps) {
    return matmul::TensorCoreDot(inst, s.a.data(), s.b.data(), s.c);
  }
  std::array<matmul::TensorCoreTerm, 32> ta{}, tb{};
  for (int i = 0; i < count; ++i) {
    ta[i] = matmul::DecodeMultiplicand(inst.a, s.a[i]);
    tb[i] = matmul::DecodeMultiplicand(inst.b, s.b[i]);
  }
  return matmul::FusedDotStep(inst.arithmetic, matmul::DatapathFormat(inst.a).mantissa_bits,
                              matmul::DatapathFormat(inst.b).mantissa_bits, ta.data(), tb.data(), count, s.c);
}

std::string Codes(const std::vector<std::uint32_t>& v) {
  std::ostringstream os;
  os << std::hex;
  for (std::uint32_t x : v) os << "0x" << x << " ";
  return os.str();
}

std::string CaseText(const TensorCoreInstruction& inst, const StepCase& s, std::uint32_t d) {
  std::ostringstream os;
  os << inst.name << " [" << testing::StepFamilyName(s.family) << "] a = " << Codes(s.a) << "| b = " << Codes(s.b)
     << "| c = 0x" << std::hex << s.c << " -> model D = 0x" << d;
  return os.str();
}

// Whether some product of two finite operands reaches the accumulator's
// overflow threshold 2^(emax+1) (so the sweep must meet overflow).
bool ProductsCanOverflow(const TensorCoreInstruction& inst) {
  const FormatSpec& acc = inst.arithmetic.accumulator;
  if (!acc.IsFloat()) return false;
  auto top = [](const FormatSpec& f) { return f.MaxFiniteExponentField() - f.bias; };
  return top(inst.a.code_format) + top(inst.b.code_format) + 1 >= top(acc) + 1;
}

class TensorCoreBound : public ::testing::TestWithParam<int> {
 protected:
  const TensorCoreInstruction& inst() const { return kTensorCoreInstructions[GetParam()]; }
};

TEST_P(TensorCoreBound, SweepOfFusedStepsStaysWithinTheOracleBound) {
  const TensorCoreInstruction& inst = this->inst();
  const FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
  const int count = inst.arithmetic.products_per_step;
  testing::SplitMixSource src{0x7E45C0DEull + static_cast<std::uint64_t>(GetParam())};
  const int steps = testing::CountAtLevel(kSweepSteps);
  std::array<int, static_cast<int>(StepFamily::kCount)> per_family{};
  int failures = 0, special = 0, integer = 0, fixed = 0, exact_terms = 0, exact_result = 0, inexact = 0, overflow = 0;
  for (int n = 0; n < steps; ++n) {
    const StepCase s = testing::DrawStepCase(inst, count, src);
    const std::uint32_t d = ModelStep(inst, s);
    const FusedStepBound bound = oracle.Bound(s.a.data(), s.b.data(), count, s.c);
    const std::string why = oracle.Check(bound, d);
    ++per_family[static_cast<int>(s.family)];
    switch (bound.outcome) {
      case FusedStepBound::Outcome::kSpecial: ++special; break;
      case FusedStepBound::Outcome::kInteger: ++integer; break;
      case FusedStepBound::Outcome::kFinite:
        fixed += bound.code_fixed();
        exact_terms += bound.exact_terms();
        exact_result += bound.exact_result;
        inexact += !bound.code_fixed();
        overflow += bound.overflow;
        break;
    }
    if (!why.empty() && ++failures <= 5) ADD_FAILURE() << CaseText(inst, s, d) << "\n  " << why;
  }
  EXPECT_EQ(failures, 0) << "of " << steps << " fused steps";
  // The sweep must reach every region it claims to check.
  if (inst.arithmetic.rounding == FusedSumRounding::kWrapInteger) {
    EXPECT_EQ(integer, steps);
    return;
  }
  for (int f = 0; f < static_cast<int>(StepFamily::kCount); ++f) {
    EXPECT_GE(per_family[f], steps / 20) << testing::StepFamilyName(static_cast<StepFamily>(f));
  }
  EXPECT_GE(special, steps / 20) << "NaN/Inf outcomes";
  EXPECT_GE(exact_terms, steps / 20) << "steps where no term loses bits";
  EXPECT_GE(fixed - exact_terms, steps / 200) << "steps where D is fixed although terms below u vanish";
  EXPECT_GE(exact_result, steps / 50) << "steps whose D is the exact sum itself";
  EXPECT_GE(inexact, steps / 10) << "steps where step 4 cuts bits off a term without zeroing it";
  if (ProductsCanOverflow(inst)) EXPECT_GE(overflow, steps / 1000) << "steps at the overflow threshold";
  std::printf("%s: %d steps, %d special, %d D fixed (%d exact terms, %d exact sums), %d truncating, %d at overflow\n",
              inst.name, steps, special, fixed, exact_terms, exact_result, inexact, overflow);
}

// The same families through RapidCheck: a failure shrinks to a small set.
TEST_P(TensorCoreBound, PropertyOfFusedStepsShrinks) {
  const TensorCoreInstruction& inst = this->inst();
  const FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
  const int count = inst.arithmetic.products_per_step;
  testing::CheckAtLevel(kPropertySteps, [&] {
    testing::RapidCheckSource src;
    const StepCase s = testing::DrawStepCase(inst, count, src);
    const std::uint32_t d = ModelStep(inst, s);
    const std::string why = oracle.Check(oracle.Bound(s.a.data(), s.b.data(), count, s.c), d);
    RC_LOG() << CaseText(inst, s, d) << "\n" << why << "\n";
    RC_ASSERT(why.empty());
  });
}

// The step's trace (what `lowbit mma` explains) against the oracle: the same
// e_max and grid, one truncation flag per term that step 4 cuts (partly or
// to zero), the aligned sum inside [A - P u, A + N u], and the step's D.
TEST_P(TensorCoreBound, TraceOfAStepAgreesWithTheOracle) {
  const TensorCoreInstruction& inst = this->inst();
  const FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
  const int count = inst.arithmetic.products_per_step;
  testing::SplitMixSource src{0x7ACEull + static_cast<std::uint64_t>(GetParam())};
  const int steps = testing::CountAtLevel(kTracedSteps);
  int failures = 0, finite = 0;
  for (int n = 0; n < steps; ++n) {
    const StepCase s = testing::DrawStepCase(inst, count, src);
    std::array<matmul::TensorCoreTerm, 32> ta{}, tb{};
    for (int i = 0; i < count; ++i) {
      ta[i] = matmul::DecodeMultiplicand(inst.a, s.a[i]);
      tb[i] = matmul::DecodeMultiplicand(inst.b, s.b[i]);
    }
    matmul::FusedDotTrace trace;
    const std::uint32_t d =
        matmul::FusedDotStep(inst.arithmetic, matmul::DatapathFormat(inst.a).mantissa_bits,
                             matmul::DatapathFormat(inst.b).mantissa_bits, ta.data(), tb.data(), count, s.c, &trace);
    const FusedStepBound bound = oracle.Bound(s.a.data(), s.b.data(), count, s.c);
    std::ostringstream why;
    if (trace.result != d) why << "trace.result differs from D; ";
    if (bound.outcome == FusedStepBound::Outcome::kSpecial && !trace.special) why << "a special step not marked special; ";
    if (bound.outcome == FusedStepBound::Outcome::kFinite) {
      ++finite;
      int flagged = 0;
      for (int i = 0; i < trace.term_count; ++i) flagged += trace.truncated[i];
      const reference::Dyadic traced{reference::BigInt(trace.sum), trace.unit_exponent};
      if (trace.special) why << "a finite step marked special; ";
      if (trace.max_exponent != bound.max_exponent) why << "e_max " << trace.max_exponent << " vs " << bound.max_exponent << "; ";
      if (trace.unit_exponent != bound.unit_exponent) why << "unit 2^" << trace.unit_exponent << " vs 2^" << bound.unit_exponent << "; ";
      if (flagged != bound.inexact_positive + bound.inexact_negative + bound.vanished_terms) {
        why << flagged << " terms flagged truncated vs " << bound.inexact_positive + bound.inexact_negative + bound.vanished_terms
            << "; ";
      }
      if (reference::CompareDyadic(traced, bound.aligned_lowest) < 0 ||
          reference::CompareDyadic(traced, bound.aligned_highest) > 0) {
        why << "the traced sum " << trace.sum << " * 2^" << trace.unit_exponent << " is outside [A - P u, A + N u]; ";
      }
    }
    if (!why.str().empty() && ++failures <= 5) ADD_FAILURE() << CaseText(inst, s, d) << "\n  " << why.str();
  }
  EXPECT_EQ(failures, 0) << "of " << steps << " traced steps";
  if (inst.arithmetic.rounding != FusedSumRounding::kWrapInteger) EXPECT_GE(finite, steps / 2);
}

std::string InstructionTestName(const ::testing::TestParamInfo<int>& info) {
  std::string name = kTensorCoreInstructions[info.param].name;
  for (char& ch : name) {
    if (ch == '.') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryInstruction, TensorCoreBound, ::testing::Range(0, kTensorCoreInstructionCount),
                         InstructionTestName);

// Instructions whose lowering runs several steps and adds C after them: the
// steps are checked one by one against the bound (step 0 from +0, step s from
// the model's D of step s-1), and the whole instruction must be the oracle's
// IEEE addition of C to the last step's D. The k of each step are read from
// the spec's description of the lowering (consecutive runs of step_k_run k
// go to steps 0, 1, ... in turn), not from the model's KOfStepProduct.
TEST(TensorCoreBoundLowered, WholeInstructionIsItsStepsThenOneAdditionOfC) {
  int lowered = 0;
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
    if (!inst.lowering.c_added_after_steps) continue;
    ++lowered;
    const FusedStepOracle oracle(inst.arithmetic, inst.a, inst.b);
    const int steps = inst.k / inst.arithmetic.products_per_step;
    const int run = inst.lowering.step_k_run;
    ASSERT_GT(steps, 1) << inst.name;
    ASSERT_GT(run, 0) << inst.name;
    testing::SplitMixSource src{0x10E5EDull};
    const int cases = testing::CountAtLevel(kWholeInstructions);
    int failures = 0;
    for (int n = 0; n < cases; ++n) {
      const StepCase s = testing::DrawStepCase(inst, inst.k, src);
      std::uint32_t d = 0;  // the steps start from +0
      std::string why;
      for (int step = 0; step < steps && why.empty(); ++step) {
        std::vector<std::uint32_t> a, b;
        for (int k = 0; k < inst.k; ++k) {
          if ((k / run) % steps == step) {
            a.push_back(s.a[k]);
            b.push_back(s.b[k]);
          }
        }
        std::array<matmul::TensorCoreTerm, 32> ta{}, tb{};
        for (std::size_t i = 0; i < a.size(); ++i) {
          ta[i] = matmul::DecodeMultiplicand(inst.a, a[i]);
          tb[i] = matmul::DecodeMultiplicand(inst.b, b[i]);
        }
        const std::uint32_t next = matmul::FusedDotStep(
            inst.arithmetic, matmul::DatapathFormat(inst.a).mantissa_bits, matmul::DatapathFormat(inst.b).mantissa_bits,
            ta.data(), tb.data(), static_cast<int>(a.size()), d);
        why = oracle.Check(oracle.Bound(a.data(), b.data(), static_cast<int>(a.size()), d), next);
        d = next;
      }
      const std::uint32_t whole = matmul::TensorCoreDot(inst, s.a.data(), s.b.data(), s.c);
      const std::uint32_t expected = oracle.AddNearest(d, s.c);
      if (why.empty() && whole != expected) {
        std::ostringstream os;
        os << std::hex << "TensorCoreDot = 0x" << whole << ", the steps then + C = 0x" << expected;
        why = os.str();
      }
      if (!why.empty() && ++failures <= 5) ADD_FAILURE() << CaseText(inst, s, whole) << "\n  " << why;
    }
    EXPECT_EQ(failures, 0) << inst.name << " of " << cases;
  }
  EXPECT_GT(lowered, 0) << "no instruction adds C after its steps: this test checks nothing";
}

}  // namespace
}  // namespace lowbit
