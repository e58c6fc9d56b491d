// One array kernel for every element functor (element_ops.cuh): 16-byte
// vector loads and stores, any length, any alignment.
//
// A thread handles chunks of kE elements, kE = 16 / min(sizeof In, sizeof Out)
// so that the narrower side is one 16-byte access and the wider side several
// (FP32 -> FP8: 4 loads of 16 B, 1 store of 16 B). The elements after the last
// whole chunk, or every element when a buffer is not 16-byte aligned, go
// through a scalar grid-stride loop in the same launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "launch.cuh"

namespace lowbit::cuda::detail {

template <typename F>
struct MapShape {
  using In = typename F::In;
  using Out = typename F::Out;
  static constexpr int kNarrow = sizeof(In) < sizeof(Out) ? sizeof(In) : sizeof(Out);
  static constexpr int kE = 16 / kNarrow;
  static constexpr int kLoads = kE * static_cast<int>(sizeof(In)) / 16;
  static constexpr int kStores = kE * static_cast<int>(sizeof(Out)) / 16;
  static_assert(kE >= 2 && kE % 2 == 0 && kLoads >= 1 && kStores >= 1);
};

template <typename F>
__global__ void __launch_bounds__(kMapThreads)
    MapKernel(const typename F::In* __restrict__ in, typename F::Out* __restrict__ out,
              std::size_t chunks, std::size_t count, F f) {
  using S = MapShape<F>;
  using In = typename F::In;
  using Out = typename F::Out;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  uint4* out4 = reinterpret_cast<uint4*>(out);
  for (std::size_t c = tid; c < chunks; c += stride) {
    // Issue every load of the chunk before the first use (METHOD.md: several
    // independent loads in flight). Streaming hints: each byte is used once.
    uint4 vin[S::kLoads];
#pragma unroll
    for (int l = 0; l < S::kLoads; ++l) vin[l] = __ldcs(in4 + c * S::kLoads + l);
    In x[S::kE];
    __builtin_memcpy(x, vin, sizeof(vin));
    Out y[S::kE];
#pragma unroll
    for (int j = 0; j < S::kE; j += 2) f.Two(x[j], x[j + 1], c * S::kE + j, y[j], y[j + 1]);
    uint4 vout[S::kStores];
    __builtin_memcpy(vout, y, sizeof(vout));
#pragma unroll
    for (int s = 0; s < S::kStores; ++s) __stcs(out4 + c * S::kStores + s, vout[s]);
  }
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
  const std::size_t work = chunks > scalar ? chunks : scalar;
  MapKernel<F><<<GridFor(work, kMapThreads), kMapThreads, 0, stream>>>(
      static_cast<const typename F::In*>(in), static_cast<typename F::Out*>(out), chunks, count,
      f);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::detail
