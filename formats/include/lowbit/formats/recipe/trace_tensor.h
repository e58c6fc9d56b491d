// The model's trace of a tensor (trace.h): the same walk as tensor.h's
// QuantizeTensor, QuantizeWithScales and QuantizeTensorWithGivenScales
// followed by DequantizeTensor, keeping every intermediate value. The three
// scale sources (the data, a calibrated range, given scales) and a caller's
// own scale choice share one loop, TraceTensorWithScales.
#pragma once

#include <cstddef>

#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/recipe/trace.h"

namespace lowbit::recipe {

// The trace of x [rows, cols] with each block's scale from
// choose(stats, tensor_scale, group) (a BlockScale as ChooseScale gives
// one); the elements are encoded by r's element step. The harness's
// diagnosis passes deliberate deviations here (check/src/diagnosis_recipe.cc).
template <typename ChooseBlockScale>
TensorStatus TraceTensorWithScales(const Recipe& r, const Layout& layout, const float* x, long rows, long cols,
                                   ChooseBlockScale&& choose, TraceTensor* out,
                                   TraceScaleSource source = TraceScaleSource::kOther) {
  TraceTensor trace;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &trace.grid);
  if (st != TensorStatus::kOk) return st;
  trace.recipe = r;
  trace.layout = layout;
  trace.scale_source = source;
  trace.tensor_scale = TensorScaleOf(r, x, rows * cols);
  trace.blocks.resize(static_cast<std::size_t>(trace.grid.Count()));
  for (long group = 0; group < trace.grid.Count(); ++group) {
    TraceBlock& block = trace.blocks[static_cast<std::size_t>(group)];
    block.index = group;
    block.stats = EmptyStats();
    ForEachInGroup(trace.grid, group, [&](long k) { block.stats = Accumulate(r, block.stats, x[k]); });
    block.scale = choose(static_cast<const GroupStats&>(block.stats), static_cast<const TensorScale&>(trace.tensor_scale),
                         group);
    // Dequantization sees only what is stored (tensor.h LoadScale), never
    // the quantize-side factor.
    const BlockScale stored = StoredScale(r, block.scale.code, block.scale.decode, block.scale.zero_point);
    ForEachInGroup(trace.grid, group, [&](long k) {
      TraceElement e;
      e.index = k;
      e.input = x[k];
      e.scaled = ScaledValueEncoded(r, block.scale, x[k]);
      e.code = EncodeElement(r, block.scale, x[k]);
      e.decoded = DecodeElement(r, stored, trace.tensor_scale, e.code);
      block.elements.push_back(e);
    });
  }
  *out = static_cast<TraceTensor&&>(trace);
  return TensorStatus::kOk;
}

// Dynamic quantization (QuantizeTensor): each block's scale from its own
// statistics and the tensor scale.
inline TensorStatus TraceTensorOf(const Recipe& r, const Layout& layout, const float* x, long rows, long cols,
                                  TraceTensor* out) {
  return TraceTensorWithScales(
      r, layout, x, rows, cols,
      [&r](const GroupStats& stats, const TensorScale& t, long) { return ChooseScale(r, stats, t); }, out,
      TraceScaleSource::kData);
}

// Static quantization (QuantizeWithScales with ChooseScale of a calibrated
// range): every block's scale from `range` (StatsOfRange(lo, hi)); each
// block's own statistics are still traced.
inline TensorStatus TraceTensorWithRange(const Recipe& r, const Layout& layout, const float* x, long rows, long cols,
                                         const GroupStats& range, TraceTensor* out) {
  return TraceTensorWithScales(
      r, layout, x, rows, cols,
      [&r, &range](const GroupStats&, const TensorScale& t, long) { return ChooseScale(r, range, t); }, out,
      TraceScaleSource::kRange);
}

// Given stored scales (QuantizeTensorWithGivenScales): `count` 1 gives
// scales[0] to every block, otherwise one per block; kBadGroup for another
// count, kLayoutNotForRecipe for a recipe that takes no given scale.
inline TensorStatus TraceTensorWithGivenScales(const Recipe& r, const Layout& layout, const float* x, long rows,
                                               long cols, const float* scales, long count, TraceTensor* out) {
  if (!TakesGivenScale(r)) return TensorStatus::kLayoutNotForRecipe;
  GroupGrid g;
  const TensorStatus st = MakeGroupGrid(r, layout, rows, cols, &g);
  if (st != TensorStatus::kOk) return st;
  if (count != 1 && count != g.Count()) return TensorStatus::kBadGroup;
  return TraceTensorWithScales(
      r, layout, x, rows, cols,
      [&r, scales, count](const GroupStats&, const TensorScale&, long group) {
        return GivenScale(r, scales[count == 1 ? 0 : group]);
      },
      out, TraceScaleSource::kGiven);
}

}  // namespace lowbit::recipe
