// The CUDA library's registration into the kernel table (registry.h): rows
// for "cuda-hw" (PTX cvt) and "cuda-sw" (the model compiled for the device),
// and recipe rows (recipe_entry.h) with backend "cuda" for every catalog
// recipe a GPU recipe kernel implements. Without a GPU the rows are
// registered but not available, so checks show them as skipped. The registry does not know this library;
// lowbit/check/backends.h calls this when lowbit::cuda is built with the
// registry (cuda/CMakeLists.txt compiles src/register_backends.cc then).
//
// Beside them, the exhaustive GPU sweep ("cuda-hw-sweep") as rows of the same
// shape: one per cuda-hw conversion that has an instruction on this build,
// with the instruction option sets it sweeps, so that a harness iterates them
// like registry rows instead of enumerating instructions itself.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "lowbit/cuda/verify.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/cuda/status.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

// Defined in cuda/src/register_backends.cc. Adds the element rows and the
// recipe rows (cuda::RegisterCudaRecipes).
void RegisterCudaBackends(Registry& registry);

}  // namespace lowbit::registry

namespace lowbit::cuda {

// The recipe rows alone (backend "cuda"): quantize and dequantize of every
// MX recipe of the "te" and "ocp" profiles and of "nvfp4:te", quantize of
// "e4m3:te" / "e5m2:te" per tensor and per row, and quantize and dequantize
// of every integer recipe per row and per group. Their buffers are host
// memory (copied to and from the device).
void RegisterCudaRecipes(registry::Registry& registry);

// The packing rows of the GPU weight-layout kernels (src/register_layouts.cc).
void RegisterCudaLayouts(registry::Registry& registry);

// The tensor-core rows (registry/tensor_core_entry.h, backend "cuda"): one
// per instruction and probe width, each sweeping every operand family
// through the instruction and the model (src/register_tensor_core.cc).
void RegisterCudaTensorCore(registry::Registry& registry);

// The recipe rows' kernels on device buffers, for callers whose tensors are
// already on the GPU (the Python package's CUDA tensors): no copies, no
// synchronization. Every pointer of `args` is device memory of the current
// device, q.tensor_scale included (recipe::TensorScale: encode, then decode;
// read by dequantize, written by quantize), and `workspace` holds
// kRecipeWorkspaceFloats device floats the kernels use between launches
// (tensor amax, FP8 scale). Asynchronous on `stream` (0: the legacy default
// stream); the buffers must stay alive until the work on it is done.
// RunRecipeOnDevice refuses a target no kernel implements
// (recipe_quantize.h RunsQuantize / RunsDequantize, the rows
// RegisterCudaRecipes adds), host pointers and the registry's bad arguments
// (ValidateRecipeArgs) with a message, launching nothing.
inline constexpr std::size_t kRecipeWorkspaceFloats = 2;
Status RunRecipeOnDevice(const registry::RecipeArgs& args, float* workspace, cudaStream_t stream);

// One option set a sweep row runs: an instruction's rule
// (HardwareEncodeOptions / HardwareDecodeOptions), named as the cvt spells it
// ("rn.satfinite", "rz"; decodes "nan+,all-ones").
struct SweepOptionSet {
  std::string name;
  EncodeOptions encode;
  DecodeOptions decode;
};

struct SweepRow {
  registry::Operation operation;
  FormatId format;
  std::string backend;  // "cuda-hw-sweep"
  std::vector<SweepOptionSet> option_sets;
  // False without a GPU: the row is skipped, never passed.
  std::function<bool()> available;
  // Every input of the conversion (2^32 for an FP32 source, 2^16 for BF16 /
  // FP16, every code for a decode) through the instruction and through the
  // model compiled for the device, compared on the GPU (verify.h); the
  // report holds the count, the mismatches and the first of them.
  std::function<registry::Status(const SweepOptionSet& options, VerifyReport* report)> run;
};

// The sweep rows of this build and device, in (operation, format) order.
std::vector<SweepRow> HardwareSweepRows();

}  // namespace lowbit::cuda
