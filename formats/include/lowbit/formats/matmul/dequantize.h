// The exact value of each packed weight (weights.h WeightView), through the
// model's decoders (convert.h DecodeToF64, recipe/steps.h IntegerOfCode):
// the real number the codes and scales stand for, before any FP32 rounding a
// kernel or recipe/tensor.h DequantizeTensor applies.
//
// Why double: every product below is exact in binary64, and FP32 cannot
// hold all of them (docs/matmul.md "Exact weights"):
//  - NVFP4  q * s_block * s_tensor: E2M1 has 2 significant bits, UE4M3 4,
//    FP32 24, so the product has at most 30 (< 53); its least significant
//    bit is at least 2^-1 * 2^-9 * 2^-149 = 2^-159 and its magnitude at most
//    6 * 448 * 2^128 < 2^141, both inside binary64's normal range. FP32
//    would round the 30-bit products (the recipe's two FP32 multiplies do).
//  - MXFP4 / MXFP8  q * 2^e: q's bits unchanged, exponents 2^-136 .. 448 *
//    2^127; FP32 overflows above 2^128 (6 * 2^127, 448 * 2^127).
//  - INT4 / UINT4  (q - z) * s: |q - z| < 2^29 (checked on the host) times
//    a scale of at most 24 bits is at most 53 bits. FP32 holds it only for
//    FP16 scales (11 bits, 5 + 11 = 16 bits, at most 15 * 65504).
//  - FP8 per channel  q * s: 4 + 24 = 28 bits.
// Specials follow IEEE 754 products: a NaN scale (E8M0 0xFF, UE4M3 0x7F, a
// NaN FP32 / FP16 / BF16 scale) or NaN code (E4M3 0x7F / 0xFF) gives NaN;
// an infinite scale gives +-Inf, and 0 * Inf gives NaN.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/steps.h"

#if !defined(__CUDA_ARCH__)
#include <cstdlib>
#include <string>
#include <vector>
#endif

namespace lowbit::matmul {

// Integer weights: the largest |q - z| whose product with a 24-bit scale is
// exact in binary64 (29 + 24 = 53 bits).
inline constexpr std::int64_t kMaxExactIntegerOffset = (std::int64_t{1} << 29) - 1;

// The exact value of W[l][n][k] as binary64 (exact under the bounds above).
LOWBIT_HD_CONSTEXPR double ExactWeightValue(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k) {
  const std::uint8_t code = WeightCode(w, l, n, k);
  const double scale = DecodeToF64(ScaleFormatOf(w.scale_type), ScaleBits(w, l, n, k));
  if (IsIntegerFormat(w.format)) {
    const std::int64_t q = recipe::IntegerOfCode(ElementFormatOf(w.format), code);
    const std::int64_t offset = q - ZeroPointOf(w, l, n, k);
    return static_cast<double>(offset) * scale;
  }
  const double q = DecodeToF64(ElementFormatOf(w.format), code);
  if (w.format == WeightFormat::kNvfp4) return q * scale * static_cast<double>(TensorScaleOf(w, l));
  return q * scale;
}

// The outer FP32 scale t of W[l][n][*] that a kernel may apply after the
// reduction: NVFP4's tensor scale, FP8's channel scale; 1 otherwise.
LOWBIT_HD_CONSTEXPR double OuterScaleValue(const WeightView& w, std::int64_t l, std::int64_t n) {
  if (w.format == WeightFormat::kNvfp4) return static_cast<double>(TensorScaleOf(w, l));
  if (w.format == WeightFormat::kFp8E4m3PerChannel) return DecodeToF64(ScaleFormatOf(w.scale_type), ScaleBits(w, l, n, 0));
  return 1.0;
}

// W[l][n][k] without that outer scale (exact): NVFP4 e2m1 * ue4m3, FP8 the
// E4M3 element; the whole weight otherwise.
LOWBIT_HD_CONSTEXPR double ExactInnerWeightValue(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k) {
  if (w.format == WeightFormat::kNvfp4) {
    return DecodeToF64(ElementFormatOf(w.format), WeightCode(w, l, n, k)) *
           DecodeToF64(ScaleFormatOf(w.scale_type), ScaleBits(w, l, n, k));
  }
  if (w.format == WeightFormat::kFp8E4m3PerChannel) return DecodeToF64(ElementFormatOf(w.format), WeightCode(w, l, n, k));
  return ExactWeightValue(w, l, n, k);
}

// Whether FP32 holds every W value of this format and scale type exactly
// (see the header comment): only 4-bit integers with FP16 scales and zero
// points within 0..15.
LOWBIT_HD_CONSTEXPR bool Fp32HoldsWeightsExactly(WeightFormat f, ScaleType t) {
  return IsIntegerFormat(f) && t == ScaleType::kFp16;
}

// The exact value of activation x[l][m][k] (BF16 / FP16 bits, exact in
// binary64 and in FP32).
LOWBIT_HD_CONSTEXPR double ActivationValue(const MatmulProblem& p, std::int64_t l, std::int64_t m, std::int64_t k) {
  const auto* bits = static_cast<const std::uint16_t*>(p.x.data);
  return DecodeToF64(ActivationFormatOf(p.x.type), bits[l * p.x.batch_stride + m * p.x.row_stride + k]);
}

#if !defined(__CUDA_ARCH__)

struct DequantizedWeights {
  ValidationResult status;
  std::vector<double> values;  // [batch][N][K], row-major
};

// Every weight, exactly (host memory only). Fails with ValidateWeights'
// message, or when an integer offset |q - z| passes kMaxExactIntegerOffset
// (an int32 zero point far outside the code range: the product would no
// longer be exact).
inline DequantizedWeights DequantizeWeights(const WeightView& w) {
  DequantizedWeights out;
  out.status = ValidateWeights(w);
  if (!out.status.ok) return out;
  out.values.resize(static_cast<std::size_t>(w.batch * w.n * w.k));
  std::size_t i = 0;
  for (std::int64_t l = 0; l < w.batch; ++l) {
    for (std::int64_t n = 0; n < w.n; ++n) {
      for (std::int64_t k = 0; k < w.k; ++k) {
        if (IsIntegerFormat(w.format)) {
          const std::int64_t q = recipe::IntegerOfCode(ElementFormatOf(w.format), WeightCode(w, l, n, k));
          const std::int64_t offset = q - ZeroPointOf(w, l, n, k);
          if (offset > kMaxExactIntegerOffset || -offset > kMaxExactIntegerOffset) {
            out.status = {false, "zero point " + std::to_string(ZeroPointOf(w, l, n, k)) + " of W[" +
                                     std::to_string(l) + "][" + std::to_string(n) + "][" + std::to_string(k) +
                                     "] is too far from the codes for an exact product"};
            out.values.clear();
            return out;
          }
        }
        out.values[i++] = ExactWeightValue(w, l, n, k);
      }
    }
  }
  return out;
}

#endif  // !defined(__CUDA_ARCH__)

}  // namespace lowbit::matmul
