// See cuda_bridge.h. The registry's CUDA rows take no stream (registry.h
// ConvertArgs), so the stream-aware path calls lowbit::cuda::Convert, the
// function those rows wrap (cuda/src/register_backends.cc), with the same
// backend choice: cuda-hw where its instruction computes exactly these
// options (cuda::Supports), else cuda-sw (the model on the device).
#include "cuda_bridge.h"

#if defined(LOWBIT_PY_HAVE_CUDA)
#include <cuda_runtime_api.h>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"
#include "lowbit/registry/registry.h"
#endif

namespace lowbit::python {

#if defined(LOWBIT_PY_HAVE_CUDA)

bool CudaBuilt() { return true; }
int CudaDeviceCount() { return cuda::DeviceCount(); }

namespace {
// registry::Operation and cuda::ElementOp list the same operations in the
// same order (convert.h: "Mirrors registry::Operation").
static_assert(static_cast<int>(registry::Operation::kEncodeF32) == static_cast<int>(cuda::ElementOp::kEncodeF32) &&
              static_cast<int>(registry::Operation::kEncodeBf16) == static_cast<int>(cuda::ElementOp::kEncodeBf16) &&
              static_cast<int>(registry::Operation::kEncodeF16) == static_cast<int>(cuda::ElementOp::kEncodeF16) &&
              static_cast<int>(registry::Operation::kDecodeToF32) == static_cast<int>(cuda::ElementOp::kDecodeToF32) &&
              static_cast<int>(registry::Operation::kDecodeToBf16) ==
                  static_cast<int>(cuda::ElementOp::kDecodeToBf16));
}  // namespace

std::string CudaConvert(int operation, int format, const void* input, void* output, std::size_t count,
                        const EncodeOptions& encode, const DecodeOptions& decode,
                        const std::uint32_t* random_bits, std::uintptr_t stream) {
  if (cuda::DeviceCount() == 0) return "a CUDA tensor, but the CUDA runtime sees no GPU";
  cuda::ConvertRequest request;
  request.op = static_cast<cuda::ElementOp>(operation);
  request.format = static_cast<FormatId>(format);
  request.input = input;
  request.output = output;
  request.count = count;
  request.encode = encode;
  request.decode = decode;
  request.random_bits = random_bits;
  request.stream = reinterpret_cast<cudaStream_t>(stream);
  request.backend = cuda::Supports(cuda::Backend::kHardware, request.op, request.format, encode, decode)
                        ? cuda::Backend::kHardware
                        : cuda::Backend::kSoftware;
  const cuda::Status st = cuda::Convert(request);
  return st.ok ? std::string() : st.message;
}

std::size_t CudaRecipeWorkspaceFloats() { return cuda::kRecipeWorkspaceFloats; }

std::string CudaRecipe(const registry::RecipeArgs& args, float* workspace, std::uintptr_t stream) {
  if (cuda::DeviceCount() == 0) return "a CUDA tensor, but the CUDA runtime sees no GPU";
  const cuda::Status st = cuda::RunRecipeOnDevice(args, workspace, reinterpret_cast<cudaStream_t>(stream));
  if (st.ok) return std::string();
  return st.message + " (the CPU path takes every recipe and layout: move the tensor to the CPU)";
}

#else

bool CudaBuilt() { return false; }
int CudaDeviceCount() { return 0; }

std::string CudaConvert(int, int, const void*, void*, std::size_t, const EncodeOptions&, const DecodeOptions&,
                        const std::uint32_t*, std::uintptr_t) {
  return "a CUDA tensor, but this lowbit build has no CUDA kernels (built without nvcc: see "
         "lowbit.build_info()); move the tensor to the CPU or rebuild where nvcc is found";
}

std::size_t CudaRecipeWorkspaceFloats() { return 0; }

std::string CudaRecipe(const registry::RecipeArgs&, float*, std::uintptr_t) {
  return CudaConvert(0, 0, nullptr, nullptr, 0, EncodeOptions{}, DecodeOptions{}, nullptr, 0);
}

#endif

}  // namespace lowbit::python
