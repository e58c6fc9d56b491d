// The argument checks of checks.h.
#include "checks.h"

#include <cuda_runtime_api.h>

#include <string>

#include "lowbit/cuda/device.h"

namespace lowbit::cuda::detail {

bool IsDevicePointer(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();  // not a CUDA pointer: clear the error this query left
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

Status CheckDeviceBuffers(const char* what, std::initializer_list<const void*> pointers) {
  if (DeviceCount() == 0) return Status::Error(std::string(what) + ": no CUDA device");
  for (const void* p : pointers) {
    if (p == nullptr) return Status::Error(std::string(what) + ": null buffer");
    if (!IsDevicePointer(p)) return Status::Error(std::string(what) + ": buffers must be device memory");
  }
  return Status::Ok();
}

Status CheckOptionalDeviceBuffer(const char* what, const void* pointer) {
  if (pointer == nullptr) return Status::Ok();
  return CheckDeviceBuffers(what, {pointer});
}

Status CudaStatus(const char* what, cudaError_t error) {
  if (error != cudaSuccess) return Status::Error(std::string(what) + ": " + cudaGetErrorString(error));
  return Status::Ok();
}

Status LastLaunchStatus(const char* what) { return CudaStatus(what, cudaGetLastError()); }

}  // namespace lowbit::cuda::detail
