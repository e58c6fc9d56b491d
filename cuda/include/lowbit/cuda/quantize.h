// Quantization recipes on the GPU, each equal bit for bit to its model in
// formats/include/lowbit/formats/block/ (the tests compare them):
//   FP8 per tensor, static scale or dynamic (TE current scaling: amax with
//     fmaxf, TeScaleFromAmax, x * scale, cvt.rn.satfinite; docs/formats-reference.md §7)
//   FP8 per token (per row), the same arithmetic per row
//   NVFP4, TE recipe (block::Nvfp4Recipe::kTe, docs/formats-reference.md §6.1), E2M1 in software
//     on Hopper (docs/formats-reference.md §2), packed two per byte, element 0 in the low nibble
//   MXFP4 / MXFP6 / MXFP8 / MXINT8 with the TE (RCEIL) or OCP (FLOOR) recipe
//     (block::kTeMx, block::kOcpMx; docs/formats-reference.md §5.3)
// All buffers are device memory; calls are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::cuda {

enum class InputType : std::uint8_t { kF32, kBf16 };

// FP8 per tensor. Static: `scale` is read. Dynamic: amax (NaN ignored, as
// fmaxf), scale = TeScaleFromAmax(amax, max_fp8), scale_inv = 1 / scale are
// written to `amax`, `scale`, `scale_inv` (each may be null except scale).
struct Fp8PerTensorArgs {
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  FormatId format = FormatId::kE4m3;  // kE4m3 or kE5m2
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

// NVFP4 (TE). `count` elements, blocks of 16 (a partial last block acts as
// zero-padded). If `global_amax` is null the tensor amax is computed first
// (NaN ignored) into `amax_out` (required then). Writes ceil(count/2) packed
// bytes, ceil(count/16) UE4M3 scale bytes and S_dec (one float).
struct Nvfp4Args {
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  const float* global_amax = nullptr;
  float* amax_out = nullptr;
  std::uint8_t* packed_codes = nullptr;
  std::uint8_t* scales = nullptr;
  float* decode_scale = nullptr;  // S_dec
  cudaStream_t stream = nullptr;
};
Status QuantizeNvfp4(const Nvfp4Args& args);
// x = (e2m1 * scale_b) * S_dec, rounded to BF16 (RN).
Status DequantizeNvfp4ToBf16(const std::uint8_t* packed_codes, const std::uint8_t* scales,
                             const float* decode_scale, std::size_t count, std::uint16_t* out,
                             cudaStream_t stream = nullptr);

enum class MxRecipeId : std::uint8_t { kTe, kOcp };
// MX: blocks of 32, E8M0 scales. element: kE2m1 (packed two per byte, low
// nibble first), kE2m3 / kE3m2 (one code per byte), kE4m3 / kE5m2, kInt8.
struct MxArgs {
  FormatId element = FormatId::kE2m1;
  MxRecipeId recipe = MxRecipeId::kTe;
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  std::uint8_t* codes = nullptr;
  std::uint8_t* scales = nullptr;
  cudaStream_t stream = nullptr;
};
Status QuantizeMx(const MxArgs& args);

}  // namespace lowbit::cuda
