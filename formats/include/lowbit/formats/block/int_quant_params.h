// Scale and zero point of one group from its statistics, per scaled recipe
// (recipe/recipe.h), as the FP32 operations of each source in its order
// (docs/formats-reference.md §7, §8.2), kept as the three numbers the group
// kernels store (QuantParams); the steps are recipe/steps.h's. torch
// arithmetic on FP32 tensors is FP32 with round-to-nearest-even per
// operation; a Python float operand is an FP32 scalar there (127.5, 7.5, 15
// and 255 are exact in FP32).
#pragma once

#include <cstdint>

#include "lowbit/formats/block/fp8_scaled_scale.h"
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

LOWBIT_HD_CONSTEXPR QuantParams ToQuantParams(const recipe::BlockScale& s) { return {s.factor, s.decode, s.zero_point}; }
LOWBIT_HD_CONSTEXPR recipe::BlockScale ToBlockScale(const QuantParams& p) {
  recipe::BlockScale s;
  s.factor = p.encode;
  s.decode = p.decode;
  s.zero_point = p.zero_point;
  return s;
}

using recipe::StatsOfRange;

LOWBIT_HD_CONSTEXPR QuantParams QuantParamsFromStats(const recipe::Recipe& r, const GroupStats& s) {
  return ToQuantParams(recipe::ChooseScale(r, s));
}

}  // namespace lowbit::block
