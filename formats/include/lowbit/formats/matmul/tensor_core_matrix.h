// The accumulation-schedule model over whole matrices on the host:
// y = x * W^T with x (M x K) and W (N x K) given as operand codes. Each
// operand is decoded once (tensor_core.h DecodeMultiplicand), rows are padded
// to whole instruction chunks with zero terms, and every output runs
// ScheduledDot; rows of y are split over `threads` std::threads.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::matmul {

// rows x k codes -> rows x (ChunkCount * inst.k) terms, zero-padded.
inline std::vector<TensorCoreTerm> DecodeRows(const TensorCoreOperand& operand,
                                              const std::uint32_t* codes, std::int64_t rows,
                                              std::int64_t k, std::int64_t padded_k) {
  std::vector<TensorCoreTerm> terms(static_cast<std::size_t>(rows * padded_k));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t i = 0; i < k; ++i) {
      terms[static_cast<std::size_t>(r * padded_k + i)] = DecodeMultiplicand(operand, codes[r * k + i]);
    }
  }
  return terms;
}

// y (M x N codes, row-major) = model(x, W, schedule). The caller checks
// ScheduleProblem first; `column_scales` (N floats) is read only with
// scale_per_column. `threads` < 1 means one.
inline void ModelMatmul(const AccumulationSchedule& schedule, const std::uint32_t* x,
                        const std::uint32_t* w, std::int64_t m, std::int64_t n, std::int64_t k,
                        const float* column_scales, std::uint32_t* y, int threads = 1) {
  const TensorCoreInstruction& inst = Instruction(schedule.instruction);
  const std::int64_t padded_k = ChunkCount(inst, k) * inst.k;
  const std::vector<TensorCoreTerm> xt = DecodeRows(inst.a, x, m, k, padded_k);
  const std::vector<TensorCoreTerm> wt = DecodeRows(inst.b, w, n, k, padded_k);
  auto rows = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const float scale = schedule.scale_per_column ? column_scales[j] : 1.0f;
        y[i * n + j] = ScheduledDot(schedule, xt.data() + i * padded_k, wt.data() + j * padded_k, k, scale);
      }
    }
  };
  if (threads <= 1 || m < 2) {
    rows(0, m);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t per = (m + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t first = t * per;
    const std::int64_t last = first + per < m ? first + per : m;
    if (first < last) pool.emplace_back(rows, first, last);
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace lowbit::matmul
