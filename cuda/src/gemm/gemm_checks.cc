// The GEMM's host-side argument checks (gemm.h ValidateGemm): matmul::Validate
// is host code (weights.h keeps it out of device compilation), so it is
// called from this plain C++ file.
#include <string>

#include "../checks.h"
#include "gemm.h"

namespace lowbit::cuda::gemm {

Status ValidateGemm(const matmul::MatmulProblem& p) {
  const matmul::ValidationResult v = matmul::Validate(p);
  if (!v.ok) return Status::Error("gemm: " + v.error);
  if (p.x.type != matmul::ActivationType::kBf16) {
    return Status::Error("gemm: activations must be BF16 (the tensor cores' A operand)");
  }
  if (p.w.format == matmul::WeightFormat::kInt4 && p.w.packing != matmul::WeightPacking::kLowbit) {
    return Status::Error("gemm: signed int4 weights take the lowbit packing");
  }
  if (Status st = detail::CheckDeviceBuffers("gemm", {p.x.data, p.y.data, p.w.codes, p.w.scales}); !st.ok) return st;
  if (Status st = detail::CheckOptionalDeviceBuffer("gemm", p.w.zeros); !st.ok) return st;
  return detail::CheckOptionalDeviceBuffer("gemm", p.w.tensor_scale);
}

}  // namespace lowbit::cuda::gemm
