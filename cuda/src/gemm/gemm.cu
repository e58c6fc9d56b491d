// Tensor-core GEMM with packed weights dequantized in shared memory
// (issue 12). One kernel template per weight format:
//
//  - CTA tile 128 x 128 x 32, 8 warps (2 along M x 4 along N), each warp a
//    64 x 32 block of m16n8k16 mma.sync BF16 x BF16 -> FP32, fragments from
//    ldmatrix. Shared rows are padded to 40 BF16 (80 bytes) so that the 8
//    row addresses of one ldmatrix phase hit 8 different 16-byte bank groups.
//  - Activations: cp.async 16-byte copies, two stages.
//  - Weights: each thread loads the packed bytes of 16 consecutive K values of
//    one row (8 bytes for 4-bit codes, 16 for 8-bit) into registers one tile
//    ahead, decodes them with a 16/256-entry table built from the model
//    (DecodeToF32 of the element format), multiplies by the block scale in
//    FP32 and rounds once to BF16 into the other shared stage.
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
// issue's speed goal and is not written yet (bench/RESULTS.md "GEMM").
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
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "../checks.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"

namespace lowbit::cuda::gemm {
namespace {

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 32;
constexpr int kPitch = 40;  // BF16 per shared row: 32 + 8 padding (80 bytes)
constexpr int kThreads = 256;

// Epilogue scale sources.
struct Epilogue {
  float tensor_scale = 1.0f;            // NVFP4 weights: multiply by it
  const float* channel_scale = nullptr; // FP8 per channel: multiply by [n]
  const float* extra_scale = nullptr;   // W4A4: the activation tensor scale (device)
  bool use_tensor_scale = false;
};

template <WeightFormat F>
struct Traits;
template <>
struct Traits<WeightFormat::kNvfp4> {
  static constexpr bool kFourBit = true;
  static constexpr int kBlock = 16;
};
template <>
struct Traits<WeightFormat::kMxfp4> {
  static constexpr bool kFourBit = true;
  static constexpr int kBlock = 32;
};
template <>
struct Traits<WeightFormat::kMxfp8E4m3> {
  static constexpr bool kFourBit = false;
  static constexpr int kBlock = 32;
};
template <>
struct Traits<WeightFormat::kInt4G128> {
  static constexpr bool kFourBit = true;
  static constexpr int kBlock = 128;
};
template <>
struct Traits<WeightFormat::kUint4G128> {
  static constexpr bool kFourBit = true;
  static constexpr int kBlock = 128;
};
template <>
struct Traits<WeightFormat::kFp8E4m3PerChannel> {  // scale per output channel, in the epilogue
  static constexpr bool kFourBit = false;
};

// The model's decode of `code` in format S; the local constexpr copy is what
// device code can read (recipe/steps.h does the same with kRoundingGrid16).
template <const FormatSpec& S>
__device__ __forceinline__ float Decode(std::uint64_t code) {
  constexpr FormatSpec kSpec = S;
  return DecodeToF32(kSpec, code);
}

// The element format's value of code i, from the model.
template <WeightFormat F>
__device__ float ElementValue(int code) {
  if constexpr (F == WeightFormat::kNvfp4 || F == WeightFormat::kMxfp4) {
    return Decode<kE2m1>(static_cast<std::uint64_t>(code));
  } else if constexpr (F == WeightFormat::kInt4G128) {
    return Decode<kInt4>(static_cast<std::uint64_t>(code));
  } else if constexpr (F == WeightFormat::kUint4G128) {
    return Decode<kUint4>(static_cast<std::uint64_t>(code));
  } else {
    return Decode<kE4m3>(static_cast<std::uint64_t>(code));
  }
}

// The FP32 block scale of row n, k-block b (and the zero point for INT4).
template <WeightFormat F>
__device__ void BlockScale(const GemmWeights& w, std::int64_t n, std::int64_t k0, float* scale, float* zero) {
  *zero = 0.0f;
  if constexpr (F == WeightFormat::kFp8E4m3PerChannel) {
    *scale = 1.0f;
  } else {
    const std::int64_t blocks = w.k / Traits<F>::kBlock;
    const std::int64_t idx = n * blocks + k0 / Traits<F>::kBlock;
    if constexpr (F == WeightFormat::kNvfp4) {
      *scale = Decode<kUe4m3>(static_cast<const std::uint8_t*>(w.scales)[idx] & 0x7Fu);
    } else if constexpr (F == WeightFormat::kMxfp4 || F == WeightFormat::kMxfp8E4m3) {
      *scale = Decode<kE8m0>(static_cast<const std::uint8_t*>(w.scales)[idx]);
    } else {
      const std::uint16_t bits = static_cast<const std::uint16_t*>(w.scales)[idx];
      *scale = w.scale_type == ScaleType::kF16 ? Decode<kFp16>(bits) : Decode<kBf16>(bits);
      if (w.zeros != nullptr) *zero = static_cast<float>(w.zeros[idx]);
    }
  }
}

// One dequantized weight: (element - zero) * scale in FP32 (exact: see
// gemm_bound.h term 1), rounded once to BF16.
template <WeightFormat F>
__device__ __forceinline__ float Dequant(const float* table, int code, float scale, float zero) {
  if constexpr (F == WeightFormat::kInt4G128 || F == WeightFormat::kUint4G128) {
    return __fmul_rn(__fsub_rn(table[code], zero), scale);
  } else {
    return __fmul_rn(table[code], scale);
  }
}

__device__ __forceinline__ std::uint32_t PackBf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ std::uint32_t SharedAddress(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, bool valid) {
  const int bytes = valid ? 16 : 0;  // 0: zero-fill, nothing read
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(smem)), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void CpAsyncCommitWait() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::);
}

__device__ __forceinline__ void LdMatrixX4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(p)));
}

__device__ __forceinline__ void Mma16816(float* c, const std::uint32_t* a, std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct SharedTiles {
  __nv_bfloat16 a[2][kTileM][kPitch];
  __nv_bfloat16 b[2][kTileN][kPitch];
  float table[256];
};

template <WeightFormat F>
__global__ void __launch_bounds__(kThreads) GemmKernel(const __nv_bfloat16* __restrict__ x, std::int64_t m,
                                                       GemmWeights w, Epilogue epi, void* y, OutputType out) {
  __shared__ __align__(128) SharedTiles s;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp >> 2;  // 0..1: 64 rows each
  const int warp_n = warp & 3;   // 0..3: 32 columns each
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kTileM;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kTileN;
  const std::int64_t k = w.k;
  const int k_tiles = static_cast<int>(k / kTileK);

  constexpr int kTableSize = Traits<F>::kFourBit ? 16 : 256;
  if (tid < kTableSize) s.table[tid] = ElementValue<F>(tid);

  // This thread's weight segment: row b_row of the tile, 16 K values from b_col.
  const int b_row = tid >> 1;
  const int b_col = (tid & 1) * 16;
  const std::int64_t b_n = n0 + b_row;
  const bool b_valid = b_n < w.n;
  constexpr int kBytesPerSeg = Traits<F>::kFourBit ? 8 : 16;
  const std::int64_t row_bytes = Traits<F>::kFourBit ? k / 2 : k;
  const std::uint8_t* b_src = w.codes + (b_valid ? b_n : 0) * row_bytes + (Traits<F>::kFourBit ? b_col / 2 : b_col);

  auto load_a = [&](int kt, int stage) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int c = tid + i * kThreads;
      const int row = c >> 2;
      const int col = (c & 3) * 8;
      const std::int64_t gm = m0 + row;
      const bool valid = gm < m;
      const __nv_bfloat16* src = x + (valid ? gm : 0) * k + static_cast<std::int64_t>(kt) * kTileK + col;
      CpAsync16(&s.a[stage][row][col], src, valid);
    }
  };
  auto load_b = [&](int kt) {
    uint4 raw = make_uint4(0, 0, 0, 0);
    if (b_valid) {
      const std::uint8_t* p = b_src + static_cast<std::int64_t>(kt) * kTileK * kBytesPerSeg / 16;
      if constexpr (Traits<F>::kFourBit) {
        const uint2 v = *reinterpret_cast<const uint2*>(p);
        raw.x = v.x;
        raw.y = v.y;
      } else {
        raw = *reinterpret_cast<const uint4*>(p);
      }
    }
    return raw;
  };
  auto store_b = [&](int kt, int stage, const uint4& raw) {
    std::uint32_t packed[8];
    if (b_valid) {
      float scale, zero;
      BlockScale<F>(w, b_n, static_cast<std::int64_t>(kt) * kTileK + b_col, &scale, &zero);
      const std::uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        int c0, c1;
        if constexpr (Traits<F>::kFourBit) {
          const std::uint32_t byte = (words[j >> 2] >> ((j & 3) * 8)) & 0xFFu;
          c0 = static_cast<int>(byte & 0xFu);  // element 2j: low nibble first
          c1 = static_cast<int>(byte >> 4);
        } else {
          c0 = static_cast<int>((words[j >> 1] >> ((j & 1) * 16)) & 0xFFu);
          c1 = static_cast<int>((words[j >> 1] >> ((j & 1) * 16 + 8)) & 0xFFu);
        }
        packed[j] = PackBf16(Dequant<F>(s.table, c0, scale, zero), Dequant<F>(s.table, c1, scale, zero));
      }
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) packed[j] = 0;
    }
    uint4* dst = reinterpret_cast<uint4*>(&s.b[stage][b_row][b_col]);
    dst[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
    dst[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
  };

  float acc[4][4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  load_a(0, 0);
  uint4 raw = load_b(0);
  __syncthreads();  // the table
  store_b(0, 0, raw);
  CpAsyncCommitWait();
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt & 1;
    const bool more = kt + 1 < k_tiles;
    if (more) {
      load_a(kt + 1, stage ^ 1);
      raw = load_b(kt + 1);
    }
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += 16) {
      std::uint32_t af[4][4];
      std::uint32_t bf[2][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int row = warp_m * 64 + i * 16 + (lane & 15);
        const int col = kk + (lane >> 4) * 8;
        LdMatrixX4(af[i], &s.a[stage][row][col]);
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
        const int mat = lane >> 3;
        const int row = warp_n * 32 + j * 16 + (mat >> 1) * 8 + (lane & 7);
        const int col = kk + (mat & 1) * 8;
        LdMatrixX4(bf[j], &s.b[stage][row][col]);
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) Mma16816(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
    }
    if (more) store_b(kt + 1, stage ^ 1, raw);
    CpAsyncCommitWait();
    __syncthreads();
  }

  // Epilogue: accumulator (row lane/4 (+8), columns 2*(lane%4) + {0,1}).
  const float extra = epi.extra_scale != nullptr ? *epi.extra_scale : 1.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t row = m0 + warp_m * 64 + i * 16 + (lane >> 2) + (e >> 1) * 8;
        const std::int64_t col = n0 + warp_n * 32 + j * 8 + (lane & 3) * 2 + (e & 1);
        if (row >= m || col >= w.n) continue;
        float v = acc[i][j][e];
        if (epi.use_tensor_scale) v = __fmul_rn(v, epi.tensor_scale);
        if (epi.channel_scale != nullptr) v = __fmul_rn(v, epi.channel_scale[col]);
        if (epi.extra_scale != nullptr) v = __fmul_rn(v, extra);
        if (out == OutputType::kF32) {
          static_cast<float*>(y)[row * w.n + col] = v;
        } else {
          static_cast<__nv_bfloat16*>(y)[row * w.n + col] = __float2bfloat16_rn(v);
        }
      }
    }
  }
}

// W4A4 step 1: amax of all of x as the largest |x| bit pattern (a NaN, whose
// pattern is above every finite and infinite one, wins, as the recipes'
// amax does for NaN inputs they propagate).
__global__ void AmaxKernel(const __nv_bfloat16* __restrict__ x, std::int64_t count, unsigned int* amax_bits) {
  unsigned int local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float v = __bfloat162float(x[i]);
    const unsigned int bits = __float_as_uint(v) & 0x7FFFFFFFu;
    local = bits > local ? bits : local;
  }
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned int o = __shfl_xor_sync(0xFFFFFFFFu, local, off);
    local = o > local ? o : local;
  }
  if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, local);
}

// W4A4 step 2: the activation tensor scale from the model's recipe.
__global__ void TensorScaleKernel(block::Nvfp4Recipe recipe, const unsigned int* amax_bits,
                                  block::Nvfp4TensorScale* t, float* decode) {
  *t = block::Nvfp4TensorScaleFromAmax(recipe, __uint_as_float(*amax_bits));
  *decode = t->decode;
}

// W4A4 step 3: one thread per 16-element block: the model's block quantizer,
// then the BF16 values e2m1 * ue4m3 (exact) for the GEMM's A operand.
__global__ void QuantizeActivationsKernel(const __nv_bfloat16* __restrict__ x, std::int64_t blocks,
                                          block::Nvfp4Recipe recipe, const block::Nvfp4TensorScale* t_ptr,
                                          __nv_bfloat16* __restrict__ a) {
  const std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (b >= blocks) return;
  const block::Nvfp4TensorScale t = *t_ptr;
  float v[16];
  const uint4* src = reinterpret_cast<const uint4*>(x + b * 16);
  const uint4 w0 = src[0], w1 = src[1];
  const std::uint32_t words[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[2 * i] = __uint_as_float(words[i] << 16);
    v[2 * i + 1] = __uint_as_float(words[i] & 0xFFFF0000u);
  }
  std::uint8_t codes[16];
  const std::uint8_t scale_code = block::QuantizeNvfp4Block(recipe, t, v, 16, codes);
  const float scale = Decode<kUe4m3>(scale_code & 0x7Fu);
  std::uint32_t packed[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    packed[i] = PackBf16(__fmul_rn(Decode<kE2m1>(codes[2 * i]), scale),
                         __fmul_rn(Decode<kE2m1>(codes[2 * i + 1]), scale));
  }
  uint4* dst = reinterpret_cast<uint4*>(a + b * 16);
  dst[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  dst[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
}

bool Aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

ScaleType ExpectedScaleType(WeightFormat f) {
  switch (f) {
    case WeightFormat::kNvfp4: return ScaleType::kUe4m3;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: return ScaleType::kE8m0;
    case WeightFormat::kFp8E4m3PerChannel: return ScaleType::kF32;
    case WeightFormat::kInt4G128:
    case WeightFormat::kUint4G128: break;
  }
  return ScaleType::kF16;
}

Status CheckArguments(const char* what, const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w,
                      const void* y) {
  const std::string name = what;
  if (m < 1 || w.n < 1 || w.k < 1) return Status::Error(name + ": m, n and k must be >= 1");
  if (w.k % kTileK != 0) return Status::Error(name + ": k must be a multiple of 32");
  const std::int64_t block = BlockSizeOf(w.format, w.k);
  if (w.k % block != 0) return Status::Error(name + ": k must be a multiple of the format's block (" + std::to_string(block) + ")");
  const bool int4 = w.format == WeightFormat::kInt4G128 || w.format == WeightFormat::kUint4G128;
  const bool scale_ok = int4 ? (w.scale_type == ScaleType::kF16 || w.scale_type == ScaleType::kBf16)
                             : w.scale_type == ExpectedScaleType(w.format);
  if (!scale_ok) return Status::Error(name + ": scale type does not match the weight format " + NameOf(w.format));
  if (!int4 && w.zeros != nullptr) return Status::Error(name + ": zero points are for INT4/UINT4 weights only");
  if (Status st = detail::CheckSize(what, static_cast<std::size_t>(m), static_cast<std::size_t>(w.k), 2); !st.ok) return st;
  if (Status st = detail::CheckSize(what, static_cast<std::size_t>(w.n), static_cast<std::size_t>(w.k), 1); !st.ok) return st;
  if (Status st = detail::CheckSize(what, static_cast<std::size_t>(m), static_cast<std::size_t>(w.n), 4); !st.ok) return st;
  if (Status st = detail::CheckDeviceBuffers(what, {x, w.codes, w.scales, y}); !st.ok) return st;
  if (Status st = detail::CheckOptionalDeviceBuffer(what, w.zeros); !st.ok) return st;
  if (!Aligned16(x) || !Aligned16(w.codes)) return Status::Error(name + ": x and the weight codes must be 16-byte aligned");
  if (m > 65535LL * kTileM) return Status::Error(name + ": m too large for the grid");
  return Status::Ok();
}

template <WeightFormat F>
void Launch(const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, const Epilogue& epi, void* y,
            OutputType out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((w.n + kTileN - 1) / kTileN), static_cast<unsigned>((m + kTileM - 1) / kTileM));
  GemmKernel<F><<<grid, kThreads, 0, stream>>>(x, m, w, epi, y, out);
}

Status Dispatch(const char* what, const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, Epilogue epi,
                void* y, OutputType out, cudaStream_t stream) {
  switch (w.format) {
    case WeightFormat::kNvfp4:
      epi.use_tensor_scale = true;
      epi.tensor_scale = w.tensor_scale;
      Launch<WeightFormat::kNvfp4>(x, m, w, epi, y, out, stream);
      break;
    case WeightFormat::kMxfp4: Launch<WeightFormat::kMxfp4>(x, m, w, epi, y, out, stream); break;
    case WeightFormat::kMxfp8E4m3: Launch<WeightFormat::kMxfp8E4m3>(x, m, w, epi, y, out, stream); break;
    case WeightFormat::kInt4G128: Launch<WeightFormat::kInt4G128>(x, m, w, epi, y, out, stream); break;
    case WeightFormat::kUint4G128: Launch<WeightFormat::kUint4G128>(x, m, w, epi, y, out, stream); break;
    case WeightFormat::kFp8E4m3PerChannel:
      epi.channel_scale = static_cast<const float*>(w.scales);
      Launch<WeightFormat::kFp8E4m3PerChannel>(x, m, w, epi, y, out, stream);
      break;
  }
  return detail::LastLaunchStatus(what);
}

}  // namespace

std::int64_t BlockSizeOf(WeightFormat f, std::int64_t k) {
  switch (f) {
    case WeightFormat::kNvfp4: return Traits<WeightFormat::kNvfp4>::kBlock;
    case WeightFormat::kMxfp4: return Traits<WeightFormat::kMxfp4>::kBlock;
    case WeightFormat::kMxfp8E4m3: return Traits<WeightFormat::kMxfp8E4m3>::kBlock;
    case WeightFormat::kInt4G128: return Traits<WeightFormat::kInt4G128>::kBlock;
    case WeightFormat::kUint4G128: return Traits<WeightFormat::kUint4G128>::kBlock;
    case WeightFormat::kFp8E4m3PerChannel: break;
  }
  return k;
}

const char* NameOf(WeightFormat f) {
  switch (f) {
    case WeightFormat::kNvfp4: return "nvfp4";
    case WeightFormat::kMxfp4: return "mxfp4";
    case WeightFormat::kMxfp8E4m3: return "mxfp8_e4m3";
    case WeightFormat::kInt4G128: return "int4/g128";
    case WeightFormat::kUint4G128: return "uint4/g128";
    case WeightFormat::kFp8E4m3PerChannel: return "fp8_e4m3/per-channel";
  }
  return "?";
}

Status Gemm(const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, void* y, OutputType out,
            cudaStream_t stream) {
  if (Status st = CheckArguments("gemm", x, m, w, y); !st.ok) return st;
  return Dispatch("gemm", x, m, w, Epilogue{}, y, out, stream);
}

std::size_t GemmW4A4TensorScaleOffset(std::int64_t m, std::int64_t k) {
  return static_cast<std::size_t>(m) * static_cast<std::size_t>(k) * 2;
}

std::size_t GemmW4A4WorkspaceBytes(std::int64_t m, std::int64_t k) {
  // activations, then Nvfp4TensorScale, its decode value and the amax bits
  return GemmW4A4TensorScaleOffset(m, k) + 64;
}

Status GemmW4A4Nvfp4(const __nv_bfloat16* x, std::int64_t m, const GemmWeights& w, block::Nvfp4Recipe recipe,
                     void* workspace, void* y, OutputType out, cudaStream_t stream) {
  const char* what = "gemm_w4a4_nvfp4";
  if (w.format != WeightFormat::kNvfp4) return Status::Error("gemm_w4a4_nvfp4: the weight must be NVFP4");
  if (Status st = CheckArguments(what, x, m, w, y); !st.ok) return st;
  if (Status st = detail::CheckDeviceBuffers(what, {workspace}); !st.ok) return st;
  if (!Aligned16(workspace)) return Status::Error("gemm_w4a4_nvfp4: workspace must be 16-byte aligned");
  auto* a = static_cast<__nv_bfloat16*>(workspace);
  auto* tail = static_cast<std::uint8_t*>(workspace) + GemmW4A4TensorScaleOffset(m, w.k);
  auto* t = reinterpret_cast<block::Nvfp4TensorScale*>(tail);
  auto* decode = reinterpret_cast<float*>(tail + 32);
  auto* amax_bits = reinterpret_cast<unsigned int*>(tail + 48);
  static_assert(sizeof(block::Nvfp4TensorScale) <= 32);
  if (Status st = detail::CudaStatus(what, cudaMemsetAsync(amax_bits, 0, sizeof(unsigned int), stream)); !st.ok) return st;
  const std::int64_t count = m * w.k;
  AmaxKernel<<<1024, 256, 0, stream>>>(x, count, amax_bits);
  TensorScaleKernel<<<1, 1, 0, stream>>>(recipe, amax_bits, t, decode);
  const std::int64_t blocks = count / 16;
  QuantizeActivationsKernel<<<static_cast<unsigned>((blocks + 255) / 256), 256, 0, stream>>>(x, blocks, recipe, t, a);
  if (Status st = detail::LastLaunchStatus(what); !st.ok) return st;
  Epilogue epi;
  epi.extra_scale = decode;
  return Dispatch(what, a, m, w, epi, y, out, stream);
}

matmul::GemmErrorModel GemmErrorModelOf(WeightFormat f, OutputType out, bool w4a4) {
  matmul::GemmErrorModel e;
  e.mma_k = matmul::kMmaSyncK;
  e.step_rel = matmul::TensorCoreStepRel();
  e.step_abs = matmul::Fp32MinNormal();
  e.output_rel = out == OutputType::kF32 ? 0.0 : matmul::Bf16UnitRoundoff();
  switch (f) {
    case WeightFormat::kNvfp4: e.epilogue_muls = 1; break;           // e2m1 * ue4m3 exact; tensor scale after
    case WeightFormat::kMxfp4: break;                                 // e2m1 * 2^e exact (finite BF16)
    case WeightFormat::kMxfp8E4m3: e.weight_abs = matmul::Bf16HalfMinSubnormal(); break;  // e4m3 * 2^-127 underflows
    case WeightFormat::kInt4G128:
    case WeightFormat::kUint4G128: e.weight_rel = matmul::Bf16UnitRoundoff(); break;  // (q - z) * s rounded
    case WeightFormat::kFp8E4m3PerChannel: e.epilogue_muls = 1; break;  // e4m3 exact; channel scale after
  }
  if (w4a4) e.epilogue_muls = 2;  // weight tensor scale, then the activation's
  return e;
}

}  // namespace lowbit::cuda::gemm
