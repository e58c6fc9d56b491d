// FP8 with one FP32 scale per tensor or per row (token), TransformerEngine's
// current scaling: amax with fmaxf (a NaN element is skipped), the recipe
// "e4m3:te" / "e5m2:te" of formats/spec/include/lowbit/formats/recipe/catalog.h
// (scale = max_fp8 / amax, guarded as TE's compute_scale_from_amax;
// docs/formats-reference.md §7), x * scale through cvt.rn.satfinite. Equal bit
// for bit to the model's steps (cuda/tests/quantize_test.cc). All buffers are
// device memory; calls are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::cuda {

// FP8 per tensor. Static: `scale` is read. Dynamic: amax (NaN ignored, as
// fmaxf), scale and scale_inv = 1 / scale are written to `amax`, `scale`,
// `scale_inv` (each may be null except scale).
struct Fp8PerTensorArgs {
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  FormatId format = FormatId::kE4m3;  // kE4m3 or kE5m2: the FP8 formats with a cvt.rn.satfinite
  std::uint8_t* codes = nullptr;
  float* scale = nullptr;
  float* scale_inv = nullptr;
  float* amax = nullptr;
  cudaStream_t stream = nullptr;
};
Status QuantizeFp8PerTensorStatic(const Fp8PerTensorArgs& args);
Status QuantizeFp8PerTensorDynamic(const Fp8PerTensorArgs& args);

// FP8 per token: one scale per row of a row-major [rows, cols] tensor;
// scale_inv[r] = 1 / scale_r is written (what a GEMM multiplies by).
struct Fp8PerTokenArgs {
  InputType input_type = InputType::kBf16;
  const void* input = nullptr;
  std::size_t rows = 0, cols = 0;
  FormatId format = FormatId::kE4m3;
  std::uint8_t* codes = nullptr;
  float* scale_inv = nullptr;
  cudaStream_t stream = nullptr;
};
Status QuantizeFp8PerToken(const Fp8PerTokenArgs& args);

}  // namespace lowbit::cuda
