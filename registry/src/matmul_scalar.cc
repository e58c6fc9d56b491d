// The model's matmul rows (backend "scalar"): every weight kind x activation
// x output type, GEMV and GEMM. The GEMV row is the defined-order FP32
// reference (formats/matmul/gemv_order.h, the CUDA GEMV's reduction order,
// checked bit for bit) for every weight layout the GEMV takes (GemvViewOf),
// and the exact mode for the others (lowbit-packed integers with FP32
// scales, 1-D blocks that run across rows, odd K of 4-bit codes), which no
// GEMV kernel takes. The GEMM row is the exact mode (formats/matmul/exact.h):
// the exact sum rounded once (docs/matmul.md).
#include "lowbit/formats/matmul/exact.h"
#include "lowbit/formats/matmul/gemv_order.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

Status RunScalar(const MatmulEntry& entry, const MatmulArgs& args) {
  if (Status s = ValidateMatmulArgs(entry, args); !s.ok) return s;
  if (entry.operation == MatmulOperation::kGemv) {
    matmul::GemvWeightView unused;
    if (matmul::GemvViewOf(args.w, 0, &unused) == nullptr) {
      const matmul::GemvProblemResult r = matmul::GemvDefinedOrderProblem(args);
      if (r.error != nullptr) return Status::Error(MatmulRowName(entry) + ": " + r.error);
      matmul::WriteOutput(args, r.codes);
      return Status::Ok();
    }
  }
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
          e.run = [columns](const MatmulArgs& args) { return RunScalar(columns, args); };
          registry.AddMatmul(std::move(e));
        }
      }
    }
  }
}

}  // namespace lowbit::registry
