// lowbit::check for matrix products: which accumulation did a kernel do?
//
// Hand over what a GEMM read (A, B as codes, with their block scales, outer
// scales and C) and what it wrote (D), get back a MatmulReport: the outputs
// that differ from the exact product rounded once (decoded, with their
// distance in ulps), the distribution of those distances, and a diagnosis
// over accumulation candidates, each one run by lowbit's model on the same
// inputs (docs/check-your-kernel.md "Checking a matrix product"):
//   - the exact product rounded once (formats/.../matmul/exact.h ExactSum);
//   - plain FP32 orders: fmaf in K order, a pairwise tree of the products,
//     fmaf in blocks of 16 ... 256 with the block sums added in order, and
//     for block-scaled operands the per-block partials times the block scale
//     (one accumulator, or 32 lanes summed by a tree as gemv_order.h does);
//   - the tensor-core schedules of formats/.../matmul/accumulation_schedule.h
//     that take these operand formats (BF16 / FP16 / TF32 mma k16 / k8
//     chains, FP8 wgmma with and without promotion every 128 / 256 / 512 of
//     K, FP8 mma.sync through FP16, an FP16 accumulator);
//   - each of those split along K into 2 ... 16 parts added in order or as
//     a pairwise tree;
//   - the outer scales applied to the FP32 accumulator before the
//     conversion to D's type (as one combined scale, or one after another)
//     or to D after it;
//   - a few bugs a kernel makes: the K tail after the last whole tile of 16
//     ... 256 dropped, B read transposed, B's block scales read in the
//     transposed order.
// A candidate that gives every output bit of D is a MATCH (a NaN equals any
// NaN: NVIDIA's FP32 units write one canonical NaN, the model another;
// gemv_order.h says why payloads are not part of the contract).
//
// `lowbit check gemm`, the gtest assertions of lowbit/testing/matmul.h and
// Python's lowbit.testing.check_matmul call CheckMatmul and print
// MatmulReportText / MatmulReportJson, so the three say the same thing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::check {

// ---- what the kernel read and wrote -------------------------------------------------

// The operand formats a product check reads, by name:
//   "bf16", "fp16", "fp32" (TF32 candidates read it), "e4m3", "e5m2",
//   "int8": one code per element;
//   "nvfp4": E2M1 codes with one UE4M3 scale per 16 elements along K;
//   "mxfp4": E2M1 codes with one E8M0 scale per 32 elements along K;
//   "mxfp8": E4M3 codes with one E8M0 scale per 32 elements along K.
// Block scales are one byte per (row of A or column of B, block of K), in
// that order: scales[i * ceil(K / block) + kb] (B's always by column n, also
// when B is given K x N).
struct MatmulOperand {
  std::string format;
  CodeBuffer codes;  // rows x cols codes, row-major (user_outputs.h CodeBuffer)
  const std::uint8_t* block_scales = nullptr;
  std::size_t block_scale_count = 0;
  // The FP32 per-tensor scale (an NVFP4 tensor scale, a per-tensor FP8
  // scale); none when not given.
  std::optional<float> tensor_scale;
};

struct MatmulInputs {
  long m = 0, n = 0, k = 0;
  MatmulOperand a;  // M x K
  MatmulOperand b;  // K x N, or N x K with b_transposed
  bool b_transposed = false;
  // FP32 per-row scales of A (M) and per-column scales of B (N); empty when
  // not given.
  std::vector<float> row_scales;
  std::vector<float> column_scales;
  // C (M x N; FP32, BF16 or FP16 codes), added to the scaled accumulator
  // before the conversion to D's type; count 0 when there is none.
  FormatId c_type = FormatId::kFp32;
  const void* c = nullptr;
  std::size_t c_count = 0;
  // D, the kernel's output: M x N codes of FP32, BF16 or FP16.
  FormatId d_type = FormatId::kFp32;
  const void* d = nullptr;
  std::size_t d_count = 0;
};

struct MatmulCheckOptions {
  std::size_t max_mismatches = 8;  // first mismatches kept
  bool diagnose = true;
  int threads = 0;  // 0: std::thread::hardware_concurrency
  // Products with at most this many multiply-adds (M * N * K) are checked
  // whole by every candidate; larger ones are first checked on a sample of
  // outputs (MatmulReport::sample_outputs) and only the candidates that match
  // it (or the three closest) are re-run on the whole product while
  // M * N * K <= full_budget.
  std::uint64_t small_product = std::uint64_t{1} << 22;
  std::uint64_t full_budget = std::uint64_t{1} << 31;
};

// ---- the report ---------------------------------------------------------------------

struct MatmulMismatch {
  long row = 0, column = 0;
  std::uint32_t expected = 0;  // the exact product rounded once (D's type)
  std::uint32_t actual = 0;
  double expected_value = 0, actual_value = 0;
  std::uint64_t ulps = 0;  // distance in D's codes; UINT64_MAX where one is NaN
};

// One bucket of the distribution of ulp distances from the exact product.
struct UlpBucket {
  std::string range;  // "0", "1", "2", "3-4", ..., "> 65536", "NaN"
  std::uint64_t count = 0;
};

struct MatmulCandidate {
  std::string name;    // "fp32 fma, K order", "wgmma.m64nNk32.f32.e4m3.e4m3, promotion every 128, split-K 4 tree"
  std::string kind;    // "exact", "fp32 order", "tensor core", "bug"
  std::string detail;  // what the accumulation is, in a sentence
  std::uint64_t checked = 0;  // outputs compared
  std::uint64_t matched = 0;  // of those, equal to D
  std::uint64_t max_ulps = 0; // largest distance where they differ
  // The first output where it differs (row-major), when it does.
  long first_row = -1, first_column = -1;
  std::uint32_t candidate_code = 0, actual_code = 0;
  bool whole_product = false;  // checked on every output of D
  bool FullMatch() const { return checked > 0 && matched == checked; }
};

struct MatmulReport {
  std::string error;    // set when the inputs themselves are wrong: nothing was compared
  std::string problem;  // "M=64 N=64 K=4096, a e4m3, b e4m3, d fp32"
  FormatId output_type = FormatId::kFp32;  // D's type: the width of the codes shown
  std::uint64_t checked = 0;     // outputs compared with the exact product
  std::uint64_t mismatches = 0;  // of those, differing
  std::vector<MatmulMismatch> first_mismatches;
  std::vector<UlpBucket> ulp_distribution;  // over the checked outputs
  // Candidates: full matches first, then fewest mismatches, then smallest
  // max ulps.
  std::vector<MatmulCandidate> candidates;
  std::uint64_t candidates_tried = 0;
  std::uint64_t sample_outputs = 0;  // outputs of the pruning sample; 0: every candidate ran whole
  // "matches wgmma.m64nNk32.f32.e4m3.e4m3, promotion every 128 on all 4096
  // outputs" or "matches no candidate (closest: ...)".
  std::string summary;
  const MatmulCandidate* Match() const {
    return !candidates.empty() && candidates.front().FullMatch() ? &candidates.front() : nullptr;
  }
  // Some candidate gives every output bit of the whole of D.
  bool Passed() const {
    return error.empty() && Match() != nullptr && Match()->whole_product;
  }
};

// ---- the check --------------------------------------------------------------------------

MatmulReport CheckMatmul(const MatmulInputs& inputs, const MatmulCheckOptions& options = {});

// The problem with the inputs (shapes, counts, formats), or "" (CheckMatmul
// puts it in MatmulReport::error).
std::string MatmulInputsProblem(const MatmulInputs& inputs);

std::string MatmulReportText(const MatmulReport& report);
std::string MatmulReportJson(const MatmulReport& report);

}  // namespace lowbit::check
