// The exhaustive GPU rows of `lowbit verify` (issue 5): at the ci and full
// levels, every conversion the cuda-hw backend implements with a hardware
// instruction on this machine (FP8 .satfinite encodes, BF16 / FP16 encodes
// in each rounding mode the cvt has, the FP8 decodes) is swept over all of
// its inputs on the GPU (2^32 for an FP32 source, 2^16 for BF16 / FP16, every
// code for a decode) and compared bit for bit with the formats/ model
// compiled for the device (cuda/include/lowbit/cuda/verify.h). Without a GPU
// the rows show SKIPPED, never passed (docs/design.md "Tests").
#include <string>
#include <vector>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/verify.h"
#include "parse.h"
#include "verify.h"

namespace lowbit::tools {
namespace {

constexpr const char* kBackend = "cuda-hw-sweep";

struct SweepCombo {
  std::string name;
  EncodeOptions encode;
};

// The option sets with an instruction behind them: each rounding mode, with
// and without .satfinite, for which HardwareEncodeOptions finds one; decodes
// have the one NVIDIA NaN rule.
std::vector<SweepCombo> HardwareCombos(cuda::ElementOp op, FormatId format) {
  std::vector<SweepCombo> combos;
  const bool encode = op == cuda::ElementOp::kEncodeF32 || op == cuda::ElementOp::kEncodeBf16 ||
                      op == cuda::ElementOp::kEncodeF16;
  if (!encode) {
    if (cuda::Supports(cuda::Backend::kHardware, op, format, EncodeOptions{}, cuda::HardwareDecodeOptions())) {
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

std::vector<VerifyRow> VerifyGpuSweeps(VerifyLevel level, const VerifyFilter& filter, Progress& progress) {
  std::vector<VerifyRow> rows;
  if (level == VerifyLevel::kSmoke || !filter.Backend(kBackend)) return rows;
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
  progress.Begin("cuda-hw sweeps on the GPU", planned.size());
  for (const Planned& p : planned) {
    VerifyRow row{kBackend, cuda::ElementOpName(p.op), Spec(p.format).name};
    if (!gpu) {
      row.skipped = cuda::DeviceDescription();  // "no CUDA device"
      rows.push_back(row);
      progress.Advance(1);
      continue;
    }
    for (const SweepCombo& combo : p.combos) {
      cuda::VerifyReport report;
      const cuda::Status status = cuda::VerifyAllInputs(cuda::Backend::kHardware, p.op, p.format, combo.encode,
                                                        cuda::HardwareDecodeOptions(), &report);
      if (!status.ok) {
        row.mismatches += 1;
        if (row.example.empty()) row.example = "combo " + combo.name + ": sweep error: " + status.message;
        continue;
      }
      row.checked += report.inputs;
      row.mismatches += report.mismatches;
      if (row.example.empty() && report.examples > 0) {
        row.example = "input " + Hex(report.example_input[0]) + " combo " + combo.name + ": model " +
                      Hex(report.example_model[0]) + ", kernel " + Hex(report.example_backend[0]);
      }
    }
    rows.push_back(row);
    progress.Advance(1);
  }
  progress.End();
  return rows;
}

}  // namespace lowbit::tools
