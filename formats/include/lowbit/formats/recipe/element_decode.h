// Step 5 of a recipe (steps.h): one element code back to FP32 (and to FP16
// for the recipes whose kernels dequantize to FP16).
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/block_scale.h"
#include "lowbit/formats/recipe/element_encode.h"
#include "lowbit/formats/recipe/fp32_arithmetic.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::recipe {

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
      // The NaN bits are pinned to x86's (F32MulAsX86), so the model
      // compiled for the device gives the host's (NVIDIA's FP32 units return
      // 0x7FFFFFFF for every NaN).
      float v = element_value(code);
      if (!r.element.IsFloat()) v = v * F32Pow2(r.element_implied_exponent);
      return F32MulAsX86(v, s.decode);
    }
    case Family::kNvfp4: {
      // Two NaN operands: the first wins, quieted (F32MulAsX86).
      const float q = element_value(code);
      if (r.dequantize_order == DequantizeOrder::kElementTimesScaleThenTensor) {
        return F32MulAsX86(F32MulAsX86(q, s.decode), t.decode);
      }
      return F32MulAsX86(q, F32MulAsX86(s.decode, t.decode));
    }
    case Family::kScaled:
      if (r.element.IsFloat()) {
        // A NaN scale wins over a NaN code, quieted: IEEE 754 §6.2 leaves the
        // choice open and compilers may commute the multiply, so it is pinned.
        if (F32IsNan(F32Bits(s.decode))) return F32FromBits(F32Bits(s.decode) | 0x00400000u);
        return F32MulAsX86(element_value(code), s.decode);
      }
      return F32MulAsX86(static_cast<float>(IntegerOfCode(r.element, code) - s.zero_point), s.decode);
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
