// The model recipe kernels (cuda/src/model_recipe.cu) against the host
// model, recipe::QuantizeTensor and DequantizeTensor, bit for bit: every
// buffer of a quantize, every output of a dequantize. Shapes that leave
// short runs, short warps and short blocks (1x1, 3x257, 1x(2^20+3)), every
// layout a recipe takes, inputs with NaNs of many payloads (which of them
// wins depends on element order), signed zeros, infinities and subnormals,
// and buffers one element or byte off their 16-byte alignment (the kernels'
// scalar paths). register_test.cc checks the registry rows on two shapes;
// this covers the geometry of the kernels themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/tensor.h"
#include "model_recipe.h"

namespace lowbit::cuda {
namespace {

// Mode 0: plain values; 1: a few specials; 2: a third specials (several
// NaNs per group); 3: signed zeros only; 4: tiny values (2^-26 to 2^-17, a
// few specials), whose GPTQ / AWQ scales are FP16 subnormals, so the
// packer's integers differ from the quantizer's (the kernels' table of a
// group's codes, model_recipe.cu RepackTableElements) and AWQ's FP16 steps
// pass through FP16's subnormals.
constexpr int kModes = 5;
std::vector<float> Input(std::size_t n, int mode, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  const unsigned special_percent = mode == 1 || mode == 4 ? 3 : (mode == 2 ? 35 : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const int binade = mode == 4 ? static_cast<int>(rng() % 10) - 26 : static_cast<int>(rng() % 24) - 12;
    float v = g(rng) * std::ldexp(1.0f, binade);
    if (rng() % 100 < special_percent) {
      switch (rng() % 10) {
        case 0: v = F32FromBits(0x7FC00000u | (rng() & 0x3FFFFFu)); break;  // quiet NaN, payload
        case 1: v = F32FromBits(0xFFC00000u | (rng() & 0x3FFFFFu)); break;  // negative quiet NaN
        case 2: v = F32FromBits(0x7F800001u | (rng() & 0x1FFFFFu)); break;  // signalling NaN
        case 3: v = 0.0f; break;
        case 4: v = -0.0f; break;
        case 5: v = INFINITY; break;
        case 6: v = -INFINITY; break;
        case 7: v = F32FromBits(rng() & 0x807FFFFFu); break;  // subnormal
        case 8: v = 3e30f; break;
        default: v = -1e-30f; break;
      }
    }
    if (mode == 3) v = i % 5 == 0 ? -0.0f : 0.0f;
    x[i] = v;
  }
  return x;
}

template <typename T>
std::vector<T> Download(const T* device, std::size_t n) {
  std::vector<T> h(n);
  if (n > 0) {
    EXPECT_EQ(cudaMemcpy(h.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  }
  return h;
}

template <typename T>
std::string Differences(const std::vector<T>& want, const std::vector<T>& have) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &have[i], sizeof(T)) != 0) return "first difference at " + std::to_string(i);
  }
  return "";
}

// One recipe, layout, shape and input through the model kernels and the
// host model; `offset` 1 puts x, codes and out one element or byte off.
void ExpectModelBits(const recipe::Recipe& r, const recipe::Layout& layout, long rows, long cols, int mode,
                     int offset) {
  recipe::GroupGrid g;
  if (recipe::MakeGroupGrid(r, layout, rows, cols, &g) != recipe::TensorStatus::kOk) return;
  const std::string what = std::string(r.name) + ":" + r.profile + " geometry " +
                           std::to_string(static_cast<int>(layout.geometry)) + " size " +
                           std::to_string(layout.size) + " " + std::to_string(rows) + "x" + std::to_string(cols) +
                           " mode " + std::to_string(mode) + " offset " + std::to_string(offset);
  const recipe::BufferSizes sz = recipe::SizesOf(r, g);
  const long n = rows * cols;
  const std::vector<float> x = Input(static_cast<std::size_t>(n), mode, static_cast<std::uint32_t>(n * 31 + mode));

  std::vector<std::uint8_t> codes(sz.code_bytes), scale_codes(sz.scale_codes);
  std::vector<float> scales(sz.scales);
  std::vector<std::int32_t> zero_points(sz.zero_points);
  recipe::TensorScale tensor_scale;
  const recipe::QuantizedTensor want{codes.data(), scale_codes.data(), scales.data(), zero_points.data(),
                                     sz.tensor_scales ? &tensor_scale : nullptr};
  ASSERT_EQ(recipe::QuantizeTensor(r, layout, x.data(), rows, cols, want), recipe::TensorStatus::kOk) << what;

  std::vector<float> x_padded(offset);
  x_padded.insert(x_padded.end(), x.begin(), x.end());
  testing::DeviceVector<float> d_x(x_padded);
  testing::DeviceVector<std::uint8_t> d_codes(sz.code_bytes + offset);
  testing::DeviceVector<std::uint8_t> d_scale_codes(sz.scale_codes);
  testing::DeviceVector<float> d_scales(sz.scales);
  testing::DeviceVector<std::int32_t> d_zero_points(sz.zero_points);
  testing::DeviceVector<recipe::TensorScale> d_tensor_scale(1);
  testing::DeviceVector<float> d_out(n + offset);
  const recipe::QuantizedTensor have{d_codes.p + offset, d_scale_codes.p, d_scales.p, d_zero_points.p,
                                     sz.tensor_scales ? d_tensor_scale.p : nullptr};
  Status s = detail::RunModelRecipe(r, layout, true, d_x.p + offset, rows, cols, have, nullptr, nullptr);
  ASSERT_TRUE(s.ok) << what << ": " << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  EXPECT_EQ(Differences(codes, Download(have.codes, codes.size())), "") << what << " codes";
  EXPECT_EQ(Differences(scale_codes, Download(have.scale_codes, scale_codes.size())), "") << what << " scale codes";
  EXPECT_EQ(Differences(scales, Download(have.scales, scales.size())), "") << what << " scales";
  EXPECT_EQ(Differences(zero_points, Download(have.zero_points, zero_points.size())), "") << what << " zero points";
  if (sz.tensor_scales) {
    EXPECT_EQ(Differences(std::vector<recipe::TensorScale>{tensor_scale}, Download(have.tensor_scale, 1)), "")
        << what << " tensor scale";
  }

  // Dequantize what the host model stored (the device buffers now hold the
  // same bytes when the quantize above matched; upload them regardless).
  ASSERT_EQ(cudaMemcpy(have.codes, codes.data(), codes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<float> expected(static_cast<std::size_t>(n));
  ASSERT_EQ(recipe::DequantizeTensor(r, layout, recipe::AsConst(want), rows, cols, expected.data()),
            recipe::TensorStatus::kOk);
  if (!scales.empty()) {
    ASSERT_EQ(cudaMemcpy(have.scales, scales.data(), scales.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  if (!scale_codes.empty()) {
    ASSERT_EQ(cudaMemcpy(have.scale_codes, scale_codes.data(), scale_codes.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  if (!zero_points.empty()) {
    ASSERT_EQ(cudaMemcpy(have.zero_points, zero_points.data(), zero_points.size() * sizeof(std::int32_t),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  if (sz.tensor_scales) {
    ASSERT_EQ(cudaMemcpy(have.tensor_scale, &tensor_scale, sizeof(tensor_scale), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  s = detail::RunModelRecipe(r, layout, false, nullptr, rows, cols, have, d_out.p + offset, nullptr);
  ASSERT_TRUE(s.ok) << what << ": " << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  EXPECT_EQ(Differences(expected, Download(d_out.p + offset, expected.size())), "") << what << " dequantize";
}

// Every layout geometry a recipe takes (recipe::LayoutApplies).
std::vector<recipe::Layout> LayoutsOf(const recipe::Recipe& r) {
  if (r.family() != recipe::Family::kScaled) {
    return {{recipe::Geometry::kBlock1d, r.layout.size, 0}, {recipe::Geometry::kGroup, r.layout.size, 0}};
  }
  std::vector<recipe::Layout> layouts = {{recipe::Geometry::kPerTensor, 0, 0}, {recipe::Geometry::kPerRow, 0, 0},
                                         {recipe::Geometry::kGroup, 32, 0},    {recipe::Geometry::kGroup, 1, 0},
                                         {recipe::Geometry::kTile2d, 16, 3}};
  if (r.layout.geometry == recipe::Geometry::kGroup) layouts.push_back(r.layout);
  return layouts;
}

TEST(ModelRecipe, OddShapesEqualTheHostModel) {
  LOWBIT_REQUIRE_GPU();
  int run = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (!detail::RunsOnModelRecipeKernels(r)) continue;
    // The catalog's recipes run their compiled copies of the kernels.
    ASSERT_TRUE(detail::RunsOnCompiledRecipeKernels(r)) << r.name << ":" << r.profile;
    for (const recipe::Layout& layout : LayoutsOf(r)) {
      for (auto [rows, cols] : {std::pair<long, long>{1, 1}, {3, 257}, {129, 33}, {4, 256}, {1, 1001}, {6, 4100},
                                {5, 16}, {96, 384}}) {
        for (int mode = 0; mode < kModes; ++mode) ExpectModelBits(r, layout, rows, cols, mode, run++ % 2);
      }
    }
  }
}

// Enough elements for many blocks of the per-tensor reduction and many
// grid-stride turns of the element passes.
TEST(ModelRecipe, LargeTensorsEqualTheHostModel) {
  LOWBIT_REQUIRE_GPU();
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (!detail::RunsOnModelRecipeKernels(r)) continue;
    for (auto [rows, cols] : {std::pair<long, long>{1, (1L << 20) + 3}, {768, 4096}}) {
      ExpectModelBits(r, r.layout, rows, cols, 1, 0);
      ExpectModelBits(r, r.layout, rows, cols, 2, 1);
      ExpectModelBits(r, r.layout, rows, cols, 4, 0);
    }
  }
}

// The one-pass kernel of groups held in registers (model_recipe.h
// QuantizesGroupsInRegisters): groups of kGroupRegisterRun T elements for
// T = 1 .. 256 (a warp's lanes shared by several groups, a group over
// several warps), per row and in groups along rows, and MX blocks; aligned
// buffers take it (the test asserts so), buffers one element off take the
// two passes.
TEST(ModelRecipe, GroupsHeldInRegistersEqualTheHostModel) {
  LOWBIT_REQUIRE_GPU();
  int taken = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (!detail::RunsOnModelRecipeKernels(r)) continue;
    std::vector<recipe::Layout> layouts;
    if (r.family() == recipe::Family::kScaled) {
      layouts = {{recipe::Geometry::kPerRow, 0, 0}, {recipe::Geometry::kGroup, 32, 0},
                 {recipe::Geometry::kGroup, 128, 0}, {recipe::Geometry::kGroup, 1024, 0}};
    } else {
      layouts = LayoutsOf(r);
    }
    for (const recipe::Layout& layout : layouts) {
      for (auto [rows, cols] : {std::pair<long, long>{3, 64}, {5, 1024}, {2, 4096}, {3, 8192}, {64, 256}}) {
        recipe::GroupGrid g;
        if (recipe::MakeGroupGrid(r, layout, rows, cols, &g) != recipe::TensorStatus::kOk) continue;
        const long group = g.group_cols;
        constexpr long kRun = detail::kGroupRegisterRun;
        const bool shape_applies = g.Count() > 1 && group % kRun == 0 && group <= kRun * 256 &&
                                   ((group / kRun) & (group / kRun - 1)) == 0;
        // 16-byte aligned stand-ins: the predicate reads the addresses only.
        alignas(16) static const float x_aligned[4] = {};
        alignas(16) static std::uint8_t codes_aligned[16] = {};
        const bool takes = detail::QuantizesGroupsInRegisters(r, layout, rows, cols, x_aligned, codes_aligned);
        EXPECT_EQ(takes, shape_applies) << r.name << ":" << r.profile << " group " << group;
        EXPECT_FALSE(detail::QuantizesGroupsInRegisters(r, layout, rows, cols, x_aligned + 1, codes_aligned));
        taken += takes ? 1 : 0;
        for (int mode = 0; mode < kModes; ++mode) ExpectModelBits(r, layout, rows, cols, mode, mode == 3 ? 1 : 0);
      }
    }
  }
  EXPECT_GT(taken, 100);
}

// A recipe that equals no catalog recipe runs the kernels that read the
// recipe at run time: each catalog recipe with another element rounding
// (toward zero for float elements, half away for integers).
TEST(ModelRecipe, RunTimeRecipesEqualTheHostModel) {
  LOWBIT_REQUIRE_GPU();
  int run = 0;
  for (const recipe::Recipe& catalog : recipe::kAllRecipes) {
    if (!detail::RunsOnModelRecipeKernels(catalog)) continue;
    recipe::Recipe r = catalog;
    r.element_encode.rounding =
        r.element.IsFloat() ? RoundingMode::kTowardZero : RoundingMode::kNearestAway;
    ASSERT_FALSE(detail::RunsOnCompiledRecipeKernels(r)) << r.name << ":" << r.profile;
    for (const recipe::Layout& layout : LayoutsOf(r)) {
      for (auto [rows, cols] : {std::pair<long, long>{3, 257}, {96, 384}}) {
        for (int mode = 0; mode < 3; ++mode) ExpectModelBits(r, layout, rows, cols, mode, run++ % 2);
      }
    }
  }
}

}  // namespace
}  // namespace lowbit::cuda
