// Scales of the scaled recipes per docs/formats-reference.md §7 ([TE]
// compute_scale_from_amax) and §8.2 ([AO] _choose_qparams_affine SYMMETRIC /
// ASYMMETRIC, [GPTQ] Quantizer.find_params, the common amax / qmax kernel):
// one FP32 rounding per operation the source performs, in the source's order;
// integer rounding on exact rationals. The FP8 maximum is read off the
// element's values, never retyped.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lowbit/formats/format_list.h"
#include "lowbit/reference/oracle_encode.h"
#include "recipe_oracle_internal.h"

namespace lowbit::reference::block::internal {
namespace {

using recipe::Recipe;
using recipe::ScaleRule;

// TE compute_scale_from_amax, step by step (docs/formats-reference.md §7):
// amax < eps -> eps; amax Inf, 0 or NaN -> 1; max_fp8 / amax; Inf -> FLT_MAX;
// force_pow_2_scales keeps sign and exponent bits.
F32 TeScale(const Recipe& r, F32 amax) {
  const F32 eps = F32FromFloat(r.eps);
  if (!F32IsNan(amax) && F32Less(amax, eps)) amax = eps;
  if (F32IsNan(amax) || F32IsInf(amax) || F32IsZero(amax)) return F32Constant(1);
  F32 scale = F32Div(F32Constant(LargestFinite(r.element)), amax);
  if (F32IsInf(scale)) scale = FltMax();  // value_for_inf
  if (r.pow2_scale) {
    // Keeping the sign and exponent bits rounds a normal positive value down
    // to a power of two; a subnormal (never reached: max_fp8 / FLT_MAX is
    // normal) would become 0.
    if (scale.magnitude < PowerOfTwo(kFp32.MinNormalExponent())) return F32Constant(0);
    scale = F32Constant(PowerOfTwo(FloorLog2(scale.magnitude)));
  }
  return scale;
}

// tensor / Python float: an FP32 division on the CPU; on CUDA a multiply by
// the FP32 reciprocal of the scalar (ATen div_true_kernel_cuda).
F32 DivideByScalar(const Recipe& r, const F32& a, const Rational& d) {
  if (!r.scalar_divisor_as_reciprocal) return F32Div(a, F32Constant(d));
  return F32Mul(a, RoundToF32(F32Constant(Rational(1) / d)));
}

bool BothFinite(const F32& a, const F32& b) {
  return !F32IsNan(a) && !F32IsInf(a) && !F32IsNan(b) && !F32IsInf(b);
}

}  // namespace

// torch `.half()` of an FP32 value, read back: the FP16 element oracle by
// round to nearest even, overflow to Inf (IEEE format default), a NaN quiet
// (c10 fp16_ieee_from_fp32_value gives 0x7E00 with the sign); then the exact
// FP16 value, an FP32 value too.
F32 HalfOf(const F32& v) {
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  o.overflow = Overflow::kFormatDefault;
  o.nan_sign = NanSign::kKeep;
  o.nan_payload = NanPayload::kQuietOnly;
  return RoundToF32(ExactValue(kFp16, OracleEncode(kFp16, v, o).code));
}

// One FP16 operation (AutoAWQ's layer is FP16): the exact result of finite
// operands rounded once to FP16; NaN, infinite and zero results (and a
// division by zero) as the FP32 operation gives them, then to FP16.
F32 HalfAdd(const F32& a, const F32& b) {
  if (!BothFinite(a, b)) return HalfOf(F32Add(a, b));
  const Rational v = a.Signed() + b.Signed();
  return v == 0 ? HalfOf(F32Add(a, b)) : HalfOf(F32Constant(v));
}
F32 HalfSub(const F32& a, const F32& b) { return HalfAdd(a, F32Negate(b)); }
F32 HalfMul(const F32& a, const F32& b) {
  if (!BothFinite(a, b)) return HalfOf(F32Mul(a, b));
  const Rational v = a.Signed() * b.Signed();
  return v == 0 ? HalfOf(F32Mul(a, b)) : HalfOf(F32Constant(v));
}
F32 HalfDiv(const F32& a, const F32& b) {
  if (!BothFinite(a, b) || F32IsZero(b)) return HalfOf(F32Div(a, b));
  const Rational v = a.Signed() / b.Signed();
  return v == 0 ? HalfOf(F32Div(a, b)) : HalfOf(F32Constant(v));
}

namespace {

// GPTQ / AWQ checkpoints store the scale as FP16 (Recipe::scale_format).
F32 StoredScaleOf(const Recipe& r, const F32& scale) {
  return r.element_quirk == recipe::ElementQuirk::kRepackWithFp16Scale ? HalfOf(scale) : scale;
}

BigInt Truncate(const Rational& q) {
  return boost::multiprecision::numerator(q) / boost::multiprecision::denominator(q);
}

}  // namespace

Integer RoundToInteger(const F32& v, RoundingMode mode) {
  Integer out;
  if (F32IsNan(v)) {
    out.value_class = ExactClass::kNan;
    return out;
  }
  if (F32IsInf(v)) {
    out.value_class = ExactClass::kInf;
    out.negative = v.negative;
    return out;
  }
  const Rational m = v.magnitude;  // 0 for a zero
  BigInt t = Truncate(m);          // floor of |v|
  const Rational frac = m - Rational(t);
  const Rational half(1, 2);
  if (frac > half || (frac == half && (mode == RoundingMode::kNearestAway || (t & 1) != 0))) t += 1;
  out.value = v.negative ? BigInt(-t) : t;
  return out;
}

OracleScale ScaledScale(const Recipe& r, const GroupStats& s) {
  const F32 zero = F32Constant(0);
  const F32 eps = F32FromFloat(r.eps);
  auto floor_at_eps = [&](const F32& scale) {  // torch.clamp(min=eps): NaN passes
    return !F32IsNan(scale) && F32Less(scale, eps) ? eps : scale;
  };
  F32 factor = F32Constant(1);
  F32 decode = F32Constant(1);
  std::int32_t zero_point = 0;
  switch (r.scale_rule) {
    case ScaleRule::kTeFp8:
      // The quantize factor is the scale; the stored scale_inv is
      // reciprocal() (__frcp_rn).
      factor = TeScale(r, s.amax);
      decode = F32Div(F32Constant(1), factor);
      break;
    case ScaleRule::kAoSymmetric: {
      const F32 min_neg = TorchMin(s.min, zero);
      const F32 max_pos = TorchMax(F32Negate(min_neg), TorchMax(s.max, zero));
      decode = floor_at_eps(DivideByScalar(r, max_pos, Rational(r.qmax - r.qmin, 2)));
      // input * (1.0 / scale): __rtruediv__ is reciprocal() * 1.0.
      factor = F32Div(F32Constant(1), decode);
      // int((quant_max + quant_min + 1) / 2), Python true division then int().
      zero_point = static_cast<std::int32_t>(Truncate(Rational(r.qmax + r.qmin + 1, 2)));
      break;
    }
    case ScaleRule::kAoAsymmetric: {
      const F32 min_neg = TorchMin(s.min, zero);
      const F32 max_pos = TorchMax(s.max, zero);
      decode = floor_at_eps(DivideByScalar(r, F32Sub(max_pos, min_neg), Rational(r.qmax - r.qmin)));
      factor = F32Div(F32Constant(1), decode);
      // quant_min - torch.round(min_val_neg / scale), clamp(quant_min,
      // quant_max), .to(int32).
      const Integer rounded = RoundToInteger(F32Div(min_neg, decode), RoundingMode::kNearestEven);
      if (rounded.value_class == ExactClass::kNan) {
        zero_point = 0;  // NaN survives the clamp; the integer cast gives 0
      } else if (rounded.value_class == ExactClass::kInf) {
        zero_point = rounded.negative ? r.qmax : r.qmin;  // qmin - (-+Inf), clamped
      } else {
        const BigInt zp = BigInt(r.qmin) - rounded.value;
        zero_point = static_cast<std::int32_t>(zp < r.qmin ? BigInt(r.qmin) : (zp > r.qmax ? BigInt(r.qmax) : zp));
      }
      break;
    }
    case ScaleRule::kGptqSymmetric:
    case ScaleRule::kGptqAsymmetric: {
      // xmin = minimum(x.min(1), 0), xmax = maximum(x.max(1), 0); sym:
      // xmax = maximum(|xmin|, xmax) and xmin = -xmax where xmin < 0; an
      // all-zero row gets [-1, +1]; scale = (xmax - xmin) / maxq.
      F32 xmin = TorchMin(s.min, zero);
      F32 xmax = TorchMax(s.max, zero);
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        xmax = TorchMax(F32Abs(xmin), xmax);
        if (!F32IsNan(xmin) && F32Less(xmin, zero)) xmin = F32Negate(xmax);
      }
      if (F32IsZero(xmin) && F32IsZero(xmax)) {
        xmin = F32Constant(-1);
        xmax = F32Constant(1);
      }
      factor = F32Div(F32Sub(xmax, xmin), F32Constant(r.qmax));
      decode = StoredScaleOf(r, factor);
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        zero_point = (r.qmax + 1) / 2;  // torch.full_like(scale, (maxq + 1) / 2)
      } else {
        // torch.round(-xmin / scale), no clamp; an infinite or NaN zero casts
        // to 0 (torch CPU, docs/formats-reference.md §8.1).
        const Integer z = RoundToInteger(F32Div(F32Negate(xmin), factor), RoundingMode::kNearestEven);
        zero_point = z.value_class == ExactClass::kFinite ? static_cast<std::int32_t>(z.value) : 0;
      }
      break;
    }
    case ScaleRule::kAwqAsymmetric: {
      // AutoAWQ pseudo_quantize_tensor(zero_point=True) on the layer cast to
      // FP16, each operation an FP16 one: scales = (amax - amin).clamp(min=
      // Half(1e-5)) / max_int; zeros = (-round(amin / scales)).clamp_(0,
      // max_int) (the quotient may overflow FP16); .to(int32) makes a NaN
      // zero 0.
      const F32 lo = HalfOf(s.min);
      const F32 hi = HalfOf(s.max);
      const F32 eps16 = HalfOf(eps);
      F32 range = HalfSub(hi, lo);
      if (!F32IsNan(range) && F32Less(range, eps16)) range = eps16;
      factor = HalfDiv(range, F32Constant(r.qmax));
      decode = factor;
      const Integer m = RoundToInteger(HalfDiv(lo, factor), RoundingMode::kNearestEven);
      if (m.value_class == ExactClass::kNan) {
        zero_point = 0;
      } else if (m.value_class == ExactClass::kInf) {
        zero_point = m.negative ? r.qmax : 0;  // -(-Inf) clamps to max_int, -(+Inf) to 0
      } else {
        const BigInt z = -m.value;
        zero_point = static_cast<std::int32_t>(z < 0 ? BigInt(0) : (z > r.qmax ? BigInt(r.qmax) : z));
      }
      break;
    }
    case ScaleRule::kVllmFp8PerTensor:
    case ScaleRule::kVllmFp8PerToken: {
      // vLLM: scale = amax / 448 (amax by fmaxf, never NaN); per token
      // fmaxf(scale, 1 / (448 * 512)) and x / scale; per tensor no floor and
      // x * (1 / scale) (1 / 0 = +Inf for an all-zero tensor).
      const Rational max_fp8 = internal::ElementMax(r);
      decode = F32Div(s.amax, F32Constant(max_fp8));
      if (r.scale_rule == ScaleRule::kVllmFp8PerToken) {
        const F32 min_scale = F32Div(F32Constant(1), F32Constant(max_fp8 * 512));
        decode = F32Max(decode, min_scale);
        factor = decode;
      } else {
        factor = F32Div(F32Constant(1), decode);
      }
      break;
    }
    case ScaleRule::kVllmFp8KvCache:
      // vLLM's default k_scale / v_scale: 1.0; the element step divides.
      factor = F32Constant(1);
      decode = F32Constant(1);
      break;
    case ScaleRule::kVllmFp8KvCalculated:
      // vLLM calc_kv_scales on CUDA: torch.abs(x).max() (NaN wins) divided
      // by the CPU range tensor, i.e. times the FP32 reciprocal of the range;
      // no floor. The cache step divides by this scale.
      decode = DivideByScalar(r, s.amax, Rational(r.amax_divisor));
      factor = decode;
      break;
    case ScaleRule::kAmaxOverQmaxFloored: {
      // amax.clamp(min=eps) / qmax: torch.clamp keeps a NaN.
      decode = F32Div(floor_at_eps(s.amax), F32Constant(r.qmax));
      factor = decode;
      break;
    }
    case ScaleRule::kAmaxOverQmax: {
      // scale = amax / qmax; an all-zero group (or a quotient that underflows
      // to 0) gets 1.
      F32 scale = F32Div(s.amax, F32Constant(r.qmax));
      if (F32IsZero(scale)) scale = F32Constant(1);
      factor = scale;
      decode = scale;
      break;
    }
    default:
      throw std::invalid_argument(std::string("recipe ") + r.name + ":" + r.profile + " has no scaled scale rule");
  }
  OracleScale out;
  out.factor_bits = F32ToBits(factor);
  out.decode_bits = F32ToBits(decode);
  out.zero_point = zero_point;
  return out;
}

}  // namespace lowbit::reference::block::internal
