// Tensor-core rows: one registry row per (instruction of
// formats/spec/include/lowbit/formats/tensor_core.h, probe width n, backend),
// beside the element, recipe, packing and matrix-product rows. A row's
// `sweep` draws generated operand sets of one family, runs the real
// instruction and the model (formats/include/lowbit/formats/matmul/
// tensor_core.h) on every set, and compares every output element bit for
// bit; `lowbit verify` runs every family of every row
// (check/src/tensor_core_check.cc, docs/tensor-cores.md "Verified on the
// hardware"). The hardware is the oracle here: there is no "scalar" row to
// compare with, because the model is what is being checked.
//
// The CUDA library registers its rows from cuda/src/register_tensor_core.cc
// (backend "cuda"); without a GPU that can run them they are registered but
// not available, so checks show them SKIPPED, never passed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lowbit/formats/tensor_core.h"

namespace lowbit::registry {

struct Status;

// What one sweep of one family compared.
struct TensorCoreSweepReport {
  std::int64_t sets = 0;
  std::int64_t outputs = 0;     // output elements compared
  std::int64_t mismatches = 0;  // of those, how many differed
  // The first mismatch (when mismatches > 0): its set and output element,
  // the model's D and the instruction's D, and that output's operands
  // redrawn (A's row and B's column, k codes each, and C), so that it can be
  // explained (`lowbit mma NAME --codes --a ... --b ... --c ...`).
  std::int64_t first_set = -1;
  int first_row = -1;
  int first_column = -1;
  std::uint32_t first_model = 0;
  std::uint32_t first_hardware = 0;
  std::vector<std::uint32_t> first_a;
  std::vector<std::uint32_t> first_b;
  std::uint32_t first_c = 0;
};

struct TensorCoreEntry {
  TensorCoreId instruction = TensorCoreId::kMmaBf16F32;
  // Output columns of the probe: the instruction's n for mma.sync, one of
  // the probe widths for wgmma (whose arithmetic does not depend on n).
  int n = 8;
  std::string backend;  // "cuda"
  // The generated operand families the sweep draws, by name
  // ("random-codes", "exponent-spread", ...); `sweep` takes an index.
  std::vector<std::string> families;
  // False when the backend cannot run here: shown as skipped, never passed.
  std::function<bool()> available;
  // Why `available` is false ("no CUDA device", "needs an sm_90 device"),
  // for the skipped row; may be empty.
  std::function<std::string()> unavailable_reason;
  // `sets` operand sets of families[family] drawn from `seed`, through the
  // instruction and the model, every output compared; fills the report.
  std::function<Status(int family, std::uint64_t seed, std::int64_t sets, TensorCoreSweepReport* report)> sweep;
};

// "wgmma.m64nNk32.f32.e4m3.e4m3 n=8": the row's format column.
inline std::string TensorCoreRowName(const TensorCoreEntry& entry) {
  return std::string(Instruction(entry.instruction).name) + " n=" + std::to_string(entry.n);
}

}  // namespace lowbit::registry
