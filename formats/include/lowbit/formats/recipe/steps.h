// The model's block and group steps over one recipe (recipe.h), host and
// device alike, one file per stage:
//
//   fp32_arithmetic.h  values derived from the formats, FP32 helpers in the
//                      sources' semantics
//   statistics.h       1. min / max / amax of a block or group
//   tensor_scale.h     2. the tensor-level scale (NVFP4)
//   choose_scale.h     3. the scale of a block or group (block_scale.h the
//                      result; mx_scale.h, nvfp4_scale.h, scaled_scale.h the
//                      rules of each family of scale_rule_list.h)
//   element_encode.h   4. the scaled element and its code
//   element_decode.h   5. a code back to FP32 / FP16
//
// Kernels (simd/, cuda/) call these steps, or a named alternative proven
// equal to one of them, so no maximum, scale formula or NaN rule is written
// twice (docs/design.md "Recipes are data too"). This header includes them
// all; docs/adding-a-recipe.md says which one a new rule touches.
#pragma once

#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/choose_scale.h"
#include "lowbit/formats/recipe/element_decode.h"
#include "lowbit/formats/recipe/element_encode.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/statistics.h"
#include "lowbit/formats/recipe/tensor_scale.h"
