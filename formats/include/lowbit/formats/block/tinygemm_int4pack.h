// torch's tinygemm int4 layouts: the CUDA tensor-core layout that
// `torch.ops.aten._convert_weight_to_int4pack(w, inner_k_tiles)` writes and
// `_weight_int4pack_mm` reads, the CPU layout of
// `_convert_weight_to_int4pack_for_cpu`, and the [groups][N][2] BF16 scale
// and zero tensor both kernels take (docs/layouts.md).
//
// Codes are a row-major [N][K] matrix of uint4 codes (0..15), N output
// features (rows of torch's weight) and K input features, as torch's
// `weight` is [N, K]. Only the low four bits of a code are read.
//
// Sources, at pytorch/pytorch commit 05f814fecfca7d2a17f28cbe7e1cb2d8d4c13230:
//   [CUDA] aten/src/ATen/native/cuda/int4mm.cu, matrix_to_m16n8k16_Bint4_layout
//          and _convert_weight_to_int4pack_cuda;
//   [CPU]  aten/src/ATen/native/cpu/int4mm_kernel.cpp, weight_to_int4pack_kernel.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/packing.h"

namespace lowbit::block {

// (row, col) of the code matrix that one packed nibble holds.
struct CodePosition {
  std::int64_t row;
  std::int64_t col;
};

// ---- [CUDA] m16n8k16 B-operand layout ---------------------------------------
// Input of the op: uint8 [N][K / 2], two codes per byte high nibble first
// (NibbleOrder::kHighFirst; torchao builds it as q[::2] << 4 | q[1::2]).
// Output: int32 [ceil(N / 8)][K / (inner_k_tiles * 16)][32][inner_k_tiles / 2]
// ("size [ceil(n / 8)][ceil(k / (InnerKTiles * 16))][32][InnerKTiles / 2]").
// inner_k_tiles is 2, 4 or 8 (`TORCH_CHECK(innerKTiles == 2 || ... == 8)`),
// K a multiple of inner_k_tiles * 16 (`isEvenDivisor(in.size(1) * 2,
// innerKTiles * kKTileSize)`); rows past N in the last 8-row tile read as 0
// (`n0Valid ? pIn[ks[i]] : uint8_t(0)`).
//
// Word [n_tile][k_outer][lane][j] belongs to mma lane `lane` (0..31): row
// n = 8 n_tile + lane / 4 (`n0 = nTile * kNTileSize + (t / 4)`), and its four
// bytes are ks = kBase0 + t % 4, + 4, kBase1 + t % 4, + 4 with kBase0 =
// (k_outer * inner_k_tiles + 2 j) * 8 bytes, kBase1 = kBase0 + 8. torch packs
// them as `v[3]L | v[2]L | v[1]L | v[0]L | v[3]H | v[2]H | v[1]H | v[0]H`
// (nibble 7 .. nibble 0), a byte's high nibble being its even-k code. So, in
// code columns, nibble i (bits 4i..4i+3) holds
//   k = (k_outer * inner_k_tiles + 2 j) * 16 + 2 (lane % 4) + 8 (i % 4) + i / 4,
// the m16n8k16 B fragment of two k-tiles: k offsets 0, 8, 16, 24 in nibbles
// 0..3 and 1, 9, 17, 25 in nibbles 4..7 (the same 0,2,4,6,1,3,5,7
// interleave as AWQ: nibble pairs (i, i + 4) are (k, k + 1)).
inline constexpr int kTinygemmNTile = 8;   // kNTileSizeTensor
inline constexpr int kTinygemmKTile = 16;  // kKTileSize
inline constexpr int kTinygemmLanes = 32;  // out.size(2) == 32

LOWBIT_HD_CONSTEXPR bool TinygemmInnerKTilesValid(int inner_k_tiles) {
  return inner_k_tiles == 2 || inner_k_tiles == 4 || inner_k_tiles == 8;
}

// N rounded up to whole 8-row tiles: the rows the packed tensor holds.
LOWBIT_HD_CONSTEXPR std::int64_t TinygemmPaddedRows(std::int64_t n_rows) {
  return (n_rows + kTinygemmNTile - 1) / kTinygemmNTile * kTinygemmNTile;
}

// int32 words of the packed tensor: ceil(N / 8) * 8 * K / 8.
LOWBIT_HD_CONSTEXPR std::int64_t TinygemmInt4packWords(std::int64_t n_rows, std::int64_t k_cols) {
  return TinygemmPaddedRows(n_rows) * k_cols / 8;
}

// The code that nibble `nibble` (0..7) of packed word `word` holds; its row
// may be a padding row (>= N).
LOWBIT_HD_CONSTEXPR CodePosition TinygemmInt4packSource(std::int64_t word, int nibble, std::int64_t k_cols,
                                                       int inner_k_tiles) {
  const int per_lane = inner_k_tiles / 2;
  const std::int64_t k_super_tiles = k_cols / (kTinygemmKTile * inner_k_tiles);
  const std::int64_t j = word % per_lane;
  const std::int64_t lane = (word / per_lane) % kTinygemmLanes;
  const std::int64_t tile = word / per_lane / kTinygemmLanes;  // n_tile * k_super_tiles + k_outer
  const std::int64_t k_outer = tile % k_super_tiles;
  const std::int64_t n_tile = tile / k_super_tiles;
  return {n_tile * kTinygemmNTile + lane / 4,
          (k_outer * inner_k_tiles + 2 * j) * kTinygemmKTile + 2 * (lane % 4) + 8 * (nibble % 4) + nibble / 4};
}

// q: [N][K] codes -> out: TinygemmInt4packWords(N, K) words. K must be a
// multiple of inner_k_tiles * 16 and inner_k_tiles 2, 4 or 8 (the callers
// check; the registry names the problem).
LOWBIT_HD_CONSTEXPR void PackTinygemmInt4(const std::uint8_t* q, std::int64_t n_rows, std::int64_t k_cols,
                                          int inner_k_tiles, std::uint32_t* out) {
  const std::int64_t words = TinygemmInt4packWords(n_rows, k_cols);
  for (std::int64_t w = 0; w < words; ++w) {
    std::uint32_t word = 0;
    for (int i = 0; i < 8; ++i) {
      const CodePosition p = TinygemmInt4packSource(w, i, k_cols, inner_k_tiles);
      const std::uint32_t code = p.row < n_rows ? (q[p.row * k_cols + p.col] & 0xFu) : 0u;
      word |= code << (4 * i);
    }
    out[w] = word;
  }
}

// The inverse: every code of [N][K] from its nibble; padding rows are dropped.
LOWBIT_HD_CONSTEXPR void UnpackTinygemmInt4(const std::uint32_t* words, std::int64_t n_rows, std::int64_t k_cols,
                                            int inner_k_tiles, std::uint8_t* q) {
  const std::int64_t count = TinygemmInt4packWords(n_rows, k_cols);
  for (std::int64_t w = 0; w < count; ++w) {
    for (int i = 0; i < 8; ++i) {
      const CodePosition p = TinygemmInt4packSource(w, i, k_cols, inner_k_tiles);
      if (p.row < n_rows) q[p.row * k_cols + p.col] = static_cast<std::uint8_t>((words[w] >> (4 * i)) & 0xF);
    }
  }
}

// ---- [CUDA] and [CPU] scales and zeros -----------------------------------
// `_weight_int4pack_mm(A, B, group_size, qScaleAndZeros)` takes BF16
// [K / group_size][N'][2] with [g][n][0] the scale and [g][n][1] the zero of
// group g of row n ("size [k / qGroupSize][n][2]"; on CUDA N' is the padded
// N, `TORCH_CHECK(qScaleAndZeros.size(1) == n)` with n = nTiles * 8).
// It dequantizes a code q as (q - 8) * scale + zero: convert_i4x8_to_bf16x2x4
// makes bf16(q - 8) (`BF16_BIAS` = -136 added to 128 + q), then
// `v.vals[k] = __hfma2(v.vals[k], qScale[curQGroup], qZero[curQGroup])` — one
// BF16 fused multiply-add. The zero is a float offset (torchao's "min" plus
// 8 scales), not an integer zero point subtracted from q; the CPU kernel
// int4pack_mm_kernel_ uses the same (q - 8) * scale + zero.
inline constexpr int kTinygemmCodeOffset = 8;

// scales, zeros: [groups][N] BF16 bit patterns -> out: [groups][padded_n][2]
// (padded_n >= N; the extra rows get scale and zero 0).
LOWBIT_HD_CONSTEXPR void PackTinygemmScalesAndZeros(const std::uint16_t* scales, const std::uint16_t* zeros,
                                                    std::int64_t groups, std::int64_t n_rows,
                                                    std::int64_t padded_n, std::uint16_t* out) {
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t n = 0; n < padded_n; ++n) {
      const bool real = n < n_rows;
      out[(g * padded_n + n) * 2 + 0] = real ? scales[g * n_rows + n] : std::uint16_t{0};
      out[(g * padded_n + n) * 2 + 1] = real ? zeros[g * n_rows + n] : std::uint16_t{0};
    }
  }
}

LOWBIT_HD_CONSTEXPR void UnpackTinygemmScalesAndZeros(const std::uint16_t* packed, std::int64_t groups,
                                                      std::int64_t n_rows, std::int64_t padded_n,
                                                      std::uint16_t* scales, std::uint16_t* zeros) {
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t n = 0; n < n_rows; ++n) {
      scales[g * n_rows + n] = packed[(g * padded_n + n) * 2 + 0];
      zeros[g * n_rows + n] = packed[(g * padded_n + n) * 2 + 1];
    }
  }
}

// ---- [CPU] _convert_weight_to_int4pack_for_cpu ------------------------------
// Input int32 [N][K] codes, output uint8 [N][K / 2]; N a multiple of 16 and
// K of 2 (`expect N to be dividable by 16`, `... K to be dividable by 2`).
// The byte order depends on the instruction set torch's kernel was
// dispatched to (`BLOCK_N = vec::Vectorized<float>::size() * 4`: 64 on
// AVX512, 32 on AVX2 and the default build), so this is three layouts:
// rows are cut in blocks of BLOCK_N (the last one may be shorter, nb_size),
// block b's bytes start at b * BLOCK_N * K / 2 (`dst = weight_packed_data +
// i * K * BLOCK_N / 2`), and within a block column k's bytes start at
// k * nb_size / 2. A full block on AVX512 pairs row r with r + 32
// (`dst[k * 32 + d] = packed02`, `dst[k * 32 + 16 + d] = packed13`), on AVX2
// row r with r + 16 (`dst[k * 16 + d] = packed01`), the later row in the
// high nibble; a short block, and every block of the default build, pairs
// rows 2m and 2m + 1 (`dst[k * nb_size / 2 + n / 2] = packed`).
enum class TorchCpuInt4packIsa : std::uint8_t { kAvx512, kAvx2, kDefault };

LOWBIT_HD_CONSTEXPR std::int64_t TorchCpuInt4packBlockN(TorchCpuInt4packIsa isa) {
  return isa == TorchCpuInt4packIsa::kAvx512 ? 64 : 32;
}

// Where code (n, k) of an [N][K] matrix goes: its byte and nibble (0: bits
// 3..0, 1: bits 7..4).
struct NibblePosition {
  std::int64_t byte;
  int nibble;
};

LOWBIT_HD_CONSTEXPR NibblePosition TorchCpuInt4packPosition(std::int64_t n, std::int64_t k, std::int64_t n_rows,
                                                            std::int64_t k_cols, TorchCpuInt4packIsa isa) {
  const std::int64_t block_n = TorchCpuInt4packBlockN(isa);
  const std::int64_t block = n / block_n;
  const std::int64_t r = n % block_n;
  const std::int64_t rest = n_rows - block * block_n;
  const std::int64_t nb_size = rest < block_n ? rest : block_n;
  const std::int64_t base = block * block_n * k_cols / 2 + k * nb_size / 2;
  if (nb_size == block_n && isa != TorchCpuInt4packIsa::kDefault) {
    const std::int64_t half = block_n / 2;
    return {base + r % half, static_cast<int>(r / half)};
  }
  return {base + r / 2, static_cast<int>(r % 2)};
}

// The inverse of TorchCpuInt4packPosition: the code that nibble `nibble` of
// byte `byte` holds.
LOWBIT_HD_CONSTEXPR CodePosition TorchCpuInt4packSource(std::int64_t byte, int nibble, std::int64_t n_rows,
                                                       std::int64_t k_cols, TorchCpuInt4packIsa isa) {
  const std::int64_t block_n = TorchCpuInt4packBlockN(isa);
  const std::int64_t block_bytes = block_n * k_cols / 2;
  const std::int64_t block = byte / block_bytes;
  const std::int64_t rest = n_rows - block * block_n;
  const std::int64_t nb_size = rest < block_n ? rest : block_n;
  const std::int64_t within = byte % block_bytes;
  const std::int64_t k = within / (nb_size / 2);
  const std::int64_t m = within % (nb_size / 2);
  const bool wide = nb_size == block_n && isa != TorchCpuInt4packIsa::kDefault;
  return {block * block_n + (wide ? m + nibble * (block_n / 2) : 2 * m + nibble), k};
}

// q: [N][K] codes -> out: N * K / 2 bytes (N % 16 == 0, K % 2 == 0).
LOWBIT_HD_CONSTEXPR void PackTorchCpuInt4(const std::uint8_t* q, std::int64_t n_rows, std::int64_t k_cols,
                                          TorchCpuInt4packIsa isa, std::uint8_t* out) {
  for (std::int64_t b = 0; b < n_rows * k_cols / 2; ++b) {
    const CodePosition lo = TorchCpuInt4packSource(b, 0, n_rows, k_cols, isa);
    const CodePosition hi = TorchCpuInt4packSource(b, 1, n_rows, k_cols, isa);
    out[b] = static_cast<std::uint8_t>((q[lo.row * k_cols + lo.col] & 0xF) | ((q[hi.row * k_cols + hi.col] & 0xF) << 4));
  }
}

LOWBIT_HD_CONSTEXPR void UnpackTorchCpuInt4(const std::uint8_t* packed, std::int64_t n_rows, std::int64_t k_cols,
                                            TorchCpuInt4packIsa isa, std::uint8_t* q) {
  for (std::int64_t b = 0; b < n_rows * k_cols / 2; ++b) {
    for (int i = 0; i < 2; ++i) {
      const CodePosition p = TorchCpuInt4packSource(b, i, n_rows, k_cols, isa);
      q[p.row * k_cols + p.col] = static_cast<std::uint8_t>((packed[b] >> (4 * i)) & 0xF);
    }
  }
}

}  // namespace lowbit::block
