// NVFP4 on the GPU, TransformerEngine's recipe "nvfp4:te"
// (formats/spec/include/lowbit/formats/recipe/catalog.h; docs/formats-reference.md
// §6.1): E2M1 elements in blocks of 16, a UE4M3 block scale, an FP32 tensor
// scale; E2M1 in software on Hopper, which has no FP4 cvt (§2); codes packed
// two per byte, element 0 in the low nibble. Equal bit for bit to the model's
// steps (cuda/tests/quantize_test.cc). All buffers are device memory; calls
// are asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"

namespace lowbit::cuda {

// `count` elements, blocks of 16 (a partial last block acts as zero-padded).
// If `global_amax` is null the tensor amax is computed first (NaN ignored)
// into `amax_out` (required then). Writes ceil(count/2) packed bytes,
// ceil(count/16) UE4M3 scale bytes and S_dec (one float); S_enc too when
// `encode_scale` is set (recipe::TensorScale is the pair).
struct Nvfp4Args {
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  const float* global_amax = nullptr;
  float* amax_out = nullptr;
  std::uint8_t* packed_codes = nullptr;
  std::uint8_t* scales = nullptr;
  float* decode_scale = nullptr;  // S_dec
  float* encode_scale = nullptr;  // S_enc; may be null
  cudaStream_t stream = nullptr;
};
Status QuantizeNvfp4(const Nvfp4Args& args);

// x = (e2m1 * scale_b) * S_dec, rounded to BF16 (RN).
Status DequantizeNvfp4ToBf16(const std::uint8_t* packed_codes, const std::uint8_t* scales,
                             const float* decode_scale, std::size_t count, std::uint16_t* out,
                             cudaStream_t stream = nullptr);
// The same in FP32 with the model's NaN bits (recipe::DecodeElement: the
// decoded values of the model, the first NaN operand of a product wins,
// quieted): what the registry's recipe rows compare. Eight elements a thread
// step when the codes are 4-byte and the output 16-byte aligned, else one
// pair a thread.
Status DequantizeNvfp4ToF32(const std::uint8_t* packed_codes, const std::uint8_t* scales,
                            const float* decode_scale, std::size_t count, float* out,
                            cudaStream_t stream = nullptr);

}  // namespace lowbit::cuda
