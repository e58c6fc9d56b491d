// A named alternative to the model's recipe::F16RoundedF32 (recipe/steps.h:
// torch `.half()` of an FP32 value read back as FP32), for kernels that pass
// it to the model's steps in place of the model's own (the F16Rounded of an
// element arithmetic, recipe::EncodeAwqElement).
//
// The model encodes through its generic RoundPack and decodes through its
// generic DecodeToF32; AutoAWQ's element step rounds to FP16 six times an
// element, which kept the AWQ-fp16 model recipe quantize ALU-bound on the
// H200 (bench/RESULTS.md "GPU roofline"). Here a non-NaN value takes the
// integer conversions of alternatives/f32_f16_bf16.h (EncodeF32BitsToF16,
// then DecodeF16ToF32Bits), which equal the model's under the format
// defaults; F16ScaleOptions differs from those defaults only in the NaN
// payload (kQuietOnly), so a NaN takes the model.
//
// Proof: proptests/backends/f16_rounded_test.cc compares it with the model
// on every FP32 pattern at LOWBIT_TEST_LEVEL=full (at ci: every pattern
// whose low 13 bits are a rounding class — the tie, either side of it, 0 and
// all ones — and a strided sample).
#pragma once

#include <cstdint>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::alternatives {

namespace f16_rounded_detail {
// The claim above: with the NaN payload rule set to the alternatives'
// kTruncate, the scale options are options the integer conversions take.
LOWBIT_HD_CONSTEXPR EncodeOptions ScaleOptionsWithTruncatedNan() {
  EncodeOptions o = recipe::F16ScaleOptions();
  o.nan_payload = NanPayload::kTruncate;
  return o;
}
static_assert(EncodeF32ToHalfAlternativeApplies(ScaleOptionsWithTruncatedNan()) &&
                  WidenToF32AlternativeApplies(DecodeOptions{}),
              "F16ScaleOptions must differ from the half-float alternatives' options only in the NaN payload");
}  // namespace f16_rounded_detail

// Whether the integer conversions cover v: every value but NaN.
LOWBIT_HD_CONSTEXPR bool F16RoundedF32AlternativeCovers(float v) { return !F32IsNan(F32Bits(v)); }

// recipe::F16RoundedF32(v) for every v that F16RoundedF32AlternativeCovers.
LOWBIT_HD_CONSTEXPR float F16RoundedF32Covered(float v) {
  return F32FromBits(DecodeF16ToF32Bits(EncodeF32BitsToF16(F32Bits(v))));
}

// recipe::F16RoundedF32(v), bit for bit, for every FP32 v. (A kernel may
// compose the two functions above with the model kept out of line:
// cuda/src/element_arithmetic.cuh.)
LOWBIT_HD_CONSTEXPR float F16RoundedF32Alternative(float v) {
  if (!F16RoundedF32AlternativeCovers(v)) return recipe::F16RoundedF32(v);
  return F16RoundedF32Covered(v);
}

}  // namespace lowbit::alternatives
