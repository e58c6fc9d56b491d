// MX dequantization kernel of mx_dequantize.h. The element values come from
// the model itself: the host fills a table of block::DecodeMxElement for
// every code (at most 256 FP32 words, a kernel parameter), which each block
// copies to shared memory; the multiply is one __fmul_rn, exact for normal
// results and correctly rounded for subnormal ones, as on the host (no FTZ:
// the library is built with -ftz=false).
#include "lowbit/cuda/mx_dequantize.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.h"
#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "ptx.cuh"

namespace lowbit::cuda {
namespace {

struct ElementTable {
  std::uint32_t bits[256];  // FP32 bits of DecodeMxElement(code)
  std::uint32_t nan_scale;  // FP32 bits of DecodeToF32(kE8m0, 0xFF)
};

constexpr int kThreads = 256;

__device__ __forceinline__ std::uint32_t ScaledBits(std::uint32_t element, std::uint32_t scale_code,
                                                    std::uint32_t nan_scale) {
  if ((element & 0x7FFFFFFFu) > 0x7F800000u) return element | 0x00400000u;  // NaN element, quieted
  if (scale_code == 0xFFu) return nan_scale;
  // X = 2^(code - 127): code << 23 for 1..254, the subnormal 2^-127 for 0.
  const float x = __uint_as_float(scale_code == 0 ? 0x00400000u : scale_code << 23);
  return __float_as_uint(__fmul_rn(__uint_as_float(element), x));
}

// Grid-stride over pairs of elements (one E2M1 byte, or two code bytes).
template <bool kPacked, typename Out>
__global__ void __launch_bounds__(kThreads)
    MxDequantKernel(const std::uint8_t* __restrict__ codes, const std::uint8_t* __restrict__ scales,
                    std::size_t n, ElementTable table, Out* __restrict__ out) {
  __shared__ std::uint32_t values[256];
  values[threadIdx.x] = table.bits[threadIdx.x];
  const std::uint32_t nan_scale = table.nan_scale;
  __syncthreads();
  const std::size_t pairs = (n + 1) / 2;
  for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; p < pairs;
       p += static_cast<std::size_t>(gridDim.x) * kThreads) {
    const std::size_t i = 2 * p;
    std::uint32_t c0, c1;
    if constexpr (kPacked) {
      const std::uint32_t b = __ldg(codes + p);
      c0 = b & 0xFu;
      c1 = b >> 4;
    } else {
      c0 = __ldg(codes + i);
      c1 = i + 1 < n ? __ldg(codes + i + 1) : 0u;
    }
    const std::uint32_t s = __ldg(scales + i / 32);  // i even: i and i + 1 share a block
    const std::uint32_t v0 = ScaledBits(values[c0], s, nan_scale);
    const std::uint32_t v1 = ScaledBits(values[c1], s, nan_scale);
    if constexpr (sizeof(Out) == 4) {
      out[i] = __uint_as_float(v0);
      if (i + 1 < n) out[i + 1] = __uint_as_float(v1);
    } else {
      const std::uint32_t pair = ptx::CvtRnBf16x2F32(__uint_as_float(v0), __uint_as_float(v1));
      out[i] = static_cast<std::uint16_t>(pair);
      if (i + 1 < n) out[i + 1] = static_cast<std::uint16_t>(pair >> 16);
    }
  }
}

const block::BlockSpec* MxSpecOf(FormatId element) {
  switch (element) {
    case FormatId::kE2m1: return &block::kMxfp4;
    case FormatId::kE2m3: return &block::kMxfp6E2m3;
    case FormatId::kE3m2: return &block::kMxfp6E3m2;
    case FormatId::kE4m3: return &block::kMxfp8E4m3;
    case FormatId::kE5m2: return &block::kMxfp8E5m2;
    case FormatId::kInt8: return &block::kMxint8;
    default: return nullptr;
  }
}

}  // namespace

Status DequantizeMx(const MxDequantArgs& a) {
  const block::BlockSpec* spec = MxSpecOf(a.element);
  if (spec == nullptr) return Status::Error(std::string("mx dequantize: no MX format has element ") + Spec(a.element).name);
  if (a.count == 0) return Status::Ok();
  Status s = detail::CheckDeviceBuffers("mx dequantize", {a.codes, a.scales, a.output});
  if (!s.ok) return s;
  ElementTable table{};
  const std::uint32_t codes = static_cast<std::uint32_t>(spec->element->CodeMask()) + 1;
  for (std::uint32_t c = 0; c < 256; ++c) {
    table.bits[c] = block::F32Bits(block::DecodeMxElement(*spec, static_cast<std::uint8_t>(c < codes ? c : 0)));
  }
  table.nan_scale = block::F32Bits(DecodeToF32(kE8m0, 0xFF)) | 0x00400000u;  // quieted, as x86 returns it
  const std::size_t pairs = (a.count + 1) / 2;
  const std::size_t want = (pairs + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(want < 132 * 16 ? (want > 0 ? want : 1) : 132 * 16);
  const bool packed = a.element == FormatId::kE2m1;
  auto launch = [&](auto out) {
    using Out = std::remove_pointer_t<decltype(out)>;
    if (packed) MxDequantKernel<true, Out><<<grid, kThreads, 0, a.stream>>>(a.codes, a.scales, a.count, table, out);
    else MxDequantKernel<false, Out><<<grid, kThreads, 0, a.stream>>>(a.codes, a.scales, a.count, table, out);
  };
  if (a.output_type == OutputType::kF32) launch(static_cast<float*>(a.output));
  else launch(static_cast<std::uint16_t*>(a.output));
  return detail::LastLaunchStatus("mx dequantize");
}

}  // namespace lowbit::cuda
