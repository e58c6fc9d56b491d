// FP8 with one FP32 scale per tensor or per row (token), TransformerEngine's
// current scaling: the recipes "e4m3:te" / "e5m2:te" of
// formats/spec/include/lowbit/formats/recipe/catalog.h and any recipe with
// their semantics (recipe_plan.h RunsOnFp8ScaledKernels). Amax with fmaxf (a
// NaN element is skipped), scale = max_fp8 / amax guarded as TE's
// compute_scale_from_amax (docs/formats-reference.md §7), x * scale through
// cvt.rn.satfinite; the stored scale is scale_inv = 1 / scale, what a GEMM
// multiplies by. Equal bit for bit to the model's steps
// (cuda/tests/quantize_test.cc).
//
// Each kernel is a template over its recipe (recipes.cuh) and calls the
// model's steps on it (recipe/steps.h): the amax step (fmaxf,
// block_common.cuh), recipe::ChooseScale for scale and scale_inv,
// recipe::ScaledElement for x * scale; the element conversion is the cuda-hw
// instruction cvt.rn.satfinite, whose rule is static_asserted to be the
// recipe's. The kernels are the skeleton's (block_skeleton.cuh): per tensor
// its tensor geometry (the amax pass, TensorScaleKernel, then an element
// map), per token its row geometry (RowQuantizeKernel).
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
#include "lowbit/formats/recipe/steps.h"
#include "map_kernel.cuh"
#include "recipes.cuh"
#include "tensor_call.h"

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

// Dynamic scaling (no given scale): the amax pass into workspace[1], the
// scale into workspace[0] and scale_inv into q.scales (where given), then
// the element map; static: the map with the given scale.
template <typename Layout, typename Steps>
Status PerTensor(const TensorCall& t, std::size_t count) {
  const bool dynamic = t.given_scale == nullptr;
  const char* what = dynamic ? "fp8 per-tensor dynamic" : "fp8 per-tensor";
  if (dynamic && t.workspace == nullptr) return Status::Error("fp8 per-tensor dynamic: a workspace required");
  float* const scale = dynamic ? t.workspace : nullptr;
  const float* const read_scale = dynamic ? scale : t.given_scale;
  Status s = CheckDeviceBuffers(what, {t.input, t.q.codes, read_scale});
  if (!s.ok) return s;
  if (dynamic) {
    float* const amax = t.workspace + 1;
    s = CheckOptionalDeviceBuffer(what, t.q.scales);
    if (!s.ok) return s;
    static_assert(Steps::kAmaxNan == AmaxNan::kIgnore, "LaunchTensorAmax skips NaN");
    s = LaunchTensorAmax(t.input_type, t.input, count, amax, t.stream);
    if (!s.ok) return s;
    TensorScaleKernel<Steps, KeptScale::kEncode><<<1, 1, 0, t.stream>>>(amax, scale, t.q.scales);
    s = LastLaunchStatus("fp8 scale");
    if (!s.ok) return s;
  }
  const cudaError_t e =
      t.input_type == InputType::kF32
          ? LaunchMap<Layout>(t.input, t.q.codes, count, ScaledFp8Map<Steps, std::uint32_t>{read_scale}, t.stream)
          : LaunchMap<Layout>(t.input, t.q.codes, count, ScaledFp8Map<Steps, std::uint16_t>{read_scale}, t.stream);
  return CudaStatus("fp8 per-tensor", e);
}

// ---------------- per token ----------------

// One scale per row: scale_inv[r] = 1 / scale_r into q.scales.
template <typename Layout, typename Steps>
Status PerToken(const TensorCall& t) {
  if (t.rows > 0x7FFFFFFFu) return Status::Error("fp8 per-token: at most 2^31-1 rows");
  Status s = CheckDeviceBuffers("fp8 per-token", {t.input, t.q.codes, t.q.scales});
  if (!s.ok) return s;
  const std::size_t in_size = t.input_type == InputType::kF32 ? 4 : 2;
  const bool vector = reinterpret_cast<std::uintptr_t>(t.input) % 16 == 0 && (t.cols * in_size) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(t.q.codes) % 8 == 0 && t.cols % 8 == 0;
  const unsigned rows = static_cast<unsigned>(t.rows);
  // Layout::kRegisterRows: 128 threads when a row fits their registers (4
  // chunks of 16 bytes each: 8 KB, a BF16 row of 4096), so every load of the
  // row is issued before the reduction and twice as many rows share an SM;
  // 256 otherwise.
  const bool narrow = Layout::kRegisterRows && t.cols * in_size <= 128 * 4 * 16;
  auto launch = [&](auto in_type) {
    using T = decltype(in_type);
    const T* x = static_cast<const T*>(t.input);
    if (narrow) RowQuantizeKernel<Steps, T, 128><<<rows, 128, 0, t.stream>>>(x, t.cols, t.q.codes, t.q.scales, vector);
    else RowQuantizeKernel<Steps, T, 256><<<rows, 256, 0, t.stream>>>(x, t.cols, t.q.codes, t.q.scales, vector);
  };
  if (t.input_type == InputType::kF32) launch(std::uint32_t{});
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

}  // namespace

// TE's current scaling of E4M3 / E5M2 (recipe_plan.h
// RunsOnFp8ScaledKernels: a recipe with its semantics), per tensor or per
// row (token).
Status LaunchFp8Scaled(RecipeKernel kernel, const TensorCall& t) {
  if (kernel != RecipeKernel::kFp8PerTensor && kernel != RecipeKernel::kFp8PerRow) {
    return Status::Error("fp8: the FP8 kernels quantize per tensor or per row");
  }
  const bool per_row = kernel == RecipeKernel::kFp8PerRow;
  const char* what = per_row ? "fp8 per-token" : "fp8 per-tensor";
  if (t.recipe == nullptr) return Status::Error(std::string(what) + ": null recipe");
  if (!RunsOnFp8ScaledKernels(*t.recipe)) {
    return Status::Error(std::string(what) + ": no GPU kernel for the recipe '" + RecipeLabel(*t.recipe) +
                         "' (the FP8 kernels take the semantics of \"e4m3:te\" and \"e5m2:te\")");
  }
  return WithFp8Recipe(what, FormatIdOf(t.recipe->element), [&](auto steps) {
    if (t.rows == 0 || t.cols == 0) return Status::Ok();
    if (Status s = CheckSize(what, t.rows, t.cols, 4); !s.ok) return s;
    return WithLayout(t.variant, [&](auto layout) {
      if (per_row) return PerToken<decltype(layout), decltype(steps)>(t);
      return PerTensor<decltype(layout), decltype(steps)>(t, t.rows * t.cols);
    });
  });
}

}  // namespace detail
}  // namespace lowbit::cuda
