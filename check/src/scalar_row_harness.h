// What the checks of a registry row against the model's own ("scalar") row
// of the same columns share (packing.cc, matmul_check.cc): which rows a plan
// checks and the progress shown for them, the shapes tried in turn with one
// seed each, the random stream that fills the inputs, and how a kernel error
// counts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/registry/registry.h"

namespace lowbit::check::internal {

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): the same stream for a seed on every machine,
// so a mismatch names a problem that can be made again.
struct SplitMix64 {
  std::uint64_t s;
  std::uint64_t Next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform enough in [lo, hi] for test inputs (hi - lo is small).
  std::int64_t Int(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(Next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return static_cast<int>(Next() % 100) < percent; }
};

// A kernel that returned an error on `shape`: one mismatch with the error's
// text, and none of its `outputs` can be trusted.
inline void AddKernelError(const std::string& shape, const registry::Status& status, std::uint64_t outputs, Row* row) {
  Mismatch m;
  m.combo = shape;
  m.note = "kernel error: " + status.message;
  AddMismatch(row, std::move(m));
  if (outputs > 1) row->mismatches += outputs - 1;
}

// Runs check_shape(shape, seed) for each shape with seeds 1, 2, ..., and
// stops at the first that marks the row skipped (the reason is the row's).
template <typename Shape, typename CheckShape>
void CheckShapesInTurn(const std::vector<Shape>& shapes, Row* row, CheckShape check_shape) {
  std::uint64_t seed = 1;
  for (const Shape& shape : shapes) {
    check_shape(shape, seed++);
    if (!row->skipped.empty()) break;
  }
}

// One Row per non-scalar entry whose backend `filter` selects (none when
// `selected` is false: the filter names something these rows are not),
// each from check_row(entry), with `progress` advanced per row under
// `title` ("packing vs model").
template <typename Entry, typename CheckRow>
std::vector<Row> CheckNonScalarRows(const std::vector<Entry>& entries, bool selected, const Filter& filter,
                                    const char* title, Progress* progress, CheckRow check_row) {
  std::vector<const Entry*> chosen;
  if (selected) {
    for (const Entry& entry : entries) {
      if (entry.backend == "scalar" || !filter.Backend(entry.backend)) continue;
      chosen.push_back(&entry);
    }
  }
  std::vector<Row> rows;
  if (progress && !chosen.empty()) progress->Begin(title, chosen.size());
  for (const Entry* entry : chosen) {
    rows.push_back(check_row(*entry));
    if (progress) progress->Advance(1);
  }
  if (progress && !chosen.empty()) progress->End();
  return rows;
}

}  // namespace lowbit::check::internal
