// The one conversion of a lowbit NVFP4 / MXFP4 weight (matmul/weights.h
// WeightView, kLowbit packing: what lowbit.quantize writes) into the tiles
// the tensor-core GEMV streams (tc_gemv_lanes.h "The packed weights"): codes
// re-laid so that each lane's fragments of 8 chunks are one 16-byte load,
// scales per (row tile, K tile), and the FP32 outer scale per output channel
// for the epilogue. Host only; the element and scale readers are the model's
// (WeightCode, ScaleBits, OuterScaleOf), so the packed tiles hold the same
// codes and nothing is decoded here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"
#include "tc_gemv_lanes.h"

namespace lowbit::cuda::tc_gemv {

struct PackedWeights {
  std::string error;  // empty when packed
  WeightFormat format = WeightFormat::kNvfp4;
  ScaleType scale_type = ScaleType::kUe4m3;
  int block = 16;
  std::int64_t n = 0, k = 0, batch = 1;
  std::int64_t row_tiles = 0, k_tiles = 0;
  std::vector<std::uint8_t> codes;   // batch * row_tiles * k_tiles * kCodeBytesPerTile
  std::vector<std::uint8_t> scales;  // batch * row_tiles * k_tiles * ScaleBytesPerTile(block)
  std::vector<float> column_scales;  // batch * row_tiles * kTileRows (1 where W has no outer scale)
  std::vector<std::uint8_t> plain_tiles;  // batch * row_tiles * k_tiles: 1 where every scale is plain (ScaleIsPlain)
};

// Why these weights cannot take the tensor-core GEMV; nullptr when they can.
// Every chunk of 16 elements of a row must share one scale: per-row blocks,
// or flat blocks that do not run across rows (K a multiple of the block).
inline const char* PackProblem(const matmul::WeightView& w) {
  if (w.format != WeightFormat::kNvfp4 && w.format != WeightFormat::kMxfp4) {
    return "the tensor-core GEMV takes nvfp4 or mxfp4 weights";
  }
  if (w.packing != matmul::WeightPacking::kLowbit) return "the tensor-core GEMV takes the lowbit packing";
  if (w.block != (w.format == WeightFormat::kNvfp4 ? matmul::kNvfp4Block : matmul::kMxBlock)) {
    return "the block size is not the format's (16 for nvfp4, 32 for mxfp4)";
  }
  if (w.geometry == matmul::ScaleGeometry::kFlatBlocks && w.k % w.block != 0) {
    return "flat blocks that run across rows (K not a multiple of the block) are not supported by the "
           "tensor-core GEMV: quantize per row (/g layout)";
  }
  if (w.geometry == matmul::ScaleGeometry::kPerRow) return "per-row scales are not a 4-bit float block layout";
  return nullptr;
}

inline PackedWeights PackForTcGemv(const matmul::WeightView& w) {
  PackedWeights p;
  const matmul::ValidationResult valid = matmul::ValidateWeights(w);
  if (!valid.ok) {
    p.error = valid.error;
    return p;
  }
  if (const char* why = PackProblem(w)) {
    p.error = why;
    return p;
  }
  p.format = w.format;
  p.scale_type = w.scale_type;
  p.block = static_cast<int>(w.block);
  p.n = w.n;
  p.k = w.k;
  p.batch = w.batch;
  p.row_tiles = matmul::CeilDiv(w.n, kTileRows);
  p.k_tiles = matmul::CeilDiv(w.k, kKTile);
  const int scales_per_row = ScalesPerRowTile(p.block);
  p.codes.assign(static_cast<std::size_t>(p.batch * p.row_tiles * p.k_tiles * kCodeBytesPerTile), 0);
  p.scales.assign(static_cast<std::size_t>(p.batch * p.row_tiles * p.k_tiles * ScaleBytesPerTile(p.block)), 0);
  p.column_scales.assign(static_cast<std::size_t>(p.batch * p.row_tiles * kTileRows), 1.0f);
  p.plain_tiles.assign(static_cast<std::size_t>(p.batch * p.row_tiles * p.k_tiles), 0);
  const std::uint8_t padding_scale = PaddingScaleByte(p.scale_type);
  for (std::int64_t l = 0; l < p.batch; ++l) {
    for (std::int64_t r = 0; r < p.row_tiles; ++r) {
      for (int row = 0; row < kTileRows; ++row) {
        const std::int64_t n = r * kTileRows + row;
        if (n < w.n) {
          p.column_scales[static_cast<std::size_t>((l * p.row_tiles + r) * kTileRows + row)] =
              matmul::OuterScaleOf(w, l, n);
        }
      }
      for (std::int64_t j = 0; j < p.k_tiles; ++j) {
        std::uint8_t* codes = p.codes.data() + CodeTileOffset(l, r, j, p.row_tiles, p.k_tiles);
        std::uint8_t* scales = p.scales.data() + ScaleTileOffset(l, r, j, p.row_tiles, p.k_tiles, p.block);
        for (int lane = 0; lane < kWarpSize; ++lane) {
          const LanePosition pos = LaneOf(lane);
          for (int half = 0; half < 2; ++half) {
            const std::int64_t n = r * kTileRows + ARowOf(pos.group, half);
            std::uint8_t* bytes = codes + CodeLaneOffset(half, lane);
            for (int chunk = 0; chunk < kChunksPerKTile; ++chunk) {
              for (int slot = 0; slot < 2; ++slot) {
                const int reg = 2 * slot + half;  // A register: row half, K slot
                const int pair = PairOf(chunk % 2, slot);
                for (int e = 0; e < 2; ++e) {
                  const std::int64_t k = j * kKTile + chunk * kChunk + AKOf(pos.index, reg, e);
                  const std::uint8_t code = n < w.n && k < w.k ? matmul::WeightCode(w, l, n, k) : 0;
                  // The word's bytes little-endian, as the kernel's 16-byte load delivers them.
                  const std::uint32_t bits = CodeBitsInWord(static_cast<std::uint8_t>(code & 0xF), pair, e);
                  for (int b = 0; b < 4; ++b) {
                    bytes[4 * (chunk / 2) + b] = static_cast<std::uint8_t>(bytes[4 * (chunk / 2) + b] | (bits >> (8 * b)));
                  }
                }
              }
            }
            if (pos.index == 0) {
              for (int b = 0; b < scales_per_row; ++b) {
                const std::int64_t k = j * kKTile + static_cast<std::int64_t>(b) * p.block;
                scales[ScaleLaneOffset(pos.group, p.block) + ScaleByteOfBlock(half, b)] =
                    n < w.n && k < w.k ? static_cast<std::uint8_t>(matmul::ScaleBits(w, l, n, k)) : padding_scale;
              }
            }
          }
        }
        p.plain_tiles[static_cast<std::size_t>((l * p.row_tiles + r) * p.k_tiles + j)] =
            TileScalesArePlain(p.scale_type, scales, ScaleBytesPerTile(p.block)) ? 1 : 0;
      }
    }
  }
  return p;
}

}  // namespace lowbit::cuda::tc_gemv
