// The exhaustive GPU rows (built only with lowbit::cuda): at the ci and full
// levels, every conversion the cuda-hw backend implements with a hardware
// instruction on this machine (FP8 .satfinite encodes, BF16 / FP16 encodes
// in each rounding mode the cvt has, the FP8 decodes) is swept over all of
// its inputs on the GPU (2^32 for an FP32 source, 2^16 for BF16 / FP16, every
// code for a decode) and compared bit for bit with the formats/ model
// compiled for the device (cuda/include/lowbit/cuda/verify.h). The rows and
// their option sets come from lowbit::cuda (register.h HardwareSweepRows), so
// this file enumerates no instruction itself. Without a GPU the rows show
// SKIPPED, never passed.
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"

namespace lowbit::check {

bool GpuSweepsBuilt() { return true; }

std::vector<Row> CheckGpuSweeps(Level level, const Filter& filter, Progress* progress) {
  std::vector<Row> rows;
  if (level == Level::kSmoke || !filter.Backend("cuda-hw-sweep")) return rows;
  std::vector<cuda::SweepRow> planned;
  for (cuda::SweepRow& sweep : cuda::HardwareSweepRows()) {
    if (filter.Format(Spec(sweep.format)) && filter.Backend(sweep.backend)) {
      planned.push_back(std::move(sweep));
    }
  }
  if (progress) progress->Begin("cuda-hw sweeps on the GPU", planned.size());
  for (const cuda::SweepRow& sweep : planned) {
    Row row;
    row.kind = RowKind::kGpuSweep;
    row.backend = sweep.backend;
    row.operation = registry::OperationName(sweep.operation);
    row.format = Spec(sweep.format).name;
    if (!sweep.available()) {
      row.skipped = cuda::DeviceDescription();  // "no CUDA device"
      rows.push_back(std::move(row));
      if (progress) progress->Advance(1);
      continue;
    }
    const FormatSpec& in = registry::InputSpec(sweep.operation, sweep.format);
    const FormatSpec& out = registry::OutputSpec(sweep.operation, sweep.format);
    for (const cuda::SweepOptionSet& options : sweep.option_sets) {
      cuda::VerifyReport report;
      const registry::Status status = sweep.run(options, &report);
      if (!status.ok) {
        Mismatch m;
        m.combo = options.name;
        m.note = "sweep error: " + status.message;
        internal::AddMismatch(&row, std::move(m));
        continue;
      }
      row.checked += report.inputs;
      for (int i = 0; i < report.examples; ++i) {
        if (row.first_mismatches.size() >= kMaxMismatchesPerRow) break;
        row.first_mismatches.push_back(internal::ElementMismatch(
            options.name, in, report.example_input[i], out, report.example_model[i],
            report.example_backend[i]));
      }
      row.mismatches += report.mismatches;
    }
    rows.push_back(std::move(row));
    if (progress) progress->Advance(1);
  }
  if (progress) progress->End();
  return rows;
}

}  // namespace lowbit::check
