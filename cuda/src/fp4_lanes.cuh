// The lane-group layout of the FP4 recipes of BF16 input (layout.cuh
// kFp4LaneGroups), shared by NVFP4 (nvfp4.cu) and MXFP4 (mx.cu): a lane takes
// one 16-byte unit (8 elements) of a block, so a warp's loads are one
// contiguous 512-byte span and each thread has kFlatUnroll units in flight;
// the kBlock / 8 lanes of a block (2 for NVFP4's 16, 4 for MX's 32)
// combine their amax with kLanes - 1 register shuffles (no shared memory),
// each computes the block's scale, and each stores its 8 codes as one 4-byte
// word. One thread per block (ReplacedLayout) loaded 32 bytes per lane 32
// bytes apart and measured 0.58x (NVFP4) / 0.57x (MXFP4) copy on the H200
// (bench/RESULTS-archive-2026.md "CUDA").
//
// Steps is the recipe functor of the family: kBlock; Init() (per-thread
// setup, e.g. the tensor scale); Amax(m, |x|); Scale(amax) -> a scale whose
// `code` is stored; Element(scale, x) -> the 4-bit code.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "map_kernel.cuh"

namespace lowbit::cuda::detail {

// Lanes of one block: a lane takes 8 elements (one 16-byte unit of BF16).
template <typename Steps>
constexpr int LanesPerBlock() {
  static_assert(Steps::kBlock % 8 == 0 && (Steps::kBlock / 8 & (Steps::kBlock / 8 - 1)) == 0);
  return Steps::kBlock / 8;
}

template <typename Steps, bool kPlain>
__global__ void __launch_bounds__(kFlatThreads)
    Fp4Bf16LaneKernel(const std::uint16_t* __restrict__ x, std::size_t units, Steps steps,
                      std::uint8_t* __restrict__ packed, std::uint8_t* __restrict__ scales) {
  constexpr int kT = kFlatThreads, kU = kFlatUnroll, kLanes = LanesPerBlock<Steps>();
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kT * kU) + threadIdx.x;
  const auto* in = reinterpret_cast<const uint4*>(x);
  steps.Init();
  uint4 raw[kU];
#pragma unroll
  for (int k = 0; k < kU; ++k) {
    const std::size_t u = base + k * kT;
    raw[k] = u < units ? LoadStreaming<kPlain>(in + u) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int k = 0; k < kU; ++k) {
    const std::size_t u = base + k * kT;
    const std::uint32_t w[4] = {raw[k].x, raw[k].y, raw[k].z, raw[k].w};
    float v[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // BF16 pairs widened exactly
      v[2 * i] = __uint_as_float(w[i] << 16);
      v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) amax = steps.Amax(amax, fabsf(v[j]));
    // Lanes of one block are consecutive (kT is a multiple of kLanes and a
    // block's units are consecutive): xor-shuffles over them, every lane
    // taking part (units past the end hold zeros, which never raise amax).
#pragma unroll
    for (int o = 1; o < kLanes; o <<= 1) amax = steps.Amax(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    const auto scale = steps.Scale(amax);
    std::uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) word += steps.Element(scale, v[j]) << (4 * j);
    if (u < units) {
      StoreStreaming<kPlain>(reinterpret_cast<unsigned*>(packed) + u, word);
      if (u % kLanes == 0) scales[u / kLanes] = static_cast<std::uint8_t>(scale.code);
    }
  }
}

// Launches Fp4Bf16LaneKernel over the whole blocks of an aligned BF16 input;
// returns how many elements it covered (0: not applicable, the caller's
// one-thread-per-block kernel does all).
template <typename Layout, typename Steps>
std::size_t LaunchFp4Bf16Lanes(const void* input, std::size_t count, const Steps& steps, std::uint8_t* packed,
                               std::uint8_t* scales, cudaStream_t stream) {
  constexpr std::size_t kBlock = Steps::kBlock;
  constexpr std::size_t kLanes = LanesPerBlock<Steps>();
  if constexpr (!Layout::kFp4LaneGroups) {
    return 0;
  } else {
    if (reinterpret_cast<std::uintptr_t>(input) % 16 != 0 || reinterpret_cast<std::uintptr_t>(packed) % 4 != 0) {
      return 0;
    }
    const std::size_t whole = count / kBlock;
    const std::size_t units = whole * kLanes;
    const std::size_t per_block = static_cast<std::size_t>(kFlatThreads) * kFlatUnroll;
    const std::size_t grid = (units + per_block - 1) / per_block;
    if (whole == 0 || grid >= 0x7FFFFFFFu) return 0;
    Fp4Bf16LaneKernel<Steps, Layout::kPlainAccess><<<static_cast<unsigned>(grid), kFlatThreads, 0, stream>>>(
        static_cast<const std::uint16_t*>(input), units, steps, packed, scales);
    return whole * kBlock;
  }
}

}  // namespace lowbit::cuda::detail
