// The GPU kernels of the GEMM weight layouts and the swizzled block scales
// (formats/block/tinygemm_int4pack.h, marlin_layout.h, swizzled_scales.h;
// docs/layouts.md): one thread per packed unit, each computing its codes'
// positions with the model's index math. register_layouts.cc makes them
// registry packing rows (backend "cuda"); this header needs no registry.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "lowbit/cuda/status.h"

namespace lowbit::cuda {

enum class WeightLayout : std::uint8_t {
  kTinygemm,        // param: inner_k_tiles (2, 4, 8); [N][K] codes <-> words
  kTorchCpu,        // param: block::TorchCpuInt4packIsa; [N][K] codes <-> bytes
  kMarlin,          // [K][N] codes <-> words
  kSwizzledScales,  // [rows][cols] scale bytes <-> 128 x 4 tiles
};

// One call on device buffers, already checked by the caller (the shape is
// one the layout takes, `packed_units` its packed size). Pack reads `codes`
// (rows * cols bytes) and writes `packed` (packed_units units of 4 bytes for
// the word layouts, 1 byte otherwise); unpack the reverse.
struct WeightLayoutJob {
  WeightLayout layout = WeightLayout::kTinygemm;
  int param = 0;
  bool pack = true;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t packed_units = 0;
  const std::uint8_t* codes = nullptr;   // pack input
  std::uint8_t* codes_out = nullptr;     // unpack output
  const void* packed = nullptr;          // unpack input
  void* packed_out = nullptr;            // pack output
};

// Launches the kernel on `stream`; "weight layout: <CUDA error>" when the
// launch fails.
Status LaunchWeightLayout(const WeightLayoutJob& job, cudaStream_t stream);

}  // namespace lowbit::cuda
