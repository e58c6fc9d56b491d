// The tensor-core model on CUDA cores: the formats/ model compiled for the
// device (integer alignment arithmetic, matmul/tensor_core.h), over operand
// sets (ModelTensorCoreInstruction, the sweep's reference) and over whole
// matrices with an accumulation schedule (ModelMatmulOnDevice).
#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::cuda {
namespace {

template <TensorCoreId Id>
__global__ void ModelInstructionKernel(int n, const std::uint32_t* a, const std::uint32_t* b,
                                       const std::uint32_t* c, std::uint32_t* d, std::int64_t count) {
  constexpr TensorCoreInstruction kInst = Instruction(Id);
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t per_set = static_cast<std::int64_t>(kInst.m) * n;
  if (index >= count * per_set) return;
  const std::int64_t set = index / per_set;
  const int element = static_cast<int>(index % per_set);
  const int row = element / n, col = element % n;
  const std::uint32_t* as = a + set * kInst.m * kInst.k + row * kInst.k;
  const std::uint32_t* bs = b + set * static_cast<std::int64_t>(n) * kInst.k + col * kInst.k;
  d[index] = matmul::TensorCoreDot(kInst, as, bs, c[index]);
}

template <TensorCoreId Id>
cudaError_t LaunchModel(int n, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                        std::uint32_t* d, std::int64_t count, cudaStream_t stream) {
  constexpr TensorCoreInstruction kInst = Instruction(Id);
  const std::int64_t outputs = count * kInst.m * n;
  if (outputs <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const std::int64_t blocks = (outputs + kThreads - 1) / kThreads;
  if (blocks > 0x7FFFFFFF) return cudaErrorInvalidValue;
  ModelInstructionKernel<Id><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(n, a, b, c, d, count);
  return cudaGetLastError();
}

// Decodes rows x k codes into rows x padded_k terms in step order
// (accumulation_schedule.h StepOrderedK), zero tail.
__global__ void DecodeRowsKernel(TensorCoreInstruction inst, TensorCoreOperand operand, const std::uint32_t* codes,
                                 std::int64_t rows, std::int64_t k, std::int64_t padded_k,
                                 matmul::TensorCoreTerm* terms) {
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= rows * padded_k) return;
  const std::int64_t r = index / padded_k;
  const std::int64_t source = matmul::StepOrderedK(inst, index % padded_k);
  terms[index] = source < k ? matmul::DecodeMultiplicand(operand, codes[r * k + source]) : matmul::TensorCoreTerm{};
}

// One thread per output; a block covers 16 x 16 outputs so that the rows of
// x and W it reads stay in L1.
__global__ void ScheduledMatmulKernel(matmul::AccumulationSchedule schedule, const matmul::TensorCoreTerm* x,
                                      const matmul::TensorCoreTerm* w, std::int64_t m, std::int64_t n,
                                      std::int64_t k, std::int64_t padded_k, const float* column_scales,
                                      std::uint32_t* y) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.y) * 16 + threadIdx.y;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * 16 + threadIdx.x;
  if (i >= m || j >= n) return;
  const float scale = schedule.scale_per_column ? column_scales[j] : 1.0f;
  y[i * n + j] = matmul::ScheduledDot(schedule, x + i * padded_k, w + j * padded_k, k, scale);
}

}  // namespace

cudaError_t ModelTensorCoreInstruction(TensorCoreId id, int n, const std::uint32_t* a, const std::uint32_t* b,
                                       const std::uint32_t* c, std::uint32_t* d, std::int64_t count,
                                       cudaStream_t stream) {
  if (!TensorCoreProbeAvailable(id, n)) return cudaErrorInvalidValue;
  switch (id) {
#define LOWBIT_TC_MODEL(Id, name, ptx, kind, rows, cols, depth, a_op, b_op, arith, lowering) \
  case TensorCoreId::k##Id:                                                        \
    return LaunchModel<TensorCoreId::k##Id>(n, a, b, c, d, count, stream);
    LOWBIT_TENSOR_CORE_INSTRUCTIONS(LOWBIT_TC_MODEL)
#undef LOWBIT_TC_MODEL
  }
  return cudaErrorInvalidValue;
}

cudaError_t ModelMatmulOnDevice(const matmul::AccumulationSchedule& schedule, const std::uint32_t* x,
                                const std::uint32_t* w, std::int64_t m, std::int64_t n, std::int64_t k,
                                const float* column_scales, std::uint32_t* y, cudaStream_t stream) {
  if (matmul::ScheduleProblem(schedule, k) != nullptr || m <= 0 || n <= 0) return cudaErrorInvalidValue;
  if (schedule.scale_per_column && column_scales == nullptr) return cudaErrorInvalidValue;
  const TensorCoreInstruction inst = InstructionCopy(schedule.instruction);
  const std::int64_t padded_k = matmul::ChunkCount(inst, k) * inst.k;
  matmul::TensorCoreTerm* xt = nullptr;
  matmul::TensorCoreTerm* wt = nullptr;
  cudaError_t err = cudaMallocAsync(&xt, sizeof(matmul::TensorCoreTerm) * m * padded_k, stream);
  if (err != cudaSuccess) return err;
  err = cudaMallocAsync(&wt, sizeof(matmul::TensorCoreTerm) * n * padded_k, stream);
  if (err != cudaSuccess) {
    cudaFreeAsync(xt, stream);
    return err;
  }
  constexpr int kThreads = 256;
  DecodeRowsKernel<<<static_cast<unsigned>((m * padded_k + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      inst, inst.a, x, m, k, padded_k, xt);
  DecodeRowsKernel<<<static_cast<unsigned>((n * padded_k + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      inst, inst.b, w, n, k, padded_k, wt);
  const dim3 block(16, 16);
  const dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16));
  ScheduledMatmulKernel<<<grid, block, 0, stream>>>(schedule, xt, wt, m, n, k, padded_k, column_scales, y);
  err = cudaGetLastError();
  cudaFreeAsync(xt, stream);
  cudaFreeAsync(wt, stream);
  return err;
}

}  // namespace lowbit::cuda
