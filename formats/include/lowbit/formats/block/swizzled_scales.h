// The swizzled block-scale layout that cuBLASLt, CUTLASS and
// TransformerEngine read for MXFP8/MXFP4 (E8M0) and NVFP4 (UE4M3) scale
// factors (docs/layouts.md). Sources: the cuBLAS documentation, section "1D
// Block Scaling Factors Layout" (CUDA 12.8+): scales of an [rows][cols]
// matrix (cols = K / block size) are stored in 128 x 4 tiles, rows padded to
// a multiple of 128 and columns to a multiple of 4; torchao 0.18.0
// torchao/prototype/mx_formats/utils.py `to_blocked` (`padded.view(
// n_row_blocks, 128, n_col_blocks, 4).permute(0, 2, 1, 3)`, then
// `.reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16)`), which
// tests/peers/test_int4pack.py runs live; TransformerEngine
// transformer_engine/common/swizzle/swizzle.cu swizzles to the same order.
//
// Tile (rb, cb) holds rows 128 rb .. + 127 and columns 4 cb .. + 3, tiles
// in row-major order (rb outer); inside a tile, scale (r, c) is byte
// (r % 32) * 16 + (r % 128 / 32) * 4 + c % 4 of the tile's 512. Scales are
// whole bytes (E8M0 or UE4M3 codes, any bit pattern); padding is 0 (torchao
// pads with torch.zeros; cuBLAS only needs the padding to exist).
#pragma once

#include <cstdint>

#include "lowbit/formats/block/packing.h"

namespace lowbit::block {

inline constexpr int kSwizzleTileRows = 128;
inline constexpr int kSwizzleTileCols = 4;
inline constexpr int kSwizzleTileBytes = kSwizzleTileRows * kSwizzleTileCols;  // 512

LOWBIT_HD_CONSTEXPR std::int64_t SwizzledScaleRows(std::int64_t rows) {
  return (rows + kSwizzleTileRows - 1) / kSwizzleTileRows * kSwizzleTileRows;
}
LOWBIT_HD_CONSTEXPR std::int64_t SwizzledScaleCols(std::int64_t cols) {
  return (cols + kSwizzleTileCols - 1) / kSwizzleTileCols * kSwizzleTileCols;
}
// Bytes of the swizzled buffer: 32 * ceil(rows / 128) * 16 * ceil(cols / 4)
// (to_blocked's "shape (32*ceil_div(H,128), 16*ceil_div(W,4))").
LOWBIT_HD_CONSTEXPR std::int64_t SwizzledScaleBytes(std::int64_t rows, std::int64_t cols) {
  return SwizzledScaleRows(rows) * SwizzledScaleCols(cols);
}

// Where scale (r, c) of an [rows][cols] matrix goes (any r < padded rows,
// c < padded cols).
LOWBIT_HD_CONSTEXPR std::int64_t SwizzledScaleOffset(std::int64_t r, std::int64_t c, std::int64_t cols) {
  const std::int64_t col_tiles = SwizzledScaleCols(cols) / kSwizzleTileCols;
  const std::int64_t tile = (r / kSwizzleTileRows) * col_tiles + c / kSwizzleTileCols;
  return tile * kSwizzleTileBytes + (r % 32) * 16 + (r % kSwizzleTileRows / 32) * 4 + c % kSwizzleTileCols;
}

// The inverse: the (r, c) that swizzled byte `offset` holds (r >= rows or
// c >= cols for padding).
struct ScalePosition {
  std::int64_t row;
  std::int64_t col;
};
LOWBIT_HD_CONSTEXPR ScalePosition SwizzledScaleSource(std::int64_t offset, std::int64_t cols) {
  const std::int64_t col_tiles = SwizzledScaleCols(cols) / kSwizzleTileCols;
  const std::int64_t tile = offset / kSwizzleTileBytes;
  const std::int64_t in_tile = offset % kSwizzleTileBytes;
  return {(tile / col_tiles) * kSwizzleTileRows + (in_tile % 16) / 4 * 32 + in_tile / 16,
          (tile % col_tiles) * kSwizzleTileCols + in_tile % 4};
}

// scales: [rows][cols] bytes -> out: SwizzledScaleBytes(rows, cols) bytes,
// padding 0.
LOWBIT_HD_CONSTEXPR void SwizzleScales(const std::uint8_t* scales, std::int64_t rows, std::int64_t cols,
                                       std::uint8_t* out) {
  for (std::int64_t o = 0; o < SwizzledScaleBytes(rows, cols); ++o) {
    const ScalePosition p = SwizzledScaleSource(o, cols);
    out[o] = p.row < rows && p.col < cols ? scales[p.row * cols + p.col] : std::uint8_t{0};
  }
}

// The inverse: the [rows][cols] scales, padding dropped.
LOWBIT_HD_CONSTEXPR void UnswizzleScales(const std::uint8_t* swizzled, std::int64_t rows, std::int64_t cols,
                                         std::uint8_t* scales) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) scales[r * cols + c] = swizzled[SwizzledScaleOffset(r, c, cols)];
  }
}

}  // namespace lowbit::block
