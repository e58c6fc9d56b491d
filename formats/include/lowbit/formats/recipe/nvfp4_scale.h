// Step 3 for the NVFP4 family (scale_rule_list.h, family nvfp4): the
// UE4M3 block scale from the block amax and the tensor scale,
// docs/formats-reference.md §6.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::recipe {

namespace detail {

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

// The block scale's UE4M3 conversion (under Nvfp4ScaleOptions) and decode,
// as a parameter of ChooseNvfp4Scale, so that a kernel can pass the
// hardware's conversions where they are proven equal to these
// (proptests/backends/nvfp4_scale_codec_test.cc); everything around them
// stays this file's.
struct Nvfp4ScaleCodecOfModel {
  LOWBIT_HD_CONSTEXPR std::uint8_t Encode(const Recipe& r, float v) const {
    return static_cast<std::uint8_t>(EncodeF32(r.scale_format, v, Nvfp4ScaleOptions(r)).code);
  }
  LOWBIT_HD_CONSTEXPR float Decode(const Recipe& r, std::uint8_t code) const {
    return DecodeToF32(r.scale_format, code);
  }
};

template <typename Codec = Nvfp4ScaleCodecOfModel>
LOWBIT_HD_CONSTEXPR BlockScale ChooseNvfp4Scale(const Recipe& r, float amax, const TensorScale& t,
                                                const Codec& codec = {}) {
  BlockScale s;
  const float scale_max = MaxFiniteF32(r.scale_format);  // 448
  const float element_max = MaxFiniteF32(r.element);     // 6
  switch (r.scale_rule) {
    case ScaleRule::kNvfp4Te: {
      // compute_decoding_scaling_factor: block_amax * (S_enc * fp32(1/6)).
      const float element_max_inv = 1.0f / element_max;
      s.rule_value = FminfFltMax(amax * (t.encode * element_max_inv));
      s.code = codec.Encode(r, s.rule_value);
      // block_scale_inverse = fminf(1 / (float(S_dec_b_fp8) * S_dec), FLT_MAX).
      s.factor = FminfFltMax(1.0f / (codec.Decode(r, s.code) * t.decode));
      break;
    }
    case ScaleRule::kNvfp4Torchao:
    case ScaleRule::kNvfp4Torchao018: {
      // block_scale = max_abs / 6; scaled = block_scale / per_tensor_scale;
      // clamp(min=E4M3_EPS=2^-6, max=448); total = pts * fp8; x / total.
      const float smallest_normal = Nvfp4TorchaoScaleFloor(r);  // 2^-6
      s.rule_value = TorchClamp((amax / element_max) / t.decode, smallest_normal, scale_max);
      s.code = codec.Encode(r, s.rule_value);
      if (r.scale_rule == ScaleRule::kNvfp4Torchao018) {
        // torchao 0.18: reciprocal_scale = (1.0 / per_tensor_scale) /
        // fp8_scale, x * reciprocal_scale. For pts below ~2^-128 the
        // reciprocal is Inf and so is the factor.
        s.factor = (1.0f / t.decode) / codec.Decode(r, s.code);
      } else {
        // pts * fp8_scale. With two NaN operands (a NaN tensor scale and the
        // NaN code 0x7F) which NaN a multiply returns is the compiler's
        // choice of operand order on x86 and 0x7FFFFFFF on NVIDIA; the first
        // as written wins (F32MulAsX86), so host, device and
        // the vector form agree on the factor's bits.
        s.factor = F32MulAsX86(t.decode, codec.Decode(r, s.code));
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
      s.code = codec.Encode(r, s.rule_value);
      // fp8 * wsf2, the first NaN as written winning (see torchao above).
      s.factor = F32MulAsX86(codec.Decode(r, s.code), t.decode);
      break;
    }
    default:
      break;
  }
  s.decode = codec.Decode(r, s.code);
  return s;
}

}  // namespace detail

}  // namespace lowbit::recipe
