// Whether a CUDA device can run lowbit's kernels here. With no GPU,
// cudaGetDeviceCount returns an error and leaves its output unwritten
// (docs/design.md "Known traps (measured)"), so the count is read only on success.
#pragma once

#include <string>

namespace lowbit::cuda {

// Number of usable devices; 0 when the driver or the device is missing.
int DeviceCount();
inline bool GpuAvailable() { return DeviceCount() > 0; }

// "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, driver 13000" or the reason there is none.
std::string DeviceDescription();

// True when this build holds sm_100a-class code (FP4/FP6/E8M0 cvt) and the
// current device can run it.
bool HardwareHasBlackwellCvt();

}  // namespace lowbit::cuda
