// The exhaustive GPU rows (built only with lowbit::cuda): at the ci and full
// levels, every conversion the cuda-hw backend implements with a hardware
// instruction on this machine (FP8 .satfinite encodes, BF16 / FP16 encodes
// in each rounding mode the cvt has, the FP8 decodes) is swept over all of
// its inputs on the GPU (2^32 for an FP32 source, 2^16 for BF16 / FP16, every
// code for a decode) and compared bit for bit with the formats/ model
// compiled for the device (cuda/include/lowbit/cuda/verify.h). Without a GPU
// the rows show SKIPPED, never passed.
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/verify.h"

namespace lowbit::check {
namespace {

constexpr const char* kBackend = "cuda-hw-sweep";

struct SweepCombo {
  std::string name;
  EncodeOptions encode;
};

// The registry operation a CUDA element op is (for the metadata table).
registry::Operation ToOperation(cuda::ElementOp op) {
  switch (op) {
    case cuda::ElementOp::kEncodeF32: return registry::Operation::kEncodeF32;
    case cuda::ElementOp::kEncodeBf16: return registry::Operation::kEncodeBf16;
    case cuda::ElementOp::kEncodeF16: return registry::Operation::kEncodeF16;
    case cuda::ElementOp::kDecodeToF32: return registry::Operation::kDecodeToF32;
    case cuda::ElementOp::kDecodeToBf16: return registry::Operation::kDecodeToBf16;
  }
  return registry::Operation::kEncodeF32;
}

// The option sets with an instruction behind them: each rounding mode, with
// and without .satfinite, for which HardwareEncodeOptions finds one; decodes
// have the one NVIDIA NaN rule.
std::vector<SweepCombo> HardwareCombos(cuda::ElementOp op, FormatId format) {
  std::vector<SweepCombo> combos;
  if (!registry::IsEncode(ToOperation(op))) {
    if (cuda::Supports(cuda::Backend::kHardware, op, format, EncodeOptions{},
                       cuda::HardwareDecodeOptions())) {
      combos.push_back({"nan+,all-ones", EncodeOptions{}});
    }
    return combos;
  }
  const std::pair<RoundingMode, const char*> modes[] = {{RoundingMode::kNearestEven, "rn"},
                                                        {RoundingMode::kTowardZero, "rz"},
                                                        {RoundingMode::kDown, "rm"},
                                                        {RoundingMode::kUp, "rp"}};
  for (const auto& [mode, name] : modes) {
    for (bool satfinite : {false, true}) {
      EncodeOptions o;
      if (cuda::HardwareEncodeOptions(op, format, mode, satfinite, &o)) {
        combos.push_back({std::string(name) + (satfinite ? ".satfinite" : ""), o});
      }
    }
  }
  return combos;
}

}  // namespace

bool GpuSweepsBuilt() { return true; }

std::vector<Row> CheckGpuSweeps(Level level, const Filter& filter, Progress* progress) {
  std::vector<Row> rows;
  if (level == Level::kSmoke || !filter.Backend(kBackend)) return rows;
  const bool gpu = cuda::GpuAvailable();
  constexpr cuda::ElementOp kOps[] = {cuda::ElementOp::kEncodeF32, cuda::ElementOp::kEncodeBf16,
                                      cuda::ElementOp::kEncodeF16, cuda::ElementOp::kDecodeToF32,
                                      cuda::ElementOp::kDecodeToBf16};
  struct Planned {
    cuda::ElementOp op;
    FormatId format;
    std::vector<SweepCombo> combos;
  };
  std::vector<Planned> planned;
  for (cuda::ElementOp op : kOps) {
    for (FormatId format : kAllFormats) {
      if (!filter.Format(Spec(format))) continue;
      std::vector<SweepCombo> combos = HardwareCombos(op, format);
      if (!combos.empty()) planned.push_back({op, format, std::move(combos)});
    }
  }
  if (progress) progress->Begin("cuda-hw sweeps on the GPU", planned.size());
  for (const Planned& p : planned) {
    Row row;
    row.kind = RowKind::kGpuSweep;
    row.backend = kBackend;
    row.operation = cuda::ElementOpName(p.op);
    row.format = Spec(p.format).name;
    if (!gpu) {
      row.skipped = cuda::DeviceDescription();  // "no CUDA device"
      rows.push_back(std::move(row));
      if (progress) progress->Advance(1);
      continue;
    }
    const registry::Operation operation = ToOperation(p.op);
    const FormatSpec& in = registry::InputSpec(operation, p.format);
    const FormatSpec& out = registry::OutputSpec(operation, p.format);
    for (const SweepCombo& combo : p.combos) {
      cuda::VerifyReport report;
      const cuda::Status status =
          cuda::VerifyAllInputs(cuda::Backend::kHardware, p.op, p.format, combo.encode,
                                cuda::HardwareDecodeOptions(), &report);
      if (!status.ok) {
        Mismatch m;
        m.combo = combo.name;
        m.note = "sweep error: " + status.message;
        internal::AddMismatch(&row, std::move(m));
        continue;
      }
      row.checked += report.inputs;
      for (int i = 0; i < report.examples; ++i) {
        if (row.first_mismatches.size() >= kMaxMismatchesPerRow) break;
        row.first_mismatches.push_back(internal::ElementMismatch(
            combo.name, in, report.example_input[i], out, report.example_model[i],
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
