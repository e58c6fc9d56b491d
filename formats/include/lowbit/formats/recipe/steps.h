// The model's block and group steps over one recipe (recipe.h), host and
// device alike, one file per stage:
//
//   fp32_arithmetic.h  values derived from the formats (MaxFiniteF32,
//                      TensorRange), FP32 helpers in the sources' semantics
//                      (TorchMin, RoundToIntegerF32, F16RoundedF32, ...)
//   statistics.h       1. GroupStats: Accumulate, Combine, CombineAmax, StatsOf
//   tensor_scale.h     2. TensorScale: ChooseTensorScale (NVFP4)
//   choose_scale.h     3. ChooseScale, ScaleReadsOnlyAmax, StoredScale;
//                      block_scale.h the result (BlockScale, MxElementFactor);
//                      the rules of each family of scale_rule_list.h in
//                      mx_scale.h (ChooseMxScale), nvfp4_scale.h
//                      (ChooseNvfp4Scale) and scaled_scale.h (ChooseScaledScale)
//   element_encode.h   4. ScaledElement, IntegerOfScaled, RepackedInteger,
//                      EncodeScaled, EncodeAwqElement, EncodeElement
//   element_decode.h   5. DecodeElement, DecodeElementToF16
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
