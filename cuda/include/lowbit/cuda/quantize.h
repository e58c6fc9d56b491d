// Every quantization recipe family on the GPU, one header each:
//   fp8_scaled.h    FP8 per tensor and per token (TE current scaling)
//   nvfp4.h         NVFP4 (TE)
//   mx.h            MXFP4 / MXFP6 / MXFP8 / MXINT8 (TE RCEIL or OCP FLOOR)
//   int_quantize.h  INT8 / INT4 / UINT4 per row or per group
#pragma once

#include "lowbit/cuda/fp8_scaled.h"
#include "lowbit/cuda/int_quantize.h"
#include "lowbit/cuda/mx.h"
#include "lowbit/cuda/nvfp4.h"
