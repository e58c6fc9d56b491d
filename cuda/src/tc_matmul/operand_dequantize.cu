// operand_dequantize.h: one block per row (l, n) of the operand, each thread
// eight consecutive K of it (one 16-byte store of BF16 codes). The eight
// codes come in one load where the packing keeps them together (lowbit
// nibbles or bytes with K a multiple of 8, a GPTQ word), and one scale and
// zero point serve all eight where a block or group boundary cannot fall
// among them; otherwise each element is read through the model's accessors
// (weights.h WeightCode, ScaleBits, ZeroPointOf).
#include "operand_dequantize.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/alternatives/weight_operand_fp32.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/recipe/element_encode.h"

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

__global__ void __launch_bounds__(kThreads) DequantizeKernel(Plan p) {
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
  const std::int64_t rows = w.batch * operand_rows;
  const unsigned blocks = static_cast<unsigned>(rows < (std::int64_t{1} << 30) ? rows : (std::int64_t{1} << 30));
  DequantizeKernel<<<blocks, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::tc_gemm
