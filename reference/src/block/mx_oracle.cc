// MX block scales from the spec text (OCP MX v1.0 §6.3, quoted in
// docs/formats-reference.md §5.1) and from each implementation's description
// (docs/formats-reference.md §5.2, §5.3), in exact arithmetic:
//   X = 2^e, e from the block's amax by the recipe's rule, clamped to the
//       range of the scale format (E8M0: 2^-127 .. 2^127, OCP MX §5.4.1);
// the element step (x / X, or x * fp32(2^-e)) is recipe_oracle.cc's.
//
// The bounds of X, its NaN code and the element's largest value are read off
// the formats' value lists (ExactValue); the recipe's element_emax is checked
// against them, not trusted.
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "lowbit/formats/format_list.h"
#include "lowbit/reference/value_grid.h"
#include "recipe_oracle_internal.h"

namespace lowbit::reference::block::internal {
namespace {

using recipe::Recipe;
using recipe::ScaleRule;

int CeilLog2(const Rational& q) {
  const int k = FloorLog2(q);
  return PowerOfTwo(k) == q ? k : k + 1;
}

// A scale format whose values are consecutive powers of two (E8M0: 2^-127
// .. 2^127 and a NaN, OCP MX §5.4.1 Table 7), as its value list says.
struct PowerOfTwoScales {
  const ValueGrid* grid = nullptr;
  int min_exponent = 0;
  int max_exponent = 0;
  std::uint8_t nan_code = 0;
  bool has_nan = false;

  std::uint8_t CodeOf(int k) const {
    return static_cast<std::uint8_t>(grid->points[static_cast<std::size_t>(k - min_exponent)].code);
  }
  std::uint8_t MaxCode() const { return CodeOf(max_exponent); }
};

PowerOfTwoScales ScalesOf(const FormatSpec& format) {
  PowerOfTwoScales s;
  s.grid = &GridFor(format);
  const auto& points = s.grid->points;
  if (points.empty() || points.front().magnitude == 0) {
    throw std::invalid_argument(std::string("MX scale format ") + format.name + " has a zero: not an E8M0-like scale");
  }
  s.min_exponent = FloorLog2(points.front().magnitude);
  s.max_exponent = s.min_exponent + static_cast<int>(points.size()) - 1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].magnitude != PowerOfTwo(s.min_exponent + static_cast<int>(i))) {
      throw std::invalid_argument(std::string("MX scale format ") + format.name +
                                  " is not a list of consecutive powers of two");
    }
  }
  for (std::uint64_t code = 0; code <= format.CodeMask(); ++code) {
    if (ExactValue(format, code).value_class == ExactClass::kNan) {
      s.nan_code = static_cast<std::uint8_t>(code);
      s.has_nan = true;
      break;
    }
  }
  return s;
}

// The NaN scale, or (for a format without NaN, none in the catalog) the
// largest: what a scale beyond the range becomes.
std::uint8_t NanOrMax(const PowerOfTwoScales& s) { return s.has_nan ? s.nan_code : s.MaxCode(); }

// The code of 2^k clipped below to the smallest scale (OCP MX §6.3 / NVIDIA:
// "results below 2^-127 clip"); above the largest: the NaN scale, or the
// largest where the recipe saturates.
std::uint8_t ClipExponent(const PowerOfTwoScales& s, int k, bool saturate) {
  if (k > s.max_exponent) return saturate ? s.MaxCode() : NanOrMax(s);
  return s.CodeOf(k < s.min_exponent ? s.min_exponent : k);
}

// emax_elem: the exponent of the largest power of two not above the
// element's largest value (OCP MX §6.3 "the largest power-of-two
// representable in the element data type"; MXINT8: 127/64 -> 0).
int ElementEmax(const Recipe& r) {
  const int emax = FloorLog2(ElementMax(r));
  if (emax != r.element_emax) {
    throw std::logic_error(std::string("recipe ") + r.name + ":" + r.profile + " says element_emax " +
                           std::to_string(r.element_emax) + ", its element's values say " + std::to_string(emax));
  }
  return emax;
}

// The E8M0 code after the recipe's rule.
std::uint8_t ScaleCode(const Recipe& r, const PowerOfTwoScales& scales, const F32& amax) {
  switch (r.scale_rule) {
    case ScaleRule::kMxRceil:
    case ScaleRule::kMxNearest: {
      // p = fp32(amax * fp32(1/max_elem)) (TE float_to_e8m0 input, torchao
      // _to_mx_rceil). RCEIL: the smallest power of two >= p; nearest: the
      // power of two nearest to p, the midpoint 1.5 * 2^k going up (the E8M0
      // round-to-nearest of torch .to(float8_e8m0fnu), §4.7). Below the
      // smallest scale: clipped to it; above the largest (or Inf): the NaN
      // scale, or the largest where the recipe saturates (TE).
      if (F32IsNan(amax)) return NanOrMax(scales);
      const F32 p = F32Mul(amax, RoundToF32(F32Constant(Rational(1) / ElementMax(r))));
      if (F32IsInf(p)) return r.scale_saturate ? scales.MaxCode() : NanOrMax(scales);
      if (F32IsZero(p)) return scales.CodeOf(scales.min_exponent);
      int k;
      if (r.scale_rule == ScaleRule::kMxRceil) {
        k = CeilLog2(p.magnitude);
      } else {
        k = FloorLog2(p.magnitude);
        if (p.magnitude >= Rational(3, 2) * PowerOfTwo(k)) ++k;
      }
      return ClipExponent(scales, k, r.scale_saturate);
    }
    case ScaleRule::kMxRceilEager: {
      // torchao 0.18 _to_mx_rceil eager: descale = amax / max_pos (FP32);
      // NaN -> 0xFF; Inf -> 0xFE; else clamp(ceil(log2(descale)), -127, 127)
      // with log2 rounded to FP32: here the long double log2l of the exact
      // descale, rounded once to float, then its ceiling (independent of the
      // model's threshold test).
      if (F32IsNan(amax)) return NanOrMax(scales);
      const F32 d = F32Div(amax, F32Constant(ElementMax(r)));
      if (F32IsInf(d)) return scales.CodeOf(scales.max_exponent);
      if (F32IsZero(d)) return scales.CodeOf(scales.min_exponent);
      const float log2_fp32 = static_cast<float>(std::log2l(static_cast<long double>(std::bit_cast<float>(F32ToBits(d)))));
      int k = static_cast<int>(std::ceil(log2_fp32));
      k = k < scales.min_exponent ? scales.min_exponent : (k > scales.max_exponent ? scales.max_exponent : k);
      return scales.CodeOf(k);
    }
    case ScaleRule::kMxFloor:
    case ScaleRule::kMxCeil:
    case ScaleRule::kMxEven: {
      // [OCP-MX §6.3] X = 2^(floor(log2(amax)) - emax_elem); torchao CEIL
      // takes the ceiling; a NaN or Inf amax gives the NaN scale ([MSX], [AO]).
      const int emax = ElementEmax(r);
      if (F32IsNan(amax) || F32IsInf(amax)) return NanOrMax(scales);
      if (F32IsZero(amax)) {
        // [MSX]: an all-zero block takes FP32_MIN_NORMAL (2^-126, IEEE 754
        // binary32 emin) as its amax; everyone else has 2^-infinity, which
        // clips to the smallest scale.
        if (r.zero_amax_as_min_normal) return ClipExponent(scales, kFp32.MinNormalExponent() - emax, false);
        return scales.CodeOf(scales.min_exponent);
      }
      Rational a = amax.magnitude;
      if (r.scale_rule == ScaleRule::kMxEven) {
        // [AO] EVEN: amax rounded half-up to the element's mantissa width
        // first; a result at or beyond 2^128 (binary32 overflow) is not
        // finite -> the NaN scale.
        const int k = FloorLog2(a);
        const Rational unit = PowerOfTwo(k - r.element.mantissa_bits);
        const Rational steps = a / unit + Rational(1, 2);
        a = Rational(boost::multiprecision::numerator(steps) / boost::multiprecision::denominator(steps)) * unit;
        if (a >= PowerOfTwo(kFp32.MaxFiniteExponentField() - kFp32.bias + 1)) return NanOrMax(scales);
      }
      const int k = r.scale_rule == ScaleRule::kMxCeil ? CeilLog2(a) : FloorLog2(a);
      // Beyond 2^127: [MSX] gives NaN (never saturates).
      return ClipExponent(scales, k - emax, false);
    }
    default:
      throw std::invalid_argument(std::string("recipe ") + r.name + ":" + r.profile + " has no MX scale rule");
  }
}

}  // namespace

OracleScale MxStoredScale(const Recipe& r, std::uint8_t code) {
  OracleScale s;
  s.code = code;
  const F32 x = ExactValue(r.scale_format, code);  // X, or NaN
  s.decode_bits = F32ToBits(x);
  // Recipe::element_step: x / X ([OCP-MX], [MSX]) or x * fp32(2^-e) (TE
  // exp2f_rcp, torchao _e8m0_scale_to_reciprocal_fp32), 2^-e being exact in
  // FP32 (2^-127 a subnormal); a NaN scale makes both NaN.
  s.factor_bits = r.element_step == recipe::ElementStep::kDivide
                      ? s.decode_bits
                      : F32ToBits(F32IsNan(x) ? x : RoundToF32(F32Constant(Rational(1) / x.magnitude)));
  // torchao _to_mx_rceil: torch.where(exponent == 0, 1.0, ...).
  if (r.scale_rule == ScaleRule::kMxRceilEager && code == 0) s.factor_bits = F32ToBits(F32Constant(1));
  return s;
}

OracleScale MxScale(const Recipe& r, const F32& amax) {
  return MxStoredScale(r, ScaleCode(r, ScalesOf(r.scale_format), amax));
}

}  // namespace lowbit::reference::block::internal
