// Integer quantization on the GPU, equal bit for bit to the model
// (formats/include/lowbit/formats/recipe/tensor.h QuantizeTensor,
// DequantizeTensor) for every recipe with the semantics of an integer recipe
// of formats/spec/include/lowbit/formats/recipe/catalog.h that
// cuda/include/lowbit/cuda/recipe_plan.h RunsOnIntKernels takes (INT8, INT4, UINT4
// elements: [AO] symmetric / asymmetric, their CUDA-division variants,
// [GPTQ], the docs/formats-reference.md §8.2 common kernel) over a row-major
// [rows, cols] matrix, per row (per-channel weights, per-token activations)
// or per group of `group` consecutive elements along K (INT4 g = 32/64/128).
//
// One difference is stated, not hidden: a group whose statistics are NaN
// (a NaN input under a NaN-propagating recipe) gets the canonical NaN
// 0x7FFFFFFF as its scale, since NVIDIA FP32 arithmetic returns that NaN for
// any NaN operand (docs/formats-reference.md §3.3), where the host model returns the input's NaN
// as x86 propagates it. Codes (0 for a NaN element) and zero points agree.
// Dequantized FP32 NaNs do follow the host's x86 rules (a NaN operand
// quieted, 0 x Inf -> 0xFFC00000), so dequantization is bit-exact.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::cuda {

// How codes are stored (formats/block/packing.h):
//   kBytes      one code per byte (INT8; any element)
//   kLowFirst   two 4-bit codes per byte, element 2i in bits 3..0 (ONNX,
//               torchao pack_uint4, TE); PackNibbles(kLowFirst) over the
//               row-major codes; cols must be even
//   kHighFirst  the same with element 2i in bits 7..4 (tinygemm's input)
//   kAwq        AWQ WQLinear_GEMM words: eight 4-bit codes of one row per
//               uint32, nibble i holding column 8c + kAwqOrderMap[i]
//               (PackAwq); cols must be a multiple of 8
enum class IntPacking : std::uint8_t { kBytes, kLowFirst, kHighFirst, kAwq };

// Bytes of packed codes for a [rows, cols] matrix.
std::size_t IntPackedBytes(IntPacking packing, std::size_t rows, std::size_t cols);

struct IntQuantArgs {
  const recipe::Recipe* recipe = nullptr;  // an integer-element recipe (above)
  block::QuantLayout layout{block::Granularity::kPerRow};      // kPerRow or kPerGroup
  InputType input_type = InputType::kF32;
  const void* input = nullptr;  // device, [rows, cols] row-major
  std::size_t rows = 0, cols = 0;
  IntPacking packing = IntPacking::kBytes;
  void* codes = nullptr;               // device, IntPackedBytes(...)
  float* scales = nullptr;             // device, one per group: recipe::BlockScale::decode
  std::int32_t* zero_points = nullptr; // device, one per group; may be null
  cudaStream_t stream = nullptr;
};
Status QuantizeInt(const IntQuantArgs& args);

// x = fp32(q - zero_point) * scale (recipe::DecodeElement), written as FP32 or,
// rounded to nearest even, as BF16 (NaN -> 0x7FFF, as cvt.rn.bf16x2.f32).
struct IntDequantArgs {
  const recipe::Recipe* recipe = nullptr;
  block::QuantLayout layout{block::Granularity::kPerRow};
  IntPacking packing = IntPacking::kBytes;
  const void* codes = nullptr;
  std::size_t rows = 0, cols = 0;
  const float* scales = nullptr;
  const std::int32_t* zero_points = nullptr;  // null: every zero point is 0
  OutputType output_type = OutputType::kF32;
  void* output = nullptr;
  cudaStream_t stream = nullptr;
};
Status DequantizeInt(const IntDequantArgs& args);

}  // namespace lowbit::cuda
