// simd.h Quantize and Dequantize: one entry per direction for every recipe
// the SIMD kernels run (simd.h Runs), over the typed buffers of
// recipe/tensor.h. The arguments are checked as every backend checks them
// (registry ValidateRecipeArgs); the family then picks the kernels: the block
// kernels of block_quantize.cc for MX and NVFP4 (over the flattened tensor,
// one code per byte, packed after for 4-bit recipes), the group kernels of
// int_group_quantize.cc for scaled recipes.
#include <cstdint>
#include <string>
#include <vector>

#include "block_entry.h"
#include "int_group_job.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_params.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
namespace {

// The group kernels' grid of a scaled recipe's layout (Runs refuses a
// flattened block for a scaled recipe, recipe/tensor.h LayoutApplies).
block::QuantLayout GroupLayoutOf(const recipe::Layout& l) {
  block::QuantLayout q;
  q.granularity = l.geometry == recipe::Geometry::kPerTensor ? block::Granularity::kPerTensor
                  : l.geometry == recipe::Geometry::kPerRow  ? block::Granularity::kPerRow
                  : l.geometry == recipe::Geometry::kGroup   ? block::Granularity::kPerGroup
                                                             : block::Granularity::kBlock2d;
  q.group = l.size;
  q.block_rows = l.tile_rows;
  return q;
}

recipe::Target TargetOf(const recipe::Recipe& r, const recipe::Layout& layout) {
  recipe::Target t;
  t.kind = recipe::Target::Kind::kRecipe;
  t.recipe = &r;
  t.layout = layout;
  return t;
}

block::NibbleOrder NibbleOrderOf(recipe::Packing p) {
  return p == recipe::Packing::kNibblesHighFirst ? block::NibbleOrder::kHighFirst : block::NibbleOrder::kLowFirst;
}

// The registry's checks of a call (the same messages on every backend), then
// whether the SIMD kernels run the recipe. Ok with *empty for rows or cols 0.
registry::Status Check(registry::RecipeOperation operation, const recipe::Recipe& r, const recipe::Layout& layout,
                       const float* x, std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q,
                       float* out, bool* empty) {
  if (r.name == nullptr || r.profile == nullptr) return registry::Status::Error("simd: a recipe without a name");
  registry::RecipeArgs a;
  a.operation = operation;
  a.target = TargetOf(r, layout);
  a.rows = rows;
  a.cols = cols;
  a.x = x;
  a.q = q;
  a.out = out;
  if (registry::Status s = registry::ValidateRecipeArgs(a); !s.ok) return s;
  if (!Runs(r, layout)) {
    return registry::Status::Error("simd: no kernel for " + recipe::CanonicalName(a.target) +
                                   " (simd.h Runs: its fields ask for what the kernels do not do)");
  }
  *empty = rows == 0 || cols == 0;
  return registry::Status::Ok();
}

registry::Status QuantizeScaled(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                const float* x, std::size_t rows, std::size_t cols,
                                const recipe::QuantizedTensor& q) {
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(TargetOf(r, layout), rows, cols);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(b.sizes.scales));
  const registry::Status s = QuantizeRecipeGroups(target, r, GroupLayoutOf(layout), x, rows, cols, q.codes,
                                                  params.data());
  if (!s.ok) return s;
  for (std::size_t g = 0; g < params.size(); ++g) {
    q.scales[g] = params[g].decode;
    if (q.zero_points != nullptr) q.zero_points[g] = params[g].zero_point;
  }
  return s;
}

registry::Status DequantizeScaled(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                  const recipe::ConstQuantizedTensor& q, std::size_t rows, std::size_t cols,
                                  float* out) {
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(TargetOf(r, layout), rows, cols);
  std::vector<block::QuantParams> params(static_cast<std::size_t>(b.sizes.scales));
  for (std::size_t g = 0; g < params.size(); ++g) {  // dequantize reads decode and the zero point
    params[g].decode = q.scales[g];
    params[g].zero_point = q.zero_points != nullptr ? q.zero_points[g] : 0;
  }
  return DequantizeRecipeGroups(target, r, GroupLayoutOf(layout), q.codes, rows, cols, params.data(), out);
}

}  // namespace

registry::Status Quantize(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                          const float* x, std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q) {
  bool empty = false;
  if (registry::Status s = Check(registry::RecipeOperation::kQuantizeRecipe, r, layout, x, rows, cols, q, nullptr,
                                 &empty);
      !s.ok || empty) {
    return s;
  }
  if (r.family() == recipe::Family::kScaled) return QuantizeScaled(target, r, layout, x, rows, cols, q);
  const std::size_t count = rows * cols;  // ValidateRecipeArgs checked the product
  // The block kernels keep one code per byte; 4-bit recipes pack them after.
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  std::vector<std::uint8_t> unpacked(packed ? count : 0);
  std::uint8_t* codes = packed ? unpacked.data() : q.codes;
  const registry::Status s =
      r.family() == recipe::Family::kNvfp4
          ? detail::QuantizeNvfp4Array(target, r, x, count, codes, q.scale_codes, q.tensor_scale)
          : detail::QuantizeMxArray(target, r, x, count, codes, q.scale_codes);
  if (!s.ok || !packed) return s;
  return PackNibbles(target, NibbleOrderOf(r.packing), codes, count, q.codes);
}

registry::Status Dequantize(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                            const recipe::ConstQuantizedTensor& q, std::size_t rows, std::size_t cols, float* out) {
  bool empty = false;
  const recipe::QuantizedTensor buffers{const_cast<std::uint8_t*>(q.codes), const_cast<std::uint8_t*>(q.scale_codes),
                                        const_cast<float*>(q.scales), const_cast<std::int32_t*>(q.zero_points),
                                        const_cast<recipe::TensorScale*>(q.tensor_scale)};  // checked, not written
  if (registry::Status s = Check(registry::RecipeOperation::kDequantizeRecipe, r, layout, nullptr, rows, cols,
                                 buffers, out, &empty);
      !s.ok || empty) {
    return s;
  }
  if (r.family() == recipe::Family::kScaled) return DequantizeScaled(target, r, layout, q, rows, cols, out);
  const std::size_t count = rows * cols;
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  std::vector<std::uint8_t> unpacked(packed ? count : 0);
  const std::uint8_t* codes = q.codes;
  if (packed) {
    if (registry::Status s = UnpackNibbles(target, NibbleOrderOf(r.packing), q.codes, count, unpacked.data()); !s.ok) {
      return s;
    }
    codes = unpacked.data();
  }
  return r.family() == recipe::Family::kNvfp4
             ? detail::DequantizeNvfp4Array(target, r, *q.tensor_scale, codes, q.scale_codes, count, out)
             : detail::DequantizeMxArray(target, r, codes, q.scale_codes, count, out);
}

}  // namespace lowbit::simd
