// GEMV kernels (gemv.h). Two shapes of kernel, one reduction order each, the
// order written down in formats/include/lowbit/formats/matmul/gemv_order.h:
//
// K-major formats (NVFP4, MXFP4, MXFP8, FP8 per-channel): one warp per
//   R output channels (M = 1: one; M > 1: 2 or 4), 4 warps a block. Lane j
//   takes chunks j, j + 32, ... of one 16-byte (FP8 MX: 32-byte) load per
//   row each, decodes in registers (decode.cuh), and for every row m of x
//   folds each scale block's partial into its accumulators, each activation
//   loaded once for the R channels; the warp's xor butterfly sums the 32
//   lanes.
// INT4 GPTQ / AWQ (words packed along K or along N): one thread per word
//   column (GPTQ: one output channel, AWQ: eight) and group slot; a block's
//   slots compute a tile of groups' partials at once, the 8 lane threads of
//   each column fold them in the reference's order (lane i: groups i, i + 8,
//   ...) and the 8 lane sums are added in shared memory by the pairwise tree.
//
// The weights are read once, packed; nothing 16-bit is written back.
#include "gemv.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdlib>
#include <cstdint>

#include "decode.cuh"

namespace lowbit::cuda::gemv {
namespace {

using matmul::ActivationType;
using matmul::OutputType;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

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

__device__ __forceinline__ void StoreOut(void* out, OutputType t, long idx, float y) {
  switch (t) {
    case OutputType::kBf16: static_cast<__nv_bfloat16*>(out)[idx] = __float2bfloat16_rn(y); break;
    case OutputType::kFp16: static_cast<__half*>(out)[idx] = __float2half_rn(y); break;
    case OutputType::kFp32: static_cast<float*>(out)[idx] = y; break;
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

// The block of step 1 and the blocks per lane chunk of step 3 are
// gemv_order.h's (GemvOrderOf), the order the host reference runs; only the
// load shape is the kernel's: kElems codes of kBytes bytes per lane chunk.
template <WeightFormat F, int kElemsPerChunk, int kBytesPerChunk, bool kIsFp4>
struct KTraitsOf {
  static constexpr int kBlock = matmul::GemvOrderOf(F, 0).block;
  static constexpr int kBpc = matmul::GemvOrderOf(F, 0).blocks_per_chunk;
  static constexpr int kElems = kElemsPerChunk, kBytes = kBytesPerChunk;
  static constexpr bool kFp4 = kIsFp4;
  static_assert(kBlock * kBpc == kElems, "a lane's chunk is gemv_order.h's blocks_per_chunk whole blocks");
  static_assert(kFp4 == matmul::GemvIsFp4(F) && kBytes * (kFp4 ? 2 : 1) == kElems, "one code per byte or two");
};
template <WeightFormat F>
struct KTraits;
template <>
struct KTraits<WeightFormat::kNvfp4> : KTraitsOf<WeightFormat::kNvfp4, 32, 16, true> {};
template <>
struct KTraits<WeightFormat::kMxfp4> : KTraitsOf<WeightFormat::kMxfp4, 32, 16, true> {};
template <>
struct KTraits<WeightFormat::kMxfp8E4m3> : KTraitsOf<WeightFormat::kMxfp8E4m3, 32, 32, false> {};
template <>
struct KTraits<WeightFormat::kFp8E4m3PerChannel> : KTraitsOf<WeightFormat::kFp8E4m3PerChannel, 16, 16, false> {};

// Block scales per row of W: ceil(K / block) for the formats with block
// scales (the weight view's block_scales, gemv_order.h), none for FP8
// per-channel (its one scale per row is channel_scales).
LOWBIT_HD_CONSTEXPR long BlockScalesPerRow(WeightFormat f, long k) {
  const bool has_block_scales = f == WeightFormat::kNvfp4 || f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8E4m3;
  return has_block_scales ? matmul::GemvCeilDiv(k, matmul::GemvOrderOf(f, 0).block) : 0;
}

// What both kernel shapes read besides the weights: x, the output and the
// shape, filled once by CommonArgsOf for either launch.
struct CommonArgs {
  const std::uint16_t* x;
  void* out;
  OutputType out_type;
  long n, k, m;
};

struct KArgs : CommonArgs {
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  const float* channel_scales;
  float tensor_scale;
  const float* tensor_scale_at;  // device memory; when set, read instead of tensor_scale
  long row_bytes, nblocks;
  bool codes_vec, x_vec;
};

constexpr int kKMajorWarps = 4;
constexpr int kLanes = 32;

// One lane's chunk j of the warp's rows n0 .. n0 + rows - 1 (rows <= R):
// load and decode each row's codes and block scales, then for every row m of
// x fold each block's partial into acc[m][r] (steps 2-3 of gemv_order.h).
// With M = 1 the chunk of x is loaded and widened once for all R rows.
// kFast: a whole chunk with 16-byte-aligned codes and x (no guards, vector
// loads only).
template <WeightFormat F, typename Act, int MT, int R, bool kFast>
__device__ __forceinline__ void KMajorChunk(const KArgs& a, const std::uint8_t* codes, const std::uint8_t* scales,
                                            const std::uint16_t* x, long j, int rows, float (&acc)[MT][R]) {
  using T = KTraits<F>;
  const long k0 = j * T::kElems;
  const bool full = kFast || k0 + T::kElems <= a.k;
  const int valid = full ? T::kElems : static_cast<int>(a.k - k0);
  float x1[MT == 1 ? T::kElems : 1];
  if constexpr (MT == 1) LoadX<Act, T::kElems>(x + k0, kFast || (full && a.x_vec), valid, x1);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (R > 1 && r >= rows) break;
    const std::uint8_t* rc = codes + r * a.row_bytes;
    const std::uint8_t* rs = scales + r * a.nblocks;
    std::uint32_t cw[T::kBytes / 4];
    if (kFast || (full && a.codes_vec)) {
#pragma unroll
      for (int q = 0; q < T::kBytes / 16; ++q) {
        const uint4 u = __ldg(reinterpret_cast<const uint4*>(rc + (T::kFp4 ? k0 / 2 : k0)) + q);
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
          if (q * 4 + b < nbytes) w |= static_cast<std::uint32_t>(__ldg(rc + b0 + q * 4 + b)) << (8 * b);
        }
        cw[q] = w;
      }
    }
    float v[T::kElems];
    if constexpr (T::kFp4) {
#pragma unroll
      for (int q = 0; q < T::kBytes / 4; ++q) {
        float v8[8];
        E2m1x8ToF32(cw[q], v8);
#pragma unroll
        for (int e = 0; e < 8; ++e) v[8 * q + e] = v8[e];
      }
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
      if constexpr (F == WeightFormat::kNvfp4) {
        s[bb] = block_ok[bb] ? Ue4m3ToF32(__ldg(rs + blk)) : 0.0f;
      } else if constexpr (F == WeightFormat::kFp8E4m3PerChannel) {
        s[bb] = 1.0f;
      } else {
        s[bb] = block_ok[bb] ? E8m0ToF32(__ldg(rs + blk)) : 0.0f;
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (MT > 1 && m >= a.m) break;
      float xm[MT == 1 ? 1 : T::kElems];
      if constexpr (MT > 1) LoadX<Act, T::kElems>(x + m * a.k + k0, kFast || (full && a.x_vec), valid, xm);
#pragma unroll
      for (int bb = 0; bb < T::kBpc; ++bb) {
        if (!block_ok[bb]) continue;
        float p = 0.0f;
#pragma unroll
        for (int e = 0; e < T::kBlock; ++e) {
          const int idx = bb * T::kBlock + e;
          const float xe = MT == 1 ? x1[idx] : xm[MT == 1 ? 0 : idx];
          if (full || idx < valid) p = __fmaf_rn(v[idx], xe, p);
        }
        acc[m][r] = __fmaf_rn(p, s[bb], acc[m][r]);
      }
    }
  }
}

// M > 1: one lane's chunk j of the warp's R rows n0 .. n0 + R - 1 for all
// rows m of x. The R rows' codes of the chunk are loaded, then block by block
// each row's block is decoded once into registers and, for every m, the
// block's activations are loaded and widened once and folded into all R
// rows: x is read R times less often than with one row per warp (the M > 1
// kernel was L1-bound on x: 16 reloads of each chunk of x per 16 bytes of
// weights, bench/RESULTS-archive-2026.md "GEMV"). Each output's order is still
// gemv_order.h's: partial_b from +0 over the block's k in increasing order,
// then acc = fmaf(partial_b, scale_b, acc) over the lane's blocks in order.
// Rows past the last (r >= rows) read row 0 again and are never stored.
template <WeightFormat F, typename Act, int MT, int R, bool kFast>
__device__ __forceinline__ void KMajorChunkRows(const KArgs& a, const std::uint8_t* codes, const std::uint8_t* scales,
                                                const std::uint16_t* x, long j, int rows, float (&acc)[MT][R]) {
  using T = KTraits<F>;
  constexpr int kCodesPerWord = T::kFp4 ? 8 : 4;
  constexpr int kWordsPerBlock = T::kBlock / kCodesPerWord;
  static_assert(T::kBlock % 8 == 0 && T::kBlock % kCodesPerWord == 0, "x in whole 16-byte loads, codes in whole words");
  const long k0 = j * T::kElems;
  const bool full = kFast || k0 + T::kElems <= a.k;
  const int valid = full ? T::kElems : static_cast<int>(a.k - k0);
  const bool x_vec = kFast || (full && a.x_vec);
  std::uint32_t cw[R][T::kBytes / 4];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::uint8_t* rc = codes + (r < rows ? r : 0) * a.row_bytes;
    if (kFast || (full && a.codes_vec)) {
#pragma unroll
      for (int q = 0; q < T::kBytes / 16; ++q) {
        const uint4 u = __ldg(reinterpret_cast<const uint4*>(rc + (T::kFp4 ? k0 / 2 : k0)) + q);
        cw[r][4 * q] = u.x;
        cw[r][4 * q + 1] = u.y;
        cw[r][4 * q + 2] = u.z;
        cw[r][4 * q + 3] = u.w;
      }
    } else {
      const long b0 = T::kFp4 ? k0 / 2 : k0;
      const int nbytes = T::kFp4 ? (valid + 1) / 2 : valid;
#pragma unroll
      for (int q = 0; q < T::kBytes / 4; ++q) {
        std::uint32_t w = 0;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          if (q * 4 + b < nbytes) w |= static_cast<std::uint32_t>(__ldg(rc + b0 + q * 4 + b)) << (8 * b);
        }
        cw[r][q] = w;
      }
    }
  }
#pragma unroll
  for (int bb = 0; bb < T::kBpc; ++bb) {
    if (!kFast && k0 + bb * T::kBlock >= a.k) break;  // the chunk ends before this block
    const long blk = j * T::kBpc + bb;
    float v[R][T::kBlock];
    float s[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int q = 0; q < kWordsPerBlock; ++q) {
        const std::uint32_t w = cw[r][bb * kWordsPerBlock + q];
        if constexpr (T::kFp4) {
          float v8[8];
          E2m1x8ToF32(w, v8);
#pragma unroll
          for (int e = 0; e < 8; ++e) v[r][8 * q + e] = v8[e];
        } else {
          const float2 lo = E4m3x2ToF32x2(w);
          const float2 hi = E4m3x2ToF32x2(w >> 16);
          v[r][4 * q] = lo.x;
          v[r][4 * q + 1] = lo.y;
          v[r][4 * q + 2] = hi.x;
          v[r][4 * q + 3] = hi.y;
        }
      }
      const std::uint8_t* rs = scales + (r < rows ? r : 0) * a.nblocks;
      if constexpr (F == WeightFormat::kNvfp4) {
        s[r] = Ue4m3ToF32(__ldg(rs + blk));
      } else if constexpr (F == WeightFormat::kFp8E4m3PerChannel) {
        s[r] = 1.0f;
      } else {
        s[r] = E8m0ToF32(__ldg(rs + blk));
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if (m >= a.m) break;
      float p[R];
#pragma unroll
      for (int r = 0; r < R; ++r) p[r] = 0.0f;
#pragma unroll
      for (int q = 0; q < T::kBlock / 8; ++q) {
        const int e0 = bb * T::kBlock + q * 8;  // the chunk's element index of xv[0]
        float xv[8];
        LoadX<Act, 8>(x + m * a.k + k0 + e0, x_vec, valid - e0, xv);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          if (!full && e0 + e >= valid) break;
#pragma unroll
          for (int r = 0; r < R; ++r) p[r] = __fmaf_rn(v[r][q * 8 + e], xv[e], p[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) acc[m][r] = __fmaf_rn(p[r], s[r], acc[m][r]);
    }
  }
}

// Each warp takes R consecutive output channels, which share the loads and
// widening of x (M = 1: R = 1 by default, KMajorTuning; M > 1: R = 2 or 4,
// KMajorRowsPerWarpM); lane j takes chunks j, j + 32, ... of each, as the
// reference's lanes do. M = 1 runs KMajorChunk, M > 1 KMajorChunkRows.
template <WeightFormat F, typename Act, int MT, int R, int U>
__global__ void __launch_bounds__(kKMajorWarps * 32) GemvKMajorKernel(KArgs a) {
  using T = KTraits<F>;
  static_assert(T::kBlock * T::kBpc == T::kElems, "a chunk is whole blocks");
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const long n0 = (static_cast<long>(blockIdx.x) * kKMajorWarps + warp) * R;
  const long l = blockIdx.y;
  if (n0 >= a.n) return;  // the whole warp
  const int rows = a.n - n0 < R ? static_cast<int>(a.n - n0) : R;
  const std::uint8_t* codes = a.codes + (l * a.n + n0) * a.row_bytes;
  const std::uint8_t* scales = a.scales + (l * a.n + n0) * a.nblocks;
  const std::uint16_t* x = a.x + l * a.m * a.k;
  float acc[MT][R];
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;
  }
  const long chunks = (a.k + T::kElems - 1) / T::kElems;
  // Whole chunks with aligned rows take the guard-free path, unrolled by U
  // so that the next chunks' loads are in flight during the first one's
  // arithmetic; the lane's chunks stay in increasing order.
  const long full_chunks = a.k / T::kElems;
  long j = lane;
  if (a.codes_vec && a.x_vec) {
#pragma unroll U
    for (; j < full_chunks; j += kLanes) {
      if constexpr (MT == 1) {
        KMajorChunk<F, Act, MT, R, true>(a, codes, scales, x, j, rows, acc);
      } else {
        KMajorChunkRows<F, Act, MT, R, true>(a, codes, scales, x, j, rows, acc);
      }
    }
  }
  for (; j < chunks; j += kLanes) {
    if constexpr (MT == 1) {
      KMajorChunk<F, Act, MT, R, false>(a, codes, scales, x, j, rows, acc);
    } else {
      KMajorChunkRows<F, Act, MT, R, false>(a, codes, scales, x, j, rows, acc);
    }
  }
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int off = 16; off >= 1; off /= 2) {
        acc[m][r] = __fadd_rn(acc[m][r], __shfl_xor_sync(0xFFFFFFFFu, acc[m][r], off));
      }
    }
  }
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      // After the xor butterfly every lane holds the same sum (each step adds
      // the same two values, in either order); lanes take turns storing.
      if (lane == (m * R + r) % kLanes && m < a.m && r < rows) {
        const long n = n0 + r;
        float y = acc[m][r];
        if constexpr (F == WeightFormat::kNvfp4) y = __fmul_rn(y, a.tensor_scale_at != nullptr ? __ldg(a.tensor_scale_at) : a.tensor_scale);
        if constexpr (F == WeightFormat::kFp8E4m3PerChannel) y = __fmul_rn(y, __ldg(a.channel_scales + l * a.n + n));
        StoreOut(a.out, a.out_type, (l * a.m + m) * a.n + n, y);
      }
    }
  }
}

// ---- INT4 GPTQ / AWQ ------------------------------------------------------------

struct IArgs : CommonArgs {
  const std::uint32_t* words;
  const std::uint16_t* scales;
  const std::uint32_t* zeros;
  long group, groups, word_cols, words_per_entry;
  bool signed_codes, bf16_scales, x_vec;
};

constexpr int kInt4Lanes = matmul::kGemvInt4Lanes;  // the reference's lanes
constexpr int kInt4Threads = 256;
// AWQ order_map 0,2,4,6,1,3,5,7 (formats/block/packing.h kAwqOrderMap):
// column j of a word is in nibble kAwqNibbleOfColumn[j], its inverse.
__device__ __forceinline__ int AwqNibbleOfColumn(int j) { return (j % 2) * 4 + j / 2; }

// Word columns per block: GPTQ 16 (a half-warp reads 64 contiguous bytes of
// a word row, 16 slots; 32 columns with 8 slots measured slower on 4 of the
// 5 bench shapes on the H100, bench/RESULTS-archive-2026.md "GEMV"), AWQ 8 (one
// 32-byte sector per word row, 32 slots: N / 64 blocks). The block's other
// threads are group slots.
template <WeightPacking P>
constexpr int Int4ColsPerBlock() {
  return P == WeightPacking::kGptq ? 16 : 8;
}

// One block: Int4ColsPerBlock() word columns x S = 256 / that group slots.
// Groups go in tiles of S: slot s computes the partial of group t0 + s
// (step 2 of gemv_order.h, the group's k in increasing order) into shared
// memory; then the thread of (column, lane i), i < 8, folds the tile's
// groups g = i (mod 8) in increasing order into its accumulator (step 3:
// lane i takes groups i, i + 8, ...; S is a multiple of 8, so g % 8 = s % 8).
// The partials are independent, so S groups are in flight per column where
// the fold chain is the only serial part; the 8 lane sums are added by the
// pairwise tree (step 4). Same order as before, many more loads in flight.
template <WeightPacking P, typename Act, int MC>
__global__ void __launch_bounds__(kInt4Threads) GemvInt4Kernel(IArgs a) {
  constexpr bool kGptq = P == WeightPacking::kGptq;
  constexpr int kCols = kGptq ? 1 : 8;  // output channels per word column
  constexpr int kCb = Int4ColsPerBlock<P>();
  constexpr int kSlots = kInt4Threads / kCb;
  static_assert(kSlots % kInt4Lanes == 0, "a tile is whole rounds of the lanes");
  __shared__ float red[kSlots][MC][kCols][kCb];
  const int cb = threadIdx.x % kCb;
  const int slot = threadIdx.x / kCb;
  const long c = static_cast<long>(blockIdx.x) * kCb + cb;
  const bool active = c < a.word_cols;
  const long l = blockIdx.y;
  const std::uint32_t* words = a.words + l * a.words_per_entry;
  const std::uint16_t* scales = a.scales + l * a.groups * a.n;
  const std::uint32_t* zeros = a.zeros != nullptr ? a.zeros + l * a.groups * (a.n / 8) : nullptr;
  const std::uint16_t* xl = a.x + l * a.m * a.k;
  for (long m0 = 0; m0 < a.m; m0 += MC) {
    float acc[MC][kCols];  // lane `slot`'s accumulators (slot < 8)
#pragma unroll
    for (int m = 0; m < MC; ++m) {
#pragma unroll
      for (int j = 0; j < kCols; ++j) acc[m][j] = 0.0f;
    }
    for (long t0 = 0; t0 < a.groups; t0 += kSlots) {
      const long g = t0 + slot;
      float p[MC][kCols];
#pragma unroll
      for (int m = 0; m < MC; ++m) {
#pragma unroll
        for (int j = 0; j < kCols; ++j) p[m][j] = 0.0f;
      }
      if (active && g < a.groups) {
        const long k0 = g * a.group;
        const long k1 = k0 + a.group < a.k ? k0 + a.group : a.k;
        float zm[kCols];
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
          const long n = c * kCols + j;
          int z = 0;
          if (zeros != nullptr) {
            const std::uint32_t zw = __ldg(zeros + g * (a.n / 8) + n / 8);
            // GPTQ stores zero - 1 (formats/block/packing.h PackGptqQzeros).
            z = kGptq ? static_cast<int>(((zw >> (4 * (n % 8))) + 1) & 0xFu)
                      : static_cast<int>((zw >> (4 * AwqNibbleOfColumn(j))) & 0xFu);
          }
          zm[j] = Int4ZeroMagic(z, a.signed_codes);
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
      }
#pragma unroll
      for (int m = 0; m < MC; ++m) {
#pragma unroll
        for (int j = 0; j < kCols; ++j) red[slot][m][j][cb] = p[m][j];
      }
      __syncthreads();
      if (active && slot < kInt4Lanes) {
        for (int s = slot; s < kSlots && t0 + s < a.groups; s += kInt4Lanes) {
          const long gs = t0 + s;
#pragma unroll
          for (int j = 0; j < kCols; ++j) {
            const std::uint32_t sb = __ldg(scales + gs * a.n + c * kCols + j);
            const float sc = a.bf16_scales ? Bf16BitsToF32(sb) : Fp16BitsToF32(sb);
#pragma unroll
            for (int m = 0; m < MC; ++m) acc[m][j] = __fmaf_rn(red[s][m][j][cb], sc, acc[m][j]);
          }
        }
      }
      __syncthreads();
    }
    if (slot < kInt4Lanes) {
#pragma unroll
      for (int m = 0; m < MC; ++m) {
#pragma unroll
        for (int j = 0; j < kCols; ++j) red[slot][m][j][cb] = acc[m][j];
      }
    }
    __syncthreads();
    for (int t = threadIdx.x; t < MC * kCols * kCb; t += kInt4Threads) {
      const int ln = t % kCb;
      const int j = (t / kCb) % kCols;
      const int m = t / (kCb * kCols);
      const long cc = static_cast<long>(blockIdx.x) * kCb + ln;
      if (cc >= a.word_cols || m0 + m >= a.m) continue;
      float sum[kInt4Lanes];
#pragma unroll
      for (int w = 0; w < kInt4Lanes; ++w) sum[w] = red[w][m][j][ln];
#pragma unroll
      for (int h = kInt4Lanes / 2; h >= 1; h /= 2) {
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

// M = 1 tuning: output channels per warp (1 by default; 2 or 4 share each
// chunk of x among that many rows) and the unroll of the chunk loop (2 by
// default, or 4), from LOWBIT_GEMV_ROWS_PER_WARP and LOWBIT_GEMV_UNROLL: knobs
// for bench/cuda/gemv_bench.cu. Every choice keeps the reduction order, so
// the output bits (bench/RESULTS-archive-2026.md "GEMV" has the measurements).
struct KTuning {
  int rows_per_warp = 1;
  int unroll = 2;
};
const KTuning& KMajorTuning() {
  static const KTuning t = [] {
    KTuning k;
    if (const char* e = std::getenv("LOWBIT_GEMV_ROWS_PER_WARP"); e != nullptr) {
      const int v = std::atoi(e);
      k.rows_per_warp = v == 2 || v == 4 ? v : 1;
    }
    if (const char* e = std::getenv("LOWBIT_GEMV_UNROLL"); e != nullptr) k.unroll = std::atoi(e) == 4 ? 4 : 2;
    return k;
  }();
  return t;
}

// M > 1: output channels per warp (KMajorChunkRows). Each lane keeps R rows'
// decoded block (R x block floats) and M x R accumulators in registers:
// R = 4 for the 16-element blocks (NVFP4, FP8 per-channel), 2 for the
// 32-element MX blocks (255 registers and small spills at R = 4, M = 16;
// measured faster all the same, bench/RESULTS-archive-2026.md "GEMV", but not
// yet checked bit for bit, so not the default). LOWBIT_GEMV_ROWS_PER_WARP_M
// = 2 or 4 overrides it (a knob for bench/cuda/gemv_bench.cu; every choice
// keeps the order, so the output bits).
template <WeightFormat F>
int KMajorRowsPerWarpM() {
  static const int rows = [] {
    if (const char* e = std::getenv("LOWBIT_GEMV_ROWS_PER_WARP_M"); e != nullptr) {
      const int v = std::atoi(e);
      if (v == 2 || v == 4) return v;
    }
    return KTraits<F>::kBlock <= 16 ? 4 : 2;
  }();
  return rows;
}

CommonArgs CommonArgsOf(const GemvLaunch& g) {
  CommonArgs c{};
  c.x = static_cast<const std::uint16_t*>(g.x);
  c.out = g.out;
  c.out_type = g.out_type;
  c.n = g.w.n;
  c.k = g.w.k;
  c.m = g.m;
  return c;
}

template <WeightFormat F, typename Act>
cudaError_t LaunchKMajor(const GemvLaunch& g, cudaStream_t stream) {
  const matmul::GemvWeightView& w = g.w;
  KArgs a{};
  static_cast<CommonArgs&>(a) = CommonArgsOf(g);
  a.codes = w.codes;
  a.scales = w.block_scales;
  a.channel_scales = w.channel_scales;
  a.tensor_scale = w.tensor_scale;
  a.tensor_scale_at = w.tensor_scale_at;
  a.row_bytes = matmul::GemvCodeRowBytes(F, w.k);
  a.nblocks = BlockScalesPerRow(F, w.k);
  a.codes_vec = a.row_bytes % 16 == 0 && Aligned(w.codes, 16);
  a.x_vec = w.k % 8 == 0 && Aligned(g.x, 16);
  const dim3 block(kKMajorWarps * 32);
  auto grid = [&](int rows_per_warp) {
    const long per_block = kKMajorWarps * rows_per_warp;
    return dim3(static_cast<unsigned>((w.n + per_block - 1) / per_block), static_cast<unsigned>(g.batch));
  };
  if (g.m == 1) {
    const int rows = KMajorTuning().rows_per_warp;
    const bool u4 = KMajorTuning().unroll == 4;
    if (rows == 4) {
      if (u4) {
        GemvKMajorKernel<F, Act, 1, 4, 4><<<grid(4), block, 0, stream>>>(a);
      } else {
        GemvKMajorKernel<F, Act, 1, 4, 2><<<grid(4), block, 0, stream>>>(a);
      }
    } else if (rows == 2) {
      if (u4) {
        GemvKMajorKernel<F, Act, 1, 2, 4><<<grid(2), block, 0, stream>>>(a);
      } else {
        GemvKMajorKernel<F, Act, 1, 2, 2><<<grid(2), block, 0, stream>>>(a);
      }
    } else {
      if (u4) {
        GemvKMajorKernel<F, Act, 1, 1, 4><<<grid(1), block, 0, stream>>>(a);
      } else {
        GemvKMajorKernel<F, Act, 1, 1, 2><<<grid(1), block, 0, stream>>>(a);
      }
    }
  } else if (KMajorRowsPerWarpM<F>() == 4) {
    if (g.m <= 4) {
      GemvKMajorKernel<F, Act, 4, 4, 1><<<grid(4), block, 0, stream>>>(a);
    } else {
      GemvKMajorKernel<F, Act, 16, 4, 1><<<grid(4), block, 0, stream>>>(a);
    }
  } else {
    if (g.m <= 4) {
      GemvKMajorKernel<F, Act, 4, 2, 1><<<grid(2), block, 0, stream>>>(a);
    } else {
      GemvKMajorKernel<F, Act, 16, 2, 1><<<grid(2), block, 0, stream>>>(a);
    }
  }
  return cudaGetLastError();
}

template <WeightPacking P, typename Act>
cudaError_t LaunchInt4(const GemvLaunch& g, cudaStream_t stream) {
  const matmul::GemvWeightView& w = g.w;
  IArgs a{};
  static_cast<CommonArgs&>(a) = CommonArgsOf(g);
  a.words = w.words;
  a.scales = w.group_scales;
  a.zeros = w.zeros;
  a.group = w.group;
  a.groups = matmul::GemvCeilDiv(w.k, w.group);
  a.word_cols = P == WeightPacking::kGptq ? w.n : w.n / 8;
  a.words_per_entry = P == WeightPacking::kGptq ? (w.k / 8) * w.n : w.k * (w.n / 8);
  a.signed_codes = w.format == WeightFormat::kInt4;
  a.bf16_scales = w.scale_type == ScaleType::kBf16;
  a.x_vec = w.k % 8 == 0 && w.group % 8 == 0 && Aligned(g.x, 16);
  constexpr int kCb = Int4ColsPerBlock<P>();
  const dim3 grid(static_cast<unsigned>((a.word_cols + kCb - 1) / kCb), static_cast<unsigned>(g.batch));
  const dim3 block(kInt4Threads);
  if (g.m == 1) {
    GemvInt4Kernel<P, Act, 1><<<grid, block, 0, stream>>>(a);
  } else {
    GemvInt4Kernel<P, Act, 4><<<grid, block, 0, stream>>>(a);
  }
  return cudaGetLastError();
}

template <typename Act>
cudaError_t LaunchFor(const GemvLaunch& g, cudaStream_t stream) {
  switch (g.w.format) {
    case WeightFormat::kNvfp4: return LaunchKMajor<WeightFormat::kNvfp4, Act>(g, stream);
    case WeightFormat::kMxfp4: return LaunchKMajor<WeightFormat::kMxfp4, Act>(g, stream);
    case WeightFormat::kMxfp8E4m3: return LaunchKMajor<WeightFormat::kMxfp8E4m3, Act>(g, stream);
    case WeightFormat::kFp8E4m3PerChannel: return LaunchKMajor<WeightFormat::kFp8E4m3PerChannel, Act>(g, stream);
    case WeightFormat::kInt4:
    case WeightFormat::kUint4:
      return g.w.packing == WeightPacking::kGptq ? LaunchInt4<WeightPacking::kGptq, Act>(g, stream)
                                                 : LaunchInt4<WeightPacking::kAwq, Act>(g, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

GemvEntrySizes GemvEntryElementCounts(const matmul::GemvWeightView& w) {
  GemvEntrySizes s;
  const std::size_t n = static_cast<std::size_t>(w.n), k = static_cast<std::size_t>(w.k);
  switch (w.format) {
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3:
      s.codes = n * static_cast<std::size_t>(matmul::GemvCodeRowBytes(w.format, w.k));
      s.block_scales = n * static_cast<std::size_t>(BlockScalesPerRow(w.format, w.k));
      break;
    case WeightFormat::kFp8E4m3PerChannel:
      s.codes = n * static_cast<std::size_t>(matmul::GemvCodeRowBytes(w.format, w.k));
      s.channel_scales = n;
      break;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: {
      const std::size_t groups = w.group > 0 ? (k + w.group - 1) / w.group : 0;
      s.words = w.packing == WeightPacking::kGptq ? (k / 8) * n : k * (n / 8);
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
  if (f < 0 || f > static_cast<int>(WeightFormat::kFp8E4m3PerChannel)) return Fail("unknown weight format");
  // The packing the kernels read: lowbit's rows of codes for the K-major
  // formats, GPTQ or AWQ words for the integer ones (gemv_order.h).
  if (matmul::IsIntegerFormat(w.format)) {
    if (w.packing != WeightPacking::kGptq && w.packing != WeightPacking::kAwq) {
      return Fail("integer weights take the GPTQ or AWQ packing");
    }
  } else if (w.packing != WeightPacking::kLowbit) {
    return Fail(std::string(matmul::WeightFormatName(w.format)) + " weights take the lowbit packing");
  }
  if (w.n < 1 || w.k < 1) return Fail("N = " + std::to_string(w.n) + ", K = " + std::to_string(w.k) + ": both must be >= 1");
  if (g.m < 1 || g.m > kGemvMaxM) return Fail("M = " + std::to_string(g.m) + " is outside 1..16");
  if (g.batch < 1 || g.batch > 65535) return Fail("batch L = " + std::to_string(g.batch) + " is outside 1..65535");
  // Every index the kernels form is below L * max(N, M) * K (+ N): keep it in long.
  if (w.k > LONG_MAX / 64 / w.n || g.batch > LONG_MAX / 64 / (w.n * w.k)) return Fail("L * N * K overflows");
  if (static_cast<int>(g.act) > 1) return Fail("unknown activation type");
  if (static_cast<int>(g.out_type) > 2) return Fail("unknown output type");
  if (g.x == nullptr || g.out == nullptr) return Fail("x and out must be non-null device pointers");
  if (!Aligned(g.x, 2)) return Fail("x is not 2-byte aligned");
  if (!Aligned(g.out, g.out_type == OutputType::kFp32 ? 4 : 2)) return Fail("out is not aligned to its element size");
  switch (w.format) {
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3:
      if (w.codes == nullptr || w.block_scales == nullptr) return Fail("codes and block_scales must be non-null");
      if (!Aligned(w.tensor_scale_at, 4)) return Fail("tensor_scale_at is not 4-byte aligned");
      break;
    case WeightFormat::kFp8E4m3PerChannel:
      if (w.codes == nullptr || w.channel_scales == nullptr) return Fail("codes and channel_scales must be non-null");
      if (!Aligned(w.channel_scales, 4)) return Fail("channel_scales is not 4-byte aligned");
      break;
    case WeightFormat::kInt4:
    case WeightFormat::kUint4: {
      const char* name = matmul::WeightPackingName(w.packing);
      if (w.words == nullptr || w.group_scales == nullptr) return Fail(std::string(name) + ": words and group_scales must be non-null");
      if (w.group < 8 || w.group % 8 != 0) return Fail(std::string(name) + ": group = " + std::to_string(w.group) + " must be a positive multiple of 8");
      if (w.n % 8 != 0) return Fail(std::string(name) + ": N = " + std::to_string(w.n) + " is not a multiple of 8");
      if (w.packing == WeightPacking::kGptq && w.k % 8 != 0) return Fail("gptq: K = " + std::to_string(w.k) + " is not a multiple of 8");
      if (!Aligned(w.words, 4) || !Aligned(w.zeros, 4)) return Fail(std::string(name) + ": words and zeros must be 4-byte aligned");
      if (!Aligned(w.group_scales, 2)) return Fail(std::string(name) + ": group_scales is not 2-byte aligned");
      if (w.scale_type != ScaleType::kFp16 && w.scale_type != ScaleType::kBf16) {
        return Fail(std::string(name) + ": group scales are FP16 or BF16, got " + matmul::ScaleTypeName(w.scale_type));
      }
      break;
    }
  }
  return {};
}

GemvStatus LaunchGemv(const GemvLaunch& g, cudaStream_t stream) {
  GemvStatus st = ValidateGemv(g);
  if (!st.ok) return st;
  const cudaError_t e = g.act == ActivationType::kBf16 ? LaunchFor<Bf16Act>(g, stream) : LaunchFor<Fp16Act>(g, stream);
  if (e != cudaSuccess) return Fail(std::string("launch failed: ") + cudaGetErrorString(e));
  return {};
}

}  // namespace lowbit::cuda::gemv
