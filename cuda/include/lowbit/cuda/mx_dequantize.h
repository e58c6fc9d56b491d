// MX dequantization on the GPU (MXFP4, MXFP6, MXFP8, MXINT8), equal bit for
// bit to block::DequantizeMx (formats/include/lowbit/formats/block/
// mx_recipe.h): x_i = element_i * X as one FP32 multiply, X = 2^(code - 127)
// (code 0 is the FP32 subnormal 2^-127), a NaN scale (0xFF) making every
// element NaN. The codes are what QuantizeMx writes: E2M1 packed two per
// byte, element 0 in the low nibble (docs/formats-reference.md §4.5); every other element one
// code per byte.
//
// NaN results carry the bits the host model gives, x86's rule for a NaN
// operand of a multiply: the element's NaN (quieted) when the element is NaN
// (FP8 NaN codes), else the decoded NaN scale. The GPU selects them
// explicitly, since NVIDIA's FMUL would return the canonical 0x7FFFFFFF
// (docs/formats-reference.md §3.3). BF16 output rounds that FP32 value to nearest even with
// cvt.rn.bf16x2.f32 (every NaN -> 0x7FFF).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/int_quantize.h"
#include "lowbit/cuda/status.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::cuda {

struct MxDequantArgs {
  FormatId element = FormatId::kE2m1;  // kE2m1, kE2m3, kE3m2, kE4m3, kE5m2, kInt8
  const std::uint8_t* codes = nullptr;  // device
  const std::uint8_t* scales = nullptr; // device, ceil(count / 32) E8M0 codes
  std::size_t count = 0;
  OutputType output_type = OutputType::kBf16;
  void* output = nullptr;               // device, count FP32 or BF16
  cudaStream_t stream = nullptr;
};
Status DequantizeMx(const MxDequantArgs& args);

}  // namespace lowbit::cuda
