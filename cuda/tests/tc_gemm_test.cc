// The tensor-core GEMM (cuda/src/tc_matmul/tc_gemm.h) on the GPU, bit for
// bit against the model:
//  - its dequantizing pass (both kernels, operand_dequantize.cu) against
//    matmul::DequantizeToOperand (the model's WeightOperand) on every
//    element code x scale code of NVFP4, MXFP4 and MXFP8, every offset
//    -15..15 x every FP16 / BF16 scale, FP32 scales at the operand's ties,
//    zero points far from the codes (the model's own path) and random
//    weights of every kind (the hardware BF16 rounding the run kernels use:
//    bf16_pair_test.cu); GPTQ words on and off the edges of the GPTQ
//    kernel's tiles (N, K, groups, L), every code against every zero point
//    with special scales, and words the kernel cannot read 16 bytes at a
//    time;
//  - every output of random problems against matmul::QuantizedMatmulModel
//    under TcGemmSchedule: every weight format and packing, M = 1, 3, 16, 17,
//    128, 130, N and K off the tiles (odd N, K not a multiple of 8, 16 or
//    64), L = 2, strided and misaligned x and y, FP32 / BF16 / FP16 output,
//    NaN / Inf / zero blocks and the extreme scales (tc_gemv_cases.h);
//  - batch invariance: row r of y has the same bits at M = 1, 16, 128 and
//    4096;
//  - bad arguments: one line each, nothing launched.
// Skipped without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"
#include "tc_gemv_cases.h"
#include "tc_matmul/operand_dequantize.h"
#include "tc_matmul/tc_gemm.h"

namespace lowbit::cuda::tc_gemm {
namespace {

using ::lowbit::cuda::testing::DeviceVector;
using matmul::OutputType;
using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

int HostThreads() {
  return static_cast<int>(std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1);
}

// A weight's host buffers (any format and packing) and their device copies.
struct HostWeights {
  WeightFormat format = WeightFormat::kNvfp4;
  WeightPacking packing = WeightPacking::kLowbit;
  ScaleGeometry geometry = ScaleGeometry::kRowGroups;
  ScaleType scale_type = ScaleType::kUe4m3;
  std::int64_t n = 1, k = 1, block = 16, batch = 1;
  std::vector<std::uint8_t> codes;   // bytes (GPTQ / AWQ: the words' bytes)
  std::vector<std::uint8_t> scales;  // ScaleBytes(scale_type) each
  std::vector<std::uint8_t> zeros;   // int32 (lowbit) or words; empty: none
  std::vector<recipe::TensorScale> tensor_scales;
  // GPTQ / AWQ words laid out off the dense layout (WordsOffTheDenseLayout):
  // `codes_lead` words before batch 0's, batches `codes_batch_stride` words
  // apart (0: dense).
  std::int64_t codes_lead = 0, codes_batch_stride = 0;

  matmul::WeightView View(const void* c, const void* s, const void* z, const recipe::TensorScale* t) const {
    matmul::WeightView v = matmul::DenseWeights(format, packing, geometry, scale_type, n, k, block, batch, c, s,
                                                zeros.empty() ? nullptr : z, format == WeightFormat::kNvfp4 ? t : nullptr);
    if (c != nullptr) v.codes = static_cast<const std::uint32_t*>(c) + codes_lead;
    if (codes_batch_stride != 0) {
      v.codes_count = (batch - 1) * codes_batch_stride + v.codes_batch_stride;
      v.codes_batch_stride = codes_batch_stride;
    }
    return v;
  }
  matmul::WeightView HostView() const { return View(codes.data(), scales.data(), zeros.data(), tensor_scales.data()); }
  std::string Describe() const {
    return std::string(matmul::WeightFormatName(format)) + "/" + matmul::WeightPackingName(packing) + "/" +
           matmul::ScaleTypeName(scale_type) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
           " L=" + std::to_string(batch) + (zeros.empty() ? "" : " zeros");
  }
};

struct DeviceWeights {
  explicit DeviceWeights(const HostWeights& h)
      : codes(h.codes), scales(h.scales), zeros(h.zeros), tensor(h.tensor_scales),
        view(h.View(codes.p, scales.p, zeros.p, tensor.p)) {}
  DeviceVector<std::uint8_t> codes, scales, zeros;
  DeviceVector<recipe::TensorScale> tensor;
  matmul::WeightView view;
};

// A 16-bit scale near 1, or (extremes) anything but NaN / Inf often.
std::uint16_t DrawHalfScale(std::mt19937& rng, ScaleType t, bool extremes) {
  if (t == ScaleType::kBf16) {
    if (extremes && rng() % 4 == 0) return static_cast<std::uint16_t>(rng() % 0x7F80 | (rng() % 2) << 15);
    return static_cast<std::uint16_t>((120 + rng() % 8) << 7 | (rng() & 0x7F));
  }
  if (extremes && rng() % 4 == 0) return static_cast<std::uint16_t>(rng() % 0x7C00 | (rng() % 2) << 15);
  return static_cast<std::uint16_t>((10 + rng() % 6) << 10 | (rng() & 0x3FF));
}

// Random weights of one kind: buffers sized by PerBatchSizes, random codes,
// scales near 1 or (extremes) over the whole range with NaN sometimes.
// `block` > 0 sets an integer format's group.
HostWeights DrawWeights(std::mt19937& rng, WeightFormat f, WeightPacking packing, ScaleType st, std::int64_t n,
                        std::int64_t k, std::int64_t batch, bool with_zeros, bool extremes, std::int64_t block = 0) {
  HostWeights h;
  h.format = f, h.packing = packing, h.scale_type = st, h.n = n, h.k = k, h.batch = batch;
  h.block = f == WeightFormat::kNvfp4 ? matmul::kNvfp4Block
            : (f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8E4m3) ? matmul::kMxBlock
                                                                            : matmul::kDefaultIntGroup;
  if (matmul::IsIntegerFormat(f) && packing == WeightPacking::kLowbit) {
    static constexpr std::int64_t kGroups[] = {32, 48, 128};  // 48: six runs of eight, not a power of two
    h.block = kGroups[rng() % 3];
  }
  if (matmul::IsIntegerFormat(f) && block > 0) h.block = block;
  h.geometry = f == WeightFormat::kFp8E4m3PerChannel ? ScaleGeometry::kPerRow : ScaleGeometry::kRowGroups;
  if (packing == WeightPacking::kLowbit && f != WeightFormat::kFp8E4m3PerChannel && k % h.block == 0 && rng() % 2) {
    h.geometry = ScaleGeometry::kFlatBlocks;
  }
  if (with_zeros) h.zeros.resize(1);  // marks "has zeros" for the size query
  const matmul::WeightBufferSizes sizes = matmul::PerBatchSizes(h.View(nullptr, nullptr, h.zeros.data(), nullptr));
  const std::size_t code_unit = packing == WeightPacking::kLowbit ? 1 : 4;
  h.codes.resize(static_cast<std::size_t>(sizes.codes * batch) * code_unit);
  for (auto& c : h.codes) c = static_cast<std::uint8_t>(rng());
  const std::size_t scale_bytes = matmul::ScaleBytes(st);
  h.scales.resize(static_cast<std::size_t>(sizes.scales * batch) * scale_bytes);
  for (std::size_t i = 0; i < h.scales.size(); i += scale_bytes) {
    std::uint32_t bits = 0;
    switch (st) {
      case ScaleType::kUe4m3:
      case ScaleType::kE8m0:
        bits = tc_gemv::testing::DrawScale(rng, st == ScaleType::kUe4m3,
                                           extremes ? tc_gemv::testing::ScaleDraw::kExtremes
                                                    : tc_gemv::testing::ScaleDraw::kNearOne);
        break;
      case ScaleType::kFp16:
      case ScaleType::kBf16: bits = DrawHalfScale(rng, st, extremes); break;
      case ScaleType::kFp32: {
        const float v = (extremes && rng() % 4 == 0) ? std::ldexp(1.0f + (rng() % 1000) / 999.0f, static_cast<int>(rng() % 200) - 100)
                                                     : 0.01f + (rng() % 1000) / 1000.0f;
        std::memcpy(&bits, &v, 4);
        break;
      }
    }
    std::memcpy(&h.scales[i], &bits, scale_bytes);
  }
  if (with_zeros) {
    const std::size_t zero_unit = 4;
    h.zeros.assign(static_cast<std::size_t>(sizes.zeros * batch) * zero_unit, 0);
    if (packing == WeightPacking::kLowbit) {
      for (std::size_t i = 0; i < h.zeros.size(); i += 4) {
        // Mostly the codes' range; sometimes far outside it (the model's path).
        const std::int32_t z = extremes && rng() % 8 == 0 ? static_cast<std::int32_t>(rng() % 2000) - 1000
                                                          : static_cast<std::int32_t>(rng() % 16);
        std::memcpy(&h.zeros[i], &z, 4);
      }
    } else {
      for (auto& b : h.zeros) b = static_cast<std::uint8_t>(rng());
    }
  }
  if (f == WeightFormat::kNvfp4) {
    static constexpr float kTensorScales[] = {1.0f, 0.0078125f, 0.3f, 3.0f, 3.0e-6f, 1.5e30f, 1.0e-40f};
    for (std::int64_t l = 0; l < batch; ++l) {
      recipe::TensorScale t;
      t.decode = kTensorScales[rng() % (extremes ? 7 : 4)];
      h.tensor_scales.push_back(t);
    }
  }
  EXPECT_TRUE(matmul::ValidateWeights(h.HostView()).ok) << h.Describe() << ": " << matmul::ValidateWeights(h.HostView()).error;
  return h;
}

// Every weight format and packing, with every scale type each takes
// (weights.h FormatCombinationError) at least once across the list.
struct WeightKind {
  WeightFormat f;
  WeightPacking p;
  ScaleType s;
  bool zeros;
};
const WeightKind kWeightKinds[] = {{WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, false},
                                   {WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, false},
                                   {WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, false},
                                   {WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, false},
                                   {WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kFp32, true},
                                   {WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kFp16, true},
                                   {WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kBf16, true},
                                   {WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, true},
                                   {WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kBf16, true},
                                   {WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, false}};
constexpr int kWeightKindCount = static_cast<int>(sizeof(kWeightKinds) / sizeof(kWeightKinds[0]));

// ---- the dequantizing pass ------------------------------------------------------

// Runs the pass and compares the operand (NaN = NaN) and outer scales with the model.
void ExpectOperandIsTheModels(const HostWeights& h) {
  LOWBIT_REQUIRE_GPU();
  ASSERT_TRUE(matmul::ValidateWeights(h.HostView()).ok) << h.Describe() << ": " << matmul::ValidateWeights(h.HostView()).error;
  const DeviceWeights d(h);
  const std::int64_t kp = PaddedK(h.k);
  const std::int64_t rows = h.n + 3;  // three padding rows: +0, scale 1
  DeviceVector<std::uint16_t> operand(static_cast<std::size_t>(h.batch * rows * kp));
  DeviceVector<float> outer(static_cast<std::size_t>(h.batch * rows));
  ASSERT_EQ(DequantizeIntoOperand(d.view, rows, operand.p, outer.p, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<std::uint16_t> got = operand.Get(static_cast<std::size_t>(h.batch * rows * kp));
  const std::vector<float> got_outer = outer.Get(static_cast<std::size_t>(h.batch * rows));
  const matmul::WeightView w = h.HostView();
  int failures = 0;
  std::int64_t checked = 0;
  for (std::int64_t l = 0; l < h.batch; ++l) {
    const matmul::OperandWeights want = matmul::DequantizeToOperand(w, l, kBf16);
    for (std::int64_t n = 0; n < rows; ++n) {
      const float want_outer = n < h.n ? matmul::OuterScaleOf(w, l, n) : 1.0f;
      const float got_o = got_outer[static_cast<std::size_t>(l * rows + n)];
      if (std::memcmp(&want_outer, &got_o, 4) != 0 && failures++ < 5) {
        ADD_FAILURE() << h.Describe() << " outer scale of row " << n << ": " << got_o << ", the model " << want_outer;
      }
      for (std::int64_t k = 0; k < kp; ++k) {
        const std::uint16_t g = got[static_cast<std::size_t>((l * rows + n) * kp + k)];
        const std::uint32_t wc = k < h.k && n < h.n ? want.codes[static_cast<std::size_t>(n * h.k + k)] : 0;
        const bool nan = DecodeToF32(kBf16, g) != DecodeToF32(kBf16, g) && DecodeToF32(kBf16, wc) != DecodeToF32(kBf16, wc);
        ++checked;
        if (g != wc && !nan && failures++ < 5) {
          ADD_FAILURE() << h.Describe() << " W[" << l << "][" << n << "][" << k << "]: operand 0x" << std::hex << g
                        << ", the model 0x" << wc;
        }
      }
    }
  }
  EXPECT_EQ(checked, h.batch * rows * kp);
  EXPECT_EQ(failures, 0) << h.Describe();
}

// Row n holds every element code (twice over K = 2 * codes... ) with every
// scale of row n equal to scale code n: every (code, scale) pair once.
HostWeights EveryPair(WeightFormat f, ScaleType st) {
  HostWeights h;
  h.format = f, h.scale_type = st;
  const bool four = matmul::IsFourBit(f);
  h.block = f == WeightFormat::kNvfp4 ? 16 : 32;
  h.k = four ? 32 : 256;
  h.n = st == ScaleType::kUe4m3 ? 128 : 256;
  for (std::int64_t n = 0; n < h.n; ++n) {
    for (std::int64_t k = 0; k < h.k; k += four ? 2 : 1) {
      h.codes.push_back(four ? static_cast<std::uint8_t>((k % 16) | ((k + 1) % 16) << 4) : static_cast<std::uint8_t>(k));
    }
    for (std::int64_t b = 0; b < h.k / h.block; ++b) h.scales.push_back(static_cast<std::uint8_t>(n));
  }
  if (f == WeightFormat::kNvfp4) h.tensor_scales.push_back({1.0f, 0.5f});
  return h;
}

TEST(TcGemmOperand, Nvfp4EveryPair) { ExpectOperandIsTheModels(EveryPair(WeightFormat::kNvfp4, ScaleType::kUe4m3)); }
TEST(TcGemmOperand, Mxfp4EveryPair) { ExpectOperandIsTheModels(EveryPair(WeightFormat::kMxfp4, ScaleType::kE8m0)); }
TEST(TcGemmOperand, Mxfp8EveryPair) { ExpectOperandIsTheModels(EveryPair(WeightFormat::kMxfp8E4m3, ScaleType::kE8m0)); }

// UINT4 with zero points: row s has scale bits s (every FP16 / BF16 code),
// 32 elements whose offsets q - z cover -15..15 (codes 0..15 against zero
// 15, then codes 0..15 against zero 0, in two groups of 16).
void EveryOffsetAndScale(ScaleType st) {
  HostWeights h;
  h.format = WeightFormat::kUint4, h.scale_type = st, h.block = 16, h.n = 65536, h.k = 32;
  for (std::int64_t n = 0; n < h.n; ++n) {
    for (int k = 0; k < 32; k += 2) h.codes.push_back(static_cast<std::uint8_t>((k % 16) | ((k + 1) % 16) << 4));
    for (int g = 0; g < 2; ++g) {
      h.scales.push_back(static_cast<std::uint8_t>(n & 0xFF));
      h.scales.push_back(static_cast<std::uint8_t>(n >> 8));
      const std::int32_t z = g == 0 ? 15 : 0;
      const auto* zb = reinterpret_cast<const std::uint8_t*>(&z);
      h.zeros.insert(h.zeros.end(), zb, zb + 4);
    }
  }
  ExpectOperandIsTheModels(h);
}
// FP32 scales: rows whose scale puts o x s on, and one step either side of,
// a BF16 tie for the odd offsets o (where the FP32 product can round onto a
// tie), in every binade; the row's other offsets see the same scale.
TEST(TcGemmOperand, Uint4OffsetsTimesFp32ScalesAtTies) {
  std::mt19937 rng(29);
  HostWeights h;
  h.format = WeightFormat::kUint4, h.scale_type = ScaleType::kFp32, h.block = 16, h.k = 32;
  std::vector<std::uint32_t> scales;
  for (int e = -140; e <= 127; ++e) {
    for (int o = 3; o <= 15; o += 2) {
      const std::uint32_t m = static_cast<std::uint32_t>(rng() % 128);
      const float s = static_cast<float>(std::ldexp(1.0 + (m + 0.5) / 128.0, e) / o);
      if (!std::isfinite(s) || s == 0.0f) continue;
      std::uint32_t b = 0;
      std::memcpy(&b, &s, 4);
      for (const int d : {-1, 0, 1}) scales.push_back(static_cast<std::uint32_t>(static_cast<std::int64_t>(b) + d));
    }
  }
  h.n = static_cast<std::int64_t>(scales.size());
  for (const std::uint32_t s : scales) {
    for (int k = 0; k < 32; k += 2) h.codes.push_back(static_cast<std::uint8_t>((k % 16) | ((k + 1) % 16) << 4));
    for (int g = 0; g < 2; ++g) {
      const auto* sb = reinterpret_cast<const std::uint8_t*>(&s);
      h.scales.insert(h.scales.end(), sb, sb + 4);
      const std::int32_t z = g == 0 ? 15 : 0;
      const auto* zb = reinterpret_cast<const std::uint8_t*>(&z);
      h.zeros.insert(h.zeros.end(), zb, zb + 4);
    }
  }
  ExpectOperandIsTheModels(h);
}

TEST(TcGemmOperand, Uint4EveryOffsetTimesEveryFp16Scale) { EveryOffsetAndScale(ScaleType::kFp16); }
TEST(TcGemmOperand, Uint4EveryOffsetTimesEveryBf16Scale) { EveryOffsetAndScale(ScaleType::kBf16); }

// Random weights of every kind, extremes included (non-finite scales, far
// zero points, NaN FP8 elements); K a multiple of 8 (the run kernels where
// the packing and groups allow) and not (the general kernel); GPTQ / AWQ
// words; groups that do not divide K.
TEST(TcGemmOperand, RandomWeightsOfEveryKind) {
  std::mt19937 rng(7);
  int drawn = 0;
  for (const WeightKind& kind : kWeightKinds) {
    for (const bool extremes : {false, true}) {
      const bool gptq_awq = kind.p != WeightPacking::kLowbit;
      for (const std::int64_t k : {gptq_awq ? std::int64_t{256} : std::int64_t{300}, std::int64_t{264}}) {
        const std::int64_t n = gptq_awq ? 40 : 37;
        ExpectOperandIsTheModels(DrawWeights(rng, kind.f, kind.p, kind.s, n, k, 2, kind.zeros, extremes));
        ++drawn;
      }
    }
  }
  EXPECT_EQ(drawn, kWeightKindCount * 2 * 2);
}

// ---- GPTQ words (operand_dequantize.cu GptqTilesKernel) ------------------------

// The kernel reads tiles of 16 words along K by 64 columns, four K tiles a
// block. Shapes on and off those edges: N a multiple of 8 below, on and past
// 64 (8, 64, 72, 200); K of one tile, a tile and a word, and past a block's
// four tiles (128, 136, 520, 1032); groups of one run, groups that straddle
// tiles (48, 136) and a group not a multiple of 8 (20: the general kernel);
// L = 1..3, FP16 / BF16 / FP32 scales, with and without zero points.
TEST(TcGemmOperand, GptqTileEdges) {
  std::mt19937 rng(31);
  const ScaleType scales[] = {ScaleType::kFp16, ScaleType::kBf16, ScaleType::kFp32};
  int drawn = 0;
  for (const std::int64_t n : {8, 64, 72, 200}) {
    for (const std::int64_t k : {128, 136, 520, 1032}) {
      for (const std::int64_t block : {8, 48, 128, 136, 20}) {
        const ScaleType st = scales[drawn % 3];
        const std::int64_t batch = 1 + drawn % 3;
        const bool zeros = drawn % 4 != 3, extremes = drawn % 2 == 1;
        ExpectOperandIsTheModels(
            DrawWeights(rng, WeightFormat::kUint4, WeightPacking::kGptq, st, n, k, batch, zeros, extremes, block));
        ++drawn;
      }
    }
  }
  EXPECT_EQ(drawn, 4 * 4 * 5);
}

// Every code against every zero point 0..15 (qzeros nibble z - 1, weights.h
// ZeroPointOf) in groups of 16: W[l][n][k] has code (k + n + l) mod 16, so
// every group holds all 16 codes, and group g of column n zero point
// (g + n + l) mod 16, so a column's 17 groups take every zero point. Scales
// near 1 with the specials among them: +-0, the smallest subnormal, the
// largest finite, +-Inf (a NaN where the offset is 0) and NaN. N = 200
// (three column tiles and eight columns), K = 272 (34 words: two tiles and
// two words), L = 2.
void GptqEveryCodeAndZeroPoint(ScaleType st) {
  std::mt19937 rng(37);
  HostWeights h;
  h.format = WeightFormat::kUint4, h.packing = WeightPacking::kGptq, h.scale_type = st;
  h.n = 200, h.k = 272, h.block = 16, h.batch = 2;
  const std::int64_t groups = h.k / h.block;
  for (std::int64_t l = 0; l < h.batch; ++l) {
    for (std::int64_t kw = 0; kw < h.k / 8; ++kw) {
      for (std::int64_t n = 0; n < h.n; ++n) {
        std::uint32_t word = 0;
        for (int i = 0; i < 8; ++i) word |= static_cast<std::uint32_t>((8 * kw + i + n + l) % 16) << (4 * i);
        const auto* b = reinterpret_cast<const std::uint8_t*>(&word);
        h.codes.insert(h.codes.end(), b, b + 4);
      }
    }
    for (std::int64_t g = 0; g < groups; ++g) {
      for (std::int64_t c = 0; c < h.n / 8; ++c) {
        std::uint32_t word = 0;
        for (int j = 0; j < 8; ++j) {
          const std::uint32_t z = static_cast<std::uint32_t>((g + 8 * c + j + l) % 16);
          word |= ((z + 15) % 16) << (4 * j);  // stored z - 1
        }
        const auto* b = reinterpret_cast<const std::uint8_t*>(&word);
        h.zeros.insert(h.zeros.end(), b, b + 4);
      }
    }
    const bool fp32 = st == ScaleType::kFp32, bf16 = st == ScaleType::kBf16;
    const std::uint32_t specials[] = {0,
                                      fp32 ? 0x80000000u : 0x8000u,
                                      1,
                                      fp32 ? 0x7F7FFFFFu : bf16 ? 0x7F7Fu : 0x7BFFu,
                                      fp32 ? 0x7F800000u : bf16 ? 0x7F80u : 0x7C00u,
                                      fp32 ? 0xFF800000u : bf16 ? 0xFF80u : 0xFC00u,
                                      fp32 ? 0x7FC00000u : bf16 ? 0x7FC0u : 0x7E00u};
    for (std::int64_t i = 0; i < groups * h.n; ++i) {
      std::uint32_t bits = 0;
      if (rng() % 8 == 0) {
        bits = specials[rng() % std::size(specials)];
      } else if (fp32) {
        const float v = 0.01f + (rng() % 1000) / 1000.0f;
        std::memcpy(&bits, &v, 4);
      } else {
        bits = DrawHalfScale(rng, st, false);
      }
      const auto* b = reinterpret_cast<const std::uint8_t*>(&bits);
      h.scales.insert(h.scales.end(), b, b + matmul::ScaleBytes(st));
    }
  }
  ExpectOperandIsTheModels(h);
}
TEST(TcGemmOperand, GptqEveryCodeAndZeroPointFp16Scales) { GptqEveryCodeAndZeroPoint(ScaleType::kFp16); }
TEST(TcGemmOperand, GptqEveryCodeAndZeroPointBf16Scales) { GptqEveryCodeAndZeroPoint(ScaleType::kBf16); }
TEST(TcGemmOperand, GptqEveryCodeAndZeroPointFp32Scales) { GptqEveryCodeAndZeroPoint(ScaleType::kFp32); }

// `h`'s words moved off the dense layout: `lead` words before them and
// `pad` words after each batch's (filled with 0xA5: never read).
HostWeights WordsOffTheDenseLayout(HostWeights h, std::int64_t lead, std::int64_t pad) {
  const std::size_t per_batch = h.codes.size() / static_cast<std::size_t>(h.batch);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(4 * lead), 0xA5);
  for (std::int64_t l = 0; l < h.batch; ++l) {
    const auto first = h.codes.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * per_batch);
    codes.insert(codes.end(), first, first + static_cast<std::ptrdiff_t>(per_batch));
    codes.insert(codes.end(), static_cast<std::size_t>(4 * pad), 0xA5);
  }
  h.codes = std::move(codes);
  h.codes_lead = lead;
  h.codes_batch_stride = static_cast<std::int64_t>(per_batch / 4) + pad;
  return h;
}

// Words whose 16-byte loads would be misaligned (a codes pointer 4, 8 or 12
// bytes past the allocation's alignment, a batch stride that is not a
// multiple of four words): the kernel reads them a word at a time.
TEST(TcGemmOperand, GptqWordsOffSixteenBytes) {
  std::mt19937 rng(41);
  int drawn = 0;
  for (const std::int64_t lead : {0, 1, 2, 3}) {
    for (const std::int64_t pad : {0, 1, 4}) {
      if (lead == 0 && pad % 4 == 0) continue;  // aligned: the other tests
      const HostWeights h = DrawWeights(rng, WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, 72, 264, 2,
                                        true, drawn % 2 == 1);
      ExpectOperandIsTheModels(WordsOffTheDenseLayout(h, lead, pad));
      ++drawn;
    }
  }
  EXPECT_EQ(drawn, 10);
}

// ---- whole products -----------------------------------------------------------

struct Layout {
  std::int64_t x_row_pad = 0;   // extra elements per row of x
  std::int64_t y_row_pad = 0;
  std::int64_t x_offset = 0;    // elements: 1 makes x misaligned
};

// Runs the GEMM on `h` and x [L][M][K] and checks every output against the
// model; returns y's codes [L][M][N] (empty on failure).
std::vector<std::uint32_t> RunAndExpectModel(const HostWeights& h, const std::vector<std::uint16_t>& x, std::int64_t m,
                                             OutputType out, const Layout& layout = {}) {
  const matmul::AccumulationSchedule schedule = TcGemmSchedule(h.format, out);
  const matmul::QuantizedMatmulResult model =
      matmul::QuantizedMatmulModel(h.HostView(), x.data(), matmul::ActivationType::kBf16, m, schedule, HostThreads());
  EXPECT_EQ(model.error, "") << h.Describe();
  if (!model.error.empty()) return {};
  const DeviceWeights d(h);
  const std::int64_t x_row = h.k + layout.x_row_pad, y_row = h.n + layout.y_row_pad;
  std::vector<std::uint16_t> x_strided(static_cast<std::size_t>(layout.x_offset + h.batch * m * x_row), 0x7FC0);
  for (std::int64_t r = 0; r < h.batch * m; ++r) {
    std::memcpy(&x_strided[static_cast<std::size_t>(layout.x_offset + r * x_row)], &x[static_cast<std::size_t>(r * h.k)],
                static_cast<std::size_t>(h.k) * 2);
  }
  DeviceVector<std::uint16_t> dx(x_strided);
  const std::size_t bytes = matmul::OutputBytes(out);
  const std::int64_t y_count = h.batch * m * y_row;
  // NaN-filled, so an unwritten output shows.
  std::vector<std::uint8_t> poison(static_cast<std::size_t>(y_count) * bytes, 0xFF);
  DeviceVector<std::uint8_t> dy(poison);
  matmul::MatmulProblem p;
  p.w = d.view;
  p.m = m;
  p.x.type = matmul::ActivationType::kBf16;
  p.x.data = dx.p + layout.x_offset;
  p.x.count = (h.batch - 1) * m * x_row + (m - 1) * x_row + h.k;  // exactly what the shape reaches
  p.x.row_stride = x_row;
  p.x.batch_stride = m * x_row;
  p.y.type = out;
  p.y.data = dy.p;
  p.y.count = (h.batch - 1) * m * y_row + (m - 1) * y_row + h.n;
  p.y.row_stride = y_row;
  p.y.batch_stride = m * y_row;
  const std::size_t ws_bytes = TcGemmWorkspaceBytes(p);
  DeviceVector<std::uint8_t> ws(ws_bytes);
  const Status st = RunTcGemm(p, ws.p, ws_bytes, nullptr);
  EXPECT_TRUE(st.ok) << h.Describe() << ": " << st.message;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << h.Describe();
  if (!st.ok) return {};
  const std::vector<std::uint8_t> got_bytes = dy.Get(static_cast<std::size_t>(y_count) * bytes);
  std::vector<std::uint32_t> got(static_cast<std::size_t>(h.batch * m * h.n));
  int failures = 0;
  for (std::int64_t r = 0; r < h.batch * m; ++r) {
    for (std::int64_t n = 0; n < h.n; ++n) {
      std::uint32_t code = 0;
      std::memcpy(&code, &got_bytes[static_cast<std::size_t>((r * y_row + n)) * bytes], bytes);
      const std::size_t i = static_cast<std::size_t>(r * h.n + n);
      got[i] = code;
      if (code != model.y[i] && failures++ < 5) {
        ADD_FAILURE() << h.Describe() << " M=" << m << " out " << matmul::OutputTypeName(out) << " y[" << r << "]["
                      << n << "]: 0x" << std::hex << code << ", the model 0x" << model.y[i];
      }
    }
  }
  EXPECT_EQ(failures, 0) << h.Describe() << " M=" << m;
  // Nothing between y's rows is written (the padding keeps its poison).
  int written_padding = 0;
  for (std::int64_t r = 0; r < h.batch * m; ++r) {
    for (std::int64_t c = h.n; c < y_row; ++c) {
      for (std::size_t b = 0; b < bytes; ++b) {
        written_padding += got_bytes[static_cast<std::size_t>(r * y_row + c) * bytes + b] != 0xFF ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(written_padding, 0) << h.Describe();
  return got;
}

std::vector<std::uint16_t> DrawX(std::mt19937& rng, std::int64_t count, bool specials) {
  std::vector<std::uint16_t> x(static_cast<std::size_t>(count));
  for (auto& v : x) v = tc_gemv::testing::DrawActivation(rng, specials, rng() % 4 == 0);
  return x;
}

TEST(TcGemm, EveryKindEqualsTheModelBitForBit) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(11);
  struct Shape {
    std::int64_t n, k, m, batch;
  };
  const Shape shapes[] = {{264, 200, 128, 1}, {40, 520, 17, 2}, {136, 64, 1, 1}, {8, 1000, 3, 1}, {256, 136, 130, 1}};
  const OutputType outs[] = {OutputType::kFp32, OutputType::kBf16, OutputType::kFp16};
  int run = 0;
  for (const WeightKind& kind : kWeightKinds) {
    for (const Shape& s : shapes) {
      const bool gptq_awq = kind.p != WeightPacking::kLowbit;
      const std::int64_t n = gptq_awq ? (s.n + 7) / 8 * 8 : s.n;
      const std::int64_t k = gptq_awq ? (s.k + 127) / 128 * 128 : s.k;
      const bool extremes = run % 3 == 0, specials = run % 2 == 1;
      const HostWeights h = DrawWeights(rng, kind.f, kind.p, kind.s, n, k, s.batch, kind.zeros, extremes);
      RunAndExpectModel(h, DrawX(rng, s.batch * s.m * k, specials), s.m, outs[run % 3]);
      ++run;
    }
  }
  EXPECT_EQ(run, kWeightKindCount * static_cast<int>(std::size(shapes)));
}

// Odd N (37: y staged), K % 8 != 0 (x staged), padded rows, a misaligned x.
TEST(TcGemm, StridedAndMisalignedBuffers) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(13);
  const HostWeights odd = DrawWeights(rng, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, 37, 100, 2,
                                      false, false);
  RunAndExpectModel(odd, DrawX(rng, 2 * 20 * 100, false), 20, OutputType::kBf16);
  const HostWeights even = DrawWeights(rng, WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, 64, 256, 2,
                                       false, false);
  const std::vector<std::uint16_t> x = DrawX(rng, 2 * 20 * 256, false);
  RunAndExpectModel(even, x, 20, OutputType::kFp32, {8, 4, 0});
  RunAndExpectModel(even, x, 20, OutputType::kFp16, {3, 1, 1});
}

// A row of y has the same bits whatever M the call had.
TEST(TcGemm, RowsAreBatchInvariant) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(17);
  const HostWeights h = DrawWeights(rng, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, 72, 264, 1,
                                    false, false);
  const std::vector<std::uint16_t> x = DrawX(rng, 4096 * 264, false);
  const std::vector<std::uint32_t> y4096 = RunAndExpectModel(h, x, 4096, OutputType::kBf16);
  ASSERT_EQ(y4096.size(), static_cast<std::size_t>(4096 * 72));
  for (const std::int64_t m : {1, 16, 128}) {
    const std::vector<std::uint32_t> y = RunAndExpectModel(h, x, m, OutputType::kBf16);
    ASSERT_EQ(y.size(), static_cast<std::size_t>(m * 72));
    EXPECT_TRUE(std::equal(y.begin(), y.end(), y4096.begin())) << "M = " << m;
  }
}

TEST(TcGemm, BadArgumentsAreOneLineErrors) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(19);
  const HostWeights h = DrawWeights(rng, WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, 64, 64, 1,
                                    false, false);
  const DeviceWeights d(h);
  DeviceVector<std::uint16_t> x(static_cast<std::size_t>(4 * 64));
  DeviceVector<float> y(static_cast<std::size_t>(4 * 64));
  matmul::MatmulProblem p;
  p.w = d.view;
  p.m = 4;
  p.x = {matmul::ActivationType::kBf16, x.p, 4 * 64, 64, 4 * 64};
  p.y = {OutputType::kFp32, y.p, 4 * 64, 64, 4 * 64};
  const std::size_t need = TcGemmWorkspaceBytes(p);
  DeviceVector<std::uint8_t> ws(need);
  Status st = RunTcGemm(p, ws.p, need - 1, nullptr);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("workspace"), std::string::npos) << st.message;
  p.x.type = matmul::ActivationType::kFp16;
  st = RunTcGemm(p, ws.p, need, nullptr);
  EXPECT_NE(st.message.find("BF16"), std::string::npos) << st.message;
  p.x.type = matmul::ActivationType::kBf16;
  std::vector<std::uint16_t> host_x(4 * 64);
  p.x.data = host_x.data();
  st = RunTcGemm(p, ws.p, need, nullptr);
  EXPECT_NE(st.message.find("device memory"), std::string::npos) << st.message;
  EXPECT_EQ(st.message.find('\n'), std::string::npos) << st.message;
  p.x.data = x.p;
  p.m = 0;
  st = RunTcGemm(p, ws.p, need, nullptr);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemm
