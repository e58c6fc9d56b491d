// Named alternatives to the model's weight operand (matmul/weight_operand.h
// WeightOperand: the exact inner weight value in binary64, rounded once into
// the MMA's 16-bit operand) in FP32 arithmetic:
//
// OperandOfFp32Product: the rounding applied to ONE FP32 product, element x
// scale, where that product is exact or overflows exactly when the exact
// value does:
//   - NVFP4 e2m1 x ue4m3: 2 + 4 significant bits, 2^-10 .. 2688;
//   - MXFP4 / MXFP8 e2m1 / e4m3 x 2^e (E8M0): the element's bits moved by e;
//     the smallest, 2^-9 x 2^-127 = 2^-136, is above FP32's subnormal step
//     2^-149, and a product of 2^128 or more (Inf in FP32) is also past
//     BF16's and FP16's largest finite value, so rounds to Inf in the model;
//   - FP8 per channel: the E4M3 element alone (the channel scale is the
//     epilogue's, weight_operand.h).
//
// OperandOfSmallIntegerProduct: INT4 / UINT4 (q - z) x s for |q - z| <= 15
// and an FP32, FP16 or BF16 scale s. The FP32 product p = RN(o s) may round
// (4 + 24 bits), and rounding it again into the operand could land on the
// other side of a tie than the exact value does; so the exact value is
// first rounded to odd at FP32's precision, which a second rounding to
// nearest at 8 or 11 bits turns into the correctly rounded result (Boldo and
// Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
// using rounding to odd", IEEE Trans. Computers 57(4), 2008, Theorem 3: two
// extra bits suffice). Round-to-odd from p: the residual e = fma(o, s, -p)
// is exact (o s - p is a multiple of s's quantum, at least 2^-149, and at
// most 2^4 of them), so the truncation of o s is p, or p one step toward
// zero when p and e have opposite signs; an inexact value gets its last bit
// set. An infinite p means |o s| >= 2^128 - 2^103, past the operand's
// rounding boundary to Inf. With FP16 and BF16 scales e is always 0.
//
// Elsewhere (zero points further than 15 from the codes) a kernel takes the
// model's binary64 path (HasFp32Operand / kFp32IntegerOffset).
//
// Why: the model's path decodes through binary64 and rounds with the
// generic RoundPack; a dequantizing pass over a 28672 x 8192 weight runs it
// 235 million times. These are one or two FP32 operations and the integer
// rounding of f32_f16_bf16.h.
//
// Proof: proptests/matmul/weight_operand_fp32_test.cc compares both with
// WeightOperand on every (element code, scale code) pair of NVFP4, MXFP4,
// MXFP8 and FP8 per channel, every offset -15..15 with every FP16 and BF16
// scale, and, for FP32 scales, every offset with every scale exponent and
// mantissas that put o s on, just above and just below every kind of tie;
// cuda/tests/tc_gemm_test.cc compares the device compilation with the model
// on the same pairs and on random weights of every kind.
#pragma once

#include <cmath>
#include <cstdint>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::alternatives {

// The largest |q - z| OperandOfSmallIntegerProduct covers.
inline constexpr std::int64_t kFp32IntegerOffset = 15;

// Whether weights of this format and scale type take one of the two
// functions below (the integer formats: only where |q - z| <= 15, which the
// caller checks per element).
LOWBIT_HD_CONSTEXPR bool HasFp32Operand(matmul::WeightFormat f, matmul::ScaleType t) {
  using matmul::ScaleType;
  using matmul::WeightFormat;
  switch (f) {
    case WeightFormat::kNvfp4: return t == ScaleType::kUe4m3;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: return t == ScaleType::kE8m0;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: return t == ScaleType::kFp16 || t == ScaleType::kBf16 || t == ScaleType::kFp32;
    case WeightFormat::kFp8E4m3PerChannel: return true;
  }
  return false;
}

// The operand code (BF16 when `bf16`, else FP16) of the inner weight whose
// element decodes to `element` and whose inner scale decodes to `scale`
// (1 for FP8 per channel: the channel scale is outside the operand). Both
// inputs are the model's decoded values (DecodeToF32 of the codes; an
// integer offset q - z as a float).
LOWBIT_HD_CONSTEXPR std::uint16_t OperandOfFp32Product(bool bf16, float element, float scale) {
  const float product = element * scale;  // one correctly rounded multiplication: exact in the cases above
  const std::uint32_t bits = F32Bits(product);
  return static_cast<std::uint16_t>(bf16 ? EncodeF32BitsToBf16(bits) : EncodeF32BitsToF16(bits));
}

// The FP32 bits of (q - z) x s rounded to odd at FP32's precision (the
// first of the two roundings above), `offset` = q - z with |offset| <= 15
// and `scale` s the model's decoded scale (any FP32 value); a NaN or
// infinite product as the multiplication gives it.
LOWBIT_HD_CONSTEXPR std::uint32_t SmallIntegerProductRoundedToOdd(float offset, float scale) {
  const float product = offset * scale;  // p = RN(o s)
  std::uint32_t bits = F32Bits(product);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude < 0x7F800000u && magnitude != 0) {  // finite, non-zero: round to odd at FP32's precision
#if defined(__CUDA_ARCH__)
    const float residual = __fmaf_rn(offset, scale, -product);
#else
    const float residual = std::fma(offset, scale, -product);
#endif
    if (residual != 0.0f) {
      if ((residual < 0.0f) != (product < 0.0f)) bits -= 1;  // p is above |o s|: one step toward zero
      bits |= 1u;
    }
  }
  return bits;
}

// The operand code of (q - z) x s (arguments as above).
LOWBIT_HD_CONSTEXPR std::uint16_t OperandOfSmallIntegerProduct(bool bf16, float offset, float scale) {
  const std::uint32_t bits = SmallIntegerProductRoundedToOdd(offset, scale);
  return static_cast<std::uint16_t>(bf16 ? EncodeF32BitsToBf16(bits) : EncodeF32BitsToF16(bits));
}

}  // namespace lowbit::alternatives
