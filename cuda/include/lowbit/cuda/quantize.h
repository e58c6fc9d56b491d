// Quantization on the GPU: one call per direction for every recipe the GPU
// kernels run (recipe_quantize.h: cuda::Quantize / Dequantize over
// recipe::Recipe, with the registry). The tuned kernels behind it (MX,
// NVFP4, FP8 scaled, integer groups) take one tensor description, internal
// to the library (cuda/src/tensor_call.h).
#pragma once

#include "lowbit/cuda/recipe_quantize.h"
