// The GPU recipes (quantize.h) equal their models in formats/.../block/ bit
// for bit on generated tensors: odd lengths (partial last blocks), NaN and Inf
// inside blocks, all-zero blocks and rows, outliers, BF16-valued ties, tiny
// and huge magnitudes. Host C++ (the block models name host constants).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/quantize.h"
#include "lowbit/formats/block/fp8_scaled_scale.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/convert.h"

namespace lowbit::cuda {
namespace {

using testing::BitsF32;
using testing::DeviceVector;
using testing::F32Bits;

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

EncodeOptions HwFp8() {
  EncodeOptions o;
  o.overflow = Overflow::kSaturate;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return o;
}

TEST(CudaQuantize, Fp8PerTensorDynamicEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  for (bool bf16 : {false, true}) {
    for (std::size_t n : {std::size_t{1}, std::size_t{1000003}}) {
      for (FormatId f : {FormatId::kE4m3, FormatId::kE5m2}) {
        std::vector<float> x = Generate(n, 64, 11, /*specials=*/false);
        if (n > 100) x[5] = std::numeric_limits<float>::quiet_NaN();  // ignored by amax
        std::vector<std::uint16_t> xb = ToBf16Bits(x);
        if (!bf16) x = Generate(n, 64, 11, false), x[std::min<std::size_t>(5, n - 1)] = n > 100 ? NAN : x[0];
        DeviceVector<float> dx(x);
        DeviceVector<std::uint16_t> dxb(xb);
        DeviceVector<std::uint8_t> q(n);
        DeviceVector<float> scale(1), scale_inv(1), amax(1);
        Fp8PerTensorArgs a;
        a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
        a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
        a.count = n;
        a.format = f;
        a.codes = q.p;
        a.scale = scale.p;
        a.scale_inv = scale_inv.p;
        a.amax = amax.p;
        const Status s = QuantizeFp8PerTensorDynamic(a);
        ASSERT_TRUE(s.ok) << s.message;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const float want_amax = block::AbsMax(x.data(), static_cast<long>(n), block::AmaxNan::kIgnore);
        const float max_fp8 = f == FormatId::kE4m3 ? 448.0f : 57344.0f;
        const float want_scale = block::TeScaleFromAmax(want_amax, max_fp8, false, 0.0f);
        EXPECT_EQ(F32Bits(amax.Get(1)[0]), F32Bits(want_amax));
        EXPECT_EQ(F32Bits(scale.Get(1)[0]), F32Bits(want_scale));
        EXPECT_EQ(F32Bits(scale_inv.Get(1)[0]), F32Bits(1.0f / want_scale));
        const std::vector<std::uint8_t> got = q.Get(n);
        int bad = 0;
        for (std::size_t i = 0; i < n && bad < 5; ++i) {
          const auto want = EncodeF32(Spec(f), x[i] * want_scale, HwFp8()).code;
          if (got[i] != want) {
            ++bad;
            ADD_FAILURE() << "i=" << i << " x=" << x[i] << " got=" << int(got[i]) << " want=" << want;
          }
        }
      }
    }
  }
}

TEST(CudaQuantize, Fp8PerTokenEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  struct Shape { std::size_t rows, cols; };
  for (bool bf16 : {true, false}) {
    for (Shape sh : {Shape{37, 4096}, Shape{5, 1000}, Shape{9, 3}, Shape{1, 8}}) {
      const std::size_t n = sh.rows * sh.cols;
      std::vector<float> x = Generate(n, static_cast<int>(sh.cols), 5, true);
      std::vector<std::uint16_t> xb = ToBf16Bits(x);
      if (!bf16) x = Generate(n, static_cast<int>(sh.cols), 5, true);
      DeviceVector<float> dx(x);
      DeviceVector<std::uint16_t> dxb(xb);
      DeviceVector<std::uint8_t> q(n);
      DeviceVector<float> sinv(sh.rows);
      Fp8PerTokenArgs a;
      a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
      a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
      a.rows = sh.rows;
      a.cols = sh.cols;
      a.codes = q.p;
      a.scale_inv = sinv.p;
      const Status s = QuantizeFp8PerToken(a);
      ASSERT_TRUE(s.ok) << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = q.Get(n);
      const auto got_inv = sinv.Get(sh.rows);
      int bad = 0;
      for (std::size_t r = 0; r < sh.rows; ++r) {
        const float amax = block::AbsMax(x.data() + r * sh.cols, static_cast<long>(sh.cols), block::AmaxNan::kIgnore);
        const float scale = block::TeScaleFromAmax(amax, 448.0f, false, 0.0f);
        EXPECT_EQ(F32Bits(got_inv[r]), F32Bits(1.0f / scale)) << "row " << r;
        for (std::size_t c = 0; c < sh.cols && bad < 5; ++c) {
          const std::size_t i = r * sh.cols + c;
          const auto want = EncodeF32(kE4m3, x[i] * scale, HwFp8()).code;
          if (got[i] != want) {
            ++bad;
            ADD_FAILURE() << "row " << r << " col " << c << " x=" << x[i] << " got=" << int(got[i]) << " want=" << want;
          }
        }
      }
    }
  }
}

TEST(CudaQuantize, Nvfp4EqualsTeModel) {
  LOWBIT_REQUIRE_GPU();
  for (bool bf16 : {false, true}) {
    for (std::size_t n : {std::size_t{16}, std::size_t{7}, std::size_t{16 * 1000 + 9}, std::size_t{1 << 20}}) {
      std::vector<float> x = Generate(n, 16, 3, true);
      std::vector<std::uint16_t> xb = ToBf16Bits(x);
      if (!bf16) x = Generate(n, 16, 3, true);
      DeviceVector<float> dx(x);
      DeviceVector<std::uint16_t> dxb(xb);
      const std::size_t blocks = (n + 15) / 16;
      DeviceVector<std::uint8_t> packed((n + 1) / 2), scales(blocks);
      DeviceVector<float> amax(1), sdec(1);
      Nvfp4Args a;
      a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
      a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
      a.count = n;
      a.amax_out = amax.p;
      a.packed_codes = packed.p;
      a.scales = scales.p;
      a.decode_scale = sdec.p;
      const Status s = QuantizeNvfp4(a);
      ASSERT_TRUE(s.ok) << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<std::uint8_t> codes(n), want_scales(blocks);
      const block::Nvfp4TensorScale t =
          block::QuantizeNvfp4(block::Nvfp4Recipe::kTe, x.data(), static_cast<long>(n), codes.data(), want_scales.data());
      EXPECT_EQ(F32Bits(sdec.Get(1)[0]), F32Bits(t.decode)) << "n=" << n;
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
      const Status d = DequantizeNvfp4ToBf16(packed.p, scales.p, sdec.p, n, out.p);
      ASSERT_TRUE(d.ok) << d.message;
      const auto got_bf = out.Get(n);
      EncodeOptions bo;
      bo.nan_sign = NanSign::kPositive;
      bo.nan_payload = NanPayload::kAllOnes;
      for (std::size_t i = 0; i < n && bad < 15; ++i) {
        const float v = block::DequantizeNvfp4Element(block::Nvfp4Recipe::kTe, t, want_scales[i / 16], codes[i]);
        const auto want = EncodeF32(kBf16, v, bo).code;
        if (got_bf[i] != want) {
          ++bad;
          ADD_FAILURE() << "dequant n=" << n << " i=" << i << " got " << got_bf[i] << " want " << want;
        }
      }
    }
  }
}

TEST(CudaQuantize, MxEqualsModelForEveryElementAndRecipe) {
  LOWBIT_REQUIRE_GPU();
  struct Case { FormatId element; const block::BlockSpec* spec; };
  const Case cases[] = {{FormatId::kE2m1, &block::kMxfp4},      {FormatId::kE4m3, &block::kMxfp8E4m3},
                        {FormatId::kE5m2, &block::kMxfp8E5m2},  {FormatId::kE2m3, &block::kMxfp6E2m3},
                        {FormatId::kE3m2, &block::kMxfp6E3m2},  {FormatId::kInt8, &block::kMxint8}};
  for (const Case& c : cases) {
    for (MxRecipeId rid : {MxRecipeId::kTe, MxRecipeId::kOcp}) {
      const block::MxRecipe& recipe = rid == MxRecipeId::kTe ? block::kTeMx : block::kOcpMx;
      for (bool bf16 : {false, true}) {
        for (std::size_t n : {std::size_t{32 * 999 + 17}, std::size_t{1 << 18}}) {
          std::vector<float> x = Generate(n, 32, 9, true);
          std::vector<std::uint16_t> xb = ToBf16Bits(x);
          if (!bf16) x = Generate(n, 32, 9, true);
          DeviceVector<float> dx(x);
          DeviceVector<std::uint16_t> dxb(xb);
          const std::size_t blocks = (n + 31) / 32;
          const bool packed = c.element == FormatId::kE2m1;
          const std::size_t code_bytes = packed ? (n + 1) / 2 : n;
          DeviceVector<std::uint8_t> codes(code_bytes), scales(blocks);
          MxArgs a;
          a.element = c.element;
          a.recipe = rid;
          a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
          a.input = bf16 ? static_cast<const void*>(dxb.p) : dx.p;
          a.count = n;
          a.codes = codes.p;
          a.scales = scales.p;
          const Status s = QuantizeMx(a);
          ASSERT_TRUE(s.ok) << s.message;
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          std::vector<std::uint8_t> want_codes(n), want_scales(blocks);
          block::QuantizeMx(*c.spec, recipe, x.data(), static_cast<long>(n), want_codes.data(), want_scales.data());
          const auto got_codes = codes.Get(code_bytes);
          const auto got_scales = scales.Get(blocks);
          int bad = 0;
          for (std::size_t b = 0; b < blocks && bad < 5; ++b) {
            if (got_scales[b] != want_scales[b]) {
              ++bad;
              ADD_FAILURE() << c.spec->name << " " << recipe.name << " block " << b << " scale " << int(got_scales[b]) << " want " << int(want_scales[b]);
            }
          }
          for (std::size_t i = 0; i < n && bad < 10; ++i) {
            const int got = packed ? (got_codes[i / 2] >> (4 * (i % 2))) & 0xF : got_codes[i];
            if (got != want_codes[i]) {
              ++bad;
              ADD_FAILURE() << c.spec->name << " " << recipe.name << (bf16 ? " bf16" : " f32") << " i=" << i << " x=" << x[i] << " code " << got << " want " << int(want_codes[i]);
            }
          }
        }
      }
    }
  }
}

TEST(CudaQuantize, BadArgumentsReturnErrors) {
  LOWBIT_REQUIRE_GPU();
  DeviceVector<float> x(64);
  DeviceVector<std::uint8_t> q(64), s(4);
  MxArgs a;
  a.element = FormatId::kFp16;
  a.input = x.p;
  a.count = 64;
  a.codes = q.p;
  a.scales = s.p;
  EXPECT_FALSE(QuantizeMx(a).ok);
  a.element = FormatId::kE2m1;
  std::vector<float> host(64);
  a.input = host.data();
  EXPECT_FALSE(QuantizeMx(a).ok);
  Fp8PerTensorArgs f;
  f.input = x.p;
  f.count = 64;
  f.codes = q.p;
  f.format = FormatId::kE2m1;
  EXPECT_FALSE(QuantizeFp8PerTensorStatic(f).ok);
  Nvfp4Args n;
  n.input = x.p;
  n.count = 64;
  n.packed_codes = q.p;
  n.scales = s.p;
  EXPECT_FALSE(QuantizeNvfp4(n).ok);  // no decode_scale, no amax
}

}  // namespace
}  // namespace lowbit::cuda
