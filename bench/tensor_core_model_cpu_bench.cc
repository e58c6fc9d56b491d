// Throughput of the tensor-core model on the CPU (matmul/tensor_core_matrix.h
// ModelMatmul): an M x N x K product of random finite codes through an
// accumulation schedule, timed around one call (decode included), in
// modelled multiply-adds per second. bench/RESULTS.md records the 4096^3 FP8
// product on the 2-core machine; bench/tensor_core_model_bench.py measures
// MMA-Sim on the same cases in the same run.
//
//   lowbit_tensor_core_model_bench [SIZE [THREADS [INSTRUCTION [PROMOTION]]]]
//   defaults: 4096, the machine's hardware threads, wgmma.m64nNk32.f32.e4m3.e4m3, 128
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/tensor_core.h"

int main(int argc, char** argv) {
  using namespace lowbit;
  const std::int64_t size = argc > 1 ? std::atoll(argv[1]) : 4096;
  const int threads = argc > 2 ? std::atoi(argv[2]) : static_cast<int>(std::thread::hardware_concurrency());
  const char* name = argc > 3 ? argv[3] : "wgmma.m64nNk32.f32.e4m3.e4m3";
  TensorCoreId id;
  if (!FindTensorCoreInstruction(name, &id)) {
    std::fprintf(stderr, "lowbit_tensor_core_model_bench: unknown instruction\n");
    return 2;
  }
  matmul::AccumulationSchedule s;
  s.instruction = id;
  s.promotion_interval = argc > 4 ? std::atoi(argv[4]) : (Instruction(id).k == 32 ? 128 : 0);
  s.output = FormatId::kBf16;
  if (const char* problem = matmul::ScheduleProblem(s, size)) {
    std::fprintf(stderr, "lowbit_tensor_core_model_bench: %s\n", problem);
    return 2;
  }
  const TensorCoreInstruction& inst = Instruction(id);
  std::vector<std::uint32_t> x(size * size), w(size * size), y(size * size);
  std::mt19937 g(7);
  std::normal_distribution<float> normal;
  for (auto& v : x) v = static_cast<std::uint32_t>(EncodeF32(inst.a.code_format, normal(g), EncodeOptions{}).code);
  for (auto& v : w) v = static_cast<std::uint32_t>(EncodeF32(inst.b.code_format, normal(g), EncodeOptions{}).code);
  const auto start = std::chrono::steady_clock::now();
  matmul::ModelMatmul(s, x.data(), w.data(), size, size, size, nullptr, y.data(), threads);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double macs = static_cast<double>(size) * size * size;
  std::printf("model-cpu %s promotion=%d %lld^3 threads=%d: %.2f s, %.1f M modelled multiply-adds/s\n", inst.name,
              s.promotion_interval, static_cast<long long>(size), threads, seconds, macs / seconds / 1e6);
  return 0;
}
