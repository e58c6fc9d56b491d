// The tensor-core GEMM's host side that needs matmul::Validate (host code,
// kept out of device compilation by weights.h): the schedule, the plan, the
// workspace size and the checks before any launch.
#include <cstdint>
#include <limits>
#include <string>

#include "../checks.h"
#include "lowbit/formats/matmul/weight_operand.h"
#include "operand_dequantize.h"
#include "tc_gemm.h"
#include "tc_gemm_plan.h"

namespace lowbit::cuda::tc_gemm {
namespace {

std::size_t AlignUp(std::size_t v) { return (v + 255) / 256 * 256; }
bool Aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

matmul::AccumulationSchedule TcGemmSchedule(matmul::WeightFormat format, matmul::OutputType output) {
  matmul::AccumulationSchedule s;
  s.instruction = TensorCoreId::kWgmmaBf16F32;
  s.promotion_interval = 0;
  s.split_k = 1;
  s.output = output == matmul::OutputType::kFp32   ? FormatId::kFp32
             : output == matmul::OutputType::kBf16 ? FormatId::kBf16
                                                   : FormatId::kFp16;
  s.scale_per_column = matmul::HasOuterScale(format);
  return s;
}

TcGemmPlan PlanOf(const matmul::MatmulProblem& p) {
  TcGemmPlan plan;
  const matmul::WeightView& w = p.w;
  plan.k_padded = PaddedK(w.k);
  plan.operand_rows = (w.n + 7) / 8 * 8;
  const bool batched = w.batch > 1;
  plan.stage_x = w.k % kOperandKAlign != 0 || !Aligned16(p.x.data) || p.x.row_stride % 8 != 0 ||
                 (batched && p.x.batch_stride % 8 != 0);
  const std::int64_t per_vector = 16 / static_cast<std::int64_t>(matmul::OutputBytes(p.y.type));
  plan.stage_y = w.n % per_vector != 0 || !Aligned16(p.y.data) || p.y.row_stride % per_vector != 0 ||
                 (batched && p.y.batch_stride % per_vector != 0);
  plan.n_padded = (w.n + per_vector - 1) / per_vector * per_vector;
  const auto elements = [](std::int64_t a, std::int64_t b, std::int64_t c) {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c);
  };
  std::size_t at = 0;
  plan.operand = at;
  at = AlignUp(at + elements(w.batch, plan.operand_rows, plan.k_padded) * 2);
  plan.outer_scales = at;
  at = AlignUp(at + elements(w.batch, plan.operand_rows, 1) * sizeof(float));
  plan.x = at;
  if (plan.stage_x) at = AlignUp(at + elements(w.batch, p.m, plan.k_padded) * 2);
  plan.y = at;
  if (plan.stage_y) at = AlignUp(at + elements(w.batch, p.m, plan.n_padded) * matmul::OutputBytes(p.y.type));
  plan.bytes = at;
  return plan;
}

std::size_t TcGemmWorkspaceBytes(const matmul::MatmulProblem& p) { return PlanOf(p).bytes; }

Status ValidateTcGemm(const matmul::MatmulProblem& p, const void* workspace, std::size_t workspace_bytes) {
  const matmul::ValidationResult v = matmul::Validate(p);
  if (!v.ok) return Status::Error("tensor-core gemm: " + v.error);
  if (p.x.type != matmul::ActivationType::kBf16) {
    return Status::Error("tensor-core gemm: activations must be BF16 (the wgmma's operand type)");
  }
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.m > kIntMax || p.w.n > kIntMax || PaddedK(p.w.k) > kIntMax || p.w.batch > kIntMax) {
    return Status::Error("tensor-core gemm: M, N, K and L must each be below 2^31");
  }
  if (Status st = detail::CheckDeviceBuffers("tensor-core gemm", {p.x.data, p.y.data, p.w.codes, p.w.scales}); !st.ok) {
    return st;
  }
  if (Status st = detail::CheckOptionalDeviceBuffer("tensor-core gemm", p.w.zeros); !st.ok) return st;
  if (Status st = detail::CheckOptionalDeviceBuffer("tensor-core gemm", p.w.tensor_scale); !st.ok) return st;
  const std::size_t need = PlanOf(p).bytes;
  if (workspace_bytes < need) {
    return Status::Error("tensor-core gemm: the workspace holds " + std::to_string(workspace_bytes) + " bytes, " +
                         std::to_string(need) + " needed (TcGemmWorkspaceBytes)");
  }
  return detail::CheckDeviceBuffers("tensor-core gemm", {workspace});
}

}  // namespace lowbit::cuda::tc_gemm
