// The FP8 scaled recipes of fp8_scaled.h ("e4m3:te", "e5m2:te": one FP32
// scale per tensor or per row). Each kernel is a template over its recipe
// (recipes.cuh) and calls the model's steps on it (recipe/steps.h): the
// amax step (fmaxf, block_common.cuh), recipe::ChooseScale for scale and
// scale_inv, recipe::ScaledElement for x * scale; the element conversion is
// the cuda-hw instruction cvt.rn.satfinite, whose rule is static_asserted to
// be the recipe's.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "block_common.cuh"
#include "checks.h"
#include "launch.cuh"
#include "layout.cuh"
#include "layout_variants.h"
#include "lowbit/cuda/fp8_scaled.h"
#include "lowbit/formats/recipe/steps.h"
#include "map_kernel.cuh"
#include "recipes.cuh"

namespace lowbit::cuda {
namespace detail {
namespace {

// The recipe functor of a scaled FP8 recipe R: the model's scale step and
// element step, the instruction as the element conversion.
template <typename R>
struct ScaledFp8Steps {
  static constexpr FormatId kFp8 = FormatIdOf(R::Get().element);
  static_assert(R::Get().family() == recipe::Family::kScaled);
  static_assert(HardwareEncodesElements<kFp8>(R::Get()),
                "the recipe's element rule is not cvt.rn.satfinite's (hardware_rule.h)");
  static constexpr AmaxNan kAmaxNan = R::Get().amax_nan;

  // scale (what x is multiplied by) and scale_inv (what is stored).
  __device__ __forceinline__ static recipe::BlockScale Scale(float amax) {
    constexpr recipe::Recipe kR = R::Get();
    recipe::GroupStats stats = recipe::EmptyStats();
    stats.amax = amax;
    return recipe::ChooseScale(kR, stats);
  }
  __device__ __forceinline__ static float Scaled(float scale, float x) {
    constexpr recipe::Recipe kR = R::Get();
    recipe::BlockScale s;
    s.factor = scale;
    return recipe::ScaledElement(kR, s, x);
  }
  __device__ __forceinline__ static std::uint16_t Pair(float scale, float lo, float hi) {
    return Fp8Pair<kFp8>(Scaled(scale, lo), Scaled(scale, hi));
  }
};

// ---------------- per tensor ----------------

template <typename Steps>
__global__ void ScaleFromAmaxKernel(const float* amax, float* scale, float* scale_inv) {
  const recipe::BlockScale s = Steps::Scale(*amax);
  *scale = s.factor;
  if (scale_inv) *scale_inv = s.decode;
}

// x * scale, then cvt.rn.satfinite: the element functor for LaunchMap.
template <typename Steps, typename InT>
struct ScaledFp8Map {
  using In = InT;
  using Out = std::uint8_t;
  const float* scale;
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint16_t d = Steps::Pair(__ldg(scale), ToF32(a), ToF32(b));
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 8);
  }
  __device__ __forceinline__ Out One(In a, std::size_t i) const {
    Out oa, ob;
    Two(a, a, i, oa, ob);
    return oa;
  }
};

template <typename Layout, typename Steps>
Status PerTensor(const Fp8PerTensorArgs& a, bool dynamic) {
  Status s = CheckDeviceBuffers("fp8 per-tensor", {a.input, a.codes, a.scale});
  if (!s.ok) return s;
  if (dynamic) {
    if (a.amax == nullptr) return Status::Error("fp8 per-tensor dynamic: amax buffer required");
    s = CheckDeviceBuffers("fp8 per-tensor dynamic", {a.amax});
    if (!s.ok) return s;
    s = CheckOptionalDeviceBuffer("fp8 per-tensor dynamic", a.scale_inv);
    if (!s.ok) return s;
    static_assert(Steps::kAmaxNan == AmaxNan::kIgnore, "LaunchTensorAmax skips NaN");
    s = LaunchTensorAmax(a.input_type, a.input, a.count, a.amax, a.stream);
    if (!s.ok) return s;
    ScaleFromAmaxKernel<Steps><<<1, 1, 0, a.stream>>>(a.amax, a.scale, a.scale_inv);
    s = LastLaunchStatus("fp8 scale");
    if (!s.ok) return s;
  }
  const cudaError_t e =
      a.input_type == InputType::kF32
          ? LaunchMap<Layout>(a.input, a.codes, a.count, ScaledFp8Map<Steps, std::uint32_t>{a.scale}, a.stream)
          : LaunchMap<Layout>(a.input, a.codes, a.count, ScaledFp8Map<Steps, std::uint16_t>{a.scale}, a.stream);
  return CudaStatus("fp8 per-tensor", e);
}

// ---------------- per token ----------------

template <typename Steps, typename In>
__device__ __forceinline__ void StoreFp8Chunk(const uint4& v, float s, std::uint8_t* out, std::size_t c) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
  std::uint8_t o[kE];
#pragma unroll
  for (int j = 0; j < kE; j += 2) {
    const std::uint16_t d = Steps::Pair(s, ToF32(e[j]), ToF32(e[j + 1]));
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

template <typename Steps, typename In>
__device__ __forceinline__ float ChunkAbsMax(const uint4& v, float m) {
  constexpr int kE = 16 / sizeof(In);
  In e[kE];
  __builtin_memcpy(e, &v, 16);
#pragma unroll
  for (int j = 0; j < kE; ++j) m = CombineAmax<Steps::kAmaxNan>(m, fabsf(ToF32(e[j])));
  return m;
}

// One block per row: amax over the row, the recipe's scale, then x * scale
// -> FP8. The first kCache 16-byte chunks of each thread stay in registers
// between the two passes (a row of up to 8192 BF16 is read from memory
// once); chunks beyond that are read again (from L2).
template <typename Steps, typename In, int kThreads>
__global__ void __launch_bounds__(kThreads)
    PerTokenKernel(const In* __restrict__ x, std::size_t cols, std::uint8_t* __restrict__ q,
                   float* __restrict__ scale_inv, bool vector) {
  constexpr int kE = 16 / sizeof(In);
  constexpr int kCache = 4;
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
      m = ChunkAbsMax<Steps, In>(cache[k], m);
    }
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    m = ChunkAbsMax<Steps, In>(__ldg(vrow + c), m);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) {
    m = CombineAmax<Steps::kAmaxNan>(m, fabsf(ToF32(row[i])));
  }
  __shared__ float row_scale;
  m = BlockAmax<Steps::kAmaxNan>(m);
  if (threadIdx.x == 0) {
    const recipe::BlockScale s = Steps::Scale(m);
    row_scale = s.factor;
    scale_inv[blockIdx.x] = s.decode;
  }
  __syncthreads();
  const float s = row_scale;
#pragma unroll
  for (int k = 0; k < kCache; ++k) {
    const std::size_t c = threadIdx.x + static_cast<std::size_t>(k) * blockDim.x;
    if (c < chunks) StoreFp8Chunk<Steps, In>(cache[k], s, out, c);
  }
  for (std::size_t c = threadIdx.x + kCache * blockDim.x; c < chunks; c += blockDim.x) {
    StoreFp8Chunk<Steps, In>(__ldcs(vrow + c), s, out, c);
  }
  for (std::size_t i = chunks * kE + threadIdx.x; i < cols; i += blockDim.x) {
    out[i] = static_cast<std::uint8_t>(Steps::Pair(s, ToF32(row[i]), 0.0f));
  }
}

template <typename Layout, typename Steps>
Status PerToken(const Fp8PerTokenArgs& a) {
  if (a.rows > 0x7FFFFFFFu) return Status::Error("fp8 per-token: at most 2^31-1 rows");
  Status s = CheckDeviceBuffers("fp8 per-token", {a.input, a.codes, a.scale_inv});
  if (!s.ok) return s;
  const std::size_t in_size = a.input_type == InputType::kF32 ? 4 : 2;
  const bool vector = reinterpret_cast<std::uintptr_t>(a.input) % 16 == 0 && (a.cols * in_size) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(a.codes) % 8 == 0 && a.cols % 8 == 0;
  const unsigned rows = static_cast<unsigned>(a.rows);
  // Layout::kRegisterRows: 128 threads when a row fits their registers (4
  // chunks of 16 bytes each: 8 KB, a BF16 row of 4096), so every load of the
  // row is issued before the reduction and twice as many rows share an SM;
  // 256 otherwise.
  const bool narrow = Layout::kRegisterRows && a.cols * in_size <= 128 * 4 * 16;
  auto launch = [&](auto in_type) {
    using T = decltype(in_type);
    const T* x = static_cast<const T*>(a.input);
    if (narrow) PerTokenKernel<Steps, T, 128><<<rows, 128, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, vector);
    else PerTokenKernel<Steps, T, 256><<<rows, 256, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, vector);
  };
  if (a.input_type == InputType::kF32) launch(std::uint32_t{});
  else launch(std::uint16_t{});
  return LastLaunchStatus("fp8 per-token");
}

// Runs f(Steps{}) for the TE recipe of `format`; an error for any format
// without a cvt.rn.satfinite.
template <typename F>
Status WithFp8Recipe(const char* what, FormatId format, F&& f) {
  switch (format) {
    case FormatId::kE4m3: return f(ScaledFp8Steps<Fp8TeRecipe<FormatId::kE4m3>>{});
    case FormatId::kE5m2: return f(ScaledFp8Steps<Fp8TeRecipe<FormatId::kE5m2>>{});
    default: return Status::Error(std::string(what) + ": format must be e4m3 or e5m2");
  }
}

Status PerTensorWith(const Fp8PerTensorArgs& a, bool dynamic, LayoutVariant variant) {
  return WithFp8Recipe("fp8 per-tensor", a.format, [&](auto steps) {
    if (a.count == 0) return Status::Ok();
    if (Status s = CheckSize("fp8 per-tensor", 1, a.count, 4); !s.ok) return s;
    return WithLayout(variant, [&](auto layout) { return PerTensor<decltype(layout), decltype(steps)>(a, dynamic); });
  });
}

}  // namespace
}  // namespace detail

Status QuantizeFp8PerTensorStatic(const Fp8PerTensorArgs& args, LayoutVariant variant) {
  return detail::PerTensorWith(args, false, variant);
}
Status QuantizeFp8PerTensorDynamic(const Fp8PerTensorArgs& args, LayoutVariant variant) {
  return detail::PerTensorWith(args, true, variant);
}
Status QuantizeFp8PerToken(const Fp8PerTokenArgs& args, LayoutVariant variant) {
  return detail::WithFp8Recipe("fp8 per-token", args.format, [&](auto steps) {
    if (args.rows == 0 || args.cols == 0) return Status::Ok();
    if (Status s = detail::CheckSize("fp8 per-token", args.rows, args.cols, 4); !s.ok) return s;
    return detail::WithLayout(variant, [&](auto layout) {
      return detail::PerToken<decltype(layout), decltype(steps)>(args);
    });
  });
}

Status QuantizeFp8PerTensorStatic(const Fp8PerTensorArgs& args) {
  return QuantizeFp8PerTensorStatic(args, LayoutVariant::kCurrent);
}
Status QuantizeFp8PerTensorDynamic(const Fp8PerTensorArgs& args) {
  return QuantizeFp8PerTensorDynamic(args, LayoutVariant::kCurrent);
}
Status QuantizeFp8PerToken(const Fp8PerTokenArgs& args) { return QuantizeFp8PerToken(args, LayoutVariant::kCurrent); }

}  // namespace lowbit::cuda
