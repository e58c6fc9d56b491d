// Host-side argument checks of every CUDA entry point, in one place: each
// problem comes back as a Status naming it (a null or host buffer, no device,
// a failed launch), never as a wrong result or a fault. convert.cu, verify.cu,
// the recipe families (fp8_scaled.cu, nvfp4.cu, mx.cu, int_quantize.cu) and
// register_backends.cc all call these.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>

#include "lowbit/cuda/status.h"

namespace lowbit::cuda::detail {

// Device or managed memory that kernels may read and write. A pointer the
// runtime does not know (ordinary host memory, a stale pointer) is not; the
// query's error is cleared so that it does not surface at the next launch.
bool IsDevicePointer(const void* p);

// "`what`: no CUDA device", "`what`: null buffer" or "`what`: buffers must be
// device memory" for the first problem among `pointers`, else Ok.
Status CheckDeviceBuffers(const char* what, std::initializer_list<const void*> pointers);

// The same for a buffer that may be null (an optional output).
Status CheckOptionalDeviceBuffer(const char* what, const void* pointer);

// "`what`: R x C elements overflow the buffer sizes" when rows * cols, or
// that many elements of `widest_bytes` bytes (the call's widest buffer), do
// not fit size_t and the model's 64-bit indices (formats/checked_size.h),
// else Ok. Pure host arithmetic, checked before the device is asked
// anything, so it runs (and is tested) on machines without a GPU.
Status CheckSize(const char* what, std::size_t rows, std::size_t cols, std::size_t widest_bytes);

// "`what`: <output> overlaps <input>" when any two of the device buffers
// share a byte (in-place calls are refused: docs/bad-input.md "Aliased
// input and output"), else Ok. Null or empty buffers never overlap.
struct DeviceRange {
  const void* data;
  std::size_t bytes;
  const char* name;
};
Status CheckNoOverlap(const char* what, std::initializer_list<DeviceRange> buffers);

// "`what`: <CUDA error string>" for the last launch's error, else Ok.
Status LastLaunchStatus(const char* what);

// "`what`: <CUDA error string>" for `error`, else Ok.
Status CudaStatus(const char* what, cudaError_t error);

}  // namespace lowbit::cuda::detail
