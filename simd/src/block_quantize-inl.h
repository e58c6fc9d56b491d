// Per-target MX block quantization (formats/block/mx_recipe.h
// QuantizeMxBlock, step for step): the block amax and the element scaling and
// conversion run in vectors; the scale choice (one call per block) is the
// model's own ChooseMxScale. Element conversion is convert-inl.h's
// EncodeVector, i.e. the same integer-only RoundPack twin as the array
// kernels.

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
#include "convert-inl.h"
#include "hwy/highway.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// amax of |x| over `n` (a multiple of Lanes) values (fp32_bits.h AbsMax):
// the largest magnitude as bits (monotone for non-negative floats), NaN lanes
// left out; `any_nan` tells whether there was one (kPropagate then gives NaN;
// which NaN does not matter: every scale rule maps a NaN amax to code 0xFF).
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

template <RoundingMode kMode, PlanKind kKind>
HWY_NOINLINE void QuantizeMxLoop(const MxJob& job) {
  const D32 d;
  const DF32 df;
  const block::BlockSpec& spec = *job.spec;
  const block::MxRecipe& recipe = *job.recipe;
  const EncodePlan plan = *job.element_plan;  // local: code stores could alias it
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t block_size = static_cast<std::size_t>(spec.block_size);
  // A block, zero-padded when it is the short last one (zeros never raise the
  // amax, and the padded codes are not stored). Lanes divides block_size on
  // every x86 target (4, 8 or 16 lanes; blocks of 16 or 32).
  HWY_ALIGN std::uint32_t padded[block::kMaxBlockSize] = {};
  HWY_ALIGN std::uint8_t codes_buffer[block::kMaxBlockSize] = {};
  const float integer_grid = block::F32Pow2(-spec.element_implied_exponent);
  for (std::size_t start = 0, b = 0; start < job.count; start += block_size, ++b) {
    const std::size_t n = job.count - start < block_size ? job.count - start : block_size;
    const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(job.x + start);
    if (n < block_size) {
      std::memset(padded, 0, sizeof(padded));
      std::memcpy(padded, job.x + start, n * sizeof(float));
      bits = padded;
    }
    bool any_nan = false;
    const std::uint32_t amax_bits = AbsMaxBits(d, bits, block_size, &any_nan);
    const float amax = any_nan && recipe.amax_nan == block::AmaxNan::kPropagate
                           ? block::F32FromBits(block::kF32CanonicalNan)
                           : block::F32FromBits(amax_bits);
    const block::MxScale scale = block::ChooseMxScale(spec, amax, recipe.scale);
    job.scales[b] = scale.code;
    const bool nan_scale = scale.code == block::kE8m0NanCode;
    // X = 2^(code - 127) built from bits (the value DecodeToF32(kE8m0, code)
    // gives, pinned by the tests; 0xFF is NaN).
    const auto divisor = hn::Set(df, nan_scale ? block::F32FromBits(block::kF32CanonicalNan)
                                               : block::F32Pow2(static_cast<int>(scale.code) -
                                                                block::kF32Bias));
    const auto reciprocal = hn::Set(df, block::E8m0ReciprocalF32(scale.code));
    std::uint8_t* out = n < block_size ? codes_buffer : job.codes + start;
    for (std::size_t i = 0; i < block_size; i += lanes) {
      const auto x = hn::BitCast(df, hn::LoadU(d, bits + i));
      auto y = recipe.scaling == block::ElementScaling::kDivide ? hn::Div(x, divisor)
                                                                : hn::Mul(x, reciprocal);
      if (nan_scale) y = hn::BitCast(df, hn::Set(d, block::kF32CanonicalNan));
      if constexpr (kKind == PlanKind::kInteger) {
        y = hn::Mul(y, hn::Set(df, integer_grid));  // exact: a power of two
      }
      V code = EncodeVector<kMode, kKind>(d, hn::BitCast(d, y), hn::Zero(d), plan);
      if constexpr (kKind == PlanKind::kInteger) {
        // MXINT8 uses +-127 only: the saturated -128 (0x80) becomes -127.
        code = hn::IfThenElse(hn::Eq(code, hn::Set(d, 0x80u)), hn::Set(d, 0x81u), code);
      }
      StoreCodes<1>(d, code, out, i);
    }
    if (n < block_size) std::memcpy(job.codes + start, codes_buffer, n);
  }
}

template <RoundingMode kMode>
void QuantizeMxForMode(const MxJob& job) {
  if (job.element_plan->kind == PlanKind::kInteger) {
    return QuantizeMxLoop<kMode, PlanKind::kInteger>(job);
  }
  if (job.element_plan->kind == PlanKind::kThreshold) {
    return QuantizeMxLoop<kMode, PlanKind::kThreshold>(job);
  }
  return QuantizeMxLoop<kMode, PlanKind::kFloat>(job);
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
    case RoundingMode::kStochastic:
      break;  // rejected before dispatch (no random bits in MxJob)
  }
}

// NVFP4 (recipe/steps.h, step for step): the tensor amax and each block
// amax in vectors, the tensor scale and each block's scale from the model's
// own steps (recipe::ChooseTensorScale, recipe::ChooseScale: one scalar call
// per 16 elements), then the elements scaled in vectors and converted by the
// E2M1 kernel.
HWY_INLINE float Nvfp4BlockFactor(block::Nvfp4Recipe recipe, const block::Nvfp4TensorScale& t,
                                  float amax, std::uint8_t* scale_code) {
  recipe::GroupStats stats;
  stats.amax = amax;
  const recipe::BlockScale s = recipe::ChooseScale(block::ToRecipe(recipe), stats, t);
  *scale_code = s.code;
  return s.factor;
}

// amax of a whole array: full vectors, then the tail with the model's rule.
HWY_INLINE float ArrayAbsMax(D32 d, const float* x, std::size_t count, block::AmaxNan rule) {
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t full = count / lanes * lanes;
  bool any_nan = false;
  float amax = block::F32FromBits(
      AbsMaxBits(d, reinterpret_cast<const std::uint32_t*>(x), full, &any_nan));
  if (any_nan && rule == block::AmaxNan::kPropagate) {
    // The model keeps the first NaN (its payload reaches the tensor scale):
    // rare, so the model's own loop finds it.
    return block::AbsMax(x, static_cast<long>(count), rule);
  }
  for (std::size_t i = full; i < count; ++i) {
    const float a = block::F32Abs(x[i]);
    amax = rule == block::AmaxNan::kIgnore ? block::MaxIgnoringNan(amax, a)
                                           : block::MaxPropagatingNan(amax, a);
  }
  return amax;
}

inline void QuantizeNvfp4(const Nvfp4Job& job) {
  const D32 d;
  const DF32 df;
  const EncodePlan plan = *job.element_plan;  // local: code stores could alias it
  constexpr std::size_t kBlock = 16;
  const std::size_t lanes = hn::Lanes(d);
  const block::AmaxNan rule = block::Nvfp4AmaxNan(job.recipe);
  const block::Nvfp4TensorScale t =
      block::Nvfp4TensorScaleFromAmax(job.recipe, ArrayAbsMax(d, job.x, job.count, rule));
  *job.tensor_scale = t;
  HWY_ALIGN std::uint32_t padded[kBlock] = {};
  HWY_ALIGN std::uint8_t codes_buffer[kBlock] = {};
  for (std::size_t start = 0, b = 0; start < job.count; start += kBlock, ++b) {
    const std::size_t n = job.count - start < kBlock ? job.count - start : kBlock;
    const std::uint32_t* bits = reinterpret_cast<const std::uint32_t*>(job.x + start);
    if (n < kBlock) {
      std::memset(padded, 0, sizeof(padded));
      std::memcpy(padded, job.x + start, n * sizeof(float));
      bits = padded;
    }
    bool any_nan = false;
    const std::uint32_t amax_bits = AbsMaxBits(d, bits, kBlock, &any_nan);
    // A NaN block (rare): the model's loop, which keeps the first NaN.
    const float amax = any_nan && rule == block::AmaxNan::kPropagate
                           ? block::AbsMax(reinterpret_cast<const float*>(bits),
                                           static_cast<long>(kBlock), rule)
                           : block::F32FromBits(amax_bits);
    std::uint8_t scale_code = 0;
    const auto factor = hn::Set(df, Nvfp4BlockFactor(job.recipe, t, amax, &scale_code));
    job.scales[b] = scale_code;
    std::uint8_t* out = n < kBlock ? codes_buffer : job.codes + start;
    for (std::size_t i = 0; i < kBlock; i += lanes) {
      const V xb = hn::LoadU(d, bits + i);
      V y;
      if (job.recipe == block::Nvfp4Recipe::kTe) {
        y = hn::BitCast(d, hn::Mul(hn::BitCast(df, xb), factor));  // mul_cvt_fp32_to_fp4
      } else {
        // torchao's clamp to +-6 before its cast changes no E2M1 code (the
        // conversion saturates and a NaN passes the clamp), so it is left out.
        y = hn::BitCast(d, hn::Div(hn::BitCast(df, xb), factor));
        if (job.recipe == block::Nvfp4Recipe::kModelOpt) {
          // _cast_fp4: sign = (x < 0), so -0.0 gives code 0 (docs/formats-reference.md §4.5).
          y = hn::IfThenZeroElse(hn::Eq(y, hn::Set(d, kSignBit32)), y);
        }
      }
      StoreCodes<1>(d, EncodeVector<RoundingMode::kNearestEven, PlanKind::kThreshold>(
                           d, y, hn::Zero(d), plan),
                    out, i);
    }
    if (n < kBlock) std::memcpy(job.codes + start, codes_buffer, n);
  }
}

// MX dequantization (mx_recipe.h DequantizeMxBlock): element value times X,
// one FP32 multiply per element, from the model's decode table.
inline void DequantizeMx(const MxDequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const hn::Rebind<std::uint8_t, D32> d8;
  const std::size_t lanes = hn::Lanes(d);
  const std::size_t block_size = static_cast<std::size_t>(job.spec->block_size);
  const bool small = job.spec->element->total_bits <= 4;
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
    const std::uint8_t scale_code = job.scales[b];
    const auto scale = hn::Set(
        df, scale_code == block::kE8m0NanCode
                ? block::F32FromBits(block::kF32CanonicalNan)
                : block::F32Pow2(static_cast<int>(scale_code) - block::kF32Bias));
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

// Two 4-bit codes per byte, element 0 in the low nibble (packing.h
// PackNibbles, NibbleOrder::kLowFirst): a byte pair read as a little-endian
// 16-bit lane is c0 | c1 << 8, and (c0 & 15) | (c1 & 15) << 4 is its packed
// byte.
inline void PackNibblesLowFirst(const PackJob& job) {
  const hn::ScalableTag<std::uint16_t> d16;
  const hn::RebindToSigned<decltype(d16)> di16;
  const hn::Rebind<std::uint8_t, decltype(di16)> d8;
  const std::size_t lanes = hn::Lanes(d16);
  const std::size_t pairs = job.count / 2;
  std::size_t i = 0;
  for (; i + lanes <= pairs; i += lanes) {
    const auto v = hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(job.codes) + i);
    const auto packed = hn::Or(hn::And(v, hn::Set(d16, 0x000F)),
                               hn::And(hn::ShiftRight<4>(v), hn::Set(d16, 0x00F0)));
    // Packed bytes are <= 255: the saturating i16 -> u8 demote is exact.
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di16, packed)), d8, job.packed + i);
  }
  for (; i < pairs; ++i) {
    job.packed[i] = static_cast<std::uint8_t>((job.codes[2 * i] & 0xF) |
                                              ((job.codes[2 * i + 1] & 0xF) << 4));
  }
  if (job.count % 2) job.packed[pairs] = job.codes[job.count - 1] & 0xF;
}

// NVFP4 dequantization (nvfp4_recipe.h DequantizeNvfp4Element): TE
// (q * s) * S, the others q * (s * S), in those FP32 orders. E2M1 codes are
// never NaN, so only TE's second multiply can meet two NaNs (a NaN scale byte
// and a NaN tensor scale): the first operand wins, as on x86, and is named
// here so that the compiler commuting the multiply cannot change bits.
inline void DequantizeNvfp4(const Nvfp4DequantizeJob& job) {
  const D32 d;
  const DF32 df;
  const hn::Rebind<std::uint8_t, D32> d8;
  constexpr std::size_t kBlock = 16;
  const std::size_t lanes = hn::Lanes(d);
  const bool te = job.recipe == block::Nvfp4Recipe::kTe;
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
    const float s = DecodeToF32(kE4m3, job.scales[b]);
    const auto first = hn::Set(df, te ? s : s * tensor);
    const auto second = hn::Set(df, tensor);
    for (std::size_t i = 0; i < kBlock; i += lanes) {
      const V index = hn::And(hn::PromoteTo(d, hn::LoadU(d8, codes + i)), hn::Set(d, 0xFu));
      const auto q = hn::BitCast(df, LookUp<true>(d, job.table, index));
      auto value = hn::Mul(q, first);
      if (te) {
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
