// MX quantization from the spec text (OCP MX v1.0 §6.3, quoted in
// docs/formats-reference.md §5.1) and from each implementation's description
// (docs/formats-reference.md §5.2, §5.3), in exact arithmetic:
//   X  = 2^e, e from the block's amax by the recipe's rule, clamped to the
//        E8M0 range -127..127 (§5.4.1);
//   Pi = Vi / X rounded to FP32 (exact unless it leaves the FP32 range), then
//        to the element format by the element oracle (OracleEncode).
#include "lowbit/reference/block/mx_oracle.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/reference/block/fp32_arith.h"
#include "lowbit/reference/oracle_encode.h"

namespace lowbit::reference::block {
namespace {

using lowbit::block::AmaxNan;
using lowbit::block::BlockSpec;
using lowbit::block::MxRecipe;
using lowbit::block::MxScaleRule;

constexpr std::uint8_t kNanScale = 0xFF;

int FloorLog2(const Rational& q) {
  int k = 0;
  while (PowerOfTwo(k) > q) --k;
  while (PowerOfTwo(k + 1) <= q) ++k;
  return k;
}

int CeilLog2(const Rational& q) {
  const int k = FloorLog2(q);
  return PowerOfTwo(k) == q ? k : k + 1;
}

// The largest finite element value: the top of the element's value list
// (MXINT8: 127 * 2^-6, docs/formats-reference.md §5.2).
Rational ElementMax(const BlockSpec& spec) {
  if (spec.element->kind == FormatKind::kInteger) return Rational(127) * PowerOfTwo(-6);
  Rational best = 0;
  for (std::uint64_t c = 0; c <= spec.element->CodeMask(); ++c) {
    const Exact v = ExactValue(*spec.element, c);
    if (v.value_class == ExactClass::kFinite && v.magnitude > best) best = v.magnitude;
  }
  return best;
}

// emax_elem: the exponent of the largest power of two not above the max
// (OCP MX §6.3 "the largest power-of-two representable in the element data
// type"); MXINT8 0.
int ElementEmax(const BlockSpec& spec) {
  if (spec.element->kind == FormatKind::kInteger) return 0;
  return FloorLog2(ElementMax(spec));
}

// amax = max |Vi|. kPropagate: a NaN anywhere gives NaN (torch.amax);
// kIgnore: NaNs are skipped (fmaxf from +0).
F32 Amax(const std::vector<float>& x, AmaxNan rule) {
  F32 best = F32FromFloat(0.0f);
  for (float v : x) {
    F32 a = F32FromFloat(v);
    a.negative = false;
    if (F32IsNan(a)) {
      if (rule == AmaxNan::kPropagate) return a;
      continue;
    }
    if (F32Less(best, a)) best = a;
  }
  return best;
}

// The E8M0 code for 2^e after the recipe's rule, or kNanScale.
std::uint8_t ScaleCode(const BlockSpec& spec, const MxRecipe& recipe, const F32& amax) {
  const int emax = ElementEmax(spec);
  std::optional<int> e;  // nullopt: 2^-infinity (zero amax), clamps to -127
  switch (recipe.scale.rule) {
    case MxScaleRule::kRceil: {
      // p = fp32(amax * fp32(1/max)); X = the smallest power of two >= p,
      // clipped to [2^-127, 2^127]; above 2^127 (or Inf) saturates or is NaN.
      if (F32IsNan(amax)) return kNanScale;
      F32 one_over_max;
      one_over_max.value_class = ExactClass::kFinite;
      one_over_max.magnitude = Rational(1) / ElementMax(spec);
      const F32 p = F32Mul(amax, RoundToF32(one_over_max));
      if (p.value_class == ExactClass::kInf) return recipe.scale.saturate ? 0xFE : kNanScale;
      if (p.value_class == ExactClass::kZero) return 0x00;
      const int k = CeilLog2(p.magnitude);
      if (k > 127) return recipe.scale.saturate ? 0xFE : kNanScale;
      return static_cast<std::uint8_t>((k < -127 ? -127 : k) + 127);
    }
    case MxScaleRule::kNearest: {
      // p as for RCEIL; X = the power of two nearest to p, the midpoint
      // 1.5 * 2^k going up; below 2^-127 clipped to 2^-127; 2^128 or more
      // (or Inf) is the NaN scale unless saturating.
      if (F32IsNan(amax)) return kNanScale;
      F32 one_over_max;
      one_over_max.value_class = ExactClass::kFinite;
      one_over_max.magnitude = Rational(1) / ElementMax(spec);
      const F32 p = F32Mul(amax, RoundToF32(one_over_max));
      if (p.value_class == ExactClass::kInf) return recipe.scale.saturate ? 0xFE : kNanScale;
      if (p.value_class == ExactClass::kZero) return 0x00;
      int k = FloorLog2(p.magnitude);
      if (p.magnitude >= Rational(3, 2) * PowerOfTwo(k)) ++k;
      if (k > 127) return recipe.scale.saturate ? 0xFE : kNanScale;
      return static_cast<std::uint8_t>((k < -127 ? -127 : k) + 127);
    }
    case MxScaleRule::kFloor:
    case MxScaleRule::kCeil:
    case MxScaleRule::kEven: {
      if (amax.value_class == ExactClass::kNan || amax.value_class == ExactClass::kInf) return kNanScale;
      if (amax.value_class == ExactClass::kZero) {
        // [MSX]: an all-zero block takes FP32_MIN_NORMAL (2^-126) as amax.
        if (recipe.scale.zero_amax_as_min_normal) e = -126 - emax;
        break;
      }
      Rational a = amax.magnitude;
      if (recipe.scale.rule == MxScaleRule::kEven) {
        // [AO] EVEN: amax rounded half-up to the element's mantissa width;
        // a result at or beyond 2^128 is not finite -> NaN scale.
        const int mbits = spec.element->mantissa_bits;
        const int k = FloorLog2(a);
        const Rational unit = PowerOfTwo(k - mbits);
        const Rational steps = a / unit + Rational(1, 2);
        a = Rational(boost::multiprecision::numerator(steps) / boost::multiprecision::denominator(steps)) * unit;
        if (a >= PowerOfTwo(128)) return kNanScale;
      }
      const int k = recipe.scale.rule == MxScaleRule::kCeil ? CeilLog2(a) : FloorLog2(a);
      e = k - emax;
      break;
    }
  }
  int value = e.has_value() ? *e : -127;
  if (value < -127) value = -127;
  if (value > 127) return kNanScale;
  return static_cast<std::uint8_t>(value + 127);
}

}  // namespace

OracleBlock OracleQuantizeMxBlock(const BlockSpec& spec, const MxRecipe& recipe,
                                  const std::vector<float>& x) {
  OracleBlock out;
  out.scale = ScaleCode(spec, recipe, Amax(x, recipe.amax_nan));
  F32 nan;
  nan.value_class = ExactClass::kNan;
  nan.nan_payload = std::uint64_t{1} << 63;
  for (float v : x) {
    // Vi / X: dividing by 2^e and multiplying by 2^-e are the same real
    // number, so both orders round to the same FP32 value.
    F32 y = nan;
    if (out.scale != kNanScale) {
      F32 x_scale;
      x_scale.value_class = ExactClass::kFinite;
      x_scale.magnitude = PowerOfTwo(static_cast<int>(out.scale) - 127);
      y = F32Div(F32FromFloat(v), x_scale);
    }
    std::uint64_t code;
    if (spec.element->kind == FormatKind::kInteger) {
      // MXINT8: the integer grid is y * 2^6; round per the recipe, then
      // clamp to +-127 (docs/formats-reference.md §5.2).
      F32 grid_unit;
      grid_unit.value_class = ExactClass::kFinite;
      grid_unit.magnitude = PowerOfTwo(6);
      const EncodeResult r = OracleEncode(*spec.element, F32Mul(y, grid_unit), recipe.element);
      long long value = static_cast<long long>(r.code & 0xFF);
      if (value > 127) value -= 256;
      if (value < -127) value = -127;
      code = static_cast<std::uint64_t>(value) & 0xFF;
    } else {
      code = OracleEncode(*spec.element, y, recipe.element).code;
    }
    out.codes.push_back(static_cast<std::uint8_t>(code));
  }
  return out;
}

std::vector<std::uint32_t> OracleDequantizeMxBlock(const BlockSpec& spec, std::uint8_t scale,
                                                   const std::vector<std::uint8_t>& codes) {
  const F32 x_scale = ExactValue(kE8m0, scale);  // 0xFF is NaN (OCP MX Table 7)
  std::vector<std::uint32_t> out;
  for (std::uint8_t c : codes) {
    Exact element = ExactValue(*spec.element, c);
    if (spec.element->kind == FormatKind::kInteger && element.value_class == ExactClass::kFinite) {
      element.magnitude *= PowerOfTwo(-6);
    }
    out.push_back(F32ToBits(F32Mul(element, x_scale)));
  }
  return out;
}

}  // namespace lowbit::reference::block
