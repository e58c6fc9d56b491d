// MX recipes: a scale rule plus the exact FP32 operation order of one
// implementation, and the quantize / dequantize of MX blocks they define.
// Profiles (the named recipes of the OCP spec, microxcaling, TE and torchao)
// are in mx_profiles.h.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/mx_scale_rule.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"

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

// What one block went through, for `lowbit explain` and for tests that look
// at intermediate steps. Filled only when the caller passes one.
struct MxTrace {
  float amax = 0;
  MxScale scale;
  // The FP32 value handed to the element conversion: x / X or x * 2^-e
  // (MXINT8: that times 2^6, the integer grid).
  float scaled[kMaxBlockSize] = {};
};

// FP32 2^-e for an E8M0 code, as TE's exp2f_rcp and torchao's
// _e8m0_scale_to_reciprocal_fp32 build it from bits: code 254 -> 2^-127 (an
// FP32 subnormal), 0xFF -> NaN.
LOWBIT_HD_CONSTEXPR float E8m0ReciprocalF32(std::uint8_t code) {
  if (code == kE8m0NanCode) return F32FromBits(kF32CanonicalNan);
  return F32Pow2(kF32Bias - static_cast<int>(code));
}

// Quantizes x[0..n), n <= spec.block_size, into element codes (one per byte,
// in the low bits) and returns the E8M0 scale code. A last block shorter
// than block_size behaves as if padded with zeros (zeros never raise amax).
LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeMxBlock(const BlockSpec& spec, const MxRecipe& recipe,
                                                 const float* x, int n, std::uint8_t* codes,
                                                 MxTrace* trace = nullptr) {
  const float amax = AbsMax(x, n, recipe.amax_nan);
  const MxScale scale = ChooseMxScale(spec, amax, recipe.scale);
  const float divisor = DecodeToF32(kE8m0, scale.code);  // X, or NaN
  const float reciprocal = E8m0ReciprocalF32(scale.code);
  if (trace) {
    trace->amax = amax;
    trace->scale = scale;
  }
  for (int i = 0; i < n; ++i) {
    float y = recipe.scaling == ElementScaling::kDivide ? x[i] / divisor : x[i] * reciprocal;
    // x / NaN is a NaN whose sign the hardware picks (x86 keeps the first NaN
    // operand); the model fixes it to +NaN so that codes are reproducible.
    if (scale.code == kE8m0NanCode) y = F32FromBits(kF32CanonicalNan);
    if (!spec.element->IsFloat()) {
      // Onto the integer grid: y * 2^6 for MXINT8 (exact, a power of two).
      y = y * F32Pow2(-spec.element_implied_exponent);
      std::int64_t v = static_cast<std::int64_t>(EncodeF32(*spec.element, y, recipe.element).code);
      if (v > spec.element->IntMax()) v -= static_cast<std::int64_t>(spec.element->CodeMask()) + 1;
      if (v > spec.element_int_max) v = spec.element_int_max;
      if (v < -spec.element_int_max) v = -spec.element_int_max;
      codes[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) & spec.element->CodeMask());
    } else {
      codes[i] = static_cast<std::uint8_t>(EncodeF32(*spec.element, y, recipe.element).code);
    }
    if (trace) trace->scaled[i] = y;
  }
  return scale.code;
}

// Element code -> FP32 value of the element alone (MXINT8 includes 2^-6).
LOWBIT_HD_CONSTEXPR float DecodeMxElement(const BlockSpec& spec, std::uint8_t code) {
  const float v = DecodeToF32(*spec.element, code);
  return spec.element->IsFloat() ? v : v * F32Pow2(spec.element_implied_exponent);
}

// x_i = element_i * X as one FP32 multiply; a NaN scale makes every element
// NaN ([OCP-MX §5.4.1] 0xFF is NaN; docs/formats-reference.md §5.1).
LOWBIT_HD_CONSTEXPR void DequantizeMxBlock(const BlockSpec& spec, std::uint8_t scale_code,
                                           const std::uint8_t* codes, int n, float* out) {
  const float scale = DecodeToF32(kE8m0, scale_code);
  for (int i = 0; i < n; ++i) out[i] = DecodeMxElement(spec, codes[i]) * scale;
}

// Whole arrays: count elements, ceil(count / block_size) scales; the last
// block may be partial.
LOWBIT_HD_CONSTEXPR int BlockCount(const BlockSpec& spec, long count) {
  return static_cast<int>((count + spec.block_size - 1) / spec.block_size);
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
