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
//
// VectorNvfp4Scale (below) does the same for the NVFP4 block scale: the
// UE4M3 codes and element factors of Lanes blocks, for every NVFP4 rule.

#if defined(LOWBIT_SIMD_BLOCK_SCALE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#undef LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#else
#define LOWBIT_SIMD_BLOCK_SCALE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "block_job.h"
#include "convert-inl.h"
#include "hwy/highway.h"
#include "lowbit/formats/alternatives/e8m0_rceil.h"
#include "lowbit/formats/fp32_bits.h"
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
  const V magnitude = hn::And(amax, hn::Set(d, ~kF32SignMask));
  if (r.scale_rule == recipe::ScaleRule::kMxRceil) {
    // recipe/steps.h ChooseMxScale: rule_value = amax * MaxNormReciprocal(r),
    // one FP32 multiply (round to nearest even, as the model's), then the
    // E8M0 round-up conversion, read from the bits as E8m0RceilFromBits.
    using alternatives::e8m0_detail::kMaxCode;
    const V u = hn::And(hn::BitCast(d, hn::Mul(hn::BitCast(df, magnitude), hn::Set(df, recipe::MaxNormReciprocal(r)))),
                        hn::Set(d, ~kF32SignMask));
    const V exponent_mask = hn::Set(d, kF32ExponentMask);
    const V exponent = hn::ShiftRight<kF32MantissaBits>(u);
    const V mantissa = hn::And(u, hn::Set(d, kF32MantissaMask));
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
    return hn::IfThenElse(hn::Gt(u, hn::Set(d, kF32ExponentMask - 1)), special, code);
  }
  // kMxFloor / kMxCeil / kMxEven (recipe/steps.h ChooseMxScale, the integer
  // branch): bits = |amax|; EVEN rounds the significand half-up to the
  // element's mantissa width first (NaN left alone).
  V bits = magnitude;
  const V exponent_mask = hn::Set(d, kF32ExponentMask);
  const auto is_nan = hn::Gt(bits, exponent_mask);
  if (r.scale_rule == recipe::ScaleRule::kMxEven) {
    const int mbits = r.element.mantissa_bits;
    const V half = hn::Set(d, std::uint32_t{1} << (kF32MantissaBits - mbits - 1));
    bits = hn::IfThenElse(is_nan, bits, hn::And(hn::Add(bits, half), exponent_mask));
  }
  // code = e + 127 with e = field - 127 (+1 for CEIL with a mantissa), or
  // 1 - 127 for a zero amax with zero_amax_as_min_normal, minus element_emax.
  VI code = hn::BitCast(di, hn::ShiftRight<kF32MantissaBits>(bits));
  if (r.scale_rule == recipe::ScaleRule::kMxCeil) {
    const auto has_mantissa = hn::Ne(hn::And(bits, hn::Set(d, kF32MantissaMask)),
                                     hn::Zero(d));
    code = hn::Add(code, hn::BitCast(di, hn::IfThenElseZero(has_mantissa, hn::Set(d, 1u))));
  }
  if (r.zero_amax_as_min_normal) {
    code = hn::IfThenElse(hn::RebindMask(di, hn::Eq(bits, hn::Zero(d))), hn::Set(di, 1), code);
  }
  code = hn::Sub(code, hn::Set(di, r.element_emax));
  // e < -127 -> -127 (code 0) [OCP-MX §5.4.1]; e > 127 -> NaN [MSX].
  code = hn::Max(code, hn::Zero(di));
  const auto too_large = hn::Gt(code, hn::Set(di, 2 * kF32Bias));
  V result = hn::IfThenElse(hn::RebindMask(d, too_large), nan_code, hn::BitCast(d, code));
  // A non-finite |amax| (after EVEN's rounding; >= Inf): the NaN code.
  return hn::IfThenElse(hn::Gt(bits, hn::Set(d, kF32ExponentMask - 1)), nan_code, result);
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

// ---- NVFP4 ------------------------------------------------------------------
//
// The UE4M3 block scale codes and FP32 element factors of a whole vector of
// NVFP4 blocks at once (one lane per block), for the tensor scale already
// chosen: a named vector alternative to recipe/steps.h ChooseScale
// (detail::ChooseNvfp4Scale) for every NVFP4 rule, the same FP32 operations
// in the same order lane-wise:
//
//   kNvfp4Te                 fminf(amax * (S_enc * fp32(1/6)), FLT_MAX), then
//                            fminf(1 / (decode * S_dec), FLT_MAX)
//   kNvfp4Torchao(018)       clamp((amax / 6) / pts, 2^-6, 448), NaN passing;
//                            pts * decode (018: (1 / pts) / decode)
//   kNvfp4ModelOpt(047)      amax / (6 * wsf2), 0 -> 1, >= 2^-9 (047: <= 448);
//                            decode * wsf2
//
// The scalar operands that do not depend on the block (S_enc * fp32(1/6),
// 6 * wsf2, 1 / pts) are the model's own expressions, evaluated once; the
// UE4M3 conversion is convert-inl.h's EncodeVector over the plan of the
// model's conversion (MakeEncodePlan(scale_format,
// recipe::detail::Nvfp4ScaleOptions(r))), and the decode of the code a
// lookup in the model's decode of every byte (DecodeToF32 of the scale
// format), so no format constant is written here. Every rule is exact in
// vectors: nothing falls back to the scalar step.
//
// NaN bits: the factor is compared bit for bit, NaN payloads included. A
// quotient keeps x86's first-NaN-operand rule in vectors as in the scalar
// model (a division cannot be commuted). A product can be commuted by the
// compiler, so the two where both operands can be NaN are pinned to the
// first operand as the model writes it (steps.h uses
// F32MulAsX86 there); TE's factor and rule value pass through
// fminf, which turns every NaN into FLT_MAX. fminf and the clamps compare
// with ordered predicates (false for a NaN lane on every target, unlike
// Highway 1.0.3 AVX3's Ne, docs/design.md "Known traps (measured)").
// proptests/backends/simd_block_scale_test.cc compares VectorNvfp4Scale
// with recipe::ChooseScale, codes and factor bits, on every one of the 2^32
// FP32 amax bit patterns for every catalog NVFP4 recipe and several tensor
// scales on every compiled target (LOWBIT_TEST_LEVEL=full; a
// boundary-biased sample at ci and smoke).

// The catalog's NVFP4 recipe of one rule (recipe/catalog.h MakeNvfp4Recipe;
// simd.h Runs takes only recipes with its semantics) as a compile-time
// constant, so that the kernels fold its formats and maxima.
template <recipe::ScaleRule kRule>
inline constexpr recipe::Recipe kNvfp4Recipe = recipe::MakeNvfp4Recipe("nvfp4", "", kRule);

// Calls f(std::integral_constant<ScaleRule, rule>{}) for an NVFP4 scale rule,
// so that a kernel templated on the rule is instantiated for each of them
// once; any other rule calls nothing (block_quantize.cc rejects it before
// dispatch).
template <class F>
HWY_INLINE void WithNvfp4Rule(recipe::ScaleRule rule, F&& f) {
  using recipe::ScaleRule;
  switch (rule) {
    case ScaleRule::kNvfp4Te: return f(std::integral_constant<ScaleRule, ScaleRule::kNvfp4Te>{});
    case ScaleRule::kNvfp4Torchao: return f(std::integral_constant<ScaleRule, ScaleRule::kNvfp4Torchao>{});
    case ScaleRule::kNvfp4ModelOpt: return f(std::integral_constant<ScaleRule, ScaleRule::kNvfp4ModelOpt>{});
    case ScaleRule::kNvfp4Torchao018: return f(std::integral_constant<ScaleRule, ScaleRule::kNvfp4Torchao018>{});
    case ScaleRule::kNvfp4ModelOpt047: return f(std::integral_constant<ScaleRule, ScaleRule::kNvfp4ModelOpt047>{});
    default: return;
  }
}

// x < FLT_MAX ? x : FLT_MAX lane-wise (recipe::FminfFltMax; a NaN lane
// compares false and gives FLT_MAX, as CUDA fminf returns the non-NaN
// operand).
HWY_INLINE hn::Vec<DF32> FminfFltMaxVector(DF32 df, hn::Vec<DF32> x) {
  const auto flt_max = hn::Set(df, recipe::kF32Max);
  return hn::IfThenElse(hn::Lt(x, flt_max), x, flt_max);
}

// A NaN lane's bits with the quiet bit set, other lanes `otherwise`
// (F32MulAsX86's NaN branch).
HWY_INLINE hn::Vec<DF32> QuietIfNan(D32 d, hn::Vec<DF32> first, hn::Vec<DF32> otherwise) {
  const DF32 df;
  const V bits = hn::BitCast(d, first);
  const auto is_nan = hn::Gt(hn::And(bits, hn::Set(d, ~kF32SignMask)), hn::Set(d, kF32ExponentMask));
  return hn::IfThenElse(hn::RebindMask(df, is_nan), hn::BitCast(df, hn::Or(bits, hn::Set(d, kF32QuietBit))),
                        otherwise);
}

// scale_decode[code] lane by lane (the model's decode of each scale byte).
// On AVX-512 the first 128 entries, every code of a 7-bit scale format such
// as UE4M3 (formats/format_list.h kUe4m3), come from four two-table
// permutes (Intel SDM VPERMI2PS: 32 entries each, index bits 0-4) and two
// selects by index bits 5 and 6: the gather they replace waited about 20
// cycles at the head of each group's element pass (perf, 2026-12-06). A
// code of 128 or more takes the gather.
HWY_INLINE hn::Vec<DF32> ScaleDecodeOf(D32 d, const float* scale_decode, V code) {
  const DF32 df;
  const DI32 di;
#if HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D32()) == 16) {
    if (HWY_LIKELY(hn::AllTrue(d, hn::Lt(code, hn::Set(d, 128u))))) {
      const __m512i index = code.raw;
      const __m512 q0 = _mm512_permutex2var_ps(_mm512_loadu_ps(scale_decode), index, _mm512_loadu_ps(scale_decode + 16));
      const __m512 q1 =
          _mm512_permutex2var_ps(_mm512_loadu_ps(scale_decode + 32), index, _mm512_loadu_ps(scale_decode + 48));
      const __m512 q2 =
          _mm512_permutex2var_ps(_mm512_loadu_ps(scale_decode + 64), index, _mm512_loadu_ps(scale_decode + 80));
      const __m512 q3 =
          _mm512_permutex2var_ps(_mm512_loadu_ps(scale_decode + 96), index, _mm512_loadu_ps(scale_decode + 112));
      const __mmask16 bit5 = _mm512_test_epi32_mask(index, _mm512_set1_epi32(32));
      const __mmask16 bit6 = _mm512_test_epi32_mask(index, _mm512_set1_epi32(64));
      const __m512 low = _mm512_mask_blend_ps(bit5, q0, q1);
      const __m512 high = _mm512_mask_blend_ps(bit5, q2, q3);
      return hn::Vec<DF32>{_mm512_mask_blend_ps(bit6, low, high)};
    }
  }
#endif
  return hn::GatherIndex(df, scale_decode, hn::BitCast(di, code));
}

// The UE4M3 code of each lane of rule values (FP32 bits) under the scale
// plan, and in *decode the model's decode of that code (scale_decode, the
// decode of every byte): EncodeVector's codes and ScaleDecodeOf's decodes,
// with a shorter path where every lane is a non-negative finite value at or
// above the smallest normal less a quarter of its quantum (the blocks of
// any tensor but those of zeros or of values far below its amax):
//
//   - round_pack.h steps 5-8 on the bits themselves, as convert-inl.h
//     NormalOffset and NormalCodes do for signed formats: (bits - low +
//     half - 1 + kept LSB) >> (23 - m) is the code less 2^m, below `limit`
//     (+Inf's) exactly in that range (below it the sum wraps, and a
//     negative value's bits, read unsigned, are 2^31 or more), and past the
//     largest finite code min() gives the overflow code (encode_plan.h
//     overflow_by_min);
//   - a normal code c decodes to the FP32 bits (c << (23 - m)) + (the
//     smallest normal's field - 1) << 23: its exponent and mantissa fields
//     moved over FP32's, the exponent rebiased; a code past the largest
//     finite one (UE4M3's NaN, where the overflow is not saturated) keeps
//     the table.
//
// Every other vector takes EncodeVector and the table. The model pins
// both paths: proptests/backends/simd_block_scale_test.cc compares the
// codes and factors with the model's on all 2^32 FP32 amax bit patterns
// under five NVFP4 tensor scales at the full test level, and on samples
// biased to the rounding boundaries at ci.
template <int kMantissaBits>
HWY_INLINE V Nvfp4ScaleCode(D32 d, V rule_bits, const EncodePlan& scale_plan, const float* scale_decode,
                            hn::Vec<DF32>* decode) {
  const DF32 df;
#if HWY_TARGET <= HWY_AVX3
  if (scale_plan.overflow_by_min) {
    constexpr int kShift = kMantissaBits32 - kMantissaBits;
    const std::uint32_t low = scale_plan.min_normal_field32 << kMantissaBits32;
    const std::uint32_t round_bias = ((1u << (kShift - 1)) - 1u) - low;  // wraps
    const std::uint32_t limit = (kInf32 + round_bias) >> kShift;
    const V sum = hn::Add(rule_bits, hn::Set(d, round_bias));
    // Round to nearest even: one more where the kept LSB is set.
    const V offset = hn::ShiftRight<kShift>(
        hn::IfThenElse(hn::TestBit(rule_bits, hn::Set(d, 1u << kShift)), hn::Add(sum, hn::Set(d, 1u)), sum));
    if (HWY_LIKELY(hn::AllTrue(d, hn::Lt(offset, hn::Set(d, limit))))) {
      const V code = hn::Min(hn::Add(offset, hn::Set(d, 1u << kMantissaBits)), hn::Set(d, scale_plan.overflow_positive));
      if (HWY_LIKELY(hn::AllTrue(d, hn::Lt(code, hn::Set(d, scale_plan.max_code + 1))))) {
        const std::uint32_t rebias = (scale_plan.min_normal_field32 - 1) << kMantissaBits32;
        *decode = hn::BitCast(df, hn::Add(hn::ShiftLeft<kShift>(code), hn::Set(d, rebias)));
      } else {
        *decode = ScaleDecodeOf(d, scale_decode, code);
      }
      return code;
    }
  }
#endif
  const V code = EncodeVector<RoundingMode::kNearestEven, PlanKind::kFloat>(d, rule_bits, hn::Zero(d), scale_plan);
  *decode = ScaleDecodeOf(d, scale_decode, code);
  return code;
}

// The UE4M3 codes (one per u32 lane) of blocks whose amaxes are the FP32 bits
// `amax` (any bit pattern, signed, NaN and Inf included, read as the model
// reads a float amax), and in *factor the element factor of each, for the
// tensor scale `t`. `scale_plan` is MakeEncodePlan(r.scale_format,
// recipe::detail::Nvfp4ScaleOptions(r)) and `scale_decode` the model's
// DecodeToF32(r.scale_format, byte) for every byte (256 entries).
template <recipe::ScaleRule kRule>
HWY_INLINE V VectorNvfp4Scale(D32 d, const recipe::TensorScale& t, const EncodePlan& scale_plan,
                              const float* scale_decode, V amax, hn::Vec<DF32>* factor) {
  using recipe::ScaleRule;
  constexpr const recipe::Recipe& r = kNvfp4Recipe<kRule>;
  const DF32 df;
  const DI32 di;
  constexpr float kElementMax = recipe::MaxFiniteF32(r.element);    // E2M1 6
  constexpr float kScaleMax = recipe::MaxFiniteF32(r.scale_format);  // UE4M3 448
  // The values the comments here and in recipe/steps.h state: 6, 448, the
  // torchao floor E4M3_EPS 2^-6 and the ModelOpt floor 2^-9.
  static_assert(kElementMax == 6.0f && kScaleMax == 448.0f);
  static_assert(recipe::detail::Nvfp4TorchaoScaleFloor(r) == 0.015625f);
  static_assert(recipe::detail::Nvfp4ModelOptScaleFloor(r) == 0.001953125f);
  const auto x = hn::BitCast(df, amax);
  hn::Vec<DF32> rule_value;
  if constexpr (kRule == ScaleRule::kNvfp4Te) {
    // block_amax * (S_enc * fp32(1/6)); the parenthesis is one scalar.
    const float multiplier = t.encode * recipe::MaxNormReciprocal(r);
    rule_value = FminfFltMaxVector(df, hn::Mul(x, hn::Set(df, multiplier)));
  } else if constexpr (kRule == ScaleRule::kNvfp4Torchao || kRule == ScaleRule::kNvfp4Torchao018) {
    // torch.clamp((max_abs / 6) / pts, min=2^-6, max=448): NaN compares
    // false both ways and passes through (recipe::TorchClamp).
    const auto q = hn::Div(hn::Div(x, hn::Set(df, kElementMax)), hn::Set(df, t.decode));
    const auto lo = hn::Set(df, recipe::detail::Nvfp4TorchaoScaleFloor(r));
    const auto hi = hn::Set(df, kScaleMax);
    rule_value = hn::IfThenElse(hn::Lt(q, lo), lo, hn::IfThenElse(hn::Gt(q, hi), hi, q));
  } else {
    static_assert(kRule == ScaleRule::kNvfp4ModelOpt || kRule == ScaleRule::kNvfp4ModelOpt047);
    // per_block_amax / (6 * wsf2); == 0 (either zero) -> 1.0; < 2^-9 ->
    // 2^-9 (a NaN compares false: the model's !NaN && <); 0.47 also > 448
    // -> 448.
    const float divisor = kElementMax * t.decode;
    auto q = hn::Div(x, hn::Set(df, divisor));
    q = hn::IfThenElse(hn::Eq(q, hn::Zero(df)), hn::Set(df, 1.0f), q);
    const auto floor = hn::Set(df, recipe::detail::Nvfp4ModelOptScaleFloor(r));
    q = hn::IfThenElse(hn::Lt(q, floor), floor, q);
    if constexpr (kRule == ScaleRule::kNvfp4ModelOpt047) {
      const auto hi = hn::Set(df, kScaleMax);
      q = hn::IfThenElse(hn::Gt(q, hi), hi, q);
    }
    rule_value = q;
  }
  // The model's UE4M3 conversion (round_pack.h steps: EncodeVector or its
  // shorter path, Nvfp4ScaleCode), then the model's decode of that code.
  hn::Vec<DF32> decode;
  const V code =
      Nvfp4ScaleCode<r.scale_format.mantissa_bits>(d, hn::BitCast(d, rule_value), scale_plan, scale_decode, &decode);
  if constexpr (kRule == ScaleRule::kNvfp4Te) {
    // fminf(1 / (float(S_dec_b_fp8) * S_dec), FLT_MAX).
    *factor = FminfFltMaxVector(df, hn::Div(hn::Set(df, 1.0f), hn::Mul(decode, hn::Set(df, t.decode))));
  } else if constexpr (kRule == ScaleRule::kNvfp4Torchao018) {
    // (1.0 / per_tensor_scale) / fp8_scale.
    *factor = hn::Div(hn::Set(df, 1.0f / t.decode), decode);
  } else if constexpr (kRule == ScaleRule::kNvfp4Torchao) {
    // pts * fp8_scale, a NaN pts winning (then every lane is it, quieted).
    const auto tensor = hn::Set(df, t.decode);
    *factor = QuietIfNan(d, tensor, hn::Mul(tensor, decode));
  } else {
    // fp8_scale * wsf2, a NaN fp8_scale winning.
    *factor = QuietIfNan(d, decode, hn::Mul(decode, hn::Set(df, t.decode)));
  }
  return code;
}

// VectorNvfp4Scale over an array of amax bit patterns (the test hook
// simd/block_scale.h Nvfp4ScalesOnTarget): full vectors, then the rest
// through one zero-padded vector.
template <recipe::ScaleRule kRule>
HWY_NOINLINE void Nvfp4ScalesArrayFor(const Nvfp4ScaleArrayJob& job) {
  const D32 d;
  const EncodePlan plan = *job.scale_plan;  // local: code stores could alias it
  const std::size_t lanes = hn::Lanes(d);
  hn::Vec<DF32> factor;
  std::size_t i = 0;
  for (; i + lanes <= job.count; i += lanes) {
    const V code = VectorNvfp4Scale<kRule>(d, job.tensor, plan, job.scale_decode, hn::LoadU(d, job.amax + i), &factor);
    StoreCodes<1>(d, code, job.codes, i);
    hn::StoreU(hn::BitCast(d, factor), d, job.factors + i);
  }
  if (i == job.count) return;
  HWY_ALIGN std::uint32_t in[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint8_t codes[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t factors[hn::MaxLanes(d)] = {};
  for (std::size_t k = i; k < job.count; ++k) in[k - i] = job.amax[k];
  const V code = VectorNvfp4Scale<kRule>(d, job.tensor, plan, job.scale_decode, hn::Load(d, in), &factor);
  StoreCodes<1>(d, code, codes, 0);
  hn::Store(hn::BitCast(d, factor), d, factors);
  for (std::size_t k = i; k < job.count; ++k) {
    job.codes[k] = codes[k - i];
    job.factors[k] = factors[k - i];
  }
}

inline void Nvfp4ScalesArray(const Nvfp4ScaleArrayJob& job) {
  WithNvfp4Rule(job.recipe->scale_rule, [&job](auto rule) { Nvfp4ScalesArrayFor<decltype(rule)::value>(job); });
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_BLOCK_SCALE_INL_H_
