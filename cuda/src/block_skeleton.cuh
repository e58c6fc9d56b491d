// The skeleton of the tuned quantize recipes: every recipe runs through the
// same stages, in order:
//   load            16-byte loads where the data is aligned, one element at
//                   a time (zero past the end) otherwise;
//   statistics      the recipe's amax step, Steps::Amax(m, |x|), over a
//                   thread's values in element order (AccumulateInOrder);
//   tensor scale    Steps::Init, once per thread before its first block
//                   (NVFP4's S_enc from the tensor amax; nothing for MX), or
//                   TensorScaleKernel once per tensor;
//   block scale     Steps::Scale(amax), a recipe::BlockScale (`code` is the
//                   stored scale byte of the block formats);
//   scaled element  Steps::Element(scale, x), which scales and encodes one
//   and encode      element to its code (EncodeEach over a thread's values;
//                   Steps::Pair: two, one cvt);
//   store           StoreNibbleCodes (two codes a byte, low nibble first),
//                   StoreByteCodes (one code a byte), a row's chunks, or
//                   StoreCodeWords (a run's packed 64-bit words);
// The load, statistics and store stages are functions of block_stages.cuh;
// this file holds the geometries. Policies complete it, CUTLASS style: the
// recipe functor Steps (fp4_lanes.cuh lists its members, plus kPacked here:
// whether codes are nibbles), the element and store stages (Store::Run),
// and the geometry, one kernel each:
//   1-D blocks      BlockQuantizeKernel, one thread a block (MX, NVFP4). MX
//                   runs CodeArrayStore (below); NVFP4 runs nvfp4.cu's
//                   Nvfp4Store, which computes the same bytes in another
//                   order (see its comment). The lane-group layout of BF16
//                   FP4 input (fp4_lanes.cuh) runs the same Steps with a
//                   block's lanes cooperating.
//   rows            RowQuantizeKernel, one thread block a row (FP8 per
//                   token, fp8_scaled.cu).
//   tensor          the tensor amax pass (block_common.cuh
//                   LaunchTensorAmax), TensorScaleKernel, then an element
//                   map (map_kernel.cuh) with the scale (FP8 per tensor;
//                   NVFP4's S_enc / S_dec before its blocks).
// The integer group recipes (int_quantize.cu) run the same stages over
// groups along rows with their own geometries (a warp a group, or a group's
// chunks in registers), over a recipe given at run time: load LoadF32 and
// LoadF32s, statistics CombineStats (min, max and amax; in registers
// AccumulateInOrder of MinMaxStep), block scale ParamsFromStats, scaled
// element and encode QuantizeOne (in registers EncodeEach of
// ChunkElementStep). Those steps stay free functions: gathered into one
// recipe functor holding the run-time recipe, the integer kernels compile
// to other SASS (nvcc 13.0, sm_90a). The model recipe kernels
// (model_recipe.cu, any recipe on the model's own steps) read their
// aligned runs with LoadF32s, fold them with AccumulateInOrder, the model's
// Accumulate as the step (KeptStats), and store a run's codes with
// StoreCodeWords.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "block_common.cuh"
#include "block_stages.cuh"
#include "lowbit/formats/recipe/tensor_scale.h"

namespace lowbit::cuda::detail {

// The element and store stages of the MX recipes: every code of the block
// into an array, then packed as nibbles or bytes and stored. The stages'
// policy of BlockQuantizeKernel; nvfp4.cu has its own (Nvfp4Store).
struct CodeArrayStore {
  template <typename Steps, typename Scale, int kB>
  __device__ __forceinline__ static void Run(const Steps& steps, const Scale& s, const float (&v)[kB], bool full,
                                             std::size_t b, std::size_t n, std::uint8_t* __restrict__ codes,
                                             std::uint8_t* __restrict__ scales) {
    std::uint32_t q[kB];
    EncodeEach<kB>(v, q, ElementStep<Steps, Scale>{steps, s});
    scales[b] = s.code;
    if constexpr (Steps::kPacked) {
      std::uint32_t w[kB / 8] = {};
#pragma unroll
      for (int j = 0; j < kB; ++j) w[j / 8] += q[j] << (4 * (j % 8));
      StoreNibbleCodes<kB>(w, full, codes, b, n);
    } else {
      std::uint32_t w[kB / 4] = {};
#pragma unroll
      for (int j = 0; j < kB; ++j) w[j / 4] |= q[j] << (8 * (j % 4));
      StoreByteCodes<kB>(w, full, codes, b, n);
    }
  }
};

// The skeleton: a grid-stride loop over the blocks of x, one thread a
// block, the tensor scale, load, statistics and block scale stages, then
// Store::Run, the element and store stages. `vector`: x is 16-byte aligned.
template <typename Steps, typename In, typename Store>
__global__ void __launch_bounds__(256, 4)
    BlockQuantizeKernel(const In* __restrict__ x, std::size_t n, Steps steps, std::uint8_t* __restrict__ codes,
                        std::uint8_t* __restrict__ scales, bool vector) {
  constexpr int kB = Steps::kBlock;
  steps.Init();
  const std::size_t blocks = (n + kB - 1) / kB;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const bool full = vector && (b + 1) * kB <= n;
    float v[kB];
    LoadBlock(x, n, b, full, v);
    Store::Run(steps, steps.Scale(BlockAmaxOf(steps, v)), v, full, b, n, codes, scales);
  }
}

// ---- tensor geometry ----

// Which of a recipe's two tensor scales a caller must have written.
enum class KeptScale : std::uint8_t {
  kEncode,  // FP8 per tensor: the scale x is multiplied by (scale_inv optional)
  kDecode,  // NVFP4: S_dec, what dequantization multiplies by (S_enc optional)
};

// Tensor scale: Steps::TensorScaleOf(amax) from the tensor amax the
// statistics pass wrote, one thread; the kept scale to `kept`, the other to
// `other` where it is not null.
template <typename Steps, KeptScale kKept>
__global__ void TensorScaleKernel(const float* amax, float* kept, float* other) {
  const recipe::TensorScale t = Steps::TensorScaleOf(*amax);
  *kept = kKept == KeptScale::kEncode ? t.encode : t.decode;
  if (other) *other = kKept == KeptScale::kEncode ? t.decode : t.encode;
}

// ---- row geometry ----

// Statistics of one 16-byte chunk of In elements onto m. A loop of its own:
// as AccumulateInOrder over the widened values, the BF16 row kernels were
// scheduled differently.
template <typename Steps, typename In>
__device__ __forceinline__ float ChunkAmaxOf(const Steps& steps, const uint4& v, float m) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
#pragma unroll
  for (int j = 0; j < kE; ++j) m = steps.Amax(m, fabsf(ToF32(e[j])));
  return m;
}

// Scaled element, encode and store of one 16-byte chunk: its codes, one
// byte each, as chunk c of `out` (8 or 4 bytes, a streaming store).
template <typename Steps, typename In>
__device__ __forceinline__ void StoreByteChunk(const Steps& steps, const uint4& v, float s, std::uint8_t* out,
                                               std::size_t c) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
  std::uint8_t o[kE];
#pragma unroll
  for (int j = 0; j < kE; j += 2) {
    const std::uint16_t d = steps.Pair(s, ToF32(e[j]), ToF32(e[j + 1]));
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

// One thread block a row of a row-major [rows, cols] tensor: the row's amax
// (Steps::Amax, then BlockAmax), the row's scale (Steps::Scale, by thread
// 0: its factor scales the row, its decode is stored), then the row's codes
// (Steps::Pair: two elements x * scale, encoded together). The first kCache
// 16-byte chunks of each thread stay in registers between the two passes (a
// row of up to 8192 BF16 is read from memory once); chunks beyond that are
// read again (from L2). `vector`: the row is whole chunks, 16-byte aligned.
template <typename Steps, typename In, int kThreads>
__global__ void __launch_bounds__(kThreads)
    RowQuantizeKernel(const In* __restrict__ x, std::size_t cols, std::uint8_t* __restrict__ q,
                      float* __restrict__ scale_inv, bool vector) {
  constexpr int kE = 16 / sizeof(In);
  constexpr int kCache = 4;
  const Steps steps{};
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
      m = ChunkAmaxOf<Steps, In>(steps, cache[k], m);
    }
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    m = ChunkAmaxOf<Steps, In>(steps, __ldg(vrow + c), m);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) {
    m = steps.Amax(m, fabsf(ToF32(row[i])));
  }
  __shared__ float row_scale;
  m = BlockAmax<Steps::kAmaxNan>(m);
  if (threadIdx.x == 0) {
    const recipe::BlockScale s = steps.Scale(m);
    row_scale = s.factor;
    scale_inv[blockIdx.x] = s.decode;
  }
  __syncthreads();
  const float s = row_scale;
#pragma unroll
  for (int k = 0; k < kCache; ++k) {
    const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
    if (c < chunks) StoreByteChunk<Steps, In>(steps, cache[k], s, out, c);
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    StoreByteChunk<Steps, In>(steps, __ldcs(vrow + c), s, out, c);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) {
    out[i] = static_cast<std::uint8_t>(steps.Pair(s, ToF32(row[i]), 0.0f));
  }
}

}  // namespace lowbit::cuda::detail
