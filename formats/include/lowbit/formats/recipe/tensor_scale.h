// Step 2 of a recipe (steps.h): the tensor-level scale, NVFP4's second
// level (Recipe::tensor_scale).
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

struct TensorScale {
  float encode = 1.0f;  // TE's S_enc; 0 for the recipes that do not use it
  float decode = 1.0f;  // the stored FP32 scale dequantization multiplies by
};

LOWBIT_HD_CONSTEXPR TensorScale ChooseTensorScale(const Recipe& r, float tensor_amax) {
  TensorScale t;
  switch (r.tensor_scale) {
    case TensorScaleRule::kNone:
      return t;
    case TensorScaleRule::kTeGlobalEncode: {
      // compute_global_encode_scaling_factor_FP4: fminf(2688 / amax, FLT_MAX);
      // "if global amax is 0 or infinity, return 1" (amax is never NaN there).
      float s_enc = FminfFltMax(TensorRange(r) / tensor_amax);
      if (tensor_amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
      t.encode = s_enc;
      // S_dec = 1.0 / S_enc in double, narrowed ("to match how emulation code
      // was written"; double rounding is innocuous for a quotient).
      t.decode = static_cast<float>(1.0 / static_cast<double>(s_enc));
      return t;
    }
    case TensorScaleRule::kAmaxOverRange:
      // amax.float() / (448 * 6), no guard; a NaN amax keeps the host's NaN bits
      // on the device too (F32DivAsX86).
      t.decode = F32DivAsX86(tensor_amax, TensorRange(r));
      t.encode = 0.0f;
      return t;
  }
  return t;
}

}  // namespace lowbit::recipe
