// Step 4 of a recipe (steps.h): one element, from its FP32 value to its
// code: the scaled value handed to the element conversion, the integer of a
// scaled recipe, and the encode (with the parameters through which a kernel
// passes named alternatives proven equal to the model's).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

// The FP32 value handed to the element conversion.
LOWBIT_HD_CONSTEXPR float ScaledElement(const Recipe& r, const BlockScale& s, float x) {
  // MX: x / NaN is a NaN whose sign the hardware picks (x86 keeps the first
  // NaN operand); the model fixes it to +NaN so codes are reproducible.
  if (r.family() == Family::kMx && s.code == kE8m0NanCode) return F32FromBits(kF32CanonicalNan);
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
  if (r.element_quirk == ElementQuirk::kNegativeZeroAsPositive && F32Bits(y) == kF32SignMask) y = 0.0f;
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
  // Written as selects rather than an early return (the same integer for
  // every y): a kernel then runs it without a branch an element.
  const bool nan = F32IsNan(F32Bits(y));
  const float lo = static_cast<float>(r.qmin - zero_point);
  const float hi = static_cast<float>(r.qmax - zero_point);
  const float c = nan ? lo : (y < lo ? lo : (y > hi ? hi : y));
  const std::int32_t q =
      static_cast<std::int32_t>(arithmetic.RoundToInteger(c, r.element_encode.rounding)) + zero_point;
  return nan ? 0 : q;
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
LOWBIT_HD_CONSTEXPR float AwqScaledElement(const BlockScale& s, float x, const Arithmetic& arithmetic = {}) {
  return arithmetic.F16Rounded(arithmetic.F16Rounded(x) / s.factor);
}

// AutoAWQ's two integers, split so that a kernel can take the second as a
// function of the first (it reads nothing of x but q0): the quantizer's
// q0 = clamp(round(fp16(w) / s) + z, 0, 15) ...
template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::int32_t AwqIntegerWith(const Recipe& r, const BlockScale& s, float x,
                                                const Arithmetic& arithmetic = {}) {
  return IntegerOfScaledWith(r, s.zero_point, AwqScaledElement(s, x, arithmetic), arithmetic);
}

// ... and from_linear's round((W + z * s) / s) for that q0, W = (q0 - z) * s.
template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::int32_t AwqRepackedIntegerWith(const BlockScale& s, std::int32_t q0,
                                                        const Arithmetic& arithmetic = {}) {
  const float weight = arithmetic.F16Rounded(static_cast<float>(q0 - s.zero_point) * s.factor);
  const float scale_zero = arithmetic.F16Rounded(static_cast<float>(s.zero_point) * s.factor);
  const float t = arithmetic.F16Rounded(arithmetic.F16Rounded(weight + scale_zero) / s.decode);
  const bool finite = F32IsFinite(F32Bits(t));
  return finite ? static_cast<std::int32_t>(arithmetic.RoundToInteger(t, RoundingMode::kNearestEven)) : 0;
}

template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t EncodeAwqElement(const Recipe& r, const BlockScale& s, float x,
                                                  const Arithmetic& arithmetic = {}) {
  const std::int32_t q = AwqRepackedIntegerWith(s, AwqIntegerWith(r, s, x, arithmetic), arithmetic);
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & r.element.CodeMask());
}

// A recipe whose stored integer the checkpoint packer recomputes from the
// quantizer's (ElementQuirk::kRepackWithFp16Scale: GPTQ and AWQ with FP16
// scales) in two steps: QuantizerIntegerWith, the quantizer's q0 of x, and
// RepackedCodeWith, the code the packer stores for that q0, which reads
// nothing of x. EncodeElementWith of such a recipe is
// RepackedCodeWith(r, s, QuantizerIntegerWith(r, s, x)) (the steps above
// and EncodeScaledWith, in the same order), so a kernel may hold the
// second as a table of the group's 16 codes
// (proptests/model/repacked_code_test.cc).
template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::int32_t QuantizerIntegerWith(const Recipe& r, const BlockScale& s, float x,
                                                      const Arithmetic& arithmetic = {}) {
  if (r.scale_rule == ScaleRule::kAwqAsymmetric) return AwqIntegerWith(r, s, x, arithmetic);
  return IntegerOfScaledWith(r, s.zero_point, ScaledElement(r, s, x), arithmetic);
}

template <typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t RepackedCodeWith(const Recipe& r, const BlockScale& s, std::int32_t q0,
                                                  const Arithmetic& arithmetic = {}) {
  const std::int32_t q = r.scale_rule == ScaleRule::kAwqAsymmetric ? AwqRepackedIntegerWith(s, q0, arithmetic)
                                                                   : RepackedIntegerWith(s, q0, arithmetic);
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & r.element.CodeMask());
}

template <typename ElementEncode, typename Arithmetic = ElementArithmeticOfModel>
LOWBIT_HD_CONSTEXPR std::uint8_t EncodeElementWith(const Recipe& r, const BlockScale& s, float x,
                                                   const ElementEncode& encode_element,
                                                   const Arithmetic& arithmetic = {}) {
  if (r.scale_rule == ScaleRule::kAwqAsymmetric) return EncodeAwqElement(r, s, x, arithmetic);
  return EncodeScaledWith(r, s, ScaledElement(r, s, x), encode_element, arithmetic);
}

// The scaled value of x that EncodeElement rounds: ScaledElement, or for
// AutoAWQ its FP16 quotient (what a trace shows beside the code).
LOWBIT_HD_CONSTEXPR float ScaledValueEncoded(const Recipe& r, const BlockScale& s, float x) {
  if (r.scale_rule == ScaleRule::kAwqAsymmetric) return AwqScaledElement(s, x);
  return ScaledElement(r, s, x);
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

}  // namespace lowbit::recipe
