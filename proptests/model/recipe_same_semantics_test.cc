// recipe::SameSemantics (same_semantics.h): every catalog recipe is the
// same as itself and as a copy with its descriptive fields renamed; changing
// any one field that the model's steps read makes it differ. The list of
// changes below names every field of Recipe and EncodeOptions but name,
// profile and source; same_semantics.h's size checks stop the build when a
// field is added, so this list and the comparison are extended together.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/same_semantics.h"

namespace lowbit::recipe {
namespace {

template <typename E>
E Next(E e) {
  return static_cast<E>(static_cast<int>(e) + 1);
}

// One change of each field; each yields a recipe that differs from r.
std::vector<std::pair<std::string, std::function<void(Recipe&)>>> FieldChanges() {
  return {
      {"element", [](Recipe& r) { r.element = r.element.exponent_bits == 4 ? kE5m2 : kE4m3; }},
      {"element_encode.rounding", [](Recipe& r) { r.element_encode.rounding = Next(r.element_encode.rounding); }},
      {"element_encode.overflow", [](Recipe& r) { r.element_encode.overflow = Next(r.element_encode.overflow); }},
      {"element_encode.inf_input", [](Recipe& r) { r.element_encode.inf_input = Next(r.element_encode.inf_input); }},
      {"element_encode.nan_sign", [](Recipe& r) { r.element_encode.nan_sign = Next(r.element_encode.nan_sign); }},
      {"element_encode.nan_payload",
       [](Recipe& r) { r.element_encode.nan_payload = Next(r.element_encode.nan_payload); }},
      {"element_encode.nan_into_no_nan",
       [](Recipe& r) { r.element_encode.nan_into_no_nan = Next(r.element_encode.nan_into_no_nan); }},
      {"element_encode.keep_negative_zero",
       [](Recipe& r) { r.element_encode.keep_negative_zero = !r.element_encode.keep_negative_zero; }},
      {"element_encode.zero_into_no_zero",
       [](Recipe& r) { r.element_encode.zero_into_no_zero = Next(r.element_encode.zero_into_no_zero); }},
      {"element_encode.negative_into_unsigned",
       [](Recipe& r) { r.element_encode.negative_into_unsigned = Next(r.element_encode.negative_into_unsigned); }},
      {"element_encode.random_bits", [](Recipe& r) { r.element_encode.random_bits += 1; }},
      {"element_encode.random_bit_count", [](Recipe& r) { r.element_encode.random_bit_count += 1; }},
      {"layout.geometry", [](Recipe& r) { r.layout.geometry = Next(r.layout.geometry); }},
      {"layout.size", [](Recipe& r) { r.layout.size += 1; }},
      {"layout.tile_rows", [](Recipe& r) { r.layout.tile_rows += 1; }},
      {"scale_format", [](Recipe& r) { r.scale_format = r.scale_format.exponent_bits == 8 ? kFp16 : kFp32; }},
      {"scale_rule", [](Recipe& r) { r.scale_rule = Next(r.scale_rule); }},
      {"amax_nan", [](Recipe& r) { r.amax_nan = Next(r.amax_nan); }},
      {"element_step", [](Recipe& r) { r.element_step = Next(r.element_step); }},
      {"element_quirk", [](Recipe& r) { r.element_quirk = Next(r.element_quirk); }},
      {"tensor_scale", [](Recipe& r) { r.tensor_scale = Next(r.tensor_scale); }},
      {"dequantize_order", [](Recipe& r) { r.dequantize_order = Next(r.dequantize_order); }},
      {"zero_point", [](Recipe& r) { r.zero_point = Next(r.zero_point); }},
      {"packing", [](Recipe& r) { r.packing = Next(r.packing); }},
      {"element_emax", [](Recipe& r) { r.element_emax += 1; }},
      {"element_implied_exponent", [](Recipe& r) { r.element_implied_exponent += 1; }},
      {"qmin", [](Recipe& r) { r.qmin -= 1; }},
      {"qmax", [](Recipe& r) { r.qmax += 1; }},
      {"scale_saturate", [](Recipe& r) { r.scale_saturate = !r.scale_saturate; }},
      {"zero_amax_as_min_normal", [](Recipe& r) { r.zero_amax_as_min_normal = !r.zero_amax_as_min_normal; }},
      {"eps", [](Recipe& r) { r.eps = r.eps == 0.0f ? -0.0f : 0.0f; }},  // the bits, not the value
      {"pow2_scale", [](Recipe& r) { r.pow2_scale = !r.pow2_scale; }},
      {"scalar_divisor_as_reciprocal",
       [](Recipe& r) { r.scalar_divisor_as_reciprocal = !r.scalar_divisor_as_reciprocal; }},
      {"amax_divisor", [](Recipe& r) { r.amax_divisor += 1; }},
  };
}

TEST(RecipeSameSemantics, EveryRecipeIsTheSameAsItselfRenamed) {
  for (const Recipe& r : kAllRecipes) {
    Recipe renamed = r;
    renamed.name = "renamed";
    renamed.profile = "renamed";
    renamed.source = "renamed";
    EXPECT_TRUE(SameSemantics(r, r)) << RecipeName(r);
    EXPECT_TRUE(SameSemantics(r, renamed)) << RecipeName(r);
  }
}

TEST(RecipeSameSemantics, ChangingAnyFieldMakesARecipeDiffer) {
  const auto changes = FieldChanges();
  EXPECT_EQ(changes.size(), 34u);  // 11 EncodeOptions fields, 3 Layout fields, 20 more of Recipe
  for (const Recipe& r : kAllRecipes) {
    for (const auto& [field, change] : changes) {
      Recipe changed = r;
      change(changed);
      EXPECT_FALSE(SameSemantics(r, changed)) << RecipeName(r) << ": " << field;
      EXPECT_FALSE(SameSemantics(changed, r)) << RecipeName(r) << ": " << field;
    }
  }
}

}  // namespace
}  // namespace lowbit::recipe
