// The tensor-core GEMM's registry rows (cuda/src/tc_matmul/register_tc_gemm.cc),
// reached the way `lowbit verify` reaches them: RegisterCudaBackends, then
// the harness (check::CheckMatmul), which checks a row that declares its
// schedule bit for bit against QuantizedMatmulModel under it, through the
// row's host-memory `run`. The listing tests are host code and run in CI;
// without a GPU every row must come out SKIPPED, never passed; on the GPU
// every row must pass.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "matmul_rows_on_gpu.h"
#include "lowbit/check/check.h"
#include "lowbit/cuda/device.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "registered_rows.h"
#include "tc_matmul/tc_gemm.h"

namespace lowbit::cuda::tc_gemm {
namespace {

using registry::MatmulEntry;

std::vector<const MatmulEntry*> TcGemmRows() {
  std::vector<const MatmulEntry*> rows;
  for (const MatmulEntry& e : ::lowbit::cuda::testing::ScalarAndCudaRows().MatmulEntries()) {
    if (e.backend == "cuda-tc" && e.operation == registry::MatmulOperation::kGemm) rows.push_back(&e);
  }
  return rows;
}

TEST(TcGemmRegister, EveryWeightKindAndOutputDeclaresTheGemmsSchedule) {
  std::set<std::string> names;
  for (const MatmulEntry* e : TcGemmRows()) {
    names.insert(registry::MatmulRowName(*e));
    EXPECT_EQ(e->activation, matmul::ActivationType::kBf16);
    EXPECT_TRUE(static_cast<bool>(e->run_on_device)) << registry::MatmulRowName(*e);
    ASSERT_TRUE(static_cast<bool>(e->schedule)) << registry::MatmulRowName(*e);
    const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(e->weight);
    ASSERT_NE(kind, nullptr) << e->weight;
    registry::MatmulArgs args;
    args.w.format = kind->format;
    args.w.n = 4096;
    args.w.k = 7168;
    args.y.type = e->output;
    for (const std::int64_t m : {1, 128, 4096}) {  // the same schedule for every M
      args.m = m;
      const matmul::AccumulationSchedule s = e->schedule(args);
      const matmul::AccumulationSchedule want = TcGemmSchedule(kind->format, e->output);
      EXPECT_EQ(s.instruction, TensorCoreId::kWgmmaBf16F32);
      EXPECT_EQ(s.split_k, 1);
      EXPECT_EQ(s.promotion_interval, 0);
      EXPECT_EQ(s.output, want.output);
      EXPECT_EQ(s.scale_per_column, want.scale_per_column);
    }
  }
  EXPECT_EQ(names.size(), std::size(registry::kMatmulWeightKinds) * 3) << "every weight kind, each to bf16, fp16 and fp32";
}

TEST(TcGemmRegister, EveryRowPassesOnTheGpuAndIsSkippedWithout) {
  ::lowbit::cuda::testing::ExpectRowsPassOnTheGpuAndAreSkippedWithout(TcGemmRows());
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemm
