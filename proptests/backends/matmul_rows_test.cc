// The matmul registry rows and their check (registry matmul_entry.h,
// check/src/matmul_check.cc): the scalar rows exist for every kind, compute
// the defined order (GEMV, where the GEMV takes the layout) or the exact mode
// and refuse arguments that are not theirs; the harness passes
// a faithful row and catches a row that is one ulp off, writes past a row of
// y, errs, or leaves its bound; a GEMM row without a bound is SKIPPED, never
// passed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "lowbit/check/check.h"
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/formats/matmul/gemv_order.h"
#include "lowbit/registry/registry.h"
#include "matmul_support.h"

namespace lowbit::matmul_test {
namespace {

using registry::MatmulEntry;
using registry::MatmulOperation;

registry::Registry ScalarRegistry() {
  registry::Registry r;
  registry::RegisterScalarMatmul(r);
  return r;
}

TEST(MatmulRows, ScalarRowsCoverEveryKindActivationAndOutput) {
  const registry::Registry r = ScalarRegistry();
  EXPECT_EQ(r.MatmulEntries().size(), 2u * std::size(registry::kMatmulWeightKinds) * 2u * 3u);
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    EXPECT_NE(r.FindMatmul(MatmulOperation::kGemv, kind.name, matmul::ActivationType::kFp16,
                           matmul::OutputType::kBf16, "scalar"),
              nullptr)
        << kind.name;
    EXPECT_NE(r.FindMatmul(MatmulOperation::kGemm, kind.name, matmul::ActivationType::kBf16,
                           matmul::OutputType::kFp32, "scalar"),
              nullptr)
        << kind.name;
  }
}

TEST(MatmulRows, ScalarRowWritesTheExactModeAndRefusesOtherArguments) {
  const registry::Registry reg = ScalarRegistry();
  Random r(21);
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    Problem p = RandomProblem(r, kind, 0.05, 3);
    matmul::MatmulProblem view = p.View();
    const MatmulEntry* row = reg.FindMatmul(MatmulOperation::kGemv, kind.name, p.act, p.out, "scalar");
    ASSERT_NE(row, nullptr);
    ASSERT_TRUE(row->run(view).ok) << kind.name;
    // The defined order where the GEMV takes the weights, else the exact mode.
    matmul::GemvWeightView gemv_view;
    if (matmul::GemvViewOf(view.w, 0, &gemv_view) == nullptr) {
      const matmul::GemvProblemResult defined = matmul::GemvDefinedOrderProblem(view);
      ASSERT_EQ(defined.error, nullptr);
      EXPECT_EQ(matmul::ReadOutput(view), defined.codes) << kind.name;
    } else {
      const matmul::ExactMatmulResult exact = matmul::ExactMatmul(view);
      ASSERT_TRUE(exact.status.ok);
      EXPECT_EQ(matmul::ReadOutput(view), exact.codes) << kind.name;
    }
    // The GEMM row is the exact mode.
    ASSERT_TRUE(reg.FindMatmul(MatmulOperation::kGemm, kind.name, p.act, p.out, "scalar")->run(view).ok);
    const matmul::ExactMatmulResult exact = matmul::ExactMatmul(view);
    ASSERT_TRUE(exact.status.ok);
    EXPECT_EQ(matmul::ReadOutput(view), exact.codes) << kind.name;
    // Another row's columns: named.
    const matmul::OutputType other_out =
        p.out == matmul::OutputType::kFp32 ? matmul::OutputType::kBf16 : matmul::OutputType::kFp32;
    const MatmulEntry* wrong_out = reg.FindMatmul(MatmulOperation::kGemv, kind.name, p.act, other_out, "scalar");
    const registry::Status s = wrong_out->run(view);
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.message.find("this row writes"), std::string::npos) << s.message;
    const char* other_kind = std::string(kind.name) == "nvfp4" ? "mxfp4" : "nvfp4";
    const MatmulEntry* wrong_kind = reg.FindMatmul(MatmulOperation::kGemv, other_kind, p.act, p.out, "scalar");
    const registry::Status k = wrong_kind->run(view);
    EXPECT_FALSE(k.ok);
    EXPECT_NE(k.message.find(std::string("this row takes ") + other_kind), std::string::npos) << k.message;
  }
  // M past a GEMV.
  Problem p = RandomProblem(r, registry::kMatmulWeightKinds[0], 0.0, 17);
  matmul::MatmulProblem view = p.View();
  const registry::Status s =
      reg.FindMatmul(MatmulOperation::kGemv, "nvfp4", p.act, p.out, "scalar")->run(view);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("M = 17 is more than a GEMV takes"), std::string::npos) << s.message;
  EXPECT_TRUE(reg.FindMatmul(MatmulOperation::kGemm, "nvfp4", p.act, p.out, "scalar")->run(view).ok);
}

// A row made from the scalar row, with a fault applied to its output.
MatmulEntry FaultyRow(const registry::Registry& reg, MatmulOperation op, const char* weight,
                      void (*fault)(const registry::MatmulArgs&)) {
  const MatmulEntry* scalar =
      reg.FindMatmul(op, weight, matmul::ActivationType::kBf16, matmul::OutputType::kFp32, "scalar");
  MatmulEntry e = *scalar;
  e.backend = "test-row";
  auto run = scalar->run;
  e.run = [run, fault](const registry::MatmulArgs& a) {
    registry::Status s = run(a);
    if (s.ok && fault != nullptr) fault(a);
    return s;
  };
  return e;
}

check::Row Check(const registry::Registry& reg, const MatmulEntry& e, check::Level level = check::Level::kSmoke) {
  return check::CheckMatmul(e, reg.FindMatmul(e.operation, e.weight, e.activation, e.output, "scalar"), level);
}

TEST(MatmulRows, HarnessPassesAFaithfulGemvRow) {
  const registry::Registry reg = ScalarRegistry();
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    // The ci shapes (odd K among them): the scalar row takes every one, so a
    // GPU row is never skipped for want of a reference.
    const check::Row row = Check(reg, FaultyRow(reg, MatmulOperation::kGemv, kind.name, nullptr), check::Level::kCi);
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kPassed) << kind.name << ": " << row.skipped;
    EXPECT_GT(row.checked, 0u);
  }
}

TEST(MatmulRows, HarnessCatchesAGemvRowOneUlpOff) {
  const registry::Registry reg = ScalarRegistry();
  const check::Row row = Check(reg, FaultyRow(reg, MatmulOperation::kGemv, "mxfp4", [](const registry::MatmulArgs& a) {
    // y[0][0][0] one ulp off (or 1.0 where it is a NaN, which may be any NaN)
    std::uint32_t& y = static_cast<std::uint32_t*>(a.y.data)[0];
    y = std::isnan(static_cast<const float*>(a.y.data)[0]) ? 0x3F800000u : y ^ 1u;
  }));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_EQ(row.first_mismatches[0].where, "y[0][0][0]");
}

TEST(MatmulRows, HarnessCatchesAWritePastARow) {
  const registry::Registry reg = ScalarRegistry();
  const check::Row row = Check(reg, FaultyRow(reg, MatmulOperation::kGemv, "nvfp4", [](const registry::MatmulArgs& a) {
    static_cast<std::uint32_t*>(a.y.data)[a.w.n] = 0;  // the first guard after row 0
  }));
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_NE(row.first_mismatches[0].where.find("guard 0 after"), std::string::npos) << row.first_mismatches[0].where;
}

TEST(MatmulRows, HarnessReportsAKernelError) {
  const registry::Registry reg = ScalarRegistry();
  MatmulEntry e = FaultyRow(reg, MatmulOperation::kGemv, "int4/g128", nullptr);
  e.run = [](const registry::MatmulArgs&) { return registry::Status::Error("out of registers"); };
  const check::Row row = Check(reg, e);
  EXPECT_EQ(row.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_EQ(row.first_mismatches[0].note, "kernel error: out of registers");
}

TEST(MatmulRows, GemmRowsAreCheckedWithinTheirBound) {
  const registry::Registry reg = ScalarRegistry();
  // The exact mode itself is within a zero-error bound... plus the output
  // rounding: the harness compares with the unrounded exact value, so the
  // bound must cover half an FP32 ulp of |y| <= sum |x||w| * |t|.
  MatmulEntry exact = FaultyRow(reg, MatmulOperation::kGemm, "mxfp8_e4m3", nullptr);
  exact.error_bound = [](const registry::MatmulArgs&, const registry::MatmulMagnitudes& m) {
    return std::ldexp(m.sum_abs_xw * m.abs_scale, -24) + std::ldexp(1.0, -149);
  };
  const check::Row pass = Check(reg, exact);
  EXPECT_EQ(pass.outcome(), check::Row::Outcome::kPassed) << pass.skipped;
  // A row 2^-10 relatively off fails that bound.
  MatmulEntry off = FaultyRow(reg, MatmulOperation::kGemm, "mxfp8_e4m3", [](const registry::MatmulArgs& a) {
    float* y = static_cast<float*>(a.y.data);
    y[0] = y[0] * (1.0f + 1.0f / 1024) + 1.0f;
  });
  off.error_bound = exact.error_bound;
  const check::Row fail = Check(reg, off);
  EXPECT_EQ(fail.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(fail.first_mismatches.empty());
  EXPECT_NE(fail.first_mismatches[0].note.find("> bound"), std::string::npos) << fail.first_mismatches[0].note;
  // No bound: skipped with the reason, never passed.
  MatmulEntry unbounded = FaultyRow(reg, MatmulOperation::kGemm, "mxfp8_e4m3", nullptr);
  const check::Row skipped = Check(reg, unbounded);
  EXPECT_EQ(skipped.outcome(), check::Row::Outcome::kSkipped);
  EXPECT_NE(skipped.skipped.find("error bound"), std::string::npos);
}

// The GEMM check's two rules besides the bound (check/src/matmul_check.cc
// CheckGemmShape): an output equal to the exact product's own rounding passes
// even where the row's bound is 0, and an Inf output passes where a result
// within the bound of the exact value could round past the largest finite
// value (same sign, |exact| + bound >= the largest finite), never otherwise.
// FP32 output: the largest finite value is 0x1.fffffep127 (~3.4e38).
MatmulEntry GemmRowWithBound(const registry::Registry& reg, void (*fault)(const registry::MatmulArgs&),
                             double bound) {
  MatmulEntry e = FaultyRow(reg, MatmulOperation::kGemm, "mxfp8_e4m3", fault);
  e.error_bound = [bound](const registry::MatmulArgs&, const registry::MatmulMagnitudes&) { return bound; };
  return e;
}

// y[0][0][0] becomes the infinity of its own sign (the scalar row wrote the
// exact product's rounding there: a random non-zero sum) or of the other one.
void SameSignInfinity(const registry::MatmulArgs& a) {
  float& y = static_cast<float*>(a.y.data)[0];
  y = std::copysign(INFINITY, y);
}
void OppositeSignInfinity(const registry::MatmulArgs& a) {
  float& y = static_cast<float*>(a.y.data)[0];
  y = std::copysign(INFINITY, -y);
}

TEST(MatmulRows, GemmOutputEqualToTheExactRoundingPassesAZeroBoundAndAWrongOneFails) {
  const registry::Registry reg = ScalarRegistry();
  const check::Row exact = Check(reg, GemmRowWithBound(reg, nullptr, 0.0));
  EXPECT_EQ(exact.outcome(), check::Row::Outcome::kPassed) << exact.skipped;
  EXPECT_GT(exact.checked, 0u);
  const check::Row off = Check(reg, GemmRowWithBound(reg, [](const registry::MatmulArgs& a) {
    static_cast<std::uint32_t*>(a.y.data)[0] ^= 1u;  // one ulp from the exact rounding
  }, 0.0));
  EXPECT_EQ(off.outcome(), check::Row::Outcome::kFailed);
  EXPECT_GT(off.mismatches, 0u);  // y[0][0][0] of each shape
  ASSERT_FALSE(off.first_mismatches.empty());
  EXPECT_EQ(off.first_mismatches[0].where, "y[0][0][0]");
  EXPECT_NE(off.first_mismatches[0].note.find("> bound 0"), std::string::npos) << off.first_mismatches[0].note;
}

TEST(MatmulRows, GemmInfinityPassesOnlyWhereTheBoundReachesPastTheLargestFinite) {
  const registry::Registry reg = ScalarRegistry();
  // 1e39 > FLT_MAX: every |exact| + bound is past the largest finite FP32,
  // yet |Inf - exact| = Inf is not <= 1e39, so only the overflow rule lets
  // the Inf through.
  const check::Row reaches = Check(reg, GemmRowWithBound(reg, SameSignInfinity, 1e39));
  EXPECT_EQ(reaches.outcome(), check::Row::Outcome::kPassed) << reaches.skipped;
  // An infinity of the other sign is not a rounding of anything within it.
  const check::Row wrong_sign = Check(reg, GemmRowWithBound(reg, OppositeSignInfinity, 1e39));
  EXPECT_EQ(wrong_sign.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(wrong_sign.first_mismatches.empty());
  EXPECT_EQ(wrong_sign.first_mismatches[0].where, "y[0][0][0]");
  // A bound that keeps every result far below the largest finite (the
  // harness's sums are below 2^20): the Inf is a wrong value.
  const check::Row short_bound = Check(reg, GemmRowWithBound(reg, SameSignInfinity, 1e30));
  EXPECT_EQ(short_bound.outcome(), check::Row::Outcome::kFailed);
  ASSERT_FALSE(short_bound.first_mismatches.empty());
  EXPECT_EQ(short_bound.first_mismatches[0].where, "y[0][0][0]");
  EXPECT_NE(short_bound.first_mismatches[0].note.find("> bound"), std::string::npos)
      << short_bound.first_mismatches[0].note;
}

// MatmulEntry::refuses: the harness leaves the problems a row refuses to
// another row (never counted as checked), and a row that refuses every one
// is SKIPPED, never passed.
TEST(MatmulRows, HarnessLeavesWhatARowRefusesToAnotherRow) {
  const registry::Registry reg = ScalarRegistry();
  MatmulEntry all = FaultyRow(reg, MatmulOperation::kGemv, "mxfp8_e4m3", nullptr);
  const check::Row every = Check(reg, all);
  ASSERT_EQ(every.outcome(), check::Row::Outcome::kPassed) << every.skipped;
  // Refusing M = 3 leaves out the smoke shape M = 3 (its faulty output goes
  // unseen) and checks the others.
  MatmulEntry some = FaultyRow(reg, MatmulOperation::kGemv, "mxfp8_e4m3", [](const registry::MatmulArgs& a) {
    if (a.m == 3) static_cast<std::uint32_t*>(a.y.data)[0] ^= 1u;
  });
  some.refuses = [](const registry::MatmulArgs& a) { return std::string(a.m == 3 ? "M = 3 is another row's" : ""); };
  const check::Row part = Check(reg, some);
  EXPECT_EQ(part.outcome(), check::Row::Outcome::kPassed) << part.skipped;
  EXPECT_GT(part.checked, 0u);
  EXPECT_LT(part.checked, every.checked);
  MatmulEntry none = all;
  none.refuses = [](const registry::MatmulArgs&) { return std::string("not mine"); };
  const check::Row skipped = Check(reg, none);
  EXPECT_EQ(skipped.outcome(), check::Row::Outcome::kSkipped);
  EXPECT_EQ(skipped.checked, 0u);
}

TEST(MatmulRows, RunPlanListsMatmulRowsAndAnUnavailableOneIsSkipped) {
  registry::Registry reg = ScalarRegistry();
  MatmulEntry e = FaultyRow(reg, MatmulOperation::kGemv, "uint4/g128+awq-fp16", nullptr);
  e.available = [] { return false; };
  reg.AddMatmul(e);
  check::Plan plan;
  plan.level = check::Level::kSmoke;
  plan.parts.kernels = plan.parts.recipes = plan.parts.packing = plan.parts.gpu_sweeps = plan.parts.oracle = false;
  const check::Results results = check::RunPlan(reg, plan);
  ASSERT_EQ(results.rows.size(), 1u);
  EXPECT_EQ(results.rows[0].kind, check::RowKind::kMatmul);
  EXPECT_EQ(results.rows[0].outcome(), check::Row::Outcome::kSkipped);
  EXPECT_EQ(results.rows[0].format, "uint4/g128+awq-fp16 bf16->fp32");
}

}  // namespace
}  // namespace lowbit::matmul_test
