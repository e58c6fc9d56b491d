// A packed weight as a tensor-core operand: W[l][n][k] times its block or
// group scale, rounded ONCE, to nearest even, into the MMA's 16-bit operand
// type (BF16 or FP16), IEEE overflow to +-Inf. The first half of every
// quantized matrix product (docs/matmul.md "One semantics: the weight
// dequantized into the operand, the product on the tensor-core model"); the
// second half is quantized_matmul.h.
//
// What stays outside the operand: the FP32 scale that multiplies a whole
// row of W (NVFP4's tensor scale, FP8 per-channel's channel scale). Folded
// in, NVFP4 would be e2m1 * ue4m3 * fp32, up to 30 significant bits, which
// no 16-bit operand holds; it is applied once, after the K reduction, by the
// schedule's epilogue (accumulation_schedule.h step 5, scale_per_column).
//
// Where the one rounding changes nothing (each pinned exhaustively by
// proptests/matmul/weight_operand_test.cc over every element x scale pair):
//  - NVFP4 e2m1 * ue4m3: at most 6 significant bits (2 x 4), magnitudes
//    2^-10 .. 2688: exact in BF16 and in FP16, every pair.
//  - MXFP4 e2m1 * 2^e: 2 significant bits, exact in BF16 for every scale
//    exponent e in [-127, 125]; at e = 126 and 127 the elements with
//    |q| * 2^e >= 2^128 overflow to Inf (12 pairs). FP16 holds every element
//    only for e in [-23, 13].
//  - MXFP8 e4m3 * 2^e: BF16 for e in [-124, 119] (below, the E4M3
//    subnormals and low normals fall under BF16's subnormal step 2^-133;
//    above, 448 * 2^e overflows); FP16 for e in [-15, 7]. e5m2 * 2^e: BF16
//    for e in [-117, 112], FP16 for e in [-8, 0].
//  - INT4 / UINT4 (q - z) * s: |q - z| <= 15 has 4 bits and s (FP16, BF16
//    or FP32) up to 24: the product is rounded, once, from its exact value
//    (never from an FP32 intermediate).
//  - FP8 per channel: the E4M3 element itself, exact in BF16 and FP16.
// NaN elements or scales give a NaN operand, an infinite scale an infinite
// one and 0 * Inf NaN (IEEE 754 products); a NaN counts as exact.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/matmul/weights.h"

#if !defined(__CUDA_ARCH__)
#include <vector>
#endif

namespace lowbit::matmul {

// Whether W carries an FP32 scale per row that the epilogue applies
// (OuterScaleValue in dequantize.h reads it).
LOWBIT_HD_CONSTEXPR bool HasOuterScale(WeightFormat f) {
  return f == WeightFormat::kNvfp4 || f == WeightFormat::kFp8E4m3PerChannel;
}

// Whether `operand` is a 16-bit MMA operand type a weight can be
// dequantized into.
LOWBIT_HD_CONSTEXPR bool IsWeightOperandFormat(const FormatSpec& operand) {
  constexpr FormatSpec kHalf = kFp16;
  constexpr FormatSpec kBfloat = kBf16;
  return operand.total_bits == 16 && operand.IsFloat() &&
         ((operand.exponent_bits == kHalf.exponent_bits && operand.mantissa_bits == kHalf.mantissa_bits) ||
          (operand.exponent_bits == kBfloat.exponent_bits && operand.mantissa_bits == kBfloat.mantissa_bits));
}

struct OperandWeight {
  std::uint32_t code = 0;  // the operand's bits
  bool exact = true;       // the operand's value is the weight's (NaN: both NaN)
};

// The one rounding of an exact binary64 value into `operand`.
LOWBIT_HD_CONSTEXPR OperandWeight RoundIntoOperand(const FormatSpec& operand, double exact_value) {
  EncodeOptions nearest;  // round to nearest even, IEEE overflow (BF16 / FP16: to +-Inf)
  OperandWeight r;
  r.code = static_cast<std::uint32_t>(EncodeF64(operand, exact_value, nearest).code);
  const double back = DecodeToF64(operand, r.code);
  const bool nan = exact_value != exact_value;
  r.exact = nan ? back != back : BitCast<std::uint64_t>(back) == BitCast<std::uint64_t>(exact_value);
  return r;
}

// W[l][n][k] without its outer scale as an operand code: the exact inner
// value (dequantize.h ExactInnerWeightValue: exact in binary64) rounded once.
LOWBIT_HD_CONSTEXPR OperandWeight WeightOperand(const WeightView& w, std::int64_t l, std::int64_t n, std::int64_t k,
                                                const FormatSpec& operand) {
  return RoundIntoOperand(operand, ExactInnerWeightValue(w, l, n, k));
}

// The outer FP32 scale of row n of batch l as the epilogue multiplies by it
// (1 where there is none).
LOWBIT_HD_CONSTEXPR float OuterScaleOf(const WeightView& w, std::int64_t l, std::int64_t n) {
  return static_cast<float>(OuterScaleValue(w, l, n));  // an FP32 value: exact
}

#if !defined(__CUDA_ARCH__)

// Batch l of W as operand codes [N][K] (what a kernel holds in registers or
// shared memory before the MMA), and how many of them the rounding changed.
struct OperandWeights {
  std::vector<std::uint32_t> codes;
  std::int64_t inexact = 0;
};

inline OperandWeights DequantizeToOperand(const WeightView& w, std::int64_t l, const FormatSpec& operand) {
  OperandWeights out;
  out.codes.resize(static_cast<std::size_t>(w.n * w.k));
  for (std::int64_t n = 0; n < w.n; ++n) {
    for (std::int64_t k = 0; k < w.k; ++k) {
      const OperandWeight o = WeightOperand(w, l, n, k, operand);
      out.codes[static_cast<std::size_t>(n * w.k + k)] = o.code;
      out.inexact += o.exact ? 0 : 1;
    }
  }
  return out;
}

#endif  // !defined(__CUDA_ARCH__)

}  // namespace lowbit::matmul
