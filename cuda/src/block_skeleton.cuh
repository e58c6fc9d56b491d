// The one-thread-per-block skeleton of the 1-D block recipes: each thread
// takes whole blocks of Steps::kBlock consecutive elements and runs them
// through the stages of a recipe, in order:
//   load            LoadBlock: 16-byte loads of a whole aligned block, one
//                   element at a time (zero past the end) otherwise;
//   statistics      BlockAmaxOf: the recipe's amax step in element order;
//   tensor scale    Steps::Init, once per thread before its first block
//                   (NVFP4's S_enc from the tensor amax; nothing for MX);
//   block scale     Steps::Scale(amax), whose `code` is the stored scale byte;
//   scaled element  Steps::Element(scale, x), which scales and encodes one
//   and encode      element to its code;
//   store           StoreNibbleCodes (two codes a byte, low nibble first) or
//                   StoreByteCodes (one code a byte).
// Two policies complete it, CUTLASS style: the recipe functor Steps
// (fp4_lanes.cuh lists its members, plus kPacked here: whether codes are
// nibbles) and Store, the element and store stages (Store::Run). MX runs
// CodeArrayStore (below); NVFP4 runs nvfp4.cu's Nvfp4Store, which computes
// the same bytes in another order (see its comment). The lane-group layout
// of BF16 FP4 input (fp4_lanes.cuh) runs the same Steps with a block's lanes
// cooperating.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "block_common.cuh"

namespace lowbit::cuda::detail {

// Load: block b of x as FP32. `full`: the block is whole and x 16-byte
// aligned, so it is read as kB * sizeof(In) / 16 vector loads; otherwise a
// short last block behaves as zero-padded (recipe.h kBlock1d).
template <int kB, typename In>
__device__ __forceinline__ void LoadBlock(const In* __restrict__ x, std::size_t n, std::size_t b, bool full,
                                          float (&v)[kB]) {
  constexpr int kLoads = kB * sizeof(In) / 16;
  if (full) {
    uint4 raw[kLoads];
#pragma unroll
    for (int l = 0; l < kLoads; ++l) raw[l] = __ldg(reinterpret_cast<const uint4*>(x + b * kB) + l);
    In e[kB];
    __builtin_memcpy(e, raw, sizeof(raw));
#pragma unroll
    for (int j = 0; j < kB; ++j) v[j] = ToF32(e[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kB; ++j) v[j] = b * kB + j < n ? ToF32(x[b * kB + j]) : 0.0f;
  }
}

// Statistics: the block's amax by the recipe's amax step, in element order.
template <typename Steps, int kB>
__device__ __forceinline__ float BlockAmaxOf(const Steps& steps, const float (&v)[kB]) {
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < kB; ++j) amax = steps.Amax(amax, fabsf(v[j]));
  return amax;
}

// Store: block b's kB 4-bit codes, two a byte with element 2k in the low
// nibble of byte k (recipe::Packing::kNibblesLowFirst), as words w. A whole
// block with 16-byte aligned codes is one streaming store; otherwise byte
// by byte up to the end of the tensor.
template <int kB>
__device__ __forceinline__ void StoreNibbleCodes(const std::uint32_t (&w)[kB / 8], bool full,
                                                 std::uint8_t* __restrict__ codes, std::size_t b, std::size_t n) {
  static_assert(kB == 32, "a block's packed codes are one uint4");
  if (full && reinterpret_cast<std::uintptr_t>(codes) % 16 == 0) {
    __stcs(reinterpret_cast<uint4*>(codes) + b, make_uint4(w[0], w[1], w[2], w[3]));
  } else {
    for (std::size_t k = 0; k < kB / 2 && b * kB + 2 * k < n; ++k) {
      std::uint8_t byte = static_cast<std::uint8_t>(Word(w, k / 4) >> (8 * (k % 4)));
      // Past the end the zeros count for the scale only: the unused high
      // nibble of a last byte is 0, as the model writes it (recipe/tensor.h
      // QuantizeTensor), not the code of 0 under a NaN scale (+max).
      if (b * kB + 2 * k + 1 >= n) byte &= 0x0F;
      codes[b * (kB / 2) + k] = byte;
    }
  }
}

// Store: block b's kB codes of at most 8 bits, one a byte, as words w. A
// whole block with 16-byte aligned codes is kB / 16 streaming stores.
template <int kB>
__device__ __forceinline__ void StoreByteCodes(const std::uint32_t (&w)[kB / 4], bool full,
                                               std::uint8_t* __restrict__ codes, std::size_t b, std::size_t n) {
  static_assert(kB == 32, "a block's codes are two uint4");
  if (full && reinterpret_cast<std::uintptr_t>(codes) % 16 == 0) {
    uint4* dst = reinterpret_cast<uint4*>(codes) + 2 * b;
    __stcs(dst, make_uint4(w[0], w[1], w[2], w[3]));
    __stcs(dst + 1, make_uint4(w[4], w[5], w[6], w[7]));
  } else {
    for (std::size_t k = 0; k < kB && b * kB + k < n; ++k) {
      codes[b * kB + k] = static_cast<std::uint8_t>(Word(w, k / 4) >> (8 * (k % 4)));
    }
  }
}

// The element and store stages of the MX recipes: every code of the block
// into an array, then packed as nibbles or bytes and stored. The stages'
// policy of BlockQuantizeKernel; nvfp4.cu has its own (Nvfp4Store).
struct CodeArrayStore {
  template <typename Steps, typename Scale, int kB>
  __device__ __forceinline__ static void Run(const Steps& steps, const Scale& s, const float (&v)[kB], bool full,
                                             std::size_t b, std::size_t n, std::uint8_t* __restrict__ codes,
                                             std::uint8_t* __restrict__ scales) {
    std::uint32_t q[kB];
#pragma unroll
    for (int j = 0; j < kB; ++j) q[j] = steps.Element(s, v[j]);
    scales[b] = s.code;
    if constexpr (Steps::kPacked) {
      std::uint32_t w[kB / 8] = {};
#pragma unroll
      for (int j = 0; j < kB; ++j) w[j / 8] += q[j] << (4 * (j % 8));
      StoreNibbleCodes<kB>(w, full, codes, b, n);
    } else {
      std::uint32_t w[kB / 4] = {};
#pragma unroll
      for (int j = 0; j < kB; ++j) w[j / 4] |= q[j] << (8 * (j % 4));
      StoreByteCodes<kB>(w, full, codes, b, n);
    }
  }
};

// The skeleton: a grid-stride loop over the blocks of x, one thread a
// block, the tensor scale, load, statistics and block scale stages, then
// Store::Run, the element and store stages. `vector`: x is 16-byte aligned.
template <typename Steps, typename In, typename Store>
__global__ void __launch_bounds__(256, 4)
    BlockQuantizeKernel(const In* __restrict__ x, std::size_t n, Steps steps, std::uint8_t* __restrict__ codes,
                        std::uint8_t* __restrict__ scales, bool vector) {
  constexpr int kB = Steps::kBlock;
  steps.Init();
  const std::size_t blocks = (n + kB - 1) / kB;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const bool full = vector && (b + 1) * kB <= n;
    float v[kB];
    LoadBlock(x, n, b, full, v);
    Store::Run(steps, steps.Scale(BlockAmaxOf(steps, v)), v, full, b, n, codes, scales);
  }
}

}  // namespace lowbit::cuda::detail
