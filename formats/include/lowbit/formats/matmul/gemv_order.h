// The defined-order FP32 GEMV: the reduction order of lowbit's CUDA GEMV
// kernels (cuda/src/gemv/), written once here so that a host computation
// reproduces every output of the kernel bit for bit (docs/matmul.md).
//
//   y[l, m, n] = sum_k x[l, m, k] * W[l, n, k],  x BF16 or FP16, W packed.
//
// The order, for one output (m, n):
//   1. Scale blocks of `block` elements along K (NVFP4 16, MX 32, INT4 the
//      group, FP8 per-channel 16 with the block scale 1); the last block is
//      short when K % block != 0.
//   2. partial_b = fmaf(value(q_k), x_k, partial) for the block's k in
//      increasing order, starting from +0.0f. value(q) is the element's exact
//      FP32 value: the model's decode (DecodeToF32) for float elements, the
//      exact integer q - zero for INT4/UINT4. x_k is the activation widened
//      to FP32 (exact).
//   3. `lanes` accumulators: `blocks_per_chunk` consecutive blocks form a
//      chunk, chunk j goes to lane j % lanes; each lane, over its blocks in
//      increasing order, does acc = fmaf(partial_b, scale_b, acc) from +0.0f,
//      scale_b the block scale decoded by the model (UE4M3, E8M0, FP16/BF16
//      group scale; 1.0f for FP8 per-channel).
//   4. The lanes are summed by a pairwise tree: for h = lanes/2, ..., 1,
//      s[i] = s[i] + s[i + h] for i < h (a warp's xor butterfly 16, 8, 4, 2, 1
//      gives lane 0 exactly this, addition being commutative); the sum is s[0].
//   5. NVFP4: sum * tensor scale; FP8 per-channel: sum * channel scale[n];
//      MX and INT4: no post-multiply.
//   6. One round-to-nearest-even conversion to the output type (the model's
//      EncodeF32), none for FP32 output.
// NaN and Inf codes and scales propagate as the FP32 arithmetic says; NaN
// payloads are not part of the contract (NVIDIA's FP32 units return one
// canonical NaN, docs/formats-reference.md §3.3), so a NaN output compares
// equal to any NaN. All arithmetic is spelled with fmaf / + / *, which are
// correctly rounded on the host and on the device (no contraction: each is
// written as the single operation it is).
#pragma once

#include <cmath>
#include <cstdint>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/steps.h"

#if !defined(__CUDA_ARCH__)
#include <vector>
#endif

namespace lowbit::matmul {

// The GEMV reads weights.h's vocabulary: WeightFormat for the element and
// scale format, WeightPacking for where INT4 codes sit (GPTQ or AWQ words),
// ScaleType for how INT4 group scales are stored (FP16 or BF16).
//   kNvfp4              E2M1 nibbles (low first) + UE4M3 per 16 + FP32 tensor scale
//   kMxfp4              E2M1 nibbles (low first) + E8M0 per 32
//   kMxfp8E4m3          E4M3 bytes + E8M0 per 32
//   kFp8E4m3PerChannel  E4M3 bytes + FP32 scale per output channel n
//   kInt4 / kUint4      kGptq: qweight [K/8][N] words, scales [groups][N], qzeros [groups][N/8] (zero - 1);
//                       kAwq: qweight [K][N/8] words (order_map), scales [groups][N], qzeros [groups][N/8]

// One batch entry's packed weight W[n, k] (N output channels, K inputs).
// Only the pointers the format uses are read.
struct GemvWeightView {
  WeightFormat format = WeightFormat::kNvfp4;    // kInt4: two's complement codes, kUint4: unsigned
  WeightPacking packing = WeightPacking::kLowbit;  // kLowbit, or kGptq / kAwq for kInt4 / kUint4
  long n = 0;
  long k = 0;
  int group = 128;                               // INT4 only: elements per group along K
  ScaleType scale_type = ScaleType::kFp16;       // INT4 only: kFp16 or kBf16 group scales
  const std::uint8_t* codes = nullptr;         // FP4: [N][(K + 1) / 2] bytes; FP8: [N][K] bytes
  const std::uint32_t* words = nullptr;        // INT4: GPTQ [K/8][N], AWQ [K][N/8]
  const std::uint8_t* block_scales = nullptr;  // NVFP4 [N][ceil(K/16)] UE4M3, MX [N][ceil(K/32)] E8M0
  const float* channel_scales = nullptr;       // FP8 per-channel: [N]
  const std::uint16_t* group_scales = nullptr; // INT4: [ceil(K/group)][N] FP16 or BF16 bits
  const std::uint32_t* zeros = nullptr;        // INT4: [ceil(K/group)][N/8] words; nullptr: zero point 0
  float tensor_scale = 1.0f;                   // NVFP4
  // NVFP4 on device memory (a registry row's run_on_device): when set, the
  // kernel reads the tensor scale from here (device memory) instead of
  // `tensor_scale`, so a call on a stream needs no copy back to the host.
  // The host reference ignores it.
  const float* tensor_scale_at = nullptr;
};

// The reduction shape of step 1-4 for a format (the kernels' constants).
struct GemvOrder {
  int block = 16;            // elements per scale block along K
  int blocks_per_chunk = 1;  // consecutive blocks one lane takes at a time
  int lanes = 32;            // parallel accumulators summed by the tree
};

// NVFP4: a lane loads 16 bytes = 32 codes = two blocks. MX: 16 bytes of
// FP4 or 32 of FP8 = one block. FP8 per-channel: 16 codes. INT4: eight warps
// split the groups of a column.
inline constexpr int kGemvInt4Lanes = 8;
LOWBIT_HD_CONSTEXPR GemvOrder GemvOrderOf(WeightFormat f, int group) {
  switch (f) {
    case WeightFormat::kNvfp4: return {16, 2, 32};
    case WeightFormat::kMxfp4: return {32, 1, 32};
    case WeightFormat::kMxfp8E4m3: return {32, 1, 32};
    case WeightFormat::kFp8E4m3PerChannel: return {16, 1, 32};
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: return {group, 1, kGemvInt4Lanes};
  }
  return {};
}

LOWBIT_HD_CONSTEXPR long GemvCeilDiv(long a, long b) { return (a + b - 1) / b; }
LOWBIT_HD_CONSTEXPR bool GemvIsFp4(WeightFormat f) { return f == WeightFormat::kNvfp4 || f == WeightFormat::kMxfp4; }
// Bytes of one FP4 / FP8 code row.
LOWBIT_HD_CONSTEXPR long GemvCodeRowBytes(WeightFormat f, long k) { return GemvIsFp4(f) ? (k + 1) / 2 : k; }

// The INT4 code and zero point of element (n, k), unpacked by the model's
// packing functions (formats/block/packing.h) from the one word that holds it.
LOWBIT_HD_CONSTEXPR std::uint8_t GemvInt4Code(const GemvWeightView& w, long n, long k) {
  std::uint8_t q[8] = {};
  if (w.packing == WeightPacking::kGptq) {
    const std::uint32_t word = w.words[(k / 8) * w.n + n];
    block::UnpackGptqQweight(&word, 8, 1, q);
    return q[k % 8];
  }
  const std::uint32_t word = w.words[k * (w.n / 8) + n / 8];
  block::UnpackAwq(&word, 1, 8, q);
  return q[n % 8];
}
LOWBIT_HD_CONSTEXPR std::int32_t GemvInt4Zero(const GemvWeightView& w, long n, long group_index) {
  if (w.zeros == nullptr) return 0;
  std::uint8_t z[8] = {};
  const std::uint32_t word = w.zeros[group_index * (w.n / 8) + n / 8];
  if (w.packing == WeightPacking::kGptq) {
    block::UnpackGptqQzeros(&word, 1, 8, z);
  } else {
    block::UnpackAwq(&word, 1, 8, z);
  }
  return z[n % 8];
}

// value(q) of element (n, k): exact in FP32.
LOWBIT_HD_CONSTEXPR float GemvElementValue(const GemvWeightView& w, long n, long k) {
  switch (w.format) {
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4: {
      constexpr FormatSpec kElement = kE2m1;
      std::uint8_t two[2] = {};
      // Both nibbles of the element's byte (the padding nibble of an odd K
      // exists in the row's last byte).
      block::UnpackNibbles(w.codes + n * GemvCodeRowBytes(w.format, w.k) + k / 2, 2, block::NibbleOrder::kLowFirst, two);
      return DecodeToF32(kElement, two[k % 2]);
    }
    case WeightFormat::kMxfp8E4m3:
    case WeightFormat::kFp8E4m3PerChannel: {
      constexpr FormatSpec kElement = kE4m3;
      return DecodeToF32(kElement, w.codes[n * w.k + k]);
    }
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: {
      const std::int32_t q = recipe::IntegerOfCode(ElementFormatOf(w.format), GemvInt4Code(w, n, k));
      return static_cast<float>(q - GemvInt4Zero(w, n, k / w.group));
    }
  }
  return 0.0f;
}

// scale_b of block b of row n.
LOWBIT_HD_CONSTEXPR float GemvBlockScale(const GemvWeightView& w, long n, long b) {
  switch (w.format) {
    case WeightFormat::kNvfp4: {
      constexpr FormatSpec kScale = kUe4m3;
      return DecodeToF32(kScale, w.block_scales[n * GemvCeilDiv(w.k, 16) + b]);
    }
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: {
      constexpr FormatSpec kScale = kE8m0;
      return DecodeToF32(kScale, w.block_scales[n * GemvCeilDiv(w.k, 32) + b]);
    }
    case WeightFormat::kFp8E4m3PerChannel: return 1.0f;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: return DecodeToF32(ScaleFormatOf(w.scale_type), w.group_scales[b * w.n + n]);
  }
  return 1.0f;
}

// fmaf, one rounding, on the host (C99 fmaf) and the device (FFMA).
LOWBIT_HD inline float GemvFma(float a, float b, float c) { return fmaf(a, b, c); }

// Step 1-5 for output n, with x_at(k) the FP32 activation of the row.
template <typename XAt>
LOWBIT_HD inline float GemvDotDefinedOrder(const GemvWeightView& w, long n, XAt x_at) {
  const GemvOrder o = GemvOrderOf(w.format, w.group);
  constexpr int kMaxLanes = 32;
  float lane[kMaxLanes] = {};
  const long blocks = GemvCeilDiv(w.k, o.block);
  for (long b = 0; b < blocks; ++b) {
    const long k0 = b * o.block;
    const long k1 = k0 + o.block < w.k ? k0 + o.block : w.k;
    float partial = 0.0f;
    for (long k = k0; k < k1; ++k) partial = GemvFma(GemvElementValue(w, n, k), x_at(k), partial);
    const int l = static_cast<int>((b / o.blocks_per_chunk) % o.lanes);
    lane[l] = GemvFma(partial, GemvBlockScale(w, n, b), lane[l]);
  }
  for (int h = o.lanes / 2; h >= 1; h /= 2) {
    for (int i = 0; i < h; ++i) lane[i] = lane[i] + lane[i + h];
  }
  float sum = lane[0];
  if (w.format == WeightFormat::kNvfp4) sum = sum * w.tensor_scale;
  if (w.format == WeightFormat::kFp8E4m3PerChannel) sum = sum * w.channel_scales[n];
  return sum;
}

// Activation bits to FP32 (exact), by the model.
LOWBIT_HD_CONSTEXPR float GemvActivationValue(ActivationType t, std::uint16_t bits) {
  constexpr FormatSpec kHalf = kFp16;
  constexpr FormatSpec kBfloat = kBf16;
  return DecodeToF32(t == ActivationType::kBf16 ? kBfloat : kHalf, bits);
}

// Step 6: the output bits (low 16 bits for BF16 / FP16), by the model.
LOWBIT_HD_CONSTEXPR std::uint32_t GemvOutputBits(OutputType t, float v) {
  constexpr FormatSpec kHalf = kFp16;
  constexpr FormatSpec kBfloat = kBf16;
  switch (t) {
    case OutputType::kBf16: return static_cast<std::uint32_t>(EncodeF32(kBfloat, v).code);
    case OutputType::kFp16: return static_cast<std::uint32_t>(EncodeF32(kHalf, v).code);
    case OutputType::kFp32: return BitCast<std::uint32_t>(v);
  }
  return 0;
}

// Whether output bits are a NaN of type t (NaN payloads are not compared).
LOWBIT_HD_CONSTEXPR bool GemvOutputIsNan(OutputType t, std::uint32_t bits) {
  switch (t) {
    case OutputType::kBf16: return (bits & 0x7F80u) == 0x7F80u && (bits & 0x7Fu) != 0;
    case OutputType::kFp16: return (bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu) != 0;
    case OutputType::kFp32: return (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu) != 0;
  }
  return false;
}

// The whole GEMV of one batch entry: x [M][K] activation bits, out [M][N]
// output bits (one uint32 per output, the low 16 bits for BF16 / FP16).
LOWBIT_HD inline void GemvDefinedOrder(const GemvWeightView& w, const std::uint16_t* x, ActivationType act, long m_rows,
                                          OutputType out_type, std::uint32_t* out) {
  for (long m = 0; m < m_rows; ++m) {
    const std::uint16_t* xr = x + m * w.k;
    for (long n = 0; n < w.n; ++n) {
      const float v = GemvDotDefinedOrder(w, n, [&](long k) { return GemvActivationValue(act, xr[k]); });
      out[m * w.n + n] = GemvOutputBits(out_type, v);
    }
  }
}

// ---- the registry's view (formats/matmul/weights.h) -----------------------------

// The GEMV view of batch l of `w`: nullptr, and *out set, when the GEMV takes
// these weights; else why not. The GEMV's K-major rows start on a byte and
// carry ceil(K / block) scales each, so lowbit-packed MX / NVFP4 weights need
// per-row blocks (kRowGroups, or kFlatBlocks with K a multiple of the block,
// which is the same layout) and, for 4-bit codes, an even K; integer weights
// need the GPTQ or AWQ packing with FP16 / BF16 scales.
LOWBIT_HD_CONSTEXPR const char* GemvViewOf(const WeightView& w, std::int64_t l, GemvWeightView* out) {
  GemvWeightView v;
  v.format = w.format;
  v.n = static_cast<long>(w.n);
  v.k = static_cast<long>(w.k);
  switch (w.format) {
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: {
      if (w.packing != WeightPacking::kLowbit) return "the GEMV takes MX / NVFP4 weights in the lowbit packing";
      const bool per_row = w.geometry == ScaleGeometry::kRowGroups ||
                           (w.geometry == ScaleGeometry::kFlatBlocks && w.block > 0 && w.k % w.block == 0);
      if (!per_row) return "the GEMV takes per-row blocks (kRowGroups, or kFlatBlocks with K a multiple of the block)";
      if (IsFourBit(w.format) && w.k % 2 != 0) return "the GEMV takes 4-bit rows that start on a byte (K even)";
      v.codes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
      v.block_scales = static_cast<const std::uint8_t*>(w.scales) + l * w.scales_batch_stride;
      v.tensor_scale = TensorScaleOf(w, l);
      break;
    }
    case WeightFormat::kFp8E4m3PerChannel:
      if (w.packing != WeightPacking::kLowbit || w.geometry != ScaleGeometry::kPerRow || w.scale_type != ScaleType::kFp32) {
        return "the GEMV takes E4M3 per-channel weights with one FP32 scale per row";
      }
      v.codes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
      v.channel_scales = static_cast<const float*>(w.scales) + l * w.scales_batch_stride;
      break;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4:
      if (w.packing == WeightPacking::kLowbit) return "the GEMV takes integer weights in the GPTQ or AWQ packing";
      if (w.scale_type != ScaleType::kFp16 && w.scale_type != ScaleType::kBf16) {
        return "the GEMV takes GPTQ / AWQ scales in FP16 or BF16";
      }
      if (w.block < 1) return "the group size must be positive";
      v.packing = w.packing;
      v.group = static_cast<int>(w.block);
      v.scale_type = w.scale_type;
      v.words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
      v.group_scales = static_cast<const std::uint16_t*>(w.scales) + l * w.scales_batch_stride;
      v.zeros = w.zeros != nullptr ? static_cast<const std::uint32_t*>(w.zeros) + l * w.zeros_batch_stride : nullptr;
      break;
  }
  *out = v;
  return nullptr;
}

#if !defined(__CUDA_ARCH__)
// The defined-order GEMV of a whole problem (host), for the registry's GEMV
// row: dense [batch][M][N] output codes, as matmul::WriteOutput takes them.
// error is nullptr, or why the GEMV does not take these weights (GemvViewOf).
// The problem must have passed matmul::Validate.
struct GemvProblemResult {
  const char* error = nullptr;
  std::vector<std::uint32_t> codes;
};
inline GemvProblemResult GemvDefinedOrderProblem(const MatmulProblem& p) {
  GemvProblemResult r;
  r.codes.resize(static_cast<std::size_t>(p.w.batch * p.m * p.w.n));
  std::vector<std::uint16_t> x(static_cast<std::size_t>(p.m * p.w.k));
  const auto* xs = static_cast<const std::uint16_t*>(p.x.data);
  for (std::int64_t l = 0; l < p.w.batch; ++l) {
    GemvWeightView v;
    if (const char* why = GemvViewOf(p.w, l, &v); why != nullptr) {
      r.error = why;
      return r;
    }
    for (std::int64_t m = 0; m < p.m; ++m) {
      for (std::int64_t k = 0; k < p.w.k; ++k) x[m * p.w.k + k] = xs[l * p.x.batch_stride + m * p.x.row_stride + k];
    }
    GemvDefinedOrder(v, x.data(), p.x.type, static_cast<long>(p.m), p.y.type,
                     r.codes.data() + l * p.m * p.w.n);
  }
  return r;
}
#endif

}  // namespace lowbit::matmul
