// The argument checks of checks.h.
#include "checks.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "lowbit/formats/checked_size.h"

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

Status CheckSize(const char* what, std::size_t rows, std::size_t cols, std::size_t widest_bytes) {
  std::size_t elements = 0, bytes = 0;
  if (CheckedElementCount(rows, cols, &elements) && CheckedMul(elements, widest_bytes, &bytes)) return Status::Ok();
  return Status::Error(std::string(what) + ": " + std::to_string(rows) + " x " + std::to_string(cols) +
                       " elements overflow the buffer sizes");
}

Status CheckNoOverlap(const char* what, std::initializer_list<DeviceRange> buffers) {
  for (auto a = buffers.begin(); a != buffers.end(); ++a) {
    for (auto b = buffers.begin(); b != a; ++b) {
      if (a->data == nullptr || b->data == nullptr || a->bytes == 0 || b->bytes == 0) continue;
      const auto a0 = reinterpret_cast<std::uintptr_t>(a->data), b0 = reinterpret_cast<std::uintptr_t>(b->data);
      if (a0 >= b0 ? a0 - b0 < b->bytes : b0 - a0 < a->bytes) {
        return Status::Error(std::string(what) + ": " + a->name + " overlaps " + b->name +
                             " (in-place and overlapping buffers are not supported)");
      }
    }
  }
  return Status::Ok();
}

Status CudaStatus(const char* what, cudaError_t error) {
  if (error != cudaSuccess) return Status::Error(std::string(what) + ": " + cudaGetErrorString(error));
  return Status::Ok();
}

Status LastLaunchStatus(const char* what) { return CudaStatus(what, cudaGetLastError()); }

}  // namespace lowbit::cuda::detail
