// Tensor-core GEMM with packed weights dequantized in shared memory
// (docs/matmul.md). One kernel template per weight format and packing:
//
//  - CTA tile 128 x 128 x 32, 8 warps (2 along M x 4 along N), each warp a
//    64 x 32 block of m16n8k16 mma.sync BF16 x BF16 -> FP32, fragments from
//    ldmatrix (4 warps of 64 x 64 ran slower: bench/RESULTS-archive-2026.md "GEMM").
//    Shared rows are padded to 40 BF16 (80 bytes) so that the 8 row
//    addresses of one ldmatrix phase hit 8 different 16-byte bank groups.
//  - Activations: cp.async 16-byte copies, two stages.
//  - Weights: each thread loads the packed codes of 16 consecutive K values of
//    one row (8 bytes for 4-bit lowbit codes, two GPTQ words, sixteen AWQ
//    nibbles, 16 bytes for 8-bit codes) into registers one tile ahead,
//    decodes them with the GEMV's exact decoders (cuda/src/gemv/decode.cuh,
//    each tested equal to the model on every code), multiplies by the block
//    scale in FP32 and rounds once to BF16 into the other shared stage.
//    Scales, zero points and the tensor scale are read through weights.h
//    (ScaleBits, ZeroPointOf, TensorScaleOf), so every packing's index rule
//    is the one the reference uses.
//  - Shapes the tiles do not take run GemmFallbackKernel: one thread per
//    output, the weight dequantized in FP32 through weights.h, FP32
//    multiply-then-add along K. Its error is within the same bound: its
//    weights are exact or rounded once in FP32 (2^-24, under the model's
//    BF16 weight term), and the sum of K rounded products in FP32 is off by
//    at most about (K + 1) * 2^-24 * S, under the tensor-core model's
//    ((1 + 2^-18)^ceil(K/16) - 1) * S >= ceil(K/16) * 64 * 2^-24 * S.
//  - Epilogue: the FP32 tensor scale (NVFP4), channel scale (FP8) or the
//    activation tensor scale (W4A4) multiply the accumulator.
//
// Why each format's dequantized weight is or is not exact in BF16, and the
// rest of the error model, is formats/include/lowbit/formats/matmul/gemm_bound.h;
// GemmErrorModelOf at the end of this file states each format's terms.
//
// Why mma.sync and not wgmma: one kernel serves every format with one
// dequantize-to-shared-memory path, and mma.sync's numerics are the ones the
// bound's step model was written for; wgmma (sm_90a) is the path to the
// speed goal (0.7x cuBLAS BF16) and is not written yet (bench/RESULTS.md "GEMM").
//
// W4A4 NVFP4 x NVFP4 emulates Blackwell's block-scaled MMA
// (PTX ISA "mma" with .kind::mxf4nvf4 and .block_scale: D = sum over blocks of
// (scale_a * scale_b) * sum_i a_i * b_i, plus C, with a UE4M3 scale per 16
// elements of A and of B): here each a_i * scale_a and b_i * scale_b is
// formed exactly in BF16 (E2M1 * UE4M3 needs at most 6 significant bits),
// so every product a_i b_i scale_a scale_b is exact in FP32, as in the
// block-scaled MMA. The approximation: the sum is accumulated by Hopper's
// BF16 tensor core in steps of 16 products (one NVFP4 block per step) in
// FP32 with the step error of gemm_bound.h, whereas Blackwell's internal
// accumulation width and order are not documented; the per-tensor scales
// multiply the FP32 result afterwards, as the alpha of a Blackwell GEMM
// would.
#include "gemm.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "../checks.h"
#include "../gemv/decode.cuh"
#include "../ptx.cuh"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::cuda::gemm {
namespace {

using matmul::OutputType;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;
using matmul::WeightView;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 32;
constexpr int kPitch = 40;  // BF16 per shared row: 32 + 8 padding (80 bytes)
constexpr int kWarpsM = 2;  // warps along M
constexpr int kWarpsN = 4;  // warps along N
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kTileM / kWarpsM;  // 64 rows per warp
constexpr int kWarpN = kTileN / kWarpsN;  // 32 columns per warp
constexpr int kMt = kWarpM / 16;          // m16 tiles per warp
constexpr int kNt = kWarpN / 8;           // n8 tiles per warp
constexpr int kSegsPerThread = kTileN * (kTileK / 16) / kThreads;  // 16-element weight segments
constexpr int kAChunksPerThread = kTileM * (kTileK / 8) / kThreads;  // 16-byte activation chunks
static_assert(kSegsPerThread * kThreads == kTileN * (kTileK / 16));
static_assert(kAChunksPerThread * kThreads == kTileM * (kTileK / 8));

// One launch's arguments (by value).
struct Args {
  WeightView w;
  std::int64_t m = 0;
  const std::uint16_t* x = nullptr;
  std::int64_t x_row = 0, x_batch = 0;
  void* y = nullptr;
  std::int64_t y_row = 0, y_batch = 0;
  OutputType out = OutputType::kFp32;
  const float* extra_scale = nullptr;  // W4A4: the activations' tensor scale (device)
};

__device__ __forceinline__ float ScaleToF32(ScaleType t, std::uint32_t bits) {
  switch (t) {
    case ScaleType::kE8m0: return gemv::E8m0ToF32(bits);
    case ScaleType::kUe4m3: return gemv::Ue4m3ToF32(bits);
    case ScaleType::kFp16: return gemv::Fp16BitsToF32(bits);
    case ScaleType::kBf16: return gemv::Bf16BitsToF32(bits);
    case ScaleType::kFp32: break;
  }
  return __uint_as_float(bits);
}

__device__ __forceinline__ std::uint32_t PackBf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  ptx::CpAsync16ZeroFill(ptx::SharedAddress(smem), gmem, valid ? 16 : 0);  // 0: zero-fill, nothing read
}
__device__ __forceinline__ void CpAsyncCommitWait() {
  ptx::CpAsyncCommit();
  ptx::CpAsyncWaitGroup<0>();
}

__device__ __forceinline__ void LdMatrixX4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(ptx::SharedAddress(p)));
}

__device__ __forceinline__ void Mma16816(float* c, const std::uint32_t* a, std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void StoreOutput(const Args& a, std::int64_t l, std::int64_t row, std::int64_t col, float v) {
  const std::int64_t i = l * a.y_batch + row * a.y_row + col;
  switch (a.out) {
    case OutputType::kFp32: static_cast<float*>(a.y)[i] = v; break;
    case OutputType::kBf16: static_cast<__nv_bfloat16*>(a.y)[i] = __float2bfloat16_rn(v); break;
    case OutputType::kFp16: static_cast<__half*>(a.y)[i] = __float2half_rn(v); break;
  }
}

// The epilogue's multiplies (gemm_bound.h term 3), in this order: the
// weight's tensor scale (NVFP4) or channel scale (FP8), then W4A4's
// activation tensor scale.
__device__ __forceinline__ float Epilogue(const Args& a, std::int64_t l, std::int64_t col, float v, float extra) {
  if (a.w.format == WeightFormat::kNvfp4) v = __fmul_rn(v, matmul::TensorScaleOf(a.w, l));
  if (a.w.format == WeightFormat::kFp8E4m3PerChannel) v = __fmul_rn(v, __uint_as_float(matmul::ScaleBits(a.w, l, col, 0)));
  if (a.extra_scale != nullptr) v = __fmul_rn(v, extra);
  return v;
}

struct SharedTiles {
  __nv_bfloat16 a[2][kTileM][kPitch];
  __nv_bfloat16 b[2][kTileN][kPitch];
};

template <WeightFormat F, WeightPacking P>
__global__ void __launch_bounds__(kThreads) GemmKernel(Args args) {
  __shared__ __align__(128) SharedTiles s;
  const WeightView& w = args.w;
  constexpr bool kFourBit = F != WeightFormat::kMxfp8E4m3 && F != WeightFormat::kFp8E4m3PerChannel;
  constexpr bool kInteger = F == WeightFormat::kInt4 || F == WeightFormat::kUint4;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;
  const std::int64_t l = blockIdx.z;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kTileM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kTileN;
  const std::int64_t k = w.k;
  const int k_tiles = static_cast<int>(k / kTileK);
  const std::uint16_t* x = args.x + l * args.x_batch;

  // This thread's weight segments: row b_row[i] of the tile, 16 K values
  // from b_col[i].
  int b_row[kSegsPerThread], b_col[kSegsPerThread];
  bool b_valid[kSegsPerThread];
#pragma unroll
  for (int i = 0; i < kSegsPerThread; ++i) {
    const int seg = tid + i * kThreads;
    b_row[i] = seg >> 1;
    b_col[i] = (seg & 1) * 16;
    b_valid[i] = n0 + b_row[i] < w.n;
  }

  auto load_a = [&](int kt, int stage) {
#pragma unroll
    for (int i = 0; i < kAChunksPerThread; ++i) {
      const int c = tid + i * kThreads;
      const int row = c >> 2;
      const int col = (c & 3) * 8;
      const std::int64_t gm = m0 + row;
      const bool valid = gm < args.m;
      const std::uint16_t* src = x + (valid ? gm : 0) * args.x_row + static_cast<std::int64_t>(kt) * kTileK + col;
      CpAsync16(&s.a[stage][row][col], src, valid);
    }
  };
  // The 16 codes of a segment as two words of eight nibbles (4-bit, element
  // i in nibble i % 8 of word i / 8) or four words of four bytes (8-bit).
  auto load_b = [&](int kt, uint4* raw) {
#pragma unroll
    for (int i = 0; i < kSegsPerThread; ++i) {
      raw[i] = make_uint4(0, 0, 0, 0);
      if (!b_valid[i]) continue;
      const std::int64_t n = n0 + b_row[i];
      const std::int64_t k0 = static_cast<std::int64_t>(kt) * kTileK + b_col[i];
      if constexpr (P == WeightPacking::kLowbit) {
        const auto* bytes = static_cast<const std::uint8_t*>(w.codes) + l * w.codes_batch_stride;
        if constexpr (kFourBit) {
          const uint2 v = *reinterpret_cast<const uint2*>(bytes + (n * k + k0) / 2);
          raw[i].x = v.x;
          raw[i].y = v.y;
        } else {
          raw[i] = *reinterpret_cast<const uint4*>(bytes + n * k + k0);
        }
      } else if constexpr (P == WeightPacking::kGptq) {
        // qweight [K / 8][N]: row k % 8 in nibble k % 8 (weights.h WeightCode).
        const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
        raw[i].x = words[(k0 / 8) * w.n + n];
        raw[i].y = words[(k0 / 8 + 1) * w.n + n];
      } else {
        // AWQ qweight [K][N / 8]: column n in nibble AwqNibbleOfLane(n % 8).
        const auto* words = static_cast<const std::uint32_t*>(w.codes) + l * w.codes_batch_stride;
        const int shift = 4 * matmul::AwqNibbleOfLane(n % 8);
#pragma unroll
        for (int e = 0; e < 16; ++e) {
          const std::uint32_t nib = (words[(k0 + e) * (w.n / 8) + n / 8] >> shift) & 0xFu;
          if (e < 8) {
            raw[i].x |= nib << (4 * e);
          } else {
            raw[i].y |= nib << (4 * (e - 8));
          }
        }
      }
    }
  };
  auto store_b = [&](int kt, int stage, const uint4* raw) {
#pragma unroll
    for (int i = 0; i < kSegsPerThread; ++i) {
      std::uint32_t packed[8];
      if (b_valid[i]) {
        const std::int64_t n = n0 + b_row[i];
        const std::int64_t k0 = static_cast<std::int64_t>(kt) * kTileK + b_col[i];
        const float scale =
            F == WeightFormat::kFp8E4m3PerChannel ? 1.0f : ScaleToF32(w.scale_type, matmul::ScaleBits(w, l, n, k0));
        if constexpr (kFourBit) {
          const bool signed_codes = F == WeightFormat::kInt4;
          const float zero_magic = kInteger ? gemv::Int4ZeroMagic(matmul::ZeroPointOf(w, l, n, k0), signed_codes) : 0.0f;
          const std::uint32_t words[2] = {kInteger ? gemv::Int4SignFlip(raw[i].x, signed_codes) : raw[i].x,
                                          kInteger ? gemv::Int4SignFlip(raw[i].y, signed_codes) : raw[i].y};
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            float v0, v1;
            if constexpr (kInteger) {
              v0 = gemv::Int4NibbleMinusZero(words[j >> 2], (2 * j) & 7, zero_magic);
              v1 = gemv::Int4NibbleMinusZero(words[j >> 2], (2 * j + 1) & 7, zero_magic);
            } else {
              v0 = gemv::E2m1NibbleToF32(words[j >> 2], (2 * j) & 7);
              v1 = gemv::E2m1NibbleToF32(words[j >> 2], (2 * j + 1) & 7);
            }
            packed[j] = PackBf16(__fmul_rn(v0, scale), __fmul_rn(v1, scale));
          }
        } else {
          const std::uint32_t words[4] = {raw[i].x, raw[i].y, raw[i].z, raw[i].w};
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const float2 v = gemv::E4m3x2ToF32x2(words[j >> 1] >> ((j & 1) * 16));
            packed[j] = PackBf16(__fmul_rn(v.x, scale), __fmul_rn(v.y, scale));
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) packed[j] = 0;
      }
      uint4* dst = reinterpret_cast<uint4*>(&s.b[stage][b_row[i]][b_col[i]]);
      dst[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
      dst[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
    }
  };

  float acc[kMt][kNt][4];
#pragma unroll
  for (int i = 0; i < kMt; ++i)
#pragma unroll
    for (int j = 0; j < kNt; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  uint4 raw[kSegsPerThread];
  load_a(0, 0);
  load_b(0, raw);
  store_b(0, 0, raw);
  CpAsyncCommitWait();
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt & 1;
    const bool more = kt + 1 < k_tiles;
    if (more) {
      load_a(kt + 1, stage ^ 1);
      load_b(kt + 1, raw);
    }
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 16) {
      std::uint32_t af[kMt][4];
      std::uint32_t bf[kNt / 2][4];
#pragma unroll
      for (int i = 0; i < kMt; ++i) {
        const int row = warp_m * kWarpM + i * 16 + (lane & 15);
        const int col = kk + (lane >> 4) * 8;
        LdMatrixX4(af[i], &s.a[stage][row][col]);
      }
#pragma unroll
      for (int j = 0; j < kNt / 2; ++j) {
        // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
        const int mat = lane >> 3;
        const int row = warp_n * kWarpN + j * 16 + (mat >> 1) * 8 + (lane & 7);
        const int col = kk + (mat & 1) * 8;
        LdMatrixX4(bf[j], &s.b[stage][row][col]);
      }
#pragma unroll
      for (int i = 0; i < kMt; ++i)
#pragma unroll
        for (int j = 0; j < kNt; ++j) Mma16816(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
    }
    if (more) store_b(kt + 1, stage ^ 1, raw);
    CpAsyncCommitWait();
    __syncthreads();
  }

  // Epilogue: accumulator (row lane/4 (+8), columns 2*(lane%4) + {0,1}).
  const float extra = args.extra_scale != nullptr ? *args.extra_scale : 1.0f;
#pragma unroll
  for (int i = 0; i < kMt; ++i) {
#pragma unroll
    for (int j = 0; j < kNt; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t row = m0 + warp_m * kWarpM + i * 16 + (lane >> 2) + (e >> 1) * 8;
        const std::int64_t col = n0 + warp_n * kWarpN + j * 8 + (lane & 3) * 2 + (e & 1);
        if (row >= args.m || col >= w.n) continue;
        StoreOutput(args, l, row, col, Epilogue(args, l, col, acc[i][j][e], extra));
      }
    }
  }
}

// One thread per output: any shape weights.h describes.
__global__ void GemmFallbackKernel(Args args) {
  const WeightView& w = args.w;
  const std::int64_t total = w.batch * args.m * w.n;
  const float extra = args.extra_scale != nullptr ? *args.extra_scale : 1.0f;
  constexpr FormatSpec kE2m1Spec = kE2m1;
  constexpr FormatSpec kE4m3Spec = kE4m3;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t col = idx % w.n;
    const std::int64_t row = (idx / w.n) % args.m;
    const std::int64_t l = idx / (w.n * args.m);
    const std::uint16_t* x = args.x + l * args.x_batch + row * args.x_row;
    float acc = 0.0f;
    for (std::int64_t kk = 0; kk < w.k; ++kk) {
      const std::uint8_t code = matmul::WeightCode(w, l, col, kk);
      float v;
      switch (w.format) {
        case WeightFormat::kNvfp4:
        case WeightFormat::kMxfp4: v = DecodeToF32(kE2m1Spec, code); break;
        case WeightFormat::kMxfp8E4m3:
        case WeightFormat::kFp8E4m3PerChannel: v = DecodeToF32(kE4m3Spec, code); break;
        case WeightFormat::kInt4:
          v = __fsub_rn(static_cast<float>(static_cast<int>(code ^ 8u) - 8), static_cast<float>(matmul::ZeroPointOf(w, l, col, kk)));
          break;
        case WeightFormat::kUint4:
          v = __fsub_rn(static_cast<float>(code), static_cast<float>(matmul::ZeroPointOf(w, l, col, kk)));
          break;
      }
      if (w.format != WeightFormat::kFp8E4m3PerChannel) v = __fmul_rn(v, ScaleToF32(w.scale_type, matmul::ScaleBits(w, l, col, kk)));
      acc = __fadd_rn(acc, __fmul_rn(gemv::Bf16BitsToF32(x[kk]), v));
    }
    StoreOutput(args, l, row, col, Epilogue(args, l, col, acc, extra));
  }
}

// W4A4 step 1: amax of all of x as the largest |x| bit pattern (a NaN, whose
// pattern is above every finite and infinite one, wins, as the recipes'
// amax does for NaN inputs they propagate).
__global__ void AmaxKernel(const std::uint16_t* __restrict__ x, std::int64_t m, std::int64_t k, std::int64_t row,
                           unsigned int* amax_bits) {
  unsigned int local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < m * k;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const unsigned int bits = (static_cast<unsigned int>(x[(i / k) * row + i % k]) << 16) & 0x7FFFFFFFu;
    local = bits > local ? bits : local;
  }
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned int o = __shfl_xor_sync(0xFFFFFFFFu, local, off);
    local = o > local ? o : local;
  }
  if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, local);
}

// W4A4 step 2: the activation tensor scale from the model's recipe.
__global__ void TensorScaleKernel(recipe::Recipe r, const unsigned int* amax_bits, recipe::TensorScale* t,
                                  float* decode) {
  *t = recipe::ChooseTensorScale(r, __uint_as_float(*amax_bits));
  *decode = t->decode;
}

// W4A4 step 3: one thread per 16-element block: the model's block steps
// (statistics, scale with the tensor scale, scaled element, code), then the
// BF16 values e2m1 * ue4m3 (exact) for the GEMM's A operand.
__global__ void QuantizeActivationsKernel(const std::uint16_t* __restrict__ x, std::int64_t m, std::int64_t k,
                                          std::int64_t row, recipe::Recipe recipe,
                                          const recipe::TensorScale* t_ptr, __nv_bfloat16* __restrict__ a) {
  const std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t blocks_per_row = k / 16;
  if (b >= m * blocks_per_row) return;
  const std::int64_t r = b / blocks_per_row, c = (b % blocks_per_row) * 16;
  const recipe::TensorScale t = *t_ptr;
  float v[16];
  const uint4* src = reinterpret_cast<const uint4*>(x + r * row + c);
  const uint4 w0 = src[0], w1 = src[1];
  const std::uint32_t words[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[2 * i] = __uint_as_float(words[i] << 16);
    v[2 * i + 1] = __uint_as_float(words[i] & 0xFFFF0000u);
  }
  std::uint8_t codes[16];
  const recipe::BlockScale s = recipe::ChooseScale(recipe, recipe::StatsOf(recipe, v, 16), t);
#pragma unroll
  for (int i = 0; i < 16; ++i) codes[i] = recipe::EncodeScaled(recipe, s, recipe::ScaledElement(recipe, s, v[i]));
  const std::uint8_t scale_code = s.code;
  const float scale = gemv::Ue4m3ToF32(scale_code);
  std::uint32_t packed[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    packed[i] = PackBf16(__fmul_rn(gemv::E2m1ToF32(codes[2 * i]), scale), __fmul_rn(gemv::E2m1ToF32(codes[2 * i + 1]), scale));
  }
  uint4* dst = reinterpret_cast<uint4*>(a + r * k + c);
  dst[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  dst[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
}

bool Aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

template <WeightFormat F, WeightPacking P>
void LaunchTiles(const Args& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.w.n + kTileN - 1) / kTileN), static_cast<unsigned>((a.m + kTileM - 1) / kTileM),
                  static_cast<unsigned>(a.w.batch));
  GemmKernel<F, P><<<grid, kThreads, 0, stream>>>(a);
}

bool TilesTake(const matmul::MatmulProblem& p) {
  const WeightView& w = p.w;
  if (w.k % kTileK != 0) return false;
  if (w.geometry != matmul::ScaleGeometry::kPerRow && w.block % 16 != 0) return false;
  if (!Aligned16(p.x.data) || p.x.row_stride % 8 != 0 || (w.batch > 1 && p.x.batch_stride % 8 != 0)) return false;
  if (w.packing == WeightPacking::kLowbit) {
    const std::int64_t row_bytes = matmul::IsFourBit(w.format) ? w.k / 2 : w.k;
    (void)row_bytes;  // a multiple of 16 when K is a multiple of 32
    if (!Aligned16(w.codes) || (w.batch > 1 && w.codes_batch_stride % 16 != 0)) return false;
  }
  // Grid limits: y and z of a launch stay below 65536.
  return (p.m + kTileM - 1) / kTileM < 65536 && w.batch < 65536;
}

Status Run(const char* what, const matmul::MatmulProblem& p, const float* extra_scale, cudaStream_t stream) {
  Args a;
  a.w = p.w;
  a.m = p.m;
  a.x = static_cast<const std::uint16_t*>(p.x.data);
  a.x_row = p.x.row_stride;
  a.x_batch = p.x.batch_stride;
  a.y = p.y.data;
  a.y_row = p.y.row_stride;
  a.y_batch = p.y.batch_stride;
  a.out = p.y.type;
  a.extra_scale = extra_scale;
  if (!TilesTake(p)) {
    const std::int64_t total = p.w.batch * p.m * p.w.n;
    const unsigned blocks = static_cast<unsigned>(total / 256 + 1 < 65535 ? total / 256 + 1 : 65535);
    GemmFallbackKernel<<<blocks, 256, 0, stream>>>(a);
    return detail::LastLaunchStatus(what);
  }
  switch (p.w.format) {
    case WeightFormat::kNvfp4: LaunchTiles<WeightFormat::kNvfp4, WeightPacking::kLowbit>(a, stream); break;
    case WeightFormat::kMxfp4: LaunchTiles<WeightFormat::kMxfp4, WeightPacking::kLowbit>(a, stream); break;
    case WeightFormat::kMxfp8E4m3: LaunchTiles<WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit>(a, stream); break;
    case WeightFormat::kFp8E4m3PerChannel:
      LaunchTiles<WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit>(a, stream);
      break;
    case WeightFormat::kInt4: LaunchTiles<WeightFormat::kInt4, WeightPacking::kLowbit>(a, stream); break;
    case WeightFormat::kUint4:
      switch (p.w.packing) {
        case WeightPacking::kLowbit: LaunchTiles<WeightFormat::kUint4, WeightPacking::kLowbit>(a, stream); break;
        case WeightPacking::kGptq: LaunchTiles<WeightFormat::kUint4, WeightPacking::kGptq>(a, stream); break;
        case WeightPacking::kAwq: LaunchTiles<WeightFormat::kUint4, WeightPacking::kAwq>(a, stream); break;
      }
      break;
  }
  return detail::LastLaunchStatus(what);
}

}  // namespace

bool UsesTensorCores(const matmul::MatmulProblem& p) { return TilesTake(p); }

Status Gemm(const matmul::MatmulProblem& p, cudaStream_t stream) {
  if (Status st = ValidateGemm(p); !st.ok) return st;
  return Run("gemm", p, nullptr, stream);
}

std::size_t GemmW4A4TensorScaleOffset(std::int64_t m, std::int64_t k) {
  return static_cast<std::size_t>(m) * static_cast<std::size_t>(k) * 2;
}

std::size_t GemmW4A4WorkspaceBytes(std::int64_t m, std::int64_t k) {
  // activations, then the TensorScale, its decode value and the amax bits
  return GemmW4A4TensorScaleOffset(m, k) + 64;
}

Status GemmW4A4Nvfp4(const matmul::MatmulProblem& p, const recipe::Recipe& recipe, void* workspace,
                     cudaStream_t stream) {
  const char* what = "gemm_w4a4_nvfp4";
  if (recipe.family() != recipe::Family::kNvfp4) {
    return Status::Error("gemm_w4a4_nvfp4: the activation recipe must be an NVFP4 recipe");
  }
  if (p.w.format != WeightFormat::kNvfp4) return Status::Error("gemm_w4a4_nvfp4: the weight must be NVFP4");
  if (Status st = ValidateGemm(p); !st.ok) return st;
  if (Status st = detail::CheckDeviceBuffers(what, {workspace, p.w.tensor_scale}); !st.ok) return st;
  if (p.w.batch != 1) return Status::Error("gemm_w4a4_nvfp4: batch must be 1 (the activation tensor scale is per tensor)");
  if (p.w.k % kTileK != 0) return Status::Error("gemm_w4a4_nvfp4: K must be a multiple of 32");
  if (!Aligned16(p.x.data) || p.x.row_stride % 8 != 0) return Status::Error("gemm_w4a4_nvfp4: x rows must be 16-byte aligned");
  if (!Aligned16(workspace)) return Status::Error("gemm_w4a4_nvfp4: workspace must be 16-byte aligned");
  const std::int64_t m = p.m, k = p.w.k;
  auto* a = static_cast<__nv_bfloat16*>(workspace);
  auto* tail = static_cast<std::uint8_t*>(workspace) + GemmW4A4TensorScaleOffset(m, k);
  auto* t = reinterpret_cast<recipe::TensorScale*>(tail);
  auto* decode = reinterpret_cast<float*>(tail + 32);
  auto* amax_bits = reinterpret_cast<unsigned int*>(tail + 48);
  static_assert(sizeof(recipe::TensorScale) <= 32);
  if (Status st = detail::CudaStatus(what, cudaMemsetAsync(amax_bits, 0, sizeof(unsigned int), stream)); !st.ok) return st;
  const auto* x = static_cast<const std::uint16_t*>(p.x.data);
  AmaxKernel<<<1024, 256, 0, stream>>>(x, m, k, p.x.row_stride, amax_bits);
  TensorScaleKernel<<<1, 1, 0, stream>>>(recipe, amax_bits, t, decode);
  const std::int64_t blocks = m * (k / 16);
  QuantizeActivationsKernel<<<static_cast<unsigned>((blocks + 255) / 256), 256, 0, stream>>>(x, m, k, p.x.row_stride,
                                                                                            recipe, t, a);
  if (Status st = detail::LastLaunchStatus(what); !st.ok) return st;
  matmul::MatmulProblem q = p;
  q.x.data = a;
  q.x.row_stride = k;
  q.x.count = m * k;
  return Run(what, q, decode, stream);
}

matmul::GemmErrorModel GemmErrorModelOf(WeightFormat f, OutputType out, bool w4a4) {
  return matmul::MmaSyncBf16GemmModel(f, out, w4a4);
}

}  // namespace lowbit::cuda::gemm
