// The model's trace (recipe/trace.h, trace_tensor.h) against the model's
// whole-tensor functions (recipe/tensor.h), for every recipe of the catalog
// over boundary-biased tensors (lowbit/testing/block_generators.h Matrices):
//   - dynamic scales: TraceTensorOf against QuantizeTensor then
//     DequantizeTensor, in the recipe's own layout and, for scaled recipes,
//     per row too;
//   - static scales: TraceTensorWithRange against QuantizeWithScales with
//     ChooseScale of the range (scaled recipes, as `lowbit quantize --static`);
//   - given scales: TraceTensorWithGivenScales against
//     QuantizeTensorWithGivenScales (the recipes that take them).
// Every element code, every dequantized value (FP32 bits), every stored scale
// (code, FP32 scale bits, zero point) and the tensor scale must be equal bit
// for bit; every element of the tensor must appear exactly once, with its own
// input; and the scaled value the trace shows must be the one the element
// conversion rounds (EncodeScaled of it gives the code; AutoAWQ's FP16
// arithmetic has its own path, EncodeAwqElement: its scaled value must be an
// FP16 value).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "catalog_recipe.h"
#include "generators_at_level.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/recipe/trace_tensor.h"
#include "lowbit/testing/block_generators.h"

namespace lowbit::recipe {
namespace {

// The model's quantized tensor and its dequantization, in typed buffers.
struct ModelRun {
  GroupGrid grid;
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scale_codes;
  std::vector<float> scales;
  std::vector<std::int32_t> zero_points;
  TensorScale tensor_scale;
  std::vector<float> back;
  QuantizedTensor Buffers() {
    QuantizedTensor q;
    q.codes = codes.data();
    q.scale_codes = scale_codes.empty() ? nullptr : scale_codes.data();
    q.scales = scales.empty() ? nullptr : scales.data();
    q.zero_points = zero_points.empty() ? nullptr : zero_points.data();
    q.tensor_scale = &tensor_scale;
    return q;
  }
};

ModelRun Buffers(const Recipe& r, const Layout& layout, long rows, long cols) {
  ModelRun m;
  RC_ASSERT(MakeGroupGrid(r, layout, rows, cols, &m.grid) == TensorStatus::kOk);
  const BufferSizes sizes = SizesOf(r, m.grid);
  m.codes.assign(static_cast<std::size_t>(sizes.code_bytes), 0);
  m.scale_codes.assign(static_cast<std::size_t>(sizes.scale_codes), 0);
  m.scales.assign(static_cast<std::size_t>(sizes.scales), 0.0f);
  m.zero_points.assign(static_cast<std::size_t>(sizes.zero_points), 0);
  m.back.assign(static_cast<std::size_t>(rows * cols), 0.0f);
  return m;
}

void Dequantize(const Recipe& r, const Layout& layout, long rows, long cols, ModelRun* m) {
  RC_ASSERT(DequantizeTensor(r, layout, AsConst(m->Buffers()), rows, cols, m->back.data()) == TensorStatus::kOk);
}

void ExpectTraceEqualsModel(const TraceTensor& t, const testing::Matrix& x, const ModelRun& m) {
  const Recipe& r = t.recipe;
  RC_ASSERT(t.grid.Count() == m.grid.Count());
  RC_ASSERT(static_cast<long>(t.blocks.size()) == m.grid.Count());
  RC_ASSERT(!t.blocks.empty());
  RC_ASSERT(F32Bits(t.tensor_scale.encode) == F32Bits(m.tensor_scale.encode));
  RC_ASSERT(F32Bits(t.tensor_scale.decode) == F32Bits(m.tensor_scale.decode));
  std::vector<int> seen(x.values.size(), 0);
  for (const TraceBlock& b : t.blocks) {
    const std::size_t g = static_cast<std::size_t>(b.index);
    RC_ASSERT(b.index >= 0 && b.index < m.grid.Count());
    if (r.family() == Family::kScaled) {
      RC_ASSERT(F32Bits(b.scale.decode) == F32Bits(m.scales[g]));
    } else {
      RC_ASSERT(b.scale.code == m.scale_codes[g]);
    }
    if (!m.zero_points.empty()) RC_ASSERT(b.scale.zero_point == m.zero_points[g]);
    RC_ASSERT(!b.elements.empty());
    for (const TraceElement& e : b.elements) {
      RC_ASSERT(e.index >= 0 && e.index < static_cast<long>(x.values.size()));
      const std::size_t k = static_cast<std::size_t>(e.index);
      ++seen[k];
      RC_ASSERT(GroupOf(m.grid, e.index / x.cols, e.index % x.cols) == b.index);
      RC_ASSERT(F32Bits(e.input) == F32Bits(x.values[k]));
      RC_ASSERT(e.code == LoadCode(r.packing, m.codes.data(), e.index));
      RC_ASSERT(F32Bits(e.decoded) == F32Bits(m.back[k]));
      if (r.scale_rule != ScaleRule::kAwqAsymmetric) {
        RC_ASSERT(EncodeScaled(r, b.scale, e.scaled) == e.code);
      } else {
        // AutoAWQ's quotient is computed in FP16: an FP32 one would not be.
        RC_ASSERT(F32Bits(F16RoundedF32(e.scaled)) == F32Bits(e.scaled));
      }
    }
  }
  for (int count : seen) RC_ASSERT(count == 1);
}

// The catalog indices of the recipes for which `keep` holds
// (TraceTensor.EverySuiteHasRecipes checks that there are some).
template <typename Keep>
std::vector<int> RecipeIndices(Keep keep) {
  std::vector<int> v;
  for (int i = 0; i < static_cast<int>(kAllRecipes.size()); ++i) {
    if (keep(kAllRecipes[static_cast<std::size_t>(i)])) v.push_back(i);
  }
  return v;
}

class TraceOfRecipe : public ::testing::TestWithParam<int> {};
class TraceOfScaledRecipe : public ::testing::TestWithParam<int> {};
class TraceOfGivenScaleRecipe : public ::testing::TestWithParam<int> {};

TEST_P(TraceOfRecipe, EqualsQuantizeThenDequantizeWithScalesFromTheData) {
  const Recipe& r = kAllRecipes[GetParam()];
  std::vector<Layout> layouts{r.layout};
  if (r.family() == Family::kScaled && r.layout.geometry != Geometry::kPerRow) {
    layouts.push_back(Layout{Geometry::kPerRow, 0, 0});
  }
  for (const Layout& layout : layouts) {
    testing::CheckAtLevel({30, 150, 5000}, [&r, layout] {
      const testing::Matrix x = *testing::Matrices(r, layout);
      ModelRun m = Buffers(r, layout, x.rows, x.cols);
      RC_ASSERT(QuantizeTensor(r, layout, x.values.data(), x.rows, x.cols, m.Buffers()) == TensorStatus::kOk);
      Dequantize(r, layout, x.rows, x.cols, &m);
      TraceTensor t;
      RC_ASSERT(TraceTensorOf(r, layout, x.values.data(), x.rows, x.cols, &t) == TensorStatus::kOk);
      RC_ASSERT(t.scale_source == TraceScaleSource::kData);
      ExpectTraceEqualsModel(t, x, m);
    });
  }
}

TEST_P(TraceOfScaledRecipe, EqualsQuantizeWithTheScalesOfACalibratedRange) {
  const Recipe& r = kAllRecipes[GetParam()];
  testing::CheckAtLevel({30, 150, 5000}, [&r] {
    const testing::Matrix x = *testing::Matrices(r);
    const std::vector<float> bounds = *rc::gen::container<std::vector<float>>(2, testing::BoundaryF32(r.element));
    const GroupStats range = StatsOfRange(bounds[0] < bounds[1] ? bounds[0] : bounds[1],
                                          bounds[0] < bounds[1] ? bounds[1] : bounds[0]);
    ModelRun m = Buffers(r, r.layout, x.rows, x.cols);
    const BlockScale s = ChooseScale(r, range);
    for (long g = 0; g < m.grid.Count(); ++g) StoreScale(r, m.Buffers(), g, s);
    RC_ASSERT(QuantizeWithScales(r, r.layout, x.values.data(), x.rows, x.cols, [&s](long) { return s; },
                                 m.codes.data()) == TensorStatus::kOk);
    Dequantize(r, r.layout, x.rows, x.cols, &m);
    TraceTensor t;
    RC_ASSERT(TraceTensorWithRange(r, r.layout, x.values.data(), x.rows, x.cols, range, &t) == TensorStatus::kOk);
    RC_ASSERT(t.scale_source == TraceScaleSource::kRange);
    ExpectTraceEqualsModel(t, x, m);
  });
}

TEST_P(TraceOfGivenScaleRecipe, EqualsQuantizeWithGivenScales) {
  const Recipe& r = kAllRecipes[GetParam()];
  testing::CheckAtLevel({30, 150, 5000}, [&r] {
    const testing::Matrix x = *testing::Matrices(r);
    ModelRun m = Buffers(r, r.layout, x.rows, x.cols);
    const bool one_for_all = *rc::gen::arbitrary<bool>();
    const long count = one_for_all ? 1 : m.grid.Count();
    const std::vector<float> scales = *rc::gen::container<std::vector<float>>(
        static_cast<std::size_t>(count),
        rc::gen::suchThat(testing::BoundaryF32(r.element), [](float s) { return F32IsFinite(F32Bits(s)) && s > 0.0f; }));
    RC_ASSERT(QuantizeTensorWithGivenScales(r, r.layout, x.values.data(), x.rows, x.cols, scales.data(), count,
                                            m.Buffers()) == TensorStatus::kOk);
    Dequantize(r, r.layout, x.rows, x.cols, &m);
    TraceTensor t;
    RC_ASSERT(TraceTensorWithGivenScales(r, r.layout, x.values.data(), x.rows, x.cols, scales.data(), count, &t) ==
              TensorStatus::kOk);
    RC_ASSERT(t.scale_source == TraceScaleSource::kGiven);
    ExpectTraceEqualsModel(t, x, m);
  });
}

INSTANTIATE_TEST_SUITE_P(Catalog, TraceOfRecipe, ::testing::Range(0, static_cast<int>(kAllRecipes.size())),
                         testing::CatalogIndexTestName);
// Static ranges are for scaled recipes (`lowbit quantize --static`).
INSTANTIATE_TEST_SUITE_P(Catalog, TraceOfScaledRecipe,
                         ::testing::ValuesIn(RecipeIndices([](const Recipe& r) {
                           return r.family() == Family::kScaled;
                         })),
                         testing::CatalogIndexTestName);
INSTANTIATE_TEST_SUITE_P(Catalog, TraceOfGivenScaleRecipe,
                         ::testing::ValuesIn(RecipeIndices([](const Recipe& r) { return TakesGivenScale(r); })),
                         testing::CatalogIndexTestName);

TEST(TraceTensor, EverySuiteHasRecipes) {
  EXPECT_EQ(RecipeIndices([](const Recipe&) { return true; }).size(), kAllRecipes.size());
  EXPECT_FALSE(RecipeIndices([](const Recipe& r) { return r.family() == Family::kScaled; }).empty());
  EXPECT_FALSE(RecipeIndices([](const Recipe& r) { return TakesGivenScale(r); }).empty());
  EXPECT_FALSE(RecipeIndices([](const Recipe& r) { return r.scale_rule == ScaleRule::kAwqAsymmetric; }).empty());
}

// The trace refuses what the tensor functions refuse, with the same status,
// and leaves its output untouched.
TEST(TraceTensor, RefusesWhatTheTensorFunctionsRefuse) {
  const Recipe& mx = kAllRecipes[0];
  const float x[4] = {1, 2, 3, 4};
  TraceTensor t;
  t.blocks.resize(3);
  EXPECT_EQ(TraceTensorOf(mx, Layout{Geometry::kPerRow, 0, 0}, x, 1, 4, &t), TensorStatus::kLayoutNotForRecipe);
  EXPECT_EQ(TraceTensorOf(mx, mx.layout, x, 0, 4, &t), TensorStatus::kEmpty);
  EXPECT_EQ(TraceTensorWithGivenScales(mx, mx.layout, x, 1, 4, x, 1, &t), TensorStatus::kLayoutNotForRecipe);
  EXPECT_EQ(t.blocks.size(), 3u);
  for (const Recipe& r : kAllRecipes) {
    if (!TakesGivenScale(r)) continue;
    const float scales[2] = {1, 2};
    // One group (per tensor or one row): two scales fit neither rule.
    EXPECT_EQ(TraceTensorWithGivenScales(r, Layout{Geometry::kPerTensor, 0, 0}, x, 1, 4, scales, 2, &t),
              TensorStatus::kBadGroup)
        << RecipeName(r);
  }
}

}  // namespace
}  // namespace lowbit::recipe
