// The model's block and group steps over one recipe (recipe.h), host and
// device alike: statistics, tensor scale, scale choice, element encode and
// dequantize. Kernels (simd/, cuda/) call these steps, or a named alternative
// proven equal to one of them, so no maximum, scale formula or NaN rule is
// written twice (docs/design.md "Recipes are data too").
//
// Each step is the FP32 arithmetic of the implementation a recipe
// reproduces, in its order (docs/formats-reference.md §5.3, §6, §7, §8.2):
// plain `float` operations, IEEE binary32 round-to-nearest-even on the host
// and on CUDA devices built without -ftz / --use_fast_math (E8M0 code 0 is
// the FP32 subnormal 2^-127, §3.1). Device code passes a recipe by value
// (a kernel parameter or a constexpr local), never a reference to a host
// constant.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

using block::F32Abs;
using block::F32Bits;
using block::F32FromBits;
using block::F32IsFinite;
using block::F32IsNan;
using block::F32Pow2;

inline constexpr float kF32Max = 3.40282347e38f;  // FLT_MAX
static_assert(kF32Max == F32FromBits(0x7F7FFFFFu));
inline constexpr std::uint8_t kE8m0NanCode = 0xFF;  // [OCP-MX §5.4.1]

// ---- values derived from the formats (never retyped) ------------------------

// Largest finite value of a float format as FP32 (E4M3 448, E5M2 57344,
// E2M1 6, ...).
LOWBIT_HD_CONSTEXPR float MaxFiniteF32(const FormatSpec& f) { return DecodeToF32(f, f.MaxFiniteCode()); }

// The largest element magnitude of a recipe, in FP32: the float element's max,
// or qmax * 2^implied_exponent for integer MX elements (MXINT8 127/64).
LOWBIT_HD_CONSTEXPR float ElementMaxF32(const Recipe& r) {
  return r.element.IsFloat() ? MaxFiniteF32(r.element)
                             : static_cast<float>(r.qmax) * F32Pow2(r.element_implied_exponent);
}

// fp32(1 / max_elem): TE Quantized_Limits<T>::max_norm_rcp, torchao 1.0 / max_pos
// (fp32(1/448) = 0x3B124925, fp32(1/6) = 0x3E2AAAAB; recipe tests pin both).
LOWBIT_HD_CONSTEXPR float MaxNormReciprocal(const Recipe& r) { return 1.0f / ElementMaxF32(r); }

// NVFP4's tensor range: block scale max (UE4M3 448) times element max (E2M1 6)
// = 2688, exact in FP32 (TE, torchao and ModelOpt all use this product).
LOWBIT_HD_CONSTEXPR float TensorRange(const Recipe& r) {
  return MaxFiniteF32(r.scale_format) * MaxFiniteF32(r.element);
}

// ---- small FP32 helpers in the sources' own semantics -----------------------

// torch.minimum / torch.maximum: a NaN operand propagates.
LOWBIT_HD_CONSTEXPR float TorchMin(float a, float b) {
  if (F32IsNan(F32Bits(a))) return a;
  if (F32IsNan(F32Bits(b))) return b;
  return b < a ? b : a;
}
LOWBIT_HD_CONSTEXPR float TorchMax(float a, float b) { return block::MaxPropagatingNan(a, b); }
// torch.clamp: NaN passes through.
LOWBIT_HD_CONSTEXPR float TorchClamp(float x, float lo, float hi) {
  if (F32IsNan(F32Bits(x))) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}
// CUDA fminf against FLT_MAX, as TE writes it (operands here are never NaN
// except where noted, and then fminf returns the other operand: FLT_MAX).
LOWBIT_HD_CONSTEXPR float FminfFltMax(float x) { return x < kF32Max ? x : kF32Max; }
// A torch tensor divided by a Python float or a CPU scalar tensor: one FP32
// division on the CPU; on CUDA a multiply by the FP32 reciprocal of the
// divisor (ATen div_true_kernel_cuda, Recipe::scalar_divisor_as_reciprocal).
// NaN bits as x86's divss / mulss (block::F32WithX86Nan).
LOWBIT_HD_CONSTEXPR float TorchDivideByScalar(const Recipe& r, float a, float divisor) {
  return r.scalar_divisor_as_reciprocal ? block::F32MulAsX86(a, 1.0f / divisor) : block::F32DivAsX86(a, divisor);
}

// torch .to(int32) of an FP32 integer value; NaN and +-Inf -> 0 (the CPU
// result, §8.1).
LOWBIT_HD_CONSTEXPR std::int32_t TorchToInt(float v) {
  return F32IsFinite(F32Bits(v)) ? static_cast<std::int32_t>(v) : 0;
}

// round(y) for a finite |y| < 2^15 as an FP32 integer value, through the
// model's one RoundPack (a 16-bit integer grid; saturates outside, which no
// caller reaches).
inline constexpr FormatSpec kRoundingGrid16{"int16", FormatKind::kInteger, 16, true, 0, 0, 0, true,
                                            SpecialCodes::kNone};
LOWBIT_HD_CONSTEXPR float RoundToIntegerF32(float y, RoundingMode mode) {
  constexpr FormatSpec kGrid = kRoundingGrid16;  // a local copy device code can read
  EncodeOptions o;
  o.rounding = mode;
  o.overflow = Overflow::kSaturate;
  const std::uint64_t code = EncodeF32(kGrid, y, o).code;
  const std::int64_t v = code & 0x8000u ? static_cast<std::int64_t>(code) - 0x10000 : static_cast<std::int64_t>(code);
  return static_cast<float>(v);
}

// FP32 2^-e for an E8M0 code, built from bits as TE exp2f_rcp and torchao
// _e8m0_scale_to_reciprocal_fp32 do: 254 -> 2^-127 (subnormal), 0xFF -> NaN.
LOWBIT_HD_CONSTEXPR float E8m0ReciprocalF32(std::uint8_t code) {
  if (code == kE8m0NanCode) return F32FromBits(block::kF32CanonicalNan);
  return F32Pow2(block::kF32Bias - static_cast<int>(code));
}

// The element factor of an MX block whose scale is `code` (decoded to
// `decode`): the scale itself for a dividing recipe, 2^-e for a multiplying
// one, and for torchao 0.18's eager RCEIL 1.0 at code 0
// (torch.where(exponent == 0, 1.0, exp2(127 - exponent))). Shared by
// ChooseScale and the kernels' alternatives (alternatives/mx_block.h).
LOWBIT_HD_CONSTEXPR float MxElementFactor(const Recipe& r, std::uint8_t code, float decode) {
  if (r.scale_rule == ScaleRule::kMxRceilEager && code == 0) return 1.0f;
  return r.element_step == ElementStep::kDivide ? decode : E8m0ReciprocalF32(code);
}

// torch `.half()` of an FP32 value read back as FP32 (GPTQ / AWQ store
// their scales so): round to nearest even; above the FP16 range Inf
// (65520 and up; 65504 is the largest finite); below 2^-24 subnormal or 0
// (2^-25 ties to 0); a NaN keeps its sign and becomes the quiet NaN 0x7E00
// (c10 fp16_ieee_from_fp32_value). Exact in FP32 both ways.
LOWBIT_HD_CONSTEXPR EncodeOptions F16ScaleOptions() {
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  o.overflow = Overflow::kFormatDefault;
  o.nan_sign = NanSign::kKeep;
  o.nan_payload = NanPayload::kQuietOnly;
  return o;
}
LOWBIT_HD_CONSTEXPR std::uint16_t F16CodeOfScale(float v) {
  constexpr FormatSpec kHalf = kFp16;  // a local copy device code can read
  return static_cast<std::uint16_t>(EncodeF32(kHalf, v, F16ScaleOptions()).code);
}
LOWBIT_HD_CONSTEXPR float F16RoundedF32(float v) {
  constexpr FormatSpec kHalf = kFp16;
  return DecodeToF32(kHalf, F16CodeOfScale(v));
}

// ---- step 1: statistics of a block or group ---------------------------------

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
  return rule == AmaxNan::kIgnore ? block::MaxIgnoringNan(a, b) : block::MaxPropagatingNan(a, b);
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
  s.amax = block::MaxPropagatingNan(F32Abs(lo), F32Abs(hi));
  return s;
}

// ---- step 2: the tensor-level scale (NVFP4's second level) ------------------

struct TensorScale {
  float encode = 1.0f;  // TE's S_enc; 0 for the recipes that do not use it
  float decode = 1.0f;  // the stored FP32 scale dequantization multiplies by
};

LOWBIT_HD_CONSTEXPR TensorScale ChooseTensorScale(const Recipe& r, float tensor_amax) {
  TensorScale t;
  switch (r.tensor_scale) {
    case TensorScaleRule::kNone:
      return t;
    case TensorScaleRule::kTeGlobalEncode: {
      // compute_global_encode_scaling_factor_FP4: fminf(2688 / amax, FLT_MAX);
      // "if global amax is 0 or infinity, return 1" (amax is never NaN there).
      float s_enc = FminfFltMax(TensorRange(r) / tensor_amax);
      if (tensor_amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
      t.encode = s_enc;
      // S_dec = 1.0 / S_enc in double, narrowed ("to match how emulation code
      // was written"; double rounding is innocuous for a quotient).
      t.decode = static_cast<float>(1.0 / static_cast<double>(s_enc));
      return t;
    }
    case TensorScaleRule::kAmaxOverRange:
      // amax.float() / (448 * 6), no guard; a NaN amax keeps the host's NaN bits
      // on the device too (block::F32DivAsX86).
      t.decode = block::F32DivAsX86(tensor_amax, TensorRange(r));
      t.encode = 0.0f;
      return t;
  }
  return t;
}

// ---- step 3: the scale of one block or group ---------------------------------

// What a scale choice produced: what is stored (code or FP32 value, zero
// point), the factor the element step multiplies or divides by, and the
// intermediate values `lowbit explain` shows.
struct BlockScale {
  std::uint8_t code = 0;        // MX: E8M0 byte; NVFP4: UE4M3 byte; scaled: unused
  float decode = 1.0f;          // the FP32 value dequantization multiplies the element by
  float factor = 1.0f;          // what the element step multiplies or divides by
  std::int32_t zero_point = 0;  // scaled recipes with a zero point
  int exponent = 0;             // MX: e = code - 127 (meaningless for 0xFF)
  // The FP32 value the rule handed to its conversion: MX RCEIL / nearest
  // amax * fp32(1/max); NVFP4 the block scale before E4M3; scaled: the scale.
  float rule_value = 0.0f;
};

namespace detail {

// The E8M0 exponent rules read amax's FP32 exponent bits (never a float
// log2: FP32 log2 of an amax just below a power of two rounds up,
// docs/design.md "Known traps (measured)").
// torchao's eager RCEIL: ceil(log2(d)) with log2 in FP32 (correctly rounded,
// as the log2f of glibc and of torch's CPU kernels is on these inputs). For
// d = 2^k * (1 + f), 0 < f < 1, the exact log2 lies in (k, k + 1); FP32
// rounds it back to k exactly when log2(1 + f) is below half the FP32
// spacing next to k on the side of k + log2(1 + f), and then the ceiling is
// k, not k + 1. Half that spacing is a power of two 2^-j (j >= 18 here), so
// the test is f < 2^(2^-j) - 1, with 2^h - 1 = sum (h ln 2)^n / n! (four
// terms are exact to far below one FP32 ulp of f; the nearest f = m * 2^-23
// stays 0.09 ulp or more from each threshold, docs/formats-reference.md §5.3).
LOWBIT_HD_CONSTEXPR int RceilEagerExponent(float d) {
  const std::uint32_t bits = F32Bits(d);
  int k = block::F32ExponentField(bits) - block::kF32Bias;
  std::uint32_t mantissa = block::F32Mantissa(bits);
  if (block::F32ExponentField(bits) == 0) {  // subnormal: normalize
    k = 1 - block::kF32Bias;
    while ((mantissa & (1u << block::kF32MantissaBits)) == 0) {
      mantissa <<= 1;
      --k;
    }
    mantissa &= (1u << block::kF32MantissaBits) - 1;
  }
  if (mantissa == 0) return k;
  // The FP32 spacing next to k toward k + log2(1 + f): above k for k > 0;
  // below |k| for k < 0, halved when |k| is a power of two. k = 0 and k = -1
  // never round back (log2(1 + f) >= 2^-23 / ln 2 > half the spacing there).
  if (k == 0 || k == -1) return k + 1;
  const int magnitude = k > 0 ? k : -k;
  int log2_magnitude = 0;
  while ((2 << log2_magnitude) <= magnitude) ++log2_magnitude;
  int spacing_exponent = log2_magnitude - block::kF32MantissaBits;
  if (k < 0 && magnitude == (1 << log2_magnitude)) --spacing_exponent;
  const double half_spacing_ln2 = 0.69314718055994530942 * static_cast<double>(F32Pow2(spacing_exponent - 1));
  const double t = half_spacing_ln2;
  const double threshold = t + t * t / 2 + t * t * t / 6 + t * t * t * t / 24;  // 2^h - 1
  const double f = static_cast<double>(mantissa) * static_cast<double>(F32Pow2(-block::kF32MantissaBits));
  return f < threshold ? k : k + 1;
}

LOWBIT_HD_CONSTEXPR BlockScale ChooseMxScale(const Recipe& r, float amax) {
  BlockScale s;
  if (r.scale_rule == ScaleRule::kMxRceilEager) {
    // descale = max_abs / max_pos (FP32 division); NaN -> 255, Inf -> 254;
    // else clamp(ceil(log2(descale)), -127, 127) + 127 (0 -> log2 -Inf -> 0).
    s.rule_value = amax / ElementMaxF32(r);
    const std::uint32_t bits = F32Bits(s.rule_value);
    int e = -block::kF32Bias;
    if (F32IsNan(bits)) {
      s.code = kE8m0NanCode;
      return s;
    }
    if (!F32IsFinite(bits)) {
      e = block::kF32Bias;
    } else if ((bits & ~block::kF32SignMask) != 0) {
      e = RceilEagerExponent(s.rule_value);
      e = e < -block::kF32Bias ? -block::kF32Bias : (e > block::kF32Bias ? block::kF32Bias : e);
    }
    s.exponent = e;
    s.code = static_cast<std::uint8_t>(e + block::kF32Bias);
    return s;
  }
  if (r.scale_rule == ScaleRule::kMxRceil || r.scale_rule == ScaleRule::kMxNearest) {
    s.rule_value = amax * MaxNormReciprocal(r);
    EncodeOptions e8m0;
    e8m0.rounding = r.scale_rule == ScaleRule::kMxRceil ? RoundingMode::kUp : RoundingMode::kNearestEven;
    e8m0.overflow = r.scale_saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
    e8m0.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;  // 0 -> 2^-127 (0x00)
    e8m0.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
    s.code = static_cast<std::uint8_t>(EncodeF32(r.scale_format, s.rule_value, e8m0).code);
    s.exponent = static_cast<int>(s.code) - block::kF32Bias;
    return s;
  }
  std::uint32_t bits = F32Bits(amax) & ~block::kF32SignMask;
  if (r.scale_rule == ScaleRule::kMxEven && !F32IsNan(bits)) {
    const int mbits = r.element.mantissa_bits;
    bits = (bits + (std::uint32_t{1} << (block::kF32MantissaBits - mbits - 1))) & block::kF32ExponentMask;
  }
  if (!F32IsFinite(bits)) {
    s.code = kE8m0NanCode;
    return s;
  }
  int e = block::F32ExponentField(bits) - block::kF32Bias;
  if (r.scale_rule == ScaleRule::kMxCeil && block::F32Mantissa(bits) != 0) ++e;
  if (bits == 0 && r.zero_amax_as_min_normal) e = 1 - block::kF32Bias;
  e -= r.element_emax;
  if (e < -block::kF32Bias) e = -block::kF32Bias;  // E8M0 range -127..127 [OCP-MX §5.4.1]
  if (e > block::kF32Bias) {                      // [MSX]: > 127 -> NaN
    s.code = kE8m0NanCode;
    return s;
  }
  s.exponent = e;
  s.code = static_cast<std::uint8_t>(e + block::kF32Bias);
  return s;
}

// UE4M3 block scales: RNE; TE's static_cast<fp8e4m3>(fminf(x, FLT_MAX)) is
// cvt.rn.satfinite; torch .to(float8_e4m3fn) does not saturate (torch <=
// 2.12), but torchao and ModelOpt clamp their inputs to <= 448 first.
LOWBIT_HD_CONSTEXPR EncodeOptions Nvfp4ScaleOptions(const Recipe& r) {
  EncodeOptions o;
  o.overflow = r.scale_rule == ScaleRule::kNvfp4Te ? Overflow::kSaturate : Overflow::kFormatDefault;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return o;
}

// The floors of the NVFP4 block scale, from the scale format: torchao clamps
// to E4M3_EPS, UE4M3's smallest normal 2^-6; ModelOpt to UE4M3's smallest
// subnormal 2^-9 (static_asserts in simd/src/block_scale-inl.h pin both).
// Named so that the vector form of the step (VectorNvfp4Scale there) reads
// the same values.
LOWBIT_HD_CONSTEXPR float Nvfp4TorchaoScaleFloor(const Recipe& r) {
  return F32Pow2(r.scale_format.MinNormalExponent());
}
LOWBIT_HD_CONSTEXPR float Nvfp4ModelOptScaleFloor(const Recipe& r) {
  return F32Pow2(r.scale_format.MinNormalExponent() - r.scale_format.mantissa_bits);
}

LOWBIT_HD_CONSTEXPR BlockScale ChooseNvfp4Scale(const Recipe& r, float amax, const TensorScale& t) {
  BlockScale s;
  const float scale_max = MaxFiniteF32(r.scale_format);  // 448
  const float element_max = MaxFiniteF32(r.element);     // 6
  const EncodeOptions scale_options = Nvfp4ScaleOptions(r);
  switch (r.scale_rule) {
    case ScaleRule::kNvfp4Te: {
      // compute_decoding_scaling_factor: block_amax * (S_enc * fp32(1/6)).
      const float element_max_inv = 1.0f / element_max;
      s.rule_value = FminfFltMax(amax * (t.encode * element_max_inv));
      s.code = static_cast<std::uint8_t>(EncodeF32(r.scale_format, s.rule_value, scale_options).code);
      // block_scale_inverse = fminf(1 / (float(S_dec_b_fp8) * S_dec), FLT_MAX).
      s.factor = FminfFltMax(1.0f / (DecodeToF32(r.scale_format, s.code) * t.decode));
      break;
    }
    case ScaleRule::kNvfp4Torchao:
    case ScaleRule::kNvfp4Torchao018: {
      // block_scale = max_abs / 6; scaled = block_scale / per_tensor_scale;
      // clamp(min=E4M3_EPS=2^-6, max=448); total = pts * fp8; x / total.
      const float smallest_normal = Nvfp4TorchaoScaleFloor(r);  // 2^-6
      s.rule_value = TorchClamp((amax / element_max) / t.decode, smallest_normal, scale_max);
      s.code = static_cast<std::uint8_t>(EncodeF32(r.scale_format, s.rule_value, scale_options).code);
      if (r.scale_rule == ScaleRule::kNvfp4Torchao018) {
        // torchao 0.18: reciprocal_scale = (1.0 / per_tensor_scale) /
        // fp8_scale, x * reciprocal_scale. For pts below ~2^-128 the
        // reciprocal is Inf and so is the factor.
        s.factor = (1.0f / t.decode) / DecodeToF32(r.scale_format, s.code);
      } else {
        // pts * fp8_scale. With two NaN operands (a NaN tensor scale and the
        // NaN code 0x7F) which NaN a multiply returns is the compiler's
        // choice of operand order on x86 and 0x7FFFFFFF on NVIDIA; the first
        // as written wins (block::F32MulFirstNanWins), so host, device and
        // the vector form agree on the factor's bits.
        s.factor = block::F32MulFirstNanWins(t.decode, DecodeToF32(r.scale_format, s.code));
      }
      break;
    }
    case ScaleRule::kNvfp4ModelOpt:
    case ScaleRule::kNvfp4ModelOpt047: {
      // per_block_amax / (6.0 * wsf2); == 0 -> 1.0; clamp(min=2^-9);
      // x / (fp8 * wsf2). 2^-9 is UE4M3's smallest subnormal.
      const float smallest_subnormal = Nvfp4ModelOptScaleFloor(r);
      s.rule_value = amax / (element_max * t.decode);
      if (s.rule_value == 0.0f) s.rule_value = 1.0f;
      if (!F32IsNan(F32Bits(s.rule_value)) && s.rule_value < smallest_subnormal) s.rule_value = smallest_subnormal;
      // 0.47: clamp(min=2^-9, max=448), so Inf and > 448 give 448 (0x7E).
      if (r.scale_rule == ScaleRule::kNvfp4ModelOpt047 && s.rule_value > scale_max) s.rule_value = scale_max;
      s.code = static_cast<std::uint8_t>(EncodeF32(r.scale_format, s.rule_value, scale_options).code);
      // fp8 * wsf2, the first NaN as written winning (see torchao above).
      s.factor = block::F32MulFirstNanWins(DecodeToF32(r.scale_format, s.code), t.decode);
      break;
    }
    default:
      break;
  }
  s.decode = DecodeToF32(r.scale_format, s.code);
  return s;
}

// TE compute_scale_from_amax (recipe_common.cuh), in its order:
//   1. amax < eps -> amax = eps                  (a NaN compares false)
//   2. amax Inf, 0 or NaN -> scale 1             (the all-zero guard)
//   3. scale = max_fp8 / amax                    (FP32 division, RN)
//   4. scale Inf -> FLT_MAX                      (amax too small)
//   5. force_pow_2_scales: keep sign + exponent bits (round down to 2^k)
LOWBIT_HD_CONSTEXPR float TeScaleFromAmax(float amax, float max_fp8, bool force_pow_2_scales, float epsilon) {
  if (amax < epsilon) amax = epsilon;
  if (!F32IsFinite(F32Bits(amax)) || amax == 0.0f) return 1.0f;
  float scale = max_fp8 / amax;
  if (!F32IsFinite(F32Bits(scale))) scale = kF32Max;
  if (force_pow_2_scales) scale = F32FromBits(F32Bits(scale) & (block::kF32SignMask | block::kF32ExponentMask));
  return scale;
}

// A group holding a NaN has a NaN scale; its bits are pinned to the host's
// (block::F32DivAsX86 / F32SubAsX86 / F32WithX86Nan) so that the device
// computes the same scale bytes.
LOWBIT_HD_CONSTEXPR BlockScale ChooseScaledScale(const Recipe& r, const GroupStats& st) {
  using block::F32DivAsX86;
  using block::F32SubAsX86;
  BlockScale s;
  const float qmin = static_cast<float>(r.qmin);
  const float qmax = static_cast<float>(r.qmax);
  switch (r.scale_rule) {
    case ScaleRule::kTeFp8: {
      s.factor = TeScaleFromAmax(st.amax, MaxFiniteF32(r.element), r.pow2_scale, r.eps);
      s.decode = 1.0f / s.factor;  // reciprocal(): __frcp_rn, the stored scale_inv
      s.rule_value = s.factor;
      return s;
    }
    case ScaleRule::kAoSymmetric: {
      const float min_neg = TorchMin(st.min, 0.0f);
      float max_pos = TorchMax(st.max, 0.0f);
      max_pos = TorchMax(-min_neg, max_pos);
      const float half_range = (qmax - qmin) / 2.0f;  // 127.5 or 7.5, exact
      float scale = TorchDivideByScalar(r, max_pos, half_range);
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;  // torch.clamp(min=eps)
      s.decode = scale;
      s.factor = F32DivAsX86(1.0f, scale);  // input * (1.0 / scale): __rtruediv__ is reciprocal() * 1.0
      s.zero_point = (r.qmax + r.qmin + 1) / 2;  // int((qmax + qmin + 1) / 2): 0 for [-128,127], [-8,7]
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAoAsymmetric: {
      const float min_neg = TorchMin(st.min, 0.0f);
      const float max_pos = TorchMax(st.max, 0.0f);
      const float range = F32SubAsX86(max_pos, min_neg);
      float scale = TorchDivideByScalar(r, range, qmax - qmin);
      if (!F32IsNan(F32Bits(scale)) && scale < r.eps) scale = r.eps;
      // quant_min - torch.round(min_val_neg / scale), then clamp. The ratio
      // lies in [-(qmax - qmin), 0] up to rounding, or is NaN (a NaN input,
      // or -Inf / Inf): a NaN zero point casts to 0. An infinite ratio
      // (unreachable while eps > 0) clamps like torch.clamp.
      const float ratio = F32DivAsX86(min_neg, scale);
      float zp = ratio;
      if (F32IsFinite(F32Bits(ratio))) {
        zp = qmin - RoundToIntegerF32(ratio, RoundingMode::kNearestEven);
      } else if (!F32IsNan(F32Bits(ratio))) {
        zp = -ratio;  // qmin - round(+-Inf) = -+Inf
      }
      if (!F32IsNan(F32Bits(zp))) zp = zp < qmin ? qmin : (zp > qmax ? qmax : zp);
      s.decode = scale;
      s.factor = F32DivAsX86(1.0f, scale);
      s.zero_point = TorchToInt(zp);
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kGptqSymmetric:
    case ScaleRule::kGptqAsymmetric: {
      // xmin = minimum(x.min(1), 0); xmax = maximum(x.max(1), 0).
      float xmin = TorchMin(st.min, 0.0f);
      float xmax = TorchMax(st.max, 0.0f);
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        xmax = TorchMax(F32Abs(xmin), xmax);
        if (xmin < 0.0f) xmin = -xmax;  // only rows with a negative value
      }
      if (xmin == 0.0f && xmax == 0.0f) {  // all-zero row: xmin = -1, xmax = +1
        xmin = -1.0f;
        xmax = 1.0f;
      }
      const float scale = F32DivAsX86(F32SubAsX86(xmax, xmin), qmax);  // maxq = 2^bits - 1
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      if (r.scale_rule == ScaleRule::kGptqSymmetric) {
        s.zero_point = (r.qmax + 1) / 2;  // (maxq + 1) / 2 = 8
      } else {
        // torch.round(-xmin / scale), no clamp. A scale that underflows to 0
        // (a subnormal range) gives Inf, which the integer cast makes 0.
        const float z = F32DivAsX86(-xmin, scale);
        s.zero_point = TorchToInt(F32IsFinite(F32Bits(z)) ? RoundToIntegerF32(z, RoundingMode::kNearestEven) : z);
      }
      // Stored as FP16 (QuantLinear.pack: scales.clone().half()); the
      // quantizer's integers still come from the FP32 scale (factor).
      if (r.element_quirk == ElementQuirk::kRepackWithFp16Scale) s.decode = F16RoundedF32(scale);
      return s;
    }
    case ScaleRule::kAwqAsymmetric: {
      // AutoAWQ quantizes the layer cast to FP16 (AwqQuantizer._apply_quant:
      // linear_layer.half(), then pseudo_quantize_tensor), so every step is
      // an FP16 operation: torch computes each in FP32 and rounds it to FP16,
      // which for one +, -, * or / of FP16 operands is the correctly rounded
      // FP16 result (FP32 has 2 * 11 + 2 bits). max_val = w.amax, min_val =
      // w.amin of the FP16 weights (rounding is monotone: the FP16 min and
      // max; a NaN wins, AutoAWQ asserts there is none, the model carries
      // it through); scales = (max_val - min_val).clamp(min=1e-5) / max_int,
      // the clamp against Half(1e-5) (torch.clamp keeps NaN).
      const float lo = F16RoundedF32(st.min);
      const float hi = F16RoundedF32(st.max);
      const float range = F16RoundedF32(F32SubAsX86(hi, lo));
      const float eps = F16RoundedF32(r.eps);
      const float floored = !F32IsNan(F32Bits(range)) && range < eps ? eps : range;
      const float scale = F16RoundedF32(F32DivAsX86(floored, qmax));
      // zeros = (-torch.round(min_val / scales)).clamp_(0, max_int). The
      // ratio may pass the 16-bit rounding grid (min far from 0 with a small
      // range): RoundToIntegerF32 saturates keeping the sign, and the clamp
      // to [0, maxq] gives the same as the exact integer would. NaN stays
      // NaN through round and clamp_, and .to(torch.int32) makes it 0
      // (TorchToInt); -Inf / Inf (an infinite min) is NaN too.
      const float ratio = F16RoundedF32(F32DivAsX86(lo, scale));  // FP16: may overflow to +-Inf
      float zp = ratio;
      if (F32IsFinite(F32Bits(ratio))) {
        zp = -RoundToIntegerF32(ratio, RoundingMode::kNearestEven);
        zp = zp < 0.0f ? 0.0f : (zp > qmax ? qmax : zp);
      } else if (!F32IsNan(F32Bits(ratio))) {
        zp = ratio < 0.0f ? qmax : 0.0f;  // -round(-+Inf) = +-Inf, clamped
      }
      s.factor = scale;  // already an FP16 value: .half() in from_linear changes nothing
      s.decode = scale;
      s.zero_point = TorchToInt(zp);
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kVllmFp8PerTensor:
    case ScaleRule::kVllmFp8PerToken: {
      // amax by fmaxf (NaN ignored; Recipe::amax_nan), / 448 in FP32. Per
      // tensor: no floor (amax 0 gives scale 0, a factor 1 / 0 = Inf and,
      // through the clamp, code +448 for every element: vLLM's own result);
      // per token: fmaxf(amax / 448, 1 / (448 * 512)) (min_scaling_factor).
      const float max_fp8 = MaxFiniteF32(r.element);
      float scale = st.amax / max_fp8;
      if (r.scale_rule == ScaleRule::kVllmFp8PerToken) {
        const float min_scale = 1.0f / (max_fp8 * 512.0f);
        scale = block::MaxIgnoringNan(scale, min_scale);  // fmaxf: a NaN (from a calibrated range) gives the floor
        s.factor = scale;                                // x / scale ("to match FBGemm")
      } else {
        s.factor = 1.0f / scale;  // inverted_scale = 1.0f / (*scale); x * inverted_scale
      }
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kVllmFp8KvCache:
      // No statistic: the default static scale 1.0 (a given one replaces it,
      // tensor.h QuantizeTensorWithGivenScales).
      s.factor = 1.0f;
      s.decode = 1.0f;
      s.rule_value = 1.0f;
      return s;
    case ScaleRule::kVllmFp8KvCalculated: {
      // vLLM calc_kv_scales: torch.abs(x).max() (a NaN wins; Recipe::
      // amax_nan) / a CPU range tensor, which torch on CUDA computes as amax
      // * fp32(1 / range) (the catalog sets scalar_divisor_as_reciprocal). No
      // floor: an all-zero tensor gets scale 0, and x / 0 makes every element
      // NaN (0x7F after __NV_SATFINITE), as vLLM would.
      const float scale = TorchDivideByScalar(r, st.amax, static_cast<float>(r.amax_divisor));
      s.factor = scale;  // the cache divides: x / k_scale
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAmaxOverQmaxFloored: {
      // amax.clamp(min=eps) / qmax (torch.clamp keeps NaN), one FP32 division.
      const float amax = !F32IsNan(F32Bits(st.amax)) && st.amax < r.eps ? r.eps : st.amax;
      const float scale = F32DivAsX86(amax, qmax);
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    case ScaleRule::kAmaxOverQmax: {
      float scale = F32DivAsX86(st.amax, qmax);
      if (scale == 0.0f) scale = 1.0f;  // all-zero group (or amax / qmax underflowing to 0)
      s.factor = scale;
      s.decode = scale;
      s.rule_value = scale;
      return s;
    }
    default:
      return s;
  }
}

}  // namespace detail

// The scale of one block or group from its statistics (and, for NVFP4, the
// tensor scale already chosen).
LOWBIT_HD_CONSTEXPR BlockScale ChooseScale(const Recipe& r, const GroupStats& stats, const TensorScale& t = {}) {
  switch (r.family()) {
    case Family::kMx: {
      BlockScale s = detail::ChooseMxScale(r, stats.amax);
      s.decode = DecodeToF32(r.scale_format, s.code);  // X, or NaN
      s.factor = MxElementFactor(r, s.code, s.decode);
      return s;
    }
    case Family::kNvfp4:
      return detail::ChooseNvfp4Scale(r, stats.amax, t);
    case Family::kScaled:
      return detail::ChooseScaledScale(r, stats);
  }
  return {};
}

// Whether ChooseScale(r, stats, t) depends on stats.amax alone, never on
// stats.min or stats.max: then a kernel may keep only the amax
// (AccumulateAmaxOnly, CombineAmaxOnly) and hand ChooseScale EmptyStats'
// min and max. MX and NVFP4 pass ChooseMxScale / ChooseNvfp4Scale only
// stats.amax (and the tensor scale). Of ChooseScaledScale's rules, those
// listed read st.amax or no statistic at all; torchao's, GPTQ's and AWQ's
// read st.min / st.max, and a rule added later counts as reading them until
// it is listed here (proptests/model/scale_reads_only_amax_test.cc checks
// every catalog recipe both ways).
LOWBIT_HD_CONSTEXPR bool ScaleReadsOnlyAmax(const Recipe& r) {
  switch (r.family()) {
    case Family::kMx:
    case Family::kNvfp4:
      return true;
    case Family::kScaled:
      break;
  }
  switch (r.scale_rule) {
    case ScaleRule::kTeFp8:
    case ScaleRule::kVllmFp8PerTensor:
    case ScaleRule::kVllmFp8PerToken:
    case ScaleRule::kVllmFp8KvCache:
    case ScaleRule::kVllmFp8KvCalculated:
    case ScaleRule::kAmaxOverQmaxFloored:
    case ScaleRule::kAmaxOverQmax:
      return true;
    default:  // kAoSymmetric, kAoAsymmetric, kGptq*, kAwqAsymmetric, and any other
      return false;
  }
}

// The block scale that dequantization needs, from what was stored: a scale
// byte (MX, NVFP4) or an FP32 scale and zero point (scaled recipes).
LOWBIT_HD_CONSTEXPR BlockScale StoredScale(const Recipe& r, std::uint8_t code, float scale, std::int32_t zero_point) {
  BlockScale s;
  s.code = code;
  s.zero_point = zero_point;
  s.decode = r.family() == Family::kScaled ? scale : DecodeToF32(r.scale_format, code);
  return s;
}

// ---- step 4: one element --------------------------------------------------------

// The FP32 value handed to the element conversion.
LOWBIT_HD_CONSTEXPR float ScaledElement(const Recipe& r, const BlockScale& s, float x) {
  // MX: x / NaN is a NaN whose sign the hardware picks (x86 keeps the first
  // NaN operand); the model fixes it to +NaN so codes are reproducible.
  if (r.family() == Family::kMx && s.code == kE8m0NanCode) return F32FromBits(block::kF32CanonicalNan);
  float y = r.element_step == ElementStep::kDivide ? x / s.factor : x * s.factor;
  // A signalling NaN x comes out of the FP32 multiply quiet; a compiler that
  // sees a factor of exactly 1.0 (ao-rceil-eager's code 0) may fold x * 1.0f
  // to x and keep it signalling, so the quiet bit is set here, which equals
  // what every hardware multiply or divide gives.
  if (r.family() == Family::kMx && F32IsNan(F32Bits(y))) y = F32FromBits(F32Bits(y) | 0x00400000u);
  // torchao clamps to +-max before its cast; the saturating conversion makes
  // it invisible in codes, but the trace shows it.
  if (r.element_quirk == ElementQuirk::kClampToMax) y = TorchClamp(y, -MaxFiniteF32(r.element), MaxFiniteF32(r.element));
  // vLLM scaled_fp8_conversion: fmaxf(-max, fminf(y, max)). fminf returns
  // the other operand for a NaN, so a NaN y becomes +max (0x7E for E4M3).
  if (r.element_quirk == ElementQuirk::kFminfFmaxfClamp) {
    const float m = MaxFiniteF32(r.element);
    y = F32IsNan(F32Bits(y)) ? m : (y < m ? y : m);
    y = -m > y ? -m : y;
  }
  // ModelOpt _cast_fp4: sign = (x < 0), so -0.0 gives code 0 while a
  // negative value that rounds to zero keeps its sign (§4.5).
  if (r.element_quirk == ElementQuirk::kNegativeZeroAsPositive && F32Bits(y) == block::kF32SignMask) y = 0.0f;
  // MX integer elements: onto the integer grid, y * 2^-implied (exact).
  if (r.family() == Family::kMx && !r.element.IsFloat()) y = y * F32Pow2(-r.element_implied_exponent);
  return y;
}

// The integer q (zero point included) of a scaled value y: NaN -> 0 (torch's
// CPU cast of the NaN that round and clamp pass through, §8.1), clamp to
// [qmin - zp, qmax - zp], round. clamp(round(y) + zp) equals round(clamp(y))
// + zp because rounding is monotone and the bounds are integers, and the
// rounded value stays small.
//
// The element step's roundings other than the element encode:
// arithmetic.RoundToInteger(y, mode) is RoundToIntegerF32(y, mode) and
// arithmetic.F16Rounded(v) is F16RoundedF32(v). IntegerOfScaledWith,
// RepackedIntegerWith and the ...With encodes below take them as one
// parameter so that a kernel can pass named alternatives proven equal to
// them on every FP32 input (alternatives/round_to_integer.h,
// alternatives/f16_rounded.h); the model passes its own.
struct ElementArithmeticOfModel {
  LOWBIT_HD_CONSTEXPR float RoundToInteger(float y, RoundingMode mode) const { return RoundToIntegerF32(y, mode); }
  LOWBIT_HD_CONSTEXPR float F16Rounded(float v) const { return F16RoundedF32(v); }
};

template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfScaledWith(const Recipe& r, std::int32_t zero_point, float y,
                                                     const Arithmetic& arithmetic = {}) {
  if (F32IsNan(F32Bits(y))) return 0;
  const float lo = static_cast<float>(r.qmin - zero_point);
  const float hi = static_cast<float>(r.qmax - zero_point);
  const float c = y < lo ? lo : (y > hi ? hi : y);
  return static_cast<std::int32_t>(arithmetic.RoundToInteger(c, r.element_encode.rounding)) + zero_point;
}

LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfScaled(const Recipe& r, std::int32_t zero_point, float y) {
  return IntegerOfScaledWith(r, zero_point, y);
}

// The integer a GPTQ / AWQ checkpoint stores for the quantizer's integer q0
// (ElementQuirk::kRepackWithFp16Scale): the packer recomputes it from the
// fake-quantized weight W = s * (q0 - z) (GPTQ quant.py quantize; AWQ
// (q0 - z) * s, the same product) as round((W + z * s) / fp16(s)) in FP32,
// with no clamp, and .to(torch.int) (NaN, +-Inf -> 0, §8.1). Here s is the
// FP32 scale (BlockScale::factor) and fp16(s) the stored one
// (BlockScale::decode). With a normal FP16 scale q == q0; a subnormal FP16
// scale can move q by several steps (even past maxq: its low bits are the
// code, as the packer's shift-OR puts them in the nibble), an Inf one gives
// 0, a zero one (s <= 2^-25) NaN or Inf, so 0. The sum is two separately
// rounded products: callers must not contract it into an FMA (CUDA builds
// with --fmad=false; simd/src/int_group_quantize.cc turns contraction off).
template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::int32_t RepackedIntegerWith(const BlockScale& s, std::int32_t q0,
                                                     const Arithmetic& arithmetic = {}) {
  const float weight = s.factor * static_cast<float>(q0 - s.zero_point);
  const float scale_zero = static_cast<float>(s.zero_point) * s.factor;
  const float t = (weight + scale_zero) / s.decode;
  if (!F32IsFinite(F32Bits(t))) return 0;
  return static_cast<std::int32_t>(arithmetic.RoundToInteger(t, RoundingMode::kNearestEven));  // |t| < 2^15 here
}

LOWBIT_HD_CONSTEXPR std::int32_t RepackedInteger(const BlockScale& s, std::int32_t q0) {
  return RepackedIntegerWith(s, q0);
}

// The model's conversion of a scaled FP32 value into the element format:
// EncodeF32 under the recipe's element options. EncodeScaledWith and
// EncodeElementWith take it as a parameter so that a kernel can pass a
// named alternative proven equal to it on every FP32 input (cuda/src/
// model_recipe.cu passes cuda/src/threshold_map.cuh's table, proven by
// cuda/tests/threshold_map_test.cu); everything around it stays this file's.
struct ElementEncodeOfModel {
  const Recipe& r;
  LOWBIT_HD_CONSTEXPR std::uint64_t operator()(float y) const { return EncodeF32(r.element, y, r.element_encode).code; }
};

// The element code of an already scaled value (one code in the low bits);
// encode_element(y) is EncodeF32(r.element, y, r.element_encode).code.
template <typename ElementEncode, typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t EncodeScaledWith(const Recipe& r, const BlockScale& s, float y,
                                                  const ElementEncode& encode_element,
                                                  const Arithmetic& arithmetic = {}) {
  if (r.element.IsFloat()) return static_cast<std::uint8_t>(encode_element(y));
  if (r.family() == Family::kMx) {
    // MXINT8: the saturating integer conversion, then +-qmax (never -128).
    std::int64_t v = static_cast<std::int64_t>(encode_element(y));
    if (v > r.element.IntMax()) v -= static_cast<std::int64_t>(r.element.CodeMask()) + 1;
    if (v > r.qmax) v = r.qmax;
    if (v < r.qmin) v = r.qmin;
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) & r.element.CodeMask());
  }
  std::int32_t q = IntegerOfScaledWith(r, s.zero_point, y, arithmetic);
  if (r.element_quirk == ElementQuirk::kRepackWithFp16Scale) q = RepackedIntegerWith(s, q, arithmetic);
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & r.element.CodeMask());
}

LOWBIT_HD_CONSTEXPR std::uint8_t EncodeScaled(const Recipe& r, const BlockScale& s, float y) {
  return EncodeScaledWith(r, s, y, ElementEncodeOfModel{r});
}

// AutoAWQ's element in FP16 arithmetic (ScaleRule::kAwqAsymmetric, its
// layer cast to FP16): pseudo_quantize_tensor's q0 = clamp(round(fp16(w) /
// s) + z, 0, 15) and W = (q0 - z) * s, then WQLinear_GEMM.from_linear's
// round((W + z * s) / s), every operation rounded to FP16 (s is the FP16
// scale). A quotient past the FP16 range is Inf and clamps; a non-finite
// final quotient casts to 0 in the low bits.
template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t EncodeAwqElement(const Recipe& r, const BlockScale& s, float x,
                                                  const Arithmetic& arithmetic = {}) {
  const float y = arithmetic.F16Rounded(arithmetic.F16Rounded(x) / s.factor);
  const std::int32_t q0 = IntegerOfScaledWith(r, s.zero_point, y, arithmetic);
  const float weight = arithmetic.F16Rounded(static_cast<float>(q0 - s.zero_point) * s.factor);
  const float scale_zero = arithmetic.F16Rounded(static_cast<float>(s.zero_point) * s.factor);
  const float t = arithmetic.F16Rounded(arithmetic.F16Rounded(weight + scale_zero) / s.decode);
  const bool finite = F32IsFinite(F32Bits(t));
  const std::int32_t q = finite ? static_cast<std::int32_t>(arithmetic.RoundToInteger(t, RoundingMode::kNearestEven)) : 0;
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & r.element.CodeMask());
}

template <typename ElementEncode, typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t EncodeElementWith(const Recipe& r, const BlockScale& s, float x,
                                                   const ElementEncode& encode_element,
                                                   const Arithmetic& arithmetic = {}) {
  if (r.scale_rule == ScaleRule::kAwqAsymmetric) return EncodeAwqElement(r, s, x, arithmetic);
  return EncodeScaledWith(r, s, ScaledElement(r, s, x), encode_element, arithmetic);
}

LOWBIT_HD_CONSTEXPR std::uint8_t EncodeElement(const Recipe& r, const BlockScale& s, float x) {
  return EncodeElementWith(r, s, x, ElementEncodeOfModel{r});
}

// The integer a code stands for (sign-extended for signed formats).
LOWBIT_HD_CONSTEXPR std::int32_t IntegerOfCode(const FormatSpec& element, std::uint8_t code) {
  const std::int32_t v = static_cast<std::int32_t>(code & element.CodeMask());
  if (!element.has_sign) return v;
  const std::int32_t half = std::int32_t{1} << (element.total_bits - 1);
  return v >= half ? v - 2 * half : v;
}

// ---- step 5: dequantize one element ---------------------------------------------

// The FP32 value of an element code: DecodeToF32 of the element format. As
// for encodes, DecodeElementWith takes it as a parameter, so that a kernel
// can pass a table of these values (cuda/src/model_recipe.cu fills one with
// this function).
struct ElementValueOfModel {
  const Recipe& r;
  LOWBIT_HD_CONSTEXPR float operator()(std::uint8_t code) const { return DecodeToF32(r.element, code); }
};

// element_value(code) is DecodeToF32(r.element, code); scaled integer
// elements do not call it.
template <typename ElementValue>
LOWBIT_HD_CONSTEXPR float DecodeElementWith(const Recipe& r, const BlockScale& s, const TensorScale& t,
                                            std::uint8_t code, const ElementValue& element_value) {
  switch (r.family()) {
    case Family::kMx: {
      // element * X as one FP32 multiply; a NaN scale makes every element
      // NaN ([OCP-MX §5.4.1]); MXINT8 elements carry their 2^-6 first.
      // The NaN bits are pinned to x86's (block::F32MulAsX86), so the model
      // compiled for the device gives the host's (NVIDIA's FP32 units return
      // 0x7FFFFFFF for every NaN).
      float v = element_value(code);
      if (!r.element.IsFloat()) v = v * F32Pow2(r.element_implied_exponent);
      return block::F32MulAsX86(v, s.decode);
    }
    case Family::kNvfp4: {
      // Two NaN operands: the first wins, quieted (block::F32MulFirstNanWins).
      const float q = element_value(code);
      if (r.dequantize_order == DequantizeOrder::kElementTimesScaleThenTensor) {
        return block::F32MulFirstNanWins(block::F32MulFirstNanWins(q, s.decode), t.decode);
      }
      return block::F32MulFirstNanWins(q, block::F32MulFirstNanWins(s.decode, t.decode));
    }
    case Family::kScaled:
      if (r.element.IsFloat()) {
        // A NaN scale wins over a NaN code, quieted: IEEE 754 §6.2 leaves the
        // choice open and compilers may commute the multiply, so it is pinned.
        if (F32IsNan(F32Bits(s.decode))) return F32FromBits(F32Bits(s.decode) | 0x00400000u);
        return block::F32MulAsX86(element_value(code), s.decode);
      }
      return block::F32MulAsX86(static_cast<float>(IntegerOfCode(r.element, code) - s.zero_point), s.decode);
  }
  return 0.0f;
}

LOWBIT_HD_CONSTEXPR float DecodeElement(const Recipe& r, const BlockScale& s, const TensorScale& t, std::uint8_t code) {
  return DecodeElementWith(r, s, t, code, ElementValueOfModel{r});
}

// ---- step 5b: dequantize one element to FP16 --------------------------------------

// Which recipes dequantize to FP16 as their kernels do: those whose scales
// are FP16 (GPTQ / AWQ checkpoints). Their dequantization is (q - z) * s in
// FP16: AutoGPTQ's torch path `scales * (weight - zeros)` and AutoAWQ's
// dequantize_gemm `(iweight - izeros) * scales` multiply an integer tensor by
// an FP16 one, i.e. the exact product rounded once to FP16 (torch computes
// in FP32 and rounds; the product of a 5-bit integer and an 11-bit
// significand is exact in FP32, so that is the one rounding).
LOWBIT_HD_CONSTEXPR bool DequantizesToF16(const Recipe& r) {
  return r.element_quirk == ElementQuirk::kRepackWithFp16Scale;
}

// The FP16 bits of a dequantized element (DequantizesToF16 recipes): the
// FP32 value of DecodeElement (exact) rounded to FP16 by round to nearest
// even, overflow to Inf, NaN quiet with its sign (F16ScaleOptions).
LOWBIT_HD_CONSTEXPR std::uint16_t DecodeElementToF16(const Recipe& r, const BlockScale& s, const TensorScale& t,
                                                     std::uint8_t code) {
  return F16CodeOfScale(DecodeElement(r, s, t, code));
}

}  // namespace lowbit::recipe
