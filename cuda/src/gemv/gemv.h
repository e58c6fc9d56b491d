// GEMV y[l, m, n] = sum_k x[l, m, k] * W[l, n, k] for M = 1..16 on packed
// weights (NVFP4, MXFP4, MXFP8, FP8 E4M3 per-channel, INT4/UINT4 groups in
// the GPTQ and AWQ layouts), BF16 / FP16 activations, FP32 accumulation in
// the defined order of formats/include/lowbit/formats/matmul/gemv_order.h
// (bit for bit), BF16 / FP16 / FP32 output (docs/matmul.md).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "lowbit/formats/matmul/gemv_order.h"

namespace lowbit::registry {
class Registry;
}

namespace lowbit::cuda::gemv {

inline constexpr long kGemvMaxM = 16;

// One launch. The weights of batch entry l follow entry 0 contiguously (each
// buffer holds L copies of one entry's size, GemvEntryBytes); the view's
// pointers are device pointers to entry 0. The tensor scale (NVFP4) is one
// value for every entry.
struct GemvLaunch {
  matmul::GemvWeightView w;
  long batch = 1;                                     // L
  long m = 1;                                         // rows of x, 1..16
  matmul::ActivationType act = matmul::ActivationType::kBf16;
  const void* x = nullptr;                            // [L][M][K] BF16 / FP16
  matmul::OutputType out_type = matmul::OutputType::kBf16;
  void* out = nullptr;                                // [L][M][N]
};

struct GemvStatus {
  bool ok = true;
  std::string error;  // names the argument and the problem
};

// Per-entry element counts of each buffer (bytes for codes and UE4M3/E8M0
// scales, words, halves, floats), for allocation and batch offsets.
struct GemvEntrySizes {
  std::size_t codes = 0, block_scales = 0, channel_scales = 0, words = 0, group_scales = 0, zeros = 0;
};
GemvEntrySizes GemvEntryElementCounts(const matmul::GemvWeightView& w);

// Checks every argument (shapes, null and misaligned pointers, sizes that
// overflow) without launching.
GemvStatus ValidateGemv(const GemvLaunch& g);
// Validates, then launches on `stream` (asynchronous; a launch error is
// returned).
GemvStatus LaunchGemv(const GemvLaunch& g, cudaStream_t stream = nullptr);

// The registry rows (backend "cuda", operation gemv) of every weight kind the
// GEMV takes (register_gemv.cc; built when the registry is).
void RegisterCudaGemv(registry::Registry& registry);

}  // namespace lowbit::cuda::gemv
