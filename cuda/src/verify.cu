// The exhaustive sweep of verify.h: every input of a conversion through the
// backend's element functor and through the model, compared on the GPU.
// Mismatches are rare, so they are counted per thread and recorded with
// atomics only when they happen; the sweep itself is pure arithmetic.
#include "lowbit/cuda/verify.h"

#include <cuda_runtime.h>

#include <string>

#include "checks.h"
#include "dispatch.cuh"
#include "launch.cuh"
#include "lowbit/cuda/device.h"

namespace lowbit::cuda {
namespace {

struct SweepState {
  unsigned long long mismatches;
  unsigned int recorded;
  unsigned long long input[8];
  unsigned long long backend[8];
  unsigned long long model[8];
};

__device__ void Record(SweepState* st, unsigned long long input, unsigned long long got,
                       unsigned long long want) {
  const unsigned slot = atomicAdd(&st->recorded, 1u);
  if (slot < 8) {
    st->input[slot] = input;
    st->backend[slot] = got;
    st->model[slot] = want;
  }
}

// Inputs 0 .. count-1 as the functor's input type, two per step so that the
// pair instructions are what is checked.
template <typename Cand>
__global__ void __launch_bounds__(256)
    SweepKernel(Cand cand, typename Cand::Model model, unsigned long long count, SweepState* st) {
  using In = typename Cand::In;
  using Out = typename Cand::Out;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (unsigned long long p = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < count / 2; p += stride) {
    const unsigned long long i = 2 * p;
    const In a = static_cast<In>(i), b = static_cast<In>(i + 1);
    Out ca, cb;
    cand.Two(a, b, i, ca, cb);
    const Out ma = model.One(a, i), mb = model.One(b, i + 1);
    if (ca != ma) {
      ++local;
      Record(st, i, ca, ma);
    }
    if (cb != mb) {
      ++local;
      Record(st, i + 1, cb, mb);
    }
  }
  if (local != 0) atomicAdd(&st->mismatches, local);
}

}  // namespace

Status VerifyAllInputs(Backend backend, ElementOp op, FormatId format,
                       const EncodeOptions& encode, const DecodeOptions& decode,
                       VerifyReport* report) {
  if (report == nullptr) return Status::Error("verify: null report");
  *report = VerifyReport{};
  if (static_cast<int>(format) < 0 || static_cast<int>(format) >= kFormatCount) {
    return Status::Error("verify: unknown format id");
  }
  const FormatSpec& spec = Spec(format);
  const std::string what =
      std::string(BackendName(backend)) + " " + ElementOpName(op) + " " + spec.name;
  if (DeviceCount() == 0) return Status::Error(what + ": no CUDA device");
  if (IsEncode(op) && encode.rounding == RoundingMode::kStochastic) {
    return Status::Error(what + ": stochastic rounding has no single expected code per input");
  }
  unsigned long long count = 0;
  switch (op) {
    case ElementOp::kEncodeF32: count = 1ull << 32; break;
    case ElementOp::kEncodeBf16:
    case ElementOp::kEncodeF16: count = 1ull << 16; break;
    default:
      if (spec.total_bits > 32) return Status::Error(what + ": 2^64 codes cannot be swept");
      count = 1ull << spec.total_bits;
      break;
  }
  if (!Supports(backend, op, format, encode, decode)) {
    return Status::Error(what + ": the backend does not implement this conversion with these options");
  }

  SweepState* st = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaError_t error = cudaMalloc(&st, sizeof(SweepState));
  if (error == cudaSuccess) error = cudaMemset(st, 0, sizeof(SweepState));
  if (error == cudaSuccess) error = cudaEventCreate(&start);
  if (error == cudaSuccess) error = cudaEventCreate(&stop);
  if (error == cudaSuccess) {
    const unsigned grid = detail::GridFor(count / 2, 256);
    auto launch = [&](auto cand) {
      using Cand = decltype(cand);
      typename Cand::Model model{};
      if constexpr (std::is_same_v<typename Cand::Model, Cand>) model = cand;
      cudaEventRecord(start);
      SweepKernel<Cand><<<grid, 256>>>(cand, model, count, st);
      error = cudaGetLastError();
      cudaEventRecord(stop);
    };
    if (backend == Backend::kSoftware) {
      detail::VisitSoftware(op, format, encode, decode, nullptr, launch);
    } else {
      detail::VisitHardware(op, format, encode.rounding,
                            encode.overflow == Overflow::kSaturate || !IsEncode(op),
                            HardwareHasBlackwellCvt(), launch);
    }
  }
  SweepState host{};
  if (error == cudaSuccess) error = cudaEventSynchronize(stop);
  if (error == cudaSuccess) error = cudaMemcpy(&host, st, sizeof(host), cudaMemcpyDeviceToHost);
  if (error == cudaSuccess) {
    cudaEventElapsedTime(&report->milliseconds, start, stop);
    report->inputs = count;
    report->mismatches = host.mismatches;
    report->examples = host.recorded < 8 ? static_cast<int>(host.recorded) : 8;
    for (int k = 0; k < report->examples; ++k) {
      report->example_input[k] = host.input[k];
      report->example_backend[k] = host.backend[k];
      report->example_model[k] = host.model[k];
    }
  }
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (st) cudaFree(st);
  return detail::CudaStatus(what.c_str(), error);
}

}  // namespace lowbit::cuda
