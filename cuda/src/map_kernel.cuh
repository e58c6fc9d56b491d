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

// Unit u of a thread is base + k * blockDim.x (k < kUnroll): consecutive lanes
// touch consecutive units, so every load and store instruction of a warp is
// one contiguous span (METHOD.md: coalesced accesses).
template <typename F>
__global__ void __launch_bounds__(kMapThreads)
    MapKernel(const typename F::In* __restrict__ in, typename F::Out* __restrict__ out,
              std::size_t chunks, std::size_t count, F f) {
  using S = MapShape<F>;
  using In = typename F::In;
  using Out = typename F::Out;
  const auto* vin = reinterpret_cast<const typename S::VecIn*>(in);
  auto* vout = reinterpret_cast<typename S::VecOut*>(out);
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x * S::kUnroll;
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
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t i = chunks * S::kE + tid; i < count; i += stride) out[i] = f.One(in[i], i);
}

// Launches MapKernel over `count` elements; returns the launch error.
template <typename F>
cudaError_t LaunchMap(const void* in, void* out, std::size_t count, const F& f,
                      cudaStream_t stream) {
  using S = MapShape<F>;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(out) % 16 == 0);
  const std::size_t chunks = aligned ? count / S::kE : 0;
  const std::size_t scalar = count - chunks * S::kE;
  const std::size_t work = chunks / S::kUnroll + 1 > scalar ? chunks / S::kUnroll + 1 : scalar;
  MapKernel<F><<<GridFor(work, kMapThreads), kMapThreads, 0, stream>>>(
      static_cast<const typename F::In*>(in), static_cast<typename F::Out*>(out), chunks, count,
      f);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::detail
