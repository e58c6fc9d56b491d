// lowbit::cuda's registry rows (lowbit/cuda/register.h): the recipe rows
// (backend "cuda") exist for exactly the recipes the GPU kernels implement,
// are unavailable without a GPU (skipped, never passed), and on a GPU give
// the scalar rows' (the model's) bytes; the sweep rows list the cuda-hw
// instructions. The listing tests are host code and run in CI.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/recipe_quantize.h"
#include "lowbit/cuda/register.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"
#include "registered_rows.h"

namespace lowbit::cuda {
namespace {

registry::Registry& Registered() { return ::lowbit::cuda::testing::ScalarAndCudaRows(); }

std::set<std::string> CudaRecipeRows(registry::RecipeOperation op) {
  std::set<std::string> names;
  for (const registry::RecipeEntry& e : Registered().RecipeEntries()) {
    if (e.backend == "cuda" && e.operation == op) names.insert(e.recipe);
  }
  return names;
}

// The kernels of fp8_scaled.h, nvfp4.h, mx.h, int_quantize.h and the model
// recipe kernels (cuda/src/model_recipe.h), typed out.
TEST(CudaRegister, RecipeRowsAreTheKernelsRecipes) {
  const std::set<std::string> mx = {"mxfp8_e4m3:te", "mxfp8_e4m3:ocp", "mxfp8_e5m2:te", "mxfp8_e5m2:ocp",
                                    "mxfp6_e2m3:te", "mxfp6_e2m3:ocp", "mxfp6_e3m2:te", "mxfp6_e3m2:ocp",
                                    "mxfp4:te",      "mxfp4:ocp",      "mxint8:ocp"};
  const std::set<std::string> ints = {"int8:ao-sym",       "int4:ao-sym",       "int8:ao-asym",     "uint4:ao-asym",
                                      "int8:ao-sym-cuda",  "int4:ao-sym-cuda",  "int8:ao-asym-cuda", "uint4:ao-asym-cuda",
                                      "uint4:gptq-sym",    "uint4:gptq-asym",   "int8:common",      "int8:common-away",
                                      "int4:common",       "int4:common-away"};
  std::set<std::string> dequantize = mx;
  dequantize.insert("nvfp4:te");
  for (const std::string& r : ints) {
    dequantize.insert(r + "/g128");
    dequantize.insert(r + "/row");
  }
  // The newer profiles' recipes, both ways, through the model recipe kernels
  // (model_recipe.h): every MX float format under torchao's eager RCEIL,
  // the two NVFP4 versions, and the scaled ones in every listed layout.
  for (const char* r : {"mxfp8_e4m3:ao-rceil-eager", "mxfp8_e5m2:ao-rceil-eager", "mxfp6_e2m3:ao-rceil-eager",
                        "mxfp6_e3m2:ao-rceil-eager", "mxfp4:ao-rceil-eager", "nvfp4:ao-0.18", "nvfp4:modelopt-0.47"}) {
    dequantize.insert(r);
  }
  for (const char* r : {"e4m3:vllm", "e4m3:vllm-token", "e4m3:vllm-kv", "e4m3:vllm-kv-calc-k", "e4m3:vllm-kv-calc-v",
                        "int8:amax-clamp", "uint4:gptq-sym-fp16", "uint4:gptq-asym-fp16", "uint4:awq-fp16"}) {
    for (const char* layout : {"/g128", "/row", "/tensor"}) dequantize.insert(std::string(r) + layout);
  }
  std::set<std::string> quantize = dequantize;
  for (const char* r : {"e4m3:te/tensor", "e4m3:te/row", "e5m2:te/tensor", "e5m2:te/row"}) quantize.insert(r);
  EXPECT_EQ(CudaRecipeRows(registry::RecipeOperation::kQuantizeRecipe), quantize);
  EXPECT_EQ(CudaRecipeRows(registry::RecipeOperation::kDequantizeRecipe), dequantize);
}

TEST(CudaRegister, RowsAreUnavailableWithoutAGpu) {
  if (GpuAvailable()) GTEST_SKIP() << "a GPU is present";
  int rows = 0;
  for (const registry::RecipeEntry& e : Registered().RecipeEntries()) {
    if (e.backend != "cuda") continue;
    ++rows;
    EXPECT_FALSE(e.available()) << e.recipe;
  }
  EXPECT_GT(rows, 0);
  for (const SweepRow& row : HardwareSweepRows()) EXPECT_FALSE(row.available());
}

// The 13 Hopper sweep rows: FP32 -> E4M3 / E5M2 / BF16 / FP16, BF16 and FP16
// -> E4M3 / E5M2, decodes of E4M3 / E5M2 / FP16 to FP32 and E4M3 / E5M2 to BF16.
TEST(CudaRegister, SweepRowsAreTheHopperInstructions) {
  if (HardwareHasBlackwellCvt()) GTEST_SKIP() << "sm_100a-class instructions add rows";
  std::set<std::string> got;
  int option_sets = 0;
  for (const SweepRow& row : HardwareSweepRows()) {
    got.insert(std::string(registry::OperationName(row.operation)) + " " + Spec(row.format).name);
    option_sets += static_cast<int>(row.option_sets.size());
    EXPECT_EQ(row.backend, "cuda-hw-sweep");
  }
  const std::set<std::string> want = {
      "encode-f32 e4m3", "encode-f32 e5m2", "encode-f32 bf16", "encode-f32 fp16", "encode-bf16 e4m3",
      "encode-bf16 e5m2", "encode-f16 e4m3", "encode-f16 e5m2", "decode-to-f32 e4m3", "decode-to-f32 e5m2",
      "decode-to-f32 fp16", "decode-to-bf16 e4m3", "decode-to-bf16 e5m2"};
  EXPECT_EQ(got, want);
  // BF16: rn, rz, rm, rp, rn.satfinite; FP16: rn, rz, rn.satfinite; one each for the rest.
  EXPECT_EQ(option_sets, 5 + 3 + 11);
}

// Inputs where recipes go wrong: random magnitudes, zeros, NaN, +-Inf,
// a huge outlier, subnormals.
std::vector<float> Tensor(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>((i / 32) % 7);
    float v = g(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 20);
    if (kind == 1) v = 0.0f;
    if (kind == 2 && i % 32 == 3) v = std::nanf("");
    if (kind == 3 && i % 32 == 5) v = -INFINITY;
    if (kind == 4 && i % 32 == 0) v = 3e30f;
    if (kind == 5) v *= 1e-40f;
    x[i] = v;
  }
  return x;
}

// "" when the buffers hold the same bytes; else how many elements differ and
// the first one's index and bits, so a failure says where to look.
template <typename T>
std::string Differences(const std::vector<T>& want, const std::vector<T>& have) {
  if (want.size() != have.size()) {
    return "sizes " + std::to_string(want.size()) + " and " + std::to_string(have.size());
  }
  std::size_t count = 0;
  std::string first;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &have[i], sizeof(T)) == 0) continue;
    if (count++ == 0) {
      std::uint64_t w = 0, h = 0;
      std::memcpy(&w, &want[i], sizeof(T));
      std::memcpy(&h, &have[i], sizeof(T));
      char text[96];
      std::snprintf(text, sizeof(text), "first at %zu: scalar 0x%llx, cuda 0x%llx", i,
                    static_cast<unsigned long long>(w), static_cast<unsigned long long>(h));
      first = text;
    }
  }
  return count == 0 ? "" : std::to_string(count) + " differ, " + first;
}

// The one refusal a "cuda" row may give on a nibble-packed shape with odd
// rows: the INT kernels' (cuda/src/int_quantize.cu CheckShape), which write
// whole bytes from one lane where the model packs across rows.
void ExpectOddNibbleRefusal(const registry::Status& s, const std::string& what) {
  EXPECT_NE(s.message.find("nibble packing needs an even number of columns"), std::string::npos)
      << what << ": " << s.message;
}

// Every "cuda" recipe row against the "scalar" row on two shapes: quantize
// compares every buffer, dequantize the FP32 bits of the scalar quantize
// output decoded.
TEST(CudaRegister, RecipeRowsEqualTheScalarRows) {
  LOWBIT_REQUIRE_GPU();
  int compared = 0;
  for (const registry::RecipeEntry& e : Registered().RecipeEntries()) {
    if (e.backend != "cuda") continue;
    const registry::RecipeEntry* scalar = Registered().FindRecipe(e.operation, e.recipe, "scalar");
    ASSERT_NE(scalar, nullptr) << e.recipe;
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(e.recipe, &target)) << e.recipe;
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{4, 256}, {1, 1001}, {3, 384}}) {
      const registry::RecipeBuffers b = registry::RecipeBufferSizes(target, rows, cols);
      if (!b.ok) continue;  // the layout does not tile this shape
      const std::vector<float> x = Tensor(rows * cols, static_cast<std::uint32_t>(rows * 7 + cols));
      registry::RecipeStorage want(b.sizes), have(b.sizes);
      registry::RecipeArgs a;
      a.target = target;
      a.rows = rows;
      a.cols = cols;
      a.x = x.data();
      a.q = want.View();
      ASSERT_TRUE(scalar->run(a).ok) << e.recipe;
      const std::string what = e.recipe + " " + registry::RecipeOperationName(e.operation) + " " +
                               std::to_string(rows) + "x" + std::to_string(cols);
      // Nibble-packed rows of odd length: a row may refuse them (the INT
      // kernels, ExpectOddNibbleRefusal) or run them (the model compiled for
      // the device packs across rows as the scalar row does); which kernel a
      // row takes is register_backends.cc PlanRecipe's business, not this
      // test's. A row that runs is compared like any other.
      const bool odd_nibble_rows = target.recipe->packing != recipe::Packing::kOnePerByte && cols % 2 != 0;
      if (e.operation == registry::RecipeOperation::kQuantizeRecipe) {
        a.q = have.View();
        const registry::Status s = e.run(a);
        if (odd_nibble_rows && !s.ok) {
          ExpectOddNibbleRefusal(s, what);
          continue;
        }
        ASSERT_TRUE(s.ok) << what << ": " << s.message;
        EXPECT_EQ(Differences(want.codes, have.codes), "") << what << " codes";
        EXPECT_EQ(Differences(want.scale_codes, have.scale_codes), "") << what << " scale codes";
        EXPECT_EQ(Differences(want.scales, have.scales), "") << what << " scales";
        EXPECT_EQ(Differences(want.zero_points, have.zero_points), "") << what << " zero points";
        EXPECT_EQ(Differences(want.tensor_scale, have.tensor_scale), "") << what << " tensor scale";
      } else {
        a.operation = registry::RecipeOperation::kDequantizeRecipe;
        std::vector<float> expected(rows * cols), got(rows * cols);
        a.out = expected.data();
        ASSERT_TRUE(scalar->run(a).ok) << what;
        a.out = got.data();
        const registry::Status s = e.run(a);
        if (odd_nibble_rows && !s.ok) {
          ExpectOddNibbleRefusal(s, what);
          continue;
        }
        ASSERT_TRUE(s.ok) << what << ": " << s.message;
        EXPECT_EQ(Differences(expected, got), "") << what;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

// The registry's "cuda" rows are exactly the (recipe, layout, direction)
// that RunsQuantize / RunsDequantize (recipe_quantize.h) take: the rows and
// the one call per direction ask the same constexpr plan. Host only.
TEST(CudaRegister, RowsAreWhatTheOneCallRuns) {
  int rows = 0;
  for (const std::string& name : registry::AllRecipeNames()) {
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(name, &target)) << name;
    const bool quantize_row =
        Registered().FindRecipe(registry::RecipeOperation::kQuantizeRecipe, name, "cuda") != nullptr;
    const bool dequantize_row =
        Registered().FindRecipe(registry::RecipeOperation::kDequantizeRecipe, name, "cuda") != nullptr;
    EXPECT_EQ(RunsQuantize(*target.recipe, target.layout), quantize_row) << name;
    EXPECT_EQ(RunsDequantize(*target.recipe, target.layout), dequantize_row) << name;
    rows += quantize_row + dequantize_row;
  }
  EXPECT_EQ(rows, 78 + 74);  // lowbit verify --backend cuda --rows lists them
}

// The one call per direction (recipe_quantize.h) on device buffers, for
// every recipe row name whose recipe and layout RunsQuantize or
// RunsDequantize takes: quantize against the scalar row's buffers, and
// dequantize of the scalar row's buffers against its output.
TEST(CudaRegister, OneCallPerDirectionOnDeviceMemoryEqualsTheScalarRows) {
  LOWBIT_REQUIRE_GPU();
  using testing::DeviceVector;
  const std::size_t rows = 4, cols = 256;
  int quantized = 0, dequantized = 0;
  for (const std::string& name : registry::AllRecipeNames()) {
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(name, &target)) << name;
    const recipe::Recipe& r = *target.recipe;
    const bool quantizes = RunsQuantize(r, target.layout), dequantizes = RunsDequantize(r, target.layout);
    if (!quantizes && !dequantizes) continue;
    const registry::RecipeBuffers b = registry::RecipeBufferSizes(target, rows, cols);
    if (!b.ok) continue;  // the layout does not tile this shape
    const registry::RecipeEntry* scalar_quantize =
        Registered().FindRecipe(registry::RecipeOperation::kQuantizeRecipe, name, "scalar");
    const registry::RecipeEntry* scalar_dequantize =
        Registered().FindRecipe(registry::RecipeOperation::kDequantizeRecipe, name, "scalar");
    ASSERT_TRUE(scalar_quantize != nullptr && scalar_dequantize != nullptr) << name;
    const std::vector<float> x = Tensor(rows * cols, 11);
    registry::RecipeStorage want(b.sizes);
    registry::RecipeArgs a;
    a.target = target;
    a.rows = rows;
    a.cols = cols;
    a.x = x.data();
    a.q = want.View();
    ASSERT_TRUE(scalar_quantize->run(a).ok) << name;
    if (quantizes) {
      DeviceVector<float> dx(x);
      DeviceVector<std::uint8_t> codes(want.codes.size()), scale_codes(want.scale_codes.size());
      DeviceVector<float> scales(want.scales.size());
      DeviceVector<std::int32_t> zero_points(want.zero_points.size());
      DeviceVector<recipe::TensorScale> tensor_scale(want.tensor_scale.size());
      recipe::QuantizedTensor q;
      q.codes = want.codes.empty() ? nullptr : codes.p;
      q.scale_codes = want.scale_codes.empty() ? nullptr : scale_codes.p;
      q.scales = want.scales.empty() ? nullptr : scales.p;
      q.zero_points = want.zero_points.empty() ? nullptr : zero_points.p;
      q.tensor_scale = want.tensor_scale.empty() ? nullptr : tensor_scale.p;
      const Status s = Quantize(r, target.layout, dx.p, rows, cols, q, nullptr);
      ASSERT_TRUE(s.ok) << name << ": " << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
      EXPECT_EQ(Differences(want.codes, codes.Get(want.codes.size())), "") << name << " codes";
      EXPECT_EQ(Differences(want.scale_codes, scale_codes.Get(want.scale_codes.size())), "") << name << " scale codes";
      EXPECT_EQ(Differences(want.scales, scales.Get(want.scales.size())), "") << name << " scales";
      EXPECT_EQ(Differences(want.zero_points, zero_points.Get(want.zero_points.size())), "") << name << " zero points";
      EXPECT_EQ(Differences(want.tensor_scale, tensor_scale.Get(want.tensor_scale.size())), "")
          << name << " tensor scale";
      ++quantized;
    }
    if (dequantizes) {
      std::vector<float> expected(rows * cols);
      a.operation = registry::RecipeOperation::kDequantizeRecipe;
      a.out = expected.data();
      ASSERT_TRUE(scalar_dequantize->run(a).ok) << name;
      DeviceVector<std::uint8_t> codes(want.codes), scale_codes(want.scale_codes);
      DeviceVector<float> scales(want.scales);
      DeviceVector<std::int32_t> zero_points(want.zero_points);
      DeviceVector<recipe::TensorScale> tensor_scale(want.tensor_scale);
      DeviceVector<float> out(rows * cols);
      recipe::ConstQuantizedTensor q;
      q.codes = want.codes.empty() ? nullptr : codes.p;
      q.scale_codes = want.scale_codes.empty() ? nullptr : scale_codes.p;
      q.scales = want.scales.empty() ? nullptr : scales.p;
      q.zero_points = want.zero_points.empty() ? nullptr : zero_points.p;
      q.tensor_scale = want.tensor_scale.empty() ? nullptr : tensor_scale.p;
      const Status s = Dequantize(r, target.layout, q, rows, cols, out.p, nullptr);
      ASSERT_TRUE(s.ok) << name << ": " << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
      EXPECT_EQ(Differences(expected, out.Get(rows * cols)), "") << name << " dequantized";
      ++dequantized;
    }
  }
  // Of the 78 quantize and 74 dequantize rows, those whose layout tiles
  // 4 x 256 (all but the 128 x 128 tiles and the like): the body ran.
  EXPECT_GT(quantized, 50);
  EXPECT_GT(dequantized, 50);
}

}  // namespace
}  // namespace lowbit::cuda
