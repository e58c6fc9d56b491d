// Random NVFP4 / MXFP4 / MXFP8 / FP8-per-channel / UINT4 GEMV problems for
// the tensor-core GEMV's tests (the
// host warp simulation and the GPU test draw the same cases), biased to where
// bugs live: K not a multiple of the chunk (16), of the K tile (128) or of
// the block, M = 1, 3, 8, 9, 16, odd N, L = 2, blocks of zeros (+0 and -0
// codes), NaN scales, the extreme scales of each scale format, the largest
// codes, activations with zeros, infinities, NaNs and wide exponent spreads.
// Plain gtest and <random> (the GPU machine has no RapidCheck).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::cuda::tc_gemv::testing {

struct GemvCase {
  matmul::WeightFormat format = matmul::WeightFormat::kNvfp4;
  matmul::ScaleGeometry geometry = matmul::ScaleGeometry::kRowGroups;
  // UINT4 (DrawUint4Case): GPTQ or AWQ words, FP16 or BF16 scales, zero
  // points; NVFP4 / MXFP4: lowbit's packing, their scale type.
  matmul::WeightPacking packing = matmul::WeightPacking::kLowbit;
  matmul::ScaleType uint4_scale_type = matmul::ScaleType::kFp16;
  std::int64_t uint4_group = 128;
  std::int64_t n = 1, k = 1, m = 1, batch = 1;
  std::vector<std::uint8_t> codes;   // bytes (GPTQ / AWQ: the words' bytes)
  std::vector<std::uint8_t> scales;  // bytes, or 16-bit scales' bytes
  std::vector<std::uint8_t> zeros;   // GPTQ / AWQ zero words' bytes; empty: none
  std::vector<recipe::TensorScale> tensor_scales;
  std::vector<std::uint16_t> x;  // BF16 or (UINT4 with FP16 scales) FP16 codes, [batch][m][k]

  bool Uint4() const { return format == matmul::WeightFormat::kUint4; }
  bool Channel() const { return format == matmul::WeightFormat::kFp8E4m3PerChannel; }
  matmul::ScaleType ScaleTypeOf() const {
    if (Uint4()) return uint4_scale_type;
    if (Channel()) return matmul::ScaleType::kFp32;
    return format == matmul::WeightFormat::kNvfp4 ? matmul::ScaleType::kUe4m3 : matmul::ScaleType::kE8m0;
  }
  // The activation type the tensor-core GEMV pairs with these weights
  // (tc_gemv_lanes.h TileCodec).
  matmul::ActivationType Activation() const {
    return Uint4() && uint4_scale_type == matmul::ScaleType::kFp16 ? matmul::ActivationType::kFp16
                                                                    : matmul::ActivationType::kBf16;
  }
  matmul::WeightView View() const {
    const bool nvfp4 = format == matmul::WeightFormat::kNvfp4;
    const std::int64_t block = Uint4() ? uint4_group : nvfp4 ? matmul::kNvfp4Block : Channel() ? 0 : matmul::kMxBlock;
    return matmul::DenseWeights(format, packing, geometry, ScaleTypeOf(), n, k, block, batch, codes.data(),
                                scales.data(), zeros.empty() ? nullptr : zeros.data(),
                                nvfp4 ? tensor_scales.data() : nullptr);
  }
  std::string Describe() const {
    return std::string(matmul::WeightFormatName(format)) + "/" + matmul::WeightPackingName(packing) + "/" +
           matmul::ScaleTypeName(ScaleTypeOf()) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
           " M=" + std::to_string(m) + " L=" + std::to_string(batch) +
           (geometry == matmul::ScaleGeometry::kRowGroups  ? " row groups"
            : geometry == matmul::ScaleGeometry::kPerRow ? " per row"
                                                         : " flat blocks");
  }
};

// The output type of the run-th case of a test that cycles through them
// (FP32, FP16, BF16, FP32, ...).
inline matmul::OutputType OutputOfRun(int run) {
  return run % 3 == 1 ? matmul::OutputType::kFp16 : run % 3 == 2 ? matmul::OutputType::kBf16 : matmul::OutputType::kFp32;
}

// How a case draws its scale bytes.
enum class ScaleDraw {
  kNearOne,        // values near 1: products finite, sums meaningful
  kExtremes,       // the format's extremes and NaN often, or any code
  kPlainExtremes,  // only plain codes (tc_gemv_lanes.h ScaleIsPlain), their edges often
};

// A scale byte drawn as `draw` says. The near-1 values are plain, so that
// those cases run the tensor-core GEMV's plain-scale path; the extremes run
// its table path.
inline std::uint8_t DrawScale(std::mt19937& rng, bool nvfp4, ScaleDraw draw) {
  const int pick = static_cast<int>(rng() % 32);
  if (draw == ScaleDraw::kPlainExtremes && pick < 8) {
    static constexpr std::uint8_t kUe4m3Edges[] = {0x08, 0x09, 0x7E, 0x7D};  // smallest normal, largest finite
    static constexpr std::uint8_t kE8m0Edges[] = {0x00, 0x01, 0x80, 0x7F};   // 2^-127, 2^-126, 2^1, 2^0
    return nvfp4 ? kUe4m3Edges[rng() % 4] : kE8m0Edges[rng() % 4];
  }
  if (draw == ScaleDraw::kExtremes) {
    if (nvfp4) {  // UE4M3: 7 bits, 0x7F NaN
      static constexpr std::uint8_t kEdges[] = {0x00, 0x01, 0x07, 0x08, 0x7E, 0x7F, 0x38, 0x37};
      if (pick < 3) return kEdges[rng() % 8];
      if (pick < 8) return static_cast<std::uint8_t>(rng() % 0x7F);
    } else {
      static constexpr std::uint8_t kEdges[] = {0x00, 0x01, 0x7F, 0x80, 0x81, 0xFD, 0xFE, 0xFF};
      if (pick < 3) return kEdges[rng() % 8];
      if (pick < 6) return static_cast<std::uint8_t>(rng() % 256);
    }
  }
  return nvfp4 ? static_cast<std::uint8_t>(0x30 + rng() % 16)   // 2^-1 .. 2^1
               : static_cast<std::uint8_t>(0x7A + rng() % 7);   // 2^-5 .. 2^1
}

// A BF16 activation: mostly moderate values, sometimes zeros, -0, +-Inf,
// NaN, subnormals, the largest finite, or a wide exponent.
inline std::uint16_t DrawActivation(std::mt19937& rng, bool specials, bool wild) {
  const int pick = static_cast<int>(rng() % 64);
  if (!wild && pick != 0 && pick != 3) {
    const std::uint16_t exponent = static_cast<std::uint16_t>(127 - 8 + rng() % 16);
    return static_cast<std::uint16_t>(((rng() & 1) << 15) | (exponent << 7) | (rng() & 0x7F));
  }
  const std::uint16_t sign = static_cast<std::uint16_t>((rng() & 1) << 15);
  if (pick == 0) return sign;                                     // +-0
  if (specials && pick == 1) return static_cast<std::uint16_t>(sign | 0x7F80);  // +-Inf
  if (specials && pick == 2) return 0x7FC1;                        // NaN
  if (pick == 3) return static_cast<std::uint16_t>(sign | ((rng() % 0x7F) + 1));  // subnormal
  if (pick == 4) return static_cast<std::uint16_t>(sign | 0x7F7F);  // largest finite
  if (pick < 10) return static_cast<std::uint16_t>(sign | (rng() % 0x7F80));  // any finite
  const std::uint16_t exponent = static_cast<std::uint16_t>(127 - 8 + rng() % 16);
  return static_cast<std::uint16_t>(sign | (exponent << 7) | (rng() & 0x7F));
}

// One case of `format`; `specials` lets NaN / Inf activations and NaN
// scales in (some cases keep them out so that the finite arithmetic is
// checked on whole outputs, not only on NaN propagation).
inline GemvCase DrawCase(std::mt19937& rng, matmul::WeightFormat format, std::int64_t n, std::int64_t k,
                         std::int64_t m, std::int64_t batch, bool specials) {
  GemvCase c;
  c.format = format;
  c.n = n;
  c.k = k;
  c.m = m;
  c.batch = batch;
  const bool nvfp4 = format == matmul::WeightFormat::kNvfp4;
  const std::int64_t block = nvfp4 ? matmul::kNvfp4Block : matmul::kMxBlock;
  c.geometry = k % block == 0 && (rng() & 1) ? matmul::ScaleGeometry::kFlatBlocks : matmul::ScaleGeometry::kRowGroups;
  const matmul::WeightView shape = c.View();  // sizes only (null buffers)
  const matmul::WeightBufferSizes sizes = matmul::PerBatchSizes(shape);
  c.codes.resize(static_cast<std::size_t>(sizes.codes * batch));
  c.scales.resize(static_cast<std::size_t>(sizes.scales * batch));
  // A third of the cases draw the scale codes' extremes (products that
  // overflow to Inf, fall to BF16 subnormals or vanish), a sixth the edges of
  // the plain codes; the rest keep the outputs finite, so that most outputs
  // test the arithmetic, not the specials.
  const int kind = static_cast<int>(rng() % 6);
  const bool extremes = kind < 2;
  const ScaleDraw draw = extremes ? ScaleDraw::kExtremes : kind == 2 ? ScaleDraw::kPlainExtremes : ScaleDraw::kNearOne;
  for (auto& s : c.scales) {
    s = DrawScale(rng, nvfp4, draw);
    const bool nan = nvfp4 ? s == 0x7F : s == 0xFF;
    if (nan && !specials) s = nvfp4 ? 0x38 : 0x7F;
  }
  // The last block of each row is where the K tail is masked: make its
  // scale NaN often, so that a padding element that is not masked to +0
  // (0 x NaN = NaN) shows.
  if (specials && c.geometry == matmul::ScaleGeometry::kRowGroups && k % 16 != 0) {
    for (std::size_t i = static_cast<std::size_t>(sizes.groups_along_k) - 1; i < c.scales.size();
         i += static_cast<std::size_t>(sizes.groups_along_k)) {
      if (rng() % 2) c.scales[i] = nvfp4 ? 0x7F : 0xFF;
    }
  }
  // Codes block by block of 16 elements of the flat tensor: all zero, all
  // -0, all the largest magnitude, or random.
  const std::int64_t elements = n * k;
  for (std::int64_t l = 0; l < batch; ++l) {
    for (std::int64_t e0 = 0; e0 < elements; e0 += 16) {
      const int kind = static_cast<int>(rng() % 8);
      for (std::int64_t e = e0; e < e0 + 16 && e < elements; ++e) {
        std::uint8_t code = static_cast<std::uint8_t>(rng() % 16);
        if (kind == 0) code = 0x0;
        if (kind == 1) code = 0x8;
        if (kind == 2) code = static_cast<std::uint8_t>(0x7 | (rng() % 2) * 8);
        std::uint8_t& byte = c.codes[static_cast<std::size_t>(l * sizes.codes + e / 2)];
        byte = static_cast<std::uint8_t>(byte | (code << (4 * (e % 2))));
      }
    }
  }
  if (nvfp4) {
    // Mostly ordinary tensor scales; sometimes one that overflows the
    // output, one that makes it subnormal, or an FP32 subnormal itself.
    static constexpr float kTensorScales[] = {1.0f, 0.0078125f, 0.3f, 3.0f, 1.0f, 0.3f, 3.0e-6f, 1.5e30f, 1.0e-40f};
    for (std::int64_t l = 0; l < batch; ++l) {
      recipe::TensorScale t;
      t.decode = kTensorScales[rng() % (extremes ? 9 : 6)];
      c.tensor_scales.push_back(t);
    }
  }
  c.x.resize(static_cast<std::size_t>(batch * m * k));
  // A quarter of the rows of x are wild (any finite value, the largest,
  // Inf and NaN when `specials`); the others hold moderate values with
  // zeros and subnormals.
  for (std::int64_t row = 0; row < batch * m; ++row) {
    const bool wild = rng() % 4 == 0;
    for (std::int64_t i = 0; i < k; ++i) c.x[static_cast<std::size_t>(row * k + i)] = DrawActivation(rng, specials, wild);
  }
  return c;
}

// An FP16 activation as DrawActivation draws BF16 ones: moderate values,
// sometimes zeros, -0, +-Inf, NaN, subnormals, the largest finite.
inline std::uint16_t DrawFp16Activation(std::mt19937& rng, bool specials, bool wild) {
  const int pick = static_cast<int>(rng() % 64);
  const std::uint16_t sign = static_cast<std::uint16_t>((rng() & 1) << 15);
  if (!wild && pick != 0 && pick != 3) return static_cast<std::uint16_t>(sign | ((7 + rng() % 16) << 10) | (rng() & 0x3FF));
  if (pick == 0) return sign;
  if (specials && pick == 1) return static_cast<std::uint16_t>(sign | 0x7C00);  // +-Inf
  if (specials && pick == 2) return 0x7E01;                                      // NaN
  if (pick == 3) return static_cast<std::uint16_t>(sign | ((rng() % 0x3FF) + 1));  // subnormal
  if (pick == 4) return static_cast<std::uint16_t>(sign | 0x7BFF);                 // largest finite
  if (pick < 10) return static_cast<std::uint16_t>(sign | (rng() % 0x7C00));      // any finite
  return static_cast<std::uint16_t>(sign | ((7 + rng() % 16) << 10) | (rng() & 0x3FF));
}

// A 16-bit scale (`type` FP16 or BF16) near 2^-6 .. 2^-1, or (extremes) any
// finite value often (overflowing products, subnormal ones), NaN and Inf
// when `specials`.
inline std::uint16_t DrawUint4Scale(std::mt19937& rng, matmul::ScaleType type, bool extremes, bool specials) {
  const bool fp16 = type == matmul::ScaleType::kFp16;
  const std::uint16_t sign = static_cast<std::uint16_t>((rng() % 8 == 0) << 15);  // negative scales too
  if (extremes && rng() % 3 == 0) {
    if (specials && rng() % 8 == 0) return static_cast<std::uint16_t>(sign | (fp16 ? 0x7C00 : 0x7F80));  // +-Inf
    if (specials && rng() % 8 == 0) return fp16 ? 0x7E00 : 0x7FC0;                                     // NaN
    return static_cast<std::uint16_t>(sign | (rng() % (fp16 ? 0x7C00 : 0x7F80)));
  }
  return fp16 ? static_cast<std::uint16_t>(sign | ((9 + rng() % 6) << 10) | (rng() & 0x3FF))
              : static_cast<std::uint16_t>(sign | ((121 + rng() % 6) << 7) | (rng() & 0x7F));
}

// A UINT4 case in the GPTQ or AWQ packing (N a multiple of 8), groups of
// `group` (a multiple of 128) along K (a multiple of 128), scales of `type`
// (FP16 or BF16), zero points in half the cases, x of the scale's type.
inline GemvCase DrawUint4Case(std::mt19937& rng, matmul::WeightPacking packing, matmul::ScaleType type,
                              std::int64_t n, std::int64_t k, std::int64_t group, std::int64_t m,
                              std::int64_t batch, bool specials) {
  GemvCase c;
  c.format = matmul::WeightFormat::kUint4;
  c.packing = packing;
  c.uint4_scale_type = type;
  c.uint4_group = group;
  c.n = n, c.k = k, c.m = m, c.batch = batch;
  if (rng() % 2) c.zeros.resize(4);  // "has zero points" for the size query
  const matmul::WeightBufferSizes sizes = matmul::PerBatchSizes(c.View());
  c.codes.resize(static_cast<std::size_t>(sizes.codes * batch) * 4);
  for (auto& b : c.codes) b = static_cast<std::uint8_t>(rng());
  // Some whole words of the largest code or of zero (the offsets' ends).
  for (std::size_t i = 0; i + 4 <= c.codes.size(); i += 4) {
    const int kind = static_cast<int>(rng() % 16);
    if (kind < 2) std::fill(c.codes.begin() + static_cast<std::ptrdiff_t>(i), c.codes.begin() + static_cast<std::ptrdiff_t>(i + 4), kind == 0 ? 0x00 : 0xFF);
  }
  const bool extremes = rng() % 3 == 0;
  c.scales.resize(static_cast<std::size_t>(sizes.scales * batch) * 2);
  for (std::size_t i = 0; i < c.scales.size(); i += 2) {
    const std::uint16_t v = DrawUint4Scale(rng, type, extremes, specials);
    c.scales[i] = static_cast<std::uint8_t>(v), c.scales[i + 1] = static_cast<std::uint8_t>(v >> 8);
  }
  if (!c.zeros.empty()) {
    c.zeros.resize(static_cast<std::size_t>(sizes.zeros * batch) * 4);
    for (auto& b : c.zeros) b = static_cast<std::uint8_t>(rng());
  }
  const bool fp16 = type == matmul::ScaleType::kFp16;
  c.x.resize(static_cast<std::size_t>(batch * m * k));
  for (std::int64_t row = 0; row < batch * m; ++row) {
    const bool wild = rng() % 4 == 0;
    for (std::int64_t i = 0; i < k; ++i) {
      c.x[static_cast<std::size_t>(row * k + i)] = fp16 ? DrawFp16Activation(rng, specials, wild) : DrawActivation(rng, specials, wild);
    }
  }
  return c;
}

// An E4M3 weight case: MXFP8 (`format` kMxfp8E4m3: E8M0 scales per block
// of 32, row groups or flat blocks) or FP8 per channel (kFp8E4m3PerChannel:
// one FP32 scale per row), x BF16. Codes block by block of 16 elements:
// zeros, -0, the largest magnitudes, subnormals, or random finite codes;
// one NaN code in half the cases with `specials`. MXFP8's scales as DrawCase's, with
// the edges of its own plain codes (up to 134, tc_gemv_lanes.h ScaleIsPlain);
// channel scales near 1, or extremes (FP32 subnormals, 1e30, negative, and
// Inf / NaN when `specials`).
inline GemvCase DrawE4m3Case(std::mt19937& rng, matmul::WeightFormat format, std::int64_t n, std::int64_t k,
                             std::int64_t m, std::int64_t batch, bool specials) {
  GemvCase c;
  c.format = format;
  c.n = n, c.k = k, c.m = m, c.batch = batch;
  const bool channel = c.Channel();
  c.geometry = channel                        ? matmul::ScaleGeometry::kPerRow
               : k % matmul::kMxBlock == 0 && (rng() & 1) ? matmul::ScaleGeometry::kFlatBlocks
                                                          : matmul::ScaleGeometry::kRowGroups;
  const matmul::WeightBufferSizes sizes = matmul::PerBatchSizes(c.View());
  c.codes.resize(static_cast<std::size_t>(sizes.codes * batch));
  for (std::size_t e0 = 0; e0 < c.codes.size(); e0 += 16) {
    const int kind = static_cast<int>(rng() % 10);
    for (std::size_t e = e0; e < e0 + 16 && e < c.codes.size(); ++e) {
      std::uint8_t code = static_cast<std::uint8_t>(rng());
      if ((code & 0x7F) == 0x7F) code ^= 1;  // finite unless placed below
      if (kind == 0) code = 0x00;
      if (kind == 1) code = 0x80;
      if (kind == 2) code = static_cast<std::uint8_t>(0x7E - rng() % 3 + (rng() % 2) * 0x80);
      if (kind == 3) code = static_cast<std::uint8_t>(rng() % 8 + (rng() % 2) * 0x80);
      c.codes[e] = code;
    }
  }
  // One NaN code in half the cases with specials: its row's outputs are
  // NaN, and its tile takes the table path.
  if (specials && rng() % 2 == 0) c.codes[rng() % c.codes.size()] = rng() % 2 ? 0x7F : 0xFF;
  const int kind = static_cast<int>(rng() % 6);
  const bool extremes = kind < 2;
  if (channel) {
    c.scales.resize(static_cast<std::size_t>(sizes.scales * batch) * 4);
    for (std::size_t i = 0; i < c.scales.size(); i += 4) {
      float v = std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f, static_cast<int>(rng() % 5) - 2);
      if (extremes && rng() % 3 == 0) {
        static constexpr float kEdges[] = {1.0e-40f, -3.0f, 1.5e30f, 0.0f, -1.0e-38f, 6.0e-8f};
        v = kEdges[rng() % 6];
        if (specials && rng() % 4 == 0) v = rng() % 2 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
      }
      std::uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int b = 0; b < 4; ++b) c.scales[i + b] = static_cast<std::uint8_t>(bits >> (8 * b));
    }
  } else {
    const ScaleDraw draw = extremes ? ScaleDraw::kExtremes : kind == 2 ? ScaleDraw::kPlainExtremes : ScaleDraw::kNearOne;
    c.scales.resize(static_cast<std::size_t>(sizes.scales * batch));
    for (auto& s : c.scales) {
      s = DrawScale(rng, false, draw);
      if (draw == ScaleDraw::kPlainExtremes && rng() % 4 == 0) s = rng() % 2 ? 0x86 : 0x85;  // MXFP8's last plain codes
      if (s == 0xFF && !specials) s = 0x7F;
    }
  }
  c.x.resize(static_cast<std::size_t>(batch * m * k));
  for (std::int64_t row = 0; row < batch * m; ++row) {
    const bool wild = rng() % 4 == 0;
    for (std::int64_t i = 0; i < k; ++i) c.x[static_cast<std::size_t>(row * k + i)] = DrawActivation(rng, specials, wild);
  }
  return c;
}

}  // namespace lowbit::cuda::tc_gemv::testing
