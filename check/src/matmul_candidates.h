// The accumulation candidates of a product check (matmul_diagnosis.h): the
// decoded operands, the list of candidates, and each candidate run on a grid
// of outputs. Internal to lowbit::check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"

namespace lowbit::check::internal {

// The operands as the candidates read them: A (M x K) and W = B^T (N x K),
// each element's code in its element format, its value without block scale
// (exact in FP32 for every operand format here), and its block's scale.
struct MatmulOperands {
  long m = 0, n = 0, k = 0;
  FormatId a_element = FormatId::kBf16, w_element = FormatId::kBf16;
  std::vector<std::uint32_t> a_codes, w_codes;  // M*K, N*K
  std::vector<float> a_values, w_values;        // M*K, N*K: the element values
  int a_block = 0, w_block = 0;                 // elements per block scale along K; 0: none
  std::vector<float> a_block_scales, w_block_scales;  // [row][ceil(K / block)]
  // Outer scales: per tensor (alpha = a_tensor * b_tensor in FP32, when
  // either is given), per row of A, per column of B.
  bool has_a_tensor = false, has_b_tensor = false;
  float a_tensor = 1.0f, b_tensor = 1.0f;
  bool has_alpha = false;
  float alpha = 1.0f;
  std::vector<float> row_scales, column_scales;
  std::vector<float> c;  // M*N values of C, empty when none
  FormatId d_type = FormatId::kFp32;
  bool HasOuterScales() const { return has_alpha || !row_scales.empty() || !column_scales.empty(); }
};

// Outputs (rows[i], columns[j]) for every i, j: a sample or the whole product.
struct OutputGrid {
  std::vector<long> rows, columns;
  std::uint64_t Size() const { return static_cast<std::uint64_t>(rows.size()) * columns.size(); }
};

enum class Accumulation : std::uint8_t {
  kExact,        // the exact sum rounded once
  kFmaKOrder,    // acc = fmaf(a, w, acc), k = 0, 1, ...
  kPairwise,     // products rounded to FP32, then a pairwise tree
  kBlocks,       // fmaf within blocks of `block`, block sums added in order
  kScaleBlocks,  // per scale block: partial from fmaf of the element values, acc = fmaf(partial, scale, acc)
  kTensorCore,   // matmul::ScheduledDot under `schedule`
};

enum class Epilogue : std::uint8_t {
  kSequential,       // ((acc * row) * column) * alpha, + C, converted once
  kColumnFirst,      // ((acc * column) * row) * alpha, + C, converted once (both given)
  kCombined,         // acc * ((row * column) * alpha), + C, converted once
  kAfterConversion,  // acc converted to D's type, then times the combined scale, + C, converted again
  kIntoOperands,     // a * (alpha_a * row), w * (alpha_b * column) before the products (FP32 orders)
};

enum class Bug : std::uint8_t {
  kNone,
  kDroppedTail,       // only the first K - K % tile elements of K
  kTransposedB,       // B read as if given the other way round (K == N)
  kTransposedScales,  // B's block scales read as [block of K][N]
};

struct CandidateSpec {
  Accumulation accumulation = Accumulation::kExact;
  int block = 0;  // kBlocks: elements per block; kScaleBlocks: lanes
  int split = 1;  // FP32 orders: parts of K (kTensorCore: schedule.split_k)
  bool split_tree = false;
  matmul::AccumulationSchedule schedule;  // kTensorCore: output FP32, alpha 1, no column scale
  bool c_first = false;  // FMA in K order starting from C instead of +0
  Bug bug = Bug::kNone;
  int tile = 0;  // kDroppedTail
  Epilogue epilogue = Epilogue::kSequential;
  std::string name, kind, detail;
};

// Every candidate for these operands, simplest first.
std::vector<CandidateSpec> MatmulCandidateList(const MatmulOperands& ops);

// The candidate's D codes on the grid (row-major over grid rows, columns).
std::vector<std::uint32_t> RunCandidate(const CandidateSpec& spec, const MatmulOperands& ops, const OutputGrid& grid,
                                        int threads);

// D's codes equal (any NaN equals any NaN), and their distance in codes.
bool SameOutput(FormatId type, std::uint32_t a, std::uint32_t b);
std::uint64_t UlpDistance(FormatId type, std::uint32_t a, std::uint32_t b);

}  // namespace lowbit::check::internal
