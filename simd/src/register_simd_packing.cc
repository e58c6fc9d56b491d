// Packing rows of the SIMD kernels (registry packing_entry.h): every layout
// of formats/block/packing.h, pack and unpack, one row per
// (layout, direction, compiled Highway target), backend "simd:<TARGET>". A
// target the CPU lacks is registered but not available (shown as skipped).
// Each row starts with the registry's argument checks, so a bad call gets the
// same message from every backend; the kernels (simd.h) then run on the
// typed buffers.
#include <cstdint>
#include <string>

#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"
#include "packing_job.h"

namespace lowbit::simd {
namespace {

registry::Status RunOnTarget(std::int64_t target, const registry::PackingArgs& a) {
  if (registry::Status s = registry::ValidatePackingArgs(a); !s.ok) return s;
  const std::size_t codes = a.rows * a.cols;
  if (codes == 0) return registry::Status::Ok();
  const bool pack = a.direction == registry::PackDirection::kPack;
  switch (a.layout) {
    case registry::PackingLayout::kNibblesLowFirst:
    case registry::PackingLayout::kNibblesHighFirst: {
      const block::NibbleOrder order = a.layout == registry::PackingLayout::kNibblesHighFirst
                                           ? block::NibbleOrder::kHighFirst
                                           : block::NibbleOrder::kLowFirst;
      return pack ? PackNibbles(target, order, a.codes, codes, a.packed_bytes)
                  : UnpackNibbles(target, order, a.in_bytes, codes, a.codes_out);
    }
    case registry::PackingLayout::kGptqQweight:
      return pack ? PackGptqQweight(target, a.codes, a.rows, a.cols, a.packed_words)
                  : UnpackGptqQweight(target, a.in_words, a.rows, a.cols, a.codes_out);
    case registry::PackingLayout::kGptqQzeros:
      return pack ? PackGptqQzeros(target, a.codes, a.rows, a.cols, a.packed_words)
                  : UnpackGptqQzeros(target, a.in_words, a.rows, a.cols, a.codes_out);
    case registry::PackingLayout::kAwq:
      return pack ? PackAwq(target, a.codes, a.rows, a.cols, a.packed_words)
                  : UnpackAwq(target, a.in_words, a.rows, a.cols, a.codes_out);
    case registry::PackingLayout::kTinygemmInt4packK2:
    case registry::PackingLayout::kTinygemmInt4packK4:
    case registry::PackingLayout::kTinygemmInt4packK8:
    case registry::PackingLayout::kTorchCpuInt4packAvx512:
    case registry::PackingLayout::kTorchCpuInt4packAvx2:
    case registry::PackingLayout::kTorchCpuInt4packDefault:
    case registry::PackingLayout::kMarlin:
    case registry::PackingLayout::kSwizzledScales:
      return RunLayoutPacking(target, a);
  }
  return registry::Status::Error("simd: unknown packing layout");  // ValidatePackingArgs rejects it first
}

}  // namespace

void RegisterSimdPacking(registry::Registry& registry) {
  for (const std::int64_t target : CompiledTargets()) {
    for (registry::PackingLayout layout : registry::kAllPackingLayouts) {
      for (registry::PackDirection direction : registry::kAllPackDirections) {
        registry.AddPacking(registry::PackingEntry{
            layout, direction, std::string("simd:") + TargetName(target),
            [target] { return TargetAvailable(target); },
            [target](const registry::PackingArgs& a) { return RunOnTarget(target, a); }});
      }
    }
  }
}

}  // namespace lowbit::simd
