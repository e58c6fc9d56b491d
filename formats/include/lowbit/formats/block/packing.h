// Packing of narrow codes into bytes and words, with the order always named
// (docs/formats-reference.md §8.3, §4.5, §5.4). Every Pack* has an Unpack* that inverts it:
// Unpack(Pack(codes)) == codes for codes that fit their width.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/config.h"

namespace lowbit::block {

// ---- two 4-bit codes per byte --------------------------------------------
// kLowFirst: ONNX int4/uint4 ("the first element is stored in the 4 LSB"),
// PyTorch Float4_e2m1fn_x2, CUDA __nv_fp4x2, torchao pack_uint4, TE, ModelOpt.
// kHighFirst: the tinygemm _convert_weight_to_int4pack input, which torchao
// builds as (q[::2] << 4 | q[1::2]).
// n codes -> (n + 1) / 2 bytes; an odd last code leaves the other nibble 0.
LOWBIT_HD_CONSTEXPR void PackNibbles(const std::uint8_t* codes, long n, NibbleOrder order,
                                     std::uint8_t* out) {
  for (long i = 0; i < n; i += 2) {
    const std::uint8_t first = codes[i] & 0xF;
    const std::uint8_t second = i + 1 < n ? (codes[i + 1] & 0xF) : 0;
    out[i / 2] = order == NibbleOrder::kLowFirst ? static_cast<std::uint8_t>(first | (second << 4))
                                                 : static_cast<std::uint8_t>((first << 4) | second);
  }
}

LOWBIT_HD_CONSTEXPR void UnpackNibbles(const std::uint8_t* packed, long n, NibbleOrder order,
                                       std::uint8_t* codes) {
  for (long i = 0; i < n; ++i) {
    const std::uint8_t byte = packed[i / 2];
    const bool low = (i % 2 == 0) == (order == NibbleOrder::kLowFirst);
    codes[i] = low ? (byte & 0xF) : (byte >> 4);
  }
}

// ---- a little-endian bit stream (FP6: four codes in three bytes) ------------
// Code i occupies bits [width * i, width * (i + 1)) of the stream, bit 0 being
// bit 0 of byte 0: the LSB-first convention of ONNX int4 extended to any
// width. PTX keeps one FP6 per byte (docs/formats-reference.md §4.4); packed FP6 layouts are
// library-specific (docs/formats-reference.md §5.4), so this one is named, not implied.
LOWBIT_HD_CONSTEXPR long PackedBitStreamBytes(long n, int width) { return (n * width + 7) / 8; }

LOWBIT_HD_CONSTEXPR void PackBitStreamLsbFirst(const std::uint8_t* codes, long n, int width,
                                               std::uint8_t* out) {
  for (long b = 0; b < PackedBitStreamBytes(n, width); ++b) out[b] = 0;
  for (long i = 0; i < n; ++i) {
    for (int k = 0; k < width; ++k) {
      const long bit = i * width + k;
      if ((codes[i] >> k) & 1) out[bit / 8] = static_cast<std::uint8_t>(out[bit / 8] | (1u << (bit % 8)));
    }
  }
}

LOWBIT_HD_CONSTEXPR void UnpackBitStreamLsbFirst(const std::uint8_t* packed, long n, int width,
                                                 std::uint8_t* codes) {
  for (long i = 0; i < n; ++i) {
    std::uint8_t c = 0;
    for (int k = 0; k < width; ++k) {
      const long bit = i * width + k;
      c = static_cast<std::uint8_t>(c | (((packed[bit / 8] >> (bit % 8)) & 1) << k));
    }
    codes[i] = c;
  }
}

// ---- INT4 in int32 words: GPTQ and AWQ ---------------------------------------
// q is a row-major [k][n] matrix of uint4 codes (0..15), K rows (input
// features) and N columns (output features). Indices are 64-bit: a large
// embedding holds 2^31 or more codes (docs/bad-input.md "Overflowing size
// computations").

// [GPTQ] qweight: words packed along K. Word [k / 8][n] holds rows
// 8 * (k / 8) .. + 7 of column n, row j of the group in bits 4j..4j+3.
// K must be a multiple of 8; out is [K / 8][N].
LOWBIT_HD_CONSTEXPR void PackGptqQweight(const std::uint8_t* q, std::int64_t k_rows, std::int64_t n_cols, std::uint32_t* out) {
  for (std::int64_t w = 0; w < k_rows / 8; ++w) {
    for (std::int64_t n = 0; n < n_cols; ++n) {
      std::uint32_t word = 0;
      for (int j = 0; j < 8; ++j) word |= static_cast<std::uint32_t>(q[(w * 8 + j) * n_cols + n] & 0xF) << (4 * j);
      out[w * n_cols + n] = word;
    }
  }
}

LOWBIT_HD_CONSTEXPR void UnpackGptqQweight(const std::uint32_t* words, std::int64_t k_rows, std::int64_t n_cols, std::uint8_t* q) {
  for (std::int64_t k = 0; k < k_rows; ++k) {
    for (std::int64_t n = 0; n < n_cols; ++n) {
      q[k * n_cols + n] = static_cast<std::uint8_t>((words[(k / 8) * n_cols + n] >> (4 * (k % 8))) & 0xF);
    }
  }
}

// [GPTQ] qzeros: [groups][N] zero points packed along N, eight per word,
// column j of the word's eight in bits 4j..4j+3, each stored as zero - 1
// (AutoGPTQ pack: `zeros -= 1`; the kernel adds 1 back). A zero point of 0
// is stored as 0xF here (AutoGPTQ's uint32 cast of -1 would spill into the
// neighbours). N must be a multiple of 8; out is [groups][N / 8].
LOWBIT_HD_CONSTEXPR void PackGptqQzeros(const std::uint8_t* zeros, std::int64_t groups, std::int64_t n_cols, std::uint32_t* out) {
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t w = 0; w < n_cols / 8; ++w) {
      std::uint32_t word = 0;
      for (int j = 0; j < 8; ++j) {
        word |= static_cast<std::uint32_t>((zeros[g * n_cols + w * 8 + j] - 1) & 0xF) << (4 * j);
      }
      out[g * (n_cols / 8) + w] = word;
    }
  }
}

LOWBIT_HD_CONSTEXPR void UnpackGptqQzeros(const std::uint32_t* words, std::int64_t groups, std::int64_t n_cols, std::uint8_t* zeros) {
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t n = 0; n < n_cols; ++n) {
      const std::uint32_t stored = (words[g * (n_cols / 8) + n / 8] >> (4 * (n % 8))) & 0xF;
      zeros[g * n_cols + n] = static_cast<std::uint8_t>((stored + 1) & 0xF);
    }
  }
}

// [AWQ] WQLinear_GEMM: words packed along N with the interleave
// order_map = [0, 2, 4, 6, 1, 3, 5, 7]: nibble i (bits 4i..4i+3) of word
// [r][c] holds column 8c + order_map[i]. qweight ([K][N / 8]) and qzeros
// ([groups][N / 8], no -1) use the same packing.
inline constexpr int kAwqOrderMap[8] = {0, 2, 4, 6, 1, 3, 5, 7};

LOWBIT_HD_CONSTEXPR void PackAwq(const std::uint8_t* q, std::int64_t rows, std::int64_t n_cols, std::uint32_t* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < n_cols / 8; ++c) {
      std::uint32_t word = 0;
      for (int i = 0; i < 8; ++i) {
        word |= static_cast<std::uint32_t>(q[r * n_cols + 8 * c + kAwqOrderMap[i]] & 0xF) << (4 * i);
      }
      out[r * (n_cols / 8) + c] = word;
    }
  }
}

LOWBIT_HD_CONSTEXPR void UnpackAwq(const std::uint32_t* words, std::int64_t rows, std::int64_t n_cols, std::uint8_t* q) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < n_cols / 8; ++c) {
      for (int i = 0; i < 8; ++i) {
        q[r * n_cols + 8 * c + kAwqOrderMap[i]] =
            static_cast<std::uint8_t>((words[r * (n_cols / 8) + c] >> (4 * i)) & 0xF);
      }
    }
  }
}

}  // namespace lowbit::block
