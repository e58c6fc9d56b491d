// Registry rows for the two CUDA backends (registry.h): "cuda-hw" (PTX cvt)
// and "cuda-sw" (the model compiled for the device). A row's `available` is
// false without a GPU, so tests and `lowbit verify` show it as skipped.
// Callers of the registry pass host arrays; device arrays are used in place.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

cuda::ElementOp ToElementOp(Operation op) {
  switch (op) {
    case Operation::kEncodeF32: return cuda::ElementOp::kEncodeF32;
    case Operation::kEncodeBf16: return cuda::ElementOp::kEncodeBf16;
    case Operation::kEncodeF16: return cuda::ElementOp::kEncodeF16;
    case Operation::kDecodeToF32: return cuda::ElementOp::kDecodeToF32;
    case Operation::kDecodeToBf16: return cuda::ElementOp::kDecodeToBf16;
  }
  return cuda::ElementOp::kEncodeF32;
}

bool IsDevice(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

std::size_t InputBytes(const ConvertArgs& a) {
  switch (a.operation) {
    case Operation::kEncodeF32: return 4;
    case Operation::kEncodeBf16:
    case Operation::kEncodeF16: return 2;
    default: return CodeBytes(Spec(a.format));
  }
}
std::size_t OutputBytes(const ConvertArgs& a) {
  switch (a.operation) {
    case Operation::kDecodeToF32: return 4;
    case Operation::kDecodeToBf16: return 2;
    default: return CodeBytes(Spec(a.format));
  }
}

// Device scratch for one call with host arrays, freed on every path.
struct Scratch {
  void* p = nullptr;
  ~Scratch() {
    if (p) cudaFree(p);
  }
};

Status Run(cuda::Backend backend, const ConvertArgs& args) {
  Status status = ValidateConvertArgs(args);
  if (!status.ok || args.count == 0) return status;
  if (!cuda::GpuAvailable()) return Status::Error("no CUDA device");
  cuda::ConvertRequest r;
  r.op = ToElementOp(args.operation);
  r.format = args.format;
  r.backend = backend;
  r.count = args.count;
  r.encode = args.encode;
  r.decode = args.decode;
  const std::size_t in_bytes = InputBytes(args) * args.count;
  const std::size_t out_bytes = OutputBytes(args) * args.count;
  const bool stochastic = args.encode.rounding == RoundingMode::kStochastic &&
                          args.operation != Operation::kDecodeToF32 &&
                          args.operation != Operation::kDecodeToBf16;
  const bool device = IsDevice(args.input) && IsDevice(args.output) &&
                      (!stochastic || IsDevice(args.random_bits));
  if (device) {
    r.input = args.input;
    r.output = args.output;
    r.random_bits = stochastic ? args.random_bits : nullptr;
    const cuda::Status s = cuda::Convert(r);
    if (!s.ok) return Status::Error(s.message);
    const cudaError_t e = cudaDeviceSynchronize();
    return e == cudaSuccess ? Status::Ok() : Status::Error(cudaGetErrorString(e));
  }
  Scratch in, out, rb;
  cudaError_t e = cudaMalloc(&in.p, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&out.p, out_bytes);
  if (e == cudaSuccess && stochastic) e = cudaMalloc(&rb.p, 4 * args.count);
  if (e == cudaSuccess) e = cudaMemcpy(in.p, args.input, in_bytes, cudaMemcpyDefault);
  if (e == cudaSuccess && stochastic) {
    e = cudaMemcpy(rb.p, args.random_bits, 4 * args.count, cudaMemcpyDefault);
  }
  if (e != cudaSuccess) return Status::Error(std::string("cuda: ") + cudaGetErrorString(e));
  r.input = in.p;
  r.output = out.p;
  r.random_bits = stochastic ? static_cast<const std::uint32_t*>(rb.p) : nullptr;
  const cuda::Status s = cuda::Convert(r);
  if (!s.ok) return Status::Error(s.message);
  e = cudaMemcpy(args.output, out.p, out_bytes, cudaMemcpyDefault);  // synchronizes
  if (e != cudaSuccess) return Status::Error(std::string("cuda: ") + cudaGetErrorString(e));
  return Status::Ok();
}

// Whether cuda-hw has any instruction for (op, format) on this build/device.
bool HardwareRowExists(cuda::ElementOp op, FormatId format) {
  EncodeOptions o;
  switch (op) {
    case cuda::ElementOp::kEncodeF32:
    case cuda::ElementOp::kEncodeBf16:
    case cuda::ElementOp::kEncodeF16:
      for (RoundingMode m : {RoundingMode::kNearestEven, RoundingMode::kTowardZero,
                             RoundingMode::kUp, RoundingMode::kDown}) {
        for (bool sat : {false, true}) {
          if (cuda::HardwareEncodeOptions(op, format, m, sat, &o)) return true;
        }
      }
      return false;
    default:
      return cuda::Supports(cuda::Backend::kHardware, op, format, o,
                            cuda::HardwareDecodeOptions());
  }
}

}  // namespace

void RegisterCudaBackends(Registry& registry) {
  for (Operation op : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(op, format)) continue;
      const cuda::ElementOp eop = ToElementOp(op);
      for (cuda::Backend backend : cuda::kAllBackends) {
        if (backend == cuda::Backend::kHardware && !HardwareRowExists(eop, format)) continue;
        KernelEntry entry;
        entry.operation = op;
        entry.format = format;
        entry.backend = cuda::BackendName(backend);
        entry.supports = [backend, eop, format](const ConvertArgs& a) {
          return cuda::Supports(backend, eop, format, a.encode, a.decode);
        };
        entry.available = [] { return cuda::GpuAvailable(); };
        entry.run = [backend](const ConvertArgs& a) { return Run(backend, a); };
        registry.Add(std::move(entry));
      }
    }
  }
}

}  // namespace lowbit::registry
