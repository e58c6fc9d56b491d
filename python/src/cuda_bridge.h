// What the Python extension needs to know about CUDA beyond the registry's
// rows (which it runs on CUDA arrays through registry/choose.h): whether this
// build has lowbit::cuda, how many GPUs the runtime sees, and, for a CUDA
// array the registry has no row for, why.
#pragma once

#include <string>

namespace lowbit::python {

// Whether this build has lowbit::cuda, and how many GPUs the runtime sees
// (0 without it).
bool CudaBuilt();
int CudaDeviceCount();

// Why no CUDA row can run here ("this lowbit build has no CUDA kernels ...",
// "the CUDA runtime sees no GPU"), or "" when CUDA rows can run.
std::string CudaUnavailable();

}  // namespace lowbit::python
