// A device buffer for one call of a registry row that takes host memory
// (gemv/register_gemv.cc, tc_matmul/register_tc_gemv.cc,
// tc_matmul/register_tc_gemm.cc): allocated or filled from a host buffer,
// freed on every path out of the call; and a whole matmul problem's buffers
// so uploaded (DeviceMatmulProblem).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "lowbit/formats/matmul/weights.h"

namespace lowbit::cuda {

struct DeviceUpload {
  void* p = nullptr;
  DeviceUpload() = default;
  DeviceUpload(const DeviceUpload&) = delete;
  DeviceUpload& operator=(const DeviceUpload&) = delete;
  ~DeviceUpload() {
    if (p != nullptr) cudaFree(p);
  }
  cudaError_t Allocate(std::size_t bytes) { return cudaMalloc(&p, bytes); }
  // Nothing to copy (a null or empty host buffer) leaves p null.
  cudaError_t Upload(const void* host, std::size_t bytes) {
    if (host == nullptr || bytes == 0) return cudaSuccess;
    if (cudaError_t e = Allocate(bytes); e != cudaSuccess) return e;
    return cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
  }
  template <typename T>
  T* As() const {
    return static_cast<T*>(p);
  }
};

// A host matmul problem's buffers on the device, for a matmul row's
// host-memory `run`: every buffer W, x and y hold (their counts, strides
// included) is copied over, y too, so that the elements between y's rows
// that a kernel never writes come back unchanged; `problem` is the same
// problem on those copies, and CopyYBack returns y whole.
struct DeviceMatmulProblem {
  DeviceUpload codes, scales, zeros, tensor_scale, x, y;
  matmul::MatmulProblem problem;
  const matmul::MatmulProblem* host = nullptr;

  cudaError_t Upload(const matmul::MatmulProblem& p) {
    host = &p;
    const matmul::WeightView& w = p.w;
    const std::size_t code_unit = w.packing == matmul::WeightPacking::kLowbit ? 1 : 4;
    cudaError_t e = codes.Upload(w.codes, static_cast<std::size_t>(w.codes_count) * code_unit);
    if (e == cudaSuccess) e = scales.Upload(w.scales, static_cast<std::size_t>(w.scales_count) * matmul::ScaleBytes(w.scale_type));
    if (e == cudaSuccess) e = zeros.Upload(w.zeros, static_cast<std::size_t>(w.zeros_count) * 4);
    if (e == cudaSuccess) {
      e = tensor_scale.Upload(w.tensor_scale, static_cast<std::size_t>(w.tensor_scale_count) * sizeof(recipe::TensorScale));
    }
    if (e == cudaSuccess) e = x.Upload(p.x.data, static_cast<std::size_t>(p.x.count) * 2);
    if (e == cudaSuccess) e = y.Upload(p.y.data, YBytes());
    problem = p;
    problem.w.codes = codes.p;
    problem.w.scales = scales.p;
    problem.w.zeros = zeros.p;
    problem.w.tensor_scale = tensor_scale.As<const recipe::TensorScale>();
    problem.x.data = x.p;
    problem.y.data = y.p;
    return e;
  }
  std::size_t YBytes() const { return static_cast<std::size_t>(host->y.count) * matmul::OutputBytes(host->y.type); }
  cudaError_t CopyYBack() const { return cudaMemcpy(host->y.data, y.p, YBytes(), cudaMemcpyDeviceToHost); }
};

}  // namespace lowbit::cuda
