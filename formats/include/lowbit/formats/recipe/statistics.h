// Step 1 of a recipe (steps.h): the statistics of a block or group (min,
// max, amax by the recipe's NaN rule) and how partial statistics combine.
#pragma once

#include "lowbit/formats/config.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

// min / max as torch.amin / torch.amax (NaN wins); amax = max |x| by the
// recipe's NaN rule, starting from +0 (TE's kernels do), so an empty or
// all-NaN group under AmaxNan::kIgnore gives 0. Exact: no rounding.
struct GroupStats {
  float min = 0;
  float max = 0;
  float amax = 0;
};

// The identity of Accumulate: min +Inf, max -Inf, amax +0.
LOWBIT_HD_CONSTEXPR GroupStats EmptyStats() {
  GroupStats s;
  s.min = F32FromBits(0x7F800000u);
  s.max = F32FromBits(0xFF800000u);
  s.amax = 0.0f;
  return s;
}

LOWBIT_HD_CONSTEXPR float CombineAmax(AmaxNan rule, float a, float b) {
  return rule == AmaxNan::kIgnore ? MaxIgnoringNan(a, b) : MaxPropagatingNan(a, b);
}

// The amax field of Accumulate / Combine alone; min and max stay as they
// were. Accumulate and Combine take their amax from these, so a kernel whose
// recipe's scale reads amax alone (ScaleReadsOnlyAmax, after ChooseScale)
// and keeps only this field gets their amax bit for bit, NaN rule and order
// included.
LOWBIT_HD_CONSTEXPR GroupStats AccumulateAmaxOnly(const Recipe& r, GroupStats s, float x) {
  s.amax = CombineAmax(r.amax_nan, s.amax, F32Abs(x));
  return s;
}
LOWBIT_HD_CONSTEXPR GroupStats CombineAmaxOnly(const Recipe& r, GroupStats a, const GroupStats& b) {
  a.amax = CombineAmax(r.amax_nan, a.amax, b.amax);
  return a;
}

LOWBIT_HD_CONSTEXPR GroupStats Accumulate(const Recipe& r, GroupStats s, float x) {
  s.min = TorchMin(s.min, x);
  s.max = TorchMax(s.max, x);
  return AccumulateAmaxOnly(r, s, x);
}

// Combining partial statistics (reductions across lanes, threads or
// vectors): every one of min / max / amax is order-free up to NaN payloads
// (a NaN wins whichever side it is on; +-0 compare equal and are never told
// apart by a scale rule: they reach a scale only through a clamp to eps or a
// rounded zero point). Which of several NaNs wins is the left operand's, so
// only a reduction that keeps element order gives the NaN of Accumulate;
// the SIMD and CUDA kernels redo a group that holds a NaN in order
// (simd/src/int_group_quantize-inl.h, cuda/src/int_quantize.cu).
LOWBIT_HD_CONSTEXPR GroupStats Combine(const Recipe& r, GroupStats a, const GroupStats& b) {
  a.min = TorchMin(a.min, b.min);
  a.max = TorchMax(a.max, b.max);
  return CombineAmaxOnly(r, a, b);
}

LOWBIT_HD_CONSTEXPR GroupStats StatsOf(const Recipe& r, const float* x, long n) {
  GroupStats s = EmptyStats();
  for (long i = 0; i < n; ++i) s = Accumulate(r, s, x[i]);
  return s;
}

// Statistics of a calibrated range [lo, hi] (static quantization).
LOWBIT_HD_CONSTEXPR GroupStats StatsOfRange(float lo, float hi) {
  GroupStats s;
  s.min = lo;
  s.max = hi;
  s.amax = MaxPropagatingNan(F32Abs(lo), F32Abs(hi));
  return s;
}

}  // namespace lowbit::recipe
