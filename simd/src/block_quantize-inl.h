// Per-target MX and NVFP4 block quantization and dequantization, step for
// step as formats/recipe/steps.h does them over a recipe (recipe.h): the
// block amax and the element scaling and conversion run in vectors; the MX
// scales of Lanes blocks at once from a vector of their amaxes
// (block_scale-inl.h VectorMxScaleCodes, a named vector alternative proven
// equal to the model's ChooseScale on every FP32 amax), or for the rules it
// does not cover the model's ChooseScale per block; NVFP4's tensor scale is
// the model's own step and its block scales of Lanes blocks come at once
// from block_scale-inl.h VectorNvfp4Scale (likewise proven equal to
// ChooseScale on every amax). Element conversion is convert-inl.h's
// EncodeVector, i.e. the same integer-only RoundPack twin as the array
// kernels; for a group of whole blocks, through convert-inl.h's
// GroupEncoder (the array kernels' groups of four vectors, proven equal to
// EncodeVector) over the group's scaled values.

#if defined(LOWBIT_SIMD_BLOCK_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOWBIT_SIMD_BLOCK_QUANTIZE_INL_H_
#undef LOWBIT_SIMD_BLOCK_QUANTIZE_INL_H_
#else
#define LOWBIT_SIMD_BLOCK_QUANTIZE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "block_job.h"
#include "block_scale-inl.h"
#include "convert-inl.h"
#include "e2m1_packed_cells-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"
#include "packed_nibbles-inl.h"
#include "transposed_max-inl.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// FP32 lanes per vector on this target (block_quantize.cc CheckLanes).
inline std::size_t Lanes32() { return hn::Lanes(D32()); }

// amax of |x| over `n` (a multiple of Lanes) values (recipe/steps.h
// StatsOf): the largest magnitude as bits (monotone for non-negative
// floats), NaN lanes left out, which is AmaxNan::kIgnore; `any_nan` tells
// whether there was one, for which kPropagate takes the model's ModelAmax.
HWY_INLINE std::uint32_t AbsMaxBits(D32 d, const std::uint32_t* bits, std::size_t n,
                                    bool* any_nan) {
  const V abs_mask = hn::Set(d, ~kSignBit32);
  const V inf = hn::Set(d, kInf32);
  V max = hn::Zero(d);
  V nan_seen = hn::Zero(d);
  for (std::size_t i = 0; i < n; i += hn::Lanes(d)) {
    const V a = hn::And(hn::LoadU(d, bits + i), abs_mask);
    const auto is_nan = hn::Gt(a, inf);
    nan_seen = hn::Or(nan_seen, hn::VecFromMask(d, is_nan));
    max = hn::Max(max, hn::IfThenZeroElse(is_nan, a));
  }
  *any_nan = !hn::AllFalse(d, hn::Ne(nan_seen, hn::Zero(d)));
  return hn::GetLane(hn::MaxOfLanes(d, max));
}

// The model's amax (recipe/steps.h CombineAmax from +0, in element order) of
// x[0..n): the rare path for an input holding a NaN under AmaxNan::
// kPropagate, where which NaN wins (its payload reaches the scale) depends
// on the order.
HWY_INLINE float ModelAmax(AmaxNan rule, const float* x, std::size_t n) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < n; ++i) amax = recipe::CombineAmax(rule, amax, F32Abs(x[i]));
  return amax;
}

// The amax bits of one block of `n` (a multiple of Lanes) values by the
// recipe's NaN rule. The common path is one AND and one unsigned max per
// vector: |x| as bits orders every NaN above +Inf, so a maximum above
// +Inf's bits means the block holds a NaN, and only then does the block
// take AbsMaxBits (kIgnore) or the model's ModelAmax (kPropagate).
HWY_INLINE std::uint32_t BlockAmaxBits(D32 d, AmaxNan rule, const std::uint32_t* bits,
                                       std::size_t n) {
  const V abs_mask = hn::Set(d, ~kSignBit32);
  V max = hn::And(hn::LoadU(d, bits), abs_mask);
  for (std::size_t i = hn::Lanes(d); i < n; i += hn::Lanes(d)) {
    max = hn::Max(max, hn::And(hn::LoadU(d, bits + i), abs_mask));
  }
  const std::uint32_t m = hn::GetLane(hn::MaxOfLanes(d, max));
  if (HWY_LIKELY(m <= kInf32)) return m;
  if (rule == AmaxNan::kPropagate) {
    return F32Bits(ModelAmax(rule, reinterpret_cast<const float*>(bits), n));
  }
  bool any_nan = false;
  return AbsMaxBits(d, bits, n, &any_nan);
}

// The FP32 bits of block b of x: in place for a whole block, else the
// zero-padded copy of the short last block (the block quantizers' layout).
HWY_INLINE const std::uint32_t* BlockBits(const float* x, std::size_t b, std::size_t block_size,
                                          std::size_t full_blocks, const std::uint32_t* padded) {
  return b < full_blocks ? reinterpret_cast<const std::uint32_t*>(x + b * block_size) : padded;
}

// amax[g] = BlockAmaxBits of blocks first .. first + group - 1, one lane each,
// for the vector scale steps. With `all_finite`, also whether every value of
// those blocks is finite (false where that was not found out): under
// AmaxNan::kIgnore a NaN leaves no trace in the amaxes.
HWY_INLINE void GroupBlockAmaxBits(D32 d, AmaxNan rule, const float* x, std::size_t block_size,
                                   std::size_t full_blocks, const std::uint32_t* padded, std::size_t first,
                                   std::size_t group, std::uint32_t* amax, bool* all_finite = nullptr) {
  if (all_finite != nullptr) *all_finite = false;
#if HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D32()) == 16) {
    if (group == 16 && first + group <= full_blocks) {
      // Sixteen whole blocks: each block's |x| bits reduced to one vector by
      // unsigned maxima (as BlockAmaxBits), the sixteen vectors to one lane
      // each by TransposedMax16 (transposed_max-inl.h). A lane above +Inf's
      // bits holds a NaN: that block takes BlockAmaxBits' own NaN path.
      const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
      __m512i v[16];
      for (std::size_t g = 0; g < 16; ++g) {
        const float* block = x + (first + g) * block_size;
        __m512i m = _mm512_and_si512(_mm512_loadu_si512(block), abs_mask);
        for (std::size_t i = 16; i < block_size; i += 16) {
          m = _mm512_max_epu32(m, _mm512_and_si512(_mm512_loadu_si512(block + i), abs_mask));
        }
        v[g] = m;
      }
      const __m512i maxima = TransposedMax16(v);
      _mm512_storeu_si512(amax, maxima);
      if (all_finite != nullptr) {
        *all_finite = _mm512_cmplt_epu32_mask(maxima, _mm512_set1_epi32(static_cast<int>(kInf32))) == 0xFFFF;
      }
      __mmask16 nan = _mm512_cmpgt_epu32_mask(maxima, _mm512_set1_epi32(static_cast<int>(kInf32)));
      while (nan != 0) {
        const int g = __builtin_ctz(nan);
        nan = static_cast<__mmask16>(nan & (nan - 1));
        amax[g] = BlockAmaxBits(d, rule, BlockBits(x, first + g, block_size, full_blocks, padded), block_size);
      }
      return;
    }
  }
#endif
  for (std::size_t g = 0; g < group; ++g) {
    amax[g] = BlockAmaxBits(d, rule, BlockBits(x, first + g, block_size, full_blocks, padded), block_size);
  }
}

// MX quantization, Lanes blocks at a time: each block's amax (BlockAmaxBits)
// into one lane of a vector, the E8M0 codes of all of them from that vector
// (block_scale-inl.h VectorMxScaleCodes, proven equal to the model's
// ChooseScale on every amax) or, for the rules it does not cover, from the
// model's ChooseScale per block; then each block's elements multiplied by
// the factor of its code (MxJob::scale_factor: 2^-e, the named alternative
// alternatives/mx_block.h MxScaleByReciprocal, for dividing recipes too) and
// converted in vectors.
template <RoundingMode kMode, PlanKind kKind, bool kVectorScale>
HWY_NOINLINE void QuantizeMxLoop(const MxJob& job) {
  const D32 d;
  const DF32 df;
  const recipe::Recipe& r = *job.recipe;
  const EncodePlan plan = *job.element_plan;  // local: code stores could alias it
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t block_size = static_cast<std::size_t>(r.layout.size);
  const std::size_t blocks = (job.count + block_size - 1) / block_size;
  const std::size_t full_blocks = job.count / block_size;
  // The short last block, zero-padded (zeros never raise the amax, and the
  // padded codes are not stored). Lanes divides block_size on every target
  // of x86 (4, 8 or 16 lanes) and of Arm up to 512-bit SVE (blocks of 16 or
  // 32; block_quantize.cc checks).
  HWY_ALIGN std::uint32_t padded[block::kMaxBlockSize] = {};
  HWY_ALIGN std::uint8_t codes_buffer[block::kMaxBlockSize] = {};
  const std::size_t tail = job.count - full_blocks * block_size;
  if (tail != 0) std::memcpy(padded, job.x + full_blocks * block_size, tail * sizeof(float));
  HWY_ALIGN std::uint32_t amax[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t scale_codes[hn::MaxLanes(d)] = {};
  // The scaled values of one group of whole blocks (FP32 bits), for
  // `encoder` (integer elements keep the per-vector path below: their codes
  // take the qmin step after the encode).
  HWY_ALIGN std::uint32_t scaled[hn::MaxLanes(d) * block::kMaxBlockSize];
  const GroupEncoder<kMode, kKind, InputKind::kF32, 1> encoder(plan);
  // recipe/steps.h ScaledElement: MX integer elements go onto the integer
  // grid, y * 2^-implied (exact: a power of two).
  const auto integer_grid = hn::Set(df, F32Pow2(-r.element_implied_exponent));
  // recipe/steps.h EncodeScaled for MX integers: the saturating conversion
  // clamps to the format's range, the recipe's [qmin, qmax] is narrower only
  // at the bottom (MXINT8 +-127: the saturated -128 becomes -127).
  const V int_min_code = hn::Set(d, static_cast<std::uint32_t>(r.element.IntMin() & r.element.CodeMask()));
  const V qmin_code = hn::Set(d, static_cast<std::uint32_t>(r.qmin & static_cast<int>(r.element.CodeMask())));
  // A NaN scale: the model's ScaledElement gives one NaN for every x (it
  // fixes the sign that x / NaN would leave to the hardware).
  const auto nan_element = hn::Set(df, job.nan_scale_element);
  for (std::size_t first = 0; first < blocks; first += lanes) {
    const std::size_t group = blocks - first < lanes ? blocks - first : lanes;
    GroupBlockAmaxBits(d, r.amax_nan, job.x, block_size, full_blocks, padded, first, group, amax);
    if constexpr (kVectorScale) {
      hn::Store(VectorMxScaleCodes(d, r, hn::Load(d, amax)), d, scale_codes);
    } else {
      for (std::size_t g = 0; g < group; ++g) {
        recipe::GroupStats stats;
        stats.amax = F32FromBits(amax[g]);
        scale_codes[g] = recipe::ChooseScale(r, stats).code;
      }
    }
    if constexpr (kKind != PlanKind::kInteger) {
      if (group == lanes && first + group <= full_blocks) {
        // A whole group of whole blocks: every block's scaled values into
        // `scaled`, then one GroupEncoder pass over all of them, straight
        // into the codes (the same EncodeVector codes, in groups of four
        // vectors: GroupEncoder's fast paths are proven equal to it).
        for (std::size_t g = 0; g < group; ++g) {
          const std::size_t b = first + g;
          const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(job.x + b * block_size);
          const std::uint8_t code = static_cast<std::uint8_t>(scale_codes[g]);
          job.scales[b] = code;
          const bool nan_scale = job.scale_is_nan[code] != 0;
          const auto factor = hn::Set(df, job.scale_factor[code]);
          for (std::size_t i = 0; i < block_size; i += lanes) {
            const auto x = hn::BitCast(df, hn::LoadU(d, bits + i));
            auto y = hn::Mul(x, factor);  // MxJob::scale_factor
            if (nan_scale) y = nan_element;
            hn::Store(hn::BitCast(d, y), d, scaled + g * block_size + i);
          }
        }
        encoder.Vectors(scaled, job.codes + first * block_size, group * block_size);
        continue;
      }
    }
    for (std::size_t g = 0; g < group; ++g) {
      const std::size_t b = first + g;
      const std::size_t start = b * block_size;
      const std::uint32_t* bits = BlockBits(job.x, b, block_size, full_blocks, padded);
      const std::uint8_t code = static_cast<std::uint8_t>(scale_codes[g]);
      job.scales[b] = code;
      const bool nan_scale = job.scale_is_nan[code] != 0;
      const auto factor = hn::Set(df, job.scale_factor[code]);
      std::uint8_t* out = b < full_blocks ? job.codes + start : codes_buffer;
      for (std::size_t i = 0; i < block_size; i += lanes) {
        const auto x = hn::BitCast(df, hn::LoadU(d, bits + i));
        auto y = hn::Mul(x, factor);  // MxJob::scale_factor
        if constexpr (kKind == PlanKind::kInteger) y = hn::Mul(y, integer_grid);
        if (nan_scale) y = nan_element;
        V code_vector = EncodeVector<kMode, kKind>(d, hn::BitCast(d, y), hn::Zero(d), plan);
        if constexpr (kKind == PlanKind::kInteger) {
          code_vector = hn::IfThenElse(hn::Eq(code_vector, int_min_code), qmin_code, code_vector);
        }
        StoreCodes<1>(d, code_vector, out, i);
      }
    }
  }
  if (tail != 0) std::memcpy(job.codes + full_blocks * block_size, codes_buffer, tail);
}

template <RoundingMode kMode, PlanKind kKind>
void QuantizeMxForKind(const MxJob& job) {
  if (VectorMxScaleRule(*job.recipe)) return QuantizeMxLoop<kMode, kKind, true>(job);
  return QuantizeMxLoop<kMode, kKind, false>(job);
}

template <RoundingMode kMode>
void QuantizeMxForMode(const MxJob& job) {
  if (job.element_plan->kind == PlanKind::kInteger) {
    return QuantizeMxForKind<kMode, PlanKind::kInteger>(job);
  }
  if (job.element_plan->kind == PlanKind::kThreshold) {
    return QuantizeMxForKind<kMode, PlanKind::kThreshold>(job);
  }
  return QuantizeMxForKind<kMode, PlanKind::kFloat>(job);
}

// The MX profiles round to nearest, even or away (mx_profiles.h); the other
// modes go through the same code for recipes a caller builds.
inline void QuantizeMx(const MxJob& job) {
  switch (job.element_plan->rounding) {
    case RoundingMode::kNearestEven:
      return QuantizeMxForMode<RoundingMode::kNearestEven>(job);
    case RoundingMode::kNearestAway:
      return QuantizeMxForMode<RoundingMode::kNearestAway>(job);
    case RoundingMode::kTowardZero:
      return QuantizeMxForMode<RoundingMode::kTowardZero>(job);
    case RoundingMode::kUp:
      return QuantizeMxForMode<RoundingMode::kUp>(job);
    case RoundingMode::kDown:
      return QuantizeMxForMode<RoundingMode::kDown>(job);
    case RoundingMode::kOdd:
      return QuantizeMxForMode<RoundingMode::kOdd>(job);
    case RoundingMode::kNearestUp:
      return QuantizeMxForMode<RoundingMode::kNearestUp>(job);
    case RoundingMode::kNearestDown:
      return QuantizeMxForMode<RoundingMode::kNearestDown>(job);
    case RoundingMode::kNearestTowardZero:
      return QuantizeMxForMode<RoundingMode::kNearestTowardZero>(job);
    case RoundingMode::kStochastic:
      break;  // rejected before dispatch (no random bits in MxJob)
  }
}

// Two 4-bit codes per byte, element 0 in the low nibble (packing.h
// PackNibbles, NibbleOrder::kLowFirst): a byte pair read as a little-endian
// 16-bit lane is c0 | c1 << 8, and (c0 & 15) | (c1 & 15) << 4 is its packed
// byte.
HWY_INLINE void PackLowFirst(const std::uint8_t* codes, std::size_t count, std::uint8_t* packed) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::Rebind<std::uint8_t, decltype(di16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  const std::size_t pairs = count / 2;
  std::size_t i = 0;
  for (; i + lanes <= pairs; i += lanes) {
    const auto v = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(codes) + i);
    const auto pair = hn::Or(hn::And(v, hn::Set(d16, 0x000F)), hn::And(hn::ShiftRight<4>(v), hn::Set(d16, 0x00F0)));
    // Packed bytes are <= 255: the saturating i16 -> u8 demote is exact.
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, pair)), d8, packed + i);
  }
  for (; i < pairs; ++i) {
    packed[i] = static_cast<std::uint8_t>((codes[2 * i] & 0xF) | ((codes[2 * i + 1] & 0xF) << 4));
  }
  if (count % 2) packed[pairs] = codes[count - 1] & 0xF;
}

inline void PackNibblesLowFirst(const PackJob& job) { PackLowFirst(job.codes, job.count, job.packed); }

// The largest |x| as bits (monotone for non-negative floats, every NaN's
// above +Inf's) of `n` (a multiple of Lanes) values, from the last vector
// to the first, four maxima in flight.
HWY_INLINE std::uint32_t AbsMaxBitsBackward(D32 d, const std::uint32_t* bits, std::size_t n) {
  const std::size_t lanes = hn::Lanes(d);
  const V abs_mask = hn::Set(d, ~kSignBit32);
  V m0 = hn::Zero(d), m1 = hn::Zero(d), m2 = hn::Zero(d), m3 = hn::Zero(d);
  std::size_t i = n;
  for (; i >= 4 * lanes; i -= 4 * lanes) {
    m0 = hn::Max(m0, hn::And(hn::LoadU(d, bits + i - lanes), abs_mask));
    m1 = hn::Max(m1, hn::And(hn::LoadU(d, bits + i - 2 * lanes), abs_mask));
    m2 = hn::Max(m2, hn::And(hn::LoadU(d, bits + i - 3 * lanes), abs_mask));
    m3 = hn::Max(m3, hn::And(hn::LoadU(d, bits + i - 4 * lanes), abs_mask));
  }
  for (; i >= lanes; i -= lanes) m0 = hn::Max(m0, hn::And(hn::LoadU(d, bits + i - lanes), abs_mask));
  return hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(m0, m1), hn::Max(m2, m3))));
}

// amax of a whole array: full vectors, then the tail with the model's rule.
// The vectors are read from the end back to the start, so that the block
// pass, which goes forwards, starts on the lines read last, which a tensor
// larger than the last-level cache may still hold there. Without NaN the
// maximum of the magnitudes' bits is the amax under either rule; a NaN
// (a maximum above +Inf's bits) takes the rule's own path.
HWY_INLINE float ArrayAbsMax(D32 d, const float* x, std::size_t count, AmaxNan rule) {
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t full = count / lanes * lanes;
  const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(x);
  bool any_nan = false;
  std::uint32_t amax_bits = AbsMaxBitsBackward(d, bits, full);
  if (HWY_UNLIKELY(amax_bits > kInf32)) amax_bits = AbsMaxBits(d, bits, full, &any_nan);
  float amax = F32FromBits(amax_bits);
  if (any_nan && rule == AmaxNan::kPropagate) return ModelAmax(rule, x, count);
  for (std::size_t i = full; i < count; ++i) {
    amax = recipe::CombineAmax(rule, amax, F32Abs(x[i]));
  }
  return amax;
}

// recipe/steps.h ScaledElement of one vector of an NVFP4 block: x times
// (TE, ModelOpt) or over (torchao) the block's element factor. torchao's
// clamp to +-6 before its cast (ElementQuirk::kClampToMax) changes no E2M1
// code (the conversion saturates and a NaN passes the clamp), so it is left
// out; ModelOpt's _cast_fp4 gives -0.0 code 0 (docs/formats-reference.md
// §4.5).
template <recipe::ScaleRule kRule>
HWY_INLINE V Nvfp4ScaledVector(D32 d, const std::uint32_t* bits, float factor) {
  constexpr const recipe::Recipe& r = kNvfp4Recipe<kRule>;
  const DF32 df;
  const auto x = hn::BitCast(df, hn::LoadU(d, bits));
  const auto f = hn::Set(df, factor);
  V y = hn::BitCast(d, r.element_step == recipe::ElementStep::kMultiply ? hn::Mul(x, f) : hn::Div(x, f));
  if constexpr (r.element_quirk == recipe::ElementQuirk::kNegativeZeroAsPositive) {
    y = hn::IfThenZeroElse(hn::Eq(y, hn::Set(d, kSignBit32)), y);
  }
  return y;
}

#if HWY_TARGET <= HWY_AVX3
// NVFP4's whole groups of sixteen whole blocks on AVX-512 (a block is one
// vector), software-pipelined: the amaxes, UE4M3 codes and element factors
// of group k + 1 are computed before group k's elements are encoded, so
// that the scale step's long dependency chain (loads, TransposedMax16, the
// UE4M3 conversion, the decode, a division) overlaps the previous group's
// element work instead of stalling at the head of its own (measured in
// cache 3.1 to 4.6 G el/s, bench/RESULTS.md "Block and group
// quantizers"). Each group's scale codes leave in one 16-byte store, its
// codes as packed nibbles: on AVX3_DL by PackedE2m1Cells
// (e2m1_packed_cells-inl.h) where the group's scaled values cannot be NaN,
// else (and where a value is 2^4 or more) by GroupEncoder::FourCodes and
// StorePackedFour. Returns the blocks done.
template <recipe::ScaleRule kRule, class Encoder>
HWY_INLINE std::size_t QuantizeNvfp4WholeGroups(const Nvfp4Job& job, const recipe::TensorScale& t,
                                                const EncodePlan& scale_plan, const Encoder& encoder,
                                                std::size_t full_blocks) {
  const D32 d;
  const DF32 df;
  constexpr const recipe::Recipe& r = kNvfp4Recipe<kRule>;
  constexpr std::size_t kBlock = 16;
  static_assert(static_cast<std::size_t>(r.layout.size) == kBlock);
  const std::size_t groups = full_blocks / kBlock;
  if (groups == 0) return 0;
  // Locals: the byte stores below could alias the job's fields.
  const float* const x = job.x;
  const float* const scale_decode = job.scale_decode;
  std::uint8_t* const scales = job.scales;
  std::uint8_t* const codes = job.codes;
#if HWY_TARGET == HWY_AVX3_DL
  const PackedE2m1Cells packed_cells(encoder.plan());
#endif
  HWY_ALIGN std::uint32_t amax[kBlock];
  // Two groups' factors, and whether their scaled values are free of NaN
  // (PackedE2m1Cells::Four's condition): the group being encoded and the
  // next.
  HWY_ALIGN float factors[2][kBlock];
  bool nan_free[2] = {false, false};
  // The scale codes of group k, its factors into factors[k % 2].
  const auto scale_step = [&](std::size_t group) -> V {
    const std::size_t first = group * kBlock;
    // The lines of the group eight groups ahead (T0): measured 5-10%
    // faster out of cache than none (bench/RESULTS.md "Block and group
    // quantizers").
    if (first + 9 * kBlock <= full_blocks) {
      const char* p = reinterpret_cast<const char*>(x + (first + 8 * kBlock) * kBlock);
      for (std::size_t o = 0; o < kBlock * kBlock * sizeof(float); o += 64) hwy::Prefetch(p + o);
    }
    bool all_finite;
    GroupBlockAmaxBits(d, r.amax_nan, x, kBlock, full_blocks, nullptr, first, kBlock, amax, &all_finite);
    hn::Vec<DF32> factor;
    const V code = VectorNvfp4Scale<kRule>(d, t, scale_plan, scale_decode, hn::Load(d, amax), &factor);
    hn::Store(factor, df, factors[group & 1]);
#if HWY_TARGET == HWY_AVX3_DL
    // x * factor and x / factor are NaN only for a NaN operand, 0 * Inf,
    // 0 / 0 or Inf / Inf: none arises where every x is finite and every
    // factor finite and not zero (its magnitude's bits less one below
    // +Inf's less one).
    const V factor_magnitude = hn::And(hn::BitCast(d, factor), hn::Set(d, ~kSignBit32));
    nan_free[group & 1] =
        all_finite && hn::AllTrue(d, hn::Lt(hn::Sub(factor_magnitude, hn::Set(d, 1u)), hn::Set(d, kInf32 - 1)));
#else
    (void)all_finite;
#endif
    return code;
  };
  V code = scale_step(0);
  for (std::size_t group = 0; group < groups; ++group) {
    const V next_code = group + 1 < groups ? scale_step(group + 1) : code;
    // UE4M3 codes are below 2^8: VPMOVDB's truncation keeps them.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(scales + group * kBlock), _mm512_cvtepi32_epi8(code.raw));
    const float* f = factors[group & 1];
    const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(x + group * kBlock * kBlock);
    std::uint8_t* out = codes + group * kBlock * kBlock / 2;
#if HWY_TARGET == HWY_AVX3_DL
    const bool cells = nan_free[group & 1];
#endif
    // The scaled values of blocks g .. g + 3 (computed again where the
    // cells decline them: fewer vectors live across the call).
    const auto scaled = [&](std::size_t g) { return Nvfp4ScaledVector<kRule>(d, bits + g * kBlock, f[g]); };
    for (std::size_t g = 0; g < kBlock; g += 4) {
#if HWY_TARGET == HWY_AVX3_DL
      if (HWY_LIKELY(cells) &&
          HWY_LIKELY(packed_cells.Four(scaled(g), scaled(g + 1), scaled(g + 2), scaled(g + 3), out + g * kBlock / 2))) {
        continue;
      }
#endif
      V c0, c1, c2, c3;
      encoder.FourCodes(scaled(g), scaled(g + 1), scaled(g + 2), scaled(g + 3), &c0, &c1, &c2, &c3);
      StorePackedFour(d, c0, c1, c2, c3, hn::Set(d, 0xFu), out + g * kBlock / 2);
    }
    code = next_code;
  }
  return groups * kBlock;
}
#endif

// NVFP4 (formats/recipe/steps.h over an NVFP4 recipe, step for step), Lanes
// blocks at a time: the tensor amax and each block amax in vectors, the
// tensor scale from the model's ChooseTensorScale (once per call); each
// block's amax (BlockAmaxBits) into one lane of a vector, the UE4M3 codes
// and element factors of all of them from that vector (block_scale-inl.h
// VectorNvfp4Scale, the model's ChooseScale lane-wise, proven equal to it on
// every amax); then each block's elements scaled in vectors by its factor
// (ScaledElement) and converted by the E2M1 kernel. kPacked: the codes two
// per byte, low nibble first; on AVX-512 (a block of 16 is one vector) the
// whole groups go through QuantizeNvfp4WholeGroups (four blocks' codes
// straight from the encoder's vectors to 32 packed bytes, the scale step one
// group ahead), elsewhere a group's codes are packed from a buffer in L1.
// Packing in the kernel saves the 32 KiB one-byte-per-code chunks that
// simd.h Quantize wrote and packed again.
//
// The loop is instantiated per NVFP4 scale rule with that recipe as a
// compile-time constant (block_scale-inl.h kNvfp4Recipe, which
// simd.h Runs requires the caller's recipe to equal in semantics), so that the scale step is
// compiled with its formats and maxima folded in.
template <recipe::ScaleRule kRule, bool kPacked>
HWY_NOINLINE void QuantizeNvfp4Loop(const Nvfp4Job& job) {
  const D32 d;
  const DF32 df;
  constexpr const recipe::Recipe& r = kNvfp4Recipe<kRule>;
  const EncodePlan plan = *job.element_plan;  // local: code stores could alias it
  const EncodePlan scale_plan = *job.scale_plan;
  constexpr std::size_t kBlock = static_cast<std::size_t>(r.layout.size);
  const std::size_t lanes = hn::Lanes(d);
  const recipe::TensorScale t = job.given_tensor_scale != nullptr
                                    ? *job.given_tensor_scale
                                    : recipe::ChooseTensorScale(r, ArrayAbsMax(d, job.x, job.count, r.amax_nan));
  *job.tensor_scale = t;
  const std::size_t blocks = (job.count + kBlock - 1) / kBlock;
  const std::size_t full_blocks = job.count / kBlock;
  // The short last block, zero-padded (zeros never raise the amax, and the
  // padded codes are not stored).
  HWY_ALIGN std::uint32_t padded[kBlock] = {};
  HWY_ALIGN std::uint8_t codes_buffer[kBlock] = {};
  const std::size_t tail = job.count - full_blocks * kBlock;
  if (tail != 0) std::memcpy(padded, job.x + full_blocks * kBlock, tail * sizeof(float));
  // Lanes past the last block of a short group keep an earlier amax (or 0):
  // their scales are computed and not used.
  HWY_ALIGN std::uint32_t amax[hn::MaxLanes(d)] = {};
  HWY_ALIGN std::uint32_t scale_codes[hn::MaxLanes(d)] = {};
  HWY_ALIGN float factors[hn::MaxLanes(d)] = {};
  // The scaled values of one group of whole blocks (FP32 bits), for `encoder`.
  HWY_ALIGN std::uint32_t scaled[hn::MaxLanes(d) * kBlock];
  // Packed output: a group's codes one per byte before PackLowFirst, where
  // they are not packed straight from the vectors.
  HWY_ALIGN std::uint8_t group_codes[hn::MaxLanes(d) * kBlock];
  const GroupEncoder<RoundingMode::kNearestEven, PlanKind::kThreshold, InputKind::kF32, 1> encoder(plan);
#if HWY_TARGET <= HWY_AVX3
  // Packed codes straight from the encoder's vectors (FourCodes, then
  // StorePackedFour): a block of 16 is one vector here.
  const bool packed_vectors = kPacked && hn::MaxLanes(D32()) == 16 && lanes == kBlock && encoder.HasCellPath();
#endif
  std::size_t done = 0;
#if HWY_TARGET <= HWY_AVX3
  if (packed_vectors) done = QuantizeNvfp4WholeGroups<kRule>(job, t, scale_plan, encoder, full_blocks);
#endif
  for (std::size_t first = done; first < blocks; first += lanes) {
    const std::size_t group = blocks - first < lanes ? blocks - first : lanes;
    // The lines of the group eight groups ahead (T0): each group's scale
    // step is a dependency chain long enough for the hardware prefetchers
    // to fall behind (measured: 4 and 8 groups ahead were 5-10% faster out
    // of cache than none; bench/RESULTS.md "Block and group quantizers").
    if (first + 9 * lanes <= full_blocks) {
      const char* p = reinterpret_cast<const char*>(job.x + (first + 8 * lanes) * kBlock);
      for (std::size_t o = 0; o < lanes * kBlock * sizeof(float); o += 64) hwy::Prefetch(p + o);
    }
    GroupBlockAmaxBits(d, r.amax_nan, job.x, kBlock, full_blocks, padded, first, group, amax);
    hn::Vec<DF32> factor_vector;
    hn::Store(VectorNvfp4Scale<kRule>(d, t, scale_plan, job.scale_decode, hn::Load(d, amax), &factor_vector), d,
              scale_codes);
    hn::Store(factor_vector, df, factors);
    // recipe/steps.h ScaledElement of one vector of block b.
    const auto scaled_vector = [&](const std::uint32_t* bits, std::size_t b) {
      return Nvfp4ScaledVector<kRule>(d, bits, factors[b - first]);
    };
    if (group == lanes && first + group <= full_blocks) {
      for (std::size_t g = 0; g < group; ++g) job.scales[first + g] = static_cast<std::uint8_t>(scale_codes[g]);
      const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(job.x + first * kBlock);
      // A whole group of whole blocks: the scaled values of all of them
      // into `scaled`, then one GroupEncoder pass (the same E2M1 codes as
      // EncodeVector; its fast paths are proven equal to it).
      for (std::size_t g = 0; g < group; ++g) {
        for (std::size_t i = 0; i < kBlock; i += lanes) {
          hn::Store(scaled_vector(bits + g * kBlock + i, first + g), d, scaled + g * kBlock + i);
        }
      }
      if constexpr (kPacked) {
        encoder.Vectors(scaled, group_codes, group * kBlock);
        PackLowFirst(group_codes, group * kBlock, job.codes + first * kBlock / 2);
      } else {
        encoder.Vectors(scaled, job.codes + first * kBlock, group * kBlock);
      }
      continue;
    }
    for (std::size_t g = 0; g < group; ++g) {
      const std::size_t b = first + g;
      const std::size_t start = b * kBlock;
      const std::uint32_t* bits = BlockBits(job.x, b, kBlock, full_blocks, padded);
      job.scales[b] = static_cast<std::uint8_t>(scale_codes[g]);
      std::uint8_t* out = kPacked ? group_codes + g * kBlock : b < full_blocks ? job.codes + start : codes_buffer;
      for (std::size_t i = 0; i < kBlock; i += lanes) {
        StoreCodes<1>(d, EncodeVector<RoundingMode::kNearestEven, PlanKind::kThreshold>(
                             d, scaled_vector(bits + i, b), hn::Zero(d), plan),
                      out, i);
      }
    }
    if constexpr (kPacked) {
      // The codes of this group's elements (the short last block's padding
      // left out).
      const std::size_t n = job.count - first * kBlock < group * kBlock ? job.count - first * kBlock : group * kBlock;
      PackLowFirst(group_codes, n, job.codes + first * kBlock / 2);
    }
  }
  if (!kPacked && tail != 0) std::memcpy(job.codes + full_blocks * kBlock, codes_buffer, tail);
}

inline void ArrayAmax(const ArrayAmaxJob& job) { *job.amax = ArrayAbsMax(D32(), job.x, job.count, job.rule); }

inline void QuantizeNvfp4(const Nvfp4Job& job) {
  WithNvfp4Rule(job.recipe->scale_rule, [&job](auto rule) {
    if (job.packed) return QuantizeNvfp4Loop<decltype(rule)::value, true>(job);
    QuantizeNvfp4Loop<decltype(rule)::value, false>(job);
  });
}

// MX dequantization (recipe/steps.h DecodeElement): element value times the
// block's stored scale X (the model's StoredScale of its byte, from a table:
// 2^(code - 127), NaN for 0xFF), one FP32 multiply per element, from the
// model's element decode table.
inline void DequantizeMx(const MxDequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const hn::Rebind<std::uint8_t, D32> d8;
  const recipe::Recipe& r = *job.recipe;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t block_size = static_cast<std::size_t>(r.layout.size);
  const bool small = r.element.total_bits <= 4;
  HWY_ALIGN std::uint8_t codes_buffer[block::kMaxBlockSize] = {};
  HWY_ALIGN float out_buffer[block::kMaxBlockSize] = {};
  for (std::size_t start = 0, b = 0; start < job.count; start += block_size, ++b) {
    const std::size_t n = job.count - start < block_size ? job.count - start : block_size;
    const std::uint8_t* codes = job.codes + start;
    float* out = job.out + start;
    if (n < block_size) {
      std::memset(codes_buffer, 0, sizeof(codes_buffer));
      std::memcpy(codes_buffer, codes, n);
      codes = codes_buffer;
      out = out_buffer;
    }
    const auto scale = hn::Set(df, job.scale_table[job.scales[b]]);
    for (std::size_t i = 0; i < block_size; i += lanes) {
      const V index = hn::PromoteTo(d, hn::LoadU(d8, codes + i));
      const V element = small ? LookUp<true>(d, job.table, hn::And(index, hn::Set(d, 0xFu)))
                              : LookUp<false>(d, job.table, index);
      // A NaN element stays itself, as x86's multiply returns its first NaN
      // operand (the table's NaNs are quiet already); naming it here keeps
      // the compiler's freedom to commute the multiply from changing bits.
      const auto product = hn::Mul(hn::BitCast(df, element), scale);
      const auto is_nan = hn::Gt(hn::And(element, hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
      hn::StoreU(hn::BitCast(df, hn::IfThenElse(is_nan, element, hn::BitCast(d, product))), df,
                 out + i);
    }
    if (n < block_size) std::memcpy(job.out + start, out_buffer, n * sizeof(float));
  }
}

// NVFP4 dequantization (recipe/steps.h DecodeElement): the block scale from
// its stored byte by the model (StoredScale, from a table), then TE's (q * s) * S or the
// others' q * (s * S), in those FP32 orders. E2M1 codes are never NaN, so a
// product meets two NaNs only in s * S and in TE's second multiply (a NaN
// scale byte and a NaN tensor scale): the first operand wins, quieted, as
// the model pins it (F32MulAsX86); it is named here so that
// the compiler commuting a multiply cannot change bits.
inline void DequantizeNvfp4(const Nvfp4DequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const hn::Rebind<std::uint8_t, D32> d8;
  const recipe::Recipe& r = *job.recipe;
  constexpr std::size_t kBlock = 16;
  const std::size_t lanes = hn::Lanes(d);
  const bool scale_then_tensor =
      r.dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor;
  const float tensor = job.tensor_scale.decode;
  HWY_ALIGN std::uint8_t codes_buffer[kBlock] = {};
  HWY_ALIGN float out_buffer[kBlock] = {};
  for (std::size_t start = 0, b = 0; start < job.count; start += kBlock, ++b) {
    const std::size_t n = job.count - start < kBlock ? job.count - start : kBlock;
    const std::uint8_t* codes = job.codes + start;
    float* out = job.out + start;
    if (n < kBlock) {
      std::memset(codes_buffer, 0, sizeof(codes_buffer));
      std::memcpy(codes_buffer, codes, n);
      codes = codes_buffer;
      out = out_buffer;
    }
    const float s = job.scale_table[job.scales[b]];
    const auto first = hn::Set(df, scale_then_tensor ? s : F32MulAsX86(s, tensor));
    const auto second = hn::Set(df, tensor);
    for (std::size_t i = 0; i < kBlock; i += lanes) {
      const V index = hn::And(hn::PromoteTo(d, hn::LoadU(d8, codes + i)), hn::Set(d, 0xFu));
      const auto q = hn::BitCast(df, LookUp<true>(d, job.table, index));
      auto value = hn::Mul(q, first);
      if (scale_then_tensor) {
        const V bits = hn::BitCast(d, value);
        const auto is_nan = hn::Gt(hn::And(bits, hn::Set(d, ~kSignBit32)), hn::Set(d, kInf32));
        value = hn::BitCast(df, hn::IfThenElse(is_nan, bits, hn::BitCast(d, hn::Mul(value, second))));
      }
      hn::StoreU(value, df, out + i);
    }
    if (n < kBlock) std::memcpy(job.out + start, out_buffer, n * sizeof(float));
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#endif  // LOWBIT_SIMD_BLOCK_QUANTIZE_INL_H_
