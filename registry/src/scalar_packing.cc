// The packing rows' sizes, argument checks and the scalar backend: the
// model's loops (formats/block/packing.h) over typed buffers, one row per
// (layout, direction). Every other packing backend is compared with these.
#include <cstdint>
#include <string>

#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"
#include "lowbit/formats/checked_size.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

std::string Prefix(const PackingArgs& a) {
  return std::string(PackingLayoutName(a.layout)) + " " + PackDirectionName(a.direction) + ": ";
}

block::NibbleOrder OrderOf(PackingLayout layout) {
  return layout == PackingLayout::kNibblesHighFirst ? block::NibbleOrder::kHighFirst
                                                    : block::NibbleOrder::kLowFirst;
}

static_assert(TorchCpuInt4packIsaOf(PackingLayout::kTorchCpuInt4packAvx512) ==
                  static_cast<int>(block::TorchCpuInt4packIsa::kAvx512) &&
              TorchCpuInt4packIsaOf(PackingLayout::kTorchCpuInt4packAvx2) ==
                  static_cast<int>(block::TorchCpuInt4packIsa::kAvx2) &&
              TorchCpuInt4packIsaOf(PackingLayout::kTorchCpuInt4packDefault) ==
                  static_cast<int>(block::TorchCpuInt4packIsa::kDefault),
              "TorchCpuInt4packIsaOf follows block::TorchCpuInt4packIsa");

Status RunScalarPacking(const PackingArgs& a) {
  if (Status s = ValidatePackingArgs(a); !s.ok) return s;
  if (a.rows == 0 || a.cols == 0) return Status::Ok();
  // ValidatePackingArgs (PackingBufferSizes) refused a product past the
  // model's signed 64-bit indices, which packing.h uses throughout.
  const std::size_t codes = a.rows * a.cols;
  const std::int64_t rows = static_cast<std::int64_t>(a.rows), cols = static_cast<std::int64_t>(a.cols);
  const bool pack = a.direction == PackDirection::kPack;
  switch (a.layout) {
    case PackingLayout::kNibblesLowFirst:
    case PackingLayout::kNibblesHighFirst:
      if (pack) {
        block::PackNibbles(a.codes, static_cast<long>(codes), OrderOf(a.layout), a.packed_bytes);
      } else {
        block::UnpackNibbles(a.in_bytes, static_cast<long>(codes), OrderOf(a.layout), a.codes_out);
      }
      break;
    case PackingLayout::kGptqQweight:
      if (pack) block::PackGptqQweight(a.codes, rows, cols, a.packed_words);
      else block::UnpackGptqQweight(a.in_words, rows, cols, a.codes_out);
      break;
    case PackingLayout::kGptqQzeros:
      if (pack) block::PackGptqQzeros(a.codes, rows, cols, a.packed_words);
      else block::UnpackGptqQzeros(a.in_words, rows, cols, a.codes_out);
      break;
    case PackingLayout::kAwq:
      if (pack) block::PackAwq(a.codes, rows, cols, a.packed_words);
      else block::UnpackAwq(a.in_words, rows, cols, a.codes_out);
      break;
    case PackingLayout::kTinygemmInt4packK2:
    case PackingLayout::kTinygemmInt4packK4:
    case PackingLayout::kTinygemmInt4packK8: {
      const int tiles = TinygemmInnerKTilesOf(a.layout);
      if (pack) block::PackTinygemmInt4(a.codes, rows, cols, tiles, a.packed_words);
      else block::UnpackTinygemmInt4(a.in_words, rows, cols, tiles, a.codes_out);
      break;
    }
    case PackingLayout::kTorchCpuInt4packAvx512:
    case PackingLayout::kTorchCpuInt4packAvx2:
    case PackingLayout::kTorchCpuInt4packDefault: {
      const auto isa = static_cast<block::TorchCpuInt4packIsa>(TorchCpuInt4packIsaOf(a.layout));
      if (pack) block::PackTorchCpuInt4(a.codes, rows, cols, isa, a.packed_bytes);
      else block::UnpackTorchCpuInt4(a.in_bytes, rows, cols, isa, a.codes_out);
      break;
    }
    case PackingLayout::kMarlin:
      if (pack) block::PackMarlin(a.codes, rows, cols, a.packed_words);
      else block::UnpackMarlin(a.in_words, rows, cols, a.codes_out);
      break;
    case PackingLayout::kSwizzledScales:
      if (pack) block::SwizzleScales(a.codes, rows, cols, a.packed_bytes);
      else block::UnswizzleScales(a.in_bytes, rows, cols, a.codes_out);
      break;
  }
  return Status::Ok();
}

}  // namespace

bool ParsePackingLayout(std::string_view name, PackingLayout* out) {
  for (const PackingLayoutInfo& info : kPackingLayoutInfo) {
    if (name == info.name) {
      *out = info.layout;
      return true;
    }
  }
  return false;
}

PackingSizes PackingBufferSizes(PackingLayout layout, std::size_t rows, std::size_t cols) {
  PackingSizes sizes;
  const PackingLayoutInfo* info = FindPackingLayoutInfo(layout);
  if (info == nullptr) {
    sizes.error = "unknown packing layout " + std::to_string(static_cast<int>(layout));
    return sizes;
  }
  const auto multiple = [&sizes, info](std::size_t n, int of, const char* what) {
    if (n % static_cast<std::size_t>(of) == 0) return true;
    sizes.error = std::string(what) + " = " + std::to_string(n) + " is not a multiple of " +
                  std::to_string(of) + " (" + info->name + ": " + info->shape + ")";
    return false;
  };
  if (!multiple(rows, info->rows_multiple, info->rows_name) ||
      !multiple(cols, info->cols_multiple, info->cols_name)) {
    return sizes;
  }
  // Any whole count of codes is fine, but it must fit the model's 64-bit
  // signed indices (packing.h) and every buffer's byte count must fit
  // size_t (a word layout's buffers hold codes / 2 bytes); a padding
  // layout's padded count must fit them too.
  std::size_t codes = 0, padded = 0;
  const auto round_up = [](std::size_t n, int to, std::size_t* out) {
    const std::size_t step = static_cast<std::size_t>(to);
    return CheckedMul(CeilDiv(n, step), step, out);
  };
  std::size_t padded_rows = 0, padded_cols = 0;
  if (!CheckedElementCount(rows, cols, &codes) || !round_up(rows, info->rows_padded_to, &padded_rows) ||
      !round_up(cols, info->cols_padded_to, &padded_cols) ||
      !CheckedElementCount(padded_rows, padded_cols, &padded)) {
    sizes.error = std::to_string(rows) + " x " + std::to_string(cols) + " codes overflow the buffer sizes";
    return sizes;
  }
  sizes.ok = true;
  sizes.codes = codes;
  sizes.packed_units = codes == 0 ? 0 : CeilDiv(padded, static_cast<std::size_t>(info->codes_per_unit));
  return sizes;
}

Status ValidatePackingArgs(const PackingArgs& a) {
  const PackingLayoutInfo* info = FindPackingLayoutInfo(a.layout);
  if (info == nullptr) {
    return Status::Error("unknown packing layout " + std::to_string(static_cast<int>(a.layout)));
  }
  if (a.direction != PackDirection::kPack && a.direction != PackDirection::kUnpack) {
    return Status::Error(std::string(info->name) + ": unknown direction " +
                         std::to_string(static_cast<int>(a.direction)));
  }
  const PackingSizes sizes = PackingBufferSizes(a.layout, a.rows, a.cols);
  if (!sizes.ok) return Status::Error(Prefix(a) + sizes.error);
  if (sizes.codes == 0) return Status::Ok();
  const std::string count = " with " + std::to_string(sizes.codes) + " codes";
  const bool bytes = info->unit == PackedUnit::kByte;
  const std::string what = Prefix(a).substr(0, Prefix(a).size() - 2);
  const std::size_t packed_bytes = sizes.packed_units * PackedUnitBytes(info->unit);  // fits: PackingBufferSizes
  if (a.direction == PackDirection::kPack) {
    if (a.codes == nullptr) return Status::Error(Prefix(a) + "null codes input" + count);
    if (bytes ? a.packed_bytes == nullptr : a.packed_words == nullptr) {
      return Status::Error(Prefix(a) + (bytes ? "null packed bytes output" : "null packed words output") +
                           count);
    }
    if (Status s = CheckAligned(what, bytes ? nullptr : a.packed_words, 4, "packed words"); !s.ok) return s;
    const void* out = bytes ? static_cast<const void*>(a.packed_bytes) : a.packed_words;
    return CheckNoOverlap(what, {{a.codes, sizes.codes, "codes"}}, {{out, packed_bytes, "packed output"}});
  }
  if (bytes ? a.in_bytes == nullptr : a.in_words == nullptr) {
    return Status::Error(Prefix(a) + (bytes ? "null packed bytes input" : "null packed words input") + count);
  }
  if (a.codes_out == nullptr) return Status::Error(Prefix(a) + "null codes output" + count);
  if (Status s = CheckAligned(what, bytes ? nullptr : a.in_words, 4, "packed words"); !s.ok) return s;
  const void* in = bytes ? static_cast<const void*>(a.in_bytes) : a.in_words;
  return CheckNoOverlap(what, {{in, packed_bytes, "packed input"}}, {{a.codes_out, sizes.codes, "codes"}});
}

void RegisterScalarPacking(Registry& registry) {
  for (PackingLayout layout : kAllPackingLayouts) {
    for (PackDirection direction : kAllPackDirections) {
      registry.AddPacking(PackingEntry{layout, direction, "scalar", [] { return true; }, RunScalarPacking});
    }
  }
}

}  // namespace lowbit::registry
