// Per-target packing kernels, each equal to its formats/block/packing.h
// function for every input (codes are masked to 4 bits as the model does):
// nibble pairs in either order, GPTQ qweight words along K, AWQ words
// along N with the order_map interleave, and the quarter interleave of the
// swizzled scale tiles (swizzled_scales.h).

#if defined(LOWBIT_SIMD_PACKING_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_PACKING_INL_H_
#undef LOWBIT_SIMD_PACKING_INL_H_
#else
#define LOWBIT_SIMD_PACKING_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "convert-inl.h"
#include "hwy/highway.h"
#include "lowbit/formats/block/packing.h"
#include "packing_job.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// packing.h PackNibbles(kHighFirst): a byte pair read as a little-endian
// 16-bit lane is c0 | c1 << 8, and (c0 & 15) << 4 | (c1 & 15) its byte.
inline void PackNibblesHighFirst(const NibbleJob& job) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::Rebind<std::uint8_t, decltype(di16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  const std::size_t pairs = job.count / 2;
  std::size_t i = 0;
  for (; i + lanes <= pairs; i += lanes) {
    const auto v = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(job.codes) + i);
    const auto byte = hn::Or(hn::ShiftLeft<4>(hn::And(v, hn::Set(d16, 0x000F))),
                             hn::And(hn::ShiftRight<8>(v), hn::Set(d16, 0x000F)));
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, byte)), d8, job.out_packed + i);  // <= 255: exact
  }
  for (; i < pairs; ++i) {
    job.out_packed[i] =
        static_cast<std::uint8_t>(((job.codes[2 * i] & 0xF) << 4) | (job.codes[2 * i + 1] & 0xF));
  }
  if (job.count % 2) job.out_packed[pairs] = static_cast<std::uint8_t>((job.codes[job.count - 1] & 0xF) << 4);
}

// packing.h UnpackNibbles: each byte b, widened to a 16-bit lane, becomes
// first | second << 8, i.e. its two codes as two consecutive bytes.
inline void UnpackNibbles(const NibbleJob& job) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::Rebind<std::uint8_t, decltype(d16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  const std::size_t pairs = job.count / 2;
  const auto low = hn::Set(d16, 0x000F);
  std::size_t i = 0;
  for (; i + lanes <= pairs; i += lanes) {
    const auto b = hn::PromoteTo(d16, hn::LoadU(d8, job.packed + i));
    const auto lo = hn::And(b, low);
    const auto hi = hn::ShiftRight<4>(b);
    const auto two = job.high_first ? hn::Or(hi, hn::ShiftLeft<8>(lo)) : hn::Or(lo, hn::ShiftLeft<8>(hi));
    hn::StoreU(two, d16, reinterpret_cast<std::uint16_t*>(job.out_codes) + i);
  }
  for (std::size_t k = 2 * i; k < job.count; ++k) {
    const std::uint8_t byte = job.packed[k / 2];
    const bool low_nibble = (k % 2 == 0) != job.high_first;
    job.out_codes[k] = static_cast<std::uint8_t>(low_nibble ? byte & 0xF : byte >> 4);
  }
}

// packing.h PackGptqQweight: word [w][n] = sum_j (q[8w + j][n] & 15) << 4j,
// vectors along n (consecutive in both the codes and the words).
inline void PackGptqQweight(const WordJob& job) {
  const D32 d;
  const hn::Rebind<std::uint8_t, D32> d8;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t n_cols = job.cols;
  const V nibble = hn::Set(d, 0xFu);
  for (std::size_t w = 0; w < job.rows / 8; ++w) {
    const std::uint8_t* q = job.codes + w * 8 * n_cols;
    std::uint32_t* out = job.out_words + w * n_cols;
    std::size_t n = 0;
    for (; n + lanes <= n_cols; n += lanes) {
      V word = hn::Zero(d);
      for (int j = 0; j < 8; ++j) {
        const V c = hn::And(hn::PromoteTo(d, hn::LoadU(d8, q + j * n_cols + n)), nibble);
        word = hn::Or(word, hn::ShiftLeftSame(c, 4 * j));
      }
      hn::StoreU(word, d, out + n);
    }
    for (; n < n_cols; ++n) {
      std::uint32_t word = 0;
      for (int j = 0; j < 8; ++j) word |= static_cast<std::uint32_t>(q[j * n_cols + n] & 0xF) << (4 * j);
      out[n] = word;
    }
  }
}

// packing.h UnpackGptqQweight: q[8w + j][n] = (word [w][n] >> 4j) & 15.
inline void UnpackGptqQweight(const WordJob& job) {
  const D32 d;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t n_cols = job.cols;
  const V nibble = hn::Set(d, 0xFu);
  for (std::size_t w = 0; w < job.rows / 8; ++w) {
    const std::uint32_t* words = job.words + w * n_cols;
    std::uint8_t* q = job.out_codes + w * 8 * n_cols;
    std::size_t n = 0;
    for (; n + lanes <= n_cols; n += lanes) {
      const V word = hn::LoadU(d, words + n);
      for (int j = 0; j < 8; ++j) {
        StoreCodes<1>(d, hn::And(hn::ShiftRightSame(word, 4 * j), nibble), q + j * n_cols, n);
      }
    }
    for (; n < n_cols; ++n) {
      for (int j = 0; j < 8; ++j) q[j * n_cols + n] = static_cast<std::uint8_t>((words[n] >> (4 * j)) & 0xF);
    }
  }
}

// AWQ order_map [0, 2, 4, 6, 1, 3, 5, 7] (packing.h kAwqOrderMap): nibbles
// 0-3 of a word hold the even columns of its eight, nibbles 4-7 the odd
// ones. Eight code bytes read as a little-endian 64-bit lane hold column k
// at bits 8k; two mask-and-shift steps gather the even bytes' nibbles into
// bits 0-15 and the odd bytes' into bits 16-31 (and back for unpacking).
using D64 = hn::Repartition<std::uint64_t, D32>;

HWY_INLINE hn::Vec<D64> GatherNibbles(D64 d64, hn::Vec<D64> x) {  // nibbles at 0, 16, 32, 48 -> 0, 4, 8, 12
  x = hn::And(hn::Or(x, hn::ShiftRight<12>(x)), hn::Set(d64, 0x000000FF000000FFull));
  return hn::And(hn::Or(x, hn::ShiftRight<24>(x)), hn::Set(d64, 0xFFFFull));
}

HWY_INLINE hn::Vec<D64> SpreadNibbles(D64 d64, hn::Vec<D64> x) {  // nibbles at 0, 4, 8, 12 -> 0, 16, 32, 48
  x = hn::And(hn::Or(x, hn::ShiftLeft<24>(x)), hn::Set(d64, 0x000000FF000000FFull));
  return hn::And(hn::Or(x, hn::ShiftLeft<12>(x)), hn::Set(d64, 0x000F000F000F000Full));
}

inline std::uint32_t AwqWordScalar(const std::uint8_t* q) {
  std::uint32_t word = 0;
  for (int i = 0; i < 8; ++i) word |= static_cast<std::uint32_t>(q[block::kAwqOrderMap[i]] & 0xF) << (4 * i);
  return word;
}

// With N a multiple of 8, [rows][N] codes and [rows][N / 8] words are each
// one contiguous run: word i comes from codes 8i .. 8i + 7.
inline void PackAwq(const WordJob& job) {
  const D64 d64;
  const hn::Rebind<std::uint32_t, D64> d32;
  const std::size_t lanes = hn::Lanes(d64);
  const std::size_t words = job.rows * (job.cols / 8);
  const auto nibble = hn::Set(d64, 0x000F000F000F000Full);
  std::size_t i = 0;
  for (; i + lanes <= words; i += lanes) {
    const auto x = hn::LoadU(d64, reinterpret_cast<const std::uint64_t*>(job.codes) + i);
    const auto even = GatherNibbles(d64, hn::And(x, nibble));
    const auto odd = GatherNibbles(d64, hn::And(hn::ShiftRight<8>(x), nibble));
    hn::StoreU(hn::TruncateTo(d32, hn::Or(even, hn::ShiftLeft<16>(odd))), d32, job.out_words + i);
  }
  for (; i < words; ++i) job.out_words[i] = AwqWordScalar(job.codes + 8 * i);
}

inline void UnpackAwq(const WordJob& job) {
  const D64 d64;
  const hn::Rebind<std::uint32_t, D64> d32;
  const std::size_t lanes = hn::Lanes(d64);
  const std::size_t words = job.rows * (job.cols / 8);
  std::size_t i = 0;
  for (; i + lanes <= words; i += lanes) {
    const auto w = hn::PromoteTo(d64, hn::LoadU(d32, job.words + i));
    const auto even = SpreadNibbles(d64, hn::And(w, hn::Set(d64, 0xFFFFull)));
    const auto odd = SpreadNibbles(d64, hn::ShiftRight<16>(w));
    hn::StoreU(hn::Or(even, hn::ShiftLeft<8>(odd)), d64, reinterpret_cast<std::uint64_t*>(job.out_codes) + i);
  }
  for (; i < words; ++i) {
    for (int k = 0; k < 8; ++k) {
      job.out_codes[8 * i + block::kAwqOrderMap[k]] = static_cast<std::uint8_t>((job.words[i] >> (4 * k)) & 0xF);
    }
  }
}

// swizzled_scales.h in 128 x 4 tiles: word 4 m + q of a tile is row
// 32 q + m, so four vectors of rows (one per 32-row quarter) stored
// interleaved are the tile, and loaded interleaved give the rows back.
inline void SwizzleScaleTiles(const SwizzleJob& job) {
  const hn::ScalableTag<std::uint32_t> d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t t = 0; t < job.tiles; ++t) {
    const std::uint32_t* rows = job.rows + 128 * t;
    std::uint32_t* out = job.out_tile_words + 128 * t;
    std::size_t m = 0;
    for (; m + lanes <= 32; m += lanes) {
      hn::StoreInterleaved4(hn::LoadU(d, rows + m), hn::LoadU(d, rows + 32 + m), hn::LoadU(d, rows + 64 + m),
                            hn::LoadU(d, rows + 96 + m), d, out + 4 * m);
    }
    for (; m < 32; ++m) {
      for (int q = 0; q < 4; ++q) out[4 * m + static_cast<std::size_t>(q)] = rows[32 * static_cast<std::size_t>(q) + m];
    }
  }
}

inline void UnswizzleScaleTiles(const SwizzleJob& job) {
  const hn::ScalableTag<std::uint32_t> d;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t t = 0; t < job.tiles; ++t) {
    const std::uint32_t* tile = job.tile_words + 128 * t;
    std::uint32_t* rows = job.out_rows + 128 * t;
    std::size_t m = 0;
    for (; m + lanes <= 32; m += lanes) {
      hn::Vec<decltype(d)> v0, v1, v2, v3;
      hn::LoadInterleaved4(d, tile + 4 * m, v0, v1, v2, v3);
      hn::StoreU(v0, d, rows + m);
      hn::StoreU(v1, d, rows + 32 + m);
      hn::StoreU(v2, d, rows + 64 + m);
      hn::StoreU(v3, d, rows + 96 + m);
    }
    for (; m < 32; ++m) {
      for (int q = 0; q < 4; ++q) rows[32 * static_cast<std::size_t>(q) + m] = tile[4 * m + static_cast<std::size_t>(q)];
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_PACKING_INL_H_
