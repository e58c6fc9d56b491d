// What step 3 of a recipe (steps.h) produces: the scale of one block or
// group, and the element factor of an MX scale code. The rules that choose
// it are in mx_scale.h, nvfp4_scale.h and scaled_scale.h, one file per
// family (scale_rule_list.h); choose_scale.h dispatches.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

// What a scale choice produced: what is stored (code or FP32 value, zero
// point), the factor the element step multiplies or divides by, and the
// intermediate values `lowbit explain` shows.
struct BlockScale {
  std::uint8_t code = 0;        // MX: E8M0 byte; NVFP4: UE4M3 byte; scaled: unused
  float decode = 1.0f;          // the FP32 value dequantization multiplies the element by
  float factor = 1.0f;          // what the element step multiplies or divides by
  std::int32_t zero_point = 0;  // scaled recipes with a zero point
  int exponent = 0;             // MX: e = code - 127 (meaningless for 0xFF)
  // The FP32 value the rule handed to its conversion: MX RCEIL / nearest
  // amax * fp32(1/max); NVFP4 the block scale before E4M3; scaled: the scale.
  float rule_value = 0.0f;
};

// The element factor of an MX block whose scale is `code` (decoded to
// `decode`): the scale itself for a dividing recipe, 2^-e for a multiplying
// one, and for torchao 0.18's eager RCEIL 1.0 at code 0
// (torch.where(exponent == 0, 1.0, exp2(127 - exponent))). Shared by
// ChooseScale and the kernels' alternatives (alternatives/mx_block.h).
LOWBIT_HD_CONSTEXPR float MxElementFactor(const Recipe& r, std::uint8_t code, float decode) {
  if (r.scale_rule == ScaleRule::kMxRceilEager && code == 0) return 1.0f;
  return r.element_step == ElementStep::kDivide ? decode : E8m0ReciprocalF32(code);
}

}  // namespace lowbit::recipe
