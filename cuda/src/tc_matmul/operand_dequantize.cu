// operand_dequantize.h. Two kernels:
//
// The run kernels (LowbitRunsKernel, GptqRunsKernel: templates over the
// format and scale type), where the codes of eight consecutive K
// arrive in one load and share one scale and zero point (lowbit nibbles or
// bytes with K a multiple of 8 and scale blocks a power-of-two multiple of
// 8; GPTQ words with groups a multiple of 8): one thread per run of eight,
// the element values read from a table of the model's decoded codes (a pair
// of nibbles per lookup), multiplied by the scale in FP32
// (alternatives/weight_operand_fp32.h), and two products rounded into BF16
// by one hardware conversion (bf16_pair.cuh). A run that may hold a NaN (a
// scale that is not finite, a NaN FP8 element) rounds with the model's
// EncodeF32BitsToBf16 instead; lowbit groups whose int32 zero point puts an
// offset beyond 15 are written again through the model's WeightOperand
// (FarZeroGroupsKernel).
// Lowbit rows: consecutive threads take consecutive runs of one row (the
// loads and the 16-byte stores coalesce); GPTQ: a block turns a tile of
// words over in shared memory, read 16 bytes a thread along N and written
// 16 bytes a thread along K (GptqTilesKernel).
//
// GeneralKernel, everything else: one block per row, eight K per thread,
// each element through the model's accessors (weights.h WeightCode,
// ScaleBits, ZeroPointOf) where no shared load or scale applies.
//
// Why two: a pass over a 28672 x 8192 weight runs 235 million elements; the
// general kernel's per-run index arithmetic (64-bit divisions by the block)
// and per-element dispatch kept it at 60 instructions an element and a
// fifth of the DRAM bandwidth (Nsight Compute on an H100, bench/RESULTS.md
// "GEMM").
#include "operand_dequantize.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/alternatives/weight_operand_fp32.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/recipe/element_encode.h"
#include "bf16_pair.cuh"

namespace lowbit::cuda::tc_gemm {
namespace {

using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;
using matmul::WeightView;

inline constexpr int kThreads = 256;

// The model's decoded values of every code of the element and scale formats
// the FP32 product takes (convert.h DecodeToF32 at compile time).
struct DecodedCodes {
  float value[256];
};
constexpr DecodedCodes DecodedOf(const FormatSpec& f) {
  DecodedCodes d{};
  const int codes = 1 << f.total_bits;
  for (int c = 0; c < 256; ++c) d.value[c] = c < codes ? DecodeToF32(f, static_cast<std::uint32_t>(c)) : 0.0f;
  return d;
}
__device__ const DecodedCodes kE2m1Values = DecodedOf(kE2m1);
__device__ const DecodedCodes kE4m3Values = DecodedOf(kE4m3);
__device__ const DecodedCodes kUe4m3Values = DecodedOf(kUe4m3);
__device__ const DecodedCodes kE8m0Values = DecodedOf(kE8m0);

// How a thread gets its eight codes.
enum class CodeLoad : std::uint8_t {
  kEach,           // WeightCode per element
  kLowbitNibbles,  // one 4-byte word: lowbit 4-bit codes, K % 8 == 0, 4-byte aligned buffer and batch stride
  kLowbitBytes,    // one 8-byte word: lowbit 8-bit codes, K % 8 == 0, 8-byte aligned
  kGptqWord,       // one GPTQ qweight word: rows 8 (k / 8) .. + 7 of column n
};

struct Plan {
  WeightView w;
  std::int64_t rows;       // operand rows per batch entry (>= N; rows past N are +0)
  std::int64_t k_padded;
  CodeLoad load;
  bool shared_scale;  // every run of eight K shares one scale (and zero point)
  bool fast;          // alternatives::HasFp32Operand
  std::uint16_t* operand;
  float* outer_scales;
};

__device__ __forceinline__ float ScaleValue(ScaleType t, std::uint32_t bits, const float* table) {
  if (t == ScaleType::kFp32) return __uint_as_float(bits);
  if (t == ScaleType::kFp16) return __uint_as_float(alternatives::DecodeF16ToF32Bits(static_cast<std::uint16_t>(bits)));
  if (t == ScaleType::kBf16) return __uint_as_float(alternatives::DecodeBf16ToF32Bits(static_cast<std::uint16_t>(bits)));
  return table[bits & 0xFF];
}

// The eight codes of W[l][n][k0 .. k0 + 7] (k0 + 7 < K), one byte each in two words.
__device__ __forceinline__ void LoadCodes(const Plan& p, std::int64_t l, std::int64_t n, std::int64_t k0,
                                          std::uint8_t (&codes)[8]) {
  const WeightView& w = p.w;
  switch (p.load) {
    case CodeLoad::kLowbitNibbles: {
      const auto* bytes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
      const std::uint32_t word = __ldg(reinterpret_cast<const unsigned*>(bytes + (n * w.k + k0) / 2));
#pragma unroll
      for (int i = 0; i < 8; ++i) codes[i] = static_cast<std::uint8_t>((word >> (4 * i)) & 0xF);  // low nibble first
      return;
    }
    case CodeLoad::kLowbitBytes: {
      const auto* bytes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
      const uint2 word = __ldg(reinterpret_cast<const uint2*>(bytes + n * w.k + k0));
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        codes[i] = static_cast<std::uint8_t>(word.x >> (8 * i));
        codes[4 + i] = static_cast<std::uint8_t>(word.y >> (8 * i));
      }
      return;
    }
    case CodeLoad::kGptqWord: {
      const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
      const std::uint32_t word = __ldg(words + (k0 / 8) * w.n + n);
#pragma unroll
      for (int i = 0; i < 8; ++i) codes[i] = static_cast<std::uint8_t>((word >> (4 * i)) & 0xF);
      return;
    }
    case CodeLoad::kEach:
      break;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) codes[i] = matmul::WeightCode(w, l, n, k0 + i);
}

__global__ void __launch_bounds__(kThreads) GeneralKernel(Plan p) {
  __shared__ float element_value[256], scale_value[256];
  const WeightView& w = p.w;
  const bool integer = matmul::IsIntegerFormat(w.format);
  const bool per_channel = w.format == WeightFormat::kFp8E4m3PerChannel;
  if (p.fast && !integer) {
    const bool fp4 = w.format == WeightFormat::kNvfp4 || w.format == WeightFormat::kMxfp4;
    element_value[threadIdx.x] = (fp4 ? kE2m1Values : kE4m3Values).value[threadIdx.x];
    scale_value[threadIdx.x] = (w.scale_type == ScaleType::kUe4m3 ? kUe4m3Values : kE8m0Values).value[threadIdx.x];
  }
  __syncthreads();
  constexpr FormatSpec kOperand = kBf16;  // a device copy of the host constant (convert.h)
  const FormatSpec element_format = matmul::ElementFormatOf(w.format);
  for (std::int64_t row = blockIdx.x; row < w.batch * p.rows; row += gridDim.x) {
    const std::int64_t l = row / p.rows, n = row % p.rows;
    std::uint16_t* out = p.operand + row * p.k_padded;
    if (n >= w.n) {  // padding rows: +0, scale 1
      if (threadIdx.x == 0) p.outer_scales[row] = 1.0f;
      for (std::int64_t k0 = 8 * static_cast<std::int64_t>(threadIdx.x); k0 < p.k_padded; k0 += 8 * kThreads) {
        *reinterpret_cast<uint4*>(out + k0) = make_uint4(0, 0, 0, 0);
      }
      continue;
    }
    if (threadIdx.x == 0) p.outer_scales[row] = matmul::OuterScaleOf(w, l, n);
    for (std::int64_t k0 = 8 * static_cast<std::int64_t>(threadIdx.x); k0 < p.k_padded; k0 += 8 * kThreads) {
      std::uint32_t packed[4] = {0, 0, 0, 0};  // +0 past K: the zero padding
      if (k0 + 8 <= w.k && p.fast) {
        std::uint8_t codes[8];
        LoadCodes(p, l, n, k0, codes);
        // One scale and zero point for the eight, or each element's.
        std::uint32_t scale_bits = 0;
        std::int32_t zero = 0;
        if (p.shared_scale && !per_channel) {
          scale_bits = matmul::ScaleBits(w, l, n, k0);
          if (integer) zero = matmul::ZeroPointOf(w, l, n, k0);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const std::int64_t k = k0 + i;
          const std::uint32_t sb = p.shared_scale || per_channel ? scale_bits : matmul::ScaleBits(w, l, n, k);
          std::uint32_t code = 0;
          if (integer) {
            const std::int32_t z = p.shared_scale ? zero : matmul::ZeroPointOf(w, l, n, k);
            const std::int64_t offset = static_cast<std::int64_t>(recipe::IntegerOfCode(element_format, codes[i])) - z;
            if (offset <= alternatives::kFp32IntegerOffset && offset >= -alternatives::kFp32IntegerOffset) {
              code = alternatives::OperandOfSmallIntegerProduct(true, static_cast<float>(offset),
                                                                ScaleValue(w.scale_type, sb, scale_value));
            } else {
              code = matmul::WeightOperand(w, l, n, k, kOperand).code;
            }
          } else {
            code = alternatives::OperandOfFp32Product(true, element_value[codes[i]],
                                                      per_channel ? 1.0f : scale_value[sb & 0xFF]);
          }
          packed[i / 2] |= code << (16 * (i % 2));
        }
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const std::int64_t k = k0 + i;
          if (k < w.k) packed[i / 2] |= matmul::WeightOperand(w, l, n, k, kOperand).code << (16 * (i % 2));
        }
      }
      *reinterpret_cast<uint4*>(out + k0) = make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
  }
}

// ---- the run kernels -------------------------------------------------------------

// The model's values of a format's codes for the run kernels: FP element
// formats through DecodeToF32, integer ones through recipe::IntegerOfCode,
// scales through DecodeToF32; as floats.
constexpr DecodedCodes ElementValuesOf(WeightFormat f) {
  const FormatSpec e = matmul::ElementFormatOf(f);
  if (!matmul::IsIntegerFormat(f)) return DecodedOf(e);
  DecodedCodes d{};
  for (int c = 0; c < (1 << e.total_bits); ++c) d.value[c] = static_cast<float>(recipe::IntegerOfCode(e, static_cast<std::uint8_t>(c)));
  return d;
}
template <WeightFormat kFormat>
__device__ const DecodedCodes kElementValues = ElementValuesOf(kFormat);
template <ScaleType kScale>
__device__ const DecodedCodes kByteScaleValues = DecodedOf(matmul::ScaleFormatOf(kScale));

// The zero points z for which every code's offset q - z lies within
// +-kFp32IntegerOffset (alternatives/weight_operand_fp32.h).
struct ZeroRange {
  std::int32_t lowest, highest;
};
constexpr ZeroRange SafeZerosOf(WeightFormat f) {
  const FormatSpec e = matmul::ElementFormatOf(f);
  std::int32_t qmin = 0, qmax = 0;
  for (int c = 0; c < (1 << e.total_bits); ++c) {
    const std::int32_t q = recipe::IntegerOfCode(e, static_cast<std::uint8_t>(c));
    qmin = q < qmin ? q : qmin;
    qmax = q > qmax ? q : qmax;
  }
  const auto reach = static_cast<std::int32_t>(alternatives::kFp32IntegerOffset);
  return {qmax - reach, qmin + reach};
}

// Eight blocks of 256 threads fill an SM (32 registers a thread: a few
// bytes of the per-row set-up spill, not the run loop).
inline constexpr int kRunsBlocksPerSm = 8;
inline constexpr int kMaxRowThreadsLog2 = 6;

struct RunsPlan {
  Plan base;
  std::int64_t runs_per_row;  // K / 8
  int scale_shift;            // lowbit: log2(runs per scale block); 0 per row
  int row_threads_log2;       // lowbit: threads per row = 1 << this
  bool gptq_wide_loads;         // GPTQ: words 16-byte aligned at every (batch, K / 8, column 4j)
};

// The tables a block reads: one float per code (FP8) or a pair per byte of
// two nibbles (4-bit), and one per scale byte.
template <WeightFormat kFormat, ScaleType kScale>
struct RunTables {
  float2 pair[256];
  float element[256];
  float scale[256];
};

template <WeightFormat kFormat, ScaleType kScale>
__device__ __forceinline__ void FillTables(RunTables<kFormat, kScale>& t) {
  const int i = static_cast<int>(threadIdx.x);
  const DecodedCodes& e = kElementValues<kFormat>;
  if constexpr (matmul::ElementFormatOf(kFormat).total_bits == 4) {
    t.pair[i] = make_float2(e.value[i & 0xF], e.value[i >> 4]);  // low nibble first (weights.h WeightCode)
  } else {
    t.element[i] = e.value[i];
  }
  if constexpr (kScale == ScaleType::kUe4m3 || kScale == ScaleType::kE8m0) t.scale[i] = kByteScaleValues<kScale>.value[i];
}

template <ScaleType kScale>
__device__ __forceinline__ float ScaleOfBits(std::uint32_t bits, const float* byte_table) {
  if constexpr (kScale == ScaleType::kFp32) return __uint_as_float(bits);
  if constexpr (kScale == ScaleType::kFp16) return __uint_as_float(alternatives::DecodeF16ToF32Bits(static_cast<std::uint16_t>(bits)));
  if constexpr (kScale == ScaleType::kBf16) return __uint_as_float(alternatives::DecodeBf16ToF32Bits(static_cast<std::uint16_t>(bits)));
  return byte_table[bits & 0xFF];
}

// The FP32 value whose rounding into BF16 is one weight's operand
// (alternatives/weight_operand_fp32.h): integers (q - z) x s rounded to odd
// at FP32's precision, FP elements element x scale, FP8 per channel the
// element alone (its channel scale is the epilogue's). `element` is q or the
// decoded element, `zero` the zero point as a float.
template <WeightFormat kFormat, ScaleType kScale>
__device__ __forceinline__ float OperandValue(float element, float scale, float zero) {
  if constexpr (matmul::IsIntegerFormat(kFormat)) {
    const float offset = element - zero;  // small integers: exact
    if constexpr (kScale == ScaleType::kFp32) {
      return __uint_as_float(alternatives::SmallIntegerProductRoundedToOdd(offset, scale));
    } else {
      // An offset of at most 5 bits times an 11- or 8-bit scale is exact in
      // FP32, so rounding it to odd leaves it as it is (weight_operand_fp32.h).
      return offset * scale;
    }
  } else if constexpr (kFormat == WeightFormat::kFp8E4m3PerChannel) {
    return element;
  } else {
    return element * scale;  // OperandOfFp32Product: one exact (or exactly overflowing) product
  }
}

// A run of eight codes (4-bit: one word, nibble i = K i; 8-bit: two words,
// byte i = K i) as the eight values OperandValue gives; true when one may
// be a NaN (a scale that is not finite: NaN, or Inf times a zero offset; a
// NaN FP8 element).
template <WeightFormat kFormat, ScaleType kScale>
__device__ __forceinline__ bool RunValues(const RunTables<kFormat, kScale>& t, uint2 words, float scale, float zero,
                                          float (&v)[8]) {
  if constexpr (matmul::ElementFormatOf(kFormat).total_bits == 4) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 e = t.pair[(words.x >> (8 * j)) & 0xFF];
      v[2 * j] = OperandValue<kFormat, kScale>(e.x, scale, zero);
      v[2 * j + 1] = OperandValue<kFormat, kScale>(e.y, scale, zero);
    }
    return !isfinite(scale);
  } else {
    float e[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = t.element[((i < 4 ? words.x : words.y) >> (8 * (i % 4))) & 0xFF];
    // E4M3 has no infinities: its values sum to a NaN only when one is.
    const float sum = ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]));
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = OperandValue<kFormat, kScale>(e[i], scale, zero);
    return sum != sum || !isfinite(scale);
  }
}

// Eight values into operand codes: the hardware rounding where none is a NaN
// (bf16_pair.cuh), else the model's (EncodeF32BitsToBf16) one by one.
__device__ __forceinline__ uint4 PackRun(const float (&v)[8], bool may_hold_nan) {
  std::uint32_t packed[4];
  if (!may_hold_nan) {
#pragma unroll
    for (int j = 0; j < 4; ++j) packed[j] = RoundPairToBf16(v[2 * j], v[2 * j + 1]);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      packed[j] = static_cast<std::uint32_t>(alternatives::EncodeF32BitsToBf16(__float_as_uint(v[2 * j]))) |
                  static_cast<std::uint32_t>(alternatives::EncodeF32BitsToBf16(__float_as_uint(v[2 * j + 1]))) << 16;
    }
  }
  return make_uint4(packed[0], packed[1], packed[2], packed[3]);
}

// Whether every code's offset q - z is within kFp32IntegerOffset: always
// for GPTQ's 4-bit zero points and for no zero point; lowbit's int32 zero
// points may be anywhere (FarZeroGroupsKernel).
template <WeightFormat kFormat>
__device__ __forceinline__ bool ZeroKeepsOffsetsSmall(std::int32_t zero) {
  constexpr ZeroRange kSafe = SafeZerosOf(kFormat);
  return zero >= kSafe.lowest && zero <= kSafe.highest;
}

// Lowbit rows: 1 << row_threads_log2 threads per row, run kw of a row at
// thread kw mod that; scale index = the row's first (weights.h ScaleIndex at
// k = 0) + kw >> scale_shift (row groups, flat blocks with K a multiple of the
// block, per row: a row's blocks are consecutive entries).
template <WeightFormat kFormat, ScaleType kScale>
__global__ void __launch_bounds__(kThreads, kRunsBlocksPerSm) LowbitRunsKernel(RunsPlan rp) {
  __shared__ RunTables<kFormat, kScale> tables;
  FillTables(tables);
  __syncthreads();
  constexpr bool kFourBit = matmul::ElementFormatOf(kFormat).total_bits == 4;
  constexpr bool kPerChannel = kFormat == WeightFormat::kFp8E4m3PerChannel;
  const Plan& p = rp.base;
  const WeightView& w = p.w;
  const int row_threads = 1 << rp.row_threads_log2;
  const int lane = static_cast<int>(threadIdx.x) & (row_threads - 1);
  const int rows_per_block = kThreads >> rp.row_threads_log2;
  const std::int64_t rows = w.batch * p.rows;
  // A row's first scale index is linear in n for the geometries that reach
  // this kernel (weights.h ScaleIndex at k = 0: n ceil(K / block), n K /
  // block with K a multiple of the block, n): one model call, no division
  // per row.
  const std::int64_t scales_per_row = matmul::ScaleIndex(w, 1, 0);
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * rows_per_block + (threadIdx.x >> rp.row_threads_log2);
       row < rows; row += static_cast<std::int64_t>(gridDim.x) * rows_per_block) {
    const std::int64_t l = w.batch == 1 ? 0 : row / p.rows, n = row - l * p.rows;
    uint4* out = reinterpret_cast<uint4*>(p.operand + row * p.k_padded);
    if (n >= w.n) {  // padding rows: +0, scale 1
      if (lane == 0) p.outer_scales[row] = 1.0f;
      for (std::int64_t kw = lane; kw < rp.runs_per_row; kw += row_threads) out[kw] = make_uint4(0, 0, 0, 0);
      continue;
    }
    if (lane == 0) p.outer_scales[row] = matmul::OuterScaleOf(w, l, n);
    const auto* code_bytes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride + n * w.k / (kFourBit ? 2 : 1);
    const std::int64_t first_scale = l * w.scales_batch_stride + n * scales_per_row;
    const std::int32_t* zeros = w.zeros == nullptr ? nullptr
                                                   : static_cast<const std::int32_t*>(w.zeros) + l * w.zeros_batch_stride +
                                                         n * scales_per_row;
    for (std::int64_t kw = lane; kw < rp.runs_per_row; kw += row_threads) {
      uint2 words;
      if constexpr (kFourBit) {
        words = make_uint2(__ldg(reinterpret_cast<const unsigned*>(code_bytes) + kw), 0);
      } else {
        words = __ldg(reinterpret_cast<const uint2*>(code_bytes) + kw);
      }
      float scale = 1.0f;
      std::int32_t zero = 0;
      if constexpr (!kPerChannel) {
        const std::int64_t s = first_scale + (kw >> rp.scale_shift);
        std::uint32_t bits;
        if constexpr (kScale == ScaleType::kFp32) {
          bits = __ldg(static_cast<const unsigned*>(w.scales) + s);
        } else if constexpr (kScale == ScaleType::kFp16 || kScale == ScaleType::kBf16) {
          bits = __ldg(static_cast<const unsigned short*>(w.scales) + s);
        } else {
          bits = __ldg(static_cast<const unsigned char*>(w.scales) + s);
        }
        scale = ScaleOfBits<kScale>(bits, tables.scale);
        if (zeros != nullptr) zero = __ldg(zeros + (kw >> rp.scale_shift));
      }
      float v[8];
      const bool may_hold_nan = RunValues(tables, words, scale, static_cast<float>(zero), v);
      out[kw] = PackRun(v, may_hold_nan);
    }
  }
}

// GPTQ words [K / 8][N] (weights.h WeightCode) hold eight consecutive K of
// one column, so the words of one operand row lie N apart while the operand
// writes that row's K contiguously: the read and the write run along
// different axes. A block takes a tile of kGptqTileRuns words along K by
// kGptqTileColumns columns and turns it over in shared memory:
//  - the read: thread t loads the 16 bytes of word row t / 16, columns
//    4 (t mod 16) .. + 3, so a warp reads two whole 256-byte spans of rows;
//  - the write: a warp writes runs kw0 .. kw0 + 7 of four consecutive
//    operand rows, 16 bytes (one run of eight BF16) a thread: four whole
//    128-byte spans.
// The kernel before this one gave each thread a column and a group: a warp's
// store scattered its 32 16-byte pieces over 8 rows and 4 groups (half of
// every 32-byte sector written), and the pass ran at 0.16x a device copy
// against NVFP4's 0.75x (bench/RESULTS.md "GEMM"). Each run still goes through RunValues and
// PackRun with its scale and zero point from the model's accessors (ScaleBits,
// ZeroPointOf), so groups of any multiple of 8 may start anywhere in a tile.
// Tiles past N or K are cut at whole words (N is a multiple of 8); words
// not 16-byte aligned (a codes pointer or batch stride off the 16 bytes)
// are read one at a time (RunsPlan::gptq_wide_loads).
inline constexpr int kGptqTileRuns = 16;     // words along K: 128 K, a 256-byte span of each operand row
inline constexpr int kGptqTileColumns = 64;  // columns: a 256-byte span of each word row
inline constexpr int kGptqChunks = kGptqTileColumns / 4;  // 16-byte chunks of a word row
inline constexpr int kGptqTilesPerBlock = 4;  // consecutive K tiles of one column tile: the next tile's words
                                              // load while this one's runs are stored
// Six blocks of 256 threads an SM: 40 registers, nothing spilled inside the
// run loop (eight blocks, 32 registers, spilled 176 bytes, some of them in
// the tile loop; ptxas, CUDA 13.0).
inline constexpr int kGptqTileBlocksPerSm = 6;
inline constexpr int kGptqRunsPerThread = kGptqTileRuns * kGptqTileColumns / kThreads;
static_assert(kGptqTileRuns * kGptqChunks == kThreads, "one 16-byte load a thread per tile");
static_assert(kGptqTileRuns == 16 && kGptqRunsPerThread == 4, "the store mapping below: 8 warps x 4 quads of 4 rows x 8 runs");

// Where word (run kw, column c) of a tile lies in shared memory: word rows
// of 64, the 16-byte chunk c / 4 XOR kw mod 8. The load's 16-byte writes
// (eight lanes: one row's chunks 0..7) and the store's reads (eight runs of
// four columns) then each touch all 32 banks once.
__device__ __forceinline__ int GptqTileIndex(int kw, int c) {
  return kw * kGptqTileColumns + 4 * ((c >> 2) ^ (kw & 7)) + (c & 3);
}

template <WeightFormat kFormat, ScaleType kScale>
__global__ void __launch_bounds__(kThreads, kGptqTileBlocksPerSm) GptqTilesKernel(RunsPlan rp) {
  __shared__ RunTables<kFormat, kScale> tables;
  __shared__ __align__(16) std::uint32_t tile[kGptqTileRuns * kGptqTileColumns];
  FillTables(tables);
  __syncthreads();
  const Plan& p = rp.base;
  // W's view with the fields this kernel was chosen by (LaunchRunsFor,
  // DequantizeIntoOperand) as the constants they equal there: the model's
  // accessors fold their switches over format, packing and scale type (read
  // from the view, they tripled the run loop: 623 SASS instructions against
  // 207, CUDA 13.0 for sm_90a).
  WeightView w = p.w;
  w.format = kFormat;
  w.packing = WeightPacking::kGptq;
  w.scale_type = kScale;
  const int t = static_cast<int>(threadIdx.x);
  // The read: word row load_kw, columns 4 load_chunk .. + 3 of the tile.
  const int load_kw = t / kGptqChunks, load_chunk = t % kGptqChunks;
  // The write: run store_kw of rows 16 i + store_row (i = 0..3) of the tile
  // (warp v, lane u: runs 8 (v mod 2) + u mod 8, rows 4 (v / 2) + u / 8).
  const int warp = t / 32, lane = t % 32;
  const int store_kw = 8 * (warp % 2) + lane % 8, store_row = 4 * (warp / 2) + lane / 8;
  const std::int64_t column_tiles = (w.n + kGptqTileColumns - 1) / kGptqTileColumns;
  const std::int64_t k_tiles = (rp.runs_per_row + kGptqTileRuns - 1) / kGptqTileRuns;
  const std::int64_t strips = (k_tiles + kGptqTilesPerBlock - 1) / kGptqTilesPerBlock;
  for (std::int64_t b = blockIdx.x; b < w.batch * column_tiles * strips; b += gridDim.x) {
    const std::int64_t l = b / (column_tiles * strips), rest = b - l * column_tiles * strips;
    const std::int64_t n0 = rest / strips * kGptqTileColumns, strip = rest % strips;
    const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
    if (strip == 0 && t < kGptqTileColumns && n0 + t < w.n) {
      p.outer_scales[l * p.rows + n0 + t] = matmul::OuterScaleOf(w, l, n0 + t);
    }
    const std::int64_t first = strip * kGptqTilesPerBlock;
    const std::int64_t last = first + kGptqTilesPerBlock < k_tiles ? first + kGptqTilesPerBlock : k_tiles;
    // Tile kt's 16 bytes of this thread; zeros past K or N (never stored).
    const auto load = [&](std::int64_t kt) {
      const std::int64_t kw = kt * kGptqTileRuns + load_kw, c = n0 + 4 * load_chunk;
      if (kw >= rp.runs_per_row || c >= w.n) return make_uint4(0, 0, 0, 0);  // N % 8 == 0: c + 3 < N
      const std::uint32_t* at = words + kw * w.n + c;
      if (rp.gptq_wide_loads) return __ldg(reinterpret_cast<const uint4*>(at));
      return make_uint4(__ldg(at), __ldg(at + 1), __ldg(at + 2), __ldg(at + 3));
    };
    uint4 next = load(first);
    for (std::int64_t kt = first; kt < last; ++kt) {
      const uint4 mine = next;
      __syncthreads();  // the previous tile's words are read
      *reinterpret_cast<uint4*>(&tile[GptqTileIndex(load_kw, 4 * load_chunk)]) = mine;
      __syncthreads();
      if (kt + 1 < last) next = load(kt + 1);
      const std::int64_t kw = kt * kGptqTileRuns + store_kw;
      if (kw >= rp.runs_per_row) continue;  // no __syncthreads below
      const std::int64_t k0 = 8 * kw;
      // Every run reads a scale and zero point (rows past N those of row
      // N - 1, not stored): the accessors' division by the group is then
      // the loop's to hoist.
#pragma unroll 1
      for (int i = 0; i < kGptqRunsPerThread; ++i) {
        const int r = 16 * i + store_row;
        const std::int64_t n = n0 + r < w.n ? n0 + r : w.n - 1;
        const float scale = ScaleOfBits<kScale>(matmul::ScaleBits(w, l, n, k0), tables.scale);
        const float zero = static_cast<float>(matmul::ZeroPointOf(w, l, n, k0));
        float v[8];
        const bool may_hold_nan = RunValues(tables, make_uint2(tile[GptqTileIndex(store_kw, r)], 0), scale, zero, v);
        if (n0 + r < w.n) reinterpret_cast<uint4*>(p.operand + (l * p.rows + n) * p.k_padded)[kw] = PackRun(v, may_hold_nan);
      }
    }
  }
}

// Rows N .. rows - 1 of every batch entry: +0, outer scale 1 (the GPTQ
// run kernel writes only rows below N).
__global__ void __launch_bounds__(kThreads) PaddingRowsKernel(Plan p) {
  const std::int64_t per_batch = p.rows - p.w.n;
  for (std::int64_t i = blockIdx.x; i < p.w.batch * per_batch; i += gridDim.x) {
    const std::int64_t l = i / per_batch, row = l * p.rows + p.w.n + (i - l * per_batch);
    if (threadIdx.x == 0) p.outer_scales[row] = 1.0f;
    uint4* out = reinterpret_cast<uint4*>(p.operand + row * p.k_padded);
    for (std::int64_t kw = threadIdx.x; kw < p.k_padded / 8; kw += kThreads) out[kw] = make_uint4(0, 0, 0, 0);
  }
}

// Lowbit integer weights with zero points: the groups whose zero point puts
// an offset beyond kFp32IntegerOffset, which LowbitRunsKernel wrote in FP32
// arithmetic that does not cover them, again through the model's
// WeightOperand, one thread a group (8 << scale_shift weights).
template <WeightFormat kFormat>
__global__ void __launch_bounds__(kThreads) FarZeroGroupsKernel(RunsPlan rp) {
  const Plan& p = rp.base;
  const WeightView& w = p.w;
  constexpr FormatSpec kOperand = kBf16;
  const std::int64_t group = std::int64_t{8} << rp.scale_shift;
  const std::int64_t groups_per_row = (w.k + group - 1) / group;
  const std::int64_t total = w.batch * w.n * groups_per_row;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t row = i / groups_per_row, g = i - row * groups_per_row;
    const std::int64_t l = row / w.n, n = row - l * w.n;
    if (ZeroKeepsOffsetsSmall<kFormat>(matmul::ZeroPointOf(w, l, n, g * group))) continue;
    std::uint16_t* out = p.operand + (l * p.rows + n) * p.k_padded;
    const std::int64_t end = (g + 1) * group < w.k ? (g + 1) * group : w.k;
    for (std::int64_t k = g * group; k < end; ++k) out[k] = static_cast<std::uint16_t>(matmul::WeightOperand(w, l, n, k, kOperand).code);
  }
}

template <WeightFormat kFormat, ScaleType kScale>
cudaError_t LaunchRuns(const RunsPlan& rp, bool gptq, cudaStream_t stream) {
  const WeightView& w = rp.base.w;
  std::int64_t blocks = 0;
  const auto grid = [](std::int64_t b) { return static_cast<unsigned>(b < (std::int64_t{1} << 30) ? b : (std::int64_t{1} << 30)); };
  if (gptq) {
    // GPTQ zero points are nibbles, 0..15 (weights.h ZeroPointOf): every
    // UINT4 offset stays within kFp32IntegerOffset.
    static_assert(SafeZerosOf(WeightFormat::kUint4).lowest <= 0 && SafeZerosOf(WeightFormat::kUint4).highest >= 15);
    if constexpr (kFormat == WeightFormat::kUint4) {
      const std::int64_t k_tiles = (rp.runs_per_row + kGptqTileRuns - 1) / kGptqTileRuns;
      blocks = w.batch * ((w.n + kGptqTileColumns - 1) / kGptqTileColumns) *
               ((k_tiles + kGptqTilesPerBlock - 1) / kGptqTilesPerBlock);
      GptqTilesKernel<kFormat, kScale><<<grid(blocks), kThreads, 0, stream>>>(rp);
    }
    return cudaGetLastError();
  }
  const std::int64_t rows_per_block = kThreads >> rp.row_threads_log2;
  blocks = (w.batch * rp.base.rows + rows_per_block - 1) / rows_per_block;
  LowbitRunsKernel<kFormat, kScale><<<grid(blocks), kThreads, 0, stream>>>(rp);
  if constexpr (matmul::IsIntegerFormat(kFormat)) {
    if (w.zeros != nullptr && cudaPeekAtLastError() == cudaSuccess) {
      const std::int64_t group = std::int64_t{8} << rp.scale_shift;
      const std::int64_t groups = w.batch * w.n * ((w.k + group - 1) / group);
      FarZeroGroupsKernel<kFormat><<<grid((groups + kThreads - 1) / kThreads), kThreads, 0, stream>>>(rp);
    }
  }
  return cudaGetLastError();
}

// The run kernel for W's format and scale type (HasFp32Operand's pairs).
cudaError_t LaunchRunsFor(const RunsPlan& rp, bool gptq, cudaStream_t stream) {
  const WeightView& w = rp.base.w;
  switch (w.format) {
    case WeightFormat::kNvfp4: return LaunchRuns<WeightFormat::kNvfp4, ScaleType::kUe4m3>(rp, gptq, stream);
    case WeightFormat::kMxfp4: return LaunchRuns<WeightFormat::kMxfp4, ScaleType::kE8m0>(rp, gptq, stream);
    case WeightFormat::kMxfp8E4m3: return LaunchRuns<WeightFormat::kMxfp8E4m3, ScaleType::kE8m0>(rp, gptq, stream);
    case WeightFormat::kFp8E4m3PerChannel: return LaunchRuns<WeightFormat::kFp8E4m3PerChannel, ScaleType::kFp32>(rp, gptq, stream);
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: {
      const bool u = w.format == WeightFormat::kUint4;
      switch (w.scale_type) {
        case ScaleType::kFp32: return u ? LaunchRuns<WeightFormat::kUint4, ScaleType::kFp32>(rp, gptq, stream)
                                        : LaunchRuns<WeightFormat::kInt4, ScaleType::kFp32>(rp, gptq, stream);
        case ScaleType::kFp16: return u ? LaunchRuns<WeightFormat::kUint4, ScaleType::kFp16>(rp, gptq, stream)
                                        : LaunchRuns<WeightFormat::kInt4, ScaleType::kFp16>(rp, gptq, stream);
        case ScaleType::kBf16: return u ? LaunchRuns<WeightFormat::kUint4, ScaleType::kBf16>(rp, gptq, stream)
                                        : LaunchRuns<WeightFormat::kInt4, ScaleType::kBf16>(rp, gptq, stream);
        default: break;
      }
      break;
    }
  }
  return cudaErrorInvalidValue;  // not reached: the caller checked HasFp32Operand
}

bool Aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

}  // namespace

cudaError_t DequantizeIntoOperand(const WeightView& w, std::int64_t operand_rows, std::uint16_t* operand,
                                  float* outer_scales, cudaStream_t stream) {
  Plan p{};
  p.w = w;
  p.rows = operand_rows;
  p.k_padded = PaddedK(w.k);
  p.operand = operand;
  p.outer_scales = outer_scales;
  p.fast = alternatives::HasFp32Operand(w.format, w.scale_type);
  const bool k8 = w.k % 8 == 0;
  p.load = CodeLoad::kEach;
  if (w.packing == WeightPacking::kLowbit && k8) {
    if (matmul::IsFourBit(w.format) && Aligned(w.codes, 4) && w.codes_batch_stride % 4 == 0) p.load = CodeLoad::kLowbitNibbles;
    if (!matmul::IsFourBit(w.format) && Aligned(w.codes, 8) && w.codes_batch_stride % 8 == 0) p.load = CodeLoad::kLowbitBytes;
  } else if (w.packing == WeightPacking::kGptq) {
    p.load = CodeLoad::kGptqWord;  // K % 8 == 0 by the packing's rule (matmul::Validate)
  }
  // Eight elements from k0 (a multiple of 8) share a scale when no block
  // boundary can fall inside them: blocks a multiple of 8 long that start
  // at multiples of 8 (row groups; flat blocks of a K that is a multiple of
  // 8; GPTQ / AWQ groups), or one scale per row.
  p.shared_scale = w.geometry == ScaleGeometry::kPerRow ||
                   (w.block % 8 == 0 && (w.geometry == ScaleGeometry::kRowGroups || k8));
  // The run kernels: one load of eight codes and one scale a run.
  const bool power_of_two_runs = w.block % 8 == 0 && ((w.block / 8) & (w.block / 8 - 1)) == 0;
  const bool lowbit_runs = (p.load == CodeLoad::kLowbitNibbles || p.load == CodeLoad::kLowbitBytes) &&
                           (w.geometry == ScaleGeometry::kPerRow ||
                            (power_of_two_runs && (w.geometry == ScaleGeometry::kRowGroups || w.k % w.block == 0)));
  const bool gptq_runs = p.load == CodeLoad::kGptqWord && w.format == WeightFormat::kUint4 && w.n % 8 == 0 && w.block % 8 == 0;
  if (p.fast && (lowbit_runs || gptq_runs)) {
    RunsPlan rp{};
    rp.base = p;
    rp.runs_per_row = w.k / 8;
    rp.gptq_wide_loads = Aligned(w.codes, 16) && w.codes_batch_stride % 4 == 0;  // and N % 4 == 0 (N % 8 == 0)
    if (w.geometry != ScaleGeometry::kPerRow) {
      while ((std::int64_t{8} << rp.scale_shift) < w.block) ++rp.scale_shift;
    }
    // At most 64 threads a row (two warps, each loading 32 consecutive runs):
    // a thread's per-row set-up (the row's pointers and outer scale) is then
    // shared by K / 512 runs.
    while (rp.row_threads_log2 < kMaxRowThreadsLog2 && (std::int64_t{1} << rp.row_threads_log2) < rp.runs_per_row) {
      ++rp.row_threads_log2;
    }
    const cudaError_t e = LaunchRunsFor(rp, gptq_runs, stream);
    if (e != cudaSuccess || !gptq_runs || operand_rows == w.n) return e;
    const std::int64_t padding = w.batch * (operand_rows - w.n);
    PaddingRowsKernel<<<static_cast<unsigned>(padding < (std::int64_t{1} << 30) ? padding : (std::int64_t{1} << 30)), kThreads, 0,
                        stream>>>(p);
    return cudaGetLastError();
  }
  const std::int64_t rows = w.batch * operand_rows;
  const unsigned blocks = static_cast<unsigned>(rows < (std::int64_t{1} << 30) ? rows : (std::int64_t{1} << 30));
  GeneralKernel<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::tc_gemm
