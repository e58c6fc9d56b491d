// How one tensor-core GEMM call (tc_gemm.h) lays out its workspace and which
// buffers it stages: host arithmetic on the problem's shape and pointers,
// shared by the checks (tc_gemm_checks.cc) and the run (tc_gemm.cu).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/formats/matmul/weights.h"

namespace lowbit::cuda::tc_gemm {

struct TcGemmPlan {
  std::int64_t k_padded = 0;  // operand_dequantize.h PaddedK(K): the GEMM's K
  // The operand's rows per batch entry: N rounded up to 8 (+0 past N), so
  // that a staged y's padded N reads written rows.
  std::int64_t operand_rows = 0;
  // x is copied into [L][M][k_padded] (zeros past K) when its rows cannot
  // feed the TMA as they are (16-byte aligned start and strides, K a
  // multiple of 8).
  bool stage_x = false;
  // y is written to [L][M][n_padded] and copied out when its rows cannot
  // take the TMA's 16-byte stores as they are.
  bool stage_y = false;
  std::int64_t n_padded = 0;  // the GEMM's N when y is staged (a multiple of 16 bytes of y; <= operand_rows)
  // Byte offsets into the workspace, each 256-byte aligned.
  std::size_t operand = 0, outer_scales = 0, x = 0, y = 0, bytes = 0;
};

TcGemmPlan PlanOf(const matmul::MatmulProblem& p);

}  // namespace lowbit::cuda::tc_gemm
