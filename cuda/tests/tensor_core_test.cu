// The tensor-core model against the hardware: for every instruction of
// formats/spec/include/lowbit/formats/tensor_core.h (and both wgmma probe
// widths), every family of generated operand sets, the instruction's D and
// the model's D compared bit for bit on the GPU (docs/tensor-cores.md
// "Verified on the hardware"). Level ci and full: 10^6 random-code sets and
// 10^6 exponent-spread sets per instruction and width, 2 * 10^5 of each
// targeted family; smoke: 10^4 and 2 * 10^3. Each run prints one RECORD line
// per (instruction, width, family) for the docs' record, and appends them to
// the file named by LOWBIT_TENSOR_CORE_RECORD when set.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/tensor_core.h"
#include "tensor_core_cases.h"

namespace lowbit::cuda {
namespace {

bool SmokeLevel() {
  const char* level = std::getenv("LOWBIT_TEST_LEVEL");
  return level != nullptr && std::strcmp(level, "smoke") == 0;
}

std::int64_t SetsFor(TensorCoreCases cases) {
  const bool random = cases == TensorCoreCases::kRandomCodes || cases == TensorCoreCases::kExponentSpread;
  if (SmokeLevel()) return random ? 10'000 : 2'000;
  return random ? 1'000'000 : 200'000;
}

std::string Hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// The operands of one output of a generated set, redrawn on the host.
std::string DescribeOutput(TensorCoreId id, int n, TensorCoreCases cases, std::uint64_t seed, std::int64_t set,
                           int row, int col) {
  const TensorCoreInstruction& inst = Instruction(id);
  namespace tc = tensor_core_cases;
  std::vector<std::uint32_t> a(inst.k), b(inst.k);
  std::string s = "A row:";
  for (int i = 0; i < inst.k; ++i) {
    a[i] = tc::MultiplicandCode(inst, cases, seed, set, tc::Role::kA, row * inst.k + i);
    s += " " + Hex(a[i]);
  }
  s += "\nB column:";
  for (int i = 0; i < inst.k; ++i) {
    b[i] = tc::MultiplicandCode(inst, cases, seed, set, tc::Role::kB, col * inst.k + i);
    s += " " + Hex(b[i]);
  }
  const std::uint32_t c = tc::AccumulatorCode(inst, cases, seed, set, row * n + col);
  s += "\nC: " + Hex(c) + "  host model D: " + Hex(matmul::TensorCoreDot(inst, a.data(), b.data(), c));
  return s;
}

struct Param {
  TensorCoreId id;
  int n;
};

std::vector<Param> AllProbes() {
  std::vector<Param> params;
  for (int i = 0; i < kTensorCoreInstructionCount; ++i) {
    const auto id = static_cast<TensorCoreId>(i);
    for (int n : {8, 32}) {
      if (TensorCoreProbeAvailable(id, n)) params.push_back({id, n});
    }
  }
  return params;
}

class CudaTensorCoreHardware : public ::testing::TestWithParam<Param> {};

TEST_P(CudaTensorCoreHardware, ModelEqualsTheInstructionOnEveryFamily) {
  LOWBIT_REQUIRE_GPU();
  const Param p = GetParam();
  const TensorCoreInstruction& inst = Instruction(p.id);
  const char* record_path = std::getenv("LOWBIT_TENSOR_CORE_RECORD");
  std::int64_t total_sets = 0;
  for (TensorCoreCases cases : kAllTensorCoreCases) {
    const std::uint64_t seed = 0x5EED0000u + static_cast<std::uint64_t>(cases) * 7919u + static_cast<int>(p.id);
    TensorCoreSweepResult r;
    ASSERT_EQ(SweepTensorCore(p.id, p.n, cases, seed, SetsFor(cases), &r), cudaSuccess) << inst.name;
    ASSERT_EQ(r.sets, SetsFor(cases));
    ASSERT_EQ(r.outputs, r.sets * inst.m * p.n);  // every output was compared
    total_sets += r.sets;
    char line[256];
    std::snprintf(line, sizeof line, "RECORD %s n=%d %s sets=%lld outputs=%lld mismatches=%lld", inst.name, p.n,
                  TensorCoreCasesName(cases), static_cast<long long>(r.sets), static_cast<long long>(r.outputs),
                  static_cast<long long>(r.mismatches));
    std::printf("%s\n", line);
    if (record_path != nullptr) {
      if (FILE* f = std::fopen(record_path, "a")) {
        std::fprintf(f, "%s\n", line);
        std::fclose(f);
      }
    }
    EXPECT_EQ(r.mismatches, 0) << inst.name << " n=" << p.n << " " << TensorCoreCasesName(cases)
                               << ": first at set " << r.first_set << " (" << r.first_row << ", "
                               << r.first_column << "): hardware " << Hex(r.first_hardware) << ", model "
                               << Hex(r.first_model) << "\n"
                               << DescribeOutput(p.id, p.n, cases, seed, r.first_set, r.first_row, r.first_column);
  }
  EXPECT_GE(total_sets, SmokeLevel() ? 20'000 : 2'000'000);
}

INSTANTIATE_TEST_SUITE_P(AllInstructions, CudaTensorCoreHardware, ::testing::ValuesIn(AllProbes()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           std::string name = Instruction(info.param.id).name;
                           for (char& ch : name) {
                             if (ch == '.') ch = '_';
                           }
                           return name + "_n" + std::to_string(info.param.n);
                         });

// The model run on whole matrices on the device equals the host model.
TEST(CudaTensorCoreModel, DeviceMatmulEqualsTheHostModel) {
  LOWBIT_REQUIRE_GPU();
  for (auto id : {TensorCoreId::kWgmmaE4m3E4m3F32, TensorCoreId::kMmaBf16F32, TensorCoreId::kWgmmaF16F16}) {
    matmul::AccumulationSchedule s;
    s.instruction = id;
    s.promotion_interval = id == TensorCoreId::kWgmmaE4m3E4m3F32 ? 128 : 0;
    s.split_k = 3;
    s.split_reduction = matmul::SplitReduction::kPairwiseTree;
    s.output = FormatId::kBf16;
    const TensorCoreInstruction& inst = Instruction(id);
    const std::int64_t m = 37, n = 29, k = 333;
    std::vector<std::uint32_t> x(m * k), w(n * k), y_host(m * n), y_device(m * n);
    namespace tc = tensor_core_cases;
    for (std::int64_t i = 0; i < m * k; ++i) {
      x[i] = tc::MultiplicandCode(inst, TensorCoreCases::kExponentSpread, 11, i / k, tc::Role::kA, static_cast<int>(i % k));
    }
    for (std::int64_t i = 0; i < n * k; ++i) {
      w[i] = tc::MultiplicandCode(inst, TensorCoreCases::kExponentSpread, 12, i / k, tc::Role::kB, static_cast<int>(i % k));
    }
    matmul::ModelMatmul(s, x.data(), w.data(), m, n, k, nullptr, y_host.data());
    testing::DeviceVector<std::uint32_t> dx(x), dw(w), dy(m * n);
    ASSERT_EQ(ModelMatmulOnDevice(s, dx.p, dw.p, m, n, k, nullptr, dy.p), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    y_device = dy.Get(m * n);
    EXPECT_EQ(y_host, y_device) << inst.name;
  }
}

}  // namespace
}  // namespace lowbit::cuda
