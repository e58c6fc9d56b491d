// The tensor-core GEMV's registry rows (cuda/src/tc_matmul/register_tc_gemv.cc),
// reached the way `lowbit verify` reaches them: RegisterCudaBackends, then
// the harness (check::CheckMatmul), which checks a row that declares its
// schedule bit for bit against QuantizedMatmulModel under it. The listing
// tests are host code and run in CI; without a GPU every row must come out
// SKIPPED, never passed; on the GPU every row must pass.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu_test_util.h"
#include "lowbit/check/check.h"
#include "lowbit/cuda/register.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "tc_matmul/tc_gemv_lanes.h"
#include "registered_rows.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using registry::MatmulEntry;

registry::Registry& Registered() { return ::lowbit::cuda::testing::ScalarAndCudaRows(); }

std::vector<const MatmulEntry*> TcRows() {
  std::vector<const MatmulEntry*> rows;
  for (const MatmulEntry& e : Registered().MatmulEntries()) {
    if (e.backend == "cuda-tc") rows.push_back(&e);
  }
  return rows;
}

TEST(TcGemvRegister, NvfpAndMxfp4GemvRowsForEveryOutputDeclareTheKernelsSchedule) {
  std::set<std::string> names;
  for (const MatmulEntry* e : TcRows()) {
    names.insert(registry::MatmulRowName(*e));
    EXPECT_EQ(e->operation, registry::MatmulOperation::kGemv);
    EXPECT_EQ(e->activation, matmul::ActivationType::kBf16);
    ASSERT_TRUE(static_cast<bool>(e->schedule)) << registry::MatmulRowName(*e);
    ASSERT_TRUE(static_cast<bool>(e->refuses));
    const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(e->weight);
    ASSERT_NE(kind, nullptr) << e->weight;
    // A weight shape's schedule is the kernel's, for any M.
    registry::MatmulArgs args;
    args.w.format = kind->format;
    args.w.n = 4096;
    args.w.k = 7168;
    args.w.batch = 8;
    args.y.type = e->output;
    for (const std::int64_t m : {1, 16}) {
      args.m = m;
      const matmul::AccumulationSchedule s = e->schedule(args);
      const matmul::AccumulationSchedule want = ScheduleOf(kind->format, 4096, 7168, 8, e->output);
      EXPECT_EQ(s.split_k, want.split_k);
      EXPECT_EQ(s.output, want.output);
      EXPECT_EQ(s.scale_per_column, want.scale_per_column);
      EXPECT_EQ(s.instruction, want.instruction);
    }
  }
  EXPECT_EQ(names.size(), 6u) << "nvfp4 and mxfp4, each to bf16, fp16 and fp32";
}

TEST(TcGemvRegister, EveryRowPassesOnTheGpuAndIsSkippedWithout) {
  const std::vector<const MatmulEntry*> rows = TcRows();
  ASSERT_FALSE(rows.empty());
  for (const MatmulEntry* e : rows) {
    const check::Row row = check::CheckMatmul(*e, nullptr, check::Level::kSmoke);
    if (!GpuAvailable()) {
      EXPECT_EQ(row.outcome(), check::Row::Outcome::kSkipped) << registry::MatmulRowName(*e);
      continue;
    }
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kPassed) << row.format << ": " << row.skipped;
    EXPECT_GT(row.checked, 0u);
    if (!row.first_mismatches.empty()) {
      ADD_FAILURE() << row.format << " " << row.first_mismatches[0].where << " " << row.first_mismatches[0].note;
    }
  }
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemv
