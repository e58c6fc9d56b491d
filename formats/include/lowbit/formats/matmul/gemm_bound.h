// An error bound for a GEMM row that declares no accumulation schedule
// (registry/include/lowbit/registry/matmul_entry.h MatmulEntry::error_bound,
// which `lowbit verify` checks the row within), host only, header only: how
// far one output of a kernel may lie from the exact value
//
//   y = t * sum_k x_k * w_k
//
// where w_k is the exactly dequantized weight without its FP32 tensor /
// channel scale t (e2m1 * ue4m3, e2m1 * 2^e, e4m3 * 2^e, (q - z) * s, e4m3),
// x_k the BF16 activation. The bound is a function of K and of the
// magnitudes  S = sum_k |x_k| |w_k|  and  X = sum_k |x_k|  (docs/matmul.md
// "A GEMM row's error bound"). No registered row states one: lowbit's CUDA
// GEMM declares its schedule and is checked bit for bit.
//
// The arithmetic of a BF16 tensor-core GEMM with the weight dequantized to
// BF16, one term each (GemmErrorModel; a row sets the terms its kernel has):
//  1. Weight into BF16: w~_k = w_k (1 + d_k) + e_k, |d_k| <= weight_rel,
//     |e_k| <= weight_abs. Zero for the formats whose dequantized weight is a
//     BF16 value (E2M1 * UE4M3 has at most 6 significant bits, E2M1/E4M3
//     times a power of two at most 4); INT4 (q - z) * s (up to 5 + 11 bits)
//     is rounded to nearest BF16: weight_rel = 2^-8 (BF16 unit roundoff,
//     8 significant bits), and MXFP8 E4M3 * 2^-127 may fall under BF16's
//     subnormal grid: weight_abs = 2^-134 (half of BF16's smallest subnormal
//     2^-133).
//  2. Tensor-core steps: each mma.sync m16n8k16 adds mma_k = 16 exact products
//     (BF16 x BF16 fits FP32's 24 bits) to the FP32 accumulator c. The PTX
//     ISA (section "Warp Level Matrix Multiply-Accumulate Instructions")
//     does not specify the order or intermediate precision of this sum;
//     measurements of earlier tensor cores (Fasi, Higham, Mikaitis, Pranesh,
//     "Numerical behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 2021)
//     found the addends aligned to the largest exponent, bits below FP32's
//     23 fraction bits truncated, and the sum normalized by truncation. For
//     17 addends that loses < 17 ulps of the largest addend plus one ulp of
//     the result: |error| < 18 * 2^-23 * (|c| + sum |p|). The model takes the
//     rounder step_rel = 2^-18 = 32 * 2^-23 per step, leaving room for a
//     tensor core that splits the 16 products into smaller chunks
//     (proptests/matmul/gemm_bound_test.cc checks the bound against this
//     step taken literally). By induction over the K/16 steps
//     (|E_{j+1}| <= (1+tau) |E_j| + tau * S_{j+1}) the accumulated error is at
//     most ((1 + tau)^steps - 1) * S. Products or partial sums under FP32's
//     normal range may be flushed: step_abs = 2^-126 per product and per step.
//  3. Epilogue: epilogue_muls FP32 multiplies by t (tensor scale, channel
//     scale), each rounded to nearest: (1 + 2^-24) per multiply.
//  4. Output rounding: output_rel = 2^-24 (FP32), 2^-8 (BF16) or 2^-11
//     (FP16) of the computed value, plus output_abs, half the output's
//     smallest subnormal (2^-150, 2^-134, 2^-25) and 2^-150 for each
//     epilogue multiply that lands among FP32's subnormals.
//  5. The reference: reference_rel covers an oracle that dequantizes each
//     factor to FP32 first (model recipe::DecodeElement: e2m1 * s * t rounded
//     once): 2^-24 per dequantized factor that carries t. Zero against the
//     exact value above.
//
// What is not covered: weights or activations whose dequantized value is not
// a finite BF16 (MX scales >= 2^127 times elements >= 2 overflow BF16 before
// any product is taken), NaN or Inf inputs (the kernels propagate them; the
// tests check NaN positions separately).
#pragma once

#include <cmath>
#include <cstdint>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::matmul {

// 2^e as a double for the constants below (exact: std::ldexp of 1).
inline double Pow2(int e) { return std::ldexp(1.0, e); }

struct GemmErrorModel {
  double weight_rel = 0;    // term 1, relative
  double weight_abs = 0;    // term 1, absolute per weight
  int mma_k = 16;           // products per tensor-core step
  double step_rel = 0;      // term 2, per step
  double step_abs = 0;      // term 2, absolute per product and per step
  int epilogue_muls = 0;    // term 3, FP32 multiplies by a scale
  double output_rel = 0;    // term 4, relative
  double output_abs = 0;    // term 4, absolute
  double reference_rel = 0; // term 5
};

// The constants of the model (the comment above says where each comes from).
inline double Bf16UnitRoundoff() { return Pow2(-8); }
inline double Fp32UnitRoundoff() { return Pow2(-24); }
inline double Fp32MinNormal() { return Pow2(-126); }
inline double TensorCoreStepRel() { return Pow2(-18); }
inline constexpr int kMmaSyncK = 16;

// The magnitudes the bound is a function of, for one output.
struct GemmBoundTerms {
  std::int64_t k = 0;      // reduction length
  double sum_abs_xw = 0;   // S = sum |x_k| |w_k| (w without t)
  double sum_abs_x = 0;    // X = sum |x_k|
  double abs_scale = 1;    // |t|
};

// The bound on |y_kernel - y| for one output (y exact, not rounded).
inline double GemmErrorBound(const GemmErrorModel& m, const GemmBoundTerms& b) {
  const double steps = static_cast<double>((b.k + m.mma_k - 1) / m.mma_k);
  const double growth = std::pow(1.0 + m.step_rel, steps);
  // Terms 1 and 2 in the accumulator's units (before t).
  const double acc = b.sum_abs_xw * ((1.0 + m.weight_rel) * growth - 1.0) +
                     b.sum_abs_x * m.weight_abs * growth +
                     (static_cast<double>(b.k) + steps) * m.step_abs * growth;
  // Term 3: each multiply rounds the running value, which is at most
  // |t| (S + acc).
  const double epi_growth = std::pow(1.0 + Fp32UnitRoundoff(), m.epilogue_muls);
  const double before_out = b.abs_scale * (acc * epi_growth + b.sum_abs_xw * (epi_growth - 1.0));
  // Term 4: the output rounding of a value at most |t| S + before_out.
  const double out = before_out + m.output_rel * (b.abs_scale * b.sum_abs_xw + before_out) + m.output_abs;
  // Term 5, and a margin for this double arithmetic itself (a few roundings
  // of 2^-53 each, far below every term).
  return (out + m.reference_rel * b.abs_scale * b.sum_abs_xw) * (1.0 + Pow2(-40));
}

// The bound's magnitudes for output y[l][m][n] of a problem in host memory:
// t the outer scale the GEMM applies after the sum and w_k the weight without
// it (dequantize.h OuterScaleValue, ExactInnerWeightValue), as `lowbit
// verify` computes them (check/src/matmul_check.cc).
inline GemmBoundTerms BoundTermsOf(const MatmulProblem& p, std::int64_t l, std::int64_t m, std::int64_t n) {
  GemmBoundTerms t;
  t.k = p.w.k;
  t.abs_scale = std::fabs(OuterScaleValue(p.w, l, n));
  const auto* x = static_cast<const std::uint16_t*>(p.x.data) + l * p.x.batch_stride + m * p.x.row_stride;
  const FormatSpec act = ActivationFormatOf(p.x.type);
  for (std::int64_t k = 0; k < p.w.k; ++k) {
    const double xv = std::fabs(DecodeToF64(act, x[k]));
    t.sum_abs_xw += xv * std::fabs(ExactInnerWeightValue(p.w, l, n, k));
    t.sum_abs_x += xv;
  }
  return t;
}

}  // namespace lowbit::matmul
