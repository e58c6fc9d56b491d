// Layout policies of the CUDA kernels, CUTLASS style: a policy type is a
// template parameter of a kernel and its launcher, so a layout is chosen at
// compile time per call site and no process-wide setting exists. The public
// entry points use CurrentLayout; bench/cuda/bench_cuda.cu names the others
// through layout_variants.h for its same-run before/after rows, and the GPU
// tests check every policy against the model.
//
// Each member selects one measured choice (bench/RESULTS-archive-2026.md "CUDA", H200):
//   kFlat             element maps and the NVFP4 dequantization in the flat
//                     layout (map_kernel.cuh FlatMapKernel: no grid-stride
//                     loop, 4 coalesced 16-byte units in flight per thread)
//                     instead of the grid-stride MapKernel / one thread per
//                     16-element block;
//   kPlainAccess      the flat layouts with ordinary loads and stores instead
//                     of the streaming hints (ptx.cuh LdNcNoAllocate, __stcs);
//   kFp4LaneGroups    NVFP4 / MXFP4 of BF16 input with the lanes of one block
//                     cooperating (fp4_lanes.cuh) instead of one thread per
//                     block;
//   kOneAdditionE2m1  the one-addition E2M1 encoder instead of the two-path
//                     one (formats/include/lowbit/formats/alternatives/e2m1.h);
//   kRegisterRows     per-token FP8 with 128 threads per row when the row fits
//                     their registers instead of always 256;
//   kTableMaps        cuda-sw maps of sources of at most 16 bits through a
//                     table of the model's results on every code
//                     (table_map.cuh), and FP32 encodes into at most 8 bits
//                     through a table of the model's thresholds
//                     (threshold_map.cuh), instead of the model per element;
//   kHalfFloatAlternatives  cuda-sw FP32 -> BF16 / FP16 and BF16 / FP16 ->
//                     FP32 maps through the 32-bit integer alternatives of
//                     formats/include/lowbit/formats/alternatives/f32_f16_bf16.h
//                     (element_ops.cuh HalfFloatAlternative) under the
//                     options they are proven for, instead of the model per
//                     element (the 16-bit -> FP32 table, 256 KB, does not fit
//                     a block's shared memory, so kTableMaps leaves those
//                     per element too).
#pragma once

#include <utility>

#include "layout_variants.h"

namespace lowbit::cuda::detail {

struct CurrentLayout {
  static constexpr bool kFlat = true;
  static constexpr bool kPlainAccess = true;
  static constexpr bool kFp4LaneGroups = true;
  static constexpr bool kOneAdditionE2m1 = true;
  static constexpr bool kRegisterRows = true;
  static constexpr bool kTableMaps = true;
  static constexpr bool kHalfFloatAlternatives = true;
};

// What CurrentLayout replaced ("before: " rows of the benchmark).
struct ReplacedLayout {
  static constexpr bool kFlat = false;
  static constexpr bool kPlainAccess = true;  // no flat layout, no hints either
  static constexpr bool kFp4LaneGroups = false;
  static constexpr bool kOneAdditionE2m1 = false;
  static constexpr bool kRegisterRows = false;
  static constexpr bool kTableMaps = false;
  static constexpr bool kHalfFloatAlternatives = false;
};

// CurrentLayout with the streaming load / store hints ("hints: " rows).
struct StreamingHintsLayout : CurrentLayout {
  static constexpr bool kPlainAccess = false;
};

// Calls f(Policy{}) with the policy `variant` names; returns what f returns.
template <typename F>
decltype(auto) WithLayout(LayoutVariant variant, F&& f) {
  switch (variant) {
    case LayoutVariant::kReplaced: return std::forward<F>(f)(ReplacedLayout{});
    case LayoutVariant::kStreamingHints: return std::forward<F>(f)(StreamingHintsLayout{});
    case LayoutVariant::kCurrent: break;
  }
  return std::forward<F>(f)(CurrentLayout{});
}

}  // namespace lowbit::cuda::detail
