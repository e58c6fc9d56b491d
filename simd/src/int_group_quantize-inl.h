// Per-target scaled-group quantization and dequantization for every scaled
// recipe of the catalog (formats/recipe/tensor.h QuantizeTensor /
// DequantizeTensor over the recipe's steps, formats/recipe/steps.h, step for
// step; INT4 / UINT4 optionally followed by packing.h PackNibbles with
// NibbleOrder::kLowFirst). Per group: min / max / amax in vectors over its
// segments (a group holding a NaN takes the model's recipe::Accumulate in
// element order, whose NaN payload reaches the scale), the scale and zero
// point from the model's recipe::ChooseScale (one call per group) or, for
// batches of consecutive groups under the rules int_group_scale-inl.h
// covers, from its vector forms (sixteen groups' statistics reduced at once,
// transposed_max-inl.h), then the elements in vectors:
//   integers: y = x * factor (AO) or x / factor (GPTQ, common),
//             q = round(clamp(y, qmin - zp, qmax - zp)) + zp, NaN -> 0,
//             code = q & CodeMask
//   FP8:      y = x * factor (TE, vLLM per tensor) or x / factor (vLLM per
//             token), vLLM's fminf/fmaxf clamp, code = the convert-inl.h
//             encoder of y under the recipe's element options
//             (cvt.rn.satfinite)
// Dequantize: fp32(q - zp) * decode, or fp8 table value * decode.

#if defined(LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#undef LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#else
#define LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "convert-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "int_group_job.h"
#include "int_group_scale-inl.h"
#include "lowbit/formats/recipe/steps.h"
#include "packed_nibbles-inl.h"
#include "transposed_max-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// min, max and amax of x[0..n) as recipe::Accumulate computes them,
// or false when a NaN is present. Without NaN the model's strict-compare
// loops and vector Min / Max agree except on which zero (+0 or -0) is kept,
// and no scale rule sees the sign of a zero min or max (TE FP8 reads only
// amax; each integer rule either subtracts it from a non-zero value, floors
// a zero scale to eps, maps an all-zero group to fixed bounds, or rounds a
// zero ratio to integer 0: recipe/scaled_scale.h ChooseScaledScale).
HWY_INLINE bool GroupStatsWithoutNan(const float* x, std::size_t n, recipe::GroupStats* s) {
  const D32 d;
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
  const V abs_mask = hn::Set(d, ~kSignBit32);
  auto vmin = hn::Set(df, x[0]);
  auto vmax = vmin;
  // The magnitudes' bits, compared as unsigned integers, order as the
  // magnitudes, and every NaN's lie above Inf's: one maximum is both the
  // amax and the NaN test (a NaN lane leaves vmin / vmax unspecified, but
  // then they are not used).
  V amax = hn::Zero(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(df, x + i);
    amax = hn::Max(amax, hn::And(hn::BitCast(d, v), abs_mask));
    vmin = hn::Min(vmin, v);
    vmax = hn::Max(vmax, v);
  }
  std::uint32_t ab = hn::GetLane(hn::MaxOfLanes(d, amax));
  if (ab > kInf32) return false;
  float mn = hn::GetLane(hn::MinOfLanes(df, vmin));
  float mx = hn::GetLane(hn::MaxOfLanes(df, vmax));
  for (; i < n; ++i) {
    const std::uint32_t bits = F32Bits(x[i]);
    if (F32IsNan(bits)) return false;
    mn = x[i] < mn ? x[i] : mn;
    mx = mx < x[i] ? x[i] : mx;
    ab = (bits & ~kSignBit32) > ab ? bits & ~kSignBit32 : ab;
  }
  s->min = mn;
  s->max = mx;
  s->amax = F32FromBits(ab);
  return true;
}

// round(c) of an integral-range c: half-even is roundps' default mode;
// half-away is trunc plus one step away when |c - trunc(c)| >= 0.5 (exact:
// |c| <= 255, so c - trunc(c) is an FP32 value).
template <bool kAway>
HWY_INLINE hn::Vec<DF32> RoundIntegral(DF32 df, hn::Vec<DF32> c) {
  if constexpr (!kAway) {
    return hn::Round(c);
  } else {
    const auto t = hn::Trunc(c);
    const auto step = hn::CopySign(hn::Set(df, 1.0f), c);
    return hn::Add(t, hn::IfThenElseZero(hn::Ge(hn::Abs(hn::Sub(c, t)), hn::Set(df, 0.5f)), step));
  }
}

// recipe/element_encode.h EncodeElement for an integer element: the code in
// each lane.
template <bool kAway, bool kDivide>
HWY_INLINE V IntCodes(DF32 df, hn::Vec<DF32> x, hn::Vec<DF32> factor, hn::Vec<DF32> lo,
                      hn::Vec<DF32> hi, VI zero_point, V code_mask) {
  const D32 d;
  const DI32 di;
  const auto y = kDivide ? hn::Div(x, factor) : hn::Mul(x, factor);
  // From the bits: Highway 1.0.3's AVX3 Ne(y, y) compares with _CMP_NEQ_OQ,
  // which is false for NaN (measured: the SIMD test found it).
  const auto is_nan = hn::Gt(hn::And(hn::BitCast(d, y), hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
  const auto c = hn::Min(hn::Max(y, lo), hi);
  const VI q = hn::Add(hn::ConvertTo(di, RoundIntegral<kAway>(df, c)), zero_point);
  const V code = hn::And(hn::BitCast(d, q), code_mask);
  return hn::IfThenZeroElse(is_nan, code);
}

// IntCodes with half-even rounding for a group where no y can be NaN (its
// elements hold no NaN and no Inf, and the factor is finite and not zero:
// QuantizeGroupsLoop checks). The clamped c lies in [qmin - zp, qmax - zp],
// |c| <= 255, so c + 1.5 * 2^23 lies in [2^23, 2^24), where FP32's unit in
// the last place is 1: the addition rounds c to an integer n, half to even
// (1.5 * 2^23 is even), and the sum's bits are 0x4B400000 + n. Its low 22
// bits are n's two's complement, and the code mask keeps at most 8 of them,
// so the code is (bits + zp) & mask: no Round, no float-to-int conversion.
template <bool kDivide>
HWY_INLINE V IntCodesHalfEvenWithoutNan(DF32 df, hn::Vec<DF32> x, hn::Vec<DF32> factor, hn::Vec<DF32> lo,
                                        hn::Vec<DF32> hi, VI zero_point, V code_mask) {
  const D32 d;
  const DI32 di;
  const auto y = kDivide ? hn::Div(x, factor) : hn::Mul(x, factor);
  const auto c = hn::Min(hn::Max(y, lo), hi);
  const auto shifted = hn::Add(c, hn::Set(df, 12582912.0f));  // 1.5 * 2^23
  return hn::And(hn::BitCast(d, hn::Add(hn::BitCast(di, shifted), zero_point)), code_mask);
}

// GPTQ / AWQ with FP16 scales (recipe/steps.h EncodeScaled with
// ElementQuirk::kRepackWithFp16Scale): the quantizer's integer q0 as
// IntCodes has it (NaN -> 0) before masking, then the packer's
// RepackedInteger: t = (factor * (q0 - zp) + zp * factor) / decode, two
// products and an add each rounded (int_group_quantize.cc keeps them out of
// an FMA), round half-even, a non-finite t -> 0.
template <bool kAway, bool kDivide>
HWY_INLINE V RepackedIntCodes(DF32 df, hn::Vec<DF32> x, hn::Vec<DF32> factor, hn::Vec<DF32> lo, hn::Vec<DF32> hi,
                              VI zero_point, hn::Vec<DF32> decode, V code_mask) {
  const D32 d;
  const DI32 di;
  const V abs_mask = hn::Set(d, ~kSignBit32);
  const V inf = hn::Set(d, kInf32);
  const auto y = kDivide ? hn::Div(x, factor) : hn::Mul(x, factor);
  const auto is_nan = hn::Gt(hn::And(hn::BitCast(d, y), abs_mask), inf);
  const auto c = hn::Min(hn::Max(y, lo), hi);
  const VI q0 = hn::IfThenZeroElse(hn::RebindMask(di, is_nan),
                                   hn::Add(hn::ConvertTo(di, RoundIntegral<kAway>(df, c)), zero_point));
  const auto weight = hn::Mul(factor, hn::ConvertTo(df, hn::Sub(q0, zero_point)));
  const auto scale_zero = hn::Mul(hn::ConvertTo(df, zero_point), factor);
  const auto t = hn::Div(hn::Add(weight, scale_zero), decode);
  const auto finite = hn::Lt(hn::And(hn::BitCast(d, t), abs_mask), inf);
  // Round to nearest even; a non-finite lane is replaced before the
  // conversion, which would give an unspecified integer.
  const auto rounded = hn::Round(hn::IfThenElseZero(hn::RebindMask(df, finite), t));
  const V code = hn::And(hn::BitCast(d, hn::ConvertTo(di, rounded)), code_mask);
  return hn::IfThenElseZero(finite, code);
}

// packing.h PackNibbles(kLowFirst) of m codes that land at element `pos` of
// the packed array: a code at an odd pos or an odd last code shares its byte
// with a code of another run, so it keeps that byte's other nibble. Runs of
// one group are not in element order under 2-D tiles (a tile's second row
// comes before the next tile of its first row), so the neighbour may have
// been written before or after; the caller zeroes the last byte of an odd
// count, whose high nibble no code fills.
HWY_INLINE void PackCodesAt(const std::uint8_t* codes, std::size_t m, std::size_t pos,
                            std::uint8_t* packed) {
  if (m == 0) return;
  std::size_t k = 0;
  if (pos % 2) {
    packed[pos / 2] = static_cast<std::uint8_t>((packed[pos / 2] & 0xF) | (codes[0] << 4));
    k = 1;
    ++pos;
  }
  std::uint8_t* out = packed + pos / 2;
  // A byte pair read as a little-endian 16-bit lane is c0 | c1 << 8, and
  // c0 | c1 << 4 its packed byte (codes are already < 16).
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::Rebind<std::uint8_t, decltype(di16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  const std::size_t pairs = (m - k) / 2;
  std::size_t i = 0;
  for (; i + lanes <= pairs; i += lanes) {
    const auto v = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(codes + k) + i);
    const auto byte = hn::Or(hn::And(v, hn::Set(d16, 0x000F)),
                             hn::And(hn::ShiftRight<4>(v), hn::Set(d16, 0x00F0)));
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, byte)), d8, out + i);  // <= 255: exact
  }
  for (; i < pairs; ++i) {
    out[i] = static_cast<std::uint8_t>(codes[k + 2 * i] | (codes[k + 2 * i + 1] << 4));
  }
  if ((m - k) % 2) out[pairs] = static_cast<std::uint8_t>((out[pairs] & 0xF0) | codes[m - 1]);
}

// Packed INT4 / UINT4 codes of m elements from an even element on, by
// IntCodesHalfEvenWithoutNan, straight to their bytes; returns how many it
// wrote (a multiple of the lane count). Every value it reads is a local or
// an argument: the byte stores may alias anything, so values read through a
// reference would be loaded again after each store.
template <bool kDivide>
HWY_INLINE std::size_t PackedIntCodesHalfEvenWithoutNan(const float* HWY_RESTRICT x, std::size_t m, float factor_f,
                                                        float lo_f, float hi_f, std::int32_t zp, std::uint32_t mask,
                                                        std::uint8_t* HWY_RESTRICT packed) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const std::size_t lanes = hn::Lanes(d);
  const auto factor = hn::Set(df, factor_f);
  const auto lo = hn::Set(df, lo_f);
  const auto hi = hn::Set(df, hi_f);
  const VI zero_point = hn::Set(di, zp);
  const V code_mask = hn::Set(d, mask);
  std::size_t i = 0;
  for (; i + 2 * lanes <= m; i += 2 * lanes) {
    const V c0 = IntCodesHalfEvenWithoutNan<kDivide>(df, hn::LoadU(df, x + i), factor, lo, hi, zero_point, code_mask);
    const V c1 =
        IntCodesHalfEvenWithoutNan<kDivide>(df, hn::LoadU(df, x + i + lanes), factor, lo, hi, zero_point, code_mask);
    StorePackedPairs(d, c0, packed + i / 2);
    StorePackedPairs(d, c1, packed + (i + lanes) / 2);
  }
  for (; i + lanes <= m; i += lanes) {
    StorePackedPairs(d, IntCodesHalfEvenWithoutNan<kDivide>(df, hn::LoadU(df, x + i), factor, lo, hi, zero_point,
                                                           code_mask),
                     packed + i / 2);
  }
  return i;
}

// IntCodesHalfEvenWithoutNan's code bits before the mask (a zero point of 0
// left out of the sum).
template <bool kDivide, bool kZeroPoint>
HWY_INLINE V UnmaskedIntCodes(DF32 df, hn::Vec<DF32> x, hn::Vec<DF32> factor, hn::Vec<DF32> lo, hn::Vec<DF32> hi,
                              VI zero_point) {
  const D32 d;
  const DI32 di;
  const auto y = kDivide ? hn::Div(x, factor) : hn::Mul(x, factor);
  const auto c = hn::Min(hn::Max(y, lo), hi);
  const VI shifted = hn::BitCast(di, hn::Add(c, hn::Set(df, 12582912.0f)));  // 1.5 * 2^23
  return hn::BitCast(d, kZeroPoint ? hn::Add(shifted, zero_point) : shifted);
}

// Packed INT4 / UINT4 codes of `length` elements (a multiple of 4 * Lanes)
// of one group from an even element on, whose factor, clamp bounds and zero
// point are given: IntCodesHalfEvenWithoutNan's conditions hold (no NaN y,
// half-even rounding), four vectors to 2 * Lanes bytes at a time
// (StorePackedFour).
template <bool kDivide, bool kZeroPoint>
HWY_INLINE void PackedGroupCodes(const float* HWY_RESTRICT x, std::size_t length, hn::Vec<DF32> factor,
                                 hn::Vec<DF32> lo, hn::Vec<DF32> hi, VI zero_point, V code_mask,
                                 std::uint8_t* HWY_RESTRICT packed) {
  const D32 d;
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t i = 0; i < length; i += 4 * lanes) {
    const V c0 = UnmaskedIntCodes<kDivide, kZeroPoint>(df, hn::LoadU(df, x + i), factor, lo, hi, zero_point);
    const V c1 = UnmaskedIntCodes<kDivide, kZeroPoint>(df, hn::LoadU(df, x + i + lanes), factor, lo, hi, zero_point);
    const V c2 =
        UnmaskedIntCodes<kDivide, kZeroPoint>(df, hn::LoadU(df, x + i + 2 * lanes), factor, lo, hi, zero_point);
    const V c3 =
        UnmaskedIntCodes<kDivide, kZeroPoint>(df, hn::LoadU(df, x + i + 3 * lanes), factor, lo, hi, zero_point);
    StorePackedFour(d, c0, c1, c2, c3, code_mask, packed + i / 2);
  }
}

// Where group g lies in the flattened matrix: `count` runs of `length`
// elements, `stride` apart (int_quant_layout.h GroupOf); one run when the
// group spans whole rows (per row, per tensor).
struct Segments {
  std::size_t first;
  std::size_t length;
  std::size_t count;
  std::size_t stride;
};

HWY_INLINE Segments SegmentsOf(const block::GroupGrid& grid, std::size_t cols, std::size_t g) {
  const std::size_t grid_cols = static_cast<std::size_t>(grid.grid_cols);
  const std::size_t group_rows = static_cast<std::size_t>(grid.group_rows);
  const std::size_t group_cols = static_cast<std::size_t>(grid.group_cols);
  const std::size_t r0 = g / grid_cols * group_rows;
  const std::size_t c0 = g % grid_cols * group_cols;
  if (group_cols == cols) return {r0 * cols, group_rows * cols, 1, cols};
  return {r0 * cols + c0, group_cols, group_rows, cols};
}

// GroupStatsWithoutNan over every run of a group; false when a NaN is
// present. Combining runs reorders the model's comparisons, which (without
// NaN) changes at most the sign of a zero min or max (see above).
HWY_INLINE bool SegmentStatsWithoutNan(const float* x, const Segments& s, recipe::GroupStats* out) {
  recipe::GroupStats acc;
  for (std::size_t k = 0; k < s.count; ++k) {
    recipe::GroupStats part;
    if (!GroupStatsWithoutNan(x + s.first + k * s.stride, s.length, &part)) return false;
    if (k == 0) {
      acc = part;
      continue;
    }
    acc.min = part.min < acc.min ? part.min : acc.min;
    acc.max = acc.max < part.max ? part.max : acc.max;
    acc.amax = acc.amax < part.amax ? part.amax : acc.amax;  // both >= +0
  }
  *out = acc;
  return true;
}

// The model's statistics of a group (recipe/steps.h Accumulate over the
// group's elements in row-major order, as recipe/tensor.h does).
HWY_INLINE recipe::GroupStats ModelStats(const recipe::Recipe& r, const float* x, const Segments& s) {
  recipe::GroupStats stats = recipe::EmptyStats();
  for (std::size_t k = 0; k < s.count; ++k) {
    const float* run = x + s.first + k * s.stride;
    for (std::size_t i = 0; i < s.length; ++i) stats = recipe::Accumulate(r, stats, run[i]);
  }
  return stats;
}

// amax[b] = the largest |x| of group b, as FP32 bits compared as unsigned
// integers (every NaN's above +Inf's), in two steps, so that a batch's
// vectors can be read while the previous batch's elements are computed
// (QuantizeGroupsLoop): GroupAbsMaxVector takes one group of `length`
// elements (a multiple of Lanes), one AND and one unsigned maximum per
// vector; ReduceAbsMaxVectors reduces Lanes groups' vectors to one lane each,
// on AVX-512 by TransposedMax16 (transposed_max-inl.h).
HWY_INLINE V GroupAbsMaxVector(D32 d, const float* group, std::size_t length) {
  const std::size_t lanes = hn::Lanes(d);
  const V abs_mask = hn::Set(d, ~kSignBit32);
  const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(group);
  V m = hn::And(hn::LoadU(d, bits), abs_mask);
  for (std::size_t i = lanes; i < length; i += lanes) m = hn::Max(m, hn::And(hn::LoadU(d, bits + i), abs_mask));
  return m;
}

HWY_INLINE void ReduceAbsMaxVectors(D32 d, const std::uint32_t* vamax, std::uint32_t* amax) {
  const std::size_t lanes = hn::Lanes(d);
#if HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D32()) == 16) {
    __m512i v[16];
    for (int g = 0; g < 16; ++g) v[g] = _mm512_load_si512(vamax + 16 * g);
    _mm512_storeu_si512(amax, TransposedMax16(v));
    return;
  }
#endif
  for (std::size_t g = 0; g < lanes; ++g) amax[g] = hn::GetLane(hn::MaxOfLanes(d, hn::Load(d, vamax + g * lanes)));
}

// min[b] and max[b] of Lanes groups from their minimum and maximum vectors
// (vmin, vmax: Lanes vectors each, the layout GroupMinMaxVectors stores),
// on AVX-512 by TransposedReduce16 (transposed_max-inl.h).
HWY_INLINE void ReduceMinMaxVectors(D32 d, const std::uint32_t* vmin, const std::uint32_t* vmax, std::uint32_t* min,
                                    std::uint32_t* max) {
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
#if HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D32()) == 16) {
    __m512i v[16];
    for (int g = 0; g < 16; ++g) v[g] = _mm512_load_si512(vmin + 16 * g);
    _mm512_storeu_si512(min, TransposedReduce16(v, [](__m512i p, __m512i q) {
                          return _mm512_castps_si512(_mm512_min_ps(_mm512_castsi512_ps(p), _mm512_castsi512_ps(q)));
                        }));
    for (int g = 0; g < 16; ++g) v[g] = _mm512_load_si512(vmax + 16 * g);
    _mm512_storeu_si512(max, TransposedReduce16(v, [](__m512i p, __m512i q) {
                          return _mm512_castps_si512(_mm512_max_ps(_mm512_castsi512_ps(p), _mm512_castsi512_ps(q)));
                        }));
    return;
  }
#endif
  for (std::size_t g = 0; g < lanes; ++g) {
    min[g] = F32Bits(hn::GetLane(hn::MinOfLanes(df, hn::BitCast(df, hn::Load(d, vmin + g * lanes)))));
    max[g] = F32Bits(hn::GetLane(hn::MaxOfLanes(df, hn::BitCast(df, hn::Load(d, vmax + g * lanes)))));
  }
}

// For Lanes consecutive groups of `length` elements (a multiple of Lanes)
// from x on: amax[b] as ReduceAbsMaxVectors has it (the NaN / Inf test), and
// min[b], max[b] the group's least and greatest value (FP32 bits; without
// NaN they are the model's up to the sign of a zero: GroupStatsWithoutNan
// says why no rule sees it). On AVX-512 each statistic of the sixteen
// groups goes through its own TransposedReduce16 (three of them at once
// would hold 48 vectors, more than the 32 registers).
// Lanes is at most 16 (the caller's batches hold 16 groups): the per-group
// vectors fit 16 x 16 lanes, whatever the target's largest vector.
HWY_INLINE void GroupsMinMaxBits(D32 d, const float* x, std::size_t length, std::uint32_t* amax, std::uint32_t* min,
                                 std::uint32_t* max) {
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
  HWY_DASSERT(lanes <= 16);
  HWY_ALIGN std::uint32_t vmin[16 * 16];
  HWY_ALIGN std::uint32_t vmax[16 * 16];
  HWY_ALIGN std::uint32_t vamax[16 * 16];
  const V abs_mask = hn::Set(d, ~kSignBit32);
  for (std::size_t g = 0; g < lanes; ++g) {
    const float* group = x + g * length;
    auto v = hn::LoadU(df, group);
    auto mn = v;
    auto mx = v;
    V a = hn::And(hn::BitCast(d, v), abs_mask);
    std::size_t i = lanes;
    if (length >= 2 * lanes) {
      auto w = hn::LoadU(df, group + lanes);
      auto mn1 = w, mx1 = w;
      V a1 = hn::And(hn::BitCast(d, w), abs_mask);
      for (i = 2 * lanes; i + 2 * lanes <= length; i += 2 * lanes) {
        v = hn::LoadU(df, group + i);
        w = hn::LoadU(df, group + i + lanes);
        mn = hn::Min(mn, v);
        mx = hn::Max(mx, v);
        a = hn::Max(a, hn::And(hn::BitCast(d, v), abs_mask));
        mn1 = hn::Min(mn1, w);
        mx1 = hn::Max(mx1, w);
        a1 = hn::Max(a1, hn::And(hn::BitCast(d, w), abs_mask));
      }
      mn = hn::Min(mn, mn1);
      mx = hn::Max(mx, mx1);
      a = hn::Max(a, a1);
    }
    for (; i < length; i += lanes) {
      v = hn::LoadU(df, group + i);
      mn = hn::Min(mn, v);
      mx = hn::Max(mx, v);
      a = hn::Max(a, hn::And(hn::BitCast(d, v), abs_mask));
    }
    hn::Store(hn::BitCast(d, mn), d, vmin + g * lanes);
    hn::Store(hn::BitCast(d, mx), d, vmax + g * lanes);
    hn::Store(a, d, vamax + g * lanes);
  }
  ReduceAbsMaxVectors(d, vamax, amax);
  ReduceMinMaxVectors(d, vmin, vmax, min, max);
}

// GroupsMinMaxBits' statistics split in two, so that a batch's can be read
// while the previous batch's elements are computed (QuantizeGroupsLoop):
// GroupMinMaxVectors takes one group of `length` elements (a multiple of
// Lanes) through the same vector steps as GroupsMinMaxBits, in the same
// order, and stores its minimum and maximum vectors at vmin and vmax;
// ReduceMinMaxVectors reduces Lanes groups' vectors to min[b] and max[b] as
// GroupsMinMaxBits does. In place of the amax's AND and unsigned maximum per
// vector, GroupMinMaxVectors returns f, one multiply-add v * 0 + f per
// vector: v * 0 is NaN exactly for a NaN or an Inf v, else a zero, and a NaN
// f stays NaN, so f, and any sum of such f, is NaN exactly where the vectors
// held a NaN or an Inf (WithoutNanOrInf); the caller takes GroupsMinMaxBits
// for the amax of groups that did. (Alone, before the split, the
// multiply-add for the amax measured 4.1 against 3.9 G el/s out of cache.)
HWY_INLINE hn::Vec<DF32> GroupMinMaxVectors(D32 d, const float* group, std::size_t length, std::uint32_t* vmin,
                                            std::uint32_t* vmax) {
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
  const auto zero = hn::Zero(df);
  auto v = hn::LoadU(df, group);
  auto mn = v;
  auto mx = v;
  auto f = hn::MulAdd(v, zero, zero);
  std::size_t i = lanes;
  if (length >= 2 * lanes) {
    auto w = hn::LoadU(df, group + lanes);
    auto mn1 = w, mx1 = w;
    auto f1 = hn::MulAdd(w, zero, zero);
    for (i = 2 * lanes; i + 2 * lanes <= length; i += 2 * lanes) {
      v = hn::LoadU(df, group + i);
      w = hn::LoadU(df, group + i + lanes);
      mn = hn::Min(mn, v);
      mx = hn::Max(mx, v);
      f = hn::MulAdd(v, zero, f);
      mn1 = hn::Min(mn1, w);
      mx1 = hn::Max(mx1, w);
      f1 = hn::MulAdd(w, zero, f1);
    }
    mn = hn::Min(mn, mn1);
    mx = hn::Max(mx, mx1);
    f = hn::Add(f, f1);
  }
  for (; i < length; i += lanes) {
    v = hn::LoadU(df, group + i);
    mn = hn::Min(mn, v);
    mx = hn::Max(mx, v);
    f = hn::MulAdd(v, zero, f);
  }
  hn::Store(hn::BitCast(d, mn), d, vmin);
  hn::Store(hn::BitCast(d, mx), d, vmax);
  return f;
}

// Whether the vectors summed into f (GroupMinMaxVectors) held no NaN and no
// Inf: no NaN lane, tested on the bits (IntCodes says why).
HWY_INLINE bool WithoutNanOrInf(D32 d, hn::Vec<DF32> f) {
  return hn::AllFalse(d, hn::Gt(hn::And(hn::BitCast(d, f), hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32)));
}

// Asks for the lines of one group of `elements` consecutive values (T0).
HWY_INLINE void PrefetchGroup(const float* group, std::size_t elements) {
  const char* bytes = reinterpret_cast<const char*>(group);
  for (std::size_t o = 0; o < elements * sizeof(float); o += 64) hwy::Prefetch(bytes + o);
}

// Whether group g of the grid is the g-th run of group_rows * group_cols
// consecutive elements (groups along whole rows, or rows of groups that
// tile the columns exactly), so that a batch of groups is one span of x.
HWY_INLINE bool ConsecutiveGroups(const block::GroupGrid& grid, std::size_t cols) {
  const std::size_t group_cols = static_cast<std::size_t>(grid.group_cols);
  return group_cols == cols ||
         (grid.group_rows == 1 && static_cast<std::size_t>(grid.grid_cols) * group_cols == cols);
}

// The model's scale step of one group, flattened into one function so that
// it is compiled without out-of-line calls per group.
HWY_NOINLINE HWY_FLATTEN recipe::BlockScale GroupScale(const recipe::Recipe& r,
                                                       const recipe::GroupStats& stats) {
  return recipe::ChooseScale(r, stats);
}

template <bool kAway, bool kDivide, bool kFp8>
HWY_NOINLINE void QuantizeGroupsLoop(const IntGroupJob& job) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const recipe::Recipe& r = *job.recipe;
  // A local copy of the plan (convert-inl.h EncodeLoop says why).
  EncodePlan plan;
  if constexpr (kFp8) plan = *job.fp8_plan;
  const std::size_t lanes = hn::Lanes(d);
  const V code_mask = hn::Set(d, static_cast<std::uint32_t>(r.element.CodeMask()));
  // vLLM's fmaxf(-max, fminf(y, max)) before the FP8 cast (recipe/steps.h
  // ScaledElement, ElementQuirk::kFminfFmaxfClamp): a NaN y becomes +max,
  // the rest is the saturating conversion's own clamp.
  const bool fminf_clamp = kFp8 && r.element_quirk == recipe::ElementQuirk::kFminfFmaxfClamp;
  const bool repack = !kFp8 && r.element_quirk == recipe::ElementQuirk::kRepackWithFp16Scale;
  // AutoAWQ's elements are FP16 arithmetic, an FP16 rounding after each
  // step (recipe/steps.h EncodeAwqElement): they take the model's element
  // step one by one (the statistics stay vectors).
  const bool model_elements = r.scale_rule == recipe::ScaleRule::kAwqAsymmetric;
  const auto element_max = hn::Set(df, kFp8 ? recipe::MaxFiniteF32(r.element) : 0.0f);
  const std::size_t groups = static_cast<std::size_t>(job.grid.Count());
  // One group's elements, after its scale.
  // without_nan: the group's elements hold no NaN and no Inf (its vector
  // statistics say so); with a finite non-zero factor no y is then NaN.
  const bool fast_elements = job.packed && !repack && !model_elements && lanes % 2 == 0;
  auto elements = [&](const Segments& seg, const recipe::BlockScale& scale, bool without_nan) {
    const std::uint32_t factor_bits = F32Bits(scale.factor) & ~kSignBit32;
    const bool no_nan_y = without_nan && factor_bits != 0 && factor_bits < kInf32;
    const auto factor = hn::Set(df, scale.factor);
    const auto lo = hn::Set(df, static_cast<float>(r.qmin - scale.zero_point));
    const auto hi = hn::Set(df, static_cast<float>(r.qmax - scale.zero_point));
    const VI zero_point = hn::Set(di, scale.zero_point);
    const auto decode = hn::Set(df, scale.decode);
    if constexpr (!kFp8 && !kAway) {
      // One run of whole four-vector steps from an even element, packed
      // codes, no NaN y, no FP16 repack: straight to the packed bytes, four
      // vectors at a time (PackedGroupCodes).
      if (fast_elements && no_nan_y && seg.count == 1 && seg.length % (4 * lanes) == 0 && seg.first % 2 == 0) {
        if (scale.zero_point != 0) {
          PackedGroupCodes<kDivide, true>(job.x + seg.first, seg.length, factor, lo, hi, zero_point, code_mask,
                                          job.codes + seg.first / 2);
        } else {
          PackedGroupCodes<kDivide, false>(job.x + seg.first, seg.length, factor, lo, hi, zero_point, code_mask,
                                           job.codes + seg.first / 2);
        }
        return;
      }
    }
    for (std::size_t k = 0; k < seg.count; ++k) {
      const std::size_t start = seg.first + k * seg.stride;
      for (std::size_t c0 = 0; c0 < seg.length; c0 += kIntGroupScratchCodes) {
        const std::size_t m =
            seg.length - c0 < kIntGroupScratchCodes ? seg.length - c0 : kIntGroupScratchCodes;
        const float* x = job.x + start + c0;
        std::uint8_t* dst = job.packed ? job.scratch : job.codes + start + c0;
        std::size_t i = 0;
        if constexpr (!kFp8) {
          // Packed codes from an even element on: each vector's codes go
          // straight to their packed bytes (StorePackedPairs), not through
          // the scratch and PackCodesAt; the rest of the chunk (an odd
          // start, the last codes) takes the scratch below.
          if (job.packed && !model_elements && (start + c0) % 2 == 0) {
            if (!kAway && !repack && no_nan_y) {
              i = PackedIntCodesHalfEvenWithoutNan<kDivide>(
                  x, m, scale.factor, static_cast<float>(r.qmin - scale.zero_point),
                  static_cast<float>(r.qmax - scale.zero_point), scale.zero_point,
                  static_cast<std::uint32_t>(r.element.CodeMask()), job.codes + (start + c0) / 2);
            }
            for (; i + lanes <= m; i += lanes) {
              const auto v = hn::LoadU(df, x + i);
              const V code = repack ? RepackedIntCodes<kAway, kDivide>(df, v, factor, lo, hi, zero_point, decode,
                                                                       code_mask)
                                    : IntCodes<kAway, kDivide>(df, v, factor, lo, hi, zero_point, code_mask);
              StorePackedPairs(d, code, job.codes + (start + c0 + i) / 2);
            }
          }
        }
        const std::size_t direct = i;
        for (; !model_elements && i + lanes <= m; i += lanes) {
          const auto v = hn::LoadU(df, x + i);
          V code;
          if constexpr (kFp8) {
            auto y = kDivide ? hn::Div(v, factor) : hn::Mul(v, factor);
            if (fminf_clamp) {
              // NaN from the bits (IntCodes says why), then Min / Max on
              // numbers only, where every target agrees.
              const auto is_nan =
                  hn::Gt(hn::And(hn::BitCast(d, y), hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
              y = hn::BitCast(df, hn::IfThenElse(is_nan, hn::BitCast(d, element_max), hn::BitCast(d, y)));
              y = hn::Max(hn::Min(y, element_max), hn::Neg(element_max));
            }
            code = EncodeAnyVector<RoundingMode::kNearestEven, PlanKind::kFloat>(d, hn::BitCast(d, y), hn::Zero(d),
                                                                                 plan);
          } else if (repack) {
            code = RepackedIntCodes<kAway, kDivide>(df, v, factor, lo, hi, zero_point, decode, code_mask);
          } else {
            code = IntCodes<kAway, kDivide>(df, v, factor, lo, hi, zero_point, code_mask);
          }
          StoreCodes<1>(d, code, dst, i);
        }
        for (; i < m; ++i) dst[i] = recipe::EncodeElement(r, scale, x[i]);
        if (job.packed) PackCodesAt(job.scratch + direct, m - direct, start + c0 + direct, job.codes);
      }
    }
  };
  // Groups in batches: the statistics of every group of a batch, then their
  // scales, then their elements. Group by group, each group's work was one
  // dependency chain (vector statistics, horizontal reductions, the scalar
  // scale step with its division, the broadcast factor) that the core could
  // not overlap with the next group's; within a batch the chains of
  // different groups are independent. The steps and their order per group
  // are unchanged. A batch holds at most kBatchElements elements (16 KiB of
  // FP32), so that the element pass reads them again from L1.
  constexpr std::size_t kBatch = 16;
  constexpr std::size_t kBatchElements = 4096;
  const std::size_t group_elements =
      static_cast<std::size_t>(job.grid.group_rows) * static_cast<std::size_t>(job.grid.group_cols);
  std::size_t batch_groups = kBatch;
  while (batch_groups > 1 && batch_groups * group_elements > kBatchElements) batch_groups /= 2;
  recipe::GroupStats batch_stats[kBatch];
  recipe::BlockScale batch_scales[kBatch];
  bool batch_without_nan[kBatch];
  Segments batch_segments[kBatch];
  // The scales of Lanes groups at once (int_group_scale-inl.h
  // VectorIntGroupScale, proven equal to the model's ChooseScale on every
  // amax without NaN) from their amaxes (GroupAbsMaxVector), where the rule
  // has a vector form, the groups of a batch are consecutive and each is
  // whole vectors; a group holding a NaN takes the model's statistics and
  // scale.
  const bool batch_vectors = !kFp8 && ConsecutiveGroups(job.grid, job.cols) && group_elements % lanes == 0 &&
                             batch_groups % lanes == 0 && lanes <= kBatch;
  const bool vector_scale = batch_vectors && VectorIntScaleRule(r);
  // GPTQ's min / max rules likewise (int_group_scale-inl.h VectorGptqScale,
  // proven equal to the model's ChooseScale on groups without NaN or Inf).
  const bool min_max_scale = batch_vectors && VectorMinMaxScaleRule(r);
  HWY_ALIGN std::uint32_t lane_min[hn::MaxLanes(d)];
  HWY_ALIGN std::uint32_t lane_max[hn::MaxLanes(d)];
  HWY_ALIGN std::int32_t lane_zero_point[hn::MaxLanes(d)];
  const std::int32_t vector_zero_point = vector_scale ? VectorIntGroupZeroPoint(r) : 0;
  HWY_ALIGN std::uint32_t lane_amax[hn::MaxLanes(d)];
  HWY_ALIGN float lane_decode[hn::MaxLanes(d)];
  HWY_ALIGN float lane_factor[hn::MaxLanes(d)];
  // The vector batches' statistics vectors per group: GPTQ's minimum and
  // maximum (GroupMinMaxVectors), the amax rules' amax in stats_min
  // (GroupAbsMaxVector); this batch's on one side, the next's on the
  // other; stats_read when this batch's were read with the previous batch.
  HWY_ALIGN std::uint32_t stats_min[2][kBatch * 16];
  HWY_ALIGN std::uint32_t stats_max[2][kBatch * 16];
  int stats_side = 0;
  bool stats_read = false;
  bool stats_without_nan = false;
  for (std::size_t g0 = 0; g0 < groups; g0 += batch_groups) {
    const std::size_t batch = groups - g0 < batch_groups ? groups - g0 : batch_groups;
    // The vector batches below take the segments of a group only where it
    // leaves their fast path (SegmentsOf divides by the grid's width).
    const auto segments = [&](std::size_t b) { return SegmentsOf(job.grid, job.cols, g0 + b); };
    // The element pass of a vector batch reads only what its statistics
    // pass brought into L1, long enough for the hardware prefetchers to
    // fall idle: the next batch's statistics then waited for memory on
    // every line (perf, GPTQ: three quarters of the loop's samples on those
    // loads). Each group's element pass asks for the lines of the same
    // group two batches ahead (16 KiB), so memory works while the core
    // computes (bench/RESULTS.md "Block and group quantizers": one batch
    // ahead measured 3-8% slower, T1 hints 5% slower).
    const bool prefetch = g0 + 3 * batch_groups <= groups;
    const float* ahead = prefetch ? job.x + (g0 + 2 * batch_groups) * group_elements : job.x;
    if (vector_scale && batch == batch_groups) {
      // As GPTQ's batches below: this batch's amax vectors, read with the
      // previous batch's elements where it was a whole batch too (measured
      // out of cache as there: INT4 ao-sym 7.3 to 7.9, common 7.4 to 7.5
      // G el/s, medians of ten, alternating the binaries).
      std::uint32_t* const this_amax = stats_min[stats_side];
      if (!stats_read) {
        for (std::size_t b = 0; b < batch; ++b) {
          hn::Store(GroupAbsMaxVector(d, job.x + (g0 + b) * group_elements, group_elements), d,
                    this_amax + b * lanes);
        }
      }
      for (std::size_t b0 = 0; b0 < batch; b0 += lanes) {
        ReduceAbsMaxVectors(d, this_amax + b0 * lanes, lane_amax);
        const V amax = hn::Load(d, lane_amax);
        hn::Vec<DF32> decode, factor;
        VectorIntGroupScale(df, r, hn::BitCast(df, amax), &decode, &factor);
        hn::Store(decode, df, lane_decode);
        hn::Store(factor, df, lane_factor);
        hn::StoreU(decode, df, job.scales + g0 + b0);
        for (std::size_t k = 0; k < lanes; ++k) {
          const std::size_t b = b0 + k;
          batch_scales[b].decode = lane_decode[k];
          batch_scales[b].factor = lane_factor[k];
          batch_scales[b].zero_point = vector_zero_point;
          batch_without_nan[b] = lane_amax[k] < kInf32;
          if (lane_amax[k] > kInf32) {  // a NaN: the model's statistics and scale
            batch_scales[b] = GroupScale(r, ModelStats(r, job.x, segments(b)));
            job.scales[g0 + b] = batch_scales[b].decode;
          }
          if (job.zero_points != nullptr) job.zero_points[g0 + b] = batch_scales[b].zero_point;
        }
      }
      // The elements: a group without NaN, whose factor is finite and not
      // zero, straight to its packed bytes (PackedGroupCodes) with the
      // batch's shared clamp bounds and zero point (VectorIntGroupZeroPoint),
      // hoisted out of the group loop; the rest through `elements`.
      const bool whole_steps = fast_elements && group_elements % (4 * lanes) == 0;
      const auto lo = hn::Set(df, static_cast<float>(r.qmin - vector_zero_point));
      const auto hi = hn::Set(df, static_cast<float>(r.qmax - vector_zero_point));
      const VI zero_point = hn::Set(di, vector_zero_point);
      const bool read_next = g0 + 2 * batch_groups <= groups;
      std::uint32_t* const next_amax = stats_min[stats_side ^ 1];
      for (std::size_t b = 0; b < batch; ++b) {
        if (prefetch) PrefetchGroup(ahead + b * group_elements, group_elements);
        if (read_next) {
          hn::Store(GroupAbsMaxVector(d, job.x + (g0 + batch_groups + b) * group_elements, group_elements), d,
                    next_amax + b * lanes);
        }
        const std::uint32_t factor_bits = F32Bits(batch_scales[b].factor) & ~kSignBit32;
        if (!kAway && whole_steps && batch_without_nan[b] && factor_bits != 0 && factor_bits < kInf32) {
          const std::size_t start = (g0 + b) * group_elements;
          const auto factor = hn::Set(df, batch_scales[b].factor);
          if (vector_zero_point != 0) {
            PackedGroupCodes<kDivide, true>(job.x + start, group_elements, factor, lo, hi, zero_point, code_mask,
                                            job.codes + start / 2);
          } else {
            PackedGroupCodes<kDivide, false>(job.x + start, group_elements, factor, lo, hi, zero_point, code_mask,
                                             job.codes + start / 2);
          }
          continue;
        }
        elements(segments(b), batch_scales[b], batch_without_nan[b]);
      }
      stats_read = read_next;
      stats_side ^= 1;
      continue;
    }
    if (min_max_scale && batch == batch_groups) {
      std::uint32_t* const this_min = stats_min[stats_side];
      std::uint32_t* const this_max = stats_max[stats_side];
      if (!stats_read) {
        auto f = hn::Zero(df);
        for (std::size_t b = 0; b < batch; ++b) {
          const float* group = job.x + (g0 + b) * group_elements;
          f = hn::Add(f, GroupMinMaxVectors(d, group, group_elements, this_min + b * lanes, this_max + b * lanes));
        }
        stats_without_nan = WithoutNanOrInf(d, f);
      }
      for (std::size_t b0 = 0; b0 < batch; b0 += lanes) {
        // A batch without NaN or Inf (nearly all) skips the amax; the
        // others take GroupsMinMaxBits for the amax that marks the groups.
        if (stats_without_nan) {
          ReduceMinMaxVectors(d, this_min + b0 * lanes, this_max + b0 * lanes, lane_min, lane_max);
          hn::Store(hn::Zero(d), d, lane_amax);
        } else {
          GroupsMinMaxBits(d, job.x + (g0 + b0) * group_elements, group_elements, lane_amax, lane_min, lane_max);
        }
        hn::Vec<DF32> decode;
        VI zero_point;
        VectorGptqScale(df, r, hn::BitCast(df, hn::Load(d, lane_min)), hn::BitCast(df, hn::Load(d, lane_max)),
                        &decode, &zero_point);
        hn::Store(decode, df, lane_decode);
        hn::Store(zero_point, di, lane_zero_point);
        for (std::size_t k = 0; k < lanes; ++k) {
          const std::size_t b = b0 + k;
          batch_without_nan[b] = lane_amax[k] < kInf32;
          if (batch_without_nan[b]) {
            batch_scales[b].decode = lane_decode[k];
            batch_scales[b].factor = lane_decode[k];
            batch_scales[b].zero_point = lane_zero_point[k];
          } else {  // a NaN or an Inf: the model's statistics and scale
            batch_scales[b] = GroupScale(r, ModelStats(r, job.x, segments(b)));
          }
          job.scales[g0 + b] = batch_scales[b].decode;
          if (job.zero_points != nullptr) job.zero_points[g0 + b] = batch_scales[b].zero_point;
        }
      }
      // A group without NaN or Inf, whose scale is finite and not zero
      // (so no y is NaN), straight to its packed bytes (PackedGroupCodes, as
      // the amax batches above); the rest through `elements`.
      const bool whole_steps = fast_elements && group_elements % (4 * lanes) == 0;
      // The next batch's statistics vectors (a whole batch's), a group
      // before each group's elements here: its loads then wait for memory
      // while this batch's elements are computed, not alone (measured out
      // of cache, GPTQ g128 on the 2-core VM of bench/RESULTS.md "CPU":
      // 4.1 to 6.4 G el/s, alternating the binaries; in cache unchanged).
      const bool read_next = g0 + 2 * batch_groups <= groups;
      std::uint32_t* const next_min = stats_min[stats_side ^ 1];
      std::uint32_t* const next_max = stats_max[stats_side ^ 1];
      auto next_f = hn::Zero(df);
      for (std::size_t b = 0; b < batch; ++b) {
        if (prefetch) PrefetchGroup(ahead + b * group_elements, group_elements);
        if (read_next) {
          const float* group = job.x + (g0 + batch_groups + b) * group_elements;
          next_f = hn::Add(next_f, GroupMinMaxVectors(d, group, group_elements, next_min + b * lanes,
                                                      next_max + b * lanes));
        }
        const recipe::BlockScale& scale = batch_scales[b];
        const std::uint32_t factor_bits = F32Bits(scale.factor) & ~kSignBit32;
        if (!kAway && whole_steps && batch_without_nan[b] && factor_bits != 0 && factor_bits < kInf32) {
          const std::size_t start = (g0 + b) * group_elements;
          const auto factor = hn::Set(df, scale.factor);
          const auto lo = hn::Set(df, static_cast<float>(r.qmin - scale.zero_point));
          const auto hi = hn::Set(df, static_cast<float>(r.qmax - scale.zero_point));
          const VI zero_point = hn::Set(di, scale.zero_point);
          if (scale.zero_point != 0) {
            PackedGroupCodes<kDivide, true>(job.x + start, group_elements, factor, lo, hi, zero_point, code_mask,
                                            job.codes + start / 2);
          } else {
            PackedGroupCodes<kDivide, false>(job.x + start, group_elements, factor, lo, hi, zero_point, code_mask,
                                             job.codes + start / 2);
          }
          continue;
        }
        elements(segments(b), scale, batch_without_nan[b]);
      }
      stats_read = read_next;
      stats_without_nan = read_next && WithoutNanOrInf(d, next_f);
      stats_side ^= 1;
      continue;
    }
    for (std::size_t b = 0; b < batch; ++b) batch_segments[b] = SegmentsOf(job.grid, job.cols, g0 + b);
    for (std::size_t b = 0; b < batch; ++b) {
      const Segments& seg = batch_segments[b];
      batch_without_nan[b] = SegmentStatsWithoutNan(job.x, seg, &batch_stats[b]);
      if (!batch_without_nan[b]) batch_stats[b] = ModelStats(r, job.x, seg);
      batch_without_nan[b] = batch_without_nan[b] && (F32Bits(batch_stats[b].amax) & ~kSignBit32) < kInf32;
    }
    for (std::size_t b = 0; b < batch; ++b) {
      batch_scales[b] = GroupScale(r, batch_stats[b]);
      job.scales[g0 + b] = batch_scales[b].decode;
      if (job.zero_points != nullptr) job.zero_points[g0 + b] = batch_scales[b].zero_point;
    }
    for (std::size_t b = 0; b < batch; ++b) {
      elements(batch_segments[b], batch_scales[b], batch_without_nan[b]);
    }
  }
}

// TE FP8 and vLLM FP8 per tensor multiply by the factor, vLLM per token
// divides by the scale; the integer schemes multiply by fp32(1 / scale) (AO)
// or divide by the scale (GPTQ, common, amax-clamp), each with its
// rounding: the recipe's element step and element rounding.
inline void QuantizeGroups(const IntGroupJob& job) {
  const bool divide = job.recipe->element_step == recipe::ElementStep::kDivide;
  if (job.recipe->element.IsFloat()) {
    return divide ? QuantizeGroupsLoop<false, true, true>(job) : QuantizeGroupsLoop<false, false, true>(job);
  }
  const bool away = job.recipe->element_encode.rounding == RoundingMode::kNearestAway;
  if (away) {
    return divide ? QuantizeGroupsLoop<true, true, false>(job)
                  : QuantizeGroupsLoop<true, false, false>(job);
  }
  return divide ? QuantizeGroupsLoop<false, true, false>(job)
                : QuantizeGroupsLoop<false, false, false>(job);
}

// Lanes/2 packed bytes -> Lanes codes: each byte b, widened to a 64-bit
// lane, becomes (b & 15) | (b >> 4) << 32, i.e. its two codes in lanes
// 2k and 2k + 1 (little-endian), low nibble first.
HWY_INLINE V UnpackLowFirst(D32 d, const std::uint8_t* bytes) {
  const hn::Repartition<std::uint64_t, D32> d64;
  const hn::Rebind<std::uint32_t, decltype(d64)> d32_half;
  const hn::Rebind<std::uint8_t, decltype(d64)> d8;
  const auto b = hn::PromoteTo(d64, hn::PromoteTo(d32_half, hn::LoadU(d8, bytes)));
  const auto pair = hn::Or(hn::And(b, hn::Set(d64, 0xFull)),
                           hn::ShiftLeft<28>(hn::And(b, hn::Set(d64, 0xF0ull))));
  return hn::BitCast(d, pair);
}

HWY_INLINE std::uint8_t CodeAt(const std::uint8_t* packed, std::size_t i) {
  return static_cast<std::uint8_t>(i % 2 ? packed[i / 2] >> 4 : packed[i / 2] & 0xF);
}

enum class CodeSource : int { kPackedInt, kByteInt, kFp8 };

// recipe/element_decode.h DecodeElement: integers fp32(q - zp) * scale, q
// sign-extended for INT8 / INT4 (shift the code to the top, arithmetic
// shift back), masked for UINT4; TE FP8 the model's decode of the code
// (a table) times scale_inv.
template <CodeSource kSource, bool kSigned>
HWY_NOINLINE void DequantizeGroupsLoop(const IntGroupDequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const hn::Rebind<std::uint8_t, D32> d8;
  const recipe::Recipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  const int shift = 32 - r.element.total_bits;
  const V code_mask = hn::Set(d, static_cast<std::uint32_t>(r.element.CodeMask()));
  const std::size_t groups = static_cast<std::size_t>(job.grid.Count());
  for (std::size_t g = 0; g < groups; ++g) {
    const Segments seg = SegmentsOf(job.grid, job.cols, g);
    const recipe::BlockScale p =
        recipe::StoredScale(r, 0, job.scales[g], job.zero_points != nullptr ? job.zero_points[g] : 0);
    const VI zero_point = hn::Set(di, p.zero_point);
    const auto scale = hn::Set(df, p.decode);
    // A NaN scale (rare): every product is NaN, and where an FP8 code is a
    // NaN too, which NaN wins is the model's rule (recipe/steps.h
    // DecodeElement), so such a group takes the model element by element.
    const bool nan_scale = kSource == CodeSource::kFp8 && F32IsNan(F32Bits(p.decode));
    for (std::size_t k = 0; nan_scale && k < seg.count; ++k) {
      const std::size_t start = seg.first + k * seg.stride;
      for (std::size_t i = 0; i < seg.length; ++i) {
        job.out[start + i] = recipe::DecodeElement(r, p, {}, job.codes[start + i]);
      }
    }
    for (std::size_t k = 0; !nan_scale && k < seg.count; ++k) {
      const std::size_t start = seg.first + k * seg.stride;
      float* out = job.out + start;
      std::size_t i = 0;
      if (kSource == CodeSource::kPackedInt && start % 2) {  // vectors start at a byte boundary
        out[0] = recipe::DecodeElement(r, p, {}, CodeAt(job.codes, start));
        i = 1;
      }
      // UnpackLowFirst makes Lanes codes of Lanes / 2 bytes: a one-lane
      // target (Highway's SCALAR) takes the model's element loop below.
      const bool vectors = kSource != CodeSource::kPackedInt || lanes % 2 == 0;
      for (; vectors && i + lanes <= seg.length; i += lanes) {
        hn::Vec<DF32> value;
        if constexpr (kSource == CodeSource::kFp8) {
          const VI index = hn::BitCast(di, hn::PromoteTo(d, hn::LoadU(d8, job.codes + start + i)));
          value = hn::Mul(hn::BitCast(df, hn::GatherIndex(di, job.fp8_table, index)), scale);
        } else {
          const V code = kSource == CodeSource::kPackedInt
                             ? UnpackLowFirst(d, job.codes + (start + i) / 2)
                             : hn::PromoteTo(d, hn::LoadU(d8, job.codes + start + i));
          const VI q = kSigned ? hn::ShiftRightSame(hn::ShiftLeftSame(hn::BitCast(di, code), shift), shift)
                               : hn::BitCast(di, hn::And(code, code_mask));
          value = hn::Mul(hn::ConvertTo(df, hn::Sub(q, zero_point)), scale);
        }
        hn::StoreU(value, df, out + i);
      }
      for (; i < seg.length; ++i) {
        const std::uint8_t code = kSource == CodeSource::kPackedInt ? CodeAt(job.codes, start + i)
                                                                    : job.codes[start + i];
        out[i] = recipe::DecodeElement(r, p, {}, code);
      }
    }
  }
}

inline void DequantizeGroups(const IntGroupDequantizeJob& job) {
  if (job.recipe->element.IsFloat()) return DequantizeGroupsLoop<CodeSource::kFp8, false>(job);
  const bool is_signed = job.recipe->element.has_sign;
  if (job.packed) {
    return is_signed ? DequantizeGroupsLoop<CodeSource::kPackedInt, true>(job)
                     : DequantizeGroupsLoop<CodeSource::kPackedInt, false>(job);
  }
  return is_signed ? DequantizeGroupsLoop<CodeSource::kByteInt, true>(job)
                   : DequantizeGroupsLoop<CodeSource::kByteInt, false>(job);
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
