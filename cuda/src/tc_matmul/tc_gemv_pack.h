// The one conversion of an NVFP4 / MXFP4 weight (matmul/weights.h
// WeightView, kLowbit packing: what lowbit.quantize writes) or a UINT4 one
// (GPTQ or AWQ packing, as their checkpoints store it) into the tiles
// the tensor-core GEMV streams (tc_gemv_lanes.h "The packed weights"): codes
// re-laid so that each lane's fragments of 8 chunks are one 16-byte load,
// scales (UINT4: scales and zero points' operands) per (row tile, K tile),
// and the FP32 outer scale per output channel for the epilogue. The element and scale readers are the model's
// (WeightCode, ScaleBits, OuterScaleOf), so the packed tiles hold the same
// codes and nothing is decoded here.
//
// The work is cut into pieces that are host and device functions (one
// lane's 16 code bytes, one lane group's scale bytes, a tile's plain flag,
// one channel's column scale): PackForTcGemv below loops over them on the
// host, and the device packer (tc_gemv_pack_device.h) runs the same
// functions in a kernel, so both write the same bytes by construction
// (cuda/tests/tc_gemv_pack_device_test.cc compares them on the GPU).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/matmul/weight_operand.h"
#include "lowbit/formats/matmul/weights.h"
#include "tc_gemv.h"
#include "tc_gemv_lanes.h"

namespace lowbit::cuda::tc_gemv {

// The element counts of the four packed buffers of W [L][N][K] of `codec`.
struct PackedSizes {
  std::int64_t row_tiles = 0, k_tiles = 0;
  std::int64_t code_bytes = 0;     // batch * row_tiles * k_tiles * CodeBytesPerTile(codec)
  std::int64_t scale_bytes = 0;    // batch * row_tiles * k_tiles * ScaleBytesPerTile(RecordBlockOf(codec))
  std::int64_t column_scales = 0;  // floats: batch * row_tiles * kTileRows
  std::int64_t plain_tiles = 0;    // bytes: batch * row_tiles * k_tiles
};
LOWBIT_HD_CONSTEXPR PackedSizes PackedSizesOf(std::int64_t n, std::int64_t k, std::int64_t batch, TileCodec codec) {
  PackedSizes s;
  s.row_tiles = matmul::CeilDiv(n, kTileRows);
  s.k_tiles = matmul::CeilDiv(k, kKTile);
  const std::int64_t tiles = batch * s.row_tiles * s.k_tiles;
  s.code_bytes = tiles * CodeBytesPerTile(codec);
  s.scale_bytes = tiles * ScaleBytesPerTile(RecordBlockOf(codec));
  s.column_scales = batch * s.row_tiles * kTileRows;
  s.plain_tiles = tiles;
  return s;
}

// The codec of W's packed tiles (tc_gemv_lanes.h CodecOf); NVFP4's where
// the kernel has none (PackProblem refuses those).
LOWBIT_HD_CONSTEXPR TileCodec PackedCodecOf(const matmul::WeightView& w) {
  TileCodec codec = TileCodec::kNvfp4;
  CodecOf(w.format, w.scale_type, &codec);
  return codec;
}
// The block of W's packed layout (tc_gemv_lanes.h RecordBlockOf): the
// format's block for NVFP4 and the MX formats, kUint4RecordBlock for UINT4
// whatever its group (a multiple of it: PackProblem), 32 for FP8 per
// channel (the record of scales 1.0).
LOWBIT_HD_CONSTEXPR int PackedBlockOf(const matmul::WeightView& w) { return RecordBlockOf(PackedCodecOf(w)); }

// The shape of W's packed tiles (W checked by PackError).
inline PackedShape PackedShapeOf(const matmul::WeightView& w) {
  PackedShape s;
  s.format = w.format;
  s.scale_type = w.scale_type;
  s.block = PackedBlockOf(w);
  s.n = w.n;
  s.k = w.k;
  s.batch = w.batch;
  const PackedSizes sizes = PackedSizesOf(w.n, w.k, w.batch, PackedCodecOf(w));
  s.row_tiles = sizes.row_tiles;
  s.k_tiles = sizes.k_tiles;
  return s;
}

struct PackedWeights : PackedShape {
  std::string error;  // empty when packed
  std::vector<std::uint8_t> codes;   // PackedSizes::code_bytes
  std::vector<std::uint8_t> scales;  // PackedSizes::scale_bytes
  std::vector<float> column_scales;  // PackedSizes::column_scales (1 where W has no outer scale or no row)
  std::vector<std::uint8_t> plain_tiles;  // PackedSizes::plain_tiles: PlainTileByte of each tile
};

// Why these weights cannot take the tensor-core GEMV; nullptr when they can.
// Every chunk of 16 elements of a row must share one scale: per-row blocks,
// or flat blocks that do not run across rows (K a multiple of the block).
// Reads no buffer, so it applies to device pointers as well.
// The packings the kernel takes for each codec: lowbit's for NVFP4, the MX
// formats and FP8 per channel, GPTQ's or AWQ's for UINT4 (4-bit zero
// points: Uint4ZeroFits).
LOWBIT_HD_CONSTEXPR bool CodecTakesPacking(TileCodec codec, matmul::WeightPacking packing) {
  return IsUint4(codec) ? packing == matmul::WeightPacking::kGptq || packing == matmul::WeightPacking::kAwq
                        : packing == matmul::WeightPacking::kLowbit;
}

// UINT4: GPTQ or AWQ packing (CodecTakesPacking), FP16 or
// BF16 scales, groups and K multiples of 128 (a K tile in one group, and
// no K tail: a padded code would be (0 - z) * s, not the model's +0).
inline const char* PackProblem(const matmul::WeightView& w) {
  if (w.format == WeightFormat::kUint4) {
    if (!CodecTakesPacking(TileCodec::kUint4Fp16, w.packing)) {
      return "the tensor-core GEMV takes uint4 weights in the gptq or awq packing";
    }
    if (w.scale_type != ScaleType::kFp16 && w.scale_type != ScaleType::kBf16) {
      return "the tensor-core GEMV takes uint4 weights with fp16 or bf16 scales";
    }
    if (w.block % kUint4RecordBlock != 0) return "the tensor-core GEMV takes uint4 groups of a multiple of 128";
    if (w.k % kUint4RecordBlock != 0) return "the tensor-core GEMV takes uint4 weights with K a multiple of 128";
    return nullptr;
  }
  if (w.format == WeightFormat::kFp8E4m3PerChannel) {
    if (!CodecTakesPacking(TileCodec::kFp8Channel, w.packing)) return "the tensor-core GEMV takes the lowbit packing";
    if (w.scale_type != ScaleType::kFp32 || w.geometry != matmul::ScaleGeometry::kPerRow) {
      return "the tensor-core GEMV takes e4m3/row weights with one fp32 scale per row";
    }
    return nullptr;
  }
  if (w.format != WeightFormat::kNvfp4 && w.format != WeightFormat::kMxfp4 && w.format != WeightFormat::kMxfp8E4m3) {
    return "the tensor-core GEMV takes nvfp4, mxfp4, mxfp8_e4m3, e4m3/row or uint4 weights";
  }
  if (!CodecTakesPacking(TileCodec::kNvfp4, w.packing)) return "the tensor-core GEMV takes the lowbit packing";
  if (w.block != (w.format == WeightFormat::kNvfp4 ? matmul::kNvfp4Block : matmul::kMxBlock)) {
    return "the block size is not the format's (16 for nvfp4, 32 for the MX formats)";
  }
  if (w.geometry == matmul::ScaleGeometry::kFlatBlocks && w.k % w.block != 0) {
    return "flat blocks that run across rows (K not a multiple of the block) are not supported by the "
           "tensor-core GEMV: quantize per row (/g layout)";
  }
  if (w.geometry == matmul::ScaleGeometry::kPerRow) return "per-row scales are not an NVFP4 or MX block layout";
  return nullptr;
}

// ---- the pieces (host and device) ---------------------------------------------
// Each takes weights that passed ValidateWeights and PackProblem, and the
// position of its piece in the packed tiles; `row_tiles` and `k_tiles` are
// PackedSizesOf's.

// The 16 code bytes of lane `lane`, row half `half`, part `part` of tile
// (l, r, j): what lands at CodeTileOffset(l, r, j, ...) + CodeLaneOffset(half,
// lane, part). Codes past N or K are 0 (tc_gemv_lanes.h: the K tail needs
// no mask).
struct LaneCodeBytes {
  std::uint8_t bytes[kCodeBytesPerLaneHalf];
};
LOWBIT_HD_CONSTEXPR LaneCodeBytes PackedLaneCodes(const matmul::WeightView& w, std::int64_t l, std::int64_t r,
                                                  std::int64_t j, int lane, int half, int part = 0) {
  LaneCodeBytes out{};
  const LanePosition pos = LaneOf(lane);
  const TileCodec codec = PackedCodecOf(w);
  const std::int64_t n = r * kTileRows + ARowOf(pos.group, half);
  const auto code_at = [&](std::int64_t k) -> std::uint8_t { return n < w.n && k < w.k ? matmul::WeightCode(w, l, n, k) : 0; };
  if (IsE4m3(codec)) {
    for (int word = 0; word < 4; ++word) {
      const int chunk = E4m3ChunkOf(part, word);
      for (int slot = 0; slot < 2; ++slot) {
        for (int e = 0; e < 2; ++e) {
          const std::int64_t k = j * kKTile + chunk * kChunk + AKOf(pos.index, 2 * slot + half, e);
          const std::uint32_t bits = E4m3CodeBitsInWord(code_at(k), slot, e);
          for (int b = 0; b < 4; ++b) out.bytes[4 * word + b] = static_cast<std::uint8_t>(out.bytes[4 * word + b] | (bits >> (8 * b)));
        }
      }
    }
    return out;
  }
  for (int chunk = 0; chunk < kChunksPerKTile; ++chunk) {
    for (int slot = 0; slot < 2; ++slot) {
      const int reg = 2 * slot + half;  // A register: row half, K slot
      const int pair = PairOf(chunk % 2, slot);
      for (int e = 0; e < 2; ++e) {
        const std::uint8_t code = code_at(j * kKTile + chunk * kChunk + AKOf(pos.index, reg, e));
        // The word's bytes little-endian, as the kernel's 16-byte load delivers them.
        const std::uint32_t bits = IsUint4(codec) ? Uint4CodeBitsInWord(code, pair, e)
                                                  : CodeBitsInWord(static_cast<std::uint8_t>(code & 0xF), pair, e);
        for (int b = 0; b < 4; ++b) {
          out.bytes[4 * (chunk / 2) + b] = static_cast<std::uint8_t>(out.bytes[4 * (chunk / 2) + b] | (bits >> (8 * b)));
        }
      }
    }
  }
  return out;
}
// Whether 16 packed code bytes hold an E4M3 NaN (a tile with one takes the
// table path: tc_gemv_lanes.h E4m3PairScaledDown).
LOWBIT_HD_CONSTEXPR bool HoldsE4m3Nan(const LaneCodeBytes& codes) {
  for (const std::uint8_t b : codes.bytes) {
    if (IsE4m3Nan(b)) return true;
  }
  return false;
}

// The scale bytes of lane group `group` (rows group and group + 8) of tile
// (l, r, j): 2 ScalesPerRowTile(block) bytes at ScaleTileOffset(...) +
// ScaleLaneOffset(group, block), in ScaleByteOfBlock order. Blocks past N or
// K hold `padding_scale` (PaddingScaleByte(RecordScaleTypeOf(codec)), which
// the caller computes once), and so does every entry of FP8 per channel.
inline constexpr int kMaxScaleBytesPerGroup = 2 * kKTile / matmul::kNvfp4Block;  // 16 (NVFP4), MX uses 8
struct GroupScaleBytes {
  std::uint8_t bytes[kMaxScaleBytesPerGroup];
};
LOWBIT_HD_CONSTEXPR GroupScaleBytes PackedGroupScales(const matmul::WeightView& w, std::int64_t l, std::int64_t r,
                                                      std::int64_t j, int group, std::uint8_t padding_scale) {
  GroupScaleBytes out{};
  if (w.format == WeightFormat::kUint4) {
    // [scale g][scale g + 8][zero g][zero g + 8], 16 bits each; rows past N:
    // scale +0 and zero 0, so that their operands are +0.
    const bool fp16 = w.scale_type == ScaleType::kFp16;
    for (int half = 0; half < 2; ++half) {
      const std::int64_t n = r * kTileRows + ARowOf(group, half);
      const std::int64_t k = j * kKTile;
      const std::uint16_t scale = n < w.n ? static_cast<std::uint16_t>(matmul::ScaleBits(w, l, n, k)) : 0;
      const std::uint16_t zero = Uint4ZeroOperand(n < w.n ? matmul::ZeroPointOf(w, l, n, k) : 0, fp16);
      out.bytes[2 * half] = static_cast<std::uint8_t>(scale), out.bytes[2 * half + 1] = static_cast<std::uint8_t>(scale >> 8);
      out.bytes[4 + 2 * half] = static_cast<std::uint8_t>(zero), out.bytes[5 + 2 * half] = static_cast<std::uint8_t>(zero >> 8);
    }
    return out;
  }
  const int block = PackedBlockOf(w);
  const bool channel = PackedCodecOf(w) == TileCodec::kFp8Channel;  // every entry 1.0: the epilogue scales
  for (int half = 0; half < 2; ++half) {
    const std::int64_t n = r * kTileRows + ARowOf(group, half);
    for (int b = 0; b < ScalesPerRowTile(block); ++b) {
      const std::int64_t k = j * kKTile + static_cast<std::int64_t>(b) * block;
      out.bytes[ScaleByteOfBlock(half, b)] =
          n < w.n && k < w.k && !channel ? static_cast<std::uint8_t>(matmul::ScaleBits(w, l, n, k)) : padding_scale;
    }
  }
  return out;
}
static_assert(2 * ScalesPerRowTile(matmul::kNvfp4Block) == kMaxScaleBytesPerGroup &&
                  2 * ScalesPerRowTile(matmul::kMxBlock) <= kMaxScaleBytesPerGroup &&
                  4 * ScaleWordsPerLane(kUint4RecordBlock) <= kMaxScaleBytesPerGroup,
              "a group's scale bytes fit GroupScaleBytes");
// A group's bytes of the record (what PackedGroupScales fills).
LOWBIT_HD_CONSTEXPR int GroupScaleByteCount(int block) { return 4 * ScaleWordsPerLane(block); }
static_assert(kTileRows == 2 * 8, "8 lane groups, two rows each, fill a row tile's scale record");

// The plain flag of a tile from its whole scale record (ScaleBytesPerTile(block)
// bytes, as packed) and whether its codes hold an E4M3 NaN: 1 when the
// kernel may take the plain path.
LOWBIT_HD_CONSTEXPR std::uint8_t PlainTileByte(TileCodec codec, const std::uint8_t* record, bool holds_e4m3_nan) {
  if (IsUint4(codec)) return 1;  // UINT4 has one path
  if (IsE4m3(codec) && holds_e4m3_nan) return 0;
  return TileScalesArePlain(codec, record, ScaleBytesPerTile(RecordBlockOf(codec))) ? 1 : 0;
}

// The column scale of row `row` of row tile r: the outer FP32 scale
// (OuterScaleOf) of output channel r * kTileRows + row, 1 past N.
LOWBIT_HD_CONSTEXPR float PackedColumnScale(const matmul::WeightView& w, std::int64_t l, std::int64_t r, int row) {
  const std::int64_t n = r * kTileRows + row;
  return n < w.n ? matmul::OuterScaleOf(w, l, n) : 1.0f;
}

// ---- the host packer ------------------------------------------------------------
// (Host code: ValidateWeights builds its lines in std::string.)
#if !defined(__CUDA_ARCH__)

// Why `w` cannot be packed (ValidateWeights, then PackProblem), empty when
// it can. Neither reads a buffer (pointers, alignment and sizes only), so
// the device packer applies the same checks to device pointers.
inline std::string PackError(const matmul::WeightView& w) {
  const matmul::ValidationResult valid = matmul::ValidateWeights(w);
  if (!valid.ok) return valid.error;
  if (const char* why = PackProblem(w)) return why;
  return std::string();
}

inline PackedWeights PackForTcGemv(const matmul::WeightView& w) {
  PackedWeights p;
  p.error = PackError(w);
  if (!p.error.empty()) return p;
  static_cast<PackedShape&>(p) = PackedShapeOf(w);
  const TileCodec codec = PackedCodecOf(w);
  const PackedSizes sizes = PackedSizesOf(w.n, w.k, w.batch, codec);
  p.codes.resize(static_cast<std::size_t>(sizes.code_bytes));
  p.scales.resize(static_cast<std::size_t>(sizes.scale_bytes));
  p.column_scales.resize(static_cast<std::size_t>(sizes.column_scales));
  p.plain_tiles.resize(static_cast<std::size_t>(sizes.plain_tiles));
  const std::uint8_t padding_scale = PaddingScaleByte(RecordScaleTypeOf(codec));
  const int group_scale_bytes = GroupScaleByteCount(p.block);
  for (std::int64_t l = 0; l < p.batch; ++l) {
    for (std::int64_t r = 0; r < p.row_tiles; ++r) {
      for (int row = 0; row < kTileRows; ++row) {
        p.column_scales[static_cast<std::size_t>((l * p.row_tiles + r) * kTileRows + row)] = PackedColumnScale(w, l, r, row);
      }
      for (std::int64_t j = 0; j < p.k_tiles; ++j) {
        std::uint8_t* codes = p.codes.data() + CodeTileOffset(l, r, j, p.row_tiles, p.k_tiles, codec);
        std::uint8_t* scales = p.scales.data() + ScaleTileOffset(l, r, j, p.row_tiles, p.k_tiles, p.block);
        bool holds_nan = false;
        for (int part = 0; part < CodePartsOf(codec); ++part) {
          for (int half = 0; half < 2; ++half) {
            for (int lane = 0; lane < kWarpSize; ++lane) {
              const LaneCodeBytes bytes = PackedLaneCodes(w, l, r, j, lane, half, part);
              holds_nan = holds_nan || HoldsE4m3Nan(bytes);
              std::copy(bytes.bytes, bytes.bytes + kCodeBytesPerLaneHalf, codes + CodeLaneOffset(half, lane, part));
            }
          }
        }
        for (int group = 0; group < kTileRows / 2; ++group) {
          const GroupScaleBytes bytes = PackedGroupScales(w, l, r, j, group, padding_scale);
          std::copy(bytes.bytes, bytes.bytes + group_scale_bytes, scales + ScaleLaneOffset(group, p.block));
        }
        p.plain_tiles[static_cast<std::size_t>((l * p.row_tiles + r) * p.k_tiles + j)] = PlainTileByte(codec, scales, holds_nan);
      }
    }
  }
  return p;
}

#endif  // !defined(__CUDA_ARCH__)

}  // namespace lowbit::cuda::tc_gemv
