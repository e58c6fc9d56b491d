// Per-target INT4 / UINT4 group quantization and dequantization
// (formats/block/int_quant.h QuantizeMatrix / DequantizeMatrix, step for
// step, then packing.h PackNibbles with NibbleOrder::kLowFirst). Per group:
// min / max / amax in vectors (a group holding a NaN takes the model's
// StatsOfGroup, whose NaN payload reaches the scale), the scale and zero
// point from the model's QuantParamsFromStats (one call per group), then the
// elements in vectors: y = x * encode (AO) or x / encode (GPTQ, common),
// q = round(clamp(y, qmin - zp, qmax - zp)) + zp, NaN -> 0, code = q & 15.

#if defined(LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#undef LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#else
#define LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "convert-inl.h"
#include "hwy/highway.h"
#include "int_group_job.h"
#include "lowbit/formats/block/int_quant.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// min, max and amax of x[0..n) as int_quant.h StatsOfGroup computes them,
// or false when a NaN is present. Without NaN the model's strict-compare
// loops and vector Min / Max agree except on which zero (+0 or -0) is kept,
// and no INT4 scale rule sees the sign of a zero min or max: each one either
// subtracts it from a non-zero value, floors a zero scale to eps, maps an
// all-zero group to fixed bounds, or rounds a zero ratio to integer 0
// (int_quant_params.h QuantParamsFromStats).
HWY_INLINE bool GroupStatsWithoutNan(const float* x, std::size_t n, block::GroupStats* s) {
  const D32 d;
  const DF32 df;
  const std::size_t lanes = hn::Lanes(d);
  const V abs_mask = hn::Set(d, ~kSignBit32);
  const V inf = hn::Set(d, kInf32);
  auto vmin = hn::Set(df, x[0]);
  auto vmax = vmin;
  V amax = hn::Zero(d);
  V nan_seen = hn::Zero(d);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(df, x + i);
    const V a = hn::And(hn::BitCast(d, v), abs_mask);
    nan_seen = hn::Or(nan_seen, hn::VecFromMask(d, hn::Gt(a, inf)));
    amax = hn::Max(amax, a);  // magnitudes order as their bits
    vmin = hn::Min(vmin, v);
    vmax = hn::Max(vmax, v);
  }
  if (!hn::AllFalse(d, hn::Ne(nan_seen, hn::Zero(d)))) return false;
  float mn = hn::GetLane(hn::MinOfLanes(df, vmin));
  float mx = hn::GetLane(hn::MaxOfLanes(df, vmax));
  std::uint32_t ab = hn::GetLane(hn::MaxOfLanes(d, amax));
  for (; i < n; ++i) {
    const std::uint32_t bits = block::F32Bits(x[i]);
    if (block::F32IsNan(bits)) return false;
    mn = x[i] < mn ? x[i] : mn;
    mx = mx < x[i] ? x[i] : mx;
    ab = (bits & ~kSignBit32) > ab ? bits & ~kSignBit32 : ab;
  }
  s->min = mn;
  s->max = mx;
  s->amax = block::F32FromBits(ab);
  return true;
}

// round(c) of an integral-range c: half-even is roundps' default mode;
// half-away is trunc plus one step away when |c - trunc(c)| >= 0.5 (exact:
// |c| <= 15, so c - trunc(c) is an FP32 value).
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

// int_quant.h QuantizeElement for INT4 / UINT4: the code in each lane.
template <bool kAway, bool kDivide>
HWY_INLINE V Int4Codes(DF32 df, hn::Vec<DF32> x, hn::Vec<DF32> factor, hn::Vec<DF32> lo,
                       hn::Vec<DF32> hi, VI zero_point) {
  const D32 d;
  const DI32 di;
  const auto y = kDivide ? hn::Div(x, factor) : hn::Mul(x, factor);
  // From the bits: Highway 1.0.3's AVX3 Ne(y, y) compares with _CMP_NEQ_OQ,
  // which is false for NaN (measured: the SIMD test found it).
  const auto is_nan = hn::Gt(hn::And(hn::BitCast(d, y), hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
  const auto c = hn::Min(hn::Max(y, lo), hi);
  const VI q = hn::Add(hn::ConvertTo(di, RoundIntegral<kAway>(df, c)), zero_point);
  const V code = hn::And(hn::BitCast(d, q), hn::Set(d, 0xFu));
  return hn::IfThenZeroElse(is_nan, code);
}

// packing.h PackNibbles(kLowFirst) of m codes that land at element `pos` of
// the packed array: an odd pos completes the byte the previous chunk left
// half full; an odd last code stands alone with a zero high nibble (the
// next chunk, if any, fills it).
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
  if ((m - k) % 2) out[pairs] = codes[m - 1];
}

template <bool kAway, bool kDivide>
HWY_NOINLINE void QuantizeInt4Loop(const Int4GroupJob& job) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const block::IntQuantRecipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  const long group = static_cast<long>(job.group);
  const block::GroupGrid one_group{1, group, 1, 1};  // StatsOfGroup over a 1 x group matrix
  for (std::size_t start = 0, g = 0; start < job.count; start += job.group, ++g) {
    const float* x = job.x + start;
    block::GroupStats stats;
    if (!GroupStatsWithoutNan(x, job.group, &stats)) {
      stats = block::StatsOfGroup(r, one_group, x, group, 0);
    }
    const block::QuantParams p = block::QuantParamsFromStats(r, stats);
    job.params[g] = p;
    const auto factor = hn::Set(df, p.encode);
    const auto lo = hn::Set(df, static_cast<float>(r.qmin - p.zero_point));
    const auto hi = hn::Set(df, static_cast<float>(r.qmax - p.zero_point));
    const VI zero_point = hn::Set(di, p.zero_point);
    for (std::size_t c0 = 0; c0 < job.group; c0 += kInt4ScratchCodes) {
      const std::size_t m =
          job.group - c0 < kInt4ScratchCodes ? job.group - c0 : kInt4ScratchCodes;
      std::size_t i = 0;
      for (; i + lanes <= m; i += lanes) {
        StoreCodes<1>(d, Int4Codes<kAway, kDivide>(df, hn::LoadU(df, x + c0 + i), factor, lo, hi,
                                                   zero_point),
                      job.scratch, i);
      }
      for (; i < m; ++i) job.scratch[i] = block::QuantizeElement(r, p, x[c0 + i]);
      PackCodesAt(job.scratch, m, start + c0, job.packed);
    }
  }
}

// The schemes that multiply by fp32(1 / scale) (AO) or divide by the scale
// (GPTQ, common), each with its rounding (int_quant_recipe.h).
inline void QuantizeInt4(const Int4GroupJob& job) {
  const bool away = job.recipe->rounding == RoundingMode::kNearestAway;
  const bool divide = job.recipe->scheme != block::QuantScheme::kAoSymmetric &&
                      job.recipe->scheme != block::QuantScheme::kAoAsymmetric;
  if (away) {
    return divide ? QuantizeInt4Loop<true, true>(job) : QuantizeInt4Loop<true, false>(job);
  }
  return divide ? QuantizeInt4Loop<false, true>(job) : QuantizeInt4Loop<false, false>(job);
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

// int_quant.h DequantizeElement: fp32(q - zp) * scale, q sign-extended for
// INT4 (shift the nibble to the top, arithmetic shift back).
template <bool kSigned>
HWY_NOINLINE void DequantizeInt4Loop(const Int4GroupDequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const DI32 di;
  const block::IntQuantRecipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  for (std::size_t start = 0, g = 0; start < job.count; start += job.group, ++g) {
    const block::QuantParams p = job.params[g];
    const VI zero_point = hn::Set(di, p.zero_point);
    const auto scale = hn::Set(df, p.decode);
    float* out = job.out + start;
    std::size_t i = 0;
    if (start % 2) {  // vectors start at a byte boundary
      out[0] = block::DequantizeElement(r, p, CodeAt(job.packed, start));
      i = 1;
    }
    for (; i + lanes <= job.group; i += lanes) {
      const VI code = hn::BitCast(di, UnpackLowFirst(d, job.packed + (start + i) / 2));
      const VI q = kSigned ? hn::ShiftRight<28>(hn::ShiftLeft<28>(code)) : code;
      hn::StoreU(hn::Mul(hn::ConvertTo(df, hn::Sub(q, zero_point)), scale), df, out + i);
    }
    for (; i < job.group; ++i) {
      out[i] = block::DequantizeElement(r, p, CodeAt(job.packed, start + i));
    }
  }
}

inline void DequantizeInt4(const Int4GroupDequantizeJob& job) {
  return job.recipe->element->has_sign ? DequantizeInt4Loop<true>(job)
                                       : DequantizeInt4Loop<false>(job);
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_INT_GROUP_QUANTIZE_INL_H_
