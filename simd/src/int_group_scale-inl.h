// The scale of Lanes integer groups at once from a vector of their amaxes: a
// named vector alternative to recipe/scaled_scale.h ChooseScaledScale for
// the rules int_group_job.h VectorIntScaleRule lists, one lane per group, so
// that the group quantizers pick the scales of a batch in a few vector
// instructions instead of one scalar model call per group.
//
//   kAoSymmetric         scale = amax / ((qmax - qmin) / 2) (or amax *
//                        fp32(1 / that) where the recipe divides by a
//                        scalar as a reciprocal), floored to eps; factor =
//                        1 / scale. The model reads min and max: max(-min(
//                        min, 0), max(max, 0)), which for a group without
//                        NaN is its amax (the sign of a zero amax is
//                        floored away).
//   kAmaxOverQmax        scale = amax / qmax, 0 -> 1; factor = scale.
//   kAmaxOverQmaxFloored scale = max(amax, eps) / qmax; factor = scale.
//
// Every constant comes from the recipe (qmin, qmax, eps,
// scalar_divisor_as_reciprocal); the zero point is the model's own (a
// constant of the rule). The domain is every amax without NaN, +0 to +Inf:
// a group holding a NaN takes the model's ChooseScale.
// proptests/backends/simd_int_group_scale_test.cc compares it with
// recipe::ChooseScale on every such FP32 amax for every catalog recipe with
// one of these rules (LOWBIT_TEST_LEVEL=full; a boundary-biased sample at
// ci and smoke), and proves the symmetric rule's min / max form equal to its
// amax form on boundary-biased groups.

#if defined(LOWBIT_SIMD_INT_GROUP_SCALE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_INT_GROUP_SCALE_INL_H_
#undef LOWBIT_SIMD_INT_GROUP_SCALE_INL_H_
#else
#define LOWBIT_SIMD_INT_GROUP_SCALE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "convert-inl.h"
#include "hwy/highway.h"
#include "int_group_job.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The stored scales (BlockScale decode) and element factors of groups whose
// amaxes are `amax` (FP32, +0 to +Inf, no NaN), for a recipe with
// VectorIntScaleRule.
HWY_INLINE void VectorIntGroupScale(DF32 df, const recipe::Recipe& r, hn::Vec<DF32> amax, hn::Vec<DF32>* decode,
                                    hn::Vec<DF32>* factor) {
  const float qmin = static_cast<float>(r.qmin);
  const float qmax = static_cast<float>(r.qmax);
  const auto eps = hn::Set(df, r.eps);
  if (r.scale_rule == recipe::ScaleRule::kAoSymmetric) {
    const float half_range = (qmax - qmin) / 2.0f;
    auto scale = r.scalar_divisor_as_reciprocal ? hn::Mul(amax, hn::Set(df, 1.0f / half_range))
                                                : hn::Div(amax, hn::Set(df, half_range));
    scale = hn::IfThenElse(hn::Lt(scale, eps), eps, scale);
    *decode = scale;
    *factor = hn::Div(hn::Set(df, 1.0f), scale);
    return;
  }
  if (r.scale_rule == recipe::ScaleRule::kAmaxOverQmaxFloored) amax = hn::IfThenElse(hn::Lt(amax, eps), eps, amax);
  auto scale = hn::Div(amax, hn::Set(df, qmax));
  if (r.scale_rule == recipe::ScaleRule::kAmaxOverQmax) {
    scale = hn::IfThenElse(hn::Eq(scale, hn::Zero(df)), hn::Set(df, 1.0f), scale);
  }
  *decode = scale;
  *factor = scale;
}

// The zero point of every group under a VectorIntScaleRule recipe: the
// model's, which these rules fix (symmetric: the middle of [qmin, qmax]).
inline std::int32_t VectorIntGroupZeroPoint(const recipe::Recipe& r) {
  recipe::GroupStats stats;
  stats.min = -1.0f;
  stats.max = 1.0f;
  stats.amax = 1.0f;
  return recipe::ChooseScale(r, stats).zero_point;
}

// VectorIntGroupScale over an array of amax bit patterns (the test hook
// simd/block_scale.h IntGroupScalesOnTarget): full vectors, then the rest
// through one padded vector.
HWY_NOINLINE void IntGroupScalesArray(const IntGroupScaleArrayJob& job) {
  const D32 d;
  const DF32 df;
  const recipe::Recipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  const std::int32_t zero_point = VectorIntGroupZeroPoint(r);
  hn::Vec<DF32> decode, factor;
  std::size_t i = 0;
  for (; i + lanes <= job.count; i += lanes) {
    VectorIntGroupScale(df, r, hn::BitCast(df, hn::LoadU(d, job.amax + i)), &decode, &factor);
    hn::StoreU(hn::BitCast(d, decode), d, job.decodes + i);
    hn::StoreU(hn::BitCast(d, factor), d, job.factors + i);
  }
  if (i < job.count) {
    HWY_ALIGN std::uint32_t in[hn::MaxLanes(d)] = {};
    HWY_ALIGN std::uint32_t decodes[hn::MaxLanes(d)] = {};
    HWY_ALIGN std::uint32_t factors[hn::MaxLanes(d)] = {};
    for (std::size_t k = i; k < job.count; ++k) in[k - i] = job.amax[k];
    VectorIntGroupScale(df, r, hn::BitCast(df, hn::Load(d, in)), &decode, &factor);
    hn::Store(hn::BitCast(d, decode), d, decodes);
    hn::Store(hn::BitCast(d, factor), d, factors);
    for (std::size_t k = i; k < job.count; ++k) {
      job.decodes[k] = decodes[k - i];
      job.factors[k] = factors[k - i];
    }
  }
  for (std::size_t k = 0; k < job.count; ++k) job.zero_points[k] = zero_point;
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_INT_GROUP_SCALE_INL_H_
