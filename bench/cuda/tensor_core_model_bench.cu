// Throughput of the tensor-core model on the GPU (CUDA-core emulation,
// ModelMatmulOnDevice): a 4096 x 4096 x 4096 FP8 product through the
// wgmma E4M3 schedule with promotion every 128 of K (the DeepGEMM order),
// and a BF16 one through mma.sync, each timed with events around one call
// after a warm-up, inputs random finite codes. Prints seconds and modelled
// multiply-adds per second.
//
//   tensor_core_model_bench [SIZE]      (default 4096)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace {

int Run(lowbit::TensorCoreId id, int promotion, std::int64_t size) {
  using namespace lowbit;
  const TensorCoreInstruction& inst = Instruction(id);
  matmul::AccumulationSchedule s;
  s.instruction = id;
  s.promotion_interval = promotion;
  s.output = FormatId::kBf16;
  const std::int64_t m = size, n = size, k = size;
  std::vector<std::uint32_t> x(m * k), w(n * k);
  std::mt19937 g(7);
  std::normal_distribution<float> normal;
  for (auto& v : x) v = static_cast<std::uint32_t>(EncodeF32(inst.a.code_format, normal(g), EncodeOptions{}).code);
  for (auto& v : w) v = static_cast<std::uint32_t>(EncodeF32(inst.b.code_format, normal(g), EncodeOptions{}).code);
  std::uint32_t *dx = nullptr, *dw = nullptr, *dy = nullptr;
  if (cudaMalloc(&dx, x.size() * 4) != cudaSuccess || cudaMalloc(&dw, w.size() * 4) != cudaSuccess ||
      cudaMalloc(&dy, m * n * 4) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dw, w.data(), w.size() * 4, cudaMemcpyHostToDevice);
  // Warm-up on a small corner (module load, allocator).
  if (cuda::ModelMatmulOnDevice(s, dx, dw, 64, 64, k, nullptr, dy) != cudaSuccess) return 1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  const cudaError_t err = cuda::ModelMatmulOnDevice(s, dx, dw, m, n, k, nullptr, dy);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  if (err != cudaSuccess || cudaGetLastError() != cudaSuccess) {
    std::fprintf(stderr, "model failed: %s\n", cudaGetErrorString(err));
    return 1;
  }
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  const double macs = static_cast<double>(m) * n * k;
  std::printf("model-gpu %s promotion=%d %lldx%lldx%lld: %.3f s, %.2f G modelled multiply-adds/s\n", inst.name,
              promotion, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), ms / 1e3,
              macs / (ms / 1e3) / 1e9);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t size = argc > 1 ? std::atoll(argv[1]) : 4096;
  int rc = Run(lowbit::TensorCoreId::kWgmmaE4m3E4m3F32, 128, size);
  rc |= Run(lowbit::TensorCoreId::kMmaBf16F32, 0, size);
  return rc;
}
