// MX recipes: a scale rule plus the exact FP32 operation order of one
// implementation, and the quantize / dequantize of MX blocks they define.
// Profiles (the named recipes of the OCP spec, microxcaling, TE and torchao)
// are in mx_profiles.h.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/mx_scale_rule.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::block {

// How the elements are brought into the element range once X = 2^e is known.
enum class ElementScaling : std::uint8_t {
  kDivide,               // x / X          ([OCP-MX §6.3] "Vi/X", [MSX] A / 2**shared_exp)
  kMultiplyReciprocal,   // x * fp32(2^-e) ([TE] exp2f_rcp, [AO] _e8m0_scale_to_reciprocal_fp32)
};

struct MxRecipe {
  const char* name;        // CLI spelling, e.g. "te", "ao-floor"
  const char* source;      // docs/formats-reference.md §0 key and the function it reproduces
  MxScaleOptions scale;
  AmaxNan amax_nan;
  ElementScaling scaling;
  // Element conversion policy (rounding, saturation, NaN). Integer elements
  // (MXINT8) use its rounding and clamp to +-BlockSpec::element_int_max.
  EncodeOptions element;
};

// The legacy (BlockSpec, MxRecipe) pair as the one recipe shape
// (recipe/recipe.h). Every arithmetic step below is recipe/steps.h's; these
// functions only keep the older call shape for callers not yet moved to it.
LOWBIT_HD_CONSTEXPR recipe::Recipe ToRecipe(const BlockSpec& spec, const MxRecipe& m) {
  recipe::Recipe r{};
  r.name = spec.name;
  r.profile = m.name;
  r.source = m.source;
  r.element = *spec.element;
  r.element_encode = m.element;
  r.layout = {recipe::Geometry::kBlock1d, spec.block_size, 0};
  r.scale_format = *spec.scale;
  switch (m.scale.rule) {
    case MxScaleRule::kFloor: r.scale_rule = recipe::ScaleRule::kMxFloor; break;
    case MxScaleRule::kCeil: r.scale_rule = recipe::ScaleRule::kMxCeil; break;
    case MxScaleRule::kEven: r.scale_rule = recipe::ScaleRule::kMxEven; break;
    case MxScaleRule::kRceil: r.scale_rule = recipe::ScaleRule::kMxRceil; break;
    case MxScaleRule::kNearest: r.scale_rule = recipe::ScaleRule::kMxNearest; break;
    case MxScaleRule::kRceilEager: r.scale_rule = recipe::ScaleRule::kMxRceilEager; break;
  }
  r.amax_nan = m.amax_nan;
  r.element_step = m.scaling == ElementScaling::kDivide ? recipe::ElementStep::kDivide : recipe::ElementStep::kMultiply;
  r.packing = spec.element->total_bits == 4 ? recipe::Packing::kNibblesLowFirst : recipe::Packing::kOnePerByte;
  r.element_emax = spec.element_emax;
  r.element_implied_exponent = spec.element_implied_exponent;
  r.qmin = -static_cast<int>(spec.element_int_max);
  r.qmax = static_cast<int>(spec.element_int_max);
  r.scale_saturate = m.scale.saturate;
  r.zero_amax_as_min_normal = m.scale.zero_amax_as_min_normal;
  return r;
}

// FP32 2^-e for an E8M0 code (recipe::E8m0ReciprocalF32).
using recipe::E8m0ReciprocalF32;

// Quantizes x[0..n), n <= spec.block_size, into element codes (one per byte,
// in the low bits) and returns the E8M0 scale code. A last block shorter
// than block_size behaves as if padded with zeros (zeros never raise amax).
LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeMxBlock(const BlockSpec& spec, const MxRecipe& mx,
                                                 const float* x, int n, std::uint8_t* codes) {
  const recipe::Recipe r = ToRecipe(spec, mx);
  const recipe::GroupStats stats = recipe::StatsOf(r, x, n);
  const recipe::BlockScale s = recipe::ChooseScale(r, stats);
  for (int i = 0; i < n; ++i) {
    const float y = recipe::ScaledElement(r, s, x[i]);
    codes[i] = recipe::EncodeScaled(r, s, y);
  }
  return s.code;
}

// Element code -> FP32 value of the element alone (MXINT8 includes 2^-6).
LOWBIT_HD_CONSTEXPR float DecodeMxElement(const BlockSpec& spec, std::uint8_t code) {
  const float v = DecodeToF32(*spec.element, code);
  return spec.element->IsFloat() ? v : v * F32Pow2(spec.element_implied_exponent);
}

// x_i = element_i * X as one FP32 multiply; a NaN scale makes every element
// NaN (recipe::DecodeElement).
LOWBIT_HD_CONSTEXPR void DequantizeMxBlock(const BlockSpec& spec, std::uint8_t scale_code,
                                           const std::uint8_t* codes, int n, float* out) {
  MxRecipe any{};
  const recipe::Recipe r = ToRecipe(spec, any);  // dequantization reads no profile field
  const recipe::BlockScale s = recipe::StoredScale(r, scale_code, 0.0f, 0);
  for (int i = 0; i < n; ++i) out[i] = recipe::DecodeElement(r, s, {}, codes[i]);
}

// Whole arrays: count elements, ceil(count / block_size) scales; the last
// block may be partial.
LOWBIT_HD_CONSTEXPR long BlockCount(const BlockSpec& spec, long count) {
  return count / spec.block_size + (count % spec.block_size != 0 ? 1 : 0);  // no count + k - 1 wrap
}

LOWBIT_HD_CONSTEXPR void QuantizeMx(const BlockSpec& spec, const MxRecipe& recipe, const float* x,
                                    long count, std::uint8_t* codes, std::uint8_t* scales) {
  for (long start = 0, b = 0; start < count; start += spec.block_size, ++b) {
    const int n = static_cast<int>(count - start < spec.block_size ? count - start : spec.block_size);
    scales[b] = QuantizeMxBlock(spec, recipe, x + start, n, codes + start);
  }
}

LOWBIT_HD_CONSTEXPR void DequantizeMx(const BlockSpec& spec, const std::uint8_t* codes,
                                      const std::uint8_t* scales, long count, float* out) {
  for (long start = 0, b = 0; start < count; start += spec.block_size, ++b) {
    const int n = static_cast<int>(count - start < spec.block_size ? count - start : spec.block_size);
    DequantizeMxBlock(spec, scales[b], codes + start, n, out + start);
  }
}

}  // namespace lowbit::block
