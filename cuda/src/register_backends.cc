// Registry rows for the two CUDA backends (registry.h): "cuda-hw" (PTX cvt)
// and "cuda-sw" (the model compiled for the device), and the sweep rows of
// register.h ("cuda-hw-sweep"). A row's `available` is false without a GPU,
// so tests and `lowbit verify` show it as skipped. Callers of the registry
// pass host arrays; device arrays are used in place.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checks.h"
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"
#include "lowbit/cuda/verify.h"
#include "lowbit/registry/registry.h"

namespace lowbit {
namespace {

cuda::ElementOp ToElementOp(registry::Operation op) {
  switch (op) {
    case registry::Operation::kEncodeF32: return cuda::ElementOp::kEncodeF32;
    case registry::Operation::kEncodeBf16: return cuda::ElementOp::kEncodeBf16;
    case registry::Operation::kEncodeF16: return cuda::ElementOp::kEncodeF16;
    case registry::Operation::kDecodeToF32: return cuda::ElementOp::kDecodeToF32;
    case registry::Operation::kDecodeToBf16: return cuda::ElementOp::kDecodeToBf16;
  }
  return cuda::ElementOp::kEncodeF32;
}

// Device scratch for one call with host arrays, freed on every path.
struct Scratch {
  void* p = nullptr;
  ~Scratch() {
    if (p) cudaFree(p);
  }
};

registry::Status ToRegistry(const cuda::Status& s) {
  return s.ok ? registry::Status::Ok() : registry::Status::Error(s.message);
}

registry::Status Run(cuda::Backend backend, const registry::ConvertArgs& args) {
  registry::Status status = registry::ValidateConvertArgs(args);
  if (!status.ok || args.count == 0) return status;
  if (!cuda::GpuAvailable()) return registry::Status::Error("no CUDA device");
  cuda::ConvertRequest r;
  r.op = ToElementOp(args.operation);
  r.format = args.format;
  r.backend = backend;
  r.count = args.count;
  r.encode = args.encode;
  r.decode = args.decode;
  // Array sizes from the registry's operation metadata.
  const std::size_t in_bytes = registry::InputBytes(args.operation, args.format) * args.count;
  const std::size_t out_bytes = registry::OutputBytes(args.operation, args.format) * args.count;
  const bool stochastic = registry::IsEncode(args.operation) && args.encode.rounding == RoundingMode::kStochastic;
  const bool device = cuda::detail::IsDevicePointer(args.input) && cuda::detail::IsDevicePointer(args.output) &&
                      (!stochastic || cuda::detail::IsDevicePointer(args.random_bits));
  if (device) {
    r.input = args.input;
    r.output = args.output;
    r.random_bits = stochastic ? args.random_bits : nullptr;
    const cuda::Status s = cuda::Convert(r);
    if (!s.ok) return ToRegistry(s);
    return ToRegistry(cuda::detail::CudaStatus("cuda", cudaDeviceSynchronize()));
  }
  Scratch in, out, rb;
  cudaError_t e = cudaMalloc(&in.p, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&out.p, out_bytes);
  if (e == cudaSuccess && stochastic) e = cudaMalloc(&rb.p, 4 * args.count);
  if (e == cudaSuccess) e = cudaMemcpy(in.p, args.input, in_bytes, cudaMemcpyDefault);
  if (e == cudaSuccess && stochastic) e = cudaMemcpy(rb.p, args.random_bits, 4 * args.count, cudaMemcpyDefault);
  if (e != cudaSuccess) return ToRegistry(cuda::detail::CudaStatus("cuda", e));
  r.input = in.p;
  r.output = out.p;
  r.random_bits = stochastic ? static_cast<const std::uint32_t*>(rb.p) : nullptr;
  const cuda::Status s = cuda::Convert(r);
  if (!s.ok) return ToRegistry(s);
  // cudaMemcpy synchronizes with the conversion.
  return ToRegistry(cuda::detail::CudaStatus("cuda", cudaMemcpy(args.output, out.p, out_bytes, cudaMemcpyDefault)));
}

// The option sets with an instruction behind them: each rounding mode the
// cvt forms have, with and without .satfinite, for which
// HardwareEncodeOptions finds one; decodes have the one NVIDIA NaN rule.
std::vector<cuda::SweepOptionSet> InstructionOptionSets(cuda::ElementOp op, FormatId format) {
  std::vector<cuda::SweepOptionSet> sets;
  if (!cuda::IsEncode(op)) {
    const DecodeOptions decode = cuda::HardwareDecodeOptions(format);
    if (cuda::Supports(cuda::Backend::kHardware, op, format, EncodeOptions{}, decode)) {
      sets.push_back({"nan+,all-ones", EncodeOptions{}, decode});
    }
    return sets;
  }
  const std::pair<RoundingMode, const char*> modes[] = {{RoundingMode::kNearestEven, "rn"},
                                                        {RoundingMode::kTowardZero, "rz"},
                                                        {RoundingMode::kDown, "rm"},
                                                        {RoundingMode::kUp, "rp"}};
  for (const auto& [mode, name] : modes) {
    for (bool satfinite : {false, true}) {
      EncodeOptions o;
      if (cuda::HardwareEncodeOptions(op, format, mode, satfinite, &o)) {
        sets.push_back({std::string(name) + (satfinite ? ".satfinite" : ""), o, DecodeOptions{}});
      }
    }
  }
  return sets;
}

}  // namespace

namespace registry {

void RegisterCudaBackends(Registry& registry) {
  for (Operation op : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(op, format)) continue;
      const cuda::ElementOp eop = ToElementOp(op);
      for (cuda::Backend backend : cuda::kAllBackends) {
        if (backend == cuda::Backend::kHardware && InstructionOptionSets(eop, format).empty()) continue;
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

}  // namespace registry

namespace cuda {

std::vector<SweepRow> HardwareSweepRows() {
  std::vector<SweepRow> rows;
  for (registry::Operation op : registry::kAllOperations) {
    for (FormatId format : kAllFormats) {
      const ElementOp eop = ToElementOp(op);
      std::vector<SweepOptionSet> sets = InstructionOptionSets(eop, format);
      if (sets.empty()) continue;
      SweepRow row;
      row.operation = op;
      row.format = format;
      row.backend = "cuda-hw-sweep";
      row.option_sets = std::move(sets);
      row.available = [] { return GpuAvailable(); };
      row.run = [eop, format](const SweepOptionSet& options, VerifyReport* report) {
        return ToRegistry(VerifyAllInputs(Backend::kHardware, eop, format, options.encode, options.decode, report));
      };
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace cuda
}  // namespace lowbit
