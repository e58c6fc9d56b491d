// Integer quantization on the GPU, equal bit for bit to the model
// (formats/include/lowbit/formats/recipe/tensor.h QuantizeTensor,
// DequantizeTensor) for every recipe with the semantics of an integer recipe
// of formats/spec/include/lowbit/formats/recipe/catalog.h that
// recipe_plan.h RunsOnIntKernels takes (INT8, INT4, UINT4 elements: [AO]
// symmetric / asymmetric, their CUDA-division variants, [GPTQ], the
// docs/formats-reference.md §8.2 common kernel) over a row-major [rows,
// cols] matrix, per row (per-channel weights, per-token activations) or per
// group of consecutive elements along K (INT4 g = 32/64/128); codes in the
// recipe's packing or another (tensor_call.h IntPacking). Dequantization is
// x = fp32(q - zero_point) * scale (recipe::DecodeElement), written as FP32
// or, rounded to nearest even, as BF16 (NaN -> 0x7FFF, as
// cvt.rn.bf16x2.f32). Entry point: tensor_call.h LaunchInt.
//
// One difference is stated, not hidden: a group whose statistics are NaN (a
// NaN input under a NaN-propagating recipe) gets the canonical NaN
// 0x7FFFFFFF as its scale, since NVIDIA FP32 arithmetic returns that NaN for
// any NaN operand (docs/formats-reference.md §3.3), where the host model
// returns the input's NaN as x86 propagates it. Codes (0 for a NaN element)
// and zero points agree. Dequantized FP32 NaNs do follow the host's x86
// rules (a NaN operand quieted, 0 x Inf -> 0xFFC00000), so dequantization is
// bit-exact.
//
// Scale and zero point are
// the model's own function (recipe::ChooseScale over the caller's recipe)
// compiled for the device, and so is the element step of the
// warp-per-group kernel (recipe::ScaledElement, then the clamp-then-round
// of recipe::IntegerOfScaled). The kernel that holds a group in registers
// writes ScaledElement as its one multiply or divide and is taken only for
// recipes whose model ScaledElement is that (ChunkedGroupThreadsLog2). Only
// the reduction order of the statistics differs from the model's, which
// min / max / amax do not see (a group with a NaN redoes them in element
// order; +-0 only ever reach a scale through a clamp to eps or a rounded
// zero point, where both give the same bits).

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "block_stages.cuh"
#include "checks.h"
#include "fast_divide.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "launch.cuh"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/steps.h"
#include "ptx.cuh"
#include "lowbit/cuda/recipe_plan.h"
#include "tensor_call.h"
#include "unit_store.cuh"

namespace lowbit::cuda {
namespace {

using detail::IntPacking;

constexpr int kWarpsPerBlock = 8;

// The recipe as a kernel parameter: the caller's recipe by value (its
// element spec is a value too; its name strings are never read on the
// device).
struct DeviceRecipe {
  recipe::Recipe recipe;
};

// What the kernels keep of a group's scale (recipe::BlockScale): the factor
// of the element step, the stored scale and the zero point.
struct GroupParams {
  float encode = 1;             // BlockScale::factor
  float decode = 1;             // BlockScale::decode: the stored scale
  std::int32_t zero_point = 0;  // BlockScale::zero_point
};

// The block scale stage of the skeleton (block_skeleton.cuh): the model's
// scale of a group from its statistics (recipe::ChooseScale).
__device__ __forceinline__ GroupParams ParamsFromStats(const recipe::Recipe& r, const recipe::GroupStats& s) {
  const recipe::BlockScale b = recipe::ChooseScale(r, s);
  return {b.factor, b.decode, b.zero_point};
}

// The scale the model's element step reads back.
__device__ __forceinline__ recipe::BlockScale ScaleOf(const GroupParams& p) {
  recipe::BlockScale s;
  s.factor = p.encode;
  s.decode = p.decode;
  s.zero_point = p.zero_point;
  return s;
}

// Group geometry of block::MakeGroupGrid for kPerRow / kPerGroup.
struct Geometry {
  std::size_t rows, cols;
  std::size_t group_cols;  // elements per group (cols for per-row)
  std::size_t grid_cols;   // groups per row
  IntPacking packing;
};

// AWQ nibble order, block::kAwqOrderMap as a value device code can read.
struct AwqOrder {
  int at[8];
};
constexpr AwqOrder kAwqOrder{{0, 2, 4, 6, 1, 3, 5, 7}};
static_assert([] {
  for (int i = 0; i < 8; ++i) {
    if (kAwqOrder.at[i] != block::kAwqOrderMap[i]) return false;
  }
  return true;
}());
// Nibble i of an AWQ word holds column kAwqOrder.at[i] of its eight (a local
// copy: device code cannot read the namespace-scope constant).
__device__ __forceinline__ int AwqColumn(int i) {
  constexpr AwqOrder kOrder = kAwqOrder;
  return kOrder.at[i];
}

// In: the input's bits, std::uint32_t for FP32 or std::uint16_t for BF16,
// read by the load stage (block_stages.cuh LoadF32, LoadF32s).
using detail::LoadF32;
using detail::LoadF32s;

// The code of a scaled value y (IntegerOfScaled, then the code mask): NaN ->
// 0, clamp to [lo, hi] = [qmin - zp, qmax - zp], round, + zp. Round half
// even is one cvt.rni (__float2int_rn) and half away roundf, both exact on
// the clamped range (|y| < 2^15); other modes use the model's rounding.
// The model's rounding to an integer in the modes no instruction here does
// (toward zero, down, up): rare, so out of line, one copy, not one a call site.
__device__ __noinline__ std::int32_t RoundOtherMode(float c, RoundingMode rounding) {
  return static_cast<std::int32_t>(recipe::RoundToIntegerF32(c, rounding));
}

__device__ __forceinline__ std::uint32_t CodeOfScaled(float y, float lo, float hi, std::int32_t zero_point,
                                                      RoundingMode rounding, std::uint32_t mask) {
  // fmaxf / fminf (one instruction each) clamp a number as the model's
  // comparisons do, up to the sign of a zero, which no rounding to an
  // integer keeps; they take a NaN y to lo, and the select below to 0.
  const float c = fminf(fmaxf(y, lo), hi);
  std::int32_t q;
  if (rounding == RoundingMode::kNearestEven) q = __float2int_rn(c);
  else if (rounding == RoundingMode::kNearestAway) q = static_cast<std::int32_t>(roundf(c));
  else q = RoundOtherMode(c, rounding);
  return y != y ? 0u : static_cast<std::uint32_t>(q + zero_point) & mask;
}

// The scaled element and encode stages: the code of one element, y = x *
// fp32(1/scale) or x / scale (ScaledElement), then CodeOfScaled.
__device__ __forceinline__ std::uint32_t QuantizeOne(const recipe::Recipe& r, const GroupParams& p, float x,
                                                     std::uint32_t mask) {
  return CodeOfScaled(recipe::ScaledElement(r, ScaleOf(p), x), static_cast<float>(r.qmin - p.zero_point),
                      static_cast<float>(r.qmax - p.zero_point), p.zero_point, r.element_encode.rounding, mask);
}

// The statistics stage of the skeleton (block_skeleton.cuh) for the
// integer recipes: the model's min, max and amax steps (recipe::Accumulate:
// TorchMin, TorchMax, the recipe's amax rule) onto s, of another part's
// statistics (mn, mx, am) or of one element x.
__device__ __forceinline__ recipe::GroupStats CombineStats(recipe::GroupStats s, float mn, float mx, float am,
                                                           AmaxNan rule) {
  s.min = recipe::TorchMin(s.min, mn);
  s.max = recipe::TorchMax(s.max, mx);
  s.amax = rule == AmaxNan::kIgnore ? MaxIgnoringNan(s.amax, am) : MaxPropagatingNan(s.amax, am);
  return s;
}
// The element form: written out, since as a call of the form above (with
// |x| computed first) the integer kernels compile to other SASS.
__device__ __forceinline__ recipe::GroupStats CombineStats(recipe::GroupStats s, float x, AmaxNan rule) {
  s.min = recipe::TorchMin(s.min, x);
  s.max = recipe::TorchMax(s.max, x);
  s.amax = rule == AmaxNan::kIgnore ? MaxIgnoringNan(s.amax, F32Abs(x))
                                           : MaxPropagatingNan(s.amax, F32Abs(x));
  return s;
}

__device__ __forceinline__ recipe::GroupStats WarpStats(recipe::GroupStats s, AmaxNan rule) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float mn = __shfl_xor_sync(0xFFFFFFFFu, s.min, o);
    const float mx = __shfl_xor_sync(0xFFFFFFFFu, s.max, o);
    const float am = __shfl_xor_sync(0xFFFFFFFFu, s.amax, o);
    s = CombineStats(s, mn, mx, am, rule);
  }
  return s;
}

// The statistics of a group holding NaNs, redone by one thread in element
// order. Which of several NaNs reaches the scale is the model's element order
// (recipe::Accumulate: the first one wins, recipe/steps.h Combine), which the
// butterfly of WarpStats does not keep; the SIMD kernels do the same
// (simd/src/int_group_quantize-inl.h ModelStats). Rare, and out of line so
// that the common path keeps its registers.
template <typename In>
__device__ __noinline__ recipe::GroupStats StatsInElementOrder(const In* __restrict__ x, std::size_t start,
                                                               std::size_t n, AmaxNan rule) {
  recipe::GroupStats s;
  s.min = __int_as_float(0x7F800000);
  s.max = __int_as_float(0xFF800000);
  s.amax = 0.0f;
  for (std::size_t j = 0; j < n; ++j) s = CombineStats(s, LoadF32(x, start + j), rule);
  return s;
}

// One warp per group. A lane takes kPer consecutive elements per step (a
// byte pair, a nibble pair, or an AWQ word of 8), so every packed unit is
// written by one lane.
template <typename In, int kPer>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    QuantizeIntKernel(const In* __restrict__ x, Geometry geo, DeviceRecipe dr, void* __restrict__ codes,
                      float* __restrict__ scales, std::int32_t* __restrict__ zero_points) {
  const recipe::Recipe& r = dr.recipe;
  const std::uint32_t mask = static_cast<std::uint32_t>(r.element.CodeMask());
  const std::size_t groups = geo.rows * geo.grid_cols;
  const std::size_t g = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (g >= groups) return;
  const int lane = threadIdx.x & 31;
  const std::size_t row = g / geo.grid_cols;
  const std::size_t start = row * geo.cols + (g % geo.grid_cols) * geo.group_cols;  // flat index
  const std::size_t n = geo.group_cols;

  recipe::GroupStats s;
  s.min = __int_as_float(0x7F800000);   // +Inf: the identity of TorchMin on numbers
  s.max = __int_as_float(0xFF800000);   // -Inf
  s.amax = 0.0f;
  for (std::size_t j = static_cast<std::size_t>(lane) * kPer; j < n; j += 32 * kPer) {
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      if (j + i < n) s = CombineStats(s, LoadF32(x, start + j + i), r.amax_nan);
    }
  }
  s = WarpStats(s, r.amax_nan);
  if (F32IsNan(F32Bits(s.min)) || F32IsNan(F32Bits(s.max)) ||
      F32IsNan(F32Bits(s.amax))) {
    // Warp-uniform: every lane saw the same reduction.
    recipe::GroupStats ordered = s;
    if (lane == 0) ordered = StatsInElementOrder(x, start, n, r.amax_nan);
    s.min = __shfl_sync(0xFFFFFFFFu, ordered.min, 0);
    s.max = __shfl_sync(0xFFFFFFFFu, ordered.max, 0);
    s.amax = __shfl_sync(0xFFFFFFFFu, ordered.amax, 0);
  }
  const GroupParams p = ParamsFromStats(r, s);
  if (lane == 0) {
    scales[g] = p.decode;
    if (zero_points) zero_points[g] = p.zero_point;
  }

  for (std::size_t j = static_cast<std::size_t>(lane) * kPer; j < n; j += 32 * kPer) {
    std::uint32_t q[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) q[i] = j + i < n ? QuantizeOne(r, p, LoadF32(x, start + j + i), mask) : 0u;
    const std::size_t e = start + j;  // even for nibbles, a multiple of 8 for AWQ
    if (geo.packing == IntPacking::kBytes) {
      auto* out = static_cast<std::uint8_t*>(codes);
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        if (j + i < n) out[e + i] = static_cast<std::uint8_t>(q[i]);
      }
    } else if (geo.packing == IntPacking::kAwq) {
      if constexpr (kPer == 8) {
        std::uint32_t word = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i) word |= q[AwqColumn(i)] << (4 * i);
        static_cast<std::uint32_t*>(codes)[e / 8] = word;
      }
    } else {
      const bool low_first = geo.packing == IntPacking::kLowFirst;
      static_cast<std::uint8_t*>(codes)[e / 2] =
          static_cast<std::uint8_t>(low_first ? (q[0] | (q[1] << 4)) : ((q[0] << 4) | q[1]));
    }
  }
}

// ---- Groups held in registers ----
//
// A group of 32 T elements (T a power of two up to 1024) is taken by T
// threads, each holding 8 chunks of 4 (128 bytes of FP32 in flight a
// thread), chunk i of thread k being the group's chunk i T + k: each load of the T threads reads 16 T (FP32) or 8 T (BF16)
// consecutive bytes, and each store writes their codes consecutively (4
// bytes, or 2 of nibbles, a thread). The input is read once: the statistics
// and the codes come from the same registers.
//
// A block (max(T, 256) threads) holds whole groups. Their statistics meet
// through shuffles among min(T, 32) lanes, then in shared memory, where
// thread j of the block turns group j's into its parameters (the model's
// ParamsFromStats) for every thread of the group to read: the
// parameter step, a few hundred instructions, runs once per group and, with
// up to 32 groups a warp, in parallel lanes.
//
// The statistics need no order: with no NaN in the group, min and max are
// exact whatever the order (+-0 aside, see the file header), and amax =
// max(|min|, |max|) is the model's max of |x|. A NaN is seen through
// max.NaN (ptx.cuh MaxNanF32); such a group has its statistics redone in
// element order (StatsInElementOrder), as QuantizeIntKernel does. The element
// step is ScaledElement's one operation (kDivide: x / factor, else
// x * factor; QuantizeInt takes this kernel only for recipes whose
// ScaledElement is that) and CodeOfScaled.
constexpr int kChunk = 4;
constexpr int kChunksPerThread = 8;
constexpr int kGroupElementsPerThread = kChunk * kChunksPerThread;
constexpr int kChunkedMaxGroupThreads = 1024;
constexpr int kChunkedMinBlock = 256;
// Partial statistics of a block: one per group of T <= 32 lanes (a block of
// 256 threads has at most 256 groups), or one per warp.
constexpr int kChunkedMaxPartials = kChunkedMinBlock > kChunkedMaxGroupThreads / 32 ? kChunkedMinBlock
                                                                                   : kChunkedMaxGroupThreads / 32;

// The statistics the chunked kernel keeps of its values, and their step
// (block_stages.cuh AccumulateInOrder): fminf, and max.NaN (ptx.cuh
// MaxNanF32) so that a NaN is seen.
struct MinMax {
  float min, max;
};
struct MinMaxStep {
  __device__ __forceinline__ MinMax operator()(MinMax s, float x) const {
    return {fminf(s.min, x), ptx::MaxNanF32(s.max, x)};
  }
};

// The element step of the chunked kernel: ScaledElement as its one
// operation (x / factor, or x * factor), then CodeOfScaled.
template <bool kDivide>
struct ChunkElementStep {
  const GroupParams& p;
  float lo, hi;
  RoundingMode rounding;
  std::uint32_t mask;
  __device__ __forceinline__ std::uint32_t operator()(float x) const {
    const float y = kDivide ? x / p.encode : x * p.encode;
    return CodeOfScaled(y, lo, hi, p.zero_point, rounding, mask);
  }
};

// The element stage (block_stages.cuh EncodeEach) over a thread's values.
// Called with a constant rounding for the common modes, so that the mode is
// tested once, outside the loop.
template <bool kDivide, int kCount>
__device__ __forceinline__ void CodesOf(const float v[kCount], const GroupParams& p, float lo, float hi,
                                        RoundingMode rounding, std::uint32_t mask, std::uint32_t q[kCount]) {
  detail::EncodeEach<kCount>(v, q, ChunkElementStep<kDivide>{p, lo, hi, rounding, mask});
}

// The first element of group g (row-major, groups along each row).
template <typename Index>
__device__ __forceinline__ Index GroupStart(const Geometry& geo, Index g) {
  const Index grid_cols = static_cast<Index>(geo.grid_cols);
  const Index row = g / grid_cols;
  return row * static_cast<Index>(geo.cols) + (g - row * grid_cols) * static_cast<Index>(geo.group_cols);
}

template <typename In, typename Index, bool kDivide>
__global__ void __launch_bounds__(kChunkedMaxGroupThreads)
    QuantizeIntChunksKernel(const In* __restrict__ x, Geometry geo, DeviceRecipe dr, int group_threads_log2,
                            void* __restrict__ codes, float* __restrict__ scales,
                            std::int32_t* __restrict__ zero_points) {
  __shared__ float partial_min[kChunkedMaxPartials];
  __shared__ float partial_max[kChunkedMaxPartials];
  __shared__ GroupParams group_params[kChunkedMinBlock];
  const recipe::Recipe& r = dr.recipe;
  const std::uint32_t mask = static_cast<std::uint32_t>(r.element.CodeMask());
  const int group_threads = 1 << group_threads_log2;
  const Index groups = static_cast<Index>(geo.rows) * static_cast<Index>(geo.grid_cols);
  const Index first_group = (static_cast<Index>(blockIdx.x) * blockDim.x) >> group_threads_log2;
  const int slot = static_cast<int>(threadIdx.x) >> group_threads_log2;  // the group within the block
  const Index g = first_group + static_cast<Index>(slot);
  const int k = static_cast<int>(threadIdx.x) & (group_threads - 1);
  // Threads past the last group form whole groups of their own: they take
  // part in the shuffles and barriers and touch no memory.
  const bool valid = g < groups;
  const Index start = GroupStart(geo, g);

  constexpr int kPerThread = kGroupElementsPerThread;
  float v[kPerThread];
  float mn = __int_as_float(0x7F800000);  // +Inf
  float mx = __int_as_float(0xFF800000);  // -Inf
  if (valid) {
#pragma unroll
    for (int i = 0; i < kChunksPerThread; ++i) {
      LoadF32s<kChunk>(x + static_cast<std::size_t>(start) + static_cast<std::size_t>(i * group_threads + k) * kChunk,
                       v + i * kChunk);
    }
    const MinMax m = detail::AccumulateInOrder<kPerThread>(MinMax{mn, mx}, v, MinMaxStep{});
    mn = m.min;
    mx = m.max;
  }
  const int lanes = group_threads < 32 ? group_threads : 32;
  for (int o = lanes / 2; o > 0; o >>= 1) {
    mn = fminf(mn, __shfl_xor_sync(0xFFFFFFFFu, mn, o));
    mx = ptx::MaxNanF32(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
  }
  const int lanes_log2 = group_threads_log2 < 5 ? group_threads_log2 : 5;
  if ((static_cast<int>(threadIdx.x) & (lanes - 1)) == 0) {
    partial_min[threadIdx.x >> lanes_log2] = mn;
    partial_max[threadIdx.x >> lanes_log2] = mx;
  }
  __syncthreads();
  const int groups_in_block = static_cast<int>(blockDim.x) >> group_threads_log2;
  if (static_cast<int>(threadIdx.x) < groups_in_block) {
    const int j = static_cast<int>(threadIdx.x);
    const Index gj = first_group + static_cast<Index>(j);
    if (gj < groups) {
      const int per_group = group_threads / lanes;  // partials of a group
      recipe::GroupStats s;
      s.min = partial_min[j * per_group];
      s.max = partial_max[j * per_group];
      for (int w = 1; w < per_group; ++w) {
        s.min = fminf(s.min, partial_min[j * per_group + w]);
        s.max = ptx::MaxNanF32(s.max, partial_max[j * per_group + w]);
      }
      s.amax = fmaxf(fabsf(s.min), fabsf(s.max));
      if (s.max != s.max) s = StatsInElementOrder(x, static_cast<std::size_t>(GroupStart(geo, gj)), geo.group_cols, r.amax_nan);
      const GroupParams p = ParamsFromStats(r, s);
      group_params[j] = p;
      scales[gj] = p.decode;
      if (zero_points) zero_points[gj] = p.zero_point;
    }
  }
  __syncthreads();
  if (!valid) return;
  const GroupParams p = group_params[slot];
  const float lo = static_cast<float>(r.qmin - p.zero_point);
  const float hi = static_cast<float>(r.qmax - p.zero_point);
  std::uint32_t q[kPerThread];
  const RoundingMode rounding = r.element_encode.rounding;
  if (rounding == RoundingMode::kNearestEven) CodesOf<kDivide, kPerThread>(v, p, lo, hi, RoundingMode::kNearestEven, mask, q);
  else if (rounding == RoundingMode::kNearestAway) CodesOf<kDivide, kPerThread>(v, p, lo, hi, RoundingMode::kNearestAway, mask, q);
  else CodesOf<kDivide, kPerThread>(v, p, lo, hi, rounding, mask, q);
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const std::uint32_t* c = q + i * kChunk;
    const std::size_t e = static_cast<std::size_t>(start) + static_cast<std::size_t>(i * group_threads + k) * kChunk;
    if (geo.packing == IntPacking::kBytes) {
      static_cast<std::uint32_t*>(codes)[e / kChunk] = c[0] | (c[1] << 8) | (c[2] << 16) | (c[3] << 24);
    } else {
      const bool low_first = geo.packing == IntPacking::kLowFirst;
      const std::uint32_t b0 = low_first ? (c[0] | (c[1] << 4)) : ((c[0] << 4) | c[1]);
      const std::uint32_t b1 = low_first ? (c[2] | (c[3] << 4)) : ((c[2] << 4) | c[3]);
      static_cast<std::uint16_t*>(codes)[e / kChunk] = static_cast<std::uint16_t>(b0 | (b1 << 8));
    }
  }
}

// One thread per packed unit (a byte, or an AWQ word of 8 codes).
template <typename Out>
__global__ void __launch_bounds__(256)
    DequantizeIntKernel(const void* __restrict__ codes, Geometry geo, FormatSpec element,
                        const float* __restrict__ scales, const std::int32_t* __restrict__ zero_points,
                        Out* __restrict__ out) {
  const int per = geo.packing == IntPacking::kBytes ? 1 : geo.packing == IntPacking::kAwq ? 8 : 2;
  const std::size_t units = geo.rows * geo.cols / per;
  const std::uint32_t mask = static_cast<std::uint32_t>(element.CodeMask());
  const std::int32_t half = element.has_sign ? (std::int32_t{1} << (element.total_bits - 1)) : 0;
  for (std::size_t u = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < units;
       u += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t e0 = u * per;
    const std::size_t row = e0 / geo.cols;
    const std::size_t g = row * geo.grid_cols + (e0 % geo.cols) / geo.group_cols;
    const float scale = __ldg(scales + g);
    const std::int32_t zp = zero_points ? __ldg(zero_points + g) : 0;
    std::uint32_t q[8];
    if (geo.packing == IntPacking::kBytes) {
      q[0] = static_cast<const std::uint8_t*>(codes)[u];
    } else if (geo.packing == IntPacking::kAwq) {
      const std::uint32_t word = static_cast<const std::uint32_t*>(codes)[u];
#pragma unroll
      for (int i = 0; i < 8; ++i) q[AwqColumn(i)] = (word >> (4 * i)) & 0xFu;
    } else {
      const std::uint32_t b = static_cast<const std::uint8_t*>(codes)[u];
      const bool low_first = geo.packing == IntPacking::kLowFirst;
      q[0] = low_first ? (b & 0xFu) : (b >> 4);
      q[1] = low_first ? (b >> 4) : (b & 0xFu);
    }
    for (int i = 0; i < per; ++i) {
      std::int32_t v = static_cast<std::int32_t>(q[i] & mask);
      if (half != 0 && v >= half) v -= 2 * half;  // IntegerOfCode
      const float value = F32MulAsX86(static_cast<float>(v - zp), scale);
      if constexpr (sizeof(Out) == 4) out[e0 + i] = value;
      else out[e0 + i] = static_cast<std::uint16_t>(ptx::CvtRnBf16x2F32(value, 0.0f));
    }
  }
}

// The same arithmetic, eight elements a unit, when a row and a group are
// whole units (cols and group_cols multiples of 8): one group per unit, so
// one scale and zero point; the unit's codes in one access (8 bytes, or one
// 4-byte word of nibbles or AWQ) and its output in 16-byte stores. The flat
// layout of the element maps (map_kernel.cuh FlatMapKernel): every load of
// a thread issued before the first use. Integer index arithmetic in 32 bits
// when the tensor allows it (a 64-bit division is a long call).
constexpr int kDequantUnitThreads = 128;
constexpr int kDequantUnitsPerThread = 4;

template <typename Index, typename Out>
__global__ void __launch_bounds__(kDequantUnitThreads)
    DequantizeIntUnitsKernel(const void* __restrict__ codes, Geometry geo, FormatSpec element,
                             const float* __restrict__ scales, const std::int32_t* __restrict__ zero_points,
                             Out* __restrict__ out) {
  const Index units = static_cast<Index>(geo.rows * geo.cols / 8);
  const Index cols = static_cast<Index>(geo.cols), group_cols = static_cast<Index>(geo.group_cols);
  const Index grid_cols = static_cast<Index>(geo.grid_cols);
  const std::uint32_t mask = static_cast<std::uint32_t>(element.CodeMask());
  const std::int32_t half = element.has_sign ? (std::int32_t{1} << (element.total_bits - 1)) : 0;
  const Index base = static_cast<Index>(blockIdx.x) * (kDequantUnitThreads * kDequantUnitsPerThread) + threadIdx.x;
  uint2 word[kDequantUnitsPerThread];  // nibbles and AWQ: .x only
  float scale[kDequantUnitsPerThread];
  std::int32_t zp[kDequantUnitsPerThread];
#pragma unroll
  for (int k = 0; k < kDequantUnitsPerThread; ++k) {
    const Index u = base + k * kDequantUnitThreads;
    if (u < units) {
      if (geo.packing == IntPacking::kBytes) word[k] = __ldg(static_cast<const uint2*>(codes) + u);
      else word[k].x = __ldg(static_cast<const std::uint32_t*>(codes) + u);
      const Index e0 = u * 8;
      const Index row = e0 / cols;
      const Index g = row * grid_cols + (e0 - row * cols) / group_cols;
      scale[k] = __ldg(scales + g);
      zp[k] = zero_points ? __ldg(zero_points + g) : 0;
    }
  }
#pragma unroll
  for (int k = 0; k < kDequantUnitsPerThread; ++k) {
    const Index u = base + k * kDequantUnitThreads;
    if (u >= units) break;
    std::uint32_t q[8];
    if (geo.packing == IntPacking::kBytes) {
#pragma unroll
      for (int i = 0; i < 8; ++i) q[i] = ((i < 4 ? word[k].x : word[k].y) >> (8 * (i % 4))) & 0xFFu;
    } else if (geo.packing == IntPacking::kAwq) {
#pragma unroll
      for (int i = 0; i < 8; ++i) q[AwqColumn(i)] = (word[k].x >> (4 * i)) & 0xFu;
    } else {
      // Byte b holds elements 2b, 2b + 1: low nibble first, or high first.
      const bool low_first = geo.packing == IntPacking::kLowFirst;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const std::uint32_t b = (word[k].x >> (8 * (i / 2))) & 0xFFu;
        q[i] = ((i % 2 == 0) == low_first) ? (b & 0xFu) : (b >> 4);
      }
    }
    float v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      std::int32_t c = static_cast<std::int32_t>(q[i] & mask);
      if (half != 0 && c >= half) c -= 2 * half;  // IntegerOfCode
      v[i] = F32MulAsX86(static_cast<float>(c - zp[k]), scale[k]);
    }
    detail::StoreUnit8(out + static_cast<std::size_t>(u) * 8, v);
  }
}

// FP32 output four elements a thread step ("quads"), for byte and nibble
// packings: a quad's codes in one 4- or 2-byte load, its scale and zero
// point (a group is whole quads), its four values in one 16-byte store. A
// warp's loads and stores are each one contiguous run (lane i takes quad
// base + i), where the eight-element units above store 16 bytes at a 32-byte
// stride from lane to lane, two instructions for every 512 contiguous bytes.
constexpr int kDequantQuadThreads = 256;
constexpr int kDequantQuadsPerThread = 8;

template <typename Index>
__global__ void __launch_bounds__(kDequantQuadThreads)
    DequantizeIntQuadsKernel(const void* __restrict__ codes, Geometry geo, FormatSpec element,
                             const float* __restrict__ scales, const std::int32_t* __restrict__ zero_points,
                             detail::FastDivider quads_per_group, float* __restrict__ out) {
  const Index quads = static_cast<Index>(geo.rows * geo.cols / 4);
  const std::uint32_t mask = static_cast<std::uint32_t>(element.CodeMask());
  const std::int32_t half = element.has_sign ? (std::int32_t{1} << (element.total_bits - 1)) : 0;
  const Index base = static_cast<Index>(blockIdx.x) * (kDequantQuadThreads * kDequantQuadsPerThread) + threadIdx.x;
  std::uint32_t word[kDequantQuadsPerThread];
  float scale[kDequantQuadsPerThread];
  std::int32_t zp[kDequantQuadsPerThread];
#pragma unroll
  for (int k = 0; k < kDequantQuadsPerThread; ++k) {
    const Index q = base + k * kDequantQuadThreads;
    if (q < quads) {
      if (geo.packing == IntPacking::kBytes) word[k] = __ldg(static_cast<const std::uint32_t*>(codes) + q);
      else word[k] = __ldg(static_cast<const std::uint16_t*>(codes) + q);
      // cols is a multiple of the group (block::MakeGroupGrid), so quad q
      // lies in group q / (group_cols / 4): a multiply and shifts
      // (fast_divide.h) in 32-bit indices.
      Index g;
      if constexpr (sizeof(Index) == 4) g = quads_per_group.Quotient(q);
      else g = q / quads_per_group.divisor;
      scale[k] = __ldg(scales + g);
      zp[k] = zero_points ? __ldg(zero_points + g) : 0;
    }
  }
#pragma unroll
  for (int k = 0; k < kDequantQuadsPerThread; ++k) {
    const Index q = base + k * kDequantQuadThreads;
    if (q >= quads) break;
    std::uint32_t c[4];
    if (geo.packing == IntPacking::kBytes) {
#pragma unroll
      for (int i = 0; i < 4; ++i) c[i] = (word[k] >> (8 * i)) & 0xFFu;
    } else {
      // Byte b holds elements 2b, 2b + 1: low nibble first, or high first.
      const bool low_first = geo.packing == IntPacking::kLowFirst;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::uint32_t b = (word[k] >> (8 * (i / 2))) & 0xFFu;
        c[i] = ((i % 2 == 0) == low_first) ? (b & 0xFu) : (b >> 4);
      }
    }
    float v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      std::int32_t x = static_cast<std::int32_t>(c[i] & mask);
      if (half != 0 && x >= half) x -= 2 * half;  // IntegerOfCode
      v[i] = F32MulAsX86(static_cast<float>(x - zp[k]), scale[k]);
    }
    reinterpret_cast<float4*>(out)[q] = make_float4(v[0], v[1], v[2], v[3]);
  }
}

// The packing of the recipe's codes (recipe::Packing).
IntPacking IntPackingOf(recipe::Packing p) {
  switch (p) {
    case recipe::Packing::kNibblesLowFirst: return IntPacking::kLowFirst;
    case recipe::Packing::kNibblesHighFirst: return IntPacking::kHighFirst;
    case recipe::Packing::kOnePerByte: break;
  }
  return IntPacking::kBytes;
}

unsigned GridOf(std::size_t items, std::size_t per_block) {
  const std::size_t g = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(g < 0x7FFFFFFFu ? (g > 0 ? g : 1) : 0x7FFFFFFFu);
}

// Checks shared by both directions; fills `geo`.
Status CheckShape(const char* what, const detail::TensorCall& t, Geometry* geo) {
  const std::string w(what);
  const recipe::Recipe* recipe = t.recipe;
  const std::size_t rows = t.rows, cols = t.cols;
  if (recipe == nullptr) return Status::Error(w + ": null recipe");
  if (recipe->element.IsFloat()) {
    return Status::Error(w + ": recipe '" + detail::RecipeLabel(*recipe) + "' has a float element (use the FP8 recipes)");
  }
  if (!detail::RunsOnIntKernels(*recipe)) {
    return Status::Error(w + ": no GPU kernel for the recipe '" + detail::RecipeLabel(*recipe) +
                         "' (the integer kernels take the semantics of a catalog integer recipe, "
                         "cuda/include/lowbit/cuda/recipe_plan.h RunsOnIntKernels)");
  }
  if (t.layout.geometry != recipe::Geometry::kPerRow && t.layout.geometry != recipe::Geometry::kGroup) {
    return Status::Error(w + ": layout must be per-row or per-group");
  }
  const block::QuantLayout layout = t.layout.geometry == recipe::Geometry::kGroup
                                        ? block::QuantLayout{block::Granularity::kPerGroup, t.layout.size}
                                        : block::QuantLayout{block::Granularity::kPerRow};
  const IntPacking packing = t.int_packing.value_or(IntPackingOf(recipe->packing));
  if (Status s = detail::CheckSize(what, rows, cols, 4); !s.ok) return s;
  block::GroupGrid grid;
  const block::QuantStatus st =
      block::MakeGroupGrid(layout, static_cast<long>(rows), static_cast<long>(cols), &grid);
  if (st != block::QuantStatus::kOk) return Status::Error(w + ": " + block::QuantStatusText(st));
  const bool four_bit = recipe->element.total_bits == 4;
  if (packing != IntPacking::kBytes && !four_bit) return Status::Error(w + ": nibble packings need a 4-bit element");
  if ((packing == IntPacking::kLowFirst || packing == IntPacking::kHighFirst) &&
      (cols % 2 != 0 || grid.group_cols % 2 != 0)) {
    return Status::Error(w + ": nibble packing needs an even number of columns and an even group");
  }
  if (packing == IntPacking::kAwq && (cols % 8 != 0 || grid.group_cols % 8 != 0)) {
    return Status::Error(w + ": AWQ packing needs columns and group a multiple of 8");
  }
  *geo = Geometry{rows, cols, static_cast<std::size_t>(grid.group_cols), static_cast<std::size_t>(grid.grid_cols),
                  packing};
  return Status::Ok();
}

// log2 of the threads per group of QuantizeIntChunksKernel, or -1 where it
// does not apply: a group of 32 T elements, T a power of two up to 1024;
// byte or nibble packing (an AWQ word spans two chunks); the input aligned
// for its chunk loads and the codes for their stores; and a recipe whose
// ScaledElement is one multiply or divide (no element quirk, not MX).
int ChunkedGroupThreadsLog2(const detail::TensorCall& a, const recipe::Recipe& model, const Geometry& geo) {
  if (geo.packing == IntPacking::kAwq) return -1;
  if (geo.group_cols % kGroupElementsPerThread != 0 || geo.cols % geo.group_cols != 0) return -1;
  const std::size_t threads = geo.group_cols / kGroupElementsPerThread;
  if (threads > kChunkedMaxGroupThreads || (threads & (threads - 1)) != 0) return -1;
  const std::size_t chunk_bytes = kChunk * (a.input_type == InputType::kF32 ? 4 : 2);
  const std::size_t store_bytes = geo.packing == IntPacking::kBytes ? kChunk : kChunk / 2;
  if (reinterpret_cast<std::uintptr_t>(a.input) % chunk_bytes != 0 ||
      reinterpret_cast<std::uintptr_t>(a.q.codes) % store_bytes != 0) {
    return -1;
  }
  if (model.family() == recipe::Family::kMx || model.element_quirk != recipe::ElementQuirk::kNone) return -1;
  int log2 = 0;
  while ((std::size_t{1} << log2) < threads) ++log2;
  return log2;
}

Status QuantizeGroups(const detail::TensorCall& a) {
  Geometry geo{};
  if (a.recipe != nullptr && (a.rows == 0 || a.cols == 0)) return Status::Ok();  // empty (docs/bad-input.md)
  Status s = CheckShape("int quantize", a, &geo);
  if (!s.ok) return s;
  s = detail::CheckDeviceBuffers("int quantize", {a.input, a.q.codes, a.q.scales});
  if (!s.ok) return s;
  if (a.q.zero_points && !detail::IsDevicePointer(a.q.zero_points)) {
    return Status::Error("int quantize: buffers must be device memory");
  }
  const DeviceRecipe dr{*a.recipe};
  const bool f32 = a.input_type == InputType::kF32;
  const recipe::Recipe& model = *a.recipe;
  if (const int log2_threads = ChunkedGroupThreadsLog2(a, model, geo); log2_threads >= 0) {
    const std::size_t group_threads = std::size_t{1} << log2_threads;
    const std::size_t threads = geo.rows * geo.grid_cols * group_threads;
    const unsigned block = static_cast<unsigned>(group_threads > kChunkedMinBlock ? group_threads : kChunkedMinBlock);
    const unsigned blocks = GridOf(threads, block);
    const bool divide = model.element_step == recipe::ElementStep::kDivide;
    auto launch = [&](auto index, auto divides, const auto* input) {
      using Index = decltype(index);
      using In = std::remove_cv_t<std::remove_pointer_t<decltype(input)>>;
      QuantizeIntChunksKernel<In, Index, decltype(divides)::value><<<blocks, block, 0, a.stream>>>(
          input, geo, dr, log2_threads, a.q.codes, a.q.scales, a.q.zero_points);
    };
    auto with_input = [&](auto index, auto divides) {
      if (f32) launch(index, divides, static_cast<const std::uint32_t*>(a.input));
      else launch(index, divides, static_cast<const std::uint16_t*>(a.input));
    };
    auto with_step = [&](auto index) {
      if (divide) with_input(index, std::true_type{});
      else with_input(index, std::false_type{});
    };
    // 32-bit indices while every element index fits.
    if (geo.rows * geo.cols < (std::size_t{1} << 31)) with_step(std::uint32_t{});
    else with_step(std::size_t{});
    return detail::LastLaunchStatus("int quantize");
  }
  const unsigned grid = GridOf(geo.rows * geo.grid_cols, kWarpsPerBlock);
  constexpr unsigned kThreads = 32 * kWarpsPerBlock;
  auto launch = [&](auto per) {
    constexpr int kPer = decltype(per)::value;
    if (f32) {
      QuantizeIntKernel<std::uint32_t, kPer><<<grid, kThreads, 0, a.stream>>>(
          static_cast<const std::uint32_t*>(a.input), geo, dr, a.q.codes, a.q.scales, a.q.zero_points);
    } else {
      QuantizeIntKernel<std::uint16_t, kPer><<<grid, kThreads, 0, a.stream>>>(
          static_cast<const std::uint16_t*>(a.input), geo, dr, a.q.codes, a.q.scales, a.q.zero_points);
    }
  };
  if (geo.packing == IntPacking::kAwq) launch(std::integral_constant<int, 8>{});
  else launch(std::integral_constant<int, 2>{});
  return detail::LastLaunchStatus("int quantize");
}

Status DequantizeGroups(const detail::TensorCall& a) {
  Geometry geo{};
  if (a.recipe != nullptr && (a.rows == 0 || a.cols == 0)) return Status::Ok();  // empty (docs/bad-input.md)
  Status s = CheckShape("int dequantize", a, &geo);
  if (!s.ok) return s;
  s = detail::CheckDeviceBuffers("int dequantize", {a.q.codes, a.q.scales, a.output});
  if (!s.ok) return s;
  if (a.q.zero_points && !detail::IsDevicePointer(a.q.zero_points)) {
    return Status::Error("int dequantize: buffers must be device memory");
  }
  const std::size_t n = geo.rows * geo.cols;
  // FP32 out, bytes or nibbles: quads, where a row and a group are whole
  // quads and the buffers aligned for their loads and stores.
  const bool quads = a.output_type == OutputType::kF32 && geo.packing != IntPacking::kAwq && geo.cols % 4 == 0 &&
                     geo.group_cols % 4 == 0 && geo.group_cols / 4 <= 0xFFFFFFFFu &&
                     reinterpret_cast<std::uintptr_t>(a.q.codes) % (geo.packing == IntPacking::kBytes ? 4 : 2) == 0 &&
                     reinterpret_cast<std::uintptr_t>(a.output) % 16 == 0;
  const unsigned quad_blocks =
      quads ? detail::UnitBlocks(n / 4, kDequantQuadThreads * kDequantQuadsPerThread) : 0;
  if (quad_blocks > 0) {
    const detail::FastDivider quads_per_group = detail::FastDivider::For(static_cast<std::uint32_t>(geo.group_cols / 4));
    if (n < (std::size_t{1} << 31)) {  // 32-bit indices while every element index fits
      DequantizeIntQuadsKernel<std::uint32_t><<<quad_blocks, kDequantQuadThreads, 0, a.stream>>>(
          a.q.codes, geo, a.recipe->element, a.q.scales, a.q.zero_points, quads_per_group,
          static_cast<float*>(a.output));
    } else {
      DequantizeIntQuadsKernel<std::size_t><<<quad_blocks, kDequantQuadThreads, 0, a.stream>>>(
          a.q.codes, geo, a.recipe->element, a.q.scales, a.q.zero_points, quads_per_group,
          static_cast<float*>(a.output));
    }
    return detail::LastLaunchStatus("int dequantize");
  }
  const std::size_t unit_code_bytes = geo.packing == IntPacking::kBytes ? 8 : 4;
  const bool whole_units = geo.cols % 8 == 0 && geo.group_cols % 8 == 0 &&
                           reinterpret_cast<std::uintptr_t>(a.q.codes) % unit_code_bytes == 0 &&
                           reinterpret_cast<std::uintptr_t>(a.output) % 16 == 0;
  // 0 blocks: the unit grid would reach gridDim.x's limit (unit_store.cuh UnitBlocks); DequantizeIntKernel
  // below is grid-stride.
  const unsigned blocks = whole_units ? detail::UnitBlocks(n / 8, kDequantUnitThreads * kDequantUnitsPerThread) : 0;
  if (blocks > 0) {
    auto launch_units = [&](auto index, auto* out) {
      using Index = decltype(index);
      using Out = std::remove_pointer_t<decltype(out)>;
      DequantizeIntUnitsKernel<Index, Out><<<blocks, kDequantUnitThreads, 0, a.stream>>>(
          a.q.codes, geo, a.recipe->element, a.q.scales, a.q.zero_points, out);
    };
    // 32-bit indices while every element index fits (the unit index times 8).
    const bool small = n < (std::size_t{1} << 31);
    if (a.output_type == OutputType::kF32) {
      if (small) launch_units(std::uint32_t{}, static_cast<float*>(a.output));
      else launch_units(std::size_t{}, static_cast<float*>(a.output));
    } else {
      if (small) launch_units(std::uint32_t{}, static_cast<std::uint16_t*>(a.output));
      else launch_units(std::size_t{}, static_cast<std::uint16_t*>(a.output));
    }
    return detail::LastLaunchStatus("int dequantize");
  }
  const int per = geo.packing == IntPacking::kBytes ? 1 : geo.packing == IntPacking::kAwq ? 8 : 2;
  const unsigned grid = GridOf(geo.rows * geo.cols / per, 256);
  if (a.output_type == OutputType::kF32) {
    DequantizeIntKernel<float><<<grid, 256, 0, a.stream>>>(a.q.codes, geo, a.recipe->element, a.q.scales,
                                                           a.q.zero_points, static_cast<float*>(a.output));
  } else {
    DequantizeIntKernel<std::uint16_t><<<grid, 256, 0, a.stream>>>(a.q.codes, geo, a.recipe->element, a.q.scales,
                                                                   a.q.zero_points,
                                                                   static_cast<std::uint16_t*>(a.output));
  }
  return detail::LastLaunchStatus("int dequantize");
}

}  // namespace

namespace detail {

std::size_t IntPackedBytes(IntPacking packing, std::size_t rows, std::size_t cols) {
  const std::size_t n = rows * cols;
  switch (packing) {
    case IntPacking::kBytes: return n;
    case IntPacking::kAwq: return n / 8 * 4;
    default: return n / 2 + n % 2;  // no n + 1 wrap
  }
}

// The integer-element recipes RunsOnIntKernels takes (recipe_plan.h), per
// row or per group.
Status LaunchInt(bool quantize, const TensorCall& t) { return quantize ? QuantizeGroups(t) : DequantizeGroups(t); }

}  // namespace detail
}  // namespace lowbit::cuda
