// What the non-target code hands a per-target packing kernel (packing.cc),
// already validated: the layouts of formats/block/packing.h other than the
// low-nibble-first pack that block_quantize-inl.h already has.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace lowbit::simd
