// The MX block scale (E8M0 code) of a whole vector of block amaxes at once:
// a named vector alternative to recipe/steps.h ChooseScale's code for the
// bit-level MX rules, one lane per block, so that a block quantizer picks
// the scales of Lanes blocks in a few vector instructions instead of one
// scalar model call per block.
//
//   kMxFloor, kMxCeil, kMxEven   detail::ChooseMxScale's own integer steps on
//                                amax's FP32 bits, lane-wise.
//   kMxRceil                     amax * fp32(1/max) (recipe::MaxNormReciprocal,
//                                the model's product) in one vector multiply,
//                                then alternatives/e8m0_rceil.h
//                                E8m0RceilFromBits lane-wise.
//
// kMxNearest and kMxRceilEager (a float log2 rule) are not vectorized: the
// block quantizers call the model's ChooseScale per block for them
// (block_job.h VectorMxScaleRule). Every constant comes from the recipe (element_emax,
// the element's mantissa bits, scale_saturate, zero_amax_as_min_normal) or
// from the model's helpers; proptests/backends/simd_block_scale_test.cc
// compares VectorMxScaleCodes with recipe::ChooseScale on every one of the
// 2^32 FP32 amax bit patterns for every catalog MX recipe on every compiled
// target (LOWBIT_TEST_LEVEL=full; a boundary-biased sample at ci and smoke).

#if defined(LOWBIT_SIMD_BLOCK_SCALE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#undef LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#else
#define LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#endif

#include <cstdint>

#include "convert-inl.h"
#include "hwy/highway.h"
#include "lowbit/formats/alternatives/e8m0_rceil.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The E8M0 codes (one per u32 lane) of blocks whose amaxes are the FP32 bits
// `amax` (any bit pattern, the sign ignored as the model ignores it), for a
// recipe with VectorMxScaleRule.
HWY_INLINE V VectorMxScaleCodes(D32 d, const recipe::Recipe& r, V amax) {
  const DI32 di;
  const DF32 df;
  const V nan_code = hn::Set(d, static_cast<std::uint32_t>(recipe::kE8m0NanCode));
  const V magnitude = hn::And(amax, hn::Set(d, ~block::kF32SignMask));
  if (r.scale_rule == recipe::ScaleRule::kMxRceil) {
    // recipe/steps.h ChooseMxScale: rule_value = amax * MaxNormReciprocal(r),
    // one FP32 multiply (round to nearest even, as the model's), then the
    // E8M0 round-up conversion, read from the bits as E8m0RceilFromBits.
    using alternatives::e8m0_detail::kMaxCode;
    const V u = hn::And(hn::BitCast(d, hn::Mul(hn::BitCast(df, magnitude), hn::Set(df, recipe::MaxNormReciprocal(r)))),
                        hn::Set(d, ~block::kF32SignMask));
    const V exponent_mask = hn::Set(d, block::kF32ExponentMask);
    const V exponent = hn::ShiftRight<block::kF32MantissaBits>(u);
    const V mantissa = hn::And(u, hn::Set(d, block::kF32MantissaMask));
    const V one = hn::Set(d, 1u);
    // Normal: exponent field, plus one when the mantissa is not 0.
    V code = hn::Add(exponent, hn::IfThenElseZero(hn::Ne(mantissa, hn::Zero(d)), one));
    // Subnormal or zero: 1 above 2^-127 (mantissa > 2^22), else 0.
    code = hn::IfThenElse(hn::Eq(exponent, hn::Zero(d)),
                          hn::IfThenElseZero(hn::Gt(mantissa, hn::Set(d, std::uint32_t{1} << 22)), one), code);
    if (r.scale_saturate) code = hn::Min(code, hn::Set(d, kMaxCode));
    // |x| >= Inf (unsigned >= is > Inf - 1 here): Inf is the overflow (254
  // saturated, else NaN); NaN the NaN code.
    const V special = (r.scale_saturate) ? hn::IfThenElse(hn::Eq(u, exponent_mask), hn::Set(d, kMaxCode), nan_code)
                                         : nan_code;
    return hn::IfThenElse(hn::Gt(u, hn::Set(d, block::kF32ExponentMask - 1)), special, code);
  }
  // kMxFloor / kMxCeil / kMxEven (recipe/steps.h ChooseMxScale, the integer
  // branch): bits = |amax|; EVEN rounds the significand half-up to the
  // element's mantissa width first (NaN left alone).
  V bits = magnitude;
  const V exponent_mask = hn::Set(d, block::kF32ExponentMask);
  const auto is_nan = hn::Gt(bits, exponent_mask);
  if (r.scale_rule == recipe::ScaleRule::kMxEven) {
    const int mbits = r.element.mantissa_bits;
    const V half = hn::Set(d, std::uint32_t{1} << (block::kF32MantissaBits - mbits - 1));
    bits = hn::IfThenElse(is_nan, bits, hn::And(hn::Add(bits, half), exponent_mask));
  }
  // code = e + 127 with e = field - 127 (+1 for CEIL with a mantissa), or
  // 1 - 127 for a zero amax with zero_amax_as_min_normal, minus element_emax.
  VI code = hn::BitCast(di, hn::ShiftRight<block::kF32MantissaBits>(bits));
  if (r.scale_rule == recipe::ScaleRule::kMxCeil) {
    const auto has_mantissa = hn::Ne(hn::And(bits, hn::Set(d, block::kF32MantissaMask)),
                                     hn::Zero(d));
    code = hn::Add(code, hn::BitCast(di, hn::IfThenElseZero(has_mantissa, hn::Set(d, 1u))));
  }
  if (r.zero_amax_as_min_normal) {
    code = hn::IfThenElse(hn::RebindMask(di, hn::Eq(bits, hn::Zero(d))), hn::Set(di, 1), code);
  }
  code = hn::Sub(code, hn::Set(di, r.element_emax));
  // e < -127 -> -127 (code 0) [OCP-MX §5.4.1]; e > 127 -> NaN [MSX].
  code = hn::Max(code, hn::Zero(di));
  const auto too_large = hn::Gt(code, hn::Set(di, 2 * block::kF32Bias));
  V result = hn::IfThenElse(hn::RebindMask(d, too_large), nan_code, hn::BitCast(d, code));
  // A non-finite |amax| (after EVEN's rounding; >= Inf): the NaN code.
  return hn::IfThenElse(hn::Gt(bits, hn::Set(d, block::kF32ExponentMask - 1)), nan_code, result);
}

// VectorMxScaleCodes over an array of amax bit patterns (the test hook
// simd/block_scale.h MxScaleCodesOnTarget): full vectors, then the rest
// through one zero-padded vector.
inline void MxScaleCodesArray(const recipe::Recipe& r, const std::uint32_t* amax, std::size_t count,
                              std::uint8_t* codes) {
  const D32 d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    StoreCodes<1>(d, VectorMxScaleCodes(d, r, hn::LoadU(d, amax + i)), codes, i);
  }
  if (i == count) return;
  HWY_ALIGN std::uint32_t in[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint8_t out[hn::MaxLanes(d)] = {};
  for (std::size_t k = i; k < count; ++k) in[k - i] = amax[k];
  StoreCodes<1>(d, VectorMxScaleCodes(d, r, hn::Load(d, in)), out, 0);
  for (std::size_t k = i; k < count; ++k) codes[k] = out[k - i];
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_BLOCK_SCALE_INL_H_
