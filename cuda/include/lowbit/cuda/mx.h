// MX on the GPU (MXFP4, MXFP6, MXFP8, MXINT8): blocks of 32 elements sharing
// an E8M0 scale, quantized with a recipe (formats/spec/include/lowbit/
// formats/recipe/recipe.h) that has the semantics of the catalog's
// "<format>:te" (RCEIL, NaN-skipping amax; float elements) or
// "<format>:ocp" (FLOOR, NaN-propagating amax; MXINT8 too)
// (formats/spec/include/lowbit/formats/recipe/catalog.h,
// docs/formats-reference.md §5.3), whatever its name, and dequantized as the
// model does: x_i = element_i * X as one FP32 multiply, X = 2^(code - 127)
// (code 0 is the FP32 subnormal 2^-127), a NaN scale (0xFF) making every
// element NaN. Codes: E2M1 packed two per byte, element 0 in the low nibble
// (§4.5); every other element one code per byte.
// Equal bit for bit to the model's steps (cuda/tests/quantize_test.cc,
// mx_dequantize_test.cc). All buffers are device memory; calls are
// asynchronous on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::cuda {

// The recipe's element: E2M1 (packed two per byte, low nibble first), E2M3 /
// E3M2 (one code per byte), E4M3 / E5M2, INT8. A recipe with other semantics
// is refused by name (the registry's "cuda" rows run the other MX recipes
// the catalog lists on the model recipe kernels, or on the host).
struct MxArgs {
  const recipe::Recipe* recipe = nullptr;
  InputType input_type = InputType::kF32;
  const void* input = nullptr;
  std::size_t count = 0;
  std::uint8_t* codes = nullptr;
  std::uint8_t* scales = nullptr;  // ceil(count / 32) E8M0 codes
  cudaStream_t stream = nullptr;
};
Status QuantizeMx(const MxArgs& args);

// NaN results carry the bits the host model gives, x86's rule for a NaN
// operand of a multiply: the element's NaN (quieted) when the element is NaN
// (FP8 NaN codes), else the decoded NaN scale. The GPU selects them
// explicitly, since NVIDIA's FMUL would return the canonical 0x7FFFFFFF
// (docs/formats-reference.md §3.3). BF16 output rounds that FP32 value to
// nearest even with cvt.rn.bf16x2.f32 (every NaN -> 0x7FFF).
struct MxDequantArgs {
  FormatId element = FormatId::kE2m1;   // kE2m1, kE2m3, kE3m2, kE4m3, kE5m2, kInt8
  const std::uint8_t* codes = nullptr;  // device
  const std::uint8_t* scales = nullptr; // device, ceil(count / 32) E8M0 codes
  std::size_t count = 0;
  OutputType output_type = OutputType::kBf16;
  void* output = nullptr;               // device, count FP32 or BF16
  cudaStream_t stream = nullptr;
};
Status DequantizeMx(const MxDequantArgs& args);

}  // namespace lowbit::cuda
