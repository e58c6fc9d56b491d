// The tensor-core GEMM's registry rows (registry/include/lowbit/registry/matmul_entry.h):
// backend "cuda-tc", operation gemm, every weight kind x BF16 activations x
// BF16 / FP16 / FP32 outputs. Each row declares TcGemmSchedule (a function
// of the weight format and output type only), so `lowbit verify` checks it
// bit for bit against QuantizedMatmulModel. `run` takes host memory (W, x
// and y are copied to the device and y back whole: the GEMM writes only the
// outputs the problem names); `run_on_device` takes device
// memory (torch CUDA tensors through the Python package) and queues
// everything on the caller's stream, its workspace from lowbit's
// stream-ordered scratch pool (stream_scratch.h). Unavailable (skipped,
// never passed) without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "../device_upload.h"
#include "../stream_scratch.h"
#include "lowbit/cuda/device.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "tc_gemm.h"

namespace lowbit::cuda::tc_gemm {
namespace {

using registry::MatmulArgs;
using registry::MatmulEntry;

registry::Status FromStatus(const std::string& row, const Status& s) {
  return s.ok ? registry::Status::Ok() : registry::Status::Error(row + s.message);
}

registry::Status RunOnHostMemory(const MatmulEntry& entry, const MatmulArgs& args) {
  if (registry::Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda-tc): ";
  DeviceMatmulProblem d;
  DeviceUpload workspace;
  cudaError_t e = d.Upload(args);
  // The plan reads the device copies' alignment, so it is asked of them.
  const std::size_t workspace_bytes = TcGemmWorkspaceBytes(d.problem);
  if (e == cudaSuccess) e = workspace.Allocate(workspace_bytes);
  if (e != cudaSuccess) return registry::Status::Error(row + "device copy failed: " + cudaGetErrorString(e));
  if (registry::Status s = FromStatus(row, RunTcGemm(d.problem, workspace.p, workspace_bytes, nullptr)); !s.ok) return s;
  if ((e = d.CopyYBack()) != cudaSuccess) {
    return registry::Status::Error(row + "the tensor-core GEMM failed: " + cudaGetErrorString(e));
  }
  return registry::Status::Ok();
}

registry::Status RunOnDeviceMemory(const MatmulEntry& entry, const MatmulArgs& args, cudaStream_t stream) {
  if (registry::Status s = registry::ValidateMatmulArgs(entry, args); !s.ok) return s;
  const std::string row = registry::MatmulRowName(entry) + " (cuda-tc, device memory): ";
  detail::StreamScratch workspace(stream);
  const std::size_t bytes = TcGemmWorkspaceBytes(args);
  if (cudaError_t e = workspace.Allocate(bytes); e != cudaSuccess) {
    return registry::Status::Error(row + "device scratch failed: " + cudaGetErrorString(e));
  }
  return FromStatus(row, RunTcGemm(args, workspace.get(), bytes, stream));
}

}  // namespace

void RegisterCudaTcGemm(registry::Registry& registry) {
  constexpr matmul::OutputType kOutputs[] = {matmul::OutputType::kBf16, matmul::OutputType::kFp16,
                                             matmul::OutputType::kFp32};
  for (const registry::MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    for (const matmul::OutputType out : kOutputs) {
      MatmulEntry e;
      e.operation = registry::MatmulOperation::kGemm;
      e.weight = kind.name;
      e.activation = matmul::ActivationType::kBf16;
      e.output = out;
      e.backend = "cuda-tc";
      e.available = [] { return GpuAvailable(); };
      e.schedule = [](const MatmulArgs& args) { return TcGemmSchedule(args.w.format, args.y.type); };
      MatmulEntry columns = e;
      e.run = [columns](const MatmulArgs& args) { return RunOnHostMemory(columns, args); };
      e.run_on_device = [columns](const MatmulArgs& args, void* stream) {
        return RunOnDeviceMemory(columns, args, static_cast<cudaStream_t>(stream));
      };
      registry.AddMatmul(std::move(e));
    }
  }
}

}  // namespace lowbit::cuda::tc_gemm
