// Scale and zero point of one group from its statistics, per recipe, as the
// FP32 operations of each source in its order (docs/formats-reference.md §7, §8.2). torch
// arithmetic on FP32 tensors is FP32 with round-to-nearest-even per
// operation; a Python float operand is an FP32 scalar there (127.5, 7.5, 15
// and 255 are exact in FP32).
#pragma once

#include <cstdint>

#include "lowbit/formats/block/fp8_scaled_scale.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::block {

// What the scale rules read from a group (recipe::GroupStats).
using GroupStats = recipe::GroupStats;

struct QuantParams {
  float encode = 1;            // TE: the multiplier scale; AO: fp32(1 / scale); GPTQ, common: the divisor scale
  float decode = 1;            // the stored scale that dequantizes: TE scale_inv, else scale
  std::int32_t zero_point = 0;  // integer zero point (0 for symmetric signed schemes)
};

using recipe::kRoundingGrid16;
using recipe::RoundToIntegerF32;

namespace detail {
using recipe::TorchMax;
using recipe::TorchMin;
LOWBIT_HD_CONSTEXPR std::int32_t ToInt(float v) { return recipe::TorchToInt(v); }
}  // namespace detail

// The legacy IntQuantRecipe as the one recipe shape (recipe/recipe.h). Every
// arithmetic step is recipe/steps.h's; these functions keep the older call
// shape for callers not yet moved to it.
LOWBIT_HD_CONSTEXPR recipe::Recipe ToRecipe(const IntQuantRecipe& q) {
  recipe::Recipe r{};
  r.name = q.element->name;
  r.profile = q.name;
  r.source = q.source;
  r.element = *q.element;
  r.layout = {recipe::Geometry::kPerTensor, 0, 0};
  constexpr FormatSpec kScale = kFp32;  // a local copy device code can read
  r.scale_format = kScale;
  r.eps = q.eps;
  r.pow2_scale = q.pow2_scale;
  r.scalar_divisor_as_reciprocal = q.scalar_divisor_as_reciprocal;
  r.amax_nan = q.amax_nan;
  r.qmin = q.qmin;
  r.qmax = q.qmax;
  r.packing = q.element->total_bits == 4 ? recipe::Packing::kNibblesLowFirst : recipe::Packing::kOnePerByte;
  switch (q.scheme) {
    case QuantScheme::kTeFp8: r.scale_rule = recipe::ScaleRule::kTeFp8; break;
    case QuantScheme::kAoSymmetric: r.scale_rule = recipe::ScaleRule::kAoSymmetric; break;
    case QuantScheme::kAoAsymmetric: r.scale_rule = recipe::ScaleRule::kAoAsymmetric; break;
    case QuantScheme::kGptqSymmetric: r.scale_rule = recipe::ScaleRule::kGptqSymmetric; break;
    case QuantScheme::kGptqAsymmetric: r.scale_rule = recipe::ScaleRule::kGptqAsymmetric; break;
    case QuantScheme::kAmaxOverQmax: r.scale_rule = recipe::ScaleRule::kAmaxOverQmax; break;
  }
  const bool te = q.scheme == QuantScheme::kTeFp8;
  r.element_encode = te ? recipe::SatfiniteElements() : recipe::IntegerElements(q.rounding);
  const bool multiply = te || q.scheme == QuantScheme::kAoSymmetric || q.scheme == QuantScheme::kAoAsymmetric;
  r.element_step = multiply ? recipe::ElementStep::kMultiply : recipe::ElementStep::kDivide;
  const bool zero_point = q.scheme == QuantScheme::kAoAsymmetric || q.scheme == QuantScheme::kGptqSymmetric ||
                          q.scheme == QuantScheme::kGptqAsymmetric;
  r.zero_point = zero_point ? recipe::ZeroPoint::kInteger : recipe::ZeroPoint::kNone;
  return r;
}

LOWBIT_HD_CONSTEXPR QuantParams ToQuantParams(const recipe::BlockScale& s) { return {s.factor, s.decode, s.zero_point}; }
LOWBIT_HD_CONSTEXPR recipe::BlockScale ToBlockScale(const QuantParams& p) {
  recipe::BlockScale s;
  s.factor = p.encode;
  s.decode = p.decode;
  s.zero_point = p.zero_point;
  return s;
}

using recipe::StatsOfRange;

LOWBIT_HD_CONSTEXPR QuantParams QuantParamsFromStats(const IntQuantRecipe& r, const GroupStats& s) {
  return ToQuantParams(recipe::ChooseScale(ToRecipe(r), s));
}

}  // namespace lowbit::block
