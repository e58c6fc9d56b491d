// NVFP4 recipes: E2M1 elements, 16-element blocks, a UE4M3 block scale and an
// FP32 per-tensor scale. TE, torchao and ModelOpt compute the same idea with
// different FP32 operations, floors and zero guards (docs/formats-reference.md §6,
// §9 row 11); each is written out here in its own order.
#pragma once

#include <cstdint>
#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"

namespace lowbit::block {

enum class Nvfp4Recipe : std::uint8_t {
  kTe,        // [TE] core_nvfp4.cuh / quantize_transpose_nvfp4.cuh
  kTorchao,   // [AO] nvfp4_tensor._nvfp4_quantize, two-level
  kModelOpt,  // [MO] NVFP4QTensor.quantize
};

inline constexpr float kF32Max = 3.40282347e38f;  // 0x7F7FFFFF
// 448 * 6: E4M3 max times E2M1 max, a constexpr product in TE and a Python
// float in torchao / ModelOpt (exact in FP32).
inline constexpr float kNvfp4GlobalRange = 448.0f * 6.0f;
static_assert(kNvfp4GlobalRange == 2688.0f);

struct Nvfp4TensorScale {
  // TE's encode scale S_enc (2688 / amax, guarded). Unused by the others.
  float encode = 1.0f;
  // The stored FP32 per-tensor scale that dequantization multiplies by:
  // TE S_dec = 1/S_enc; torchao per_tensor_scale and ModelOpt
  // weights_scaling_factor_2 = amax / 2688.
  float decode = 1.0f;
};

struct Nvfp4Trace {
  float amax = 0;               // block amax
  float block_scale_f32 = 0;    // the FP32 value handed to the E4M3 conversion
  std::uint8_t scale_code = 0;  // UE4M3 byte
  float element_factor = 0;     // TE: the multiplier enc_b; others: the divisor
  float scaled[kMaxBlockSize] = {};
};

LOWBIT_HD_CONSTEXPR AmaxNan Nvfp4AmaxNan(Nvfp4Recipe r) {
  return r == Nvfp4Recipe::kTe ? AmaxNan::kIgnore : AmaxNan::kPropagate;
}

LOWBIT_HD_CONSTEXPR Nvfp4TensorScale Nvfp4TensorScaleFromAmax(Nvfp4Recipe recipe, float amax) {
  Nvfp4TensorScale t;
  if (recipe == Nvfp4Recipe::kTe) {
    // compute_global_encode_scaling_factor_FP4: fminf(2688 / amax, FLT_MAX);
    // "If global amax is 0 or infinity, return 1".
    float s_enc = kNvfp4GlobalRange / amax;
    s_enc = s_enc < kF32Max ? s_enc : kF32Max;  // fminf; amax is never NaN in TE
    if (amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
    t.encode = s_enc;
    // S_dec = 1.0 / S_enc in double, narrowed: "to match with how emulation
    // code was written" (double rounding is innocuous for a quotient).
    t.decode = static_cast<float>(1.0 / static_cast<double>(s_enc));
    return t;
  }
  // torchao per_tensor_amax_to_scale and ModelOpt get_weights_scaling_factor_2:
  // amax.float() / (448 * 6), an FP32 division, no guard.
  t.decode = amax / kNvfp4GlobalRange;
  t.encode = 0.0f;
  return t;
}

namespace detail {

LOWBIT_HD_CONSTEXPR EncodeOptions Nvfp4ScaleOptions(Nvfp4Recipe recipe) {
  EncodeOptions o;  // RNE
  // TE: static_cast<fp8e4m3>(fminf(x, FLT_MAX)) is cvt.rn.satfinite.
  // torchao / ModelOpt: torch .to(float8_e4m3fn), non-saturating in torch
  // <= 2.12; their inputs are clamped to <= 448 (torchao) or <= ~448.
  o.overflow = recipe == Nvfp4Recipe::kTe ? Overflow::kSaturate : Overflow::kFormatDefault;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return o;
}

LOWBIT_HD_CONSTEXPR EncodeOptions Nvfp4ElementOptions() {
  EncodeOptions o;  // RNE, E2M1 saturates (no Inf/NaN), NaN -> +6
  o.overflow = Overflow::kSaturate;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return o;
}

LOWBIT_HD_CONSTEXPR float ClampF32(float x, float lo, float hi) {
  // torch.clamp: NaN passes through.
  if (F32IsNan(F32Bits(x))) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}

}  // namespace detail

// Quantizes x[0..n), n <= 16, with the tensor scale already chosen; returns
// the UE4M3 scale byte. A short last block behaves as zero-padded.
LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeNvfp4Block(Nvfp4Recipe recipe, const Nvfp4TensorScale& t,
                                                    const float* x, int n, std::uint8_t* codes,
                                                    Nvfp4Trace* trace = nullptr) {
  const float amax = AbsMax(x, n, Nvfp4AmaxNan(recipe));
  float block_scale = 0;
  float factor = 0;
  std::uint8_t scale_code = 0;
  const EncodeOptions scale_options = detail::Nvfp4ScaleOptions(recipe);
  switch (recipe) {
    case Nvfp4Recipe::kTe: {
      // compute_decoding_scaling_factor: block_amax * (S_enc * fp32(1/6)).
      const float fp4_max_inv = 1.0f / 6.0f;
      block_scale = amax * (t.encode * fp4_max_inv);
      block_scale = block_scale < kF32Max ? block_scale : kF32Max;
      scale_code = static_cast<std::uint8_t>(EncodeF32(kE4m3, block_scale, scale_options).code);
      // block_scale_inverse = fminf(1 / (float(S_dec_b_fp8) * S_dec), FLT_MAX).
      const float inv = 1.0f / (DecodeToF32(kE4m3, scale_code) * t.decode);
      factor = inv < kF32Max ? inv : kF32Max;
      break;
    }
    case Nvfp4Recipe::kTorchao: {
      // block_scale = max_abs / 6; scaled = block_scale / per_tensor_scale;
      // clamp(min=E4M3_EPS=2^-6, max=448); total = pts * fp8; x / total.
      block_scale = detail::ClampF32((amax / 6.0f) / t.decode, F32Pow2(-6), 448.0f);
      scale_code = static_cast<std::uint8_t>(EncodeF32(kE4m3, block_scale, scale_options).code);
      factor = t.decode * DecodeToF32(kE4m3, scale_code);
      break;
    }
    case Nvfp4Recipe::kModelOpt: {
      // per_block_amax / (6.0 * wsf2); == 0 -> 1.0; clamp(min=2^-9);
      // x / (fp8 * wsf2).
      block_scale = amax / (6.0f * t.decode);
      if (block_scale == 0.0f) block_scale = 1.0f;
      if (!F32IsNan(F32Bits(block_scale)) && block_scale < F32Pow2(-9)) block_scale = F32Pow2(-9);
      scale_code = static_cast<std::uint8_t>(EncodeF32(kE4m3, block_scale, scale_options).code);
      factor = DecodeToF32(kE4m3, scale_code) * t.decode;
      break;
    }
  }
  const EncodeOptions element_options = detail::Nvfp4ElementOptions();
  for (int i = 0; i < n; ++i) {
    float y = 0;
    if (recipe == Nvfp4Recipe::kTe) {
      y = x[i] * factor;  // mul_cvt_fp32_to_fp4_4x_with_rn
    } else {
      y = x[i] / factor;
      // torchao clamps to +-6 before its cast; the E2M1 conversion saturates
      // anyway, so the clamp changes nothing but is kept for the trace.
      if (recipe == Nvfp4Recipe::kTorchao) y = detail::ClampF32(y, -6.0f, 6.0f);
    }
    // ModelOpt _cast_fp4: sign = (x < 0), so -0.0 gives code 0 while a
    // negative value rounding to zero gives 0x8 (docs/formats-reference.md §4.5).
    if (recipe == Nvfp4Recipe::kModelOpt && F32Bits(y) == kF32SignMask) y = 0.0f;
    // NaN: TE cvt.rn.satfinite and ModelOpt searchsorted give +6; torchao's
    // bit trick gives an unspecified code (docs/formats-reference.md §4.5): +6 here too.
    codes[i] = static_cast<std::uint8_t>(EncodeF32(kE2m1, y, element_options).code);
    if (trace) trace->scaled[i] = y;
  }
  if (trace) {
    trace->amax = amax;
    trace->block_scale_f32 = block_scale;
    trace->scale_code = scale_code;
    trace->element_factor = factor;
  }
  return scale_code;
}

// x_i = (e2m1_i * scale_b) * S: TE (GEMM alpha = S_dec), ModelOpt dequantize
// multiplies q by (scale * double_scale), torchao likewise (assumed: the
// product pts * scale is the one its quantizer divided by).
LOWBIT_HD_CONSTEXPR float DequantizeNvfp4Element(Nvfp4Recipe recipe, const Nvfp4TensorScale& t,
                                                 std::uint8_t scale_code, std::uint8_t code) {
  const float q = DecodeToF32(kE2m1, code);
  const float s = DecodeToF32(kE4m3, scale_code);
  if (recipe == Nvfp4Recipe::kTe) return F32MulFirstNanWins(F32MulFirstNanWins(q, s), t.decode);
  return F32MulFirstNanWins(q, F32MulFirstNanWins(s, t.decode));
}

LOWBIT_HD_CONSTEXPR Nvfp4TensorScale QuantizeNvfp4(Nvfp4Recipe recipe, const float* x, long count,
                                                   std::uint8_t* codes, std::uint8_t* scales) {
  const Nvfp4TensorScale t =
      Nvfp4TensorScaleFromAmax(recipe, AbsMax(x, count, Nvfp4AmaxNan(recipe)));
  for (long start = 0, b = 0; start < count; start += 16, ++b) {
    const int n = static_cast<int>(count - start < 16 ? count - start : 16);
    scales[b] = QuantizeNvfp4Block(recipe, t, x + start, n, codes + start);
  }
  return t;
}

LOWBIT_HD_CONSTEXPR void DequantizeNvfp4(Nvfp4Recipe recipe, const Nvfp4TensorScale& t,
                                         const std::uint8_t* codes, const std::uint8_t* scales,
                                         long count, float* out) {
  for (long i = 0; i < count; ++i) out[i] = DequantizeNvfp4Element(recipe, t, scales[i / 16], codes[i]);
}

constexpr bool FindNvfp4Recipe(std::string_view name, Nvfp4Recipe* out) {
  if (name == "te") *out = Nvfp4Recipe::kTe;
  else if (name == "ao") *out = Nvfp4Recipe::kTorchao;
  else if (name == "modelopt") *out = Nvfp4Recipe::kModelOpt;
  else return false;
  return true;
}

}  // namespace lowbit::block
