// Element maps of narrow sources as a table lookup: when the source code is
// at most 16 bits wide, a conversion is a function of 2^8 or 2^16 codes. The
// table is the conversion's own functor evaluated on every source code (in
// each block for byte sources; for 16-bit ones by the functor's MapKernel of
// map_kernel.cuh, the kernel that would otherwise map the array), staged in
// shared memory, and the array is mapped through it.
//
// Why: the cuda-sw functors are the model's Convert with run-time options,
// hundreds of instructions per element (bench/RESULTS-archive-2026.md "GPU roofline",
// ncu: ALU-bound at 3.0-3.6 warp instructions per element), while a lookup
// is one shared-memory load. The result is the same bits only when the
// functor's output depends on the code alone: true of every cuda-sw
// conversion except stochastic rounding (one random word per element), which
// never comes here (convert.cu).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "launch.cuh"
#include "map_kernel.cuh"
#include "stream_scratch.h"

namespace lowbit::cuda::detail {

// Largest table staged per block: 2^16 two-byte codes. sm_90 lets a block
// opt in to 227 KB of shared memory (CUDA C++ Programming Guide, "Shared
// Memory" of compute capability 9.0), so a 4-byte 2^16 table (256 KB) does
// not fit and keeps the direct map.
inline constexpr std::size_t kMaxTableBytes = std::size_t{128} << 10;
inline constexpr int kTableThreads = 1024;
inline constexpr int kTableUnroll = 4;  // 16-byte units in flight per thread

template <typename F>
struct TableShape {
  using In = typename F::In;
  using Out = typename F::Out;
  // Every code of In; no table for sources wider than 16 bits.
  static constexpr int kSourceBits = sizeof(In) <= 2 ? 8 * static_cast<int>(sizeof(In)) : 0;
  static constexpr std::size_t kEntries = kSourceBits > 0 ? std::size_t{1} << kSourceBits : 0;
  static constexpr std::size_t kBytes = kEntries * sizeof(Out);
  static constexpr bool kApplies = kEntries > 0 && kBytes <= kMaxTableBytes;
};

template <typename In>
__global__ void EveryCodeKernel(In* __restrict__ codes, std::size_t entries) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < entries) codes[i] = static_cast<In>(i);
}

// The array through `lookup` (a table read: code -> result): 16-byte units
// on the wider side as MapShape, grid-stride, then the elements after the
// last unit, or all of them when a buffer is not 16-byte aligned (units =
// 0), one at a time. Also the map of threshold_map.cuh.
template <typename In, typename Out, typename Lookup>
__device__ __forceinline__ void MapThroughTable(const Lookup& lookup, const In* __restrict__ in,
                                                Out* __restrict__ out, std::size_t units, std::size_t count) {
  constexpr int kWide = sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out);
  constexpr int kE = 16 / kWide;
  using VecIn = typename VecOf<kE * static_cast<int>(sizeof(In))>::T;
  using VecOut = typename VecOf<kE * static_cast<int>(sizeof(Out))>::T;
  const auto* vin = reinterpret_cast<const VecIn*>(in);
  auto* vout = reinterpret_cast<VecOut*>(out);
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x * kTableUnroll;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kTableUnroll + threadIdx.x;
       base < units; base += step) {
    VecIn v[kTableUnroll];
#pragma unroll
    for (int k = 0; k < kTableUnroll; ++k) {
      const std::size_t u = base + static_cast<std::size_t>(k) * blockDim.x;
      if (u < units) v[k] = vin[u];
    }
#pragma unroll
    for (int k = 0; k < kTableUnroll; ++k) {
      const std::size_t u = base + static_cast<std::size_t>(k) * blockDim.x;
      if (u >= units) break;
      In x[kE];
      __builtin_memcpy(x, &v[k], sizeof(x));
      Out y[kE];
#pragma unroll
      for (int j = 0; j < kE; ++j) y[j] = static_cast<Out>(lookup(x[j]));
      VecOut o;
      __builtin_memcpy(&o, y, sizeof(o));
      vout[u] = o;
    }
  }
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = units * kE + static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = static_cast<Out>(lookup(in[i]));
  }
}

template <typename In, typename Out>
std::size_t TableUnits(const void* in, const void* out, std::size_t count) {
  constexpr int kE = 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
  const bool aligned = (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(out) % 16 == 0);
  return aligned ? count / kE : 0;
}

// Byte sources (every FP8 / FP6 / FP4 / INT8 / INT4 decode): each block
// evaluates the functor on the 256 byte values into a static shared table
// (one evaluation per thread), so the call needs no scratch memory and no
// second launch, at any length.
inline constexpr int kByteTableThreads = 256;

template <typename F>
__global__ void __launch_bounds__(kByteTableThreads)
    ByteTableMapKernel(const typename F::In* __restrict__ in, typename F::Out* __restrict__ out, std::size_t units,
                       std::size_t count, F f) {
  static_assert(sizeof(typename F::In) == 1);
  __shared__ typename F::Out table[256];
  for (int c = threadIdx.x; c < 256; c += blockDim.x) table[c] = f.One(static_cast<typename F::In>(c), 0);
  __syncthreads();
  MapThroughTable([&](typename F::In c) { return table[c]; }, in, out, units, count);
}

// 16-bit sources: the table (2^16 entries, up to 128 KB) is staged from
// global memory into dynamic shared memory once per block, and the grid is
// what fits on the device at once.
template <typename In, typename Out>
__global__ void __launch_bounds__(kTableThreads)
    StagedTableMapKernel(const In* __restrict__ in, Out* __restrict__ out, std::size_t units, std::size_t count,
                         const Out* __restrict__ table, std::size_t table_bytes) {
  extern __shared__ uint4 staged[];
  const uint4* table16 = reinterpret_cast<const uint4*>(table);
  for (std::size_t w = threadIdx.x; w < table_bytes / 16; w += blockDim.x) staged[w] = table16[w];
  __syncthreads();
  const Out* table_in_shared = reinterpret_cast<const Out*>(staged);
  MapThroughTable([&](In c) { return table_in_shared[c]; }, in, out, units, count);
}

// Byte sources always map through their table (it costs 256 conversions in
// each block); 16-bit sources from 2^16 elements (StagedTablePays), since
// their table costs 2^16 conversions and a second launch.
template <typename F>
constexpr bool ByteTable() {
  return sizeof(typename F::In) == 1;
}
template <typename F>
bool StagedTablePays(std::size_t count) {
  return count >= TableShape<F>::kEntries;
}

// Blocks of StagedTableMapKernel<In, Out> resident per SM of the current
// device, after opting the kernel in to `bytes` of dynamic shared memory;
// both done once per device (they are host calls, a few of them per
// array otherwise).
template <typename In, typename Out>
cudaError_t StagedTableBlocksPerSm(std::size_t bytes, int* per_sm) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cached[kMaxDevices];
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (device >= 0 && device < kMaxDevices) {
    *per_sm = cached[device].load(std::memory_order_relaxed);
    if (*per_sm > 0) return cudaSuccess;
  }
  auto kernel = StagedTableMapKernel<In, Out>;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
      e != cudaSuccess) {
    return e;
  }
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, kTableThreads, bytes);
      e != cudaSuccess) {
    return e;
  }
  if (*per_sm < 1) *per_sm = 1;
  if (device >= 0 && device < kMaxDevices) cached[device].store(*per_sm, std::memory_order_relaxed);
  return cudaSuccess;
}

// Maps the array through F's table; returns the first CUDA error. F must be
// a function of the code alone (see the file comment). Byte sources build
// the table in each block; 16-bit sources with the functor's MapKernel over
// every code into stream-ordered scratch.
template <typename F>
cudaError_t LaunchTableMap(const void* in, void* out, std::size_t count, const F& f, cudaStream_t stream) {
  using In = typename F::In;
  using Out = typename F::Out;
  constexpr int kE = 16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out));
  const std::size_t units = TableUnits<In, Out>(in, out, count);
  const std::size_t work = units > 0 ? (units + kTableUnroll - 1) / kTableUnroll + (count - units * kE) : count;
  if constexpr (ByteTable<F>()) {
    ByteTableMapKernel<F><<<GridFor(work, kByteTableThreads), kByteTableThreads, 0, stream>>>(
        static_cast<const In*>(in), static_cast<Out*>(out), units, count, f);
    return cudaGetLastError();
  } else {
    using S = TableShape<F>;
    static_assert(S::kApplies);
    int per_sm = 1;
    if (cudaError_t e = StagedTableBlocksPerSm<In, Out>(S::kBytes, &per_sm); e != cudaSuccess) return e;
    const std::size_t codes_bytes = (S::kEntries * sizeof(In) + 255) / 256 * 256;
    StreamScratch scratch(stream);
    if (cudaError_t e = scratch.Allocate(codes_bytes + S::kBytes); e != cudaSuccess) return e;
    auto* codes = static_cast<In*>(scratch.get());
    auto* table = reinterpret_cast<Out*>(static_cast<char*>(scratch.get()) + codes_bytes);
    EveryCodeKernel<In><<<static_cast<unsigned>((S::kEntries + 255) / 256), 256, 0, stream>>>(codes, S::kEntries);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    // One code per thread: MapKernel's element loop with no 16-byte chunks
    // (the instantiation LaunchMap already has). LaunchMap's own layouts
    // give a thread 16 to 32 codes, and on the H200 that left ~100 us of
    // model latency in every call (bench/RESULTS-archive-2026.md "GPU roofline").
    MapKernel<F><<<static_cast<unsigned>(S::kEntries / kMapThreads), kMapThreads, 0, stream>>>(
        codes, table, 0, S::kEntries, f);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    const unsigned grid = GridFor(work, kTableThreads);
    const unsigned resident = static_cast<unsigned>(SmCount() * per_sm);
    StagedTableMapKernel<In, Out><<<grid < resident ? grid : resident, kTableThreads, S::kBytes, stream>>>(
        static_cast<const In*>(in), static_cast<Out*>(out), units, count, table, S::kBytes);
    return cudaGetLastError();
  }
}

}  // namespace lowbit::cuda::detail
