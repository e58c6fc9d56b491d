// The CUDA GEMM's registry rows (registry/include/lowbit/registry/matmul_entry.h):
// backend "cuda", operation gemm, for every weight kind (kMatmulWeightKinds)
// x BF16 activations x BF16 / FP16 / FP32 outputs, each with its error bound
// (formats/include/lowbit/formats/matmul/gemm_bound.h MmaSyncBf16GemmModel),
// which `lowbit verify` checks against the exact mode. `run` takes host
// memory: every buffer is copied to the device, y included (so the elements
// between rows that the GEMM never writes come back unchanged), the GEMM
// runs, y is copied back. `run_on_device` calls the GEMM on device memory.
// Unavailable (skipped, never passed) without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "../device_upload.h"
#include "gemm.h"
#include "lowbit/cuda/device.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"

namespace lowbit::cuda::gemm {
namespace {

using registry::MatmulArgs;
using registry::MatmulEntry;

registry::Status ToRegistry(const Status& s) {
  return s.ok ? registry::Status::Ok() : registry::Status::Error(s.message);
}

registry::Status RunOnHostMemory(const MatmulEntry& entry, const MatmulArgs& args) {
  if (registry::Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda): ";
  DeviceMatmulProblem d;
  if (cudaError_t e = d.Upload(args); e != cudaSuccess) {
    return registry::Status::Error(row + "device copy failed: " + cudaGetErrorString(e));
  }
  if (Status st = Gemm(d.problem); !st.ok) return registry::Status::Error(row + st.message);
  if (cudaError_t e = d.CopyYBack(); e != cudaSuccess) {
    return registry::Status::Error(row + "GEMM failed: " + cudaGetErrorString(e));
  }
  return registry::Status::Ok();
}

}  // namespace

void RegisterCudaGemm(registry::Registry& registry) {
  constexpr matmul::OutputType kOutputs[] = {matmul::OutputType::kBf16, matmul::OutputType::kFp16,
                                             matmul::OutputType::kFp32};
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    for (matmul::OutputType out : kOutputs) {
      MatmulEntry e;
      e.operation = registry::MatmulOperation::kGemm;
      e.weight = kind.name;
      e.activation = matmul::ActivationType::kBf16;  // the tensor cores' A operand
      e.output = out;
      e.backend = "cuda";
      e.available = [] { return GpuAvailable(); };
      // Every geometry: shapes the tiles do not take run the FP32 fallback.
      e.takes_flat_blocks = true;
      e.takes_row_groups = true;
      const matmul::WeightFormat format = kind.format;
      e.error_bound = [format, out](const MatmulArgs&, const registry::MatmulMagnitudes& mag) {
        return matmul::GemmErrorBound(matmul::MmaSyncBf16GemmModel(format, out),
                                      {mag.k, mag.sum_abs_xw, mag.sum_abs_x, mag.abs_scale});
      };
      e.run_on_device = [](const MatmulArgs& args, void* stream) {
        return ToRegistry(Gemm(args, static_cast<cudaStream_t>(stream)));
      };
      MatmulEntry columns = e;
      e.run = [columns](const MatmulArgs& args) { return RunOnHostMemory(columns, args); };
      registry.AddMatmul(std::move(e));
    }
  }
}

}  // namespace lowbit::cuda::gemm
