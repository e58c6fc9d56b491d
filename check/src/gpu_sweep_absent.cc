// CheckGpuSweeps in a build without lowbit::cuda: a SKIPPED row says so, so
// the table never implies the GPU was checked.
#include "lowbit/check/check.h"

namespace lowbit::check {

bool GpuSweepsBuilt() { return false; }

std::vector<Row> CheckGpuSweeps(Level level, const Filter& filter, Progress* /*progress*/) {
  std::vector<Row> rows;
  if (level != Level::kSmoke && filter.Backend("cuda-hw-sweep")) {
    Row row;
    row.kind = RowKind::kGpuSweep;
    row.backend = "cuda-hw-sweep";
    row.operation = "all";
    row.format = "all";
    row.skipped = "the CUDA backend was not built";
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lowbit::check
