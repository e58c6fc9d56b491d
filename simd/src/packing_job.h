// What the non-target code hands a per-target packing kernel (packing.cc),
// already validated: the layouts of formats/block/packing.h other than the
// low-nibble-first pack that block_quantize-inl.h already has, and the
// quarter interleave of the swizzled scale tiles (swizzled_scales.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/registry/registry.h"

namespace lowbit::simd {

// Two 4-bit codes per byte: count codes <-> (count + 1) / 2 bytes.
struct NibbleJob {
  bool high_first;  // NibbleOrder::kHighFirst (tinygemm), else kLowFirst
  const std::uint8_t* codes;  // pack input / unpack output (count bytes)
  std::uint8_t* out_codes;
  const std::uint8_t* packed;  // unpack input
  std::uint8_t* out_packed;    // pack output
  std::size_t count;
};

// INT4 in int32 words: GPTQ qweight ([K][N] codes <-> [K / 8][N] words) and
// AWQ ([rows][N] codes <-> [rows][N / 8] words, order_map interleave).
struct WordJob {
  const std::uint8_t* codes;
  std::uint8_t* out_codes;
  const std::uint32_t* words;
  std::uint32_t* out_words;
  std::size_t rows;  // GPTQ: K (a multiple of 8); AWQ: rows
  std::size_t cols;  // N (AWQ: a multiple of 8)
};

// Swizzled scales, one 128 x 4 tile at a time: the tile's 128 rows as
// little-endian uint32 words (row r's four scale bytes in word r) <-> the
// tile's 512 bytes as 128 words, row r at word 4 (r % 32) + r / 32
// (swizzled_scales.h SwizzledScaleOffset: byte (r % 32) * 16 + (r / 32) * 4
// + c). Pack reads `rows` and writes `tile_words`; unpack the reverse.
struct SwizzleJob {
  const std::uint32_t* rows;
  std::uint32_t* out_rows;
  const std::uint32_t* tile_words;
  std::uint32_t* out_tile_words;
  std::size_t tiles;
};

// The registry rows of the GEMM weight layouts (tinygemm, torch CPU
// int4pack, Marlin) and the swizzled scales on `target` (packing.cc): the
// registry's argument checks, the model's index math for the gather, the
// target's kernels for the packing.
registry::Status RunLayoutPacking(std::int64_t target, const registry::PackingArgs& a);

}  // namespace lowbit::simd
