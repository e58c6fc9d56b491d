// The tensor-core registry rows (cuda/src/register_tensor_core.cc), reached
// the way `lowbit verify` reaches them: RegisterCudaBackends, then the
// harness's plan (check/src/tensor_core_check.cc). The listing tests are
// host code and run in CI (they fail if the hook in register_backends.cc or
// a row is lost); without an sm_90 GPU every row must come out SKIPPED,
// never passed. On the GPU every row's every operand family must pass with
// as many outputs compared as asked for, at the level of LOWBIT_TEST_LEVEL
// (smoke 10^3, ci 10^5, full 10^6 sets per family and row; default ci).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "gpu_test_util.h"
#include "lowbit/check/check.h"
#include "lowbit/check/text.h"
#include "lowbit/cuda/register.h"
#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/registry/registry.h"
#include "lowbit/registry/tensor_core_entry.h"

namespace lowbit::cuda {
namespace {

using registry::TensorCoreEntry;

registry::Registry& Registered() {
  static registry::Registry* r = [] {
    auto* reg = new registry::Registry();
    registry::RegisterCudaBackends(*reg);
    return reg;
  }();
  return *r;
}

check::Level TestLevel() {
  check::Level level = check::Level::kCi;
  if (const char* name = std::getenv("LOWBIT_TEST_LEVEL")) check::ParseLevel(name, &level);
  return level;
}

// Whether this machine can run the probes (compute capability 9.0).
bool Sm90() {
  int device = 0;
  cudaDeviceProp prop{};
  return GpuAvailable() && cudaGetDevice(&device) == cudaSuccess &&
         cudaGetDeviceProperties(&prop, device) == cudaSuccess && prop.major == 9 && prop.minor == 0;
}

TEST(CudaTensorCoreRegister, EveryInstructionHasARowPerProbeWidth) {
  std::set<std::pair<int, int>> want;
  for (int i = 0; i < kTensorCoreInstructionCount; ++i) {
    const TensorCoreInstruction& inst = kTensorCoreInstructions[i];
    if (inst.kind == TensorCoreInstructionKind::kMmaSync) {
      want.insert({i, inst.n});
    } else {
      for (int n : kWgmmaProbeColumns) want.insert({i, n});
    }
  }
  std::set<std::pair<int, int>> have;
  std::set<std::string> family_names;
  for (TensorCoreCases cases : kAllTensorCoreCases) family_names.insert(TensorCoreCasesName(cases));
  for (const TensorCoreEntry& e : Registered().TensorCoreEntries()) {
    EXPECT_EQ(e.backend, "cuda");
    EXPECT_TRUE(have.insert({static_cast<int>(e.instruction), e.n}).second) << registry::TensorCoreRowName(e);
    EXPECT_TRUE(static_cast<bool>(e.sweep) && static_cast<bool>(e.available)) << registry::TensorCoreRowName(e);
    // Every family, each once.
    EXPECT_EQ(std::set<std::string>(e.families.begin(), e.families.end()), family_names);
    EXPECT_EQ(e.families.size(), family_names.size());
  }
  EXPECT_EQ(have, want);
  EXPECT_EQ(want.size(), 13u + 12u * 2u);  // 13 mma.sync, 12 wgmma at two widths
  EXPECT_NE(Registered().FindTensorCore(TensorCoreId::kWgmmaE4m3E4m3F32, 32, "cuda"), nullptr);
}

TEST(CudaTensorCoreRegister, SetsPerFamilyFollowTheLevel) {
  EXPECT_EQ(check::TensorCoreSetsPerFamily(check::Level::kSmoke), 1'000);
  EXPECT_EQ(check::TensorCoreSetsPerFamily(check::Level::kCi), 100'000);
  EXPECT_EQ(check::TensorCoreSetsPerFamily(check::Level::kFull), 1'000'000);
}

// verify's plan, with only the tensor-core part.
check::Results RunTensorCoreRows(check::Level level) {
  check::Plan plan;
  plan.level = level;
  plan.filter.backend = "cuda";
  plan.parts.kernels = plan.parts.recipes = plan.parts.packing = false;
  plan.parts.gpu_sweeps = plan.parts.oracle = plan.parts.matmul = false;
  plan.parts.tensor_cores = true;
  return check::RunPlan(Registered(), plan);
}

TEST(CudaTensorCoreRegister, WithoutAnSm90DeviceEveryRowIsSkippedNeverPassed) {
  if (Sm90()) GTEST_SKIP() << "this machine runs the probes (the rows are checked below)";
  const check::Results results = RunTensorCoreRows(check::Level::kSmoke);
  ASSERT_TRUE(results.error.empty()) << results.error;
  EXPECT_EQ(results.rows.size(), 37u);  // EveryInstructionHasARowPerProbeWidth's count
  for (const check::Row& row : results.rows) {
    EXPECT_EQ(row.kind, check::RowKind::kTensorCore);
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kSkipped) << row.format;
    EXPECT_FALSE(row.skipped.empty()) << row.format;
    EXPECT_EQ(row.checked, 0u);
  }
}

// A row whose sweep compares less than it was asked to, or reports a
// mismatch, fails; one that names no family is skipped (host code: the
// harness's own rules, with a stand-in sweep).
TEST(CudaTensorCoreRegister, HarnessFailsShortOrMismatchingSweepsAndSkipsEmptyRows) {
  TensorCoreEntry entry;
  entry.instruction = TensorCoreId::kMmaBf16F32;
  entry.n = 8;
  entry.backend = "test";
  entry.families = {"one"};
  entry.available = [] { return true; };
  const std::int64_t sets = check::TensorCoreSetsPerFamily(check::Level::kSmoke);
  entry.sweep = [sets](int, std::uint64_t, std::int64_t asked, registry::TensorCoreSweepReport* r) {
    r->sets = asked;
    r->outputs = (asked - 1) * 16 * 8;  // one set short
    return registry::Status::Ok();
  };
  EXPECT_EQ(check::CheckTensorCore(entry, check::Level::kSmoke).outcome(), check::Row::Outcome::kFailed);
  entry.sweep = [](int, std::uint64_t, std::int64_t asked, registry::TensorCoreSweepReport* r) {
    r->sets = asked;
    r->outputs = asked * 16 * 8;
    r->mismatches = 1;
    r->first_set = 7;
    r->first_model = 0x3f800000u;
    r->first_hardware = 0x3f800001u;
    r->first_a.assign(16, 0x3f80u);  // k = 16 codes each: the operands are shown
    r->first_b.assign(16, 0x0u);
    r->first_c = 0x3f800000u;
    return registry::Status::Ok();
  };
  const check::Row failed = check::CheckTensorCore(entry, check::Level::kSmoke);
  EXPECT_EQ(failed.outcome(), check::Row::Outcome::kFailed);
  ASSERT_EQ(failed.first_mismatches.size(), 1u);
  EXPECT_EQ(failed.first_mismatches[0].expected_value, "1");
  EXPECT_EQ(failed.first_mismatches[0].code_distance, std::optional<std::uint64_t>(1));
  EXPECT_EQ(failed.first_mismatches[0].combo, "one");
  EXPECT_EQ(failed.first_mismatches[0].where.rfind("set 7 of seed ", 0), 0u) << failed.first_mismatches[0].where;
  const std::string a_codes = "0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,0x3f80,"
                              "0x3f80,0x3f80,0x3f80,0x3f80";
  EXPECT_EQ(failed.first_mismatches[0].note,
            "the model's side: lowbit mma mma.m16n8k16.f32.bf16.bf16 --codes --a " + a_codes +
                " --b 0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0 --c 0x3f800000");
  EXPECT_EQ(failed.checked, static_cast<std::uint64_t>(sets) * 16 * 8);
  entry.families.clear();
  EXPECT_EQ(check::CheckTensorCore(entry, check::Level::kSmoke).outcome(), check::Row::Outcome::kSkipped);
}

TEST(CudaTensorCoreRegister, EveryRowPassesOnTheGpu) {
  LOWBIT_REQUIRE_GPU();
  if (!Sm90()) GTEST_SKIP() << "the tensor-core probes need an sm_90 device";
  const check::Level level = TestLevel();
  const check::Results results = RunTensorCoreRows(level);
  ASSERT_TRUE(results.error.empty()) << results.error;
  ASSERT_EQ(results.rows.size(), Registered().TensorCoreEntries().size());
  constexpr std::size_t kFamilies = sizeof(kAllTensorCoreCases) / sizeof(kAllTensorCoreCases[0]);
  for (const check::Row& row : results.rows) {
    const TensorCoreEntry* entry = nullptr;
    for (const TensorCoreEntry& e : Registered().TensorCoreEntries()) {
      if (registry::TensorCoreRowName(e) == row.format) entry = &e;
    }
    ASSERT_NE(entry, nullptr) << row.format;
    const std::uint64_t outputs_per_set = static_cast<std::uint64_t>(Instruction(entry->instruction).m) * entry->n;
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kPassed) << row.format << " " << row.skipped;
    EXPECT_EQ(row.checked, kFamilies * static_cast<std::uint64_t>(check::TensorCoreSetsPerFamily(level)) * outputs_per_set)
        << row.format;
    for (const check::Mismatch& m : row.first_mismatches) ADD_FAILURE() << row.format << ": " << check::DescribeMismatch(row, m);
  }
}

}  // namespace
}  // namespace lowbit::cuda
