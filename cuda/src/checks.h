// Argument checks shared by the CUDA entry points (host code): every problem
// is a Status naming it (issue 5: "clear errors on bad arguments").
#pragma once

#include <cuda_runtime_api.h>

#include <initializer_list>
#include <string>

#include "lowbit/cuda/device.h"
#include "lowbit/cuda/status.h"

namespace lowbit::cuda::detail {

inline bool IsDevicePointer(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

inline Status CheckDeviceBuffers(const char* what, std::initializer_list<const void*> pointers) {
  if (DeviceCount() == 0) return Status::Error(std::string(what) + ": no CUDA device");
  for (const void* p : pointers) {
    if (p == nullptr) return Status::Error(std::string(what) + ": null buffer");
    if (!IsDevicePointer(p)) return Status::Error(std::string(what) + ": buffers must be device memory");
  }
  return Status::Ok();
}

inline Status LastLaunchStatus(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return Status::Error(std::string(what) + ": " + cudaGetErrorString(e));
  return Status::Ok();
}

}  // namespace lowbit::cuda::detail
