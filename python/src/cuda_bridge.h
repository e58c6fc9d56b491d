// The CUDA side of the Python extension: element conversions on device
// buffers (DLPack CUDA tensors, zero-copy) on the caller's stream, through
// lowbit::cuda (cuda/include/lowbit/cuda/convert.h). In a build without
// lowbit::cuda every call returns an error saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lowbit/formats/policy.h"
#include "lowbit/registry/recipe_entry.h"

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

// A recipe's quantize or dequantize on device buffers (every pointer of
// `args` device memory of the current device, q.tensor_scale two floats:
// encode, decode), through cuda::RunRecipeOnDevice (lowbit/cuda/register.h):
// the registry's CUDA recipe kernels, zero-copy, asynchronous on `stream`.
// `workspace`: CudaRecipeWorkspaceFloats() device floats. Returns "" on
// success, else the message.
std::size_t CudaRecipeWorkspaceFloats();
std::string CudaRecipe(const registry::RecipeArgs& args, float* workspace, std::uintptr_t stream);

}  // namespace lowbit::python
