// Quantization recipes of quantize.h. Each kernel follows its model in
// formats/include/lowbit/formats/block/ operation by operation (the same FP32
// multiplies and divisions in the same order, no contraction into FMA since
// no additions are involved); element conversions go through the cvt
// instructions verified in verify.cu, or fast_e2m1.cuh, or the model itself.
#include "lowbit/cuda/quantize.h"

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>
#include <string>
#include <type_traits>

#include "element_ops.cuh"
#include "fast_e2m1.cuh"
#include "launch.cuh"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/tuning.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/fp8_scaled_scale.h"
#include "map_kernel.cuh"
#include "ptx.cuh"

namespace lowbit::cuda {
namespace {

using detail::SpecValue;

bool IsDevice(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

Status CheckDevice(const char* what, std::initializer_list<const void*> pointers) {
  if (DeviceCount() == 0) return Status::Error(std::string(what) + ": no CUDA device");
  for (const void* p : pointers) {
    if (p == nullptr) return Status::Error(std::string(what) + ": null buffer");
    if (!IsDevice(p)) return Status::Error(std::string(what) + ": buffers must be device memory");
  }
  return Status::Ok();
}

Status LaunchStatus(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return Status::Error(std::string(what) + ": " + cudaGetErrorString(e));
  return Status::Ok();
}

template <typename In>
__device__ __forceinline__ float ToF32(In v) {
  if constexpr (sizeof(In) == 2) return __uint_as_float(static_cast<std::uint32_t>(v) << 16);
  else return __uint_as_float(v);
}

__device__ __forceinline__ float E4m3ToF32(std::uint32_t code) {
  return ptx::CvtF32F16(static_cast<std::uint16_t>(ptx::CvtF16x2E4m3x2(static_cast<std::uint16_t>(code))));
}

template <FormatId kFp8>
__device__ __forceinline__ std::uint16_t Fp8Pair(float lo, float hi) {
  if constexpr (kFp8 == FormatId::kE4m3) return ptx::CvtE4m3x2F32(lo, hi);
  else return ptx::CvtE5m2x2F32(lo, hi);
}

// ---------------- amax (NaN ignored, as fmaxf; docs/formats-reference.md §5.3) ----------------

__device__ __forceinline__ float BlockMax(float v) {
  __shared__ float warp_max[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? warp_max[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  }
  __syncthreads();  // warp_max may be reused by the caller's next reduction
  return v;         // valid in warp 0
}

// |x| maxima are non-negative floats, which order like their bit patterns.
template <typename In>
__global__ void __launch_bounds__(256) AmaxKernel(const In* __restrict__ x, std::size_t n,
                                                  unsigned* __restrict__ amax_bits) {
  constexpr int kE = 16 / sizeof(In);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  const std::size_t chunks = aligned ? n / kE : 0;
  float m = 0.0f;
  for (std::size_t c = tid; c < chunks; c += stride) {
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(x) + c);
    In e[kE];
    __builtin_memcpy(e, &v, 16);
#pragma unroll
    for (int j = 0; j < kE; ++j) m = fmaxf(m, fabsf(ToF32(e[j])));
  }
  for (std::size_t i = chunks * kE + tid; i < n; i += stride) m = fmaxf(m, fabsf(ToF32(x[i])));
  m = BlockMax(m);
  if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(m));
}

template <typename In>
Status LaunchAmax(const void* x, std::size_t n, float* amax, cudaStream_t stream) {
  cudaMemsetAsync(amax, 0, sizeof(float), stream);
  const std::size_t work = n / (16 / sizeof(In)) + 1;
  AmaxKernel<In><<<detail::GridFor(work, 256), 256, 0, stream>>>(
      static_cast<const In*>(x), n, reinterpret_cast<unsigned*>(amax));
  return LaunchStatus("amax");
}

// ---------------- FP8 per tensor ----------------

// TE compute_scale_from_amax with epsilon 0, no power-of-two forcing
// (block::TeScaleFromAmax); scale_inv = reciprocal(scale).
__global__ void Fp8ScaleKernel(const float* amax, float max_fp8, float* scale, float* scale_inv) {
  const float s = block::TeScaleFromAmax(*amax, max_fp8, false, 0.0f);
  *scale = s;
  if (scale_inv) *scale_inv = 1.0f / s;
}

// x * scale, then cvt.rn.satfinite: the element functor for MapKernel.
template <FormatId kFp8, typename InT>
struct ScaledFp8 {
  using In = InT;
  using Out = std::uint8_t;
  const float* scale;
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const float s = __ldg(scale);
    const std::uint16_t d = Fp8Pair<kFp8>(__fmul_rn(ToF32(a), s), __fmul_rn(ToF32(b), s));
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 8);
  }
  __device__ __forceinline__ Out One(In a, std::size_t i) const {
    Out oa, ob;
    Two(a, a, i, oa, ob);
    return oa;
  }
};

Status Fp8Common(const Fp8PerTensorArgs& a, bool dynamic) {
  if (a.format != FormatId::kE4m3 && a.format != FormatId::kE5m2) {
    return Status::Error("fp8 per-tensor: format must be e4m3 or e5m2");
  }
  if (a.count == 0) return Status::Ok();
  Status s = CheckDevice("fp8 per-tensor", {a.input, a.codes, a.scale});
  if (!s.ok) return s;
  if (dynamic) {
    float* amax = a.amax;
    if (amax == nullptr) return Status::Error("fp8 per-tensor dynamic: amax buffer required");
    s = a.input_type == InputType::kF32 ? LaunchAmax<std::uint32_t>(a.input, a.count, amax, a.stream)
                                        : LaunchAmax<std::uint16_t>(a.input, a.count, amax, a.stream);
    if (!s.ok) return s;
    Fp8ScaleKernel<<<1, 1, 0, a.stream>>>(amax, a.format == FormatId::kE4m3 ? 448.0f : 57344.0f,
                                          a.scale, a.scale_inv);
    s = LaunchStatus("fp8 scale");
    if (!s.ok) return s;
  }
  cudaError_t e;
  const bool f32 = a.input_type == InputType::kF32;
  if (a.format == FormatId::kE4m3) {
    e = f32 ? detail::LaunchMap(a.input, a.codes, a.count, ScaledFp8<FormatId::kE4m3, std::uint32_t>{a.scale}, a.stream, LayoutVariant())
            : detail::LaunchMap(a.input, a.codes, a.count, ScaledFp8<FormatId::kE4m3, std::uint16_t>{a.scale}, a.stream, LayoutVariant());
  } else {
    e = f32 ? detail::LaunchMap(a.input, a.codes, a.count, ScaledFp8<FormatId::kE5m2, std::uint32_t>{a.scale}, a.stream, LayoutVariant())
            : detail::LaunchMap(a.input, a.codes, a.count, ScaledFp8<FormatId::kE5m2, std::uint16_t>{a.scale}, a.stream, LayoutVariant());
  }
  if (e != cudaSuccess) return Status::Error(std::string("fp8 per-tensor: ") + cudaGetErrorString(e));
  return Status::Ok();
}

// ---------------- FP8 per token ----------------

// One block per row: amax over the row, TE scale, then x * scale -> FP8. The
// second pass re-reads the row from L1/L2 (a row of 8192 BF16 is 16 KB).
template <FormatId kFp8, typename In>
__device__ __forceinline__ void StoreFp8Chunk(const uint4& v, float s, std::uint8_t* out, std::size_t c) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
  std::uint8_t o[kE];
#pragma unroll
  for (int j = 0; j < kE; j += 2) {
    const std::uint16_t d = Fp8Pair<kFp8>(__fmul_rn(ToF32(e[j]), s), __fmul_rn(ToF32(e[j + 1]), s));
    o[j] = static_cast<std::uint8_t>(d);
    o[j + 1] = static_cast<std::uint8_t>(d >> 8);
  }
  if constexpr (kE == 8) {
    uint2 w;
    __builtin_memcpy(&w, o, 8);
    __stcs(reinterpret_cast<uint2*>(out) + c, w);
  } else {
    unsigned w;
    __builtin_memcpy(&w, o, 4);
    __stcs(reinterpret_cast<unsigned*>(out) + c, w);
  }
}

template <typename In>
__device__ __forceinline__ float ChunkAbsMax(const uint4& v, float m) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
#pragma unroll
  for (int j = 0; j < kE; ++j) m = fmaxf(m, fabsf(ToF32(e[j])));
  return m;
}

// One block per row: amax over the row, TE scale, then x * scale -> FP8. The
// first kCache 16-byte chunks of each thread stay in registers between the
// two passes (a row of up to 8192 BF16 is read from memory once); chunks
// beyond that are read again (from L2).
template <FormatId kFp8, typename In, int kThreads>
__global__ void __launch_bounds__(kThreads)
    PerTokenKernel(const In* __restrict__ x, std::size_t cols, std::uint8_t* __restrict__ q,
                   float* __restrict__ scale_inv, float max_fp8, bool vector) {
  constexpr int kE = 16 / sizeof(In);
  constexpr int kCache = 4;
  const In* row = x + blockIdx.x * cols;
  std::uint8_t* out = q + blockIdx.x * cols;
  const std::size_t chunks = vector ? cols / kE : 0;
  const uint4* vrow = reinterpret_cast<const uint4*>(row);
  uint4 cache[kCache];
  float m = 0.0f;
#pragma unroll
  for (int k = 0; k < kCache; ++k) {
    const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
    if (c < chunks) {
      cache[k] = __ldcs(vrow + c);
      m = ChunkAbsMax<In>(cache[k], m);
    }
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    m = ChunkAbsMax<In>(__ldg(vrow + c), m);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, fabsf(ToF32(row[i])));
  __shared__ float row_scale;
  m = BlockMax(m);
  if (threadIdx.x == 0) {
    const float s = block::TeScaleFromAmax(m, max_fp8, false, 0.0f);
    row_scale = s;
    scale_inv[blockIdx.x] = 1.0f / s;
  }
  __syncthreads();
  const float s = row_scale;
#pragma unroll
  for (int k = 0; k < kCache; ++k) {
    const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
    if (c < chunks) StoreFp8Chunk<kFp8, In>(cache[k], s, out, c);
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    StoreFp8Chunk<kFp8, In>(__ldcs(vrow + c), s, out, c);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) {
    out[i] = static_cast<std::uint8_t>(Fp8Pair<kFp8>(__fmul_rn(ToF32(row[i]), s), 0.0f));
  }
}

// ---------------- NVFP4 (TE) ----------------

// The E2M1 encoder of the FP4 recipes: EncodeE2m1Fast, or (kTwoPath, the
// tuning.h variant 1 baseline) the encoder it replaced.
template <bool kTwoPath>
__device__ __forceinline__ std::uint32_t EncodeE2m1(float y) {
  if constexpr (kTwoPath) return detail::EncodeE2m1TwoPath(y);
  else return detail::EncodeE2m1Fast(y);
}

struct Nvfp4TensorScaleDevice {
  float encode, decode;
};

// block::Nvfp4TensorScaleFromAmax(kTe, amax).
__device__ __forceinline__ Nvfp4TensorScaleDevice TeNvfp4TensorScale(float amax) {
  float s_enc = 2688.0f / amax;
  s_enc = s_enc < FLT_MAX ? s_enc : FLT_MAX;
  if (amax == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  return {s_enc, static_cast<float>(1.0 / static_cast<double>(s_enc))};
}

__global__ void Nvfp4DecodeScaleKernel(const float* amax, float* decode_scale) {
  *decode_scale = TeNvfp4TensorScale(*amax).decode;
}

// One thread per 16-element block.
template <typename In, bool kTwoPath>
__global__ void __launch_bounds__(256, 4)
    Nvfp4Kernel(const In* __restrict__ x, std::size_t n, const float* __restrict__ global_amax,
                std::uint8_t* __restrict__ packed, std::uint8_t* __restrict__ scales, bool vector) {
  constexpr int kLoads = 16 * sizeof(In) / 16;
  const Nvfp4TensorScaleDevice t = TeNvfp4TensorScale(__ldg(global_amax));
  const float enc_over_6 = __fmul_rn(t.encode, 1.0f / 6.0f);  // S_enc * fp32(1/6)
  const std::size_t blocks = (n + 15) / 16;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const bool full = vector && (b + 1) * 16 <= n;
    float v[16];
    if (full) {
      uint4 raw[kLoads];
#pragma unroll
      for (int l = 0; l < kLoads; ++l) raw[l] = __ldg(reinterpret_cast<const uint4*>(x + b * 16) + l);
      In e[16];
      __builtin_memcpy(e, raw, sizeof(raw));
#pragma unroll
      for (int j = 0; j < 16; ++j) v[j] = ToF32(e[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 16; ++j) v[j] = b * 16 + j < n ? ToF32(x[b * 16 + j]) : 0.0f;
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; ++j) amax = fmaxf(amax, fabsf(v[j]));
    float block_scale = __fmul_rn(amax, enc_over_6);
    block_scale = block_scale < FLT_MAX ? block_scale : FLT_MAX;
    const std::uint32_t scale_code = ptx::CvtE4m3x2F32(block_scale, 0.0f) & 0xFFu;
    const float inv = __fdiv_rn(1.0f, __fmul_rn(E4m3ToF32(scale_code), t.decode));
    const float factor = inv < FLT_MAX ? inv : FLT_MAX;
    std::uint32_t lo = 0, hi = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) lo += EncodeE2m1<kTwoPath>(__fmul_rn(v[j], factor)) << (4 * j);
#pragma unroll
    for (int j = 0; j < 8; ++j) hi += EncodeE2m1<kTwoPath>(__fmul_rn(v[8 + j], factor)) << (4 * j);
    scales[b] = static_cast<std::uint8_t>(scale_code);
    if (full && reinterpret_cast<std::uintptr_t>(packed) % 8 == 0) {
      __stcs(reinterpret_cast<uint2*>(packed) + b, make_uint2(lo, hi));
    } else {
      const std::size_t bytes = (n - b * 16 + 1) / 2 < 8 ? (n - b * 16 + 1) / 2 : 8;
      for (std::size_t k = 0; k < bytes; ++k) {
        packed[b * 8 + k] = static_cast<std::uint8_t>((k < 4 ? lo >> (8 * k) : hi >> (8 * (k - 4))) & 0xFF);
      }
    }
  }
}

// (q * s) * S_dec, then BF16 RN. One thread per 16-element block.
__global__ void __launch_bounds__(256, 4)
    Nvfp4DequantKernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                       const float* __restrict__ decode_scale, std::size_t n,
                       std::uint16_t* __restrict__ out, bool vector) {
  const float s_dec = __ldg(decode_scale);
  const std::size_t blocks = (n + 15) / 16;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const float s = E4m3ToF32(__ldg(scales + b));
    const bool full = vector && (b + 1) * 16 <= n;
    std::uint32_t w[2];
    if (full) {
      const uint2 p = __ldg(reinterpret_cast<const uint2*>(packed) + b);
      w[0] = p.x;
      w[1] = p.y;
    } else {
      w[0] = w[1] = 0;
      for (std::size_t k = 0; k < 8 && b * 16 + 2 * k < n; ++k) {
        w[k / 4] |= static_cast<std::uint32_t>(packed[b * 8 + k]) << (8 * (k % 4));
      }
    }
    std::uint32_t o[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::uint32_t word = w[j / 4];
      const int shift = 8 * (j % 4);
      const float a = __fmul_rn(__fmul_rn(detail::DecodeE2m1Fast(word >> shift), s), s_dec);
      const float c = __fmul_rn(__fmul_rn(detail::DecodeE2m1Fast(word >> (shift + 4)), s), s_dec);
      o[j] = ptx::CvtRnBf16x2F32(a, c);
    }
    if (full && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
      uint4* dst = reinterpret_cast<uint4*>(out + b * 16);
      __stcs(dst, make_uint4(o[0], o[1], o[2], o[3]));
      __stcs(dst + 1, make_uint4(o[4], o[5], o[6], o[7]));
    } else {
      for (int j = 0; j < 16 && b * 16 + j < n; ++j) {
        out[b * 16 + j] = static_cast<std::uint16_t>(o[j / 2] >> (16 * (j % 2)));
      }
    }
  }
}

// The flat layout of map_kernel.cuh for the dequantization (tuning.h
// variant 0): a unit is 8 elements, 4 packed bytes in and one 16-byte BF16
// store out, so a warp's loads and stores are contiguous spans; each thread
// issues its 4 units' loads (and their block scales) before decoding. The
// one-thread-per-block layout above stored 2 x 16 bytes per lane 32 bytes
// apart and moved 0.65x copy on the H200.
__device__ __forceinline__ uint4 Nvfp4DecodeUnit(std::uint32_t word, float s, float s_dec) {
  std::uint32_t o[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const float a = __fmul_rn(__fmul_rn(detail::DecodeE2m1Fast(word >> (8 * j)), s), s_dec);
    const float c = __fmul_rn(__fmul_rn(detail::DecodeE2m1Fast(word >> (8 * j + 4)), s), s_dec);
    o[j] = ptx::CvtRnBf16x2F32(a, c);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

template <bool kPlain>
__global__ void __launch_bounds__(detail::kFlatThreads)
    Nvfp4DequantFlatKernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                           const float* __restrict__ decode_scale, std::size_t n,
                           std::uint16_t* __restrict__ out) {
  constexpr int kT = detail::kFlatThreads, kU = detail::kFlatUnroll;
  const std::size_t units = n / 8;
  const float s_dec = __ldg(decode_scale);
  const auto* words = reinterpret_cast<const unsigned*>(packed);
  auto* out4 = reinterpret_cast<uint4*>(out);
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kT * kU) + threadIdx.x;
  if (base + (kU - 1) * kT < units) {
    unsigned w[kU];
    std::uint8_t sc[kU];
#pragma unroll
    for (int k = 0; k < kU; ++k) {
      w[k] = detail::LoadStreaming<kPlain>(words + base + k * kT);
      sc[k] = __ldg(scales + (base + k * kT) / 2);
    }
#pragma unroll
    for (int k = 0; k < kU; ++k) {
      detail::StoreStreaming<kPlain>(out4 + base + k * kT, Nvfp4DecodeUnit(w[k], E4m3ToF32(sc[k]), s_dec));
    }
  } else {
    for (int k = 0; k < kU; ++k) {
      const std::size_t u = base + k * kT;
      if (u >= units) break;
      detail::StoreStreaming<kPlain>(out4 + u, Nvfp4DecodeUnit(words[u], E4m3ToF32(scales[u / 2]), s_dec));
    }
  }
  if (blockIdx.x == 0) {  // the last n % 8 elements
    for (std::size_t i = units * 8 + threadIdx.x; i < n; i += kT) {
      const std::uint32_t code = (packed[i / 2] >> (4 * (i % 2))) & 0xFu;
      const float v = __fmul_rn(__fmul_rn(detail::DecodeE2m1Fast(code), E4m3ToF32(scales[i / 16])), s_dec);
      out[i] = static_cast<std::uint16_t>(ptx::CvtRnBf16x2F32(v, 0.0f));
    }
  }
}

// ---------------- MX ----------------

// emax_elem and fp32(1 / max element), docs/formats-reference.md §5.1 / §5.3 (block_spec.h).
template <FormatId kElem>
struct MxElement {
  static constexpr int kEmax = kElem == FormatId::kE4m3 ? 8 : kElem == FormatId::kE5m2 ? 15
                             : kElem == FormatId::kE3m2 ? 4 : kElem == FormatId::kInt8 ? 0 : 2;
  static constexpr float kMax = kElem == FormatId::kE4m3 ? 448.0f : kElem == FormatId::kE5m2 ? 57344.0f
                              : kElem == FormatId::kE3m2 ? 28.0f : kElem == FormatId::kE2m3 ? 7.5f
                              : kElem == FormatId::kInt8 ? 127.0f / 64.0f : 6.0f;
  static constexpr float kRcp = 1.0f / kMax;
};

// block::detail::SaturatingElements(RNE, nan_sign): the recipes' element policy.
__device__ __forceinline__ EncodeOptions MxElementOptions(bool te) {
  EncodeOptions o;
  o.overflow = Overflow::kSaturate;
  o.inf_input = InfInput::kLikeOverflow;
  o.nan_sign = te ? NanSign::kPositive : NanSign::kKeep;
  o.nan_payload = NanPayload::kAllOnes;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return o;
}

template <FormatId kElem, bool kTe>
__device__ __forceinline__ std::uint32_t MxScaleCode(float amax) {
  if constexpr (kTe) {
    // RCEIL: E8M0 round-up, saturating, of amax * fp32(1/max) (mx_scale_rule.h).
    const float product = __fmul_rn(amax, MxElement<kElem>::kRcp);
    // From the bits for every finite product (amax >= +0, so it is >= +0):
    // a normal 2^(E-127) * 1.M rounds up to code E, or E + 1 when M != 0,
    // saturating at 254 (2^127); a subnormal is at most 2^-127 (code 0, also
    // zero's code: the minimum positive) when M <= 2^22, else below 2^-126
    // (code 1). Equal to the model on all 0x7F800000 finite inputs (checked
    // on the host); Inf and NaN take the model below. The model's generic
    // rounding was the most expensive step of the lane-group MXFP4 kernel.
    const std::uint32_t pb = __float_as_uint(product);
    if (pb < 0x7F800000u) {
      const std::uint32_t e = pb >> 23, m = pb & 0x7FFFFFu;
      return e == 0 ? (m > 0x400000u ? 1u : 0u) : min(e + (m != 0 ? 1u : 0u), 254u);
    }
    EncodeOptions e;
    e.rounding = RoundingMode::kUp;
    e.overflow = Overflow::kSaturate;
    e.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
    e.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
    return static_cast<std::uint32_t>(
        Convert(SpecValue<FormatId::kFp32>(), __float_as_uint(product), SpecValue<FormatId::kE8m0>(), e).code);
  } else {
    // OCP FLOOR from the exponent bits.
    const std::uint32_t bits = __float_as_uint(amax) & 0x7FFFFFFFu;
    if (bits >= 0x7F800000u) return 0xFF;
    int e = static_cast<int>(bits >> 23) - 127 - MxElement<kElem>::kEmax;
    if (e < -127) e = -127;
    if (e > 127) return 0xFF;
    return static_cast<std::uint32_t>(e + 127);
  }
}

template <FormatId kElem, bool kTe, bool kTwoPath>
__device__ __forceinline__ std::uint32_t MxElementCode(float y) {
  if constexpr (kElem == FormatId::kE2m1) {
    return EncodeE2m1<kTwoPath>(y);
  } else if constexpr (kElem == FormatId::kE4m3 || kElem == FormatId::kE5m2) {
    // Only canonical +NaN or (TE) NaN elements reach here, and the recipes'
    // NaN is +NaN 0x7F in both cases, as the satfinite instruction gives.
    return Fp8Pair<kElem>(y, 0.0f) & 0xFFu;
  } else if constexpr (kElem == FormatId::kInt8) {
    const float y6 = __fmul_rn(y, 64.0f);  // onto the integer grid, 2^-6 implied
    std::int64_t v = static_cast<std::int64_t>(
        Convert(SpecValue<FormatId::kFp32>(), __float_as_uint(y6), SpecValue<FormatId::kInt8>(), MxElementOptions(kTe)).code);
    if (v > 127) v -= 256;
    v = v > 127 ? 127 : (v < -127 ? -127 : v);
    return static_cast<std::uint32_t>(v) & 0xFFu;
  } else {
    return static_cast<std::uint32_t>(
        Convert(SpecValue<FormatId::kFp32>(), __float_as_uint(y), SpecValue<kElem>(), MxElementOptions(kTe)).code);
  }
}

// One thread per 32-element block.
template <FormatId kElem, bool kTe, typename In, bool kTwoPath>
__global__ void __launch_bounds__(256, 4)
    MxKernel(const In* __restrict__ x, std::size_t n, std::uint8_t* __restrict__ codes,
             std::uint8_t* __restrict__ scales, bool vector) {
  constexpr int kLoads = 32 * sizeof(In) / 16;
  constexpr bool kPacked = kElem == FormatId::kE2m1;
  const std::size_t blocks = (n + 31) / 32;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const bool full = vector && (b + 1) * 32 <= n;
    float v[32];
    if (full) {
      uint4 raw[kLoads];
#pragma unroll
      for (int l = 0; l < kLoads; ++l) raw[l] = __ldg(reinterpret_cast<const uint4*>(x + b * 32) + l);
      In e[32];
      __builtin_memcpy(e, raw, sizeof(raw));
#pragma unroll
      for (int j = 0; j < 32; ++j) v[j] = ToF32(e[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 32; ++j) v[j] = b * 32 + j < n ? ToF32(x[b * 32 + j]) : 0.0f;
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const float a = fabsf(v[j]);
      if constexpr (kTe) {
        amax = fmaxf(amax, a);  // NaN ignored
      } else {
        amax = (amax != amax) ? amax : ((a != a) ? a : (amax < a ? a : amax));  // NaN propagates
      }
    }
    const std::uint32_t scale = MxScaleCode<kElem, kTe>(amax);
    const bool nan_scale = scale == 0xFF;
    // TE: x * 2^-e (E8m0ReciprocalF32). OCP: x / 2^e, computed as x * 2^-e:
    // 2^-e is exact in FP32 for e in -127..127 (2^-127 as a subnormal), so
    // both are the one correctly rounded value of the same real number.
    const float rcp = __uint_as_float(scale >= 254 ? (scale == 254 ? 0x00400000u : 0x7FC00000u)
                                                  : (254u - scale) << 23);
    std::uint32_t q[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      float y = __fmul_rn(v[j], rcp);
      // A NaN scale makes rcp NaN, so y is already the canonical +NaN
      // (docs/formats-reference.md §3.3); the FP4 and FP8 encoders map any NaN as the model maps
      // its +NaN. The model-based encoders get the model's own NaN.
      if constexpr (kElem != FormatId::kE2m1 && kElem != FormatId::kE4m3 && kElem != FormatId::kE5m2) {
        if (nan_scale) y = __uint_as_float(0x7FC00000u);
      }
      q[j] = MxElementCode<kElem, kTe, kTwoPath>(y);
    }
    scales[b] = static_cast<std::uint8_t>(scale);
    if constexpr (kPacked) {
      std::uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j / 8] += q[j] << (4 * (j % 8));
      if (full && reinterpret_cast<std::uintptr_t>(codes) % 16 == 0) {
        __stcs(reinterpret_cast<uint4*>(codes) + b, make_uint4(w[0], w[1], w[2], w[3]));
      } else {
        for (std::size_t k = 0; k < 16 && b * 32 + 2 * k < n; ++k) {
          codes[b * 16 + k] = static_cast<std::uint8_t>(w[k / 4] >> (8 * (k % 4)));
        }
      }
    } else {
      std::uint32_t w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
      for (int j = 0; j < 32; ++j) w[j / 4] |= q[j] << (8 * (j % 4));
      if (full && reinterpret_cast<std::uintptr_t>(codes) % 16 == 0) {
        uint4* dst = reinterpret_cast<uint4*>(codes) + 2 * b;
        __stcs(dst, make_uint4(w[0], w[1], w[2], w[3]));
        __stcs(dst + 1, make_uint4(w[4], w[5], w[6], w[7]));
      } else {
        for (std::size_t k = 0; k < 32 && b * 32 + k < n; ++k) {
          codes[b * 32 + k] = static_cast<std::uint8_t>(w[k / 4] >> (8 * (k % 4)));
        }
      }
    }
  }
}

// ---------------- FP4 recipes of BF16 input, lane groups ----------------
// NVFP4 and MXFP4 of BF16 in the flat layout (tuning.h variant 0): a lane
// takes one 16-byte unit (8 elements) of a block, so a warp's loads are one
// contiguous 512-byte span and each thread has 4 units in flight; the kLanes
// lanes of a block (2 for NVFP4's 16, 4 for MX's 32) combine their amax
// with kLanes - 1 register shuffles (no shared memory), each computes the
// block's scale, and each stores its 8 codes as one 4-byte word. One thread
// per block (the kernels above, variant 1) loaded 32 bytes per lane 32 bytes
// apart and measured 0.58x (NVFP4) / 0.57x (MXFP4) copy on the H200.
struct Nvfp4BlockScale {
  const float* global_amax;
  float enc_over_6 = 0, decode = 0;
  static constexpr int kLanes = 2;
  __device__ __forceinline__ void Init() {  // the tensor scale, as Nvfp4Kernel
    const Nvfp4TensorScaleDevice t = TeNvfp4TensorScale(__ldg(global_amax));
    enc_over_6 = __fmul_rn(t.encode, 1.0f / 6.0f);
    decode = t.decode;
  }
  __device__ __forceinline__ float Amax(float m, float a) const { return fmaxf(m, a); }
  // (scale code, element multiplier) of nvfp4_recipe.h kTe, as Nvfp4Kernel.
  __device__ __forceinline__ std::uint32_t Scale(float amax, float* factor) const {
    float block_scale = __fmul_rn(amax, enc_over_6);
    block_scale = block_scale < FLT_MAX ? block_scale : FLT_MAX;
    const std::uint32_t code = ptx::CvtE4m3x2F32(block_scale, 0.0f) & 0xFFu;
    const float inv = __fdiv_rn(1.0f, __fmul_rn(E4m3ToF32(code), decode));
    *factor = inv < FLT_MAX ? inv : FLT_MAX;
    return code;
  }
};

template <bool kTe>
struct MxFp4BlockScale {
  static constexpr int kLanes = 4;
  __device__ __forceinline__ void Init() {}
  __device__ __forceinline__ float Amax(float m, float a) const {
    if constexpr (kTe) return fmaxf(m, a);  // NaN ignored
    else return (m != m) ? m : ((a != a) ? a : (m < a ? a : m));  // NaN propagates
  }
  __device__ __forceinline__ std::uint32_t Scale(float amax, float* factor) const {
    const std::uint32_t scale = MxScaleCode<FormatId::kE2m1, kTe>(amax);
    // As MxKernel: x * 2^-e, NaN for the NaN scale (then code 7, as the model).
    *factor = __uint_as_float(scale >= 254 ? (scale == 254 ? 0x00400000u : 0x7FC00000u) : (254u - scale) << 23);
    return scale;
  }
};

template <typename Policy, bool kPlain>
__global__ void __launch_bounds__(detail::kFlatThreads)
    Fp4Bf16LaneKernel(const std::uint16_t* __restrict__ x, std::size_t units, Policy policy,
                      std::uint8_t* __restrict__ packed, std::uint8_t* __restrict__ scales) {
  constexpr int kT = detail::kFlatThreads, kU = detail::kFlatUnroll, kLanes = Policy::kLanes;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kT * kU) + threadIdx.x;
  const auto* in = reinterpret_cast<const uint4*>(x);
  policy.Init();
  uint4 raw[kU];
#pragma unroll
  for (int k = 0; k < kU; ++k) {
    const std::size_t u = base + k * kT;
    raw[k] = u < units ? detail::LoadStreaming<kPlain>(in + u) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int k = 0; k < kU; ++k) {
    const std::size_t u = base + k * kT;
    const std::uint32_t w[4] = {raw[k].x, raw[k].y, raw[k].z, raw[k].w};
    float v[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = __uint_as_float(w[i] << 16);
      v[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) amax = policy.Amax(amax, fabsf(v[j]));
    // Lanes of one block are consecutive (kT is a multiple of kLanes and a
    // block's units are consecutive): xor-shuffles over them, every lane
    // taking part (units past the end hold zeros, which never raise amax).
#pragma unroll
    for (int o = 1; o < kLanes; o <<= 1) amax = policy.Amax(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
    float factor;
    const std::uint32_t code = policy.Scale(amax, &factor);
    std::uint32_t word = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) word += detail::EncodeE2m1Fast(__fmul_rn(v[j], factor)) << (4 * j);
    if (u < units) {
      detail::StoreStreaming<kPlain>(reinterpret_cast<unsigned*>(packed) + u, word);
      if (u % kLanes == 0) scales[u / kLanes] = static_cast<std::uint8_t>(code);
    }
  }
}

// Launches Fp4Bf16LaneKernel over the whole blocks of an aligned BF16 input;
// returns how many elements it covered (0: not applicable).
template <typename Policy>
std::size_t LaunchFp4Bf16Lanes(const void* input, std::size_t count, const Policy& policy, std::uint8_t* packed,
                               std::uint8_t* scales, cudaStream_t stream) {
  constexpr std::size_t kBlock = 8 * Policy::kLanes;
  if (LayoutVariant() == 1 || reinterpret_cast<std::uintptr_t>(input) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(packed) % 4 != 0) {
    return 0;
  }
  const std::size_t whole = count / kBlock;
  const std::size_t units = whole * Policy::kLanes;
  const std::size_t per_block = static_cast<std::size_t>(detail::kFlatThreads) * detail::kFlatUnroll;
  const std::size_t grid = (units + per_block - 1) / per_block;
  if (whole == 0 || grid >= 0x7FFFFFFFu) return 0;
  if (LayoutVariant() == 2) {
    Fp4Bf16LaneKernel<Policy, false><<<static_cast<unsigned>(grid), detail::kFlatThreads, 0, stream>>>(
        static_cast<const std::uint16_t*>(input), units, policy, packed, scales);
  } else {
    Fp4Bf16LaneKernel<Policy, true><<<static_cast<unsigned>(grid), detail::kFlatThreads, 0, stream>>>(
        static_cast<const std::uint16_t*>(input), units, policy, packed, scales);
  }
  return whole * kBlock;
}

template <FormatId kElem, bool kTe, bool kTwoPath>
void LaunchMxWith(const MxArgs& a) {
  const std::size_t blocks = (a.count + 31) / 32;
  const unsigned grid = detail::GridFor(blocks, 256);
  const bool vector = reinterpret_cast<std::uintptr_t>(a.input) % 16 == 0;
  if (a.input_type == InputType::kF32) {
    MxKernel<kElem, kTe, std::uint32_t, kTwoPath><<<grid, 256, 0, a.stream>>>(
        static_cast<const std::uint32_t*>(a.input), a.count, a.codes, a.scales, vector);
  } else {
    MxKernel<kElem, kTe, std::uint16_t, kTwoPath><<<grid, 256, 0, a.stream>>>(
        static_cast<const std::uint16_t*>(a.input), a.count, a.codes, a.scales, vector);
  }
}

template <FormatId kElem, bool kTe>
void LaunchMx(const MxArgs& a) {
  if constexpr (kElem == FormatId::kE2m1) {
    if (LayoutVariant() == 1) return LaunchMxWith<kElem, kTe, true>(a);
    if (a.input_type == InputType::kBf16) {
      const std::size_t done = LaunchFp4Bf16Lanes(a.input, a.count, MxFp4BlockScale<kTe>{}, a.codes, a.scales, a.stream);
      if (done > 0) {
        if (done == a.count) return;
        MxArgs rest = a;  // the partial last block: the one-thread-per-block kernel
        rest.input = static_cast<const std::uint16_t*>(a.input) + done;
        rest.count = a.count - done;
        rest.codes = a.codes + done / 2;
        rest.scales = a.scales + done / 32;
        return LaunchMxWith<kElem, kTe, false>(rest);
      }
    }
  }
  LaunchMxWith<kElem, kTe, false>(a);
}

template <FormatId kElem>
void LaunchMxRecipe(const MxArgs& a) {
  if (a.recipe == MxRecipeId::kTe) LaunchMx<kElem, true>(a);
  else LaunchMx<kElem, false>(a);
}

}  // namespace

Status QuantizeFp8PerTensorStatic(const Fp8PerTensorArgs& args) { return Fp8Common(args, false); }
Status QuantizeFp8PerTensorDynamic(const Fp8PerTensorArgs& args) { return Fp8Common(args, true); }

Status QuantizeFp8PerToken(const Fp8PerTokenArgs& a) {
  if (a.format != FormatId::kE4m3 && a.format != FormatId::kE5m2) {
    return Status::Error("fp8 per-token: format must be e4m3 or e5m2");
  }
  if (a.rows == 0 || a.cols == 0) return Status::Ok();
  if (a.rows > 0x7FFFFFFFu) return Status::Error("fp8 per-token: at most 2^31-1 rows");
  Status s = CheckDevice("fp8 per-token", {a.input, a.codes, a.scale_inv});
  if (!s.ok) return s;
  const std::size_t in_size = a.input_type == InputType::kF32 ? 4 : 2;
  const bool vector = reinterpret_cast<std::uintptr_t>(a.input) % 16 == 0 &&
                      (a.cols * in_size) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(a.codes) % 8 == 0 && a.cols % 8 == 0;
  const float max_fp8 = a.format == FormatId::kE4m3 ? 448.0f : 57344.0f;
  const unsigned rows = static_cast<unsigned>(a.rows);
  // 128 threads when a row fits their registers (4 chunks of 16 bytes each:
  // 8 KB, a BF16 row of 4096): every load of the row is issued before the
  // reduction and twice as many rows share an SM; 256 otherwise
  // (tuning.h variant 1: always 256).
  const bool narrow = LayoutVariant() != 1 && a.cols * in_size <= 128 * 4 * 16;
  auto launch = [&](auto fp8, auto in_type) {
    constexpr FormatId kF = decltype(fp8)::value;
    using T = decltype(in_type);
    const T* x = static_cast<const T*>(a.input);
    if (narrow) PerTokenKernel<kF, T, 128><<<rows, 128, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, max_fp8, vector);
    else PerTokenKernel<kF, T, 256><<<rows, 256, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, max_fp8, vector);
  };
  using E4 = std::integral_constant<FormatId, FormatId::kE4m3>;
  using E5 = std::integral_constant<FormatId, FormatId::kE5m2>;
  const bool f32 = a.input_type == InputType::kF32;
  if (a.format == FormatId::kE4m3) {
    if (f32) launch(E4{}, std::uint32_t{});
    else launch(E4{}, std::uint16_t{});
  } else {
    if (f32) launch(E5{}, std::uint32_t{});
    else launch(E5{}, std::uint16_t{});
  }
  return LaunchStatus("fp8 per-token");
}

Status QuantizeNvfp4(const Nvfp4Args& a) {
  if (a.count == 0) return Status::Ok();
  Status s = CheckDevice("nvfp4", {a.input, a.packed_codes, a.scales, a.decode_scale});
  if (!s.ok) return s;
  const float* amax = a.global_amax;
  if (amax == nullptr) {
    if (a.amax_out == nullptr) return Status::Error("nvfp4: global_amax or amax_out required");
    s = a.input_type == InputType::kF32 ? LaunchAmax<std::uint32_t>(a.input, a.count, a.amax_out, a.stream)
                                        : LaunchAmax<std::uint16_t>(a.input, a.count, a.amax_out, a.stream);
    if (!s.ok) return s;
    amax = a.amax_out;
  }
  Nvfp4DecodeScaleKernel<<<1, 1, 0, a.stream>>>(amax, a.decode_scale);
  const std::size_t blocks = (a.count + 15) / 16;
  const bool vector = reinterpret_cast<std::uintptr_t>(a.input) % 16 == 0;
  auto launch = [&](auto two_path) {
    constexpr bool kTwoPath = decltype(two_path)::value;
    if (a.input_type == InputType::kF32) {
      Nvfp4Kernel<std::uint32_t, kTwoPath><<<detail::GridFor(blocks, 256), 256, 0, a.stream>>>(
          static_cast<const std::uint32_t*>(a.input), a.count, amax, a.packed_codes, a.scales, vector);
    } else {
      Nvfp4Kernel<std::uint16_t, kTwoPath><<<detail::GridFor(blocks, 256), 256, 0, a.stream>>>(
          static_cast<const std::uint16_t*>(a.input), a.count, amax, a.packed_codes, a.scales, vector);
    }
  };
  if (LayoutVariant() == 1) {
    launch(std::true_type{});
    return LaunchStatus("nvfp4");
  }
  if (a.input_type == InputType::kBf16 && reinterpret_cast<std::uintptr_t>(a.input) % 16 == 0 &&
      reinterpret_cast<std::uintptr_t>(a.packed_codes) % 4 == 0 && a.count >= 16 && a.count / 16 * 2 < 0x3FFFFFFF00ull) {
    const std::size_t whole = LaunchFp4Bf16Lanes(a.input, a.count, Nvfp4BlockScale{amax}, a.packed_codes,
                                                 a.scales, a.stream) / 16;
    const std::size_t done = whole * 16;
    if (done < a.count) {
      Nvfp4Kernel<std::uint16_t, false><<<1, 256, 0, a.stream>>>(
          static_cast<const std::uint16_t*>(a.input) + done, a.count - done, amax, a.packed_codes + done / 2,
          a.scales + whole, false);
    }
    return LaunchStatus("nvfp4");
  }
  launch(std::false_type{});
  return LaunchStatus("nvfp4");
}

Status DequantizeNvfp4ToBf16(const std::uint8_t* packed, const std::uint8_t* scales,
                             const float* decode_scale, std::size_t count, std::uint16_t* out,
                             cudaStream_t stream) {
  if (count == 0) return Status::Ok();
  Status s = CheckDevice("nvfp4 dequantize", {packed, scales, decode_scale, out});
  if (!s.ok) return s;
  const std::size_t blocks = (count + 15) / 16;
  if (LayoutVariant() != 1 && reinterpret_cast<std::uintptr_t>(packed) % 4 == 0 &&
      reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    const std::size_t per_block = static_cast<std::size_t>(detail::kFlatThreads) * detail::kFlatUnroll;
    const std::size_t grid = (count / 8 + per_block - 1) / per_block;
    if (grid < 0x7FFFFFFFu) {
      const unsigned g = static_cast<unsigned>(grid > 0 ? grid : 1);
      if (LayoutVariant() == 2) {
        Nvfp4DequantFlatKernel<false><<<g, detail::kFlatThreads, 0, stream>>>(packed, scales, decode_scale, count, out);
      } else {
        Nvfp4DequantFlatKernel<true><<<g, detail::kFlatThreads, 0, stream>>>(packed, scales, decode_scale, count, out);
      }
      return LaunchStatus("nvfp4 dequantize");
    }
  }
  const bool vector = reinterpret_cast<std::uintptr_t>(packed) % 8 == 0;
  Nvfp4DequantKernel<<<detail::GridFor(blocks, 256), 256, 0, stream>>>(packed, scales, decode_scale,
                                                                       count, out, vector);
  return LaunchStatus("nvfp4 dequantize");
}

Status QuantizeMx(const MxArgs& a) {
  if (a.count == 0) return Status::Ok();
  Status s = CheckDevice("mx", {a.input, a.codes, a.scales});
  if (!s.ok) return s;
  switch (a.element) {
    case FormatId::kE2m1: LaunchMxRecipe<FormatId::kE2m1>(a); break;
    case FormatId::kE2m3: LaunchMxRecipe<FormatId::kE2m3>(a); break;
    case FormatId::kE3m2: LaunchMxRecipe<FormatId::kE3m2>(a); break;
    case FormatId::kE4m3: LaunchMxRecipe<FormatId::kE4m3>(a); break;
    case FormatId::kE5m2: LaunchMxRecipe<FormatId::kE5m2>(a); break;
    case FormatId::kInt8: LaunchMxRecipe<FormatId::kInt8>(a); break;
    default:
      return Status::Error(std::string("mx: no MX format has element ") + Spec(a.element).name);
  }
  return LaunchStatus("mx");
}

}  // namespace lowbit::cuda
