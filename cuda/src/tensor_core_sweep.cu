// The hardware comparison: generated operand sets (tensor_core_cases.h) run
// through the instruction (tensor_core_probe.cu) and the device model
// (tensor_core_model.cu), every output compared bit for bit.
#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/tensor_core.h"
#include "tensor_core_cases.h"

namespace lowbit::cuda {
namespace {

namespace cases_ns = tensor_core_cases;

__global__ void GenerateKernel(TensorCoreId id, int n, TensorCoreCases cases, std::uint64_t seed,
                               std::int64_t first_set, std::int64_t count, std::uint32_t* a, std::uint32_t* b,
                               std::uint32_t* c) {
  const TensorCoreInstruction inst = InstructionCopy(id);
  const std::int64_t per_a = static_cast<std::int64_t>(inst.m) * inst.k;
  const std::int64_t per_b = static_cast<std::int64_t>(n) * inst.k;
  const std::int64_t per_c = static_cast<std::int64_t>(inst.m) * n;
  const std::int64_t per_set = per_a + per_b + per_c;
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= count * per_set) return;
  const std::int64_t local = index / per_set;
  const std::int64_t set = first_set + local;
  std::int64_t e = index % per_set;
  if (e < per_a) {
    a[local * per_a + e] = cases_ns::MultiplicandCode(inst, cases, seed, set, cases_ns::Role::kA, static_cast<int>(e));
    return;
  }
  e -= per_a;
  if (e < per_b) {
    b[local * per_b + e] = cases_ns::MultiplicandCode(inst, cases, seed, set, cases_ns::Role::kB, static_cast<int>(e));
    return;
  }
  e -= per_b;
  c[local * per_c + e] = cases_ns::AccumulatorCode(inst, cases, seed, set, static_cast<int>(e));
}

struct Counters {
  unsigned long long mismatches;
  unsigned long long first;  // smallest mismatching output index of the batch
};

__global__ void CompareKernel(const std::uint32_t* hardware, const std::uint32_t* model, std::int64_t outputs,
                              Counters* counters) {
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= outputs || hardware[index] == model[index]) return;
  atomicAdd(&counters->mismatches, 1ull);
  atomicMin(&counters->first, static_cast<unsigned long long>(index));
}

}  // namespace

const char* TensorCoreCasesName(TensorCoreCases cases) {
  switch (cases) {
    case TensorCoreCases::kRandomCodes: return "random-codes";
    case TensorCoreCases::kExponentSpread: return "exponent-spread";
    case TensorCoreCases::kCancellation: return "cancellation";
    case TensorCoreCases::kCarries: return "carries";
    case TensorCoreCases::kSubnormals: return "subnormals";
    case TensorCoreCases::kSpecials: return "specials";
    case TensorCoreCases::kSignedZeros: return "signed-zeros";
    case TensorCoreCases::kOverflow: return "overflow";
  }
  return "?";
}

cudaError_t SweepTensorCore(TensorCoreId id, int n, TensorCoreCases cases, std::uint64_t seed, std::int64_t sets,
                            TensorCoreSweepResult* result) {
  *result = TensorCoreSweepResult{};
  if (!TensorCoreProbeAvailable(id, n) || sets < 0) return cudaErrorInvalidValue;
  const TensorCoreInstruction& inst = Instruction(id);
  const std::int64_t per_a = static_cast<std::int64_t>(inst.m) * inst.k;
  const std::int64_t per_b = static_cast<std::int64_t>(n) * inst.k;
  const std::int64_t per_c = static_cast<std::int64_t>(inst.m) * n;
  // Batches of about 64 MiB of codes.
  const std::int64_t batch = (std::int64_t{1} << 24) / (per_a + per_b + 3 * per_c) + 1;
  std::uint32_t *a = nullptr, *b = nullptr, *c = nullptr, *d_hw = nullptr, *d_model = nullptr;
  Counters* counters = nullptr;
  cudaError_t err = cudaSuccess;
  auto alloc = [&](std::uint32_t** p, std::int64_t words) {
    if (err == cudaSuccess) err = cudaMalloc(p, sizeof(std::uint32_t) * words);
  };
  alloc(&a, batch * per_a);
  alloc(&b, batch * per_b);
  alloc(&c, batch * per_c);
  alloc(&d_hw, batch * per_c);
  alloc(&d_model, batch * per_c);
  if (err == cudaSuccess) err = cudaMalloc(&counters, sizeof(Counters));
  for (std::int64_t first = 0; err == cudaSuccess && first < sets; first += batch) {
    const std::int64_t count = sets - first < batch ? sets - first : batch;
    const std::int64_t generated = count * (per_a + per_b + per_c);
    GenerateKernel<<<static_cast<unsigned>((generated + 255) / 256), 256>>>(id, n, cases, seed, first, count, a, b, c);
    err = cudaGetLastError();
    if (err == cudaSuccess) err = RunTensorCoreInstruction(id, n, a, b, c, d_hw, count);
    if (err == cudaSuccess) err = ModelTensorCoreInstruction(id, n, a, b, c, d_model, count);
    const Counters start{0, ~0ull};
    if (err == cudaSuccess) err = cudaMemcpy(counters, &start, sizeof start, cudaMemcpyHostToDevice);
    const std::int64_t outputs = count * per_c;
    if (err == cudaSuccess) {
      CompareKernel<<<static_cast<unsigned>((outputs + 255) / 256), 256>>>(d_hw, d_model, outputs, counters);
      err = cudaGetLastError();
    }
    Counters got{};
    if (err == cudaSuccess) err = cudaMemcpy(&got, counters, sizeof got, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) break;
    if (got.mismatches > 0 && result->mismatches == 0) {
      const std::int64_t index = static_cast<std::int64_t>(got.first);
      result->first_set = first + index / per_c;
      result->first_row = static_cast<int>((index % per_c) / n);
      result->first_column = static_cast<int>(index % n);
      err = cudaMemcpy(&result->first_hardware, d_hw + index, sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
      if (err == cudaSuccess) err = cudaMemcpy(&result->first_model, d_model + index, sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
    }
    result->sets += count;
    result->outputs += outputs;
    result->mismatches += static_cast<std::int64_t>(got.mismatches);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(d_hw);
  cudaFree(d_model);
  cudaFree(counters);
  return err;
}

}  // namespace lowbit::cuda
