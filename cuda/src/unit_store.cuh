// Pieces shared by the "unit" dequantize kernels: int_quantize.cu
// DequantizeIntUnitsKernel and DequantizeIntQuadsKernel, mx.cu
// MxDequantUnitsKernel and nvfp4.cu Nvfp4DequantF32UnitsKernel. Each decodes
// a unit of elements into registers; units of 8 (BF16 output, one 16-byte
// store; and AWQ words) are stored with StoreUnit8, while FP32 output takes
// units of 4 and one 16-byte store, so that a warp's stores are one
// contiguous run. Each sizes its grid with UnitBlocks, and MX and NVFP4
// read the elements after the last whole unit one nibble at a time with
// LowFirstNibbleCode.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ptx.cuh"

namespace lowbit::cuda::detail {

// One unit's eight values at dst (16-byte aligned, which the callers check
// before taking the unit kernel): FP32 output as two 16-byte float4 stores,
// BF16 output (std::uint16_t) as one 16-byte uint4 of four cvt.rn.bf16x2.f32
// pairs, element 2k in the low half (ptx::CvtRnBf16x2F32(lo, hi)). Plain
// stores, no cache hint: what the three kernels each wrote before.
template <typename Out>
__device__ __forceinline__ void StoreUnit8(Out* dst, const float (&v)[8]) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, std::uint16_t>, "FP32 or BF16 bits");
  if constexpr (std::is_same_v<Out, float>) {
    float4* dst4 = reinterpret_cast<float4*>(dst);
    dst4[0] = make_float4(v[0], v[1], v[2], v[3]);
    dst4[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    *reinterpret_cast<uint4*>(dst) = make_uint4(ptx::CvtRnBf16x2F32(v[0], v[1]), ptx::CvtRnBf16x2F32(v[2], v[3]),
                                                ptx::CvtRnBf16x2F32(v[4], v[5]), ptx::CvtRnBf16x2F32(v[6], v[7]));
  }
}

// Blocks for a unit kernel over `units` whole units, `units_per_block` a
// block: one block per units_per_block units, at least one (block 0 also
// does the elements after the last whole unit, so it runs when there are
// none). The unit kernels are not grid-stride, so a grid that reaches
// gridDim.x's limit (2^31 - 1) cannot be clamped; 0 then says "take the
// caller's grid-stride kernel instead" (int_quantize.cu DequantizeIntKernel,
// mx.cu MxDequantKernel, nvfp4.cu Nvfp4DequantF32Kernel).
inline unsigned UnitBlocks(std::size_t units, std::size_t units_per_block) {
  const std::size_t blocks = (units + units_per_block - 1) / units_per_block;
  if (blocks >= 0x7FFFFFFFu) return 0;
  return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

// Code i of a nibble-packed array, low nibble first (elements 2b and 2b + 1
// in the low and high halves of byte b): the E2M1 codes of MXFP4 and NVFP4,
// read one at a time by the tails of mx.cu MxDequantUnitsKernel (CodeOf) and
// nvfp4.cu Nvfp4DequantF32UnitsKernel.
__device__ __forceinline__ std::uint32_t LowFirstNibbleCode(const std::uint8_t* packed, std::size_t i) {
  return (__ldg(packed + i / 2) >> (4 * (i & 1))) & 0xFu;
}

}  // namespace lowbit::cuda::detail
