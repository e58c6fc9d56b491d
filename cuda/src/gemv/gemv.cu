// GEMV kernels (gemv.h). Two shapes of kernel, one reduction order each, the
// order written down in formats/include/lowbit/formats/matmul/gemv_order.h:
//
// K-major formats (NVFP4, MXFP4, MXFP8, FP8 per-channel): one warp per
//   output channel n, 4 warps a block. Lane j takes chunks j, j + 32, ... of
//   one 16-byte (FP8 MX: 32-byte) load each, decodes in registers
//   (decode.cuh), and for every row m of x folds each scale block's partial
//   into its accumulator; the warp's xor butterfly sums the 32 lanes.
// INT4 GPTQ / AWQ (words packed along K or along N): one thread per word
//   column (GPTQ: one output channel, AWQ: eight), 8 warps a block splitting
//   the groups of K (warp w takes groups w, w + 8, ...), the 8 warp sums added
//   in shared memory by the same pairwise tree.
//
// The weights are read once, packed; nothing 16-bit is written back.
#include "gemv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>

#include "decode.cuh"

namespace lowbit::cuda::gemv {
namespace {

using matmul::GemvActType;
using matmul::GemvFormat;
using matmul::GemvOutType;

struct Bf16Act {
  static __device__ __forceinline__ float Lo(std::uint32_t w) { return __uint_as_float(w << 16); }
  static __device__ __forceinline__ float Hi(std::uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }
  static __device__ __forceinline__ float One(std::uint16_t b) { return Bf16BitsToF32(b); }
};
struct Fp16Act {
  static __device__ __forceinline__ float Lo(std::uint32_t w) { return Fp16BitsToF32(w); }
  static __device__ __forceinline__ float Hi(std::uint32_t w) { return Fp16BitsToF32(w >> 16); }
  static __device__ __forceinline__ float One(std::uint16_t b) { return Fp16BitsToF32(b); }
};

__device__ __forceinline__ void StoreOut(void* out, GemvOutType t, long idx, float y) {
  switch (t) {
    case GemvOutType::kBf16: static_cast<__nv_bfloat16*>(out)[idx] = __float2bfloat16_rn(y); break;
    case GemvOutType::kFp16: static_cast<__half*>(out)[idx] = __float2half_rn(y); break;
    case GemvOutType::kFp32: static_cast<float*>(out)[idx] = y; break;
  }
}

// Loads `kElems` activations starting at x (16-byte vector loads when `vec`,
// else element by element, 0 past `valid`).
template <typename Act, int kElems>
__device__ __forceinline__ void LoadX(const std::uint16_t* x, bool vec, int valid, float (&xv)[kElems]) {
  if (vec) {
#pragma unroll
    for (int q = 0; q < kElems / 8; ++q) {
      const uint4 u = __ldg(reinterpret_cast<const uint4*>(x) + q);
      const std::uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        xv[q * 8 + 2 * i] = Act::Lo(w[i]);
        xv[q * 8 + 2 * i + 1] = Act::Hi(w[i]);
      }
    }
  } else {
#pragma unroll
    for (int e = 0; e < kElems; ++e) xv[e] = e < valid ? Act::One(__ldg(x + e)) : 0.0f;
  }
}

// ---- K-major formats ------------------------------------------------------------

template <GemvFormat F>
struct KTraits;
template <>
struct KTraits<GemvFormat::kNvfp4> {
  static constexpr int kBlock = 16, kBpc = 2, kElems = 32, kBytes = 16;
  static constexpr bool kFp4 = true;
};
template <>
struct KTraits<GemvFormat::kMxfp4> {
  static constexpr int kBlock = 32, kBpc = 1, kElems = 32, kBytes = 16;
  static constexpr bool kFp4 = true;
};
template <>
struct KTraits<GemvFormat::kMxfp8> {
  static constexpr int kBlock = 32, kBpc = 1, kElems = 32, kBytes = 32;
  static constexpr bool kFp4 = false;
};
template <>
struct KTraits<GemvFormat::kFp8PerChannel> {
  static constexpr int kBlock = 16, kBpc = 1, kElems = 16, kBytes = 16;
  static constexpr bool kFp4 = false;
};

struct KArgs {
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  const float* channel_scales;
  float tensor_scale;
  const std::uint16_t* x;
  void* out;
  GemvOutType out_type;
  long n, k, m;
  long row_bytes, nblocks;
  bool codes_vec, x_vec;
};

constexpr int kKMajorWarps = 4;
constexpr int kLanes = 32;

// One lane's chunk j: load and decode its codes and block scales, then for
// every row m of x fold each block's partial into acc[m] (steps 2-3 of
// gemv_order.h). kFast: a whole chunk with 16-byte-aligned codes and x (no
// guards, vector loads only).
template <GemvFormat F, typename Act, int MT, bool kFast>
__device__ __forceinline__ void KMajorChunk(const KArgs& a, const std::uint8_t* codes, const std::uint8_t* scales,
                                            const std::uint16_t* x, long j, float (&acc)[MT]) {
  using T = KTraits<F>;
  const long k0 = j * T::kElems;
  const bool full = kFast || k0 + T::kElems <= a.k;
  const int valid = full ? T::kElems : static_cast<int>(a.k - k0);
  std::uint32_t cw[T::kBytes / 4];
  if (kFast || (full && a.codes_vec)) {
#pragma unroll
    for (int q = 0; q < T::kBytes / 16; ++q) {
      const uint4 u = __ldg(reinterpret_cast<const uint4*>(codes + (T::kFp4 ? k0 / 2 : k0)) + q);
      cw[4 * q] = u.x;
      cw[4 * q + 1] = u.y;
      cw[4 * q + 2] = u.z;
      cw[4 * q + 3] = u.w;
    }
  } else {
    const long b0 = T::kFp4 ? k0 / 2 : k0;
    const int nbytes = T::kFp4 ? (valid + 1) / 2 : valid;
#pragma unroll
    for (int q = 0; q < T::kBytes / 4; ++q) {
      std::uint32_t w = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        if (q * 4 + b < nbytes) w |= static_cast<std::uint32_t>(__ldg(codes + b0 + q * 4 + b)) << (8 * b);
      }
      cw[q] = w;
    }
  }
  float v[T::kElems];
  if constexpr (T::kFp4) {
#pragma unroll
    for (int e = 0; e < T::kElems; ++e) v[e] = E2m1NibbleToF32(cw[e / 8], e % 8);
  } else {
#pragma unroll
    for (int q = 0; q < T::kBytes / 4; ++q) {
      const float2 lo = E4m3x2ToF32x2(cw[q]);
      const float2 hi = E4m3x2ToF32x2(cw[q] >> 16);
      v[4 * q] = lo.x;
      v[4 * q + 1] = lo.y;
      v[4 * q + 2] = hi.x;
      v[4 * q + 3] = hi.y;
    }
  }
  float s[T::kBpc];
  bool block_ok[T::kBpc];
#pragma unroll
  for (int bb = 0; bb < T::kBpc; ++bb) {
    const long blk = j * T::kBpc + bb;
    block_ok[bb] = kFast || k0 + bb * T::kBlock < a.k;
    if constexpr (F == GemvFormat::kNvfp4) {
      s[bb] = block_ok[bb] ? Ue4m3ToF32(__ldg(scales + blk)) : 0.0f;
    } else if constexpr (F == GemvFormat::kFp8PerChannel) {
      s[bb] = 1.0f;
    } else {
      s[bb] = block_ok[bb] ? E8m0ToF32(__ldg(scales + blk)) : 0.0f;
    }
  }
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (MT > 1 && m >= a.m) break;
    float xv[T::kElems];
    LoadX<Act, T::kElems>(x + m * a.k + k0, kFast || (full && a.x_vec), valid, xv);
#pragma unroll
    for (int bb = 0; bb < T::kBpc; ++bb) {
      if (!block_ok[bb]) continue;
      float p = 0.0f;
#pragma unroll
      for (int e = 0; e < T::kBlock; ++e) {
        const int idx = bb * T::kBlock + e;
        if (full || idx < valid) p = __fmaf_rn(v[idx], xv[idx], p);
      }
      acc[m] = __fmaf_rn(p, s[bb], acc[m]);
    }
  }
}

template <GemvFormat F, typename Act, int MT>
__global__ void __launch_bounds__(kKMajorWarps * 32) GemvKMajorKernel(KArgs a) {
  using T = KTraits<F>;
  static_assert(T::kBlock * T::kBpc == T::kElems, "a chunk is whole blocks");
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const long n = static_cast<long>(blockIdx.x) * kKMajorWarps + warp;
  const long l = blockIdx.y;
  if (n >= a.n) return;  // the whole warp
  const std::uint8_t* codes = a.codes + (l * a.n + n) * a.row_bytes;
  const std::uint8_t* scales = a.scales + (l * a.n + n) * a.nblocks;
  const std::uint16_t* x = a.x + l * a.m * a.k;
  float acc[MT];
#pragma unroll
  for (int m = 0; m < MT; ++m) acc[m] = 0.0f;
  const long chunks = (a.k + T::kElems - 1) / T::kElems;
  // Whole chunks with aligned rows take the guard-free path, unrolled by two
  // so that the second chunk's loads are in flight during the first one's
  // arithmetic; the lane's chunks stay in increasing order.
  const long full_chunks = a.k / T::kElems;
  long j = lane;
  if (a.codes_vec && a.x_vec) {
#pragma unroll 2
    for (; j < full_chunks; j += kLanes) KMajorChunk<F, Act, MT, true>(a, codes, scales, x, j, acc);
  }
  for (; j < chunks; j += kLanes) KMajorChunk<F, Act, MT, false>(a, codes, scales, x, j, acc);
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int off = 16; off >= 1; off /= 2) acc[m] = __fadd_rn(acc[m], __shfl_xor_sync(0xFFFFFFFFu, acc[m], off));
  }
#pragma unroll
  for (int m = 0; m < MT; ++m) {
    if (lane == m && m < a.m) {
      float y = acc[m];
      if constexpr (F == GemvFormat::kNvfp4) y = __fmul_rn(y, a.tensor_scale);
      if constexpr (F == GemvFormat::kFp8PerChannel) y = __fmul_rn(y, __ldg(a.channel_scales + l * a.n + n));
      StoreOut(a.out, a.out_type, (l * a.m + m) * a.n + n, y);
    }
  }
}

// ---- INT4 GPTQ / AWQ ------------------------------------------------------------

struct IArgs {
  const std::uint32_t* words;
  const std::uint16_t* scales;
  const std::uint32_t* zeros;
  const std::uint16_t* x;
  void* out;
  GemvOutType out_type;
  long n, k, m, group, groups, word_cols, words_per_entry;
  bool signed_codes, bf16_scales, x_vec;
};

constexpr int kInt4Warps = matmul::kGemvInt4Lanes;  // the reference's lanes
// AWQ order_map 0,2,4,6,1,3,5,7 (formats/block/packing.h kAwqOrderMap):
// column j of a word is in nibble kAwqNibbleOfColumn[j], its inverse.
__device__ __forceinline__ int AwqNibbleOfColumn(int j) { return (j % 2) * 4 + j / 2; }

template <GemvFormat F, typename Act, int MC>
__global__ void __launch_bounds__(kInt4Warps * 32) GemvInt4Kernel(IArgs a) {
  constexpr bool kGptq = F == GemvFormat::kInt4Gptq;
  constexpr int kCols = kGptq ? 1 : 8;  // output channels per word column
  __shared__ float red[kInt4Warps][MC][kCols][32];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const long c = static_cast<long>(blockIdx.x) * 32 + lane;
  const bool active = c < a.word_cols;
  const long l = blockIdx.y;
  const std::uint32_t* words = a.words + l * a.words_per_entry;
  const std::uint16_t* scales = a.scales + l * a.groups * a.n;
  const std::uint32_t* zeros = a.zeros != nullptr ? a.zeros + l * a.groups * (a.n / 8) : nullptr;
  const std::uint16_t* xl = a.x + l * a.m * a.k;
  for (long m0 = 0; m0 < a.m; m0 += MC) {
    float acc[MC][kCols];
#pragma unroll
    for (int m = 0; m < MC; ++m) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) acc[m][j] = 0.0f;
    }
    if (active) {
      for (long g = warp; g < a.groups; g += kInt4Warps) {
        const long k0 = g * a.group;
        const long k1 = k0 + a.group < a.k ? k0 + a.group : a.k;
        float s[kCols], zm[kCols];
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
          const long n = c * kCols + j;
          const std::uint32_t sb = __ldg(scales + g * a.n + n);
          s[j] = a.bf16_scales ? Bf16BitsToF32(sb) : Fp16BitsToF32(sb);
          int z = 0;
          if (zeros != nullptr) {
            const std::uint32_t zw = __ldg(zeros + g * (a.n / 8) + n / 8);
            // GPTQ stores zero - 1 (formats/block/packing.h PackGptqQzeros).
            z = kGptq ? static_cast<int>(((zw >> (4 * (n % 8))) + 1) & 0xFu)
                      : static_cast<int>((zw >> (4 * AwqNibbleOfColumn(j))) & 0xFu);
          }
          zm[j] = Int4ZeroMagic(z, a.signed_codes);
        }
        float p[MC][kCols];
#pragma unroll
        for (int m = 0; m < MC; ++m) {
#pragma unroll
          for (int j = 0; j < kCols; ++j) p[m][j] = 0.0f;
        }
        // Unrolled so that several words' loads are in flight at once.
#pragma unroll 4
        for (long k = k0; k < k1; k += 8) {
          const int valid = k + 8 <= k1 ? 8 : static_cast<int>(k1 - k);
          std::uint32_t w[kGptq ? 1 : 8];
          if constexpr (kGptq) {
            w[0] = Int4SignFlip(__ldg(words + (k / 8) * a.n + c), a.signed_codes);
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              w[e] = e < valid ? Int4SignFlip(__ldg(words + (k + e) * a.word_cols + c), a.signed_codes) : 0u;
            }
          }
#pragma unroll
          for (int m = 0; m < MC; ++m) {
            if (m0 + m >= a.m) break;
            float xv[8];
            LoadX<Act, 8>(xl + (m0 + m) * a.k + k, valid == 8 && a.x_vec, valid, xv);
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              if (!kGptq && e >= valid) break;
#pragma unroll
              for (int j = 0; j < kCols; ++j) {
                const float v = kGptq ? Int4NibbleMinusZero(w[0], e, zm[0])
                                      : Int4NibbleMinusZero(w[e], AwqNibbleOfColumn(j), zm[j]);
                p[m][j] = __fmaf_rn(v, xv[e], p[m][j]);
              }
            }
          }
        }
#pragma unroll
        for (int m = 0; m < MC; ++m) {
#pragma unroll
          for (int j = 0; j < kCols; ++j) acc[m][j] = __fmaf_rn(p[m][j], s[j], acc[m][j]);
        }
      }
    }
#pragma unroll
    for (int m = 0; m < MC; ++m) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) red[warp][m][j][lane] = acc[m][j];
    }
    __syncthreads();
    for (int t = threadIdx.x; t < MC * kCols * 32; t += kInt4Warps * 32) {
      const int ln = t % 32;
      const int j = (t / 32) % kCols;
      const int m = t / (32 * kCols);
      const long cc = static_cast<long>(blockIdx.x) * 32 + ln;
      if (cc >= a.word_cols || m0 + m >= a.m) continue;
      float sum[kInt4Warps];
#pragma unroll
      for (int w = 0; w < kInt4Warps; ++w) sum[w] = red[w][m][j][ln];
#pragma unroll
      for (int h = kInt4Warps / 2; h >= 1; h /= 2) {
#pragma unroll
        for (int i = 0; i < h; ++i) sum[i] = __fadd_rn(sum[i], sum[i + h]);
      }
      StoreOut(a.out, a.out_type, (l * a.m + m0 + m) * a.n + cc * kCols + j, sum[0]);
    }
    __syncthreads();
  }
}

// ---- host side ------------------------------------------------------------------

GemvStatus Fail(std::string s) { return {false, "gemv: " + s}; }
bool Aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

template <GemvFormat F, typename Act>
cudaError_t LaunchKMajor(const GemvLaunch& g, cudaStream_t stream) {
  const matmul::GemvWeightView& w = g.w;
  KArgs a{};
  a.codes = w.codes;
  a.scales = w.block_scales;
  a.channel_scales = w.channel_scales;
  a.tensor_scale = w.tensor_scale;
  a.x = static_cast<const std::uint16_t*>(g.x);
  a.out = g.out;
  a.out_type = g.out_type;
  a.n = w.n;
  a.k = w.k;
  a.m = g.m;
  a.row_bytes = matmul::GemvCodeRowBytes(F, w.k);
  a.nblocks = F == GemvFormat::kNvfp4 ? (w.k + 15) / 16 : (w.k + 31) / 32;
  a.codes_vec = a.row_bytes % 16 == 0 && Aligned(w.codes, 16);
  a.x_vec = w.k % 8 == 0 && Aligned(g.x, 16);
  const dim3 grid(static_cast<unsigned>((w.n + kKMajorWarps - 1) / kKMajorWarps), static_cast<unsigned>(g.batch));
  const dim3 block(kKMajorWarps * 32);
  if (g.m == 1) {
    GemvKMajorKernel<F, Act, 1><<<grid, block, 0, stream>>>(a);
  } else if (g.m <= 4) {
    GemvKMajorKernel<F, Act, 4><<<grid, block, 0, stream>>>(a);
  } else {
    GemvKMajorKernel<F, Act, 16><<<grid, block, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

template <GemvFormat F, typename Act>
cudaError_t LaunchInt4(const GemvLaunch& g, cudaStream_t stream) {
  const matmul::GemvWeightView& w = g.w;
  IArgs a{};
  a.words = w.words;
  a.scales = w.group_scales;
  a.zeros = w.zeros;
  a.x = static_cast<const std::uint16_t*>(g.x);
  a.out = g.out;
  a.out_type = g.out_type;
  a.n = w.n;
  a.k = w.k;
  a.m = g.m;
  a.group = w.group;
  a.groups = (w.k + w.group - 1) / w.group;
  a.word_cols = F == GemvFormat::kInt4Gptq ? w.n : w.n / 8;
  a.words_per_entry = F == GemvFormat::kInt4Gptq ? (w.k / 8) * w.n : w.k * (w.n / 8);
  a.signed_codes = w.signed_codes;
  a.bf16_scales = w.scale_type == matmul::GemvScaleType::kBf16;
  a.x_vec = w.k % 8 == 0 && w.group % 8 == 0 && Aligned(g.x, 16);
  const dim3 grid(static_cast<unsigned>((a.word_cols + 31) / 32), static_cast<unsigned>(g.batch));
  const dim3 block(kInt4Warps * 32);
  if (g.m == 1) {
    GemvInt4Kernel<F, Act, 1><<<grid, block, 0, stream>>>(a);
  } else {
    GemvInt4Kernel<F, Act, 4><<<grid, block, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

template <typename Act>
cudaError_t LaunchFor(const GemvLaunch& g, cudaStream_t stream) {
  switch (g.w.format) {
    case GemvFormat::kNvfp4: return LaunchKMajor<GemvFormat::kNvfp4, Act>(g, stream);
    case GemvFormat::kMxfp4: return LaunchKMajor<GemvFormat::kMxfp4, Act>(g, stream);
    case GemvFormat::kMxfp8: return LaunchKMajor<GemvFormat::kMxfp8, Act>(g, stream);
    case GemvFormat::kFp8PerChannel: return LaunchKMajor<GemvFormat::kFp8PerChannel, Act>(g, stream);
    case GemvFormat::kInt4Gptq: return LaunchInt4<GemvFormat::kInt4Gptq, Act>(g, stream);
    case GemvFormat::kInt4Awq: return LaunchInt4<GemvFormat::kInt4Awq, Act>(g, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

GemvEntrySizes GemvEntryElementCounts(const matmul::GemvWeightView& w) {
  GemvEntrySizes s;
  const std::size_t n = static_cast<std::size_t>(w.n), k = static_cast<std::size_t>(w.k);
  switch (w.format) {
    case GemvFormat::kNvfp4:
      s.codes = n * ((k + 1) / 2);
      s.block_scales = n * ((k + 15) / 16);
      break;
    case GemvFormat::kMxfp4:
      s.codes = n * ((k + 1) / 2);
      s.block_scales = n * ((k + 31) / 32);
      break;
    case GemvFormat::kMxfp8:
      s.codes = n * k;
      s.block_scales = n * ((k + 31) / 32);
      break;
    case GemvFormat::kFp8PerChannel:
      s.codes = n * k;
      s.channel_scales = n;
      break;
    case GemvFormat::kInt4Gptq:
    case GemvFormat::kInt4Awq: {
      const std::size_t groups = w.group > 0 ? (k + w.group - 1) / w.group : 0;
      s.words = w.format == GemvFormat::kInt4Gptq ? (k / 8) * n : k * (n / 8);
      s.group_scales = groups * n;
      s.zeros = groups * (n / 8);  // when zeros are given
      break;
    }
  }
  return s;
}

GemvStatus ValidateGemv(const GemvLaunch& g) {
  const matmul::GemvWeightView& w = g.w;
  const int f = static_cast<int>(w.format);
  if (f < 0 || f > static_cast<int>(GemvFormat::kInt4Awq)) return Fail("unknown weight format");
  if (w.n < 1 || w.k < 1) return Fail("N = " + std::to_string(w.n) + ", K = " + std::to_string(w.k) + ": both must be >= 1");
  if (g.m < 1 || g.m > kGemvMaxM) return Fail("M = " + std::to_string(g.m) + " is outside 1..16");
  if (g.batch < 1 || g.batch > 65535) return Fail("batch L = " + std::to_string(g.batch) + " is outside 1..65535");
  // Every index the kernels form is below L * max(N, M) * K (+ N): keep it in long.
  if (w.k > LONG_MAX / 64 / w.n || g.batch > LONG_MAX / 64 / (w.n * w.k)) return Fail("L * N * K overflows");
  if (static_cast<int>(g.act) > 1) return Fail("unknown activation type");
  if (static_cast<int>(g.out_type) > 2) return Fail("unknown output type");
  if (g.x == nullptr || g.out == nullptr) return Fail("x and out must be non-null device pointers");
  if (!Aligned(g.x, 2)) return Fail("x is not 2-byte aligned");
  if (!Aligned(g.out, g.out_type == GemvOutType::kFp32 ? 4 : 2)) return Fail("out is not aligned to its element size");
  switch (w.format) {
    case GemvFormat::kNvfp4:
    case GemvFormat::kMxfp4:
    case GemvFormat::kMxfp8:
      if (w.codes == nullptr || w.block_scales == nullptr) return Fail("codes and block_scales must be non-null");
      break;
    case GemvFormat::kFp8PerChannel:
      if (w.codes == nullptr || w.channel_scales == nullptr) return Fail("codes and channel_scales must be non-null");
      if (!Aligned(w.channel_scales, 4)) return Fail("channel_scales is not 4-byte aligned");
      break;
    case GemvFormat::kInt4Gptq:
    case GemvFormat::kInt4Awq: {
      const char* name = w.format == GemvFormat::kInt4Gptq ? "gptq" : "awq";
      if (w.words == nullptr || w.group_scales == nullptr) return Fail(std::string(name) + ": words and group_scales must be non-null");
      if (w.group < 8 || w.group % 8 != 0) return Fail(std::string(name) + ": group = " + std::to_string(w.group) + " must be a positive multiple of 8");
      if (w.n % 8 != 0) return Fail(std::string(name) + ": N = " + std::to_string(w.n) + " is not a multiple of 8");
      if (w.format == GemvFormat::kInt4Gptq && w.k % 8 != 0) return Fail("gptq: K = " + std::to_string(w.k) + " is not a multiple of 8");
      if (!Aligned(w.words, 4) || !Aligned(w.zeros, 4)) return Fail(std::string(name) + ": words and zeros must be 4-byte aligned");
      if (!Aligned(w.group_scales, 2)) return Fail(std::string(name) + ": group_scales is not 2-byte aligned");
      if (static_cast<int>(w.scale_type) > 1) return Fail(std::string(name) + ": unknown scale type");
      break;
    }
  }
  return {};
}

GemvStatus LaunchGemv(const GemvLaunch& g, cudaStream_t stream) {
  GemvStatus st = ValidateGemv(g);
  if (!st.ok) return st;
  const cudaError_t e = g.act == GemvActType::kBf16 ? LaunchFor<Bf16Act>(g, stream) : LaunchFor<Fp16Act>(g, stream);
  if (e != cudaSuccess) return Fail(std::string("launch failed: ") + cudaGetErrorString(e));
  return {};
}

}  // namespace lowbit::cuda::gemv
