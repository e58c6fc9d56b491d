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
//
// VectorGptqScale (below) does the same for GPTQ's rules from each group's
// min and max (int_group_job.h VectorMinMaxScaleRule), on groups without
// NaN or Inf.
// proptests/backends/simd_int_group_scale_test.cc compares it with
// recipe::ChooseScale on every such FP32 amax for every catalog recipe with
// one of these rules (LOWBIT_TEST_LEVEL=full; a boundary-biased sample at
// ci and smoke), proves the symmetric rule's min / max form equal to its
// amax form on boundary-biased groups, and VectorGptqScale equal to the
// model on boundary-biased minima and maxima.

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

// GPTQ's scale and zero point (recipe/scaled_scale.h ChooseScaledScale,
// kGptqSymmetric / kGptqAsymmetric) of groups without NaN or Inf whose
// minima and maxima are `min` and `max`, lane-wise in the model's order:
// xmin = min(min, 0), xmax = max(max, 0); symmetric: xmax = max(|xmin|,
// xmax), xmin = -xmax where xmin < 0; both zero: -1 and +1; scale = (xmax -
// xmin) / qmax; asymmetric zero point round_half_even(-xmin / scale), 0
// where that is not finite (a scale underflowing to 0); symmetric (qmax +
// 1) / 2. The sign of a zero min or max changes none of these.
HWY_INLINE void VectorGptqScale(DF32 df, const recipe::Recipe& r, hn::Vec<DF32> min, hn::Vec<DF32> max,
                                hn::Vec<DF32>* decode, VI* zero_point) {
  const D32 d;
  const DI32 di;
  const auto zero = hn::Zero(df);
  auto xmin = hn::Min(min, zero);
  auto xmax = hn::Max(max, zero);
  const bool symmetric = r.scale_rule == recipe::ScaleRule::kGptqSymmetric;
  if (symmetric) {
    xmax = hn::Max(hn::Abs(xmin), xmax);
    xmin = hn::IfThenElse(hn::Lt(xmin, zero), hn::Neg(xmax), xmin);
  }
  const auto all_zero = hn::And(hn::Eq(xmin, zero), hn::Eq(xmax, zero));
  xmin = hn::IfThenElse(all_zero, hn::Set(df, -1.0f), xmin);
  xmax = hn::IfThenElse(all_zero, hn::Set(df, 1.0f), xmax);
  const auto scale = hn::Div(hn::Sub(xmax, xmin), hn::Set(df, static_cast<float>(r.qmax)));
  *decode = scale;
  if (symmetric) {
    *zero_point = hn::Set(di, (r.qmax + 1) / 2);
    return;
  }
  const auto z = hn::Div(hn::Neg(xmin), scale);
  const auto finite = hn::Lt(hn::And(hn::BitCast(d, z), hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
  *zero_point = hn::IfThenElseZero(hn::RebindMask(di, finite),
                                   hn::ConvertTo(di, hn::Round(hn::IfThenElseZero(hn::RebindMask(df, finite), z))));
}

// VectorGptqScale over arrays of minima and maxima (the test hook
// simd/block_scale.h MinMaxGroupScalesOnTarget): full vectors, then the
// rest through one padded vector.
HWY_NOINLINE void MinMaxGroupScalesArray(const MinMaxGroupScaleArrayJob& job) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const recipe::Recipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  hn::Vec<DF32> decode;
  VI zero_point;
  std::size_t i = 0;
  for (; i + lanes <= job.count; i += lanes) {
    VectorGptqScale(df, r, hn::BitCast(df, hn::LoadU(d, job.min + i)), hn::BitCast(df, hn::LoadU(d, job.max + i)),
                    &decode, &zero_point);
    hn::StoreU(hn::BitCast(d, decode), d, job.decodes + i);
    hn::StoreU(hn::BitCast(d, decode), d, job.factors + i);  // GPTQ divides by the scale itself
    hn::StoreU(zero_point, di, job.zero_points + i);
  }
  if (i < job.count) {
    HWY_ALIGN std::uint32_t mins[hn::MaxLanes(d)] = {};
    HWY_ALIGN std::uint32_t maxs[hn::MaxLanes(d)] = {};
    HWY_ALIGN std::uint32_t decodes[hn::MaxLanes(d)] = {};
    HWY_ALIGN std::int32_t zero_points[hn::MaxLanes(d)] = {};
    for (std::size_t k = i; k < job.count; ++k) {
      mins[k - i] = job.min[k];
      maxs[k - i] = job.max[k];
    }
    VectorGptqScale(df, r, hn::BitCast(df, hn::Load(d, mins)), hn::BitCast(df, hn::Load(d, maxs)), &decode,
                    &zero_point);
    hn::Store(hn::BitCast(d, decode), d, decodes);
    hn::Store(zero_point, di, zero_points);
    for (std::size_t k = i; k < job.count; ++k) {
      job.decodes[k] = decodes[k - i];
      job.factors[k] = decodes[k - i];
      job.zero_points[k] = zero_points[k - i];
    }
  }
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
