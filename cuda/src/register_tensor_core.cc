// The tensor-core registry rows (registry/include/lowbit/registry/
// tensor_core_entry.h), backend "cuda": one per instruction of
// formats/spec/include/lowbit/formats/tensor_core.h and probe width the
// probes are built for (TensorCoreProbeAvailable: the instruction's n for
// mma.sync, kWgmmaProbeColumns for wgmma). A row's sweep is SweepTensorCore
// (include/lowbit/cuda/tensor_core.h) over one family of kAllTensorCoreCases,
// and the first mismatch's operands are redrawn on the host
// (tensor_core_cases.h), so `lowbit verify` can show them. The probes need
// an sm_90 device (wgmma is sm_90a only): elsewhere the rows are unavailable,
// shown SKIPPED, never passed.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"
#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/registry/registry.h"
#include "lowbit/registry/tensor_core_entry.h"
#include "tensor_core_cases.h"

namespace lowbit::cuda {
namespace {

using registry::Status;
using registry::TensorCoreEntry;
using registry::TensorCoreSweepReport;

// The probes' requirement (tensor_core_probe.cu RunTensorCoreInstruction):
// compute capability 9.0 exactly.
std::string WhyNoTensorCoreProbes() {
  if (!GpuAvailable()) return DeviceDescription();  // "no CUDA device ..."
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    return "the CUDA device's properties cannot be read";
  }
  if (prop.major != 9 || prop.minor != 0) {
    return "the tensor-core probes need an sm_90 device (this one is sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + ")";
  }
  return "";
}

Status Sweep(TensorCoreId id, int n, int family, std::uint64_t seed, std::int64_t sets, TensorCoreSweepReport* report) {
  constexpr int kFamilies = static_cast<int>(sizeof(kAllTensorCoreCases) / sizeof(kAllTensorCoreCases[0]));
  if (family < 0 || family >= kFamilies) return Status::Error("family " + std::to_string(family) + " out of range");
  const TensorCoreCases cases = kAllTensorCoreCases[family];
  TensorCoreSweepResult r;
  if (const cudaError_t e = SweepTensorCore(id, n, cases, seed, sets, &r); e != cudaSuccess) {
    return Status::Error(std::string(Instruction(id).name) + " n=" + std::to_string(n) + " " +
                         TensorCoreCasesName(cases) + ": " + cudaGetErrorString(e));
  }
  *report = TensorCoreSweepReport{};
  report->sets = r.sets;
  report->outputs = r.outputs;
  report->mismatches = r.mismatches;
  if (r.mismatches > 0) {
    const TensorCoreInstruction& inst = Instruction(id);
    namespace tc = tensor_core_cases;
    report->first_set = r.first_set;
    report->first_row = r.first_row;
    report->first_column = r.first_column;
    report->first_model = r.first_model;
    report->first_hardware = r.first_hardware;
    for (int i = 0; i < inst.k; ++i) {
      report->first_a.push_back(tc::MultiplicandCode(inst, cases, seed, r.first_set, tc::Role::kA, r.first_row * inst.k + i));
      report->first_b.push_back(
          tc::MultiplicandCode(inst, cases, seed, r.first_set, tc::Role::kB, r.first_column * inst.k + i));
    }
    report->first_c = tc::AccumulatorCode(inst, cases, seed, r.first_set, r.first_row * n + r.first_column);
  }
  return Status::Ok();
}

}  // namespace

void RegisterCudaTensorCore(registry::Registry& registry) {
  std::vector<std::string> families;
  for (TensorCoreCases cases : kAllTensorCoreCases) families.push_back(TensorCoreCasesName(cases));
  for (int i = 0; i < kTensorCoreInstructionCount; ++i) {
    const auto id = static_cast<TensorCoreId>(i);
    std::vector<int> widths;
    if (Instruction(id).kind == TensorCoreInstructionKind::kMmaSync) {
      widths.push_back(Instruction(id).n);
    } else {
      for (int n : kWgmmaProbeColumns) widths.push_back(n);
    }
    for (int n : widths) {
      if (!TensorCoreProbeAvailable(id, n)) continue;
      TensorCoreEntry entry;
      entry.instruction = id;
      entry.n = n;
      entry.backend = "cuda";
      entry.families = families;
      entry.available = [] { return WhyNoTensorCoreProbes().empty(); };
      entry.unavailable_reason = [] { return WhyNoTensorCoreProbes(); };
      entry.sweep = [id, n](int family, std::uint64_t seed, std::int64_t sets, TensorCoreSweepReport* report) {
        return Sweep(id, n, family, seed, sets, report);
      };
      registry.AddTensorCore(std::move(entry));
    }
  }
}

}  // namespace lowbit::cuda
