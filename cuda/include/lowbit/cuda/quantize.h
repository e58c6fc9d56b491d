// Quantization on the GPU: one call per direction for every recipe
// (recipe_quantize.h: cuda::Quantize / Dequantize over recipe::Recipe, with
// the registry), and the tuned kernels' own entry points, one header each,
// for their extra inputs and outputs (BF16, other packings, layouts):
//   fp8_scaled.h    FP8 per tensor and per token (TE current scaling)
//   nvfp4.h         NVFP4 (TE)
//   mx.h            MXFP4 / MXFP6 / MXFP8 / MXINT8 (TE RCEIL or OCP FLOOR)
//   int_quantize.h  INT8 / INT4 / UINT4 per row or per group
#pragma once

#include "lowbit/cuda/fp8_scaled.h"
#include "lowbit/cuda/int_quantize.h"
#include "lowbit/cuda/mx.h"
#include "lowbit/cuda/nvfp4.h"
#include "lowbit/cuda/recipe_quantize.h"
