// simd.h Quantize and Dequantize: one entry per direction for every recipe
// the SIMD kernels run (simd.h Runs), over the typed buffers of
// recipe/tensor.h. The arguments are checked as every backend checks them
// (registry ValidateRecipeArgs); the family then picks the kernels: the block
// kernels of block_quantize.cc for MX and NVFP4 (over the flattened tensor;
// NVFP4's codes packed by its kernel, MXFP4's one per byte and packed a
// chunk at a time, PackChunkElements), the group kernels of
// int_group_quantize.cc for scaled recipes.
#include <cstdint>
#include <string>
#include <vector>

#include "block_entry.h"
#include "int_group_job.h"
#include "lowbit/formats/block/int_quant_layout.h"
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

// Elements per chunk of a 4-bit block recipe: whole blocks, an even count
// (so every chunk but the last starts on a byte of the packed codes), and
// about 32 KiB of one-byte codes, which stay in cache between the kernel
// that writes them and the packing that reads them.
std::size_t PackChunkElements(std::size_t block) {
  constexpr std::size_t kTargetBytes = std::size_t{32} << 10;
  const std::size_t pairs = kTargetBytes / (2 * block);
  return 2 * block * (pairs < 1 ? 1 : pairs);
}

registry::Status QuantizeScaled(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                const float* x, std::size_t rows, std::size_t cols,
                                const recipe::QuantizedTensor& q) {
  return QuantizeRecipeGroups(target, r, GroupLayoutOf(layout), x, rows, cols, q.codes, q.scales, q.zero_points);
}

registry::Status DequantizeScaled(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                  const recipe::ConstQuantizedTensor& q, std::size_t rows, std::size_t cols,
                                  float* out) {
  return DequantizeRecipeGroups(target, r, GroupLayoutOf(layout), q.codes, rows, cols, q.scales, q.zero_points, out);
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
  const bool nvfp4 = r.family() == recipe::Family::kNvfp4;
  if (r.packing == recipe::Packing::kOnePerByte) {
    return nvfp4 ? detail::QuantizeNvfp4Array(target, r, x, count, q.codes, q.scale_codes, q.tensor_scale)
                 : detail::QuantizeMxArray(target, r, x, count, q.codes, q.scale_codes);
  }
  // NVFP4 packs its codes in the kernel, a group of blocks at a time, after
  // the tensor scale of the whole tensor (block_entry.h
  // QuantizeNvfp4PackedArray).
  if (nvfp4 && r.packing == recipe::Packing::kNibblesLowFirst) {
    return detail::QuantizeNvfp4PackedArray(target, r, x, count, q.codes, q.scale_codes, q.tensor_scale);
  }
  // The MX block kernels write one code per byte: a 4-bit recipe is quantized
  // a chunk of whole blocks at a time into a buffer that stays in cache and
  // packed from there, so the codes never cross memory unpacked. NVFP4's
  // tensor scale is chosen over the whole tensor first.
  recipe::TensorScale tensor_scale;
  if (nvfp4) {
    if (registry::Status s = detail::Nvfp4TensorScaleOfArray(target, r, x, count, &tensor_scale); !s.ok) return s;
  }
  const std::size_t block = static_cast<std::size_t>(r.layout.size);
  const std::size_t chunk = PackChunkElements(block);
  std::vector<std::uint8_t> unpacked(count < chunk ? count : chunk);
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t n = count - first < chunk ? count - first : chunk;
    const registry::Status s =
        nvfp4 ? detail::QuantizeNvfp4Array(target, r, x + first, n, unpacked.data(), q.scale_codes + first / block,
                                           q.tensor_scale, &tensor_scale)
              : detail::QuantizeMxArray(target, r, x + first, n, unpacked.data(), q.scale_codes + first / block);
    if (!s.ok) return s;
    if (registry::Status p = PackNibbles(target, NibbleOrderOf(r.packing), unpacked.data(), n, q.codes + first / 2);
        !p.ok) {
      return p;
    }
  }
  return registry::Status::Ok();
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
  const bool nvfp4 = r.family() == recipe::Family::kNvfp4;
  if (r.packing == recipe::Packing::kOnePerByte) {
    return nvfp4 ? detail::DequantizeNvfp4Array(target, r, *q.tensor_scale, q.codes, q.scale_codes, count, out)
                 : detail::DequantizeMxArray(target, r, q.codes, q.scale_codes, count, out);
  }
  // 4-bit codes are unpacked a chunk of whole blocks at a time (as Quantize).
  const std::size_t block = static_cast<std::size_t>(r.layout.size);
  const std::size_t chunk = PackChunkElements(block);
  std::vector<std::uint8_t> unpacked(count < chunk ? count : chunk);
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t n = count - first < chunk ? count - first : chunk;
    if (registry::Status s = UnpackNibbles(target, NibbleOrderOf(r.packing), q.codes + first / 2, n, unpacked.data());
        !s.ok) {
      return s;
    }
    const registry::Status s =
        nvfp4 ? detail::DequantizeNvfp4Array(target, r, *q.tensor_scale, unpacked.data(), q.scale_codes + first / block,
                                             n, out + first)
              : detail::DequantizeMxArray(target, r, unpacked.data(), q.scale_codes + first / block, n, out + first);
    if (!s.ok) return s;
  }
  return registry::Status::Ok();
}

}  // namespace lowbit::simd
