// MX dequantization on the GPU (mx.cu, tensor_call.h LaunchMx) equals the model's
// (recipe::DecodeElement of the stored scale, as recipe::DequantizeTensor)
// bit for bit, FP32 out, and its RN BF16 rounding: every MX element format,
// every code, every scale byte (0 = 2^-127 and 0xFF = NaN included), odd
// counts (a partial last block), and the codes the MX quantizer writes for
// generated tensors (round trip through the GPU quantizer).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "block_model.h"
#include "gpu_test_util.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "spec_value.h"
#include "tensor_call.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceVector;

// Every MX format of the catalog; dequantization reads no profile field, so
// OCP's recipe stands for every profile's.
struct Case {
  FormatId element;
  const recipe::MxFormat* format;
  recipe::Recipe recipe;
};
std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const recipe::MxFormat& f : recipe::kMxFormats) {
    cases.push_back({detail::FormatIdOf(f.element), &f, recipe::MakeMxRecipe(f, recipe::kMxProfiles[detail::kMxOcpProfile])});
  }
  return cases;
}
const std::vector<Case> kCases = AllCases();

// An element's value alone (MXINT8 with its 2^-6), as the model decodes it
// under the scale 1 (mx.cu's decode tables do the same).
float ElementValue(const recipe::Recipe& r, std::uint8_t code) {
  recipe::BlockScale unit;
  unit.decode = 1.0f;
  return recipe::DecodeElement(r, unit, recipe::TensorScale{}, code);
}

// Runs the GPU on (codes, scales) and compares with the model, FP32 and BF16.
void Check(const Case& c, const std::vector<std::uint8_t>& codes, const std::vector<std::uint8_t>& scales,
           std::size_t n) {
  const bool packed = c.element == FormatId::kE2m1;
  std::vector<std::uint8_t> stored = codes;
  if (packed) {
    stored.assign((n + 1) / 2, 0);
    block::PackNibbles(codes.data(), static_cast<long>(n), block::NibbleOrder::kLowFirst, stored.data());
  }
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = testing::DequantizeBlockElementByModel(c.recipe, recipe::TensorScale{}, scales[i / 32], codes[i]);
  }
  DeviceVector<std::uint8_t> dc(stored), ds(scales);
  EncodeOptions bo;
  bo.nan_sign = NanSign::kPositive;
  bo.nan_payload = NanPayload::kAllOnes;
  for (OutputType ot : {OutputType::kF32, OutputType::kBf16}) {
    DeviceVector<std::uint32_t> out(n + 1);
    cudaMemset(out.p, 0xCD, (n + 1) * 4);
    detail::TensorCall a;
    a.recipe = &c.recipe;
    a.layout = c.recipe.layout;
    a.rows = 1;
    a.cols = n;
    a.q.codes = dc.p;
    a.q.scale_codes = ds.p;
    a.output_type = ot;
    a.output = out.p;
    const Status s = detail::RunTensorCall(false, a);
    ASSERT_TRUE(s.ok) << s.message;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto raw = out.Get(n + 1);
    int bad = 0;
    for (std::size_t i = 0; i < n && bad < 8; ++i) {
      std::uint32_t got = raw[i];
      std::uint32_t expect = F32Bits(want[i]);
      // Element and scale both NaN: which NaN x86 returns depends on the
      // operand order the host compiler chose; the GPU returns the element's.
      const float element = ElementValue(c.recipe, codes[i]);
      if (std::isnan(element) && scales[i / 32] == 0xFF) expect = F32Bits(element) | 0x00400000u;
      if (ot == OutputType::kBf16) {
        got = reinterpret_cast<const std::uint16_t*>(raw.data())[i];
        expect = static_cast<std::uint32_t>(EncodeF32(kBf16, want[i], bo).code);
      }
      if (got != expect) {
        ++bad;
        ADD_FAILURE() << c.format->name << (ot == OutputType::kF32 ? " f32" : " bf16") << " n=" << n << " i=" << i
                      << " code " << int(codes[i]) << " scale " << int(scales[i / 32]) << " got " << std::hex << got
                      << " want " << expect;
      }
    }
    if (ot == OutputType::kF32) EXPECT_EQ(raw[n], 0xCDCDCDCDu) << "wrote past the end";
  }
}

TEST(CudaMxDequantize, EveryCodeEveryScaleEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  for (const Case& c : kCases) {
    const std::uint32_t codes_per = static_cast<std::uint32_t>(c.recipe.element.CodeMask()) + 1;
    // Block b holds every code (cycled) under scale byte b: 256 blocks.
    const std::size_t n = 256 * 32;
    std::vector<std::uint8_t> codes(n), scales(256);
    for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint8_t>((i * 7 + i / 32) % codes_per);
    for (std::size_t b = 0; b < 256; ++b) scales[b] = static_cast<std::uint8_t>(b);
    Check(c, codes, scales, n);
    // Odd counts: a partial last block, an odd last FP4 nibble.
    for (std::size_t m : {std::size_t{1}, std::size_t{33}, std::size_t{32 * 5 + 7}}) {
      std::vector<std::uint8_t> cm(codes.begin(), codes.begin() + m);
      std::vector<std::uint8_t> sm(scales.begin() + 120, scales.begin() + 120 + (m + 31) / 32);
      Check(c, cm, sm, m);
    }
  }
}

TEST(CudaMxDequantize, RoundTripOfGpuQuantizedTensorsEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(4);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const std::size_t n = 32 * 777 + 19;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = g(rng) * std::ldexp(1.0f, static_cast<int>(i / 32 % 60) - 30);
  x[100] = NAN;
  x[200] = INFINITY;
  for (std::size_t i = 320; i < 352; ++i) x[i] = 0.0f;
  DeviceVector<float> dx(x);
  for (const Case& c : kCases) {
    for (const char* profile : {"te", "ocp"}) {  // where the catalog has the recipe
      const recipe::Recipe* found = recipe::FindRecipe(c.format->name, profile);
      if (found == nullptr) continue;
      const recipe::Recipe& quantize_recipe = *found;
      const bool packed = c.element == FormatId::kE2m1;
      const std::size_t blocks = (n + 31) / 32;
      DeviceVector<std::uint8_t> codes(packed ? (n + 1) / 2 : n), scales(blocks);
      detail::TensorCall q;
      q.recipe = &quantize_recipe;
      q.layout = quantize_recipe.layout;
      q.input = dx.p;
      q.rows = 1;
      q.cols = n;
      q.q.codes = codes.p;
      q.q.scale_codes = scales.p;
      ASSERT_TRUE(detail::RunTensorCall(true, q).ok);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto stored = codes.Get(packed ? (n + 1) / 2 : n);
      std::vector<std::uint8_t> unpacked(n);
      if (packed) block::UnpackNibbles(stored.data(), static_cast<long>(n), block::NibbleOrder::kLowFirst, unpacked.data());
      else unpacked = stored;
      Check(c, unpacked, scales.Get(blocks), n);
    }
  }
}

TEST(CudaMxDequantize, BadArgumentsReturnErrors) {
  LOWBIT_REQUIRE_GPU();
  DeviceVector<std::uint8_t> c(64), s(2);
  DeviceVector<float> out(64);
  const recipe::Recipe& nvfp4 = testing::CatalogRecipeNamed("nvfp4", "te");
  detail::TensorCall a;
  a.recipe = &nvfp4;  // not an MX recipe
  a.layout = nvfp4.layout;
  a.rows = 1;
  a.cols = 64;
  a.q.codes = c.p;
  a.q.scale_codes = s.p;
  a.output = out.p;
  EXPECT_FALSE(detail::LaunchMx(false, a).ok);
  const recipe::Recipe& mxfp8 = testing::CatalogRecipeNamed("mxfp8_e4m3", "ocp");
  a.recipe = &mxfp8;
  a.layout = mxfp8.layout;
  a.q.scale_codes = nullptr;
  EXPECT_FALSE(detail::RunTensorCall(false, a).ok);
}

}  // namespace
}  // namespace lowbit::cuda
