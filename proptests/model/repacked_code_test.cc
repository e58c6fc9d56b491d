// Two claims a kernel may rest integer elements on (a table of a group's
// codes by quantizer integer, and the in-grid rounding), for every
// catalog recipe they apply to (a scaled recipe with integer elements of up
// to 8 bits rounded to nearest even: INT8 amax-clamp, GPTQ and AWQ with FP16
// scales, and the other scaled integer recipes of the catalog):
//   - a repacked recipe's code is RepackedCodeWith(r, s, QuantizerIntegerWith(
//     r, s, x)) (element_encode.h), so a table of the group's codes by
//     quantizer integer gives EncodeElement's code;
//   - in a group whose zero point lies in [qmin, qmax]
//     the quantizer's integer lies in [qmin, qmax], and every value the
//     element step rounds to an integer lies within +-32767, where
//     alternatives/round_to_integer.h RoundToIntegerNearestEvenInGrid equals
//     the model's rounding (proptests/backends/round_to_integer_test.cc): the
//     element step with that rounding gives the model's integer and code.
// Groups from boundary-biased statistics (min, max, amax of the element and
// scale formats' edges, the recipe's own constants, NaN, Inf, +-0) and
// elements near the group's ties ((k + 1/2) * scale and its neighbours),
// its clamp bounds, its extremes, and anywhere.
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "boundary_generators.h"
#include "catalog_recipe.h"
#include "generators_at_level.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::recipe {
namespace {

// The host's form of ClampedElementArithmetic: the in-grid rounding, and the
// model's FP16 rounding (the device's hardware FP16 rounding is swept
// against the model by cuda/tests/element_arithmetic_alternatives_test.cu).
// Counts the values it rounds outside +-32767.
struct InGridArithmetic {
  int* outside;
  float RoundToInteger(float y, RoundingMode mode) const {
    if (!(F32Abs(y) <= alternatives::kInGridLimit)) ++*outside;
    (void)mode;
    return alternatives::RoundToIntegerNearestEvenInGrid(y);
  }
  float F16Rounded(float v) const { return F16RoundedF32(v); }
};

bool Applies(const Recipe& r) {
  return r.family() == Family::kScaled && !r.element.IsFloat() && r.element.total_bits <= 8 &&
         r.element_encode.rounding == RoundingMode::kNearestEven;
}

std::vector<int> Recipes() {
  std::vector<int> indices;
  for (int i = 0; i < static_cast<int>(kAllRecipes.size()); ++i) {
    if (Applies(kAllRecipes[i])) indices.push_back(i);
  }
  return indices;
}

std::string Hex(float v) {
  std::ostringstream os;
  os << "0x" << std::hex << F32Bits(v);
  return os.str();
}

// A statistic: the element and scale formats' boundary values, the recipe's
// eps and qmax scaled by powers of two, specials, random bits.
rc::Gen<float> StatValue(const Recipe& r) {
  return rc::gen::exec([&r]() -> float {
    switch (*rc::gen::weightedElement<int>({{3, 0}, {3, 1}, {4, 2}, {1, 3}, {2, 4}})) {
      case 0:
        return F32FromBits(*testing::BoundaryF32Bits(r.element));
      case 1:
        return F32FromBits(*testing::BoundaryF32Bits(r.scale_format));
      case 2: {
        const float anchor = *rc::gen::element(1.0f, r.eps != 0.0f ? r.eps : 1.0f, static_cast<float>(r.qmax),
                                               65504.0f, F32Pow2(-24), F32Pow2(-14));
        float v = std::ldexp(anchor, *rc::gen::inRange(-30, 30));
        const int nudge = *rc::gen::inRange(-2, 3);
        for (int i = 0; i < (nudge < 0 ? -nudge : nudge); ++i) {
          v = std::nextafter(v, nudge > 0 ? std::numeric_limits<float>::infinity() : 0.0f);
        }
        return *rc::gen::arbitrary<bool>() ? -v : v;
      }
      case 3:
        return *rc::gen::element(0.0f, -0.0f, F32FromBits(0x7F800000u), F32FromBits(0xFF800000u),
                                 F32FromBits(0x7FC00000u), F32FromBits(0xFFC00001u), kF32Max, -kF32Max);
      default:
        return F32FromBits(*rc::gen::arbitrary<std::uint32_t>());
    }
  });
}

// Statistics of a group: min <= max mostly (as a real group has), amax
// their larger magnitude; now and then any three values.
rc::Gen<GroupStats> Stats(const Recipe& r) {
  return rc::gen::exec([&r]() -> GroupStats {
    float a = *StatValue(r), b = *StatValue(r);
    if (*rc::gen::inRange(0, 8) == 0) return GroupStats{a, b, *StatValue(r)};
    if (b < a) std::swap(a, b);
    if (*rc::gen::inRange(0, 4) == 0) a = F32Abs(a) * (*rc::gen::arbitrary<bool>() ? 1.0f : 0.0f);
    const float amax = TorchMax(F32Abs(a), F32Abs(b));
    return GroupStats{a, b, amax};
  });
}

// An element of a group with scale s: near a tie (k + 1/2) * factor or an
// integer k * factor (k within the clamp range and a little past it), a few
// ulps either way; the group's statistics; or any value.
rc::Gen<float> Element(const Recipe& r, const BlockScale& s, const GroupStats& st) {
  return rc::gen::exec([&r, &s, &st]() -> float {
    switch (*rc::gen::weightedElement<int>({{6, 0}, {2, 1}, {1, 2}, {1, 3}})) {
      case 0: {
        const int k = *rc::gen::inRange(r.qmin - s.zero_point - 3, r.qmax - s.zero_point + 4);
        const float half = *rc::gen::arbitrary<bool>() ? 0.5f : 0.0f;
        float v = (static_cast<float>(k) + half) * s.factor;
        const int nudge = *rc::gen::inRange(-3, 4);
        for (int i = 0; i < (nudge < 0 ? -nudge : nudge); ++i) {
          v = std::nextafter(v, nudge > 0 ? std::numeric_limits<float>::infinity()
                                          : -std::numeric_limits<float>::infinity());
        }
        return v;
      }
      case 1:
        return *rc::gen::element(st.min, st.max, st.amax, -st.amax);
      case 2:
        return *StatValue(r);
      default:
        return F32FromBits(*rc::gen::arbitrary<std::uint32_t>());
    }
  });
}

class ClampedIntegerRecipe : public ::testing::TestWithParam<int> {};

TEST_P(ClampedIntegerRecipe, TableAndInGridRoundingGiveTheModelsCode) {
  const Recipe& r = kAllRecipes[GetParam()];
  ASSERT_TRUE(Applies(r));
  ASSERT_LE(r.qmax - r.qmin + 1, 16 * 16);
  const bool repacked = r.element_quirk == ElementQuirk::kRepackWithFp16Scale;
  int clamped_groups = 0;
  testing::CheckAtLevel({300, 3000, 60000}, [&] {
    const GroupStats st = *Stats(r);
    const BlockScale s = ChooseScale(r, st, TensorScale{});
    for (int i = 0; i < 16; ++i) {
      const float x = *Element(r, s, st);
      const std::uint8_t want = EncodeElement(r, s, x);
      const std::string what = RecipeName(r) + ": stats {" + Hex(st.min) + ", " + Hex(st.max) + ", " +
                                Hex(st.amax) + "} factor " + Hex(s.factor) + " zero point " +
                                std::to_string(s.zero_point) + " x " + Hex(x);
      const std::int32_t q0 = QuantizerIntegerWith(r, s, x);
      if (repacked && RepackedCodeWith(r, s, q0) != want) {
        RC_FAIL(what + ": RepackedCodeWith(QuantizerIntegerWith) differs from EncodeElement");
      }
      if (r.qmin > s.zero_point || s.zero_point > r.qmax) continue;
      ++clamped_groups;
      if (q0 < r.qmin || q0 > r.qmax) RC_FAIL(what + ": quantizer integer " + std::to_string(q0) + " outside");
      int outside = 0;
      const InGridArithmetic in_grid{&outside};
      if (QuantizerIntegerWith(r, s, x, in_grid) != q0) RC_FAIL(what + ": in-grid quantizer integer differs");
      if (!repacked && EncodeElementWith(r, s, x, ElementEncodeOfModel{r}, in_grid) != want) {
        RC_FAIL(what + ": in-grid code differs");
      }
      if (outside != 0) RC_FAIL(what + ": a rounded value outside +-32767");
    }
  });
  EXPECT_GT(clamped_groups, 0);
}

INSTANTIATE_TEST_SUITE_P(Catalog, ClampedIntegerRecipe, ::testing::ValuesIn(Recipes()), testing::CatalogIndexTestName);

// The catalog recipes the kernels name: their claims must be checked above.
TEST(ClampedIntegerRecipe, CoversTheServingIntegerRecipes) {
  int found = 0;
  for (const int i : Recipes()) {
    const std::string p = kAllRecipes[i].profile;
    found += p == "amax-clamp" || p == "gptq-sym-fp16" || p == "gptq-asym-fp16" || p == "awq-fp16";
  }
  EXPECT_EQ(found, 4);
}

}  // namespace
}  // namespace lowbit::recipe
