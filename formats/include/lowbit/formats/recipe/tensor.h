// Whole tensors through a recipe: the groups of a layout (geometry), the
// typed buffers a quantized tensor occupies, and quantize / dequantize as
// loops over steps.h. This is the model every backend is compared with.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::recipe {

enum class TensorStatus : std::uint8_t {
  kOk,
  kEmpty,                   // rows or cols < 1
  kBadGroup,                // a group, block or tile size < 1 where one is needed
  kColsNotMultipleOfGroup,  // cols % size != 0 (kGroup, kTile2d)
  kRowsNotMultipleOfTile,   // rows % tile_rows != 0 (kTile2d)
  kLayoutNotForRecipe,      // e.g. a per-row MX scale: MX and NVFP4 take 1-D blocks or groups
  kSizeOverflow,            // rows * cols (or a buffer size) does not fit
};

LOWBIT_HD_CONSTEXPR const char* TensorStatusText(TensorStatus s) {
  switch (s) {
    case TensorStatus::kOk: return "ok";
    case TensorStatus::kEmpty: return "empty shape";
    case TensorStatus::kBadGroup: return "group size must be positive";
    case TensorStatus::kColsNotMultipleOfGroup: return "columns are not a multiple of the group size";
    case TensorStatus::kRowsNotMultipleOfTile: return "rows are not a multiple of the tile height";
    case TensorStatus::kLayoutNotForRecipe: return "this layout does not apply to this recipe";
    case TensorStatus::kSizeOverflow: return "tensor size overflows";
  }
  return "?";
}

// The grid of groups of a layout over [rows, cols]: each group is
// group_rows x group_cols elements (a 1-D block is 1 x size over the
// flattened tensor, whose last block may be short), numbered row-major.
struct GroupGrid {
  long rows = 0, cols = 0;
  long group_rows = 0;  // rows per group
  long group_cols = 0;  // columns per group (kBlock1d: elements per block)
  long grid_rows = 0;   // groups along the rows
  long grid_cols = 0;   // groups along a row (kBlock1d: blocks of the flattened tensor)
  bool flat = false;    // kBlock1d: blocks over the flattened tensor
  LOWBIT_HD_CONSTEXPR long Count() const { return grid_rows * grid_cols; }
};

// MX and NVFP4 scales are per block of elements: 1-D blocks of the
// flattened tensor, or the same block size as groups along each row (equal to
// 1-D blocks when cols is a multiple of it). Scaled recipes take any grid
// layout but not a flattened block.
LOWBIT_HD_CONSTEXPR bool LayoutApplies(const Recipe& r, const Layout& layout) {
  if (r.family() == Family::kScaled) return layout.geometry != Geometry::kBlock1d;
  return (layout.geometry == Geometry::kBlock1d || layout.geometry == Geometry::kGroup) &&
         layout.size == r.layout.size;
}

LOWBIT_HD_CONSTEXPR TensorStatus MakeGroupGrid(const Recipe& r, const Layout& layout, long rows, long cols,
                                               GroupGrid* out) {
  if (rows < 1 || cols < 1) return TensorStatus::kEmpty;
  if (!LayoutApplies(r, layout)) return TensorStatus::kLayoutNotForRecipe;
  if (rows > (static_cast<long>(~0ul >> 1) / cols)) return TensorStatus::kSizeOverflow;
  GroupGrid g;
  g.rows = rows;
  g.cols = cols;
  switch (layout.geometry) {
    case Geometry::kPerTensor:
      g.group_rows = rows;
      g.group_cols = cols;
      break;
    case Geometry::kPerRow:
      g.group_rows = 1;
      g.group_cols = cols;
      break;
    case Geometry::kBlock1d:
      if (layout.size < 1) return TensorStatus::kBadGroup;
      g.flat = true;
      g.group_rows = 1;
      g.group_cols = layout.size;
      g.grid_rows = 1;
      // ceil without rows * cols + size - 1, which can pass LONG_MAX.
      g.grid_cols = (rows * cols) / layout.size + ((rows * cols) % layout.size != 0 ? 1 : 0);
      *out = g;
      return TensorStatus::kOk;
    case Geometry::kGroup:
    case Geometry::kTile2d:
      if (layout.size < 1) return TensorStatus::kBadGroup;
      if (cols % layout.size != 0) return TensorStatus::kColsNotMultipleOfGroup;
      g.group_cols = layout.size;
      g.group_rows = 1;
      if (layout.geometry == Geometry::kTile2d) {
        if (layout.tile_rows < 1) return TensorStatus::kBadGroup;
        if (rows % layout.tile_rows != 0) return TensorStatus::kRowsNotMultipleOfTile;
        g.group_rows = layout.tile_rows;
      }
      break;
  }
  g.grid_rows = rows / g.group_rows;
  g.grid_cols = cols / g.group_cols;
  *out = g;
  return TensorStatus::kOk;
}

// The group of element (i, j).
LOWBIT_HD_CONSTEXPR long GroupOf(const GroupGrid& g, long i, long j) {
  if (g.flat) return (i * g.cols + j) / g.group_cols;
  return (i / g.group_rows) * g.grid_cols + j / g.group_cols;
}

// Calls f(flat_index) for every element of group `group`, row-major within
// the group (the order the statistics see; they are order-free anyway).
template <typename F>
LOWBIT_HD_CONSTEXPR void ForEachInGroup(const GroupGrid& g, long group, F&& f) {
  if (g.flat) {
    const long start = group * g.group_cols;
    const long end = start + g.group_cols < g.rows * g.cols ? start + g.group_cols : g.rows * g.cols;
    for (long k = start; k < end; ++k) f(k);
    return;
  }
  const long r0 = (group / g.grid_cols) * g.group_rows;
  const long c0 = (group % g.grid_cols) * g.group_cols;
  for (long i = r0; i < r0 + g.group_rows; ++i) {
    for (long j = c0; j < c0 + g.group_cols; ++j) f(i * g.cols + j);
  }
}

// ---- the buffers of a quantized tensor ----------------------------------------

// Typed: element codes in the recipe's packing, one scale per group in the
// recipe's scale format, zero points and the tensor scale where the recipe
// has them. Unused buffers stay null.
struct QuantizedTensor {
  std::uint8_t* codes = nullptr;        // packed per Recipe::packing
  std::uint8_t* scale_codes = nullptr;  // MX: E8M0, NVFP4: UE4M3; one per group
  float* scales = nullptr;              // scaled recipes: the FP32 dequantize scale per group
  std::int32_t* zero_points = nullptr;  // Recipe::zero_point == kInteger: one per group
  TensorScale* tensor_scale = nullptr;  // Recipe::tensor_scale != kNone
};

struct ConstQuantizedTensor {
  const std::uint8_t* codes = nullptr;
  const std::uint8_t* scale_codes = nullptr;
  const float* scales = nullptr;
  const std::int32_t* zero_points = nullptr;
  const TensorScale* tensor_scale = nullptr;
};

LOWBIT_HD_CONSTEXPR ConstQuantizedTensor AsConst(const QuantizedTensor& q) {
  return {q.codes, q.scale_codes, q.scales, q.zero_points, q.tensor_scale};
}

// Element counts of each buffer (bytes for codes).
struct BufferSizes {
  long code_bytes = 0;
  long scale_codes = 0;   // bytes
  long scales = 0;        // floats
  long zero_points = 0;   // int32
  long tensor_scales = 0; // TensorScale (0 or 1)
};

LOWBIT_HD_CONSTEXPR long PackedBytes(Packing packing, long count) {
  return packing == Packing::kOnePerByte ? count : count / 2 + count % 2;  // no count + 1 wrap
}

LOWBIT_HD_CONSTEXPR BufferSizes SizesOf(const Recipe& r, const GroupGrid& g) {
  BufferSizes b;
  b.code_bytes = PackedBytes(r.packing, g.rows * g.cols);
  if (r.family() == Family::kScaled) {
    b.scales = g.Count();
  } else {
    b.scale_codes = g.Count();
  }
  if (r.zero_point == ZeroPoint::kInteger) b.zero_points = g.Count();
  if (r.tensor_scale != TensorScaleRule::kNone) b.tensor_scales = 1;
  return b;
}

// Element code k into / out of the packed code buffer.
LOWBIT_HD_CONSTEXPR void StoreCode(Packing packing, std::uint8_t* codes, long k, std::uint8_t code) {
  if (packing == Packing::kOnePerByte) {
    codes[k] = code;
    return;
  }
  const bool low = (k % 2 == 0) == (packing == Packing::kNibblesLowFirst);
  std::uint8_t& byte = codes[k / 2];
  byte = low ? static_cast<std::uint8_t>((byte & 0xF0) | (code & 0xF))
             : static_cast<std::uint8_t>((byte & 0x0F) | ((code & 0xF) << 4));
}
LOWBIT_HD_CONSTEXPR std::uint8_t LoadCode(Packing packing, const std::uint8_t* codes, long k) {
  if (packing == Packing::kOnePerByte) return codes[k];
  const bool low = (k % 2 == 0) == (packing == Packing::kNibblesLowFirst);
  return low ? (codes[k / 2] & 0xF) : (codes[k / 2] >> 4);
}

// The tensor scale a recipe's tensor-level rule takes from all of x.
LOWBIT_HD_CONSTEXPR TensorScale TensorScaleOf(const Recipe& r, const float* x, long count) {
  if (r.tensor_scale == TensorScaleRule::kNone) return {};
  float amax = 0.0f;
  for (long k = 0; k < count; ++k) amax = CombineAmax(r.amax_nan, amax, F32Abs(x[k]));
  return ChooseTensorScale(r, amax);
}

// The scale of group `group`, stored into q.
LOWBIT_HD_CONSTEXPR void StoreScale(const Recipe& r, const QuantizedTensor& q, long group, const BlockScale& s) {
  if (r.family() == Family::kScaled) {
    q.scales[group] = s.decode;
  } else {
    q.scale_codes[group] = s.code;
  }
  if (r.zero_point == ZeroPoint::kInteger) q.zero_points[group] = s.zero_point;
}

LOWBIT_HD_CONSTEXPR BlockScale LoadScale(const Recipe& r, const ConstQuantizedTensor& q, long group) {
  const bool scaled = r.family() == Family::kScaled;
  return StoredScale(r, scaled ? 0 : q.scale_codes[group], scaled ? q.scales[group] : 0.0f,
                     r.zero_point == ZeroPoint::kInteger ? q.zero_points[group] : 0);
}

// Dynamic quantization of a row-major [rows, cols] tensor: scales from the
// data. With packed codes an odd last nibble leaves its partner 0.
LOWBIT_HD_CONSTEXPR TensorStatus QuantizeTensor(const Recipe& r, const Layout& layout, const float* x, long rows,
                                                long cols, const QuantizedTensor& q) {
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  const TensorScale t = TensorScaleOf(r, x, rows * cols);
  if (q.tensor_scale != nullptr) *q.tensor_scale = t;
  if (r.packing != Packing::kOnePerByte) {
    for (long b = 0; b < PackedBytes(r.packing, rows * cols); ++b) q.codes[b] = 0;
  }
  for (long group = 0; group < g.Count(); ++group) {
    GroupStats stats = EmptyStats();
    ForEachInGroup(g, group, [&](long k) { stats = Accumulate(r, stats, x[k]); });
    const BlockScale s = ChooseScale(r, stats, t);
    StoreScale(r, q, group, s);
    ForEachInGroup(g, group, [&](long k) { StoreCode(r.packing, q.codes, k, EncodeElement(r, s, x[k])); });
  }
  return TensorStatus::kOk;
}

// Static quantization with given FP32 scales (calibrated ones, not read
// from x). Only the vLLM FP8 recipes take them: static_scaled_fp8_quant
// (vllm-project/vllm @0794945f csrc/quantization/fp8/common.cu) stores the
// given scale and multiplies by inverted_scale = 1.0f / scale; the per-token
// arithmetic with a given scale divides by it; the KV cache divides by
// k_scale / v_scale (per tensor, or one per head). Other rules derive their
// stored scale and their factor differently (TE stores 1 / factor, torchao
// and GPTQ carry zero points), so they take none.
LOWBIT_HD_CONSTEXPR bool TakesGivenScale(const Recipe& r) {
  return r.scale_rule == ScaleRule::kVllmFp8PerTensor || r.scale_rule == ScaleRule::kVllmFp8PerToken ||
         r.scale_rule == ScaleRule::kVllmFp8KvCache;
}

// The scale of every group under a given stored scale (TakesGivenScale).
LOWBIT_HD_CONSTEXPR BlockScale GivenScale(const Recipe& r, float scale) {
  BlockScale s;
  s.decode = scale;
  s.rule_value = scale;
  s.factor = r.element_step == ElementStep::kMultiply ? 1.0f / scale : scale;
  return s;
}

// Quantizes x with given scales: `count` 1 stores scales[0] for every group
// of the layout; otherwise count must be the number of groups (one scale per
// group, e.g. per KV head), else kBadGroup. kLayoutNotForRecipe for a recipe
// that takes no given scale.
LOWBIT_HD_CONSTEXPR TensorStatus QuantizeTensorWithGivenScales(const Recipe& r, const Layout& layout, const float* x,
                                                               long rows, long cols, const float* scales, long count,
                                                               const QuantizedTensor& q) {
  if (!TakesGivenScale(r)) return TensorStatus::kLayoutNotForRecipe;
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  if (count != 1 && count != g.Count()) return TensorStatus::kBadGroup;
  for (long group = 0; group < g.Count(); ++group) {
    const BlockScale s = GivenScale(r, scales[count == 1 ? 0 : group]);
    StoreScale(r, q, group, s);
    ForEachInGroup(g, group, [&](long k) { StoreCode(r.packing, q.codes, k, EncodeElement(r, s, x[k])); });
  }
  return TensorStatus::kOk;
}

LOWBIT_HD_CONSTEXPR TensorStatus QuantizeTensorWithGivenScale(const Recipe& r, const Layout& layout, const float* x,
                                                              long rows, long cols, float scale,
                                                              const QuantizedTensor& q) {
  return QuantizeTensorWithGivenScales(r, layout, x, rows, cols, &scale, 1, q);
}

// Static quantization: the codes of x under scales already stored in q
// (e.g. from a calibrated range through ChooseScale(r, StatsOfRange(lo, hi))).
// Needs the quantize-side factor, so it takes the BlockScale of each group.
template <typename ScaleOfGroup>
LOWBIT_HD_CONSTEXPR TensorStatus QuantizeWithScales(const Recipe& r, const Layout& layout, const float* x, long rows,
                                                    long cols, ScaleOfGroup&& scale_of_group, std::uint8_t* codes) {
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  for (long group = 0; group < g.Count(); ++group) {
    const BlockScale s = scale_of_group(group);
    ForEachInGroup(g, group, [&](long k) { StoreCode(r.packing, codes, k, EncodeElement(r, s, x[k])); });
  }
  return TensorStatus::kOk;
}

LOWBIT_HD_CONSTEXPR TensorStatus DequantizeTensor(const Recipe& r, const Layout& layout, const ConstQuantizedTensor& q,
                                                  long rows, long cols, float* out) {
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  const TensorScale t = q.tensor_scale != nullptr ? *q.tensor_scale : TensorScale{};
  for (long group = 0; group < g.Count(); ++group) {
    const BlockScale s = LoadScale(r, q, group);
    ForEachInGroup(g, group, [&](long k) { out[k] = DecodeElement(r, s, t, LoadCode(r.packing, q.codes, k)); });
  }
  return TensorStatus::kOk;
}

// Dequantization to FP16 bits (recipes for which DequantizesToF16 holds:
// their kernels compute (q - z) * s in FP16); kLayoutNotForRecipe for any
// other recipe, whose FP16 result no kernel defines.
LOWBIT_HD_CONSTEXPR TensorStatus DequantizeTensorToF16(const Recipe& r, const Layout& layout,
                                                       const ConstQuantizedTensor& q, long rows, long cols,
                                                       std::uint16_t* out) {
  if (!DequantizesToF16(r)) return TensorStatus::kLayoutNotForRecipe;
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  const TensorScale t = q.tensor_scale != nullptr ? *q.tensor_scale : TensorScale{};
  for (long group = 0; group < g.Count(); ++group) {
    const BlockScale s = LoadScale(r, q, group);
    ForEachInGroup(g, group,
                   [&](long k) { out[k] = DecodeElementToF16(r, s, t, LoadCode(r.packing, q.codes, k)); });
  }
  return TensorStatus::kOk;
}

}  // namespace lowbit::recipe
