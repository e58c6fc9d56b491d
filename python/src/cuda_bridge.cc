// See cuda_bridge.h.
#include "cuda_bridge.h"

#if defined(LOWBIT_PY_HAVE_CUDA)
#include "lowbit/cuda/device.h"
#endif

namespace lowbit::python {

#if defined(LOWBIT_PY_HAVE_CUDA)

bool CudaBuilt() { return true; }
int CudaDeviceCount() { return cuda::DeviceCount(); }

#else

bool CudaBuilt() { return false; }
int CudaDeviceCount() { return 0; }

#endif

std::string CudaUnavailable() {
  if (!CudaBuilt()) {
    return "a CUDA tensor, but this lowbit build has no CUDA kernels (built without nvcc: see "
           "lowbit.build_info()); move the tensor to the CPU or rebuild where nvcc is found";
  }
  if (CudaDeviceCount() == 0) return "a CUDA tensor, but the CUDA runtime sees no GPU";
  return "";
}

}  // namespace lowbit::python
