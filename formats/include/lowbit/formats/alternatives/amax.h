// A named alternative to the model's amax step, recipe::CombineAmax
// (recipe/steps.h: MaxIgnoringNan / MaxPropagatingNan), for the
// magnitudes |x| a block reduces (+0 and up, or NaN): the NaN test as the
// comparison x != x, true exactly for a NaN (IEEE 754-2019 §5.11), where the
// model reads the bits (F32IsNan: a mask, two compares and a logical
// and; the CUDA OCP MX kernel of BF16 input grew by half with it). On a GPU
// the NaN-skipping rule is fmaxf, IEEE 754-2008 maxNum (PTX max.f32: "if one
// operand is NaN, the other is returned"), the instruction TE's kernels
// reduce with (docs/formats-reference.md §5.3); maxNum leaves only max(+0, -0)
// open, and |x| is never -0. proptests/backends/alternatives_test.cc checks the host
// function against the model on every pair of a boundary set (every NaN
// class, +-0, subnormals, Inf) for both rules; the CUDA recipe tests check the
// device one.
#pragma once


#include "lowbit/formats/config.h"
#include "lowbit/formats/policy.h"

namespace lowbit::alternatives {

LOWBIT_HD_CONSTEXPR float CombineAmaxOfMagnitudes(AmaxNan rule, float a, float b) {
  if (rule == AmaxNan::kIgnore) {
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) return fmaxf(a, b);
#endif
    return (a != a) ? b : ((b != b) ? a : (a < b ? b : a));
  }
  return (a != a) ? a : ((b != b) ? b : (a < b ? b : a));
}

}  // namespace lowbit::alternatives
