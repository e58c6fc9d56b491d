// The GPU recipes (fp8_scaled.cu, nvfp4.cu, mx.cu through tensor_call.h) equal their models in
// formats/include/lowbit/formats/ bit for bit on generated tensors: odd
// lengths (partial last blocks), NaN and Inf inside blocks, all-zero blocks
// and rows, outliers, BF16-valued ties, tiny and huge magnitudes; in every
// layout variant the benchmark times (layout_variants.h), so its "before"
// rows measure kernels that are right too. Host C++ (the models run on the
// host here).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "block_model.h"
#include "gpu_test_util.h"
#include "layout_variants.h"
#include "tensor_call.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::cuda {
namespace {

using detail::RunTensorCall;
using detail::TensorCall;

// A call over `n` elements of one row (the 1-D block recipes flatten the
// tensor; per tensor is one scale for all of it).
TensorCall OneRow(const recipe::Recipe& r, const recipe::Layout& layout, std::size_t n, LayoutVariant variant) {
  TensorCall t;
  t.recipe = &r;
  t.layout = layout;
  t.rows = 1;
  t.cols = n;
  t.variant = variant;
  return t;
}

using testing::DeviceVector;

float Bf16Round(float x) {  // the value a BF16 input holds (RNE; NaN stays NaN)
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x)) return x;
  u = static_cast<std::uint32_t>(EncodeF32(kBf16, x).code) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A tensor whose blocks (of `block` elements) cycle through the cases where
// recipes differ: Gaussian at random magnitudes, one outlier, all zeros, NaN,
// +-Inf, BF16-valued ties, subnormal-range, near-FLT_MAX.
std::vector<float> Generate(std::size_t n, int block, std::uint32_t seed, bool specials = true) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_int_distribution<int> mag(-40, 40);
  std::vector<float> x(n);
  for (std::size_t start = 0; start < n; start += block) {
    const int kind = specials ? static_cast<int>((start / block) % 9) : 0;
    const float scale = std::ldexp(1.0f, mag(rng));
    for (std::size_t i = start; i < std::min(n, start + block); ++i) {
      float v = g(rng) * scale;
      switch (kind) {
        case 2: v = 0.0f; break;
        case 3: if (i == start + 3) v = std::numeric_limits<float>::quiet_NaN(); break;
        case 4: if (i == start + 1) v = -std::numeric_limits<float>::infinity(); break;
        case 5: v = Bf16Round(g(rng) * 4.0f); break;
        case 6: v = g(rng) * 1e-39f; break;
        case 7: v = g(rng) * 1e37f; break;
        case 8: if (i == start) v = 1000.0f * scale; break;
        default: break;
      }
      x[i] = v;
    }
  }
  return x;
}

std::vector<std::uint16_t> ToBf16Bits(std::vector<float>& x) {
  std::vector<std::uint16_t> b(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = Bf16Round(x[i]);
    std::uint32_t u;
    std::memcpy(&u, &x[i], 4);
    b[i] = static_cast<std::uint16_t>(u >> 16);
  }
  return b;
}

// The catalog's recipe "name:profile" (the model the FP8 kernels follow).
const recipe::Recipe& CatalogRecipe(std::string_view name, std::string_view profile) {
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.name == name && r.profile == profile) return r;
  }
  ADD_FAILURE() << "no recipe " << name << ":" << profile;
  return recipe::kAllRecipes[0];
}

// The model's scale of a group with this amax.
recipe::BlockScale ScaleOfAmax(const recipe::Recipe& r, float amax) {
  recipe::GroupStats stats = recipe::EmptyStats();
  stats.amax = amax;
  return recipe::ChooseScale(r, stats);
}

// The model's code of one element under that scale.
std::uint8_t CodeOf(const recipe::Recipe& r, const recipe::BlockScale& s, float x) {
  return recipe::EncodeScaled(r, s, recipe::ScaledElement(r, s, x));
}

// Dynamic (amax pass, scale, x * scale) and static (the scale the dynamic
// run wrote) per-tensor FP8 against the recipe "<fp8>:te".
TEST(CudaQuantize, Fp8PerTensorEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  for (LayoutVariant variant : kAllLayoutVariants) {
    for (bool bf16 : {false, true}) {
      for (std::size_t n : {std::size_t{1}, std::size_t{1000003}}) {
        for (FormatId f : {FormatId::kE4m3, FormatId::kE5m2}) {
          const recipe::Recipe& r = CatalogRecipe(Spec(f).name, "te");
          std::vector<float> x = Generate(n, 64, 11, /*specials=*/false);
          if (n > 100) x[5] = std::numeric_limits<float>::quiet_NaN();  // ignored by amax
          std::vector<std::uint16_t> xb = ToBf16Bits(x);
          if (!bf16) x = Generate(n, 64, 11, false), x[std::min<std::size_t>(5, n - 1)] = n > 100 ? NAN : x[0];
          DeviceVector<float> dx(x);
          DeviceVector<std::uint16_t> dxb(xb);
          DeviceVector<std::uint8_t> q(n), q_static(n);
          DeviceVector<float> workspace(2), scale_inv(1);  // workspace: scale, amax
          TensorCall a = OneRow(r, recipe::Layout{recipe::Geometry::kPerTensor, 0, 0}, n, variant);
          a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
          a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
          a.q.codes = q.p;
          a.q.scales = scale_inv.p;
          a.workspace = workspace.p;
          Status s = RunTensorCall(true, a);  // dynamic
          ASSERT_TRUE(s.ok) << s.message;
          a.q.codes = q_static.p;
          a.q.scales = nullptr;
          a.given_scale = workspace.p;  // static: the scale the dynamic run wrote
          s = RunTensorCall(true, a);
          ASSERT_TRUE(s.ok) << s.message;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const std::string what = std::string(LayoutVariantName(variant)) + " " + Spec(f).name +
                                   (bf16 ? " bf16" : " f32") + " n=" + std::to_string(n);
          const float want_amax = AbsMax(x.data(), static_cast<long>(n), AmaxNan::kIgnore);
          const recipe::BlockScale want = ScaleOfAmax(r, want_amax);
          const std::vector<float> ws = workspace.Get(2);
          EXPECT_EQ(F32Bits(ws[1]), F32Bits(want_amax)) << what;
          EXPECT_EQ(F32Bits(ws[0]), F32Bits(want.factor)) << what;
          EXPECT_EQ(F32Bits(scale_inv.Get(1)[0]), F32Bits(want.decode)) << what;
          const std::vector<std::uint8_t> got = q.Get(n), got_static = q_static.Get(n);
          int bad = 0;
          for (std::size_t i = 0; i < n && bad < 5; ++i) {
            const std::uint8_t code = CodeOf(r, want, x[i]);
            if (got[i] != code || got_static[i] != code) {
              ++bad;
              ADD_FAILURE() << what << " i=" << i << " x=" << x[i] << " dynamic " << int(got[i]) << " static "
                            << int(got_static[i]) << " model " << int(code);
            }
          }
        }
      }
    }
  }
}

TEST(CudaQuantize, Fp8PerTokenEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  struct Shape { std::size_t rows, cols; };
  for (LayoutVariant variant : kAllLayoutVariants) {
    for (FormatId f : {FormatId::kE4m3, FormatId::kE5m2}) {
      const recipe::Recipe& r = CatalogRecipe(Spec(f).name, "te");
      for (bool bf16 : {true, false}) {
        // 4096 columns fit the 128-thread registers of the current layout,
        // 10000 do not (256 threads, chunks read twice).
        for (Shape sh : {Shape{37, 4096}, Shape{3, 10000}, Shape{5, 1000}, Shape{9, 3}, Shape{1, 8}}) {
          const std::size_t n = sh.rows * sh.cols;
          std::vector<float> x = Generate(n, static_cast<int>(sh.cols), 5, true);
          std::vector<std::uint16_t> xb = ToBf16Bits(x);
          if (!bf16) x = Generate(n, static_cast<int>(sh.cols), 5, true);
          DeviceVector<float> dx(x);
          DeviceVector<std::uint16_t> dxb(xb);
          DeviceVector<std::uint8_t> q(n);
          DeviceVector<float> sinv(sh.rows);
          TensorCall a;
          a.recipe = &r;
          a.layout = recipe::Layout{recipe::Geometry::kPerRow, 0, 0};
          a.variant = variant;
          a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
          a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
          a.rows = sh.rows;
          a.cols = sh.cols;
          a.q.codes = q.p;
          a.q.scales = sinv.p;
          const Status s = RunTensorCall(true, a);
          ASSERT_TRUE(s.ok) << s.message;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const auto got = q.Get(n);
          const auto got_inv = sinv.Get(sh.rows);
          const std::string what = std::string(LayoutVariantName(variant)) + " " + Spec(f).name +
                                   (bf16 ? " bf16" : " f32") + " [" + std::to_string(sh.rows) + ", " +
                                   std::to_string(sh.cols) + "]";
          int bad = 0;
          for (std::size_t row = 0; row < sh.rows; ++row) {
            const float amax = AbsMax(x.data() + row * sh.cols, static_cast<long>(sh.cols), AmaxNan::kIgnore);
            const recipe::BlockScale want = ScaleOfAmax(r, amax);
            EXPECT_EQ(F32Bits(got_inv[row]), F32Bits(want.decode)) << what << " row " << row;
            for (std::size_t c = 0; c < sh.cols && bad < 5; ++c) {
              const std::size_t i = row * sh.cols + c;
              const std::uint8_t code = CodeOf(r, want, x[i]);
              if (got[i] != code) {
                ++bad;
                ADD_FAILURE() << what << " row " << row << " col " << c << " x=" << x[i] << " got=" << int(got[i])
                              << " model=" << int(code);
              }
            }
          }
        }
      }
    }
  }
}

void CheckNvfp4(LayoutVariant variant) {
  SCOPED_TRACE(LayoutVariantName(variant));
  for (bool bf16 : {false, true}) {
    for (std::size_t n : {std::size_t{16}, std::size_t{7}, std::size_t{16 * 1000 + 9}, std::size_t{1 << 20}}) {
      std::vector<float> x = Generate(n, 16, 3, true);
      std::vector<std::uint16_t> xb = ToBf16Bits(x);
      if (!bf16) x = Generate(n, 16, 3, true);
      DeviceVector<float> dx(x);
      DeviceVector<std::uint16_t> dxb(xb);
      const std::size_t blocks = (n + 15) / 16;
      DeviceVector<std::uint8_t> packed((n + 1) / 2), scales(blocks);
      DeviceVector<float> amax(1), tensor_scale(2);  // tensor_scale: S_enc, S_dec
      const recipe::Recipe& te = testing::CatalogRecipeNamed("nvfp4", "te");
      TensorCall a = OneRow(te, te.layout, n, variant);
      a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
      a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
      a.workspace = amax.p;
      a.q.codes = packed.p;
      a.q.scale_codes = scales.p;
      a.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(tensor_scale.p);
      const Status s = RunTensorCall(true, a);
      ASSERT_TRUE(s.ok) << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const testing::ModelBlocks model = testing::QuantizeBlocksByModel(te, x.data(), n);
      const std::vector<std::uint8_t>& codes = model.codes;
      const std::vector<std::uint8_t>& want_scales = model.scale_codes;
      const recipe::TensorScale t = model.tensor_scale;
      const std::vector<float> got_tensor_scale = tensor_scale.Get(2);
      EXPECT_EQ(F32Bits(got_tensor_scale[0]), F32Bits(t.encode)) << "n=" << n;
      EXPECT_EQ(F32Bits(got_tensor_scale[1]), F32Bits(t.decode)) << "n=" << n;
      const auto got_scales = scales.Get(blocks);
      const auto got_packed = packed.Get((n + 1) / 2);
      int bad = 0;
      for (std::size_t b = 0; b < blocks && bad < 5; ++b) {
        if (got_scales[b] != want_scales[b]) {
          ++bad;
          ADD_FAILURE() << "n=" << n << " block " << b << " scale got " << int(got_scales[b]) << " want " << int(want_scales[b]);
        }
      }
      for (std::size_t i = 0; i < n && bad < 10; ++i) {
        const int got = (got_packed[i / 2] >> (4 * (i % 2))) & 0xF;
        if (got != codes[i]) {
          ++bad;
          ADD_FAILURE() << "n=" << n << " i=" << i << " x=" << x[i] << " code " << got << " want " << int(codes[i]);
        }
      }
      // Dequantize to BF16 against the model's FP32 value rounded RN.
      DeviceVector<std::uint16_t> out(n);
      TensorCall dq = a;
      dq.output_type = OutputType::kBf16;
      dq.output = out.p;
      const Status d = RunTensorCall(false, dq);
      ASSERT_TRUE(d.ok) << d.message;
      const auto got_bf = out.Get(n);
      EncodeOptions bo;
      bo.nan_sign = NanSign::kPositive;
      bo.nan_payload = NanPayload::kAllOnes;
      for (std::size_t i = 0; i < n && bad < 15; ++i) {
        const float v = testing::DequantizeBlockElementByModel(te, t, want_scales[i / 16], codes[i]);
        const auto want = EncodeF32(kBf16, v, bo).code;
        if (got_bf[i] != want) {
          ++bad;
          ADD_FAILURE() << "dequant n=" << n << " i=" << i << " got " << got_bf[i] << " want " << want;
        }
      }
    }
  }
}

TEST(CudaQuantize, Nvfp4EqualsTeModel) {
  LOWBIT_REQUIRE_GPU();
  for (LayoutVariant variant : kAllLayoutVariants) CheckNvfp4(variant);
}

// Every scale byte (0x80 and up too: a UE4M3 scale is the low 7 bits) under
// every code, with tensor scales small and large, an odd count (a partial
// last block), in every layout.
TEST(CudaQuantize, Nvfp4DequantizeEveryScaleByteAndCodeEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  const std::size_t blocks = 256 + 1, n = blocks * 16 - 5;
  std::vector<std::uint8_t> codes(n), scales(blocks);
  for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint8_t>((i + i / 16) % 16);
  for (std::size_t b = 0; b < blocks; ++b) scales[b] = static_cast<std::uint8_t>(b);
  std::vector<std::uint8_t> packed((n + 1) / 2, 0);
  for (std::size_t i = 0; i < n; ++i) packed[i / 2] |= static_cast<std::uint8_t>(codes[i] << (4 * (i % 2)));
  DeviceVector<std::uint8_t> dp(packed), ds(scales);
  EncodeOptions bo;  // cvt.rn.bf16x2.f32: every NaN -> 0x7FFF
  bo.nan_sign = NanSign::kPositive;
  bo.nan_payload = NanPayload::kAllOnes;
  const recipe::Recipe& te = testing::CatalogRecipeNamed("nvfp4", "te");
  for (float tensor_amax : {2688.0f, 1.0f, 1e-30f, 3e38f}) {
    const recipe::TensorScale t = recipe::ChooseTensorScale(te, tensor_amax);
    DeviceVector<float> tensor_scale(std::vector<float>{t.encode, t.decode});
    for (LayoutVariant variant : kAllLayoutVariants) {
      DeviceVector<std::uint16_t> out(n);
      TensorCall dq = OneRow(te, te.layout, n, variant);
      dq.q.codes = dp.p;
      dq.q.scale_codes = ds.p;
      dq.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(tensor_scale.p);
      dq.output_type = OutputType::kBf16;
      dq.output = out.p;
      const Status d = RunTensorCall(false, dq);
      ASSERT_TRUE(d.ok) << d.message;
      const auto got = out.Get(n);
      int bad = 0;
      for (std::size_t i = 0; i < n && bad < 8; ++i) {
        const float v = testing::DequantizeBlockElementByModel(te, t, scales[i / 16], codes[i]);
        const auto want = EncodeF32(kBf16, v, bo).code;
        if (got[i] != want) {
          ++bad;
          ADD_FAILURE() << LayoutVariantName(variant) << " tensor amax " << tensor_amax << " scale byte "
                        << int(scales[i / 16]) << " code " << int(codes[i]) << ": got " << got[i] << " want " << want;
        }
      }
    }
  }
}

// The FP32 dequantize (the registry rows' kernel) on every scale byte and
// every code, for four tensor scales, through both of its paths: aligned
// buffers (eight elements a step, n not a multiple of 8 so block 0's tail
// runs too) and output one float off 16-byte alignment (one pair a thread).
TEST(CudaQuantize, Nvfp4DequantizeToF32EveryScaleByteAndCodeEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  const std::size_t blocks = 256 * 3 + 1, n = blocks * 16 - 5;
  std::vector<std::uint8_t> codes(n), scales(blocks);
  for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint8_t>((i + i / 16 + i / 4096) % 16);
  for (std::size_t b = 0; b < blocks; ++b) scales[b] = static_cast<std::uint8_t>(b);
  std::vector<std::uint8_t> packed((n + 1) / 2, 0);
  for (std::size_t i = 0; i < n; ++i) packed[i / 2] |= static_cast<std::uint8_t>(codes[i] << (4 * (i % 2)));
  DeviceVector<std::uint8_t> dp(packed), ds(scales);
  const recipe::Recipe& te = testing::CatalogRecipeNamed("nvfp4", "te");
  for (float tensor_amax : {2688.0f, 1.0f, 1e-30f, 3e38f}) {
    const recipe::TensorScale t = recipe::ChooseTensorScale(te, tensor_amax);
    DeviceVector<float> tensor_scale(std::vector<float>{t.encode, t.decode});
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      DeviceVector<float> out(n + 1);
      TensorCall dq = OneRow(te, te.layout, n, LayoutVariant::kCurrent);
      dq.q.codes = dp.p;
      dq.q.scale_codes = ds.p;
      dq.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(tensor_scale.p);
      dq.output = out.p + offset;
      const Status d = RunTensorCall(false, dq);
      ASSERT_TRUE(d.ok) << d.message;
      const auto got = out.Get(n + 1);
      int bad = 0;
      for (std::size_t i = 0; i < n && bad < 8; ++i) {
        const float want = testing::DequantizeBlockElementByModel(te, t, scales[i / 16], codes[i]);
        if (std::memcmp(&got[i + offset], &want, 4) != 0) {
          ++bad;
          std::uint32_t g = 0, w = 0;
          std::memcpy(&g, &got[i + offset], 4);
          std::memcpy(&w, &want, 4);
          ADD_FAILURE() << "output offset " << offset << " tensor amax " << tensor_amax << " element " << i
                        << " scale byte " << int(scales[i / 16]) << " code " << int(codes[i]) << ": got 0x"
                        << std::hex << g << " want 0x" << w;
        }
      }
    }
  }
}

void CheckMx(LayoutVariant variant) {
  SCOPED_TRACE(LayoutVariantName(variant));
  // Every MX format under both profiles the kernels compile, where the
  // catalog has that recipe (MXINT8 under OCP's only).
  for (const recipe::MxFormat& f : recipe::kMxFormats) {
    for (const char* profile : {"te", "ocp"}) {
      const recipe::Recipe* found = recipe::FindRecipe(f.name, profile);
      if (found == nullptr) continue;
      const recipe::Recipe& recipe = *found;
      const std::string name = recipe::RecipeName(recipe);
      for (bool bf16 : {false, true}) {
        for (std::size_t n : {std::size_t{32 * 999 + 17}, std::size_t{1 << 18}}) {
          std::vector<float> x = Generate(n, 32, 9, true);
          std::vector<std::uint16_t> xb = ToBf16Bits(x);
          if (!bf16) x = Generate(n, 32, 9, true);
          DeviceVector<float> dx(x);
          DeviceVector<std::uint16_t> dxb(xb);
          const std::size_t blocks = (n + 31) / 32;
          const bool packed = recipe.packing != recipe::Packing::kOnePerByte;
          const std::size_t code_bytes = packed ? (n + 1) / 2 : n;
          DeviceVector<std::uint8_t> codes(code_bytes), scales(blocks);
          TensorCall a = OneRow(recipe, recipe.layout, n, variant);
          a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
          a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
          a.q.codes = codes.p;
          a.q.scale_codes = scales.p;
          const Status s = RunTensorCall(true, a);
          ASSERT_TRUE(s.ok) << s.message;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const testing::ModelBlocks model = testing::QuantizeBlocksByModel(recipe, x.data(), n);
          const std::vector<std::uint8_t>& want_codes = model.codes;
          const std::vector<std::uint8_t>& want_scales = model.scale_codes;
          const auto got_codes = codes.Get(code_bytes);
          const auto got_scales = scales.Get(blocks);
          int bad = 0;
          for (std::size_t b = 0; b < blocks && bad < 5; ++b) {
            if (got_scales[b] != want_scales[b]) {
              ++bad;
              ADD_FAILURE() << name << " block " << b << " scale " << int(got_scales[b]) << " want " << int(want_scales[b]);
            }
          }
          for (std::size_t i = 0; i < n && bad < 10; ++i) {
            const int got = packed ? (got_codes[i / 2] >> (4 * (i % 2))) & 0xF : got_codes[i];
            if (got != want_codes[i]) {
              ++bad;
              ADD_FAILURE() << name << (bf16 ? " bf16" : " f32") << " i=" << i << " x=" << x[i] << " code " << got << " want " << int(want_codes[i]);
            }
          }
        }
      }
    }
  }
}

TEST(CudaQuantize, MxEqualsModelForEveryElementAndRecipe) {
  LOWBIT_REQUIRE_GPU();
  for (LayoutVariant variant : kAllLayoutVariants) CheckMx(variant);
}

TEST(CudaQuantize, BadArgumentsReturnErrors) {
  LOWBIT_REQUIRE_GPU();
  DeviceVector<float> x(64);
  DeviceVector<std::uint8_t> q(64), s(4);
  const recipe::Recipe& e4m3 = testing::CatalogRecipeNamed("e4m3", "te");
  TensorCall a = OneRow(e4m3, e4m3.layout, 64, LayoutVariant::kCurrent);  // not an MX recipe
  a.input = x.p;
  a.q.codes = q.p;
  a.q.scale_codes = s.p;
  EXPECT_FALSE(detail::LaunchMx(true, a).ok);
  const recipe::Recipe& mxfp4 = testing::CatalogRecipeNamed("mxfp4", "te");
  a.recipe = &mxfp4;
  a.layout = mxfp4.layout;
  std::vector<float> host(64);
  a.input = host.data();
  EXPECT_FALSE(RunTensorCall(true, a).ok);  // host memory
  a.input = x.p;
  EXPECT_FALSE(detail::LaunchFp8Scaled(detail::RecipeKernel::kFp8PerTensor, a).ok);  // not an FP8 recipe
  const recipe::Recipe& nvfp4 = testing::CatalogRecipeNamed("nvfp4", "te");
  a.recipe = &nvfp4;
  a.layout = nvfp4.layout;
  EXPECT_FALSE(RunTensorCall(true, a).ok);  // no tensor scale, no amax
}

}  // namespace
}  // namespace lowbit::cuda
