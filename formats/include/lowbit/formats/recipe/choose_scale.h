// Step 3 of a recipe (steps.h): the scale of one block or group, by the
// family of its rule (scale_rule_list.h), what a rule's scale reads, and
// the scale dequantization rebuilds from what was stored.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/mx_scale.h"
#include "lowbit/formats/recipe/nvfp4_scale.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/scaled_scale.h"
#include "lowbit/formats/recipe/statistics.h"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::recipe {

// The steps of ChooseScale that a kernel may pass as named alternatives
// proven equal to the model's: torchao's eager RCEIL exponent (mx_scale.h
// RceilEagerExponent; alternatives/rceil_eager.h), NVFP4's UE4M3 block
// scale conversion and decode (nvfp4_scale.h Nvfp4ScaleCodecOfModel) and
// the scaled rules' roundings (scaled_scale.h ScaleArithmeticOfModel).
struct ScaleStepsOfModel {
  detail::RceilEagerExponentOfModel eager_exponent;
  detail::Nvfp4ScaleCodecOfModel nvfp4_scale;
  detail::ScaleArithmeticOfModel arithmetic;  // the scaled rules' FP16 and integer roundings
};

// The scale of one block or group from its statistics (and, for NVFP4, the
// tensor scale already chosen), with `steps` (ScaleStepsOfModel's members);
// ChooseScale passes the model's.
template <typename Steps>
LOWBIT_HD_CONSTEXPR BlockScale ChooseScaleWith(const Recipe& r, const GroupStats& stats, const TensorScale& t,
                                               const Steps& steps) {
  switch (r.family()) {
    case Family::kMx: {
      BlockScale s = detail::ChooseMxScale(r, stats.amax, steps.eager_exponent);
      s.decode = DecodeToF32(r.scale_format, s.code);  // X, or NaN
      s.factor = MxElementFactor(r, s.code, s.decode);
      return s;
    }
    case Family::kNvfp4:
      return detail::ChooseNvfp4Scale(r, stats.amax, t, steps.nvfp4_scale);
    case Family::kScaled:
      return detail::ChooseScaledScale(r, stats, steps.arithmetic);
  }
  return {};
}

LOWBIT_HD_CONSTEXPR BlockScale ChooseScale(const Recipe& r, const GroupStats& stats, const TensorScale& t = {}) {
  return ChooseScaleWith(r, stats, t, ScaleStepsOfModel{});
}

// Whether ChooseScale(r, stats, t) depends on stats.amax alone, never on
// stats.min or stats.max: then a kernel may keep only the amax
// (AccumulateAmaxOnly, CombineAmaxOnly) and hand ChooseScale EmptyStats'
// min and max. Read off the rule's row (scale_rule_list.h: amax or nothing,
// against min and max); proptests/model/scale_reads_only_amax_test.cc
// checks every catalog recipe against ChooseScale both ways.
LOWBIT_HD_CONSTEXPR bool ScaleReadsOnlyAmax(const Recipe& r) { return ReadsOf(r.scale_rule) != ScaleReads::kMinMax; }

// The block scale that dequantization needs, from what was stored: a scale
// byte (MX, NVFP4) or an FP32 scale and zero point (scaled recipes).
LOWBIT_HD_CONSTEXPR BlockScale StoredScale(const Recipe& r, std::uint8_t code, float scale, std::int32_t zero_point) {
  BlockScale s;
  s.code = code;
  s.zero_point = zero_point;
  s.decode = r.family() == Family::kScaled ? scale : DecodeToF32(r.scale_format, code);
  return s;
}

}  // namespace lowbit::recipe
