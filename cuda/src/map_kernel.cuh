// One array kernel for every element functor (element_ops.cuh): 16-byte
// vector loads and stores, any length, any alignment.
//
// A unit is kE = 16 / max(sizeof In, sizeof Out) elements: the wider side is
// one 16-byte access, the narrower one 4- or 8-byte access (FP32 -> FP8: 16 B
// loaded, 4 B stored). The elements after the last
// whole chunk, or every element when a buffer is not 16-byte aligned, go
// through a scalar grid-stride loop in the same launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "launch.cuh"
#include "ptx.cuh"

namespace lowbit::cuda::detail {

template <int kBytes>
struct VecOf;
template <>
struct VecOf<4> { using T = unsigned; };
template <>
struct VecOf<8> { using T = uint2; };
template <>
struct VecOf<16> { using T = uint4; };

template <typename F>
struct MapShape {
  using In = typename F::In;
  using Out = typename F::Out;
  static constexpr int kWide = sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out);
  // Elements per unit: the wider side moves 16 bytes, the narrower 4 or 8.
  static constexpr int kE = 16 / kWide;
  using VecIn = typename VecOf<kE * static_cast<int>(sizeof(In))>::T;
  using VecOut = typename VecOf<kE * static_cast<int>(sizeof(Out))>::T;
  static constexpr int kUnroll = 4;  // independent units in flight per thread
  static_assert(kE >= 2 && kE % 2 == 0);
};

// Narrowing (encodes): a thread takes kN = 16 / sizeof(Out) contiguous
// elements, several 16-byte loads in flight and one 16-byte store. Measured on
// an H200 (bench/RESULTS-archive-2026.md) this beat the coalesced unit layout below for
// FP32 -> FP8 (0.93x vs 0.85x copy), while widening (decodes) gained from it
// (0.89x vs 0.63x): so each direction has its layout.
template <typename F>
struct NarrowShape {
  using In = typename F::In;
  using Out = typename F::Out;
  static constexpr int kN = 16 / static_cast<int>(sizeof(Out));
  static constexpr int kLoads = kN * static_cast<int>(sizeof(In)) / 16;
};

// Widening and same-width: unit u of a thread is base + k * blockDim.x
// (k < kUnroll), so consecutive lanes touch consecutive units and every load
// and store instruction of a warp is one contiguous span.
template <typename F>
__global__ void __launch_bounds__(kMapThreads)
    MapKernel(const typename F::In* __restrict__ in, typename F::Out* __restrict__ out,
              std::size_t chunks, std::size_t count, F f) {
  using In = typename F::In;
  using Out = typename F::Out;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (sizeof(In) > sizeof(Out)) {
    using N = NarrowShape<F>;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    for (std::size_t c = tid; c < chunks; c += stride) {
      uint4 vin[N::kLoads];
#pragma unroll
      for (int l = 0; l < N::kLoads; ++l) vin[l] = __ldcs(in4 + c * N::kLoads + l);
      In x[N::kN];
      __builtin_memcpy(x, vin, sizeof(vin));
      Out y[N::kN];
#pragma unroll
      for (int j = 0; j < N::kN; j += 2) f.Two(x[j], x[j + 1], c * N::kN + j, y[j], y[j + 1]);
      uint4 o;
      __builtin_memcpy(&o, y, 16);
      __stcs(out4 + c, o);
    }
    for (std::size_t i = chunks * N::kN + tid; i < count; i += stride) out[i] = f.One(in[i], i);
  } else {
    using S = MapShape<F>;
    const auto* vin = reinterpret_cast<const typename S::VecIn*>(in);
    auto* vout = reinterpret_cast<typename S::VecOut*>(out);
    const std::size_t step = stride * S::kUnroll;
    for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * S::kUnroll + threadIdx.x;
         base < chunks; base += step) {
      typename S::VecIn v[S::kUnroll];
#pragma unroll
      for (int k = 0; k < S::kUnroll; ++k) {
        const std::size_t u = base + static_cast<std::size_t>(k) * blockDim.x;
        if (u < chunks) v[k] = __ldcs(vin + u);
      }
#pragma unroll
      for (int k = 0; k < S::kUnroll; ++k) {
        const std::size_t u = base + static_cast<std::size_t>(k) * blockDim.x;
        if (u >= chunks) break;
        In x[S::kE];
        __builtin_memcpy(x, &v[k], sizeof(x));
        Out y[S::kE];
#pragma unroll
        for (int j = 0; j < S::kE; j += 2) f.Two(x[j], x[j + 1], u * S::kE + j, y[j], y[j + 1]);
        typename S::VecOut o;
        __builtin_memcpy(&o, y, sizeof(o));
        __stcs(vout + u, o);
      }
    }
    for (std::size_t i = chunks * S::kE + tid; i < count; i += stride) out[i] = f.One(in[i], i);
  }
}

// Flat layout (layout.cuh kFlat): no grid-stride loop; block b owns
// kFlatUnroll * kFlatThreads consecutive units, thread t the units
// b * kFlatThreads * kFlatUnroll + t + k * kFlatThreads. Every load of a warp
// is one contiguous span (16 bytes a lane on the wider side), all of a
// thread's loads are issued before the first use (4 x 16 bytes in flight per
// thread, HOPPER.md): the elementwise layout of PyTorch's vectorized
// kernels, which moved FP32 -> E4M3 faster than this library's grid-stride
// loop on the H200.
inline constexpr int kFlatThreads = 128;
inline constexpr int kFlatUnroll = 4;

// kPlain (layout.cuh kPlainAccess; StreamingHintsLayout turns it off):
// ordinary loads and stores, as PyTorch's kernels issue them, instead of the
// streaming hints.
template <bool kPlain, typename V>
__device__ __forceinline__ V LoadStreaming(const V* p) {
  if constexpr (kPlain) return *p;
  else if constexpr (sizeof(V) == 16 || sizeof(V) == 8 || sizeof(V) == 4) return ptx::LdNcNoAllocate(p);
  else return __ldcs(p);
}
template <bool kPlain, typename V>
__device__ __forceinline__ void StoreStreaming(V* p, const V& v) {
  if constexpr (kPlain) *p = v;
  else __stcs(p, v);
}

template <typename F, bool kPlain = false>
__global__ void __launch_bounds__(kFlatThreads)
    FlatMapKernel(const typename F::In* __restrict__ in, typename F::Out* __restrict__ out,
                  std::size_t units, std::size_t count, F f) {
  using S = MapShape<F>;
  using In = typename F::In;
  using Out = typename F::Out;
  const auto* vin = reinterpret_cast<const typename S::VecIn*>(in);
  auto* vout = reinterpret_cast<typename S::VecOut*>(out);
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kFlatThreads * kFlatUnroll) + threadIdx.x;
  typename S::VecIn v[kFlatUnroll];
  if (base + (kFlatUnroll - 1) * kFlatThreads < units) {
#pragma unroll
    for (int k = 0; k < kFlatUnroll; ++k) v[k] = LoadStreaming<kPlain>(vin + base + k * kFlatThreads);
#pragma unroll
    for (int k = 0; k < kFlatUnroll; ++k) {
      const std::size_t u = base + k * kFlatThreads;
      In x[S::kE];
      __builtin_memcpy(x, &v[k], sizeof(x));
      Out y[S::kE];
#pragma unroll
      for (int j = 0; j < S::kE; j += 2) f.Two(x[j], x[j + 1], u * S::kE + j, y[j], y[j + 1]);
      typename S::VecOut o;
      __builtin_memcpy(&o, y, sizeof(o));
      StoreStreaming<kPlain>(vout + u, o);
    }
  } else {
    for (int k = 0; k < kFlatUnroll; ++k) {
      const std::size_t u = base + k * kFlatThreads;
      if (u >= units) break;
      typename S::VecIn w = LoadStreaming<kPlain>(vin + u);
      In x[S::kE];
      __builtin_memcpy(x, &w, sizeof(x));
      Out y[S::kE];
#pragma unroll
      for (int j = 0; j < S::kE; j += 2) f.Two(x[j], x[j + 1], u * S::kE + j, y[j], y[j + 1]);
      typename S::VecOut o;
      __builtin_memcpy(&o, y, sizeof(o));
      StoreStreaming<kPlain>(vout + u, o);
    }
  }
  // Fewer than kE elements after the last unit: the first block's threads.
  if (blockIdx.x == 0) {
    for (std::size_t i = units * S::kE + threadIdx.x; i < count; i += kFlatThreads) out[i] = f.One(in[i], i);
  }
}

// Launches FlatMapKernel (Layout::kFlat) or MapKernel over `count`
// elements; returns the launch error. Unaligned buffers take MapKernel's
// scalar loop.
template <typename Layout, typename F>
cudaError_t LaunchMap(const void* in, void* out, std::size_t count, const F& f, cudaStream_t stream) {
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(out) % 16 == 0);
  // Measured on the H200 (bench/RESULTS-archive-2026.md "CUDA", one run): the flat layout
  // with ordinary loads and stores moved every element map at or above the
  // copy (FP32 -> E4M3 1.04x, FP32 -> BF16 1.03x, BF16 -> E4M3 1.01x,
  // E4M3 -> BF16 0.94x), ahead of the same layout with
  // ld.global.nc.L1::no_allocate / st.global.cs (0.94x, 0.92x, 0.99x, 0.94x)
  // and of MapKernel (0.93x, 0.95x, 0.94x, 0.89x).
  if constexpr (Layout::kFlat) {
    if (aligned) {
      const std::size_t units = count / MapShape<F>::kE;
      const std::size_t per_block = static_cast<std::size_t>(kFlatThreads) * kFlatUnroll;
      const std::size_t blocks = (units + per_block - 1) / per_block;
      if (blocks < 0x7FFFFFFFu) {
        const unsigned grid = static_cast<unsigned>(blocks > 0 ? blocks : 1);
        FlatMapKernel<F, Layout::kPlainAccess><<<grid, kFlatThreads, 0, stream>>>(
            static_cast<const typename F::In*>(in), static_cast<typename F::Out*>(out), units, count, f);
        return cudaGetLastError();
      }
    }
  }
  constexpr bool kNarrowing = sizeof(typename F::In) > sizeof(typename F::Out);
  constexpr int kPerChunk = kNarrowing ? NarrowShape<F>::kN : MapShape<F>::kE;
  const std::size_t chunks = aligned ? count / kPerChunk : 0;
  const std::size_t scalar = count - chunks * kPerChunk;
  const std::size_t threads_for_chunks = kNarrowing ? chunks : chunks / MapShape<F>::kUnroll + 1;
  const std::size_t work = threads_for_chunks > scalar ? threads_for_chunks : scalar;
  MapKernel<F><<<GridFor(work, kMapThreads), kMapThreads, 0, stream>>>(
      static_cast<const typename F::In*>(in), static_cast<typename F::Out*>(out), chunks, count,
      f);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::detail
