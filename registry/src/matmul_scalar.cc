// The model's matmul rows (backend "scalar"): every weight kind x activation
// x output type, GEMV and GEMM. Both compute the exact mode
// (formats/matmul/exact.h): the exact sum rounded once. The GEMV row becomes
// the defined-order FP32 reference (formats/matmul/gemv_order.h) once that
// mirrors the CUDA GEMV's reduction over this view (docs/matmul.md).
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

Status RunExact(const MatmulEntry& entry, const MatmulArgs& args) {
  if (Status s = ValidateMatmulArgs(entry, args); !s.ok) return s;
  const matmul::ExactMatmulResult r = matmul::ExactMatmul(args);
  if (!r.status.ok) return Status::Error(MatmulRowName(entry) + ": " + r.status.error);
  matmul::WriteOutput(args, r.codes);
  return Status::Ok();
}

}  // namespace

void RegisterScalarMatmul(Registry& registry) {
  constexpr matmul::ActivationType kActivations[] = {matmul::ActivationType::kBf16, matmul::ActivationType::kFp16};
  constexpr matmul::OutputType kOutputs[] = {matmul::OutputType::kBf16, matmul::OutputType::kFp16,
                                             matmul::OutputType::kFp32};
  for (MatmulOperation op : kAllMatmulOperations) {
    for (const MatmulWeightKind& kind : kMatmulWeightKinds) {
      for (matmul::ActivationType act : kActivations) {
        for (matmul::OutputType out : kOutputs) {
          MatmulEntry e;
          e.operation = op;
          e.weight = kind.name;
          e.activation = act;
          e.output = out;
          e.backend = "scalar";
          e.available = [] { return true; };
          // The entry's columns are copied into the closure: the row checks
          // its own arguments by them.
          MatmulEntry columns = e;
          e.run = [columns](const MatmulArgs& args) { return RunExact(columns, args); };
          registry.AddMatmul(std::move(e));
        }
      }
    }
  }
}

}  // namespace lowbit::registry
