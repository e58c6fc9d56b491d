// Step 3 for the scaled family (scale_rule_list.h, family scaled): the FP32
// scale (and zero point) of a group from its statistics,
// docs/formats-reference.md §7, §8.2.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/statistics.h"

namespace lowbit::recipe {

namespace detail {

// TE compute_scale_from_amax (recipe_common.cuh), in its order:
//   1. amax < eps -> amax = eps                  (a NaN compares false)
//   2. amax Inf, 0 or NaN -> scale 1             (the all-zero guard)
//   3. scale = max_fp8 / amax                    (FP32 division, RN)
//   4. scale Inf -> FLT_MAX                      (amax too small)
//   5. force_pow_2_scales: keep sign + exponent bits (round down to 2^k)
LOWBIT_HD_CONSTEXPR float TeScaleFromAmax(float amax, float max_fp8, bool force_pow_2_scales, float epsilon) {
  if (amax < epsilon) amax = epsilon;
  if (!F32IsFinite(F32Bits(amax)) || amax == 0.0f) return 1.0f;
  float scale = max_fp8 / amax;
  if (!F32IsFinite(F32Bits(scale))) scale = kF32Max;
  if (force_pow_2_scales) scale = F32FromBits(F32Bits(scale) & (kF32SignMask | kF32ExponentMask));
  return scale;
}

// The roundings of the scale rules below (torch `.half()`, torch.round), as
// a parameter of ChooseScaledScale, so that a kernel can pass named
// alternatives proven equal to them on every FP32 input (the ones
// element_encode.h's element arithmetic takes); the model passes its own.
struct ScaleArithmeticOfModel {
  LOWBIT_HD_CONSTEXPR float RoundToInteger(float y, RoundingMode mode) const { return RoundToIntegerF32(y, mode); }
  LOWBIT_HD_CONSTEXPR float F16Rounded(float v) const { return F16RoundedF32(v); }
};

// A group holding a NaN has a NaN scale; its bits are pinned to the host's
// (F32DivAsX86 / F32SubAsX86 / F32WithX86Nan) so that the device
// computes the same scale bytes.
template <typename Arithmetic = ScaleArithmeticOfModel>
LOWBIT_HD_CONSTEXPR BlockScale ChooseScaledScale(const Recipe& r, const GroupStats& st,
                                                 const Arithmetic& arithmetic = {}) {
  BlockScale s;
  const float qmin = static_cast<float>(r.qmin);
  const float qmax = static_cast<float>(r.qmax);
  switch (r.scale_rule) {
    case ScaleRule::kTeFp8: {
      s.factor = TeScaleFromAmax(st.amax, MaxFiniteF32(r.element), r.pow2_scale, r.eps);
      s.decode = 1.0f / s.factor;  // reciprocal(): __frcp_rn, the stored scale_inv
      s.rule_value = s.factor;
      return s;
    }
    case ScaleRule::kAoSymmetric: {
      const float min_neg = TorchMin(st.min, 0.0f);
      float max_pos = TorchMax(st.max, 0.0f);
      max_pos = TorchMax(-min_neg, max_pos);
      const float half_range = (qmax - qmin) / 2.0f;  // 127.5 or 7.5, exact
      float scale = TorchDivideByScalar(r, max_pos, half_range);
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;  // torch.clamp(min=eps)
      s.decode = scale;
      s.factor = F32DivAsX86(1.0f, scale);  // input * (1.0 / scale): __rtruediv__ is reciprocal() * 1.0
      s.zero_point = (r.qmax + r.qmin + 1) / 2;  // int((qmax + qmin + 1) / 2): 0 for [-128,127], [-8,7]
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAoAsymmetric: {
      const float min_neg = TorchMin(st.min, 0.0f);
      const float max_pos = TorchMax(st.max, 0.0f);
      const float range = F32SubAsX86(max_pos, min_neg);
      float scale = TorchDivideByScalar(r, range, qmax - qmin);
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;
      // quant_min - torch.round(min_val_neg / scale), then clamp. The ratio
      // lies in [-(qmax - qmin), 0] up to rounding, or is NaN (a NaN input,
      // or -Inf / Inf): a NaN zero point casts to 0. An infinite ratio
      // (unreachable while eps > 0) clamps like torch.clamp.
      const float ratio = F32DivAsX86(min_neg, scale);
      float zp = ratio;
      if (F32IsFinite(F32Bits(ratio))) {
        zp = qmin - arithmetic.RoundToInteger(ratio, RoundingMode::kNearestEven);
      } else if (!F32IsNan(F32Bits(ratio))) {
        zp = -ratio;  // qmin - round(+-Inf) = -+Inf
      }
      if (!F32IsNan(F32Bits(zp))) zp = zp < qmin ? qmin : (zp > qmax ? qmax : zp);
      s.decode = scale;
      s.factor = F32DivAsX86(1.0f, scale);
      s.zero_point = TorchToInt(zp);
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kGptqSymmetric:
    case ScaleRule::kGptqAsymmetric: {
      // xmin = minimum(x.min(1), 0); xmax = maximum(x.max(1), 0).
      float xmin = TorchMin(st.min, 0.0f);
      float xmax = TorchMax(st.max, 0.0f);
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        xmax = TorchMax(F32Abs(xmin), xmax);
        if (xmin < 0.0f) xmin = -xmax;  // only rows with a negative value
      }
      if (xmin == 0.0f && xmax == 0.0f) {  // all-zero row: xmin = -1, xmax = +1
        xmin = -1.0f;
        xmax = 1.0f;
      }
      const float scale = F32DivAsX86(F32SubAsX86(xmax, xmin), qmax);  // maxq = 2^bits - 1
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        s.zero_point = (r.qmax + 1) / 2;  // (maxq + 1) / 2 = 8
      } else {
        // torch.round(-xmin / scale), no clamp. A scale that underflows to 0
        // (a subnormal range) gives Inf, which the integer cast makes 0.
        const float z = F32DivAsX86(-xmin, scale);
        s.zero_point =
            TorchToInt(F32IsFinite(F32Bits(z)) ? arithmetic.RoundToInteger(z, RoundingMode::kNearestEven) : z);
      }
      // Stored as FP16 (QuantLinear.pack: scales.clone().half()); the
      // quantizer's integers still come from the FP32 scale (factor).
      if (r.element_quirk == ElementQuirk::kRepackWithFp16Scale) s.decode = arithmetic.F16Rounded(scale);
      return s;
    }
    case ScaleRule::kAwqAsymmetric: {
      // AutoAWQ quantizes the layer cast to FP16 (AwqQuantizer._apply_quant:
      // linear_layer.half(), then pseudo_quantize_tensor), so every step is
      // an FP16 operation: torch computes each in FP32 and rounds it to FP16,
      // which for one +, -, * or / of FP16 operands is the correctly rounded
      // FP16 result (FP32 has 2 * 11 + 2 bits). max_val = w.amax, min_val =
      // w.amin of the FP16 weights (rounding is monotone: the FP16 min and
      // max; a NaN wins, AutoAWQ asserts there is none, the model carries
      // it through); scales = (max_val - min_val).clamp(min=1e-5) / max_int,
      // the clamp against Half(1e-5) (torch.clamp keeps NaN).
      const float lo = arithmetic.F16Rounded(st.min);
      const float hi = arithmetic.F16Rounded(st.max);
      const float range = arithmetic.F16Rounded(F32SubAsX86(hi, lo));
      const float eps = arithmetic.F16Rounded(r.eps);
      const float floored = !F32IsNan(F32Bits(range)) && range < eps ? eps : range;
      const float scale = arithmetic.F16Rounded(F32DivAsX86(floored, qmax));
      // zeros = (-torch.round(min_val / scales)).clamp_(0, max_int). The
      // ratio may pass the 16-bit rounding grid (min far from 0 with a small
      // range): RoundToIntegerF32 saturates keeping the sign, and the clamp
      // to [0, maxq] gives the same as the exact integer would. NaN stays
      // NaN through round and clamp_, and .to(torch.int32) makes it 0
      // (TorchToInt); -Inf / Inf (an infinite min) is NaN too.
      const float ratio = arithmetic.F16Rounded(F32DivAsX86(lo, scale));  // FP16: may overflow to +-Inf
      float zp = ratio;
      if (F32IsFinite(F32Bits(ratio))) {
        zp = -arithmetic.RoundToInteger(ratio, RoundingMode::kNearestEven);
        zp = zp < 0.0f ? 0.0f : (zp > qmax ? qmax : zp);
      } else if (!F32IsNan(F32Bits(ratio))) {
        zp = ratio < 0.0f ? qmax : 0.0f;  // -round(-+Inf) = +-Inf, clamped
      }
      s.factor = scale;  // already an FP16 value: .half() in from_linear changes nothing
      s.decode = scale;
      s.zero_point = TorchToInt(zp);
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kVllmFp8PerTensor:
    case ScaleRule::kVllmFp8PerToken: {
      // amax by fmaxf (NaN ignored; Recipe::amax_nan), / 448 in FP32. Per
      // tensor: no floor (amax 0 gives scale 0, a factor 1 / 0 = Inf and,
      // through the clamp, code +448 for every element: vLLM's own result);
      // per token: fmaxf(amax / 448, 1 / (448 * 512)) (min_scaling_factor).
      const float max_fp8 = MaxFiniteF32(r.element);
      float scale = st.amax / max_fp8;
      if (r.scale_rule == ScaleRule::kVllmFp8PerToken) {
        const float min_scale = 1.0f / (max_fp8 * 512.0f);
        scale = MaxIgnoringNan(scale, min_scale);  // fmaxf: a NaN (from a calibrated range) gives the floor
        s.factor = scale;                                // x / scale ("to match FBGemm")
      } else {
        s.factor = 1.0f / scale;  // inverted_scale = 1.0f / (*scale); x * inverted_scale
      }
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kVllmFp8KvCache:
      // No statistic: the default static scale 1.0 (a given one replaces it,
      // tensor.h QuantizeTensorWithGivenScales).
      s.factor = 1.0f;
      s.decode = 1.0f;
      s.rule_value = 1.0f;
      return s;
    case ScaleRule::kVllmFp8KvCalculated: {
      // vLLM calc_kv_scales: torch.abs(x).max() (a NaN wins; Recipe::
      // amax_nan) / a CPU range tensor, which torch on CUDA computes as amax
      // * fp32(1 / range) (the catalog sets scalar_divisor_as_reciprocal). No
      // floor: an all-zero tensor gets scale 0, and x / 0 makes every element
      // NaN (0x7F after __NV_SATFINITE), as vLLM would.
      const float scale = TorchDivideByScalar(r, st.amax, static_cast<float>(r.amax_divisor));
      s.factor = scale;  // the cache divides: x / k_scale
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAmaxOverQmaxFloored: {
      // amax.clamp(min=eps) / qmax (torch.clamp keeps NaN), one FP32 division.
      const float amax = !F32IsNan(F32Bits(st.amax)) && st.amax < r.eps ? r.eps : st.amax;
      const float scale = F32DivAsX86(amax, qmax);
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAmaxOverQmax: {
      float scale = F32DivAsX86(st.amax, qmax);
      if (scale == 0.0f) scale = 1.0f;  // all-zero group (or amax / qmax underflowing to 0)
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    default:
      return s;
  }
}

}  // namespace detail

}  // namespace lowbit::recipe
