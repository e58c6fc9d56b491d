// Whether two recipes give the same codes and values on every input: every
// field of Recipe (spec/.../recipe/recipe.h) and of its EncodeOptions
// (policy.h) that the model's steps read is compared; the descriptive
// fields (name, profile, source) are not, and formats are compared by
// layout (profiles/format_match.h SameLayout), not by name.
//
// Used where a kernel compiled for one catalog recipe stands in for a recipe
// built at run time (cuda/src/model_recipe.cu), and by the catalog's tests
// (proptests/model/recipe_catalog_test.cc). proptests/model/
// recipe_same_semantics_test.cc changes each field in turn and asserts the
// answer changes; the size checks below stop the build when a field is
// added to either struct, so that it is added here and there too.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

// The field counts the functions below were written for, as sizes on the
// 64-bit targets the project builds for (x86-64, nvcc's device side).
static_assert(sizeof(void*) != 8 || sizeof(EncodeOptions) == 20,
              "EncodeOptions changed: compare the new field in SameEncodeOptionFields");
static_assert(sizeof(void*) != 8 || sizeof(Recipe) == 192,
              "Recipe changed: compare the new field in SameSemantics");

// Every EncodeOptions field, whether or not it can act on the destination
// (cuda/src/options_match.h SameEncodeSemantics is the per-destination
// comparison).
LOWBIT_HD_CONSTEXPR bool SameEncodeOptionFields(const EncodeOptions& a, const EncodeOptions& b) {
  return a.rounding == b.rounding && a.overflow == b.overflow && a.inf_input == b.inf_input &&
         a.nan_sign == b.nan_sign && a.nan_payload == b.nan_payload && a.nan_into_no_nan == b.nan_into_no_nan &&
         a.keep_negative_zero == b.keep_negative_zero && a.zero_into_no_zero == b.zero_into_no_zero &&
         a.negative_into_unsigned == b.negative_into_unsigned && a.random_bits == b.random_bits &&
         a.random_bit_count == b.random_bit_count;
}

LOWBIT_HD_CONSTEXPR bool SameSemantics(const Recipe& a, const Recipe& b) {
  return profile_detail::SameLayout(a.element, b.element) &&
         SameEncodeOptionFields(a.element_encode, b.element_encode) && a.layout.geometry == b.layout.geometry &&
         a.layout.size == b.layout.size && a.layout.tile_rows == b.layout.tile_rows &&
         profile_detail::SameLayout(a.scale_format, b.scale_format) && a.scale_rule == b.scale_rule &&
         a.amax_nan == b.amax_nan && a.element_step == b.element_step && a.element_quirk == b.element_quirk &&
         a.tensor_scale == b.tensor_scale && a.dequantize_order == b.dequantize_order &&
         a.zero_point == b.zero_point && a.packing == b.packing && a.element_emax == b.element_emax &&
         a.element_implied_exponent == b.element_implied_exponent && a.qmin == b.qmin && a.qmax == b.qmax &&
         a.scale_saturate == b.scale_saturate && a.zero_amax_as_min_normal == b.zero_amax_as_min_normal &&
         F32Bits(a.eps) == F32Bits(b.eps) && a.pow2_scale == b.pow2_scale &&
         a.scalar_divisor_as_reciprocal == b.scalar_divisor_as_reciprocal && a.amax_divisor == b.amax_divisor;
}

}  // namespace lowbit::recipe
