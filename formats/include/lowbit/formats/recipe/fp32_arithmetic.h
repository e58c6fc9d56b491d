// The FP32 building blocks of the recipe steps (steps.h lists them all):
// values derived from the formats (never retyped) and small FP32 helpers in
// the sources' own semantics (torch, CUDA), host and device alike. Each step
// is the FP32 arithmetic of the implementation a recipe reproduces, in its
// order (docs/formats-reference.md §5.3, §6, §7, §8.2): plain `float`
// operations, IEEE binary32 round-to-nearest-even on the host and on CUDA
// devices built without -ftz / --use_fast_math (E8M0 code 0 is the FP32
// subnormal 2^-127, §3.1). Device code passes a recipe by value (a kernel
// parameter or a constexpr local), never a reference to a host constant.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::recipe {

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
LOWBIT_HD_CONSTEXPR float TorchMax(float a, float b) { return MaxPropagatingNan(a, b); }
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
// NaN bits as x86's divss / mulss (F32WithX86Nan).
LOWBIT_HD_CONSTEXPR float TorchDivideByScalar(const Recipe& r, float a, float divisor) {
  return r.scalar_divisor_as_reciprocal ? F32MulAsX86(a, 1.0f / divisor) : F32DivAsX86(a, divisor);
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
  if (code == kE8m0NanCode) return F32FromBits(kF32CanonicalNan);
  return F32Pow2(kF32Bias - static_cast<int>(code));
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

}  // namespace lowbit::recipe
