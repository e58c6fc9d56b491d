// MX scale rules: how the E8M0 block scale X = 2^e is chosen from the block's
// amax. All of them read the FP32 exponent bits; none uses a float log2
// (docs/design.md "Known traps (measured)"). docs/formats-reference.md §5.3 lists who uses which.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::block {

enum class MxScaleRule : std::uint8_t {
  // [OCP-MX §6.3]: X = largest power of two <= amax, divided by 2^emax_elem.
  // e = exponent_field(amax) - 127 - emax. Clips elements whose scaled value
  // exceeds the element max ([MSX], [AO] ScaleCalculationMode.FLOOR).
  kFloor,
  // [AO] CEIL: e = exponent_field(amax) + (mantissa != 0) - 127 - emax.
  kCeil,
  // [AO] EVEN: round amax's significand half-up to the element's mantissa
  // width first (add 1 << (22 - mbits), clear the mantissa), then as kFloor.
  kEven,
  // NVIDIA RCEIL ([TE] MXFP8, [cuDNN], cuBLAS, [AO] RCEIL): the E8M0
  // round-up conversion of the FP32 product amax * fp32(1/max_elem).
  kRceil,
  // Nearest: the E8M0 round-to-nearest conversion of the same FP32 product
  // amax * fp32(1/max_elem), i.e. the power of two nearest to it with the
  // tie 1.5 * 2^k going up -- what PyTorch's and ml_dtypes' casts to
  // float8_e8m0fnu do (docs/formats-reference.md §4.7, §9 row 7). Unlike RCEIL it can pick
  // a scale one step smaller, so the largest element may clamp.
  kNearest,
  // [AO] 0.18 _to_mx_rceil's eager fallback: ceil(log2(amax / max_elem))
  // with log2 in FP32 (recipe::ScaleRule::kMxRceilEager).
  kRceilEager,
};

struct MxScaleOptions {
  MxScaleRule rule = MxScaleRule::kFloor;
  // kRceil only: the E8M0 conversion saturates (Inf or > 2^127 -> 0xFE, as
  // TE's float_to_e8m0 / cvt.rp.satfinite) or gives NaN 0xFF ([AO]
  // _f32_to_e8m0_rceil). The other rules give 0xFF for a non-finite amax.
  bool saturate = false;
  // [MSX] _shared_exponents: an all-zero block uses FP32_MIN_NORMAL as its
  // amax, so e = -126 - emax (MXINT8: -126, code 0x01) instead of clamping
  // to -127.
  bool zero_amax_as_min_normal = false;
};

// What a scale choice produced, kept for `lowbit explain`.
struct MxScale {
  std::uint8_t code = 0;     // E8M0 byte; 0xFF is NaN
  int exponent = 0;          // e = code - 127 (meaningless when code == 0xFF)
  float rceil_product = 0;   // kRceil, kNearest: amax * fp32(1/max_elem), else 0
};

inline constexpr std::uint8_t kE8m0NanCode = recipe::kE8m0NanCode;

// The one-recipe form of a scale rule alone (the element policy left at its
// default): what ChooseMxScale and MaxNormReciprocal below hand to
// recipe/steps.h.
LOWBIT_HD_CONSTEXPR recipe::Recipe ScaleRuleRecipe(const BlockSpec& spec, const MxScaleOptions& options) {
  recipe::Recipe r{};
  r.element = *spec.element;
  r.scale_format = *spec.scale;
  constexpr recipe::ScaleRule kRules[] = {recipe::ScaleRule::kMxFloor, recipe::ScaleRule::kMxCeil,
                                          recipe::ScaleRule::kMxEven, recipe::ScaleRule::kMxRceil,
                                          recipe::ScaleRule::kMxNearest};
  r.scale_rule = kRules[static_cast<int>(options.rule)];
  r.element_emax = spec.element_emax;
  r.element_implied_exponent = spec.element_implied_exponent;
  r.qmin = -static_cast<int>(spec.element_int_max);
  r.qmax = static_cast<int>(spec.element_int_max);
  r.scale_saturate = options.saturate;
  r.zero_amax_as_min_normal = options.zero_amax_as_min_normal;
  return r;
}

// fp32(1 / max finite element value) (recipe::MaxNormReciprocal).
LOWBIT_HD_CONSTEXPR float MaxNormReciprocal(const BlockSpec& spec) {
  return recipe::MaxNormReciprocal(ScaleRuleRecipe(spec, MxScaleOptions{}));
}

LOWBIT_HD_CONSTEXPR MxScale ChooseMxScale(const BlockSpec& spec, float amax, const MxScaleOptions& options) {
  const recipe::BlockScale s = recipe::detail::ChooseMxScale(ScaleRuleRecipe(spec, options), amax);
  return MxScale{s.code, s.exponent, s.rule_value};
}

}  // namespace lowbit::block
