// Scale and zero point of one group from its statistics, per recipe, as the
// FP32 operations of each source in its order (docs/formats-reference.md §7, §8.2). torch
// arithmetic on FP32 tensors is FP32 with round-to-nearest-even per
// operation; a Python float operand is an FP32 scalar there (127.5, 7.5, 15
// and 255 are exact in FP32).
#pragma once

#include <cstdint>

#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/fp8_scaled_scale.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::block {

// What the scale rules read from a group. min / max are torch.amin /
// torch.amax (a NaN makes them NaN); amax is |x| reduced by the recipe's NaN
// rule ([TE] fmaxf ignores NaN, docs/formats-reference.md §9 row 10).
struct GroupStats {
  float min = 0;
  float max = 0;
  float amax = 0;
};

struct QuantParams {
  float encode = 1;            // TE: the multiplier scale; AO: fp32(1 / scale); GPTQ, common: the divisor scale
  float decode = 1;            // the stored scale that dequantizes: TE scale_inv, else scale
  std::int32_t zero_point = 0;  // integer zero point (0 for symmetric signed schemes)
};

// An integer grid for round(y): y is clamped to [qmin - zp, qmax - zp]
// before rounding (int_quant.h), a few hundred at most, so 16 bits hold it
// and every element rounding still goes through the model's one RoundPack
// (docs/design.md "One rounding point").
inline constexpr FormatSpec kRoundingGrid16{"int16", FormatKind::kInteger, 16, true, 0, 0, 0, true, SpecialCodes::kNone};
static_assert(kRoundingGrid16.IntMax() == 32767 && kRoundingGrid16.IntMin() == -32768);

// The divisors the sources write as Python floats are exact in FP32.
static_assert((127.0f - -128.0f) / 2.0f == 127.5f && (7.0f - -8.0f) / 2.0f == 7.5f);

// round(y) for a finite y with |y| < 2^15, as an FP32 integer value
// (saturating outside, which no caller reaches).
LOWBIT_HD_CONSTEXPR float RoundToIntegerF32(float y, RoundingMode mode) {
  constexpr FormatSpec kGrid = kRoundingGrid16;  // a local copy, usable in device code (convert.h)
  EncodeOptions o;
  o.rounding = mode;
  o.overflow = Overflow::kSaturate;
  const std::uint64_t code = EncodeF32(kGrid, y, o).code;
  const std::int64_t v = code & 0x8000u ? static_cast<std::int64_t>(code) - 0x10000 : static_cast<std::int64_t>(code);
  return static_cast<float>(v);
}

namespace detail {

LOWBIT_HD_CONSTEXPR float TorchMin(float a, float b) {  // torch.minimum: NaN propagates
  if (F32IsNan(F32Bits(a))) return a;
  if (F32IsNan(F32Bits(b))) return b;
  return b < a ? b : a;
}
LOWBIT_HD_CONSTEXPR float TorchMax(float a, float b) { return MaxPropagatingNan(a, b); }

// torch .to(int) of an FP32 integer value; NaN and +-Inf -> 0 (the CPU
// result, docs/formats-reference.md §8.1; CUDA differs).
LOWBIT_HD_CONSTEXPR std::int32_t ToInt(float v) {
  return F32IsFinite(F32Bits(v)) ? static_cast<std::int32_t>(v) : 0;
}

// Largest finite FP8 value: TE Quantized_Limits<T>::max_norm.
LOWBIT_HD_CONSTEXPR float Fp8MaxNorm(const FormatSpec& element) {
  return element.exponent_bits == 5 ? 57344.0f : 448.0f;
}

}  // namespace detail

LOWBIT_HD_CONSTEXPR GroupStats StatsOfRange(float lo, float hi) {
  GroupStats s;
  s.min = lo;
  s.max = hi;
  s.amax = MaxPropagatingNan(F32Abs(lo), F32Abs(hi));
  return s;
}

LOWBIT_HD_CONSTEXPR QuantParams QuantParamsFromStats(const IntQuantRecipe& r, const GroupStats& s) {
  QuantParams p;
  const float qmin = static_cast<float>(r.qmin);
  const float qmax = static_cast<float>(r.qmax);
  switch (r.scheme) {
    case QuantScheme::kTeFp8: {
      p.encode = TeScaleFromAmax(s.amax, detail::Fp8MaxNorm(*r.element), r.pow2_scale, r.eps);
      p.decode = 1.0f / p.encode;  // reciprocal(): __frcp_rn
      return p;
    }
    case QuantScheme::kAoSymmetric: {
      const float min_neg = detail::TorchMin(s.min, 0.0f);
      float max_pos = detail::TorchMax(s.max, 0.0f);
      max_pos = detail::TorchMax(-min_neg, max_pos);
      const float half_range = (qmax - qmin) / 2.0f;  // 127.5 or 7.5, exact
      float scale = r.scalar_divisor_as_reciprocal ? max_pos * (1.0f / half_range) : max_pos / half_range;
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;  // torch.clamp(min=eps)
      p.decode = scale;
      p.encode = 1.0f / scale;  // input * (1.0 / scale): Tensor.__rtruediv__ is reciprocal() * 1.0
      p.zero_point = (r.qmax + r.qmin + 1) / 2;  // int((qmax + qmin + 1) / 2): 0 for [-128,127], [-8,7]
      return p;
    }
    case QuantScheme::kAoAsymmetric: {
      const float min_neg = detail::TorchMin(s.min, 0.0f);
      const float max_pos = detail::TorchMax(s.max, 0.0f);
      const float range = max_pos - min_neg;
      float scale = r.scalar_divisor_as_reciprocal ? range * (1.0f / (qmax - qmin)) : range / (qmax - qmin);
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;
      // quant_min - torch.round(min_val_neg / scale), then clamp.
      // min_neg / scale lies in [-(qmax - qmin), 0] up to rounding, or is
      // NaN (a NaN input, or -Inf / Inf): a NaN zero point casts to 0. An
      // infinite ratio (unreachable while eps > 0) clamps like torch.clamp.
      const float ratio = min_neg / scale;
      float zp = ratio;
      if (F32IsFinite(F32Bits(ratio))) {
        zp = qmin - RoundToIntegerF32(ratio, RoundingMode::kNearestEven);
      } else if (!F32IsNan(F32Bits(ratio))) {
        zp = -ratio;  // qmin - round(+-Inf) = -+Inf
      }
      if (!F32IsNan(F32Bits(zp))) zp = zp < qmin ? qmin : (zp > qmax ? qmax : zp);
      p.decode = scale;
      p.encode = 1.0f / scale;
      p.zero_point = detail::ToInt(zp);
      return p;
    }
    case QuantScheme::kGptqSymmetric:
    case QuantScheme::kGptqAsymmetric: {
      // xmin = minimum(x.min(1), 0); xmax = maximum(x.max(1), 0).
      float xmin = detail::TorchMin(s.min, 0.0f);
      float xmax = detail::TorchMax(s.max, 0.0f);
      if (r.scheme == QuantScheme::kGptqSymmetric) {
        xmax = detail::TorchMax(F32Abs(xmin), xmax);
        if (xmin < 0.0f) xmin = -xmax;  // only rows with a negative value
      }
      if (xmin == 0.0f && xmax == 0.0f) {  // all-zero row: xmin = -1, xmax = +1
        xmin = -1.0f;
        xmax = 1.0f;
      }
      const float scale = (xmax - xmin) / qmax;  // maxq = 2^bits - 1
      p.encode = scale;
      p.decode = scale;
      if (r.scheme == QuantScheme::kGptqSymmetric) {
        p.zero_point = (r.qmax + 1) / 2;  // (maxq + 1) / 2 = 8
      } else {
        // torch.round(-xmin / scale), no clamp. A scale that underflows to
        // 0 (a subnormal range) gives Inf, which the integer cast makes 0.
        const float z = -xmin / scale;
        p.zero_point = detail::ToInt(F32IsFinite(F32Bits(z)) ? RoundToIntegerF32(z, RoundingMode::kNearestEven) : z);
      }
      return p;
    }
    case QuantScheme::kAmaxOverQmax: {
      float scale = s.amax / qmax;
      if (scale == 0.0f) scale = 1.0f;  // all-zero group (or amax / qmax underflowing to 0)
      p.encode = scale;
      p.decode = scale;
      return p;
    }
  }
  return p;
}

}  // namespace lowbit::block
