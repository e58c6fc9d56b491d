// lowbit's scratch memory pools (stream_scratch.h): one per device id,
// created under a mutex on first use and kept for the process.
#include "stream_scratch.h"

#include <cuda_runtime.h>

#include <mutex>

namespace lowbit::cuda::detail {

cudaError_t ScratchPool(cudaMemPool_t* pool) {
  constexpr int kMaxDevices = 64;
  static std::mutex mutex;
  static cudaMemPool_t pools[kMaxDevices] = {};
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device < 0 || device >= kMaxDevices) return cudaDeviceGetDefaultMemPool(pool, device);
  std::lock_guard<std::mutex> lock(mutex);
  if (pools[device] == nullptr) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t created;
    if (cudaError_t e = cudaMemPoolCreate(&created, &props); e != cudaSuccess) return e;
    unsigned long long keep = kScratchPoolKeepBytes;
    if (cudaError_t e = cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep); e != cudaSuccess) {
      cudaMemPoolDestroy(created);
      return e;
    }
    pools[device] = created;
  }
  *pool = pools[device];
  return cudaSuccess;
}

}  // namespace lowbit::cuda::detail
