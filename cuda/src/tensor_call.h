// The one description of a tensor that every tuned quantize launcher takes
// (mx.cu, nvfp4.cu, fp8_scaled.cu, int_quantize.cu), with the kernel chosen
// off the recipe's fields (lowbit/cuda/recipe_plan.h KernelOf). The public
// call is cuda::Quantize / Dequantize (lowbit/cuda/recipe_quantize.h): FP32
// in and out, the recipe's own packing, every scale computed. A TensorCall
// adds what the benchmark (bench/cuda/bench_cuda.cu) and the GPU tests also
// drive: BF16 input and output, another integer packing, a given tensor
// amax or FP8 scale, and a layout variant (layout_variants.h). Internal to
// lowbit::cuda (not installed).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "layout_variants.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor.h"
#include "model_recipe.h"

namespace lowbit::cuda::detail {

// How integer codes are stored (formats/block/packing.h), where a call asks
// for another packing than its recipe's (recipe::Packing):
//   kBytes      one code per byte (INT8; any element)
//   kLowFirst   two 4-bit codes per byte, element 2i in bits 3..0 (ONNX,
//               torchao pack_uint4, TE); cols must be even
//   kHighFirst  the same with element 2i in bits 7..4 (tinygemm's input)
//   kAwq        AWQ WQLinear_GEMM words: eight 4-bit codes of one row per
//               uint32, nibble i holding column 8c + kAwqOrderMap[i]
//               (PackAwq); cols must be a multiple of 8
enum class IntPacking : std::uint8_t { kBytes, kLowFirst, kHighFirst, kAwq };

// Bytes of packed codes for a [rows, cols] matrix.
std::size_t IntPackedBytes(IntPacking packing, std::size_t rows, std::size_t cols);

// A row-major [rows, cols] tensor of one recipe call. Every pointer is
// device memory; calls are asynchronous on `stream`. The 1-D block recipes
// (MX, NVFP4) take the flattened tensor, rows * cols elements.
struct TensorCall {
  const recipe::Recipe* recipe = nullptr;
  recipe::Layout layout{};  // per tensor, per row, groups or 1-D blocks (the recipe target's)
  std::size_t rows = 0, cols = 0;
  // Quantize reads `input`; dequantize writes `output`.
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  OutputType output_type = OutputType::kF32;
  void* output = nullptr;
  // The typed buffers of recipe/tensor.h, as sized by recipe::SizesOf:
  // codes; scale_codes (MX E8M0, NVFP4 UE4M3); scales (FP8 and integer: the
  // FP32 dequantize scale per tensor, row or group); zero_points (may be
  // null); tensor_scale (NVFP4: S_enc, S_dec as recipe::TensorScale, both
  // written by quantize, S_dec read by dequantize).
  recipe::QuantizedTensor q{};
  // NVFP4: the tensor amax, given (device); null: computed into workspace[0].
  const float* tensor_amax = nullptr;
  // FP8 per tensor: the scale x is multiplied by, given (device; static
  // scaling, nothing else written); null: computed (dynamic scaling) into
  // workspace[0], its amax into workspace[1], and q.scales = 1 / scale.
  const float* given_scale = nullptr;
  // Integer recipes: codes in this packing instead of the recipe's.
  std::optional<IntPacking> int_packing;
  float* workspace = nullptr;  // register.h kRecipeWorkspaceFloats device floats
  cudaStream_t stream = nullptr;
  LayoutVariant variant = LayoutVariant::kCurrent;
};

// The launchers, one a kernel family: the checks of that family (each
// error a line naming it), then its kernels.
Status LaunchMx(bool quantize, const TensorCall& t);                     // mx.cu
Status LaunchNvfp4(bool quantize, const TensorCall& t);                  // nvfp4.cu
Status LaunchFp8Scaled(RecipeKernel kernel, const TensorCall& t);        // fp8_scaled.cu, quantize only
Status LaunchInt(bool quantize, const TensorCall& t);                    // int_quantize.cu

// The kernels of `kernel` (KernelOf of the call's recipe, layout and
// direction) on `t`.
inline Status LaunchRecipeKernel(RecipeKernel kernel, bool quantize, const TensorCall& t) {
  switch (kernel) {
    case RecipeKernel::kNone: break;
    case RecipeKernel::kMx: return LaunchMx(quantize, t);
    case RecipeKernel::kNvfp4: return LaunchNvfp4(quantize, t);
    case RecipeKernel::kFp8PerTensor:
    case RecipeKernel::kFp8PerRow: return LaunchFp8Scaled(kernel, t);
    case RecipeKernel::kInt: return LaunchInt(quantize, t);
    case RecipeKernel::kModel:
      if (t.input_type != InputType::kF32 || t.output_type != OutputType::kF32) {
        return Status::Error("cuda: the model recipe kernels take FP32 input and output");
      }
      return RunModelRecipe(*t.recipe, t.layout, quantize, static_cast<const float*>(t.input), t.rows, t.cols, t.q,
                            static_cast<float*>(t.output), t.stream);
  }
  return Status::Error("cuda: no GPU kernel for the recipe '" + (t.recipe ? RecipeLabel(*t.recipe) : "(null)") +
                       "' in this layout (recipe_plan.h KernelOf)");
}

// The same with the kernel KernelOf chooses; a null recipe is an error.
inline Status RunTensorCall(bool quantize, const TensorCall& t) {
  if (t.recipe == nullptr) return Status::Error("cuda: null recipe");
  return LaunchRecipeKernel(KernelOf(*t.recipe, t.layout, quantize), quantize, t);
}

}  // namespace lowbit::cuda::detail
