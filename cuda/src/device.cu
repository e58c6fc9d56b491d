// Device discovery (device.h) and the SM count used for grid sizing.
#include "lowbit/cuda/device.h"

#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "launch.cuh"

namespace lowbit::cuda {

int DeviceCount() {
  int count = 0;
  // With no driver or device this returns an error and leaves `count` as it
  // was (docs/design.md "Known traps (measured)"), so only a success is believed.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

std::string DeviceDescription() {
  if (DeviceCount() == 0) return "no CUDA device";
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return "device properties unavailable";
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  return std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) +
         ", " + std::to_string(p.multiProcessorCount) + " SMs, CUDA driver " +
         std::to_string(driver) + ", runtime " + std::to_string(runtime);
}

bool HardwareHasBlackwellCvt() {
#if defined(LOWBIT_CUDA_HAS_SM100A)
  if (DeviceCount() == 0) return false;
  int device = 0, major = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  return major == 10;  // the build's sm_100a code runs on sm_100 only
#else
  return false;
#endif
}

namespace detail {

// One slot per device id, filled on first use. Threads that race on the
// first use store the same value, and the slots are atomics, so concurrent
// launches from several host threads are safe; the function-local static is
// initialised once (C++ [stmt.dcl]).
int SmCount() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> counts[kMaxDevices];
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 1;
  }
  auto query = [device] {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      cudaGetLastError();
      sms = 1;
    }
    return sms > 0 ? sms : 1;
  };
  if (device < 0 || device >= kMaxDevices) return query();
  int sms = counts[device].load(std::memory_order_relaxed);
  if (sms == 0) {
    sms = query();
    counts[device].store(sms, std::memory_order_relaxed);
  }
  return sms;
}

}  // namespace detail
}  // namespace lowbit::cuda
