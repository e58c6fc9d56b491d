// A device buffer for one call of a registry row that takes host memory
// (gemv/register_gemv.cc, gemm/register_gemm.cc,
// tc_matmul/register_tc_gemv.cc): allocated or filled from a host buffer,
// freed on every path out of the call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

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

}  // namespace lowbit::cuda
