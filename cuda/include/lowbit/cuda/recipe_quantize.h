// One call per direction for every recipe the GPU kernels run, as the SIMD
// backend has (simd.h Quantize / Dequantize): a row-major [rows, cols] FP32
// tensor in a layout into the typed buffers of recipe/tensor.h
// QuantizedTensor, bit for bit recipe::QuantizeTensor, and back
// (recipe::DequantizeTensor). Which kernel runs a recipe is read off its
// fields (recipe_plan.h KernelOf), never its name or profile. Defined where
// lowbit::cuda is built with the registry (cuda/CMakeLists.txt compiles
// src/register_backends.cc then), whose argument checks these calls share.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/status.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::cuda {

// Whether the GPU kernels quantize (dequantize) by recipe `r` over `layout`:
// the MX recipes with the semantics of "<format>:te" or "<format>:ocp", the
// NVFP4 recipes with those of "nvfp4:te", TE's FP8 current scaling per
// tensor and per row (quantize only), the integer recipes with the
// semantics of a catalog one per row and per group, and every recipe of a
// rule scale_rule_kernels.h gives to the model recipe kernels in every
// layout that applies.
constexpr bool RunsQuantize(const recipe::Recipe& r, const recipe::Layout& layout) {
  return detail::KernelOf(r, layout, /*quantize=*/true) != detail::RecipeKernel::kNone;
}
constexpr bool RunsDequantize(const recipe::Recipe& r, const recipe::Layout& layout) {
  return detail::KernelOf(r, layout, /*quantize=*/false) != detail::RecipeKernel::kNone;
}

// Every pointer is device memory of the current device (q.tensor_scale
// included where the recipe has one: recipe::TensorScale, encode then
// decode), sized by recipe::SizesOf. Asynchronous on `stream` (nullptr: the
// legacy default stream), with a workspace from the stream-ordered
// allocator; the buffers must stay alive until the work on it is done.
// Errors, launching nothing: registry::ValidateRecipeArgs's (a shape the
// layout does not tile, sizes that overflow, null or misaligned buffers,
// overlaps), a recipe RunsQuantize / RunsDequantize refuses, MX and NVFP4
// rows that are not whole blocks, host memory, no GPU. rows or cols 0 is ok
// and writes nothing.
Status Quantize(const recipe::Recipe& r, const recipe::Layout& layout, const float* x, std::size_t rows,
                std::size_t cols, const recipe::QuantizedTensor& q, cudaStream_t stream);
Status Dequantize(const recipe::Recipe& r, const recipe::Layout& layout, const recipe::ConstQuantizedTensor& q,
                  std::size_t rows, std::size_t cols, float* out, cudaStream_t stream);

}  // namespace lowbit::cuda
