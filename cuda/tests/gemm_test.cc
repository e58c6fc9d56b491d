// The tensor-core GEMM (cuda/src/gemm/) against the exact product: every
// output within formats/include/lowbit/formats/matmul/gemm_bound.h's bound,
// NaN exactly where a NaN weight reaches an output, every output written
// (the output is poisoned with NaN first), and the largest observed
// error / bound ratio printed per format (bench/RESULTS.md "GEMM" records
// them). The W4A4 path's quantized activations equal the model's block
// steps for "nvfp4:te" (recipe/steps.h) bit for bit. Skipped without a GPU.
//
// The exact value is the exact mode of the matrix-product oracle
// (formats/include/lowbit/formats/matmul/exact.h ExactMatmul, its `nearest`:
// the exact sum rounded once to binary64, a relative 2^-53 added to the
// allowance below); the bound's magnitudes come from gemm_bound.h
// BoundTermsOf over the same host buffers.
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
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/formats/matmul/gemm_bound.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::cuda::gemm {
namespace {

using matmul::MatmulProblem;
using matmul::OutputType;
using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;
using matmul::WeightView;
using testing::DeviceBuffer;

std::uint16_t Bf16Bits(float f) {  // f already a BF16 value
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}
// The activations' recipe of the W4A4 tests: the catalog's "nvfp4:te".
const recipe::Recipe& Nvfp4Te() { return *recipe::FindRecipe("nvfp4", "te"); }

float Bf16Value(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// One weight kind's buffers, host copies and device copies, and views of both.
struct Weights {
  // Logical content: q[n][k] codes, one scale / zero point per (n, group).
  std::vector<std::uint8_t> q;
  std::vector<std::uint32_t> scale_bits;  // UE4M3 / E8M0 byte, FP16 / BF16 bits, FP32 bits
  std::vector<std::int32_t> zeros;        // empty: none
  float tensor_scale = 1.0f;
  // Stored buffers.
  std::vector<std::uint8_t> codes, scales, zero_bytes;
  std::vector<recipe::TensorScale> ts;
  std::unique_ptr<DeviceBuffer> d_codes, d_scales, d_zeros, d_ts;
  WeightView host, device;
};

// Packs `wt`'s logical content into the layout of (format, packing,
// scale_type) and fills both views.
void Pack(Weights& wt, WeightFormat f, WeightPacking packing, ScaleType st, std::int64_t n, std::int64_t k,
          std::int64_t block) {
  const bool four = matmul::IsFourBit(f);
  const std::int64_t groups = f == WeightFormat::kFp8E4m3PerChannel ? 1 : (k + block - 1) / block;
  ScaleGeometry geometry = ScaleGeometry::kRowGroups;
  if (f == WeightFormat::kFp8E4m3PerChannel) geometry = ScaleGeometry::kPerRow;
  if ((f == WeightFormat::kNvfp4 || f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8E4m3) && k % block == 0) {
    geometry = ScaleGeometry::kFlatBlocks;  // lowbit's default MX / NVFP4 layout (same indices as row groups here)
  }
  // Codes.
  if (packing == WeightPacking::kLowbit) {
    if (four) {
      wt.codes.assign((n * k + 1) / 2, 0);
      for (std::int64_t i = 0; i < n * k; ++i) wt.codes[i / 2] |= (wt.q[i] & 0xF) << ((i & 1) * 4);
    } else {
      wt.codes = wt.q;
    }
  } else {
    std::vector<std::uint8_t> qt(n * k);  // [K][N]
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = 0; c < k; ++c) qt[c * n + r] = wt.q[r * k + c];
    std::vector<std::uint32_t> words(packing == WeightPacking::kGptq ? (k / 8) * n : k * (n / 8));
    if (packing == WeightPacking::kGptq) {
      block::PackGptqQweight(qt.data(), k, n, words.data());
    } else {
      block::PackAwq(qt.data(), k, n, words.data());
    }
    wt.codes.resize(words.size() * 4);
    std::memcpy(wt.codes.data(), words.data(), wt.codes.size());
  }
  // Scales: [n][group] for lowbit (flat blocks index the same when K is a
  // multiple of the block), [group][n] for GPTQ / AWQ.
  const std::size_t sb = matmul::ScaleBytes(st);
  wt.scales.assign(n * groups * sb, 0);
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::uint32_t bits = wt.scale_bits[r * groups + g];
      const std::int64_t idx = packing == WeightPacking::kLowbit ? r * groups + g : g * n + r;
      std::memcpy(wt.scales.data() + idx * sb, &bits, sb);  // little-endian low bytes
    }
  }
  // Zero points.
  if (!wt.zeros.empty()) {
    if (packing == WeightPacking::kLowbit) {
      wt.zero_bytes.resize(wt.zeros.size() * 4);
      std::memcpy(wt.zero_bytes.data(), wt.zeros.data(), wt.zero_bytes.size());
    } else {
      std::vector<std::uint8_t> zt(groups * n);  // [group][N]
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t g = 0; g < groups; ++g) zt[g * n + r] = static_cast<std::uint8_t>(wt.zeros[r * groups + g]);
      std::vector<std::uint32_t> words(groups * (n / 8));
      if (packing == WeightPacking::kGptq) {
        block::PackGptqQzeros(zt.data(), groups, n, words.data());
      } else {
        block::PackAwq(zt.data(), groups, n, words.data());
      }
      wt.zero_bytes.resize(words.size() * 4);
      std::memcpy(wt.zero_bytes.data(), words.data(), wt.zero_bytes.size());
    }
  }
  if (f == WeightFormat::kNvfp4) {
    recipe::TensorScale t;
    t.decode = wt.tensor_scale;
    wt.ts = {t};
  }
  const std::int64_t blk = f == WeightFormat::kFp8E4m3PerChannel ? 0 : block;
  wt.host = matmul::DenseWeights(f, packing, geometry, st, n, k, blk, 1, wt.codes.data(), wt.scales.data(),
                                 wt.zeros.empty() ? nullptr : wt.zero_bytes.data(), wt.ts.empty() ? nullptr : wt.ts.data());
  auto upload = [](const void* p, std::size_t bytes) {
    auto d = std::make_unique<DeviceBuffer>(bytes);
    cudaMemcpy(d->get(), p, bytes, cudaMemcpyHostToDevice);
    return d;
  };
  wt.d_codes = upload(wt.codes.data(), wt.codes.size());
  wt.d_scales = upload(wt.scales.data(), wt.scales.size());
  wt.device = wt.host;
  wt.device.codes = wt.d_codes->get();
  wt.device.scales = wt.d_scales->get();
  if (!wt.zeros.empty()) {
    wt.d_zeros = upload(wt.zero_bytes.data(), wt.zero_bytes.size());
    wt.device.zeros = wt.d_zeros->get();
  }
  if (!wt.ts.empty()) {
    wt.d_ts = upload(wt.ts.data(), sizeof(recipe::TensorScale));
    wt.device.tensor_scale = wt.d_ts->get<recipe::TensorScale>();
  }
}

std::vector<std::uint16_t> RandomActivations(std::mt19937& rng, std::int64_t count) {
  std::vector<std::uint16_t> x(count);
  std::uniform_int_distribution<int> exp(-6, 6), man(0, 127), sign(0, 1), zero(0, 31);
  for (auto& v : x) {
    v = zero(rng) == 0 ? 0 : static_cast<std::uint16_t>((sign(rng) << 15) | ((127 + exp(rng)) << 7) | man(rng));
  }
  return x;
}

std::int64_t DefaultBlock(WeightFormat f) {
  switch (f) {
    case WeightFormat::kNvfp4: return matmul::kNvfp4Block;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: return matmul::kMxBlock;
    case WeightFormat::kFp8E4m3PerChannel: return 0;
    default: return matmul::kDefaultIntGroup;
  }
}

// Random codes and in-range scales (with the extremes each format has) for
// one weight kind.
std::unique_ptr<Weights> RandomWeights(std::mt19937& rng, WeightFormat f, WeightPacking packing, ScaleType st,
                                       std::int64_t n, std::int64_t k, bool with_zeros) {
  auto wt = std::make_unique<Weights>();
  const std::int64_t block = DefaultBlock(f);
  const std::int64_t groups = f == WeightFormat::kFp8E4m3PerChannel ? 1 : (k + block - 1) / block;
  const bool four = matmul::IsFourBit(f);
  std::uniform_int_distribution<int> nib(0, 15), byte(0, 255);
  wt->q.resize(n * k);
  for (auto& c : wt->q) {
    if (four) {
      c = static_cast<std::uint8_t>(nib(rng));
    } else {
      do c = static_cast<std::uint8_t>(byte(rng));
      while ((c & 0x7F) == 0x7F);  // E4M3 NaN codes only where a test puts them
    }
  }
  wt->scale_bits.resize(n * groups);
  for (auto& b : wt->scale_bits) {
    switch (st) {
      case ScaleType::kUe4m3: b = std::uniform_int_distribution<int>(0, 126)(rng); break;  // every finite UE4M3
      case ScaleType::kE8m0: b = std::uniform_int_distribution<int>(127 - 12, 127 + 12)(rng); break;
      case ScaleType::kFp16: b = ((15 + std::uniform_int_distribution<int>(-8, 2)(rng)) << 10) | nib(rng) * 64 + nib(rng); break;
      case ScaleType::kBf16: b = ((127 + std::uniform_int_distribution<int>(-8, 2)(rng)) << 7) | byte(rng) / 2; break;
      case ScaleType::kFp32: {
        const float v = std::ldexp(std::uniform_real_distribution<float>(0.5f, 2.0f)(rng), -6);
        std::memcpy(&b, &v, 4);
        break;
      }
    }
  }
  if (with_zeros) {
    wt->zeros.resize(n * groups);
    for (auto& z : wt->zeros) z = nib(rng);
  }
  wt->tensor_scale = std::ldexp(1.3717f, -5);
  // Extremes in rows 0..2 (N >= 3 everywhere here).
  if (f == WeightFormat::kNvfp4) {
    wt->scale_bits[0] = 0x7F;                        // UE4M3 NaN scale: column 0 NaN
    wt->scale_bits[groups + 1] = 0x01;               // smallest subnormal scale 2^-9
    for (std::int64_t i = 0; i < 16 && i < k; ++i) wt->q[2 * k + i] = 0;  // an all-zero block
  } else if (f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8E4m3) {
    wt->scale_bits[0] = 0xFF;                        // E8M0 NaN: column 0 NaN
    wt->scale_bits[groups] = 0x00;                   // 2^-127 (MXFP8: under BF16's subnormals)
    wt->scale_bits[2 * groups] = 127 + 100;
  } else if (f == WeightFormat::kFp8E4m3PerChannel) {
    wt->q[5] = 0x7F;                                 // E4M3 NaN code: column 0 NaN
  }
  Pack(*wt, f, packing, st, n, k, block);
  return wt;
}

struct CheckResult {
  double max_ratio = 0;
  std::int64_t checked = 0, nans = 0, failures = 0;
};

// Runs the GEMM (or W4A4 when `w4a4`) on device copies of x and wt, poisons
// y first, and checks every output against the exact mode within the bound.
// For W4A4 the exact product is of the quantized activations the kernel
// wrote (checked against the model separately) and the weights.
CheckResult RunAndCheck(const std::vector<std::uint16_t>& x, std::int64_t m, const Weights& wt, OutputType out,
                        const std::string& label, bool w4a4 = false, std::vector<std::uint16_t>* a_out = nullptr,
                        float* ta_out = nullptr) {
  CheckResult r;
  const std::int64_t n = wt.host.n, k = wt.host.k;
  const std::size_t ob = matmul::OutputBytes(out);
  DeviceBuffer dx(x.size() * 2), dy(m * n * ob);
  cudaMemcpy(dx.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice);
  EXPECT_EQ(cudaMemset(dy.get(), 0xFF, m * n * ob), cudaSuccess);  // poison: NaN in every output type
  MatmulProblem p;
  p.w = wt.device;
  p.m = m;
  p.x = {matmul::ActivationType::kBf16, dx.get(), m * k, k, 0};
  p.y = {out, dy.get(), m * n, n, 0};
  std::unique_ptr<DeviceBuffer> ws;
  Status st;
  if (w4a4) {
    ws = std::make_unique<DeviceBuffer>(GemmW4A4WorkspaceBytes(m, k));
    st = GemmW4A4Nvfp4(p, Nvfp4Te(), ws->get());
  } else {
    st = Gemm(p);
  }
  EXPECT_TRUE(st.ok) << label << ": " << st.message;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint8_t> ybytes(m * n * ob);
  cudaMemcpy(ybytes.data(), dy.get(), ybytes.size(), cudaMemcpyDeviceToHost);
  std::vector<std::uint16_t> a = x;
  float ta = 1.0f;
  if (w4a4) {
    std::vector<std::uint8_t> host(GemmW4A4WorkspaceBytes(m, k));
    cudaMemcpy(host.data(), ws->get(), host.size(), cudaMemcpyDeviceToHost);
    std::memcpy(a.data(), host.data(), m * k * 2);
    recipe::TensorScale t;
    std::memcpy(&t, host.data() + GemmW4A4TensorScaleOffset(m, k), sizeof(t));
    ta = t.decode;
    if (a_out != nullptr) *a_out = a;
    if (ta_out != nullptr) *ta_out = ta;
  }
  // The oracle over host copies.
  std::vector<std::uint8_t> yhost(m * n * ob);
  MatmulProblem h;
  h.w = wt.host;
  h.m = m;
  h.x = {matmul::ActivationType::kBf16, a.data(), m * k, k, 0};
  h.y = {out, yhost.data(), m * n, n, 0};
  const matmul::ExactMatmulResult exact = matmul::ExactMatmul(h);
  EXPECT_TRUE(exact.status.ok) << exact.status.error;
  if (!exact.status.ok) return r;
  const matmul::GemmErrorModel model = GemmErrorModelOf(wt.host.format, out, w4a4);
  for (std::int64_t row = 0; row < m; ++row) {
    for (std::int64_t col = 0; col < n; ++col) {
      const std::int64_t i = row * n + col;
      double got;
      if (out == OutputType::kFp32) {
        float f;
        std::memcpy(&f, ybytes.data() + i * 4, 4);
        got = f;
      } else {
        std::uint16_t b;
        std::memcpy(&b, ybytes.data() + i * 2, 2);
        got = DecodeToF64(out == OutputType::kBf16 ? kBf16 : kFp16, b);
      }
      // ta: W4A4's activation tensor scale (1 otherwise); this double
      // product's 2^-53 is in the allowance below.
      const double want = exact.nearest[i] * ta;
      ++r.checked;
      const double out_max = out == OutputType::kFp16 ? 65504.0 : out == OutputType::kBf16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
      if (std::fabs(want) > out_max) {
        // Beyond the output's range (outside the bound's domain): the largest
        // finite value or the infinity of the same sign.
        if (!((std::isinf(got) || std::fabs(got) == out_max) && (got > 0) == (want > 0)) && ++r.failures <= 5) {
          ADD_FAILURE() << label << " y[" << row << "," << col << "] = " << got << ", exact " << want << " overflows";
        }
        continue;
      }
      if (std::isnan(want)) {
        ++r.nans;
        if (!std::isnan(got) && ++r.failures <= 5) ADD_FAILURE() << label << " y[" << row << "," << col << "] = " << got << ", want NaN";
        continue;
      }
      matmul::GemmBoundTerms terms = matmul::BoundTermsOf(h, 0, row, col);
      terms.abs_scale *= std::fabs(static_cast<double>(ta));
      const double bound = matmul::GemmErrorBound(model, terms) + std::ldexp(terms.abs_scale * terms.sum_abs_xw, -50);
      const double err = std::fabs(got - want);
      if (!(err <= bound)) {
        if (++r.failures <= 5) {
          ADD_FAILURE() << label << " y[" << row << "," << col << "] = " << got << " exact " << want << " err " << err
                        << " bound " << bound;
        }
        continue;
      }
      if (bound > 0) r.max_ratio = std::max(r.max_ratio, err / bound);
    }
  }
  std::printf("[gemm] %-44s %s outputs %lld (NaN %lld)  max error / bound = %.3g\n", label.c_str(),
              UsesTensorCores(p) ? "mma " : "fp32", static_cast<long long>(r.checked), static_cast<long long>(r.nans),
              r.max_ratio);
  return r;
}

struct Shape {
  std::int64_t m, n, k;
};

struct Kind {
  const char* name;
  WeightFormat f;
  WeightPacking packing;
  ScaleType st;
  bool zeros;
};

void RunKind(const Kind& kind, OutputType out, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const bool words = kind.packing != WeightPacking::kLowbit;
  // Odd N and M not a multiple of the tile; GPTQ / AWQ need N % 8 == 0. The
  // last shape's K (200) is not a multiple of 32: the FP32 fallback.
  const std::vector<Shape> shapes = words ? std::vector<Shape>{{128, 128, 256}, {200, 136, 384}, {130, 264, 1024}}
                                          : std::vector<Shape>{{128, 128, 256}, {200, 131, 384}, {130, 257, 1024}, {129, 33, 208}};
  double worst = 0;
  for (const Shape& s : shapes) {
    auto wt = RandomWeights(rng, kind.f, kind.packing, kind.st, s.n, s.k, kind.zeros);
    const std::vector<std::uint16_t> x = RandomActivations(rng, s.m * s.k);
    const std::string label = std::string(kind.name) + " " + matmul::OutputTypeName(out) + " " + std::to_string(s.m) +
                              "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const CheckResult r = RunAndCheck(x, s.m, *wt, out, label);
    EXPECT_EQ(r.failures, 0) << label;
    if (!matmul::IsIntegerFormat(kind.f)) EXPECT_GT(r.nans, 0) << label << ": the NaN column was not checked";
    worst = std::max(worst, r.max_ratio);
  }
  EXPECT_GT(worst, 0.0) << "no output had an error: the check cannot tell a rounding model from an exact one";
}

const Kind kKinds[] = {
    {"nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, false},
    {"mxfp4", WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, false},
    {"mxfp8-e4m3", WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, false},
    {"int4-g128 fp32 scales", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, false},
    {"int4-g128 fp16 scales", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp16, false},
    {"uint4-g128 fp32 scales + zeros", WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kFp32, true},
    {"uint4-gptq-fp16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, true},
    {"uint4-gptq-bf16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kBf16, true},
    {"uint4-awq-fp16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kFp16, true},
    {"uint4-awq-bf16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kBf16, true},
    {"e4m3-channel", WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, false},
};

class GemmKinds : public ::testing::TestWithParam<int> {};

TEST_P(GemmKinds, WithinBoundFp32Output) {
  LOWBIT_REQUIRE_GPU();
  RunKind(kKinds[GetParam()], OutputType::kFp32, 100 + GetParam());
}
INSTANTIATE_TEST_SUITE_P(AllWeightKinds, GemmKinds, ::testing::Range(0, static_cast<int>(std::size(kKinds))),
                         [](const ::testing::TestParamInfo<int>& info) { return "kind" + std::to_string(info.param); });

TEST(Gemm, Nvfp4Bf16AndFp16OutputWithinBound) {
  LOWBIT_REQUIRE_GPU();
  RunKind(kKinds[0], OutputType::kBf16, 2);
  RunKind(kKinds[0], OutputType::kFp16, 3);
}

// W4A4: the quantized activations are the model's, bit for bit, and the
// product of the two NVFP4 operands is within the bound (the activations'
// values e2m1 * ue4m3 exact, their tensor scale the second epilogue multiply).
TEST(Gemm, W4A4Nvfp4MatchesModelAndBound) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(8);
  for (const Shape& s : {Shape{128, 128, 256}, Shape{200, 131, 384}, Shape{130, 257, 1024}}) {
    auto wt = RandomWeights(rng, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, s.n, s.k, false);
    wt->scale_bits[0] = 0x38;  // no NaN column here
    Pack(*wt, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, s.n, s.k, 16);
    const std::vector<std::uint16_t> x = RandomActivations(rng, s.m * s.k);
    std::vector<std::uint16_t> a;
    float ta = 0;
    const std::string label = "w4a4 nvfp4 " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    const CheckResult r = RunAndCheck(x, s.m, *wt, OutputType::kFp32, label, true, &a, &ta);
    EXPECT_EQ(r.failures, 0);
    // The model: tensor scale from the amax of all of x, then each block.
    std::vector<float> xf(x.size());
    float amax = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      xf[i] = Bf16Value(x[i]);
      amax = std::max(amax, std::fabs(xf[i]));
    }
    const recipe::Recipe& te = Nvfp4Te();
    const recipe::TensorScale t = recipe::ChooseTensorScale(te, amax);
    EXPECT_EQ(ta, t.decode);
    std::int64_t mismatches = 0;
    for (std::size_t b = 0; b < x.size() / 16; ++b) {
      std::uint8_t codes[16];
      const float* block_x = xf.data() + b * 16;
      const recipe::BlockScale scale = recipe::ChooseScale(te, recipe::StatsOf(te, block_x, 16), t);
      for (int i = 0; i < 16; ++i) codes[i] = recipe::EncodeElement(te, scale, block_x[i]);
      const std::uint8_t sc = scale.code;
      for (int i = 0; i < 16; ++i) {
        const float want = static_cast<float>(DecodeToF64(kE2m1, codes[i]) * DecodeToF64(kUe4m3, sc & 0x7F));
        if (a[b * 16 + i] != Bf16Bits(want) && ++mismatches <= 5) {
          ADD_FAILURE() << "activation " << b * 16 + i << ": kernel " << Bf16Value(a[b * 16 + i]) << ", model " << want;
        }
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}

// The bound is tight on the hardware for the weight-rounding term: INT4 with
// every (q - z) * s = s = FP16(1 + 2^-8 - 2^-10), which BF16 rounds to 1
// (a relative error of 0.75 of its unit roundoff), and x = 1: the kernel's
// sum is exactly K, the exact one K * s.
TEST(Gemm, Int4RoundingReachesBound) {
  LOWBIT_REQUIRE_GPU();
  const std::int64_t m = 128, n = 128, k = 512;
  Weights wt;
  wt.q.assign(n * k, 1);
  wt.scale_bits.assign(n * (k / 128), (15u << 10) | 3u);  // FP16 1 + 3 * 2^-10
  Pack(wt, WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp16, n, k, 128);
  const std::vector<std::uint16_t> x(m * k, Bf16Bits(1.0f));
  const CheckResult r = RunAndCheck(x, m, wt, OutputType::kFp32, "int4 tight case");
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
  Weights wt;
  wt.q.assign(n * k, 0x01);                                    // E4M3 2^-9
  for (std::int64_t r = 0; r < n; ++r) wt.q[r * k] = 0x38;     // E4M3 1.0
  wt.scale_bits.assign(n, 0x3F800000u);                        // FP32 1.0
  Pack(wt, WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, n, k, 0);
  std::vector<std::uint16_t> x(m * k, Bf16Bits(std::ldexp(1.875f, -15)));
  for (std::int64_t r = 0; r < m; ++r) x[r * k] = Bf16Bits(1.0f);
  const CheckResult r = RunAndCheck(x, m, wt, OutputType::kFp32, "tensor-core truncation case");
  EXPECT_EQ(r.failures, 0);
}

TEST(Gemm, BadArgumentsAreErrors) {
  LOWBIT_REQUIRE_GPU();
  const std::int64_t m = 128, n = 16, k = 64;
  std::mt19937 rng(9);
  auto wt = RandomWeights(rng, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, n, k, false);
  DeviceBuffer x(m * k * 2), y(m * n * 4), ws(GemmW4A4WorkspaceBytes(m, k));
  MatmulProblem p;
  p.w = wt->device;
  p.m = m;
  p.x = {matmul::ActivationType::kBf16, x.get(), m * k, k, 0};
  p.y = {OutputType::kFp32, y.get(), m * n, n, 0};
  EXPECT_TRUE(Gemm(p).ok);
  MatmulProblem bad = p;
  bad.w.scales_count -= 1;  // a scale buffer of the wrong size
  EXPECT_NE(Gemm(bad).message.find("scales"), std::string::npos) << Gemm(bad).message;
  bad = p;
  bad.x.type = matmul::ActivationType::kFp16;
  EXPECT_NE(Gemm(bad).message.find("BF16"), std::string::npos);
  bad = p;
  std::vector<std::uint8_t> host(wt->codes);
  bad.w.codes = host.data();
  EXPECT_FALSE(Gemm(bad).ok);
  bad = p;
  bad.m = 0;
  EXPECT_FALSE(Gemm(bad).ok);
  bad = p;
  bad.y.data = x.get();  // y overlaps x
  bad.y.count = m * n / 2;
  EXPECT_FALSE(Gemm(bad).ok);
  std::vector<std::uint8_t> ws_host(16);
  EXPECT_FALSE(GemmW4A4Nvfp4(p, Nvfp4Te(), ws_host.data()).ok);
  EXPECT_FALSE(GemmW4A4Nvfp4(p, *recipe::FindRecipe("mxfp4", "te"), ws.get()).ok);  // not an NVFP4 recipe
  EXPECT_TRUE(GemmW4A4Nvfp4(p, Nvfp4Te(), ws.get()).ok);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace lowbit::cuda::gemm
