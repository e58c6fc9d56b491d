// Run-time dispatch (target_dispatch.h) and argument checks of the packing
// kernels (packing-inl.h): formats/block/packing.h's nibble orders, GPTQ
// qweight and AWQ words, on any compiled target; and the GEMM weight layouts
// and swizzled scales (docs/layouts.md) as RunLayoutPacking.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "packing-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "packing-inl.h"

#if HWY_ONCE
#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"
#include "lowbit/simd/simd.h"
#include "packing_job.h"
#include "entry_checks.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(PackNibblesHighFirst);
HWY_EXPORT(UnpackNibbles);
HWY_EXPORT(PackGptqQweight);
HWY_EXPORT(UnpackGptqQweight);
HWY_EXPORT(PackAwq);
HWY_EXPORT(UnpackAwq);
HWY_EXPORT(SwizzleScaleTiles);
HWY_EXPORT(UnswizzleScaleTiles);

namespace {

// The kernel's target, then the pointers.
template <typename Kernel>
registry::Status Check(Kernel kernel, std::int64_t target, const void* in, const void* out,
                       std::size_t count) {
  if (kernel == nullptr) return detail::TargetError(target);
  if (count > 0 && (in == nullptr || out == nullptr)) {
    return registry::Status::Error("simd: null input or output");
  }
  return registry::Status::Ok();
}

// GPTQ qweight words hold eight rows of K; AWQ words eight columns of N
// (packing.h: the model's loops assume these, and its GPTQ unpack would read
// past the last word otherwise).
registry::Status CheckMultipleOf8(std::size_t n, const char* what) {
  if (n % 8 == 0) return registry::Status::Ok();
  return registry::Status::Error(std::string("simd: ") + what + " must be a multiple of 8");
}

// "simd: `what`: out overlaps in" (registry.h CheckNoOverlap), else Ok.
registry::Status NoOverlap(const char* what, const void* in, std::size_t in_bytes, const void* out,
                           std::size_t out_bytes) {
  return registry::CheckNoOverlap(std::string("simd: ") + what, {{in, in_bytes, "input"}},
                                  {{out, out_bytes, "output"}});
}

}  // namespace

registry::Status PackNibbles(std::int64_t target, block::NibbleOrder order, const std::uint8_t* codes,
                             std::size_t count, std::uint8_t* packed) {
  if (registry::Status s = detail::CheckNibbleOrder(order); !s.ok) return s;
  if (order == block::NibbleOrder::kLowFirst) return PackNibbles(target, codes, count, packed);
  const auto kernel = LOWBIT_SIMD_KERNEL(PackNibblesHighFirst, target);
  registry::Status s = Check(kernel, target, codes, packed, count);
  if (s.ok) s = NoOverlap("PackNibbles", codes, count, packed, CeilDiv(count, 2));
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{true, codes, nullptr, nullptr, packed, count});
  return registry::Status::Ok();
}

registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes) {
  if (registry::Status s = detail::CheckNibbleOrder(order); !s.ok) return s;
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackNibbles, target);
  registry::Status s = Check(kernel, target, packed, codes, count);
  if (s.ok) s = NoOverlap("UnpackNibbles", packed, CeilDiv(count, 2), codes, count);
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{order == block::NibbleOrder::kHighFirst, nullptr, codes, packed, nullptr, count});
  return registry::Status::Ok();
}

registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackGptqQweight, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(k_rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, q, words, codes);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (s.ok) s = NoOverlap("PackGptqQweight", q, codes, words, codes / 2);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackGptqQweight, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(k_rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, words, q, codes);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (s.ok) s = NoOverlap("UnpackGptqQweight", words, codes / 2, q, codes);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackAwq, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, q, words, codes);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (s.ok) s = NoOverlap("PackAwq", q, codes, words, codes / 2);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackAwq, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, words, q, codes);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (s.ok) s = NoOverlap("UnpackAwq", words, codes / 2, q, codes);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words) {
  static_assert(std::endian::native == std::endian::little, "qzeros words as a nibble stream");
  std::size_t count = 0;
  // Runs on the nibble kernels: their target and the pointers, then the shape.
  registry::Status s = detail::CheckedMatrix(groups, n_cols, 1, &count);
  if (s.ok) s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, zeros, words, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (s.ok) s = NoOverlap("PackGptqQzeros", zeros, count, words, count / 2);
  if (!s.ok || count == 0) return s;
  std::vector<std::uint8_t> stored(count);  // [GPTQ] pack: zeros -= 1
  for (std::size_t i = 0; i < count; ++i) stored[i] = static_cast<std::uint8_t>((zeros[i] - 1) & 0xF);
  return PackNibbles(target, stored.data(), count, reinterpret_cast<std::uint8_t*>(words));
}

registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros) {
  std::size_t count = 0;
  registry::Status s = detail::CheckedMatrix(groups, n_cols, 1, &count);
  if (s.ok) s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, words, zeros, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (s.ok) s = NoOverlap("UnpackGptqQzeros", words, count / 2, zeros, count);
  if (!s.ok || count == 0) return s;
  s = UnpackNibbles(target, block::NibbleOrder::kLowFirst, reinterpret_cast<const std::uint8_t*>(words),
                    count, zeros);
  // [GPTQ] forward: zeros + 1 (stored values are 4-bit, so 0xF -> 0).
  for (std::size_t i = 0; s.ok && i < count; ++i) zeros[i] = static_cast<std::uint8_t>((zeros[i] + 1) & 0xF);
  return s;
}

namespace {

// The code that nibble `nibble` of packed unit `unit` holds in a permuting
// layout (the model's index math; its row may be padding, >= rows).
block::CodePosition SourceOf(const registry::PackingArgs& a, std::int64_t unit, int nibble) {
  const auto rows = static_cast<std::int64_t>(a.rows), cols = static_cast<std::int64_t>(a.cols);
  if (const int tiles = registry::TinygemmInnerKTilesOf(a.layout); tiles != 0) {
    return block::TinygemmInt4packSource(unit, nibble, cols, tiles);
  }
  if (const int isa = registry::TorchCpuInt4packIsaOf(a.layout); isa >= 0) {
    return block::TorchCpuInt4packSource(unit, nibble, rows, cols, static_cast<block::TorchCpuInt4packIsa>(isa));
  }
  return block::MarlinSource(unit, nibble, cols);  // kMarlin
}

// swizzled_scales.h: rows staged as one uint32 per (row, 4-column group)
// of each tile, padding 0, then the quarter interleave on the target.
registry::Status RunSwizzle(std::int64_t target, const registry::PackingArgs& a, std::size_t packed_bytes) {
  const auto pack_kernel = LOWBIT_SIMD_KERNEL(SwizzleScaleTiles, target);
  const auto unpack_kernel = LOWBIT_SIMD_KERNEL(UnswizzleScaleTiles, target);
  if (pack_kernel == nullptr || unpack_kernel == nullptr) return detail::TargetError(target);
  const std::size_t tiles = packed_bytes / block::kSwizzleTileBytes;
  const std::size_t col_tiles = CeilDiv(a.cols, block::kSwizzleTileCols);
  std::vector<std::uint32_t> rows(tiles * 128), tile_words(tiles * 128);
  const auto each_cell = [&](auto&& visit) {
    for (std::size_t t = 0; t < tiles; ++t) {
      for (std::size_t r = 0; r < 128; ++r) {
        const std::size_t row = t / col_tiles * 128 + r;
        for (std::size_t c = 0; c < 4; ++c) {
          const std::size_t col = t % col_tiles * 4 + c;
          if (row < a.rows && col < a.cols) visit(t * 128 + r, c, row * a.cols + col);
        }
      }
    }
  };
  if (a.direction == registry::PackDirection::kPack) {
    each_cell([&](std::size_t word, std::size_t c, std::size_t code) {
      rows[word] |= static_cast<std::uint32_t>(a.codes[code]) << (8 * c);
    });
    pack_kernel(SwizzleJob{rows.data(), nullptr, nullptr, tile_words.data(), tiles});
    std::memcpy(a.packed_bytes, tile_words.data(), packed_bytes);
    return registry::Status::Ok();
  }
  std::memcpy(tile_words.data(), a.in_bytes, packed_bytes);
  unpack_kernel(SwizzleJob{nullptr, rows.data(), tile_words.data(), nullptr, tiles});
  each_cell([&](std::size_t word, std::size_t c, std::size_t code) {
    a.codes_out[code] = static_cast<std::uint8_t>(rows[word] >> (8 * c));
  });
  return registry::Status::Ok();
}

}  // namespace

registry::Status RunLayoutPacking(std::int64_t target, const registry::PackingArgs& a) {
  static_assert(std::endian::native == std::endian::little, "packed words as a nibble stream");
  if (registry::Status s = registry::ValidatePackingArgs(a); !s.ok) return s;
  const registry::PackingLayoutInfo* info = registry::FindPackingLayoutInfo(a.layout);
  const registry::PackingSizes sizes = registry::PackingBufferSizes(a.layout, a.rows, a.cols);
  if (sizes.codes == 0) return registry::Status::Ok();
  const std::size_t packed_bytes = sizes.packed_units * registry::PackedUnitBytes(info->unit);
  if (a.layout == registry::PackingLayout::kSwizzledScales) return RunSwizzle(target, a, packed_bytes);
  if (registry::TinygemmInnerKTilesOf(a.layout) == 0 && registry::TorchCpuInt4packIsaOf(a.layout) < 0 &&
      a.layout != registry::PackingLayout::kMarlin) {
    return registry::Status::Error(std::string("simd: ") + info->name + " is not a permuting layout");
  }
  // The permuting layouts: the model's index math gathers the codes into
  // nibble order (nibble i of unit u at staging[u * per_unit + i]), and the
  // target's low-first nibble kernels pack or unpack that stream (a word's
  // nibble i is nibble i of its little-endian bytes).
  const std::size_t per_unit = static_cast<std::size_t>(info->codes_per_unit);
  const std::size_t nibbles = sizes.packed_units * per_unit;
  std::vector<std::uint8_t> staging(nibbles);
  const bool pack = a.direction == registry::PackDirection::kPack;
  if (!pack) {
    const std::uint8_t* in = info->unit == registry::PackedUnit::kByte
                                 ? a.in_bytes
                                 : reinterpret_cast<const std::uint8_t*>(a.in_words);
    if (registry::Status s = UnpackNibbles(target, block::NibbleOrder::kLowFirst, in, nibbles, staging.data()); !s.ok) {
      return s;
    }
  }
  for (std::size_t u = 0; u < sizes.packed_units; ++u) {
    for (std::size_t i = 0; i < per_unit; ++i) {
      const block::CodePosition p = SourceOf(a, static_cast<std::int64_t>(u), static_cast<int>(i));
      if (static_cast<std::size_t>(p.row) >= a.rows) continue;  // padding: staged as 0, dropped on unpack
      const std::size_t code = static_cast<std::size_t>(p.row) * a.cols + static_cast<std::size_t>(p.col);
      if (pack) {
        staging[u * per_unit + i] = a.codes[code];
      } else {
        a.codes_out[code] = staging[u * per_unit + i];
      }
    }
  }
  if (!pack) return registry::Status::Ok();
  std::uint8_t* out = info->unit == registry::PackedUnit::kByte ? a.packed_bytes
                                                                 : reinterpret_cast<std::uint8_t*>(a.packed_words);
  return PackNibbles(target, staging.data(), nibbles, out);
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
