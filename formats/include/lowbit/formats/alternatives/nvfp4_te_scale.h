// A named alternative to the model's NVFP4 block-scale step for the TE rule
// (recipe::ChooseScale with ScaleRule::kNvfp4Te, recipe/steps.h): the same
// FP32 operations in the same order, with the UE4M3 conversion and decode
// supplied by the caller. The CUDA kernel passes the cuda-hw instructions
// cvt.rn.satfinite.e4m3x2.f32 and cvt.rn.f16x2.e4m3x2 (one instruction each,
// where the model's generic rounding takes dozens once per 8 elements of an
// arithmetic-bound kernel; bench/RESULTS-archive-2026.md "CUDA"); cuda/src/nvfp4.cu
// static_asserts that their rule is the recipe's scale rule.
// proptests/backends/alternatives_test.cc passes the model's own conversion and
// checks code, factor and decode against recipe::ChooseScale on
// boundary-biased and random (amax, tensor amax) pairs; the instructions are
// swept against the model on all their inputs by the cuda-hw tests.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::alternatives {

// The model's UE4M3 conversion for a recipe's block scale, as a codec.
struct ModelScaleCodec {
  recipe::Recipe r;
  LOWBIT_HD_CONSTEXPR std::uint8_t Encode(float v) const {
    return static_cast<std::uint8_t>(EncodeF32(r.scale_format, v, recipe::detail::Nvfp4ScaleOptions(r)).code);
  }
  LOWBIT_HD_CONSTEXPR float Decode(std::uint8_t code) const { return DecodeToF32(r.scale_format, code); }
};

// TE compute_decoding_scaling_factor and the element factor, in the order
// recipe::detail::ChooseNvfp4Scale writes them: rule_value =
// fminf(amax * (S_enc * fp32(1/6)), FLT_MAX), code = the UE4M3 conversion,
// factor = fminf(1 / (decode(code) * S_dec), FLT_MAX). `codec` has
// Encode(float) -> code and Decode(code) -> float.
template <typename Codec>
LOWBIT_HD_CONSTEXPR recipe::BlockScale ChooseNvfp4TeScale(const recipe::Recipe& r, float amax,
                                                          const recipe::TensorScale& t, const Codec& codec) {
  recipe::BlockScale s;
  const float element_max_inv = 1.0f / recipe::MaxFiniteF32(r.element);
  s.rule_value = recipe::FminfFltMax(amax * (t.encode * element_max_inv));
  s.code = codec.Encode(s.rule_value);
  s.decode = codec.Decode(s.code);
  s.factor = recipe::FminfFltMax(1.0f / (s.decode * t.decode));
  return s;
}

}  // namespace lowbit::alternatives
