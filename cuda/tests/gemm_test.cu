// The tensor-core GEMM (cuda/src/gemm/) against the exact product: every
// output within formats/include/lowbit/formats/matmul/gemm_bound.h's bound,
// NaN exactly where a NaN weight reaches an output, every output written
// (the output is poisoned with NaN first), and the largest observed
// error / bound ratio printed per format (bench/RESULTS.md "GEMM" records
// them). The W4A4 path's quantized activations equal the model's
// block::QuantizeNvfp4Block bit for bit. Skipped without a GPU.
//
// The exact value: weights dequantized by the model (DecodeToF64 of the
// element and scale formats), products x * w exact in double (at most 8 + 16
// significant bits), summed in double-double (error below 2^-100 of the sum
// of magnitudes, far under every bound term), times the FP32 scale t in
// double (a relative 2^-53, added to the allowance below).
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "gpu_test_util.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/gemm_bound.h"

namespace lowbit::cuda::gemm {
namespace {

using testing::DeviceVector;

std::uint16_t Bf16Bits(float f) {  // f already a BF16 value
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}
float Bf16Value(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A weight in the GEMM's layout, on the host.
struct HostWeights {
  WeightFormat format;
  std::int64_t n, k;
  std::vector<std::uint8_t> codes;     // one code per element (packed on upload)
  std::vector<std::uint8_t> scale8;    // UE4M3 / E8M0
  std::vector<std::uint16_t> scale16;  // FP16 / BF16 bits
  std::vector<float> scale32;          // FP32 per channel
  std::vector<std::uint8_t> zeros;     // INT4 zero points (empty: none)
  ScaleType scale_type = ScaleType::kUe4m3;
  float tensor_scale = 1.0f;

  bool FourBit() const { return format != WeightFormat::kMxfp8E4m3 && format != WeightFormat::kFp8E4m3PerChannel; }
  std::int64_t Block() const { return BlockSizeOf(format, k); }
  // The exactly dequantized weight without t (the bound's w_k).
  double W(std::int64_t row, std::int64_t col) const {
    const std::uint8_t c = codes[row * k + col];
    const std::int64_t b = row * (k / Block()) + col / Block();
    switch (format) {
      case WeightFormat::kNvfp4: return DecodeToF64(kE2m1, c) * DecodeToF64(kUe4m3, scale8[b] & 0x7F);
      case WeightFormat::kMxfp4: return DecodeToF64(kE2m1, c) * DecodeToF64(kE8m0, scale8[b]);
      case WeightFormat::kMxfp8E4m3: return DecodeToF64(kE4m3, c) * DecodeToF64(kE8m0, scale8[b]);
      case WeightFormat::kInt4G128:
      case WeightFormat::kUint4G128: {
        const double q = DecodeToF64(format == WeightFormat::kInt4G128 ? kInt4 : kUint4, c);
        const double z = zeros.empty() ? 0.0 : zeros[b];
        const double s = DecodeToF64(scale_type == ScaleType::kF16 ? kFp16 : kBf16, scale16[b]);
        return (q - z) * s;
      }
      case WeightFormat::kFp8E4m3PerChannel: return DecodeToF64(kE4m3, c);
    }
    return 0;
  }
  double T(std::int64_t row) const {
    if (format == WeightFormat::kNvfp4) return tensor_scale;
    if (format == WeightFormat::kFp8E4m3PerChannel) return scale32[row];
    return 1.0;
  }
};

// Device copies of a HostWeights, packed.
struct DeviceWeights {
  std::vector<std::uint8_t> packed;
  std::unique_ptr<DeviceVector<std::uint8_t>> codes, scale8, zeros;
  std::unique_ptr<DeviceVector<std::uint16_t>> scale16;
  std::unique_ptr<DeviceVector<float>> scale32;
  GemmWeights view;
  explicit DeviceWeights(const HostWeights& h) {
    if (h.FourBit()) {
      packed.assign(h.codes.size() / 2, 0);
      for (std::size_t i = 0; i < h.codes.size(); ++i) packed[i / 2] |= (h.codes[i] & 0xF) << ((i & 1) * 4);
    } else {
      packed = h.codes;
    }
    codes = std::make_unique<DeviceVector<std::uint8_t>>(packed);
    view.format = h.format;
    view.n = h.n;
    view.k = h.k;
    view.codes = codes->p;
    view.scale_type = h.scale_type;
    view.tensor_scale = h.tensor_scale;
    if (!h.scale8.empty()) {
      scale8 = std::make_unique<DeviceVector<std::uint8_t>>(h.scale8);
      view.scales = scale8->p;
    } else if (!h.scale16.empty()) {
      scale16 = std::make_unique<DeviceVector<std::uint16_t>>(h.scale16);
      view.scales = scale16->p;
    } else {
      scale32 = std::make_unique<DeviceVector<float>>(h.scale32);
      view.scales = scale32->p;
    }
    if (!h.zeros.empty()) {
      zeros = std::make_unique<DeviceVector<std::uint8_t>>(h.zeros);
      view.zeros = zeros->p;
    }
  }
};

std::vector<std::uint16_t> RandomActivations(std::mt19937& rng, std::int64_t count) {
  std::vector<std::uint16_t> x(count);
  std::uniform_int_distribution<int> exp(-6, 6), man(0, 127), sign(0, 1), zero(0, 31);
  for (auto& v : x) {
    if (zero(rng) == 0) {
      v = 0;
      continue;
    }
    v = static_cast<std::uint16_t>((sign(rng) << 15) | ((127 + exp(rng)) << 7) | man(rng));
  }
  return x;
}

HostWeights RandomWeights(std::mt19937& rng, WeightFormat f, std::int64_t n, std::int64_t k) {
  HostWeights h{f, n, k};
  h.codes.resize(n * k);
  std::uniform_int_distribution<int> nib(0, 15), byte(0, 255);
  for (auto& c : h.codes) {
    if (h.FourBit()) {
      c = static_cast<std::uint8_t>(nib(rng));
    } else {
      do c = static_cast<std::uint8_t>(byte(rng));
      while ((c & 0x7F) == 0x7F);  // E4M3 NaN codes only where a test puts them
    }
  }
  const std::int64_t blocks = n * (k / h.Block());
  switch (f) {
    case WeightFormat::kNvfp4: {
      std::uniform_int_distribution<int> s(0, 126);  // every finite UE4M3, subnormals and 0 included
      h.scale8.resize(blocks);
      for (auto& v : h.scale8) v = static_cast<std::uint8_t>(s(rng));
      h.tensor_scale = std::ldexp(1.3717f, -5);
      h.scale_type = ScaleType::kUe4m3;
      break;
    }
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: {
      std::uniform_int_distribution<int> s(127 - 12, 127 + 12);
      h.scale8.resize(blocks);
      for (auto& v : h.scale8) v = static_cast<std::uint8_t>(s(rng));
      h.scale_type = ScaleType::kE8m0;
      break;
    }
    case WeightFormat::kInt4G128:
    case WeightFormat::kUint4G128: {
      const bool fp16 = f == WeightFormat::kInt4G128;
      h.scale_type = fp16 ? ScaleType::kF16 : ScaleType::kBf16;
      std::uniform_int_distribution<int> man(0, fp16 ? 1023 : 127), e(-8, 2);
      h.scale16.resize(blocks);
      for (auto& v : h.scale16) {
        v = fp16 ? static_cast<std::uint16_t>(((15 + e(rng)) << 10) | man(rng))
                 : static_cast<std::uint16_t>(((127 + e(rng)) << 7) | man(rng));
      }
      if (f == WeightFormat::kUint4G128) {
        h.zeros.resize(blocks);
        for (auto& z : h.zeros) z = static_cast<std::uint8_t>(nib(rng));
      }
      break;
    }
    case WeightFormat::kFp8E4m3PerChannel: {
      h.scale_type = ScaleType::kF32;
      std::uniform_real_distribution<float> s(0.5f, 2.0f);
      h.scale32.resize(n);
      for (auto& v : h.scale32) v = std::ldexp(s(rng), -6);
      break;
    }
  }
  return h;
}

struct TwoSumAcc {
  double hi = 0, lo = 0;
  void Add(double p) {
    const double s = hi + p;
    const double bp = s - hi;
    const double err = (hi - (s - bp)) + (p - bp);
    hi = s;
    lo += err;
  }
  double Value() const { return hi + lo; }
};

struct CheckResult {
  double max_ratio = 0;
  std::int64_t checked = 0, nans = 0, failures = 0;
};

// Compares y (m x n, FP32 or BF16) with the exact product; `a_values` are
// the activations the kernel multiplied (BF16 bits), `extra_t` an extra
// scale (W4A4's activation tensor scale).
CheckResult CheckAgainstExact(const std::vector<std::uint16_t>& a_values, std::int64_t m, const HostWeights& h,
                              const std::vector<float>& y, const matmul::GemmErrorModel& model, double extra_t,
                              const std::string& label) {
  CheckResult r;
  std::vector<double> w(h.k);
  std::vector<double> xr(h.k);
  for (std::int64_t col = 0; col < h.n; ++col) {
    bool w_nan = false;
    for (std::int64_t kk = 0; kk < h.k; ++kk) {
      w[kk] = h.W(col, kk);
      w_nan = w_nan || std::isnan(w[kk]);
    }
    const double t = h.T(col) * extra_t;
    for (std::int64_t row = 0; row < m; ++row) {
      TwoSumAcc acc;
      double s_abs = 0, x_abs = 0;
      for (std::int64_t kk = 0; kk < h.k; ++kk) {
        const double x = Bf16Value(a_values[row * h.k + kk]);
        if (!w_nan) acc.Add(x * w[kk]);
        s_abs += std::fabs(x * w[kk]);
        x_abs += std::fabs(x);
      }
      const float got = y[row * h.n + col];
      ++r.checked;
      if (w_nan) {
        // A NaN weight reaches every output of its column (NaN * 0 is NaN).
        ++r.nans;
        if (!std::isnan(got)) {
          if (++r.failures <= 5) ADD_FAILURE() << label << " y[" << row << "," << col << "] = " << got << ", want NaN";
        }
        continue;
      }
      const double exact = t * acc.Value();
      const double bound = matmul::GemmErrorBound(model, {h.k, s_abs, x_abs, std::fabs(t)}) +
                           std::ldexp(std::fabs(t) * s_abs, -50);
      const double err = std::fabs(static_cast<double>(got) - exact);
      if (!(err <= bound)) {
        if (++r.failures <= 5) {
          ADD_FAILURE() << label << " y[" << row << "," << col << "] = " << got << " exact " << exact << " err " << err
                        << " bound " << bound;
        }
        continue;
      }
      if (bound > 0) r.max_ratio = std::max(r.max_ratio, err / bound);
    }
  }
  std::printf("[gemm] %-34s outputs %lld (NaN %lld)  max error / bound = %.3g\n", label.c_str(),
              static_cast<long long>(r.checked), static_cast<long long>(r.nans), r.max_ratio);
  return r;
}

std::vector<float> RunGemm(const std::vector<std::uint16_t>& x, std::int64_t m, const DeviceWeights& dw, OutputType out,
                           bool w4a4 = false, std::vector<std::uint16_t>* a_out = nullptr, float* ta = nullptr) {
  const std::int64_t n = dw.view.n, k = dw.view.k;
  DeviceVector<std::uint16_t> dx(x);
  DeviceVector<float> dy(m * n);
  EXPECT_EQ(cudaMemset(dy.p, 0xFF, m * n * sizeof(float)), cudaSuccess);  // poison: NaN
  Status st;
  std::unique_ptr<DeviceVector<std::uint8_t>> ws;
  if (w4a4) {
    ws = std::make_unique<DeviceVector<std::uint8_t>>(GemmW4A4WorkspaceBytes(m, k));
    st = GemmW4A4Nvfp4(reinterpret_cast<const __nv_bfloat16*>(dx.p), m, dw.view, block::Nvfp4Recipe::kTe, ws->p, dy.p,
                       out);
  } else {
    st = Gemm(reinterpret_cast<const __nv_bfloat16*>(dx.p), m, dw.view, dy.p, out);
  }
  EXPECT_TRUE(st.ok) << st.message;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> y(m * n);
  if (out == OutputType::kF32) {
    y = dy.Get(m * n);
  } else {
    std::vector<std::uint16_t> b(m * n);
    EXPECT_EQ(cudaMemcpy(b.data(), dy.p, m * n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::int64_t i = 0; i < m * n; ++i) y[i] = Bf16Value(b[i]);
    // The untouched second half of the poisoned buffer stays NaN; outputs
    // are only the first m * n BF16.
  }
  if (w4a4) {
    std::vector<std::uint8_t> host = ws->Get(GemmW4A4WorkspaceBytes(m, k));
    a_out->resize(m * k);
    std::memcpy(a_out->data(), host.data(), m * k * 2);
    block::Nvfp4TensorScale t;
    std::memcpy(&t, host.data() + GemmW4A4TensorScaleOffset(m, k), sizeof(t));
    *ta = t.decode;
  }
  return y;
}

struct Shape {
  std::int64_t m, n, k;
};
const Shape kShapes[] = {{128, 128, 256}, {200, 131, 384}, {130, 257, 1024}};

void RunFormat(WeightFormat f, OutputType out, std::uint32_t seed) {
  std::mt19937 rng(seed);
  double worst = 0;
  for (const Shape& s : kShapes) {
    HostWeights h = RandomWeights(rng, f, s.n, s.k);
    // Extreme scales and special blocks in row 1 and 2 (where they exist).
    if (f == WeightFormat::kNvfp4) {
      h.scale8[0] = 0x7F;  // UE4M3 NaN scale: row 0 NaN
      h.scale8[h.k / 16 + 1] = 0x01;  // smallest subnormal scale 2^-9
      for (std::int64_t i = 0; i < 16; ++i) h.codes[2 * h.k + 32 + i] = 0;  // an all-zero block
    } else if (f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8E4m3) {
      h.scale8[0] = 0xFF;  // E8M0 NaN: row 0 NaN
      h.scale8[h.k / 32 + 1] = 0x00;  // 2^-127 (MXFP8: under BF16's subnormals, the bound's weight_abs)
      h.scale8[2 * (h.k / 32)] = 127 + 100;
    } else if (f == WeightFormat::kFp8E4m3PerChannel) {
      h.codes[5] = 0x7F;  // E4M3 NaN code: row 0 NaN
    }
    std::vector<std::uint16_t> x = RandomActivations(rng, s.m * s.k);
    DeviceWeights dw(h);
    const std::vector<float> y = RunGemm(x, s.m, dw, out);
    const std::string label = std::string(NameOf(f)) + (out == OutputType::kF32 ? " f32 " : " bf16 ") +
                              std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const CheckResult r = CheckAgainstExact(x, s.m, h, y, GemmErrorModelOf(f, out), 1.0, label);
    EXPECT_EQ(r.failures, 0);
    if (f != WeightFormat::kInt4G128 && f != WeightFormat::kUint4G128) EXPECT_GT(r.nans, 0) << "the NaN row was not checked";
    worst = std::max(worst, r.max_ratio);
  }
  EXPECT_GT(worst, 0.0) << "no output had an error: the check cannot tell a rounding model from an exact one";
}

TEST(Gemm, Nvfp4WithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kNvfp4, OutputType::kF32, 1);
}
TEST(Gemm, Nvfp4Bf16OutputWithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kNvfp4, OutputType::kBf16, 2);
}
TEST(Gemm, Mxfp4WithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kMxfp4, OutputType::kF32, 3);
}
TEST(Gemm, Mxfp8E4m3WithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kMxfp8E4m3, OutputType::kF32, 4);
}
TEST(Gemm, Int4G128Fp16ScalesWithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kInt4G128, OutputType::kF32, 5);
}
TEST(Gemm, Uint4G128Bf16ScalesZerosWithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kUint4G128, OutputType::kF32, 6);
}
TEST(Gemm, Fp8E4m3PerChannelWithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunFormat(WeightFormat::kFp8E4m3PerChannel, OutputType::kF32, 7);
}

// W4A4: the quantized activations are the model's, bit for bit, and the
// product of the two NVFP4 operands is within the bound (the activations'
// values e2m1 * ue4m3 exact, their tensor scale the second epilogue multiply).
TEST(Gemm, W4A4Nvfp4MatchesModelAndBound) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(8);
  for (const Shape& s : kShapes) {
    HostWeights h = RandomWeights(rng, WeightFormat::kNvfp4, s.n, s.k);
    std::vector<std::uint16_t> x = RandomActivations(rng, s.m * s.k);
    DeviceWeights dw(h);
    std::vector<std::uint16_t> a;
    float ta = 0;
    const std::vector<float> y = RunGemm(x, s.m, dw, OutputType::kF32, true, &a, &ta);
    // The model: tensor scale from the amax of all of x, then each block.
    std::vector<float> xf(x.size());
    float amax = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      xf[i] = Bf16Value(x[i]);
      amax = std::max(amax, std::fabs(xf[i]));
    }
    const block::Nvfp4TensorScale t = block::Nvfp4TensorScaleFromAmax(block::Nvfp4Recipe::kTe, amax);
    EXPECT_EQ(ta, t.decode);
    std::int64_t mismatches = 0;
    for (std::size_t b = 0; b < x.size() / 16; ++b) {
      std::uint8_t codes[16];
      const std::uint8_t sc = block::QuantizeNvfp4Block(block::Nvfp4Recipe::kTe, t, xf.data() + b * 16, 16, codes);
      for (int i = 0; i < 16; ++i) {
        const float want = static_cast<float>(DecodeToF64(kE2m1, codes[i]) * DecodeToF64(kUe4m3, sc & 0x7F));
        if (a[b * 16 + i] != Bf16Bits(want) && ++mismatches <= 5) {
          ADD_FAILURE() << "activation " << b * 16 + i << ": kernel " << Bf16Value(a[b * 16 + i]) << ", model " << want;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
    const std::string label = "w4a4 nvfp4 " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const CheckResult r = CheckAgainstExact(a, s.m, h, y, GemmErrorModelOf(WeightFormat::kNvfp4, OutputType::kF32, true),
                                            ta, label);
    EXPECT_EQ(r.failures, 0);
  }
}

// The bound is tight on the hardware for the weight-rounding term: INT4 with
// every (q - z) * s = s = FP16(1 + 2^-8 - 2^-10), which BF16 rounds to 1
// (a relative error of 0.75 of its unit roundoff), and x = 1: the kernel's
// sum is exactly K, the exact one K * s.
TEST(Gemm, Int4RoundingReachesBound) {
  LOWBIT_REQUIRE_GPU();
  const std::int64_t m = 128, n = 128, k = 512;
  HostWeights h{WeightFormat::kInt4G128, n, k};
  h.codes.assign(n * k, 1);
  h.scale_type = ScaleType::kF16;
  h.scale16.assign(n * (k / 128), static_cast<std::uint16_t>((15 << 10) | 3));  // 1 + 3 * 2^-10
  std::vector<std::uint16_t> x(m * k, Bf16Bits(1.0f));
  DeviceWeights dw(h);
  const std::vector<float> y = RunGemm(x, m, dw, OutputType::kF32);
  const CheckResult r =
      CheckAgainstExact(x, m, h, y, GemmErrorModelOf(WeightFormat::kInt4G128, OutputType::kF32), 1.0, "int4 tight case");
  EXPECT_EQ(r.failures, 0);
  EXPECT_GE(r.max_ratio, 0.7);
}

// A case built to be lost by truncating alignment (gemm_bound.h term 2):
// x_0 * w_0 = 1, every other product 1.875 * 2^-24 = 15/16 of an ulp of 1:
// each alone is truncated away by a tensor core that aligns its addends to
// the largest without extra bits (the exact sum gains 4095 * 15/16 ulps).
// Checks the bound and prints the measured fraction of it.
TEST(Gemm, TensorCoreAccumulationWithinStepModel) {
  LOWBIT_REQUIRE_GPU();
  const std::int64_t m = 128, n = 8, k = 4096;
  HostWeights h{WeightFormat::kFp8E4m3PerChannel, n, k};
  h.codes.assign(n * k, 0x01);                    // E4M3 2^-9
  for (std::int64_t r = 0; r < n; ++r) h.codes[r * k] = 0x38;  // E4M3 1.0
  h.scale_type = ScaleType::kF32;
  h.scale32.assign(n, 1.0f);
  std::vector<std::uint16_t> x(m * k, Bf16Bits(std::ldexp(1.875f, -15)));
  for (std::int64_t r = 0; r < m; ++r) x[r * k] = Bf16Bits(1.0f);
  DeviceWeights dw(h);
  const std::vector<float> y = RunGemm(x, m, dw, OutputType::kF32);
  const CheckResult r = CheckAgainstExact(x, m, h, y, GemmErrorModelOf(WeightFormat::kFp8E4m3PerChannel, OutputType::kF32),
                                          1.0, "tensor-core truncation case");
  EXPECT_EQ(r.failures, 0);
  std::printf("[gemm] truncation case: y = %.9g, exact = %.9g\n", y[0], 1.0 + (k - 1) * std::ldexp(1.875, -24));
}

TEST(Gemm, BadArgumentsAreErrors) {
  LOWBIT_REQUIRE_GPU();
  const std::int64_t m = 128, n = 16, k = 64;
  DeviceVector<std::uint16_t> x(m * k);
  DeviceVector<std::uint8_t> codes(n * k), scales(n * k);
  DeviceVector<float> y(m * n);
  GemmWeights w;
  w.format = WeightFormat::kNvfp4;
  w.n = n;
  w.k = k;
  w.codes = codes.p;
  w.scales = scales.p;
  w.scale_type = ScaleType::kUe4m3;
  const auto* xp = reinterpret_cast<const __nv_bfloat16*>(x.p);
  EXPECT_TRUE(Gemm(xp, m, w, y.p, OutputType::kF32).ok);
  GemmWeights bad = w;
  bad.k = 48;
  EXPECT_NE(Gemm(xp, m, bad, y.p, OutputType::kF32).message.find("multiple of 32"), std::string::npos);
  bad = w;
  bad.scale_type = ScaleType::kE8m0;
  EXPECT_NE(Gemm(xp, m, bad, y.p, OutputType::kF32).message.find("scale type"), std::string::npos);
  bad = w;
  bad.format = WeightFormat::kInt4G128;
  bad.scale_type = ScaleType::kF16;
  EXPECT_NE(Gemm(xp, m, bad, y.p, OutputType::kF32).message.find("block (128)"), std::string::npos);
  std::vector<std::uint8_t> host(n * k);
  bad = w;
  bad.codes = host.data();
  EXPECT_FALSE(Gemm(xp, m, bad, y.p, OutputType::kF32).ok);
  EXPECT_FALSE(Gemm(xp + 1, m, w, y.p, OutputType::kF32).ok);  // misaligned
  EXPECT_FALSE(Gemm(xp, 0, w, y.p, OutputType::kF32).ok);
  std::vector<std::uint8_t> ws_host(16);
  EXPECT_FALSE(GemmW4A4Nvfp4(xp, m, w, block::Nvfp4Recipe::kTe, ws_host.data(), y.p, OutputType::kF32).ok);
}

}  // namespace
}  // namespace lowbit::cuda::gemm
