// The FP8 scaled recipes of fp8_scaled.h ("e4m3:te", "e5m2:te": one FP32
// scale per tensor or per row). Each kernel is a template over its recipe
// (recipes.cuh) and calls the model's steps on it (recipe/steps.h): the
// amax step (fmaxf, block_common.cuh), recipe::ChooseScale for scale and
// scale_inv, recipe::ScaledElement for x * scale; the element conversion is
// the cuda-hw instruction cvt.rn.satfinite, whose rule is static_asserted to
// be the recipe's. The kernels are the skeleton's (block_skeleton.cuh):
// per tensor its tensor geometry (the amax pass, TensorScaleKernel, then an
// element map), per token its row geometry (RowQuantizeKernel).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "block_common.cuh"
#include "block_skeleton.cuh"
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

  __device__ __forceinline__ static float Amax(float m, float a) { return CombineAmax<kAmaxNan>(m, a); }
  // scale (what x is multiplied by) and scale_inv (what is stored).
  __device__ __forceinline__ static recipe::BlockScale Scale(float amax) {
    constexpr recipe::Recipe kR = R::Get();
    recipe::GroupStats stats = recipe::EmptyStats();
    stats.amax = amax;
    return recipe::ChooseScale(kR, stats);
  }
  // Per tensor, the same pair as the tensor scale (block_skeleton.cuh
  // TensorScaleKernel): encode = scale, decode = scale_inv.
  __device__ __forceinline__ static recipe::TensorScale TensorScaleOf(float amax) {
    const recipe::BlockScale s = Scale(amax);
    return {s.factor, s.decode};
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
    TensorScaleKernel<Steps, KeptScale::kEncode><<<1, 1, 0, a.stream>>>(a.amax, a.scale, a.scale_inv);
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
    if (narrow) RowQuantizeKernel<Steps, T, 128><<<rows, 128, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, vector);
    else RowQuantizeKernel<Steps, T, 256><<<rows, 256, 0, a.stream>>>(x, a.cols, a.codes, a.scale_inv, vector);
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
