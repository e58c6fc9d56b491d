// Marlin's tile permutation for 4-bit GPTQ weights and its scale
// permutations (docs/layouts.md). Source: IST-DASLab/marlin at commit
// ca3de38378e2ff3baecffa2a5bb14ed682f0f085, marlin/__init__.py, `_get_perms`
// and `Layer.pack`; vLLM's csrc/quantization/gptq_marlin repack and
// marlin_utils `get_weight_perm(4)` / `marlin_permute_scales` use the same
// permutations.
//
// Codes are a row-major [K][N] matrix of uint4 codes (Marlin packs
// `w = linear.weight.data.t()`, K input features by N output features),
// K a multiple of 16 and N of 64. Only the low four bits of a code are read.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"

namespace lowbit::block {

inline constexpr int kMarlinTile = 16;        // `tile = 16`
inline constexpr int kMarlinPermSize = 1024;  // `_perm.numel()`: four 16x16 tiles
inline constexpr int kMarlinRowsMultiple = 16;
inline constexpr int kMarlinColsMultiple = kMarlinPermSize / kMarlinTile;  // 64

// `_get_perms`: for i in 0..31 (one mma lane), perm1 lists
// 16 * row + i / 4 + 8 * block for block in {0, 1} and row in
// {2 (i % 4), 2 (i % 4) + 1, 2 (i % 4 + 4), 2 (i % 4 + 4) + 1}; each is
// repeated for the four tiles j (+ 256 j). Entry p = 32 i + 8 j + e.
LOWBIT_HD_CONSTEXPR int MarlinPermBeforeInterleave(int p) {
  const int i = p / 32, j = (p / 8) % 4, e = p % 8;
  const int block = e / 4, r = e % 4;
  const int row = 2 * (i % 4 + (r >= 2 ? 4 : 0)) + (r % 2);
  return 16 * row + i / 4 + 8 * block + 256 * j;
}

// `perm = perm.reshape((-1, 8))[:, interleave].ravel()` with interleave
// [0, 2, 4, 6, 1, 3, 5, 7] (kAwqOrderMap, written as 2 (m % 4) + m / 4 so
// device code needs no table): entry p of `_perm`.
LOWBIT_HD_CONSTEXPR int MarlinInterleave(int m) { return 2 * (m % 4) + m / 4; }
LOWBIT_HD_CONSTEXPR int MarlinPerm(int p) { return MarlinPermBeforeInterleave(p / 8 * 8 + MarlinInterleave(p % 8)); }

// Output: int32 [K / 16][N * 16 / 8] (`self.B`). Row kt of the tiled matrix
// t is [N / 16 tiles][16 rows][16 cols] of rows 16 kt .. 16 kt + 15
// (`w.reshape((k // tile, tile, n // tile, tile)).permute((0, 2, 1, 3))`);
// `res[:, c] = t[:, c / 1024 * 1024 + _perm[c % 1024]]`; word w of a row is
// `q |= res[:, i::8] << 4 * i`, nibble i = res entry 8 w + i.
LOWBIT_HD_CONSTEXPR std::int64_t MarlinWords(std::int64_t k_rows, std::int64_t n_cols) {
  return k_rows * n_cols / 8;
}

LOWBIT_HD_CONSTEXPR CodePosition MarlinSource(std::int64_t word, int nibble, std::int64_t n_cols) {
  const std::int64_t words_per_row = n_cols * kMarlinTile / 8;
  const std::int64_t kt = word / words_per_row;
  const std::int64_t c = (word % words_per_row) * 8 + nibble;                  // res column
  const std::int64_t t = c / kMarlinPermSize * kMarlinPermSize + MarlinPerm(static_cast<int>(c % kMarlinPermSize));
  const std::int64_t n_tile = t / (kMarlinTile * kMarlinTile);
  const std::int64_t r = (t / kMarlinTile) % kMarlinTile;
  return {kt * kMarlinTile + r, n_tile * kMarlinTile + t % kMarlinTile};
}

// q: [K][N] codes -> out: MarlinWords(K, N) words.
LOWBIT_HD_CONSTEXPR void PackMarlin(const std::uint8_t* q, std::int64_t k_rows, std::int64_t n_cols,
                                    std::uint32_t* out) {
  for (std::int64_t w = 0; w < MarlinWords(k_rows, n_cols); ++w) {
    std::uint32_t word = 0;
    for (int i = 0; i < 8; ++i) {
      const CodePosition p = MarlinSource(w, i, n_cols);
      word |= static_cast<std::uint32_t>(q[p.row * n_cols + p.col] & 0xF) << (4 * i);
    }
    out[w] = word;
  }
}

LOWBIT_HD_CONSTEXPR void UnpackMarlin(const std::uint32_t* words, std::int64_t k_rows, std::int64_t n_cols,
                                      std::uint8_t* q) {
  for (std::int64_t w = 0; w < MarlinWords(k_rows, n_cols); ++w) {
    for (int i = 0; i < 8; ++i) {
      const CodePosition p = MarlinSource(w, i, n_cols);
      q[p.row * n_cols + p.col] = static_cast<std::uint8_t>((words[w] >> (4 * i)) & 0xF);
    }
  }
}

// ---- scales -----------------------------------------------------------------
// Grouped (groupsize < K): `s.reshape((-1, len(_scale_perm)))[:, _scale_perm]`
// with `scale_perm.extend([i + 8 * j for j in range(8)])` for i in 0..7: the
// transpose of each 8 x 8 run of 64 scales. One group per column
// (groupsize == K): `_scale_perm_single`, `[2 * i + j for j in [0, 1, 8, 9,
// 16, 17, 24, 25]]` for i in 0..3, over runs of 32. Scales are [groups][N]
// FP16 (any 16-bit pattern is moved, not read); N a multiple of 64.
inline constexpr int kMarlinScalePermSize = 64;
inline constexpr int kMarlinScalePermSingleSize = 32;

LOWBIT_HD_CONSTEXPR int MarlinScalePerm(int p) { return p / 8 + 8 * (p % 8); }
LOWBIT_HD_CONSTEXPR int MarlinScalePermSingle(int p) {
  const int q = p % 8;  // [0, 1, 8, 9, 16, 17, 24, 25][q] = 8 (q / 2) + q % 2
  return 2 * (p / 8) + 8 * (q / 2) + q % 2;
}

// out[f] = scales[f / size * size + perm[f % size]] over the flattened
// [groups][N] scales; `single` picks _scale_perm_single (one group).
LOWBIT_HD_CONSTEXPR std::int64_t MarlinScaleSource(std::int64_t f, bool single) {
  const int size = single ? kMarlinScalePermSingleSize : kMarlinScalePermSize;
  const int p = static_cast<int>(f % size);
  return f / size * size + (single ? MarlinScalePermSingle(p) : MarlinScalePerm(p));
}

LOWBIT_HD_CONSTEXPR void PermuteMarlinScales(const std::uint16_t* scales, std::int64_t groups, std::int64_t n_cols,
                                             std::uint16_t* out) {
  const bool single = groups == 1;
  for (std::int64_t f = 0; f < groups * n_cols; ++f) out[f] = scales[MarlinScaleSource(f, single)];
}

LOWBIT_HD_CONSTEXPR void UnpermuteMarlinScales(const std::uint16_t* permuted, std::int64_t groups,
                                               std::int64_t n_cols, std::uint16_t* scales) {
  const bool single = groups == 1;
  for (std::int64_t f = 0; f < groups * n_cols; ++f) scales[MarlinScaleSource(f, single)] = permuted[f];
}

}  // namespace lowbit::block
