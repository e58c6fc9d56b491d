// The GPU recipe rows of the newer library profiles: the model's own
// whole-tensor steps (formats/include/lowbit/formats/recipe/tensor.h and
// steps.h) compiled for the device, over the recipe passed by value, so
// every maximum, scale formula and NaN rule is the model's. Used for the
// recipes no tuned kernel of mx.cu / nvfp4.cu / fp8_scaled.cu /
// int_quantize.cu implements (recipe_plan.h KernelOf): torchao's
// eager RCEIL, torchao 0.18 and ModelOpt 0.47 NVFP4, vLLM FP8, INT8
// amax-clamp, and GPTQ / AWQ with FP16 scales (uint4:gptq-sym-fp16,
// gptq-asym-fp16, awq-fp16: the FP16 rounding of the scale and the packer's
// recomputed integer are the model's, recipe::F16RoundedF32 and
// RepackedInteger; the build's --fmad=false keeps its two products apart). Kernels in model_recipe.cu.
//
// Order: lanes accumulate runs of consecutive elements from EmptyStats
// (recipe::Accumulate, as QuantizeTensor does), and the runs are combined
// across lanes, warps and blocks in element order, never reordered
// (recipe::Combine: the first NaN wins either way, and "keep the left unless
// strictly past it" is associative, so the result is Accumulate's bit for
// bit; model_recipe.cu's header has the argument). Elements: one thread per
// run of 16 elements, its group looked up once per stretch of one group;
// where the groups are runs of kGroupRegisterRun T consecutive elements
// (below), one pass holds a group in registers for its statistics, scale
// and elements.
//
// Each catalog recipe these kernels take runs a copy compiled with that
// recipe as a constant (RunsOnCompiledRecipeKernels); the element
// conversions may be tables of the model's results or the hardware cvt
// proven equal to it, never a retyped rule (model_recipe.cu's header).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/cuda/recipe_plan.h"

namespace lowbit::cuda::detail {

// RunsOnModelRecipeKernels (recipe_plan.h) says which recipes these kernels
// take.

// Whether `r` gives the same results as one of the catalog recipes that
// RunsOnModelRecipeKernels takes, and so runs that recipe's compiled copy
// of the kernels (model_recipe.cu); any other recipe runs the copy that
// reads the recipe at run time. Tests ask it to know which copy they check.
bool RunsOnCompiledRecipeKernels(const recipe::Recipe& r);

// Elements of a group that one thread of the one-pass kernel holds in
// registers (model_recipe.cu says why this many).
inline constexpr int kGroupRegisterRun = 16;

// Whether a quantize by `r` in `layout` holds each group in registers for
// one pass over x (a compiled recipe, more than one group, groups of
// kGroupRegisterRun T consecutive elements, T a power of two up to 256, x
// and the codes 16-byte aligned), instead of a statistics pass and an
// element pass; a tensor-scaled recipe (NVFP4) reads x once more before, for
// its tensor scale.
bool QuantizesGroupsInRegisters(const recipe::Recipe& r, const recipe::Layout& layout, std::size_t rows,
                                std::size_t cols, const float* x, const std::uint8_t* codes);

// Quantize (x -> q) or dequantize (q -> out) a row-major [rows, cols]
// tensor by `r` in `layout` on `stream`, not waited for. Every pointer is
// device memory (q.tensor_scale included where the recipe has one); the
// layout must apply (recipe::MakeGroupGrid). Temporary device memory comes
// from the stream-ordered allocator.
Status RunModelRecipe(const recipe::Recipe& r, const recipe::Layout& layout, bool quantize, const float* x,
                      std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q, float* out,
                      cudaStream_t stream);

}  // namespace lowbit::cuda::detail
