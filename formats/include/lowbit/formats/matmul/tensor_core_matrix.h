// The accumulation-schedule model over whole matrices on the host:
// y = x * W^T with x (M x K) and W (N x K) given as operand codes.
//
// Each operand is decoded once (tensor_core.h DecodeMultiplicand), rows are
// padded to whole instruction chunks with zero terms, and every output runs
// the one schedule (accumulation_schedule.h ScheduledDot). Speed comes from
// the layout, not from another arithmetic: the decoded rows are also kept as
// separate significand and exponent arrays, so that a step whose operands
// and accumulator are all finite goes straight to FiniteFusedDot (the finite
// path FusedDotStep itself takes) with loops the compiler turns into 32-bit
// SIMD lanes; a step with a NaN, an Inf or a non-finite accumulator takes
// FusedDotStep on the decoded terms. On x86-64 with GCC or Clang that finite
// step is compiled for AVX-512, AVX2 and the baseline and chosen at run time
// (target_clones). Rows of y are split over `threads` std::threads.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::matmul {

// rows x k codes decoded, in step order (StepOrderedK), zero-padded to
// rows x padded_k.
struct DecodedRows {
  std::int64_t padded_k = 0;
  int step = 1;                             // products per fused step
  std::vector<TensorCoreTerm> terms;        // every term
  std::vector<std::int32_t> significands;   // the same, split
  std::vector<std::int32_t> exponents;
  std::vector<std::uint8_t> step_special;   // per (row, step): a NaN or Inf term
};

inline DecodedRows DecodeRows(const TensorCoreInstruction& inst, const TensorCoreOperand& operand,
                              const std::uint32_t* codes, std::int64_t rows, std::int64_t k) {
  DecodedRows d;
  d.padded_k = ChunkCount(inst, k) * inst.k;
  d.step = inst.arithmetic.products_per_step;
  const auto total = static_cast<std::size_t>(rows * d.padded_k);
  d.terms.resize(total);
  d.significands.resize(total);
  d.exponents.resize(total);
  d.step_special.assign(static_cast<std::size_t>(rows * (d.padded_k / d.step)), 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < d.padded_k; ++i) {
      const auto at = static_cast<std::size_t>(r * d.padded_k + i);
      const std::int64_t source = StepOrderedK(inst, i);
      const TensorCoreTerm t = source < k ? DecodeMultiplicand(operand, codes[r * k + source]) : TensorCoreTerm{};
      d.terms[at] = t;
      d.significands[at] = t.significand;
      d.exponents[at] = t.exponent;
      if (t.kind != TermKind::kFinite) d.step_special[at / static_cast<std::size_t>(d.step)] = 1;
    }
  }
  return d;
}

namespace detail {

// GCC only: clang 14 gives an inline target_clones function a strong
// resolver symbol, so a header included by two objects fails to link
// ("multiple definition of ... [clone .resolver]"). Under clang the loop is
// compiled once, for the build's own target.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define LOWBIT_MATRIX_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LOWBIT_MATRIX_TARGET_CLONES
#endif

// FiniteFusedDot (inlined) compiled for each target; one dispatch a step.
LOWBIT_MATRIX_TARGET_CLONES inline std::uint32_t FiniteStepOfRows(const TensorCoreArithmetic& arith,
                                                                  int product_fraction_bits,
                                                                  const std::int32_t* significand_a,
                                                                  const std::int32_t* exponent_a,
                                                                  const std::int32_t* significand_b,
                                                                  const std::int32_t* exponent_b,
                                                                  const TensorCoreTerm& c) {
  return FiniteFusedDot(arith, product_fraction_bits, significand_a, exponent_a, significand_b, exponent_b,
                        arith.products_per_step, c);
}

}  // namespace detail

// Row i of x and row j of W, for ScheduledDot.
struct DecodedRowPair {
  const DecodedRows* x;
  const DecodedRows* w;
  std::int64_t xi, wj;
  std::uint32_t Step(const TensorCoreInstruction& inst, int fa, int fb, std::int64_t at, std::uint32_t d) const {
    const std::int64_t xa = xi * x->padded_k + at, wa = wj * w->padded_k + at;
    const TensorCoreArithmetic& arith = inst.arithmetic;
    const TensorCoreTerm c = DecodeAccumulator(arith, d);
    if (arith.rounding == FusedSumRounding::kWrapInteger || c.kind != TermKind::kFinite ||
        x->step_special[static_cast<std::size_t>(xa / x->step)] |
            w->step_special[static_cast<std::size_t>(wa / w->step)]) {
      return FusedDotStep(arith, fa, fb, x->terms.data() + xa, w->terms.data() + wa, arith.products_per_step, d);
    }
    return detail::FiniteStepOfRows(arith, fa + fb, x->significands.data() + xa, x->exponents.data() + xa,
                                    w->significands.data() + wa, w->exponents.data() + wa, c);
  }
};

namespace detail {

inline void ModelRows(const AccumulationSchedule& schedule, const DecodedRows& x, const DecodedRows& w,
                      std::int64_t first, std::int64_t last, std::int64_t n, std::int64_t k,
                      const float* column_scales, std::uint32_t* y) {
  // Blocks of x rows against each W row, so that the W row is read from
  // cache for the whole block (row pairs otherwise stream all of W once per
  // row of x).
  constexpr std::int64_t kRowBlock = 16;
  for (std::int64_t i0 = first; i0 < last; i0 += kRowBlock) {
    const std::int64_t i1 = i0 + kRowBlock < last ? i0 + kRowBlock : last;
    for (std::int64_t j = 0; j < n; ++j) {
      const float scale = schedule.scale_per_column ? column_scales[j] : 1.0f;
      for (std::int64_t i = i0; i < i1; ++i) {
        y[i * n + j] = ScheduledDot(schedule, DecodedRowPair{&x, &w, i, j}, k, scale);
      }
    }
  }
}

}  // namespace detail

// y (M x N codes, row-major) = model(x, W, schedule). The caller checks
// ScheduleProblem first; `column_scales` (N floats) is read only with
// scale_per_column. `threads` < 1 means one.
inline void ModelMatmul(const AccumulationSchedule& schedule, const std::uint32_t* x, const std::uint32_t* w,
                        std::int64_t m, std::int64_t n, std::int64_t k, const float* column_scales,
                        std::uint32_t* y, int threads = 1) {
  const TensorCoreInstruction& inst = Instruction(schedule.instruction);
  const DecodedRows xd = DecodeRows(inst, inst.a, x, m, k);
  const DecodedRows wd = DecodeRows(inst, inst.b, w, n, k);
  if (threads <= 1 || m < 2) {
    detail::ModelRows(schedule, xd, wd, 0, m, n, k, column_scales, y);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t per = (m + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t first = t * per;
    const std::int64_t last = first + per < m ? first + per : m;
    if (first < last) {
      pool.emplace_back([&, first, last] { detail::ModelRows(schedule, xd, wd, first, last, n, k, column_scales, y); });
    }
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace lowbit::matmul
