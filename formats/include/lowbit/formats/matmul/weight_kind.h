// A quantized weight is a recipe target plus a packing (docs/matmul.md
// "Weight kinds: a recipe target plus a packing"):
//  - the recipe target is what a catalog recipe produces — its element
//    format, scale format, tensor scale and zero point, and the layout of
//    its scales — read from recipe::Recipe's fields (recipe/recipe.h),
//    whichever profile chose the scales: every MX profile over E2M1 gives
//    the same weight, "mxfp4";
//  - the packing is where those codes, scales and zero points sit in memory
//    (lowbit's QuantizedTensor buffers, GPTQ's or AWQ's 32-bit words) and the
//    type the scales are stored in.
// So weights.h's WeightFormat is not a second vocabulary to keep in step
// with the catalog: WeightFormatOfRecipe reads it off a recipe, and every
// kind below names a catalog recipe format and a layout in the recipe
// grammar (recipe/names.h: FORMAT[/LAYOUT]), with "+PACKING" where the
// buffers are a checkpoint's. The names matmul rows had before ("mxfp8-e4m3",
// "int4-g128", "uint4-gptq-fp16", "e4m3-channel") are accepted through the
// one alias table, kWeightKindAliases. Spec-level data, constexpr.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::matmul {

namespace weight_kind_detail {
constexpr bool SameFormat(const FormatSpec& a, const FormatSpec& b) {
  return std::string_view(a.name) == std::string_view(b.name);
}
}  // namespace weight_kind_detail

// The weight format a recipe's output is, with its scales laid out as
// `layout`; false when no matrix-product weight is (a per-tensor INT8
// recipe, MXFP6, E5M2 blocks: no packed kind reads them yet).
constexpr bool WeightFormatOfRecipe(const recipe::Recipe& r, const recipe::Layout& layout, WeightFormat* out) {
  using weight_kind_detail::SameFormat;
  const bool blocks = layout.geometry == recipe::Geometry::kBlock1d || layout.geometry == recipe::Geometry::kGroup;
  switch (r.family()) {
    case recipe::Family::kNvfp4:
      if (!SameFormat(r.element, kE2m1) || !SameFormat(r.scale_format, kUe4m3) || !blocks) return false;
      *out = WeightFormat::kNvfp4;
      return true;
    case recipe::Family::kMx:
      if (!SameFormat(r.scale_format, kE8m0) || !blocks) return false;
      if (SameFormat(r.element, kE2m1)) {
        *out = WeightFormat::kMxfp4;
        return true;
      }
      if (SameFormat(r.element, kE4m3)) {
        *out = WeightFormat::kMxfp8E4m3;
        return true;
      }
      return false;
    case recipe::Family::kScaled:
      if (SameFormat(r.element, kInt4) && layout.geometry == recipe::Geometry::kGroup) {
        *out = WeightFormat::kInt4;
        return true;
      }
      if (SameFormat(r.element, kUint4) && layout.geometry == recipe::Geometry::kGroup) {
        *out = WeightFormat::kUint4;
        return true;
      }
      if (SameFormat(r.element, kE4m3) && layout.geometry == recipe::Geometry::kPerRow) {
        *out = WeightFormat::kFp8E4m3PerChannel;
        return true;
      }
      return false;
  }
  return false;
}

// The first catalog recipe with this format name ("nvfp4", "mxfp8_e4m3",
// "uint4"): every profile of a format gives the same WeightFormat
// (proptests/matmul/weight_kind_test.cc checks it for each kind), so the
// first one speaks for all; what differs between profiles (FP16 or FP32
// scales, a zero point or none) is the packing's scale_storage and the
// view's zero points.
constexpr const recipe::Recipe* FirstRecipeOfFormat(std::string_view format) {
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (format == r.name) return &r;
  }
  return nullptr;
}

struct WeightKind {
  const char* name;         // canonical: FORMAT[/LAYOUT][+PACKING]
  const char* format;       // the catalog recipe format whose output this is
  recipe::Layout layout;    // the recipe layout of the scales (the block or group the harness uses)
  WeightPacking packing;
  ScaleType scale_storage;  // how the scales are stored (the recipe's own, or a checkpoint's FP16 / BF16)
  const char* source;       // what produces these buffers
};

inline constexpr WeightKind kWeightKinds[] = {
    {"nvfp4", "nvfp4", {recipe::Geometry::kBlock1d, recipe::kNvfp4BlockSize, 0}, WeightPacking::kLowbit,
     ScaleType::kUe4m3, "lowbit.quantize(W, 'nvfp4:*'): E2M1 nibbles low first, UE4M3 per 16, FP32 tensor scale"},
    {"mxfp4", "mxfp4", {recipe::Geometry::kBlock1d, recipe::kMxBlockSize, 0}, WeightPacking::kLowbit,
     ScaleType::kE8m0, "lowbit.quantize(W, 'mxfp4:*'): E2M1 nibbles low first, E8M0 per 32"},
    {"mxfp8_e4m3", "mxfp8_e4m3", {recipe::Geometry::kBlock1d, recipe::kMxBlockSize, 0}, WeightPacking::kLowbit,
     ScaleType::kE8m0, "lowbit.quantize(W, 'mxfp8_e4m3:*'): E4M3 bytes, E8M0 per 32"},
    {"int4/g128", "int4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kLowbit, ScaleType::kFp32,
     "lowbit.quantize(W, 'int4:*/g128'): nibbles low first, FP32 scales, no zero points"},
    {"uint4/g128", "uint4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kLowbit, ScaleType::kFp32,
     "lowbit.quantize(W, 'uint4:*/g128'): nibbles low first, FP32 scales, int32 zero points"},
    {"uint4/g128+gptq-fp16", "uint4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kGptq,
     ScaleType::kFp16, "GPTQ qweight / qzeros (lowbit pack gptq-qweight, gptq-qzeros), FP16 scales [K/g][N]"},
    {"uint4/g128+gptq-bf16", "uint4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kGptq,
     ScaleType::kBf16, "GPTQ qweight / qzeros, BF16 scales [K/g][N]"},
    {"uint4/g128+awq-fp16", "uint4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kAwq,
     ScaleType::kFp16, "AWQ qweight / qzeros (lowbit pack awq), FP16 scales [K/g][N]"},
    {"uint4/g128+awq-bf16", "uint4", {recipe::Geometry::kGroup, kDefaultIntGroup, 0}, WeightPacking::kAwq,
     ScaleType::kBf16, "AWQ qweight / qzeros, BF16 scales [K/g][N]"},
    {"e4m3/row", "e4m3", {recipe::Geometry::kPerRow, 0, 0}, WeightPacking::kLowbit, ScaleType::kFp32,
     "lowbit.quantize(W, 'e4m3:*/row'): E4M3 bytes, FP32 scale per output channel"},
};

// The weight format of a kind, from its recipe target.
constexpr WeightFormat FormatOf(const WeightKind& kind) {
  WeightFormat f = WeightFormat::kNvfp4;
  const recipe::Recipe* r = FirstRecipeOfFormat(kind.format);
  if (r != nullptr) WeightFormatOfRecipe(*r, kind.layout, &f);
  return f;
}

// The block (or group) size of a kind, from its layout (0: per row).
constexpr int BlockOf(const WeightKind& kind) { return kind.layout.size; }

// The lowbit-packed kind a recipe's output is (a lowbit.quantize result fed
// to a matmul row unchanged), its scales laid out as `layout`: nullptr and
// *out set, or why not in one line, to follow the recipe's name and layout.
// The scale geometry of the view follows from `layout` (1-D blocks or groups
// along K, or one scale per row), its block from layout.size.
constexpr const char* LowbitWeightKindOf(const recipe::Recipe& r, const recipe::Layout& layout,
                                         const WeightKind** out) {
  WeightFormat f = WeightFormat::kNvfp4;
  if (WeightFormatOfRecipe(r, layout, &f)) {
    for (const WeightKind& k : kWeightKinds) {
      if (k.packing == WeightPacking::kLowbit && FormatOf(k) == f) {
        *out = &k;
        return nullptr;
      }
    }
    // Not reached: proptests/matmul/weight_kind_test.cc finds a kind for every
    // recipe of every lowbit-packed kind's format.
    return "its weight format has no lowbit-packed kind";
  }
  // The layouts that would make it one.
  const auto takes = [&r](recipe::Geometry g) {
    WeightFormat unused = WeightFormat::kNvfp4;
    return WeightFormatOfRecipe(r, recipe::Layout{g, 1, 0}, &unused);
  };
  const bool blocks = takes(recipe::Geometry::kBlock1d), groups = takes(recipe::Geometry::kGroup);
  if (blocks && groups) return "its matmul weights take 1-D blocks (its default layout) or groups along K ('gN')";
  if (groups) return "integer weights take groups along K (layout 'gN', as 'g128')";
  if (takes(recipe::Geometry::kPerRow)) return "its matmul weights take one scale per output channel (layout 'row')";
  return "no matmul weight kind reads its output";
}

// Where a lowbit-packed view's scales sit for a recipe layout (weights.h
// ScaleGeometry): 1-D blocks of the flattened [N, K] (the MX / NVFP4
// default), groups along each row ("/gN"), one per row ("/row").
constexpr ScaleGeometry ScaleGeometryOf(const recipe::Layout& layout) {
  switch (layout.geometry) {
    case recipe::Geometry::kGroup: return ScaleGeometry::kRowGroups;
    case recipe::Geometry::kPerRow: return ScaleGeometry::kPerRow;
    default: return ScaleGeometry::kFlatBlocks;
  }
}

// The one alias table: names users have typed for these kinds.
struct WeightKindAlias {
  const char* alias;
  const char* name;
};
inline constexpr WeightKindAlias kWeightKindAliases[] = {
    // The matmul rows' names before the weights took the recipe grammar.
    {"mxfp8-e4m3", "mxfp8_e4m3"},
    {"int4-g128", "int4/g128"},
    {"uint4-g128", "uint4/g128"},
    {"uint4-gptq-fp16", "uint4/g128+gptq-fp16"},
    {"uint4-gptq-bf16", "uint4/g128+gptq-bf16"},
    {"uint4-awq-fp16", "uint4/g128+awq-fp16"},
    {"uint4-awq-bf16", "uint4/g128+awq-bf16"},
    {"e4m3-channel", "e4m3/row"},
    // The recipe grammar's own spellings of the same targets.
    {"mxfp8", "mxfp8_e4m3"},
    {"e4m3/channel", "e4m3/row"},
};

// The kind a user's name means (canonical or alias), or nullptr.
constexpr const WeightKind* FindWeightKind(std::string_view name) {
  for (const WeightKindAlias& a : kWeightKindAliases) {
    if (name == a.alias) {
      name = a.name;
      break;
    }
  }
  for (const WeightKind& k : kWeightKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

}  // namespace lowbit::matmul
