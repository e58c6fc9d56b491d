// The packed-weight view every matrix-product kernel takes (GEMV for M =
// 1..16, GEMM for M >= 128; docs/matmul.md): y[l][m][n] = sum_k x[l][m][k] *
// W[l][n][k], i.e. y = x * W^T per batch l, with W [N][K] (output features by
// input features) held in one of the packed forms below, x [M][K] in BF16 or
// FP16 and y [M][N] in BF16, FP16 or FP32.
//
// The layouts are exactly what lowbit produces, so a user's quantized tensor
// feeds a kernel unchanged:
//  - kLowbit packing: the buffers of recipe/tensor.h QuantizedTensor (registry
//    RecipeStorage, Python lowbit.quantize) for W quantized as a row-major
//    [N, K] tensor with its blocks / groups along K: codes of the flattened
//    [N][K] tensor (two per byte, element 0 in the low nibble, for 4-bit
//    elements: recipe::Packing::kNibblesLowFirst; one per byte otherwise),
//    one scale per block or group, integer zero points per group, NVFP4's
//    tensor scale. MX and NVFP4 recipes default to 1-D blocks of the
//    flattened tensor (recipe::Geometry::kBlock1d), so when K is not a
//    multiple of the block a block runs on into the next row: kFlatBlocks
//    says so and the scale index is (n * K + k) / block (the last block may
//    be short, docs/formats-reference.md §5.1).
//    Per-row blocks (kRowGroups, ceil(K / block) per row) are the recipes'
//    "/g<size>" layouts (recipe::Geometry::kGroup) when K is a multiple of
//    the block, and otherwise what quantizing each row as its own 1-D tensor
//    gives: the last block of a row is short and behaves as if padded with
//    zeros (§5.1).
//  - kGptq / kAwq packing: the 32-bit word layouts of formats/block/packing.h
//    (registry PackingLayout kGptqQweight / kGptqQzeros / kAwq,
//    docs/formats-reference.md §8.3): qweight holds [K][N] codes (transposed
//    against kLowbit), scales are [ceil(K / group)][N], qzeros
//    [ceil(K / group)][N / 8] words.
//
// Plain data, host and device: a kernel takes it by value. Validate() (host)
// names what is wrong before any kernel reads a byte (docs/bad-input.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"

#if !defined(__CUDA_ARCH__)
#include <string>
#include <utility>
#endif

namespace lowbit::matmul {

// ---- what the weights are -----------------------------------------------------

enum class WeightFormat : std::uint8_t {
  // E2M1 codes, one UE4M3 scale per 16 elements along K, one FP32 tensor
  // scale (recipe::TensorScale::decode). docs/formats-reference.md §6.
  kNvfp4,
  // E2M1 codes, one E8M0 scale per 32 (OCP MX, §5).
  kMxfp4,
  // E4M3 codes, one E8M0 scale per 32 (OCP MX, §5).
  kMxfp8E4m3,
  // Two's-complement 4-bit codes (-8..7) per group along K, FP32 / FP16 /
  // BF16 scales, optional int32 zero points (value = (q - z) * s, recipe/steps.h
  // DecodeElement). kLowbit packing only (GPTQ / AWQ store unsigned codes).
  kInt4,
  // Unsigned 4-bit codes (0..15) per group along K, zero points (GPTQ, AWQ,
  // lowbit's uint4 recipes): value = (q - z) * s.
  kUint4,
  // E4M3 codes, one FP32 scale per output channel n (recipe e4m3:*/row).
  kFp8E4m3PerChannel,
};

enum class WeightPacking : std::uint8_t {
  kLowbit,  // recipe/tensor.h QuantizedTensor of the row-major [N, K] tensor
  kGptq,    // GPTQ qweight [K / 8][N] words, qzeros [groups][N / 8] words of zero - 1
  kAwq,     // AWQ qweight [K][N / 8] words, qzeros [groups][N / 8] words, order_map
};

// Where the elements sharing one scale sit (kLowbit packing; GPTQ / AWQ are
// always kRowGroups).
enum class ScaleGeometry : std::uint8_t {
  kFlatBlocks,  // `block` consecutive elements of the flattened [N][K]: index (n * K + k) / block
  kRowGroups,   // `block` consecutive elements along each row, ceil(K / block) per row (the last may be short):
                // index n * ceil(K / block) + k / block
  kPerRow,      // one scale per output channel n (kFp8E4m3PerChannel)
};

// How each scale is stored.
enum class ScaleType : std::uint8_t {
  kE8m0,   // one byte (MX)
  kUe4m3,  // one byte (NVFP4)
  kFp32,   // float (lowbit's scaled recipes store FP32: QuantizedTensor::scales)
  kFp16,   // IEEE binary16 bits in a uint16 (GPTQ / AWQ checkpoints)
  kBf16,   // bfloat16 bits in a uint16
};

enum class ActivationType : std::uint8_t { kBf16, kFp16 };
enum class OutputType : std::uint8_t { kBf16, kFp16, kFp32 };

LOWBIT_HD_CONSTEXPR const char* WeightFormatName(WeightFormat f) {
  switch (f) {
    case WeightFormat::kNvfp4: return "nvfp4";
    case WeightFormat::kMxfp4: return "mxfp4";
    case WeightFormat::kMxfp8E4m3: return "mxfp8_e4m3";
    case WeightFormat::kInt4: return "int4";
    case WeightFormat::kUint4: return "uint4";
    case WeightFormat::kFp8E4m3PerChannel: return "e4m3/row";
  }
  return "unknown-weight-format";
}
LOWBIT_HD_CONSTEXPR const char* WeightPackingName(WeightPacking p) {
  switch (p) {
    case WeightPacking::kLowbit: return "lowbit";
    case WeightPacking::kGptq: return "gptq";
    case WeightPacking::kAwq: return "awq";
  }
  return "unknown-packing";
}
LOWBIT_HD_CONSTEXPR const char* ScaleTypeName(ScaleType t) {
  switch (t) {
    case ScaleType::kE8m0: return "e8m0";
    case ScaleType::kUe4m3: return "ue4m3";
    case ScaleType::kFp32: return "fp32";
    case ScaleType::kFp16: return "fp16";
    case ScaleType::kBf16: return "bf16";
  }
  return "unknown-scale-type";
}
LOWBIT_HD_CONSTEXPR const char* ActivationTypeName(ActivationType t) {
  return t == ActivationType::kBf16 ? "bf16" : t == ActivationType::kFp16 ? "fp16" : "unknown-activation-type";
}
LOWBIT_HD_CONSTEXPR const char* OutputTypeName(OutputType t) {
  switch (t) {
    case OutputType::kBf16: return "bf16";
    case OutputType::kFp16: return "fp16";
    case OutputType::kFp32: return "fp32";
  }
  return "unknown-output-type";
}

// The model's format of each piece (format_list.h), so decoders never retype
// a format (by value: device code cannot reference the host constants,
// so each is a constexpr copy as in convert.h).
LOWBIT_HD_CONSTEXPR FormatSpec ElementFormatOf(WeightFormat f) {
  switch (f) {
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4: { constexpr FormatSpec spec = kE2m1; return spec; }
    case WeightFormat::kMxfp8E4m3:
    case WeightFormat::kFp8E4m3PerChannel: { constexpr FormatSpec spec = kE4m3; return spec; }
    case WeightFormat::kInt4: { constexpr FormatSpec spec = kInt4; return spec; }
    case WeightFormat::kUint4: { constexpr FormatSpec spec = kUint4; return spec; }
  }
  { constexpr FormatSpec spec = kE2m1; return spec; }
}
LOWBIT_HD_CONSTEXPR FormatSpec ScaleFormatOf(ScaleType t) {
  switch (t) {
    case ScaleType::kE8m0: { constexpr FormatSpec spec = kE8m0; return spec; }
    case ScaleType::kUe4m3: { constexpr FormatSpec spec = kUe4m3; return spec; }
    case ScaleType::kFp32: { constexpr FormatSpec spec = kFp32; return spec; }
    case ScaleType::kFp16: { constexpr FormatSpec spec = kFp16; return spec; }
    case ScaleType::kBf16: { constexpr FormatSpec spec = kBf16; return spec; }
  }
  { constexpr FormatSpec spec = kFp32; return spec; }
}
LOWBIT_HD_CONSTEXPR FormatSpec ActivationFormatOf(ActivationType t) {
  if (t == ActivationType::kFp16) { constexpr FormatSpec spec = kFp16; return spec; }
  constexpr FormatSpec spec = kBf16;
  return spec;
}
LOWBIT_HD_CONSTEXPR FormatSpec OutputFormatOf(OutputType t) {
  if (t == OutputType::kFp32) { constexpr FormatSpec spec = kFp32; return spec; }
  if (t == OutputType::kFp16) { constexpr FormatSpec spec = kFp16; return spec; }
  constexpr FormatSpec spec = kBf16;
  return spec;
}

// Block sizes the formats fix (the catalog's, docs/formats-reference.md §5,
// §6); INT4 groups default to 128 (the g128 recipes).
inline constexpr int kNvfp4Block = recipe::kNvfp4BlockSize;
inline constexpr int kMxBlock = recipe::kMxBlockSize;
inline constexpr int kDefaultIntGroup = 128;

LOWBIT_HD_CONSTEXPR bool IsFourBit(WeightFormat f) { return ElementFormatOf(f).total_bits == 4; }
LOWBIT_HD_CONSTEXPR bool IsIntegerFormat(WeightFormat f) {
  return f == WeightFormat::kInt4 || f == WeightFormat::kUint4;
}
LOWBIT_HD_CONSTEXPR std::size_t ScaleBytes(ScaleType t) {
  return t == ScaleType::kFp32 ? 4 : (t == ScaleType::kFp16 || t == ScaleType::kBf16) ? 2 : 1;
}
LOWBIT_HD_CONSTEXPR std::size_t OutputBytes(OutputType t) { return t == OutputType::kFp32 ? 4 : 2; }

// ---- the view --------------------------------------------------------------------

// W for every batch l in [0, batch): buffer pointers plus per-batch strides
// (in the buffer's own units; 0 shares one W across the batch, as an expert
// shared by all tokens). Counts are the elements each buffer holds (units as
// the strides), so Validate can name a buffer of the wrong size.
struct WeightView {
  WeightFormat format = WeightFormat::kNvfp4;
  WeightPacking packing = WeightPacking::kLowbit;
  ScaleGeometry geometry = ScaleGeometry::kFlatBlocks;
  ScaleType scale_type = ScaleType::kUe4m3;
  std::int64_t n = 0;      // output features (rows of W)
  std::int64_t k = 0;      // input features (the reduction)
  std::int64_t block = 0;  // elements per scale: 16 NVFP4, 32 MX, the group (128) for INT4; unused for kPerRow
  std::int64_t batch = 1;  // L

  // kLowbit: bytes (codes of [N][K] flattened). kGptq / kAwq: uint32 words.
  const void* codes = nullptr;
  std::int64_t codes_count = 0;
  std::int64_t codes_batch_stride = 0;
  // One per scale, stored as scale_type.
  const void* scales = nullptr;
  std::int64_t scales_count = 0;
  std::int64_t scales_batch_stride = 0;
  // Integer formats: kLowbit int32 per group, kGptq / kAwq uint32 qzeros
  // words; nullptr: every zero point is 0 (the symmetric recipes).
  const void* zeros = nullptr;
  std::int64_t zeros_count = 0;
  std::int64_t zeros_batch_stride = 0;
  // NVFP4 only: recipe::TensorScale (its `decode` is what W multiplies by),
  // one per batch at tensor_scale + l * tensor_scale_batch_stride.
  const recipe::TensorScale* tensor_scale = nullptr;
  std::int64_t tensor_scale_count = 0;
  std::int64_t tensor_scale_batch_stride = 0;
};

// x [batch][m][k] and y [batch][m][n]: element strides between rows and
// between batches.
struct ActivationView {
  ActivationType type = ActivationType::kBf16;
  const void* data = nullptr;  // uint16 bits
  std::int64_t count = 0;      // elements the buffer holds
  std::int64_t row_stride = 0;    // >= k
  std::int64_t batch_stride = 0;  // >= (m - 1) * row_stride + k when batch > 1
};

struct OutputView {
  OutputType type = OutputType::kFp32;
  void* data = nullptr;  // uint16 bits (BF16 / FP16) or float
  std::int64_t count = 0;
  std::int64_t row_stride = 0;    // >= n
  std::int64_t batch_stride = 0;  // >= (m - 1) * row_stride + n when batch > 1
};

struct MatmulProblem {
  WeightView w;
  std::int64_t m = 1;  // rows of x (tokens): GEMV 1..16, GEMM >= 128
  ActivationView x;
  OutputView y;
};

LOWBIT_HD_CONSTEXPR std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Elements of each buffer for ONE batch (0 when the format has no such
// buffer). Assumes the shape rules hold (Validate checks them first).
struct WeightBufferSizes {
  std::int64_t codes = 0;   // bytes (kLowbit) or words (kGptq / kAwq)
  std::int64_t scales = 0;
  std::int64_t zeros = 0;   // int32 (kLowbit) or words
  std::int64_t tensor_scales = 0;
  std::int64_t groups_along_k = 0;  // kRowGroups: ceil(K / block)
};

LOWBIT_HD_CONSTEXPR WeightBufferSizes PerBatchSizes(const WeightView& w) {
  WeightBufferSizes s;
  const std::int64_t elements = w.n * w.k;
  switch (w.packing) {
    case WeightPacking::kLowbit:
      s.codes = IsFourBit(w.format) ? CeilDiv(elements, 2) : elements;
      break;
    case WeightPacking::kGptq:
      s.codes = (w.k / 8) * w.n;
      break;
    case WeightPacking::kAwq:
      s.codes = w.k * (w.n / 8);
      break;
  }
  switch (w.geometry) {
    case ScaleGeometry::kFlatBlocks:
      s.scales = w.block > 0 ? CeilDiv(elements, w.block) : 0;
      break;
    case ScaleGeometry::kRowGroups:
      s.groups_along_k = w.block > 0 ? CeilDiv(w.k, w.block) : 0;
      s.scales = w.n * s.groups_along_k;
      break;
    case ScaleGeometry::kPerRow:
      s.scales = w.n;
      break;
  }
  if (IsIntegerFormat(w.format)) {
    if (w.zeros == nullptr) {
      s.zeros = 0;
    } else if (w.packing == WeightPacking::kLowbit) {
      s.zeros = s.scales;
    } else {
      s.zeros = s.groups_along_k * (w.n / 8);
    }
  }
  if (w.format == WeightFormat::kNvfp4) s.tensor_scales = 1;
  return s;
}

// ---- reading one element (host and device; the reference path) ------------------

// AWQ: which nibble of a word holds column lane (n % 8): the inverse of
// block::kAwqOrderMap = {0, 2, 4, 6, 1, 3, 5, 7} (even lanes in nibbles 0..3,
// odd lanes in 4..7), as arithmetic because device code cannot read the host
// table; the static_assert ties it to the table.
LOWBIT_HD_CONSTEXPR int AwqNibbleOfLane(std::int64_t lane) {
  return static_cast<int>(lane % 2 == 0 ? lane / 2 : 4 + lane / 2);
}
constexpr bool AwqNibblesMatchOrderMap() {
  for (int i = 0; i < 8; ++i) {
    if (AwqNibbleOfLane(block::kAwqOrderMap[i]) != i) return false;
  }
  return true;
}
static_assert(AwqNibblesMatchOrderMap(), "AwqNibbleOfLane inverts block::kAwqOrderMap");

// The 4- or 8-bit code of W[l][n][k].
LOWBIT_HD_CONSTEXPR std::uint8_t WeightCode(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k) {
  switch (w.packing) {
    case WeightPacking::kLowbit: {
      const auto* bytes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
      const std::int64_t e = n * w.k + k;
      if (!IsFourBit(w.format)) return bytes[e];
      // Element 0 in the low nibble (recipe/tensor.h LoadCode, kNibblesLowFirst).
      return e % 2 == 0 ? (bytes[e / 2] & 0xF) : (bytes[e / 2] >> 4);
    }
    case WeightPacking::kGptq: {
      // block/packing.h UnpackGptqQweight: word [k / 8][n], row k % 8 in bits 4j..4j+3.
      const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
      return static_cast<std::uint8_t>((words[(k / 8) * w.n + n] >> (4 * (k % 8))) & 0xF);
    }
    case WeightPacking::kAwq: {
      // block/packing.h UnpackAwq: nibble i of word [k][n / 8] holds column 8c + order_map[i].
      const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
      return static_cast<std::uint8_t>((words[k * (w.n / 8) + n / 8] >> (4 * AwqNibbleOfLane(n % 8))) & 0xF);
    }
  }
  return 0;
}

// Index of W[n][k]'s scale within one batch's scale buffer (GPTQ / AWQ:
// [group][n]; kLowbit: the QuantizedTensor group numbering).
LOWBIT_HD_CONSTEXPR std::int64_t ScaleIndex(const WeightView& w, std::int64_t n, std::int64_t k) {
  if (w.packing != WeightPacking::kLowbit) return (k / w.block) * w.n + n;
  switch (w.geometry) {
    case ScaleGeometry::kFlatBlocks: return (n * w.k + k) / w.block;
    case ScaleGeometry::kRowGroups: return n * CeilDiv(w.k, w.block) + k / w.block;
    case ScaleGeometry::kPerRow: return n;
  }
  return 0;
}

// The stored bits of W[l][n][k]'s scale (a byte, 16 bits or FP32 bits),
// decoded with ScaleFormatOf(w.scale_type).
LOWBIT_HD_CONSTEXPR std::uint32_t ScaleBits(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k) {
  const std::int64_t i = l * w.scales_batch_stride + ScaleIndex(w, n, k);
  switch (w.scale_type) {
    case ScaleType::kE8m0:
    case ScaleType::kUe4m3: return static_cast<const std::uint8_t*>(w.scales)[i];
    case ScaleType::kFp16:
    case ScaleType::kBf16: return static_cast<const std::uint16_t*>(w.scales)[i];
    case ScaleType::kFp32: return static_cast<const std::uint32_t*>(w.scales)[i];
  }
  return 0;
}

// The integer zero point of W[l][n][k] (0 for formats without one and for
// kLowbit with zeros == nullptr). GPTQ stores zero - 1 in a nibble and adds
// 1 back, modulo 16 (block/packing.h UnpackGptqQzeros).
LOWBIT_HD_CONSTEXPR std::int32_t ZeroPointOf(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k) {
  if (!IsIntegerFormat(w.format) || w.zeros == nullptr) return 0;
  if (w.packing == WeightPacking::kLowbit) {
    return static_cast<const std::int32_t*>(w.zeros)[l * w.zeros_batch_stride + ScaleIndex(w, n, k)];
  }
  const auto* words = static_cast<const std::uint32_t*>(w.zeros) + l * w.zeros_batch_stride;
  const std::int64_t g = k / w.block;
  const std::uint32_t word = words[g * (w.n / 8) + n / 8];
  if (w.packing == WeightPacking::kGptq) {
    return static_cast<std::int32_t>(((word >> (4 * (n % 8))) + 1) & 0xF);
  }
  return static_cast<std::int32_t>((word >> (4 * AwqNibbleOfLane(n % 8))) & 0xF);
}

// NVFP4's FP32 tensor scale (decode side) of batch l; 1 for other formats.
LOWBIT_HD_CONSTEXPR float TensorScaleOf(const WeightView& w, std::int64_t l) {
  if (w.format != WeightFormat::kNvfp4) return 1.0f;
  return w.tensor_scale[l * w.tensor_scale_batch_stride].decode;
}

// The format, packing, geometry and scale type that go together; nullptr
// when they do, else why not (host and device: a kernel may assert it).
LOWBIT_HD_CONSTEXPR const char* FormatCombinationError(const WeightView& w) {
  switch (w.format) {
    case WeightFormat::kNvfp4:
      if (w.packing != WeightPacking::kLowbit) return "nvfp4 weights take the lowbit packing (nibbles low first)";
      if (w.scale_type != ScaleType::kUe4m3) return "nvfp4 scales are UE4M3 bytes";
      if (w.geometry == ScaleGeometry::kPerRow) return "nvfp4 scales are per block of 16, not per row";
      if (w.block != kNvfp4Block) return "nvfp4 blocks are 16 elements";
      return nullptr;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3:
      if (w.packing != WeightPacking::kLowbit) return "MX weights take the lowbit packing";
      if (w.scale_type != ScaleType::kE8m0) return "MX scales are E8M0 bytes";
      if (w.geometry == ScaleGeometry::kPerRow) return "MX scales are per block of 32, not per row";
      if (w.block != kMxBlock) return "MX blocks are 32 elements";
      return nullptr;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4:
      if (w.scale_type != ScaleType::kFp32 && w.scale_type != ScaleType::kFp16 && w.scale_type != ScaleType::kBf16) {
        return "integer weights take FP32, FP16 or BF16 scales";
      }
      if (w.geometry == ScaleGeometry::kPerRow) return "integer weights take groups along K (kRowGroups or kFlatBlocks)";
      if (w.block < 1) return "the group size must be positive";
      if (w.packing != WeightPacking::kLowbit && w.geometry != ScaleGeometry::kRowGroups) {
        return "GPTQ and AWQ scales are per group along K (kRowGroups)";
      }
      return nullptr;
    case WeightFormat::kFp8E4m3PerChannel:
      if (w.packing != WeightPacking::kLowbit) return "FP8 weights take the lowbit packing (one byte per code)";
      if (w.scale_type != ScaleType::kFp32) return "FP8 per-channel scales are FP32";
      if (w.geometry != ScaleGeometry::kPerRow) return "FP8 per-channel weights take one scale per row (kPerRow)";
      return nullptr;
  }
  return "unknown weight format";
}

#if !defined(__CUDA_ARCH__)

// ---- host validation --------------------------------------------------------------

struct ValidationResult {
  bool ok = true;
  std::string error;  // empty when ok
};

namespace detail {

inline ValidationResult Fail(std::string message) { return {false, std::move(message)}; }

inline bool Aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// A buffer read for `batch` batches at `stride` units each holds
// (batch - 1) * stride + per_batch units; false when that overflows.
inline bool NeededUnits(std::int64_t batch, std::int64_t stride, std::int64_t per_batch, std::int64_t* out) {
  if (per_batch == 0) {
    *out = 0;
    return true;
  }
  __int128 need = static_cast<__int128>(batch - 1) * stride + per_batch;
  if (need > INT64_MAX) return false;
  *out = static_cast<std::int64_t>(need);
  return true;
}

inline ValidationResult CheckBuffer(const char* what, const void* p, std::int64_t count, std::int64_t batch,
                                    std::int64_t stride, std::int64_t per_batch, std::size_t alignment,
                                    const char* units) {
  if (per_batch == 0) return {};
  if (p == nullptr) return Fail(std::string(what) + " is null");
  if (!Aligned(p, alignment)) {
    return Fail(std::string(what) + " is not aligned to " + std::to_string(alignment) + " bytes");
  }
  if (stride < 0) return Fail(std::string(what) + " batch stride is negative");
  std::int64_t need = 0;
  if (!NeededUnits(batch, stride, per_batch, &need)) return Fail(std::string(what) + " size overflows");
  if (count != need) {
    return Fail(std::string(what) + " holds " + std::to_string(count) + " " + units + ", the shape needs " +
                std::to_string(need) + (batch > 1 ? " (" + std::to_string(batch) + " batches at stride " +
                                                        std::to_string(stride) + ")"
                                                  : std::string()));
  }
  return {};
}

}  // namespace detail

// The weights alone: shape rules, the format combination, every buffer's
// pointer, alignment and size. Messages name the problem: "K = 0 is not
// positive", "scales hold 64 ue4m3, the shape needs 128".
inline ValidationResult ValidateWeights(const WeightView& w) {
  using detail::Fail;
  if (w.n < 1) return Fail("N = " + std::to_string(w.n) + " is not positive");
  if (w.k < 1) return Fail("K = " + std::to_string(w.k) + " is not positive");
  if (w.batch < 1) return Fail("batch L = " + std::to_string(w.batch) + " is not positive");
  if (w.n > INT64_MAX / w.k) return Fail("N * K overflows");
  if (const char* e = FormatCombinationError(w)) return Fail(e);
  if (w.packing == WeightPacking::kGptq && w.k % 8 != 0) {
    return Fail("K = " + std::to_string(w.k) + " is not a multiple of 8 (GPTQ qweight packs 8 rows of K per word)");
  }
  if (w.packing != WeightPacking::kLowbit && w.n % 8 != 0) {
    return Fail("N = " + std::to_string(w.n) + " is not a multiple of 8 (" + WeightPackingName(w.packing) +
                " packs 8 columns of N per word)");
  }
  if (!IsIntegerFormat(w.format) && w.zeros != nullptr) {
    return Fail(std::string(WeightFormatName(w.format)) + " weights have no zero points (zeros must be null)");
  }
  if (w.format != WeightFormat::kNvfp4 && w.tensor_scale != nullptr) {
    return Fail(std::string(WeightFormatName(w.format)) + " weights have no tensor scale (tensor_scale must be null)");
  }
  const WeightBufferSizes s = PerBatchSizes(w);
  const bool words = w.packing != WeightPacking::kLowbit;
  ValidationResult r = detail::CheckBuffer(words ? "codes (qweight)" : "codes", w.codes, w.codes_count, w.batch,
                                           w.codes_batch_stride, s.codes, words ? 4 : 1, words ? "words" : "bytes");
  if (!r.ok) return r;
  r = detail::CheckBuffer("scales", w.scales, w.scales_count, w.batch, w.scales_batch_stride, s.scales,
                          ScaleBytes(w.scale_type), ScaleTypeName(w.scale_type));
  if (!r.ok) return r;
  r = detail::CheckBuffer(words ? "zeros (qzeros)" : "zero points", w.zeros, w.zeros_count, w.batch,
                          w.zeros_batch_stride, s.zeros, 4, words ? "words" : "int32");
  if (!r.ok) return r;
  return detail::CheckBuffer("tensor_scale", w.tensor_scale, w.tensor_scale_count, w.batch,
                             w.tensor_scale_batch_stride, s.tensor_scales, alignof(recipe::TensorScale),
                             "tensor scales");
}

// The whole product: the weights, then m, x and y against them, and y
// overlapping nothing it is computed from.
inline ValidationResult Validate(const MatmulProblem& p) {
  using detail::Fail;
  ValidationResult r = ValidateWeights(p.w);
  if (!r.ok) return r;
  const WeightView& w = p.w;
  if (p.m < 1) return Fail("M = " + std::to_string(p.m) + " is not positive");
  if (p.x.type != ActivationType::kBf16 && p.x.type != ActivationType::kFp16) {
    return Fail("activations must be BF16 or FP16");
  }
  if (p.y.type != OutputType::kBf16 && p.y.type != OutputType::kFp16 && p.y.type != OutputType::kFp32) {
    return Fail("the output must be BF16, FP16 or FP32");
  }
  if (p.x.row_stride < w.k) {
    return Fail("x row stride " + std::to_string(p.x.row_stride) + " is less than K = " + std::to_string(w.k));
  }
  if (p.y.row_stride < w.n) {
    return Fail("y row stride " + std::to_string(p.y.row_stride) + " is less than N = " + std::to_string(w.n));
  }
  const __int128 x_rows = static_cast<__int128>(p.m - 1) * p.x.row_stride + w.k;
  const __int128 y_rows = static_cast<__int128>(p.m - 1) * p.y.row_stride + w.n;
  if (x_rows > INT64_MAX || y_rows > INT64_MAX) return Fail("x or y size overflows");
  if (w.batch > 1 && p.x.batch_stride < x_rows) {
    return Fail("x batch stride " + std::to_string(p.x.batch_stride) + " is less than one batch's " +
                std::to_string(static_cast<std::int64_t>(x_rows)) + " elements");
  }
  if (w.batch > 1 && p.y.batch_stride < y_rows) {
    return Fail("y batch stride " + std::to_string(p.y.batch_stride) + " is less than one batch's " +
                std::to_string(static_cast<std::int64_t>(y_rows)) + " elements (batches would overlap)");
  }
  r = detail::CheckBuffer("x", p.x.data, p.x.count, w.batch, p.x.batch_stride, static_cast<std::int64_t>(x_rows), 2,
                          ActivationTypeName(p.x.type));
  if (!r.ok) return r;
  r = detail::CheckBuffer("y", p.y.data, p.y.count, w.batch, p.y.batch_stride, static_cast<std::int64_t>(y_rows),
                          OutputBytes(p.y.type), OutputTypeName(p.y.type));
  if (!r.ok) return r;
  // y must not overlap anything it reads (byte ranges).
  const auto begin = [](const void* q) { return reinterpret_cast<std::uintptr_t>(q); };
  const std::uintptr_t y0 = begin(p.y.data);
  const std::uintptr_t y1 = y0 + static_cast<std::uintptr_t>(p.y.count) * OutputBytes(p.y.type);
  struct Range {
    const char* name;
    const void* p;
    std::int64_t bytes;
  };
  const bool words = w.packing != WeightPacking::kLowbit;
  const Range inputs[] = {
      {"x", p.x.data, p.x.count * 2},
      {"codes", w.codes, w.codes_count * (words ? 4 : 1)},
      {"scales", w.scales, w.scales_count * static_cast<std::int64_t>(ScaleBytes(w.scale_type))},
      {"zeros", w.zeros, w.zeros_count * 4},
      {"tensor_scale", w.tensor_scale, w.tensor_scale_count * static_cast<std::int64_t>(sizeof(recipe::TensorScale))},
  };
  for (const Range& in : inputs) {
    if (in.p == nullptr || in.bytes == 0) continue;
    const std::uintptr_t a0 = begin(in.p), a1 = a0 + static_cast<std::uintptr_t>(in.bytes);
    if (a0 < y1 && y0 < a1) return Fail(std::string("y overlaps ") + in.name);
  }
  return {};
}

#endif  // !defined(__CUDA_ARCH__)

// A view with dense batch strides (each buffer holds `batch` back-to-back
// copies) and counts to match: the common case, so callers do not recompute
// the size rules. scale_type: kUe4m3 for NVFP4, kE8m0 for MX, kFp32 for
// lowbit's scaled recipes (QuantizedTensor::scales); geometry kFlatBlocks for
// lowbit's MX / NVFP4 default layout, kRowGroups for "/g128" layouts and
// GPTQ / AWQ, kPerRow for "/row".
LOWBIT_HD_CONSTEXPR WeightView DenseWeights(WeightFormat format, WeightPacking packing, ScaleGeometry geometry,
                                            ScaleType scale_type, std::int64_t n, std::int64_t k,
                                            std::int64_t block, std::int64_t batch, const void* codes,
                                            const void* scales, const void* zeros,
                                            const recipe::TensorScale* tensor_scale) {
  WeightView w;
  w.format = format;
  w.packing = packing;
  w.geometry = geometry;
  w.scale_type = scale_type;
  w.n = n;
  w.k = k;
  w.block = block;
  w.batch = batch;
  w.codes = codes;
  w.scales = scales;
  w.zeros = zeros;
  w.tensor_scale = tensor_scale;
  const WeightBufferSizes s = PerBatchSizes(w);
  w.codes_batch_stride = s.codes;
  w.codes_count = s.codes * batch;
  w.scales_batch_stride = s.scales;
  w.scales_count = s.scales * batch;
  w.zeros_batch_stride = s.zeros;
  w.zeros_count = s.zeros * batch;
  w.tensor_scale_batch_stride = s.tensor_scales;
  w.tensor_scale_count = s.tensor_scales * batch;
  return w;
}

}  // namespace lowbit::matmul
