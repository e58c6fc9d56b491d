// The CUDA side of the Python extension: element conversions on device
// buffers (DLPack CUDA tensors, zero-copy) on the caller's stream, through
// lowbit::cuda (cuda/include/lowbit/cuda/convert.h). In a build without
// lowbit::cuda every call returns an error saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lowbit/formats/policy.h"

namespace lowbit::python {

// Whether this build has lowbit::cuda, and how many GPUs the runtime sees
// (0 without it).
bool CudaBuilt();
int CudaDeviceCount();

// `operation` is a registry::Operation, `format` a FormatId (both as int, so
// this header needs neither the registry nor CUDA). `stream` is a
// cudaStream_t as an integer (torch.cuda.current_stream().cuda_stream; 0 is
// the legacy default stream). Returns "" on success, else the message.
std::string CudaConvert(int operation, int format, const void* input, void* output, std::size_t count,
                        const EncodeOptions& encode, const DecodeOptions& decode,
                        const std::uint32_t* random_bits, std::uintptr_t stream);

}  // namespace lowbit::python
