// See lowbit/cuda/tensor_core_gemv.h.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <string>

#include "../stream_scratch.h"
#include "lowbit/cuda/tensor_core_gemv.h"
#include "tc_gemv.h"
#include "tc_gemv_lanes.h"
#include "tc_gemv_pack_device.h"

namespace lowbit::cuda {

struct PackedTensorCoreWeights::State {
  explicit State(cudaStream_t s) : stream(s), packed(s), workspace(s) {}
  cudaStream_t stream;  // the packing stream: the buffers are freed in order on it
  tc_gemv::DeviceTcGemvWeights packed;
  // Sized for the largest m (the workspace grows with m), its counters
  // zeroed once; every call leaves them zero (tc_gemv.h WorkspaceFloats).
  detail::StreamScratch workspace;
  std::int64_t workspace_floats = 0;
  int split_k = 1;
  // The packing kernel may be the kernel before the first call on its
  // stream: that call must not read the weights early.
  bool called = false;
};

PackedTensorCoreWeights::PackedTensorCoreWeights(std::unique_ptr<State> state) : state_(std::move(state)) {}
PackedTensorCoreWeights::~PackedTensorCoreWeights() = default;

std::unique_ptr<PackedTensorCoreWeights> PackedTensorCoreWeights::Pack(const matmul::WeightView& w, void* stream,
                                                                       std::string* error) {
  auto state = std::make_unique<State>(static_cast<cudaStream_t>(stream));
  if (const char* why = state->packed.Pack(w)) {
    *error = why;
    return nullptr;
  }
  const tc_gemv::DeviceWeights& dw = state->packed.weights();
  state->split_k = tc_gemv::ScheduleOf(dw.format, dw.scale_type, dw.n, dw.k, dw.batch, matmul::OutputType::kFp32).split_k;
  state->workspace_floats = tc_gemv::WorkspaceFloats(dw, tc_gemv::kMaxM, state->split_k);
  if (state->workspace_floats > 0) {
    const std::size_t bytes = static_cast<std::size_t>(state->workspace_floats) * sizeof(float);
    cudaError_t e = state->workspace.Allocate(bytes);
    if (e == cudaSuccess) e = cudaMemsetAsync(state->workspace.get(), 0, bytes, state->stream);
    if (e != cudaSuccess) {
      *error = std::string("allocating the split-K workspace failed: ") + cudaGetErrorString(e);
      return nullptr;
    }
  }
  error->clear();
  return std::unique_ptr<PackedTensorCoreWeights>(new PackedTensorCoreWeights(std::move(state)));
}

std::string PackedTensorCoreWeights::Gemv(const std::uint16_t* x, std::int64_t m, matmul::OutputType output, void* y,
                                          void* stream) {
  if (x != nullptr && !tc_gemv::DeviceCanRead(x)) return "x is not device memory";
  if (y != nullptr && !tc_gemv::DeviceCanRead(y)) return "y is not device memory";
  tc_gemv::LaunchOptions options;
  options.overlap_previous_kernel = state_->called;
  const tc_gemv::DeviceWeights& dw = state_->packed.weights();
  if (const char* why = tc_gemv::RunTcGemv(dw, x, m, Schedule(output), y, static_cast<float*>(state_->workspace.get()),
                                           state_->workspace_floats, static_cast<cudaStream_t>(stream), options)) {
    return why;
  }
  state_->called = true;
  return "";
}

matmul::AccumulationSchedule PackedTensorCoreWeights::Schedule(matmul::OutputType output) const {
  const tc_gemv::DeviceWeights& dw = state_->packed.weights();
  return tc_gemv::ScheduleOf(dw.format, dw.scale_type, dw.n, dw.k, dw.batch, output);
}
matmul::WeightFormat PackedTensorCoreWeights::format() const { return state_->packed.weights().format; }
std::int64_t PackedTensorCoreWeights::n() const { return state_->packed.weights().n; }
std::int64_t PackedTensorCoreWeights::k() const { return state_->packed.weights().k; }
std::int64_t PackedTensorCoreWeights::batch() const { return state_->packed.weights().batch; }

}  // namespace lowbit::cuda
