// The stages of the CUDA backend's quantize skeleton (block_skeleton.cuh
// lists them and its geometries), as device functions over a thread's
// registers, for every geometry that quantizes (block_skeleton.cuh's
// kernels, int_quantize.cu's, model_recipe.cu's): a stage is written once
// and a geometry is the loop around them. Each stage takes its recipe's
// part as a policy argument (an amax step, an encoder), never a recipe
// name. Where a geometry still writes a stage itself, the shared form
// compiled to other SASS there (nvcc 13.0, sm_90a), and its comment says
// so.
//
// Device functions only, no kernel: a file that includes this compiles no
// kernel it does not launch (block_common.cuh's TensorAmaxKernel, for one,
// is compiled into every object that includes block_common.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace lowbit::cuda::detail {

// ---- load ----

// The FP32 value of one input element: FP32 bits, or BF16 bits widened
// (exact: BF16 is the top half of FP32).
template <typename In>
__device__ __forceinline__ float ToF32(In v) {
  if constexpr (sizeof(In) == 2) return __uint_as_float(static_cast<std::uint32_t>(v) << 16);
  else return __uint_as_float(v);
}

// Load: element i of x as FP32, through the read-only path.
template <typename In>
__device__ __forceinline__ float LoadF32(const In* x, std::size_t i) {
  return ToF32(__ldg(x + i));
}

// Load: the kN elements from p as FP32 into v[0, kN), kN * sizeof(In) 8
// bytes or whole 16, p aligned to 8 or 16 bytes: read-only vector loads,
// all issued before the first use. In is float (FP32 values) or the bits
// of FP32 or BF16 (std::uint32_t, std::uint16_t); FP32 values load as
// float4, since loaded as uint4 and reinterpreted they reach the register
// allocator otherwise (other registers in model_recipe.cu's kernels, nvcc
// 13.0, sm_90a). BF16 widens in place in each 32-bit word (element 2i its
// low half, 2i + 1 its high half): a shift and a mask, where ToF32 of each
// half took a byte permute and a shift for the high one (PRMT and IMAD.U32
// against one LOP3).
template <int kN, typename In>
__device__ __forceinline__ void LoadF32s(const In* __restrict__ p, float* v) {
  constexpr int kBytes = kN * sizeof(In);
  static_assert(kBytes == 8 || kBytes % 16 == 0, "8 bytes or whole 16-byte vectors");
  if constexpr (std::is_same_v<In, float>) {
    static_assert(kBytes % 16 == 0, "FP32 values in whole float4");
    float4 f[kBytes / 16];
#pragma unroll
    for (int l = 0; l < kBytes / 16; ++l) f[l] = __ldg(reinterpret_cast<const float4*>(p) + l);
#pragma unroll
    for (int l = 0; l < kBytes / 16; ++l) {
      v[4 * l] = f[l].x;
      v[4 * l + 1] = f[l].y;
      v[4 * l + 2] = f[l].z;
      v[4 * l + 3] = f[l].w;
    }
  } else {
    std::uint32_t w[kBytes / 4];
    if constexpr (kBytes == 8) {
      const uint2 raw = __ldg(reinterpret_cast<const uint2*>(p));
      __builtin_memcpy(w, &raw, sizeof(raw));
    } else {
      uint4 raw[kBytes / 16];
#pragma unroll
      for (int l = 0; l < kBytes / 16; ++l) raw[l] = __ldg(reinterpret_cast<const uint4*>(p) + l);
      __builtin_memcpy(w, raw, sizeof(raw));
    }
#pragma unroll
    for (int i = 0; i < kBytes / 4; ++i) {
      if constexpr (sizeof(In) == 2) {
        v[2 * i] = __uint_as_float(w[i] << 16);
        v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
      } else {
        v[i] = __uint_as_float(w[i]);
      }
    }
  }
}

// Load: block b of x as FP32. `full`: the block is whole and x 16-byte
// aligned, so it is read as kB * sizeof(In) / 16 vector loads; otherwise a
// short last block behaves as zero-padded (recipe.h kBlock1d). BF16 widens
// by ToF32 here, not as LoadF32s does: that form changes the SASS of the
// BF16 block kernels, unmeasured so far.
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

// ---- statistics ----

// Statistics: s with v[0, kN) folded in by the recipe's step, s =
// step(s, x), in element order (the order a NaN-propagating step needs:
// model_recipe.cu's header). Step's call operator is __forceinline__, as
// every stage is: a recipe reaching a call would be kept in memory.
template <int kN, typename S, typename Step>
__device__ __forceinline__ S AccumulateInOrder(S s, const float* v, const Step& step) {
#pragma unroll
  for (int j = 0; j < kN; ++j) s = step(s, v[j]);
  return s;
}

// The step of a block recipe's amax, Steps::Amax(m, |x|).
template <typename Steps>
struct AmaxStep {
  const Steps& steps;
  __device__ __forceinline__ float operator()(float m, float x) const { return steps.Amax(m, fabsf(x)); }
};

// Statistics: the block's amax by the recipe's amax step, in element order.
template <typename Steps, int kB>
__device__ __forceinline__ float BlockAmaxOf(const Steps& steps, const float (&v)[kB]) {
  return AccumulateInOrder<kB>(0.0f, v, AmaxStep<Steps>{steps});
}

// ---- scaled element and encode ----

// Scaled element and encode: q[j] = encode(v[j]) for v[0, kN), the
// recipe's element step (the scaled value, then its code) as a functor
// whose call operator is __forceinline__.
template <int kN, typename Code, typename Encode>
__device__ __forceinline__ void EncodeEach(const float* v, Code* q, const Encode& encode) {
#pragma unroll
  for (int j = 0; j < kN; ++j) q[j] = encode(v[j]);
}

// The element step of a block recipe under its block's scale s,
// Steps::Element(s, x).
template <typename Steps, typename Scale>
struct ElementStep {
  const Steps& steps;
  const Scale& s;
  __device__ __forceinline__ std::uint32_t operator()(float x) const { return steps.Element(s, x); }
};

// ---- store ----

// w[i] for a run-time i, as selects: indexing the array with a run-time
// value would put it in local memory.
template <int kWords>
__device__ __forceinline__ std::uint32_t Word(const std::uint32_t (&w)[kWords], std::size_t i) {
  std::uint32_t word = w[0];
#pragma unroll
  for (int j = 1; j < kWords; ++j) word = i == static_cast<std::size_t>(j) ? w[j] : word;
  return word;
}

// Store: the code bytes of words[0, n), 64-bit words in little-endian
// order, at dst: 16-byte stores where n is even, 8-byte ones otherwise, dst
// aligned to match.
__device__ __forceinline__ void StoreCodeWords(std::uint8_t* dst, const std::uint64_t* words, int n) {
  if (n % 2 == 0) {
    for (int w = 0; w < n; w += 2) {
      *reinterpret_cast<uint4*>(dst + 8 * w) =
          make_uint4(static_cast<unsigned>(words[w]), static_cast<unsigned>(words[w] >> 32),
                     static_cast<unsigned>(words[w + 1]), static_cast<unsigned>(words[w + 1] >> 32));
    }
  } else {
    for (int w = 0; w < n; ++w) {
      *reinterpret_cast<uint2*>(dst + 8 * w) =
          make_uint2(static_cast<unsigned>(words[w]), static_cast<unsigned>(words[w] >> 32));
    }
  }
}

// Store: block b's kB 4-bit codes, two a byte with element 2k in the low
// nibble of byte k (recipe::Packing::kNibblesLowFirst), as words w. A whole
// block with 16-byte aligned codes is one streaming store; otherwise byte
// by byte up to the end of the tensor. (Its own __stcs, and
// StoreByteCodes's: as StoreCodeWords of the words widened to 64 bits, the
// MX block kernels were scheduled differently.)
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

}  // namespace lowbit::cuda::detail
