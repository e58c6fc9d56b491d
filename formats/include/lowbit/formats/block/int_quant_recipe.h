// Scaled quantization recipes (docs/formats-reference.md §7, §8.2): INT8 / INT4 / UINT4
// and FP8 elements with one FP32 scale (and, for asymmetric schemes, one
// integer zero point) per tensor, row, group or 2-D block, in the older
// IntQuantRecipe shape that the SIMD and CUDA group kernels and their tests
// take. The formulas themselves, as explicit FP32 operations in each source's
// order, are recipe/steps.h's (reached through int_quant_params.h and
// int_quant.h); where the elements are grouped is a layout
// (int_quant_layout.h), orthogonal to the recipe.
//
// These are views of the catalog, kept for the kernels' call shape: every
// IntQuantRecipe here is computed from one (element, profile) pair of
// recipe::kScaledPairs (recipe/catalog.h), where the profile's name, source,
// rule, rounding, eps and flags are typed once, with their citations. A pair
// added to the catalog appears in kAllIntQuantRecipes without an edit here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/recipe/catalog.h"

namespace lowbit::block {

enum class QuantScheme : std::uint8_t {
  // [TE] compute_scale_from_amax: scale = max_fp8 / amax (RN), x * scale,
  // satfinite cvt; the stored scale_inv = 1 / scale is what dequantizes.
  kTeFp8,
  // [AO] MappingType.SYMMETRIC: scale = amax / ((qmax - qmin) / 2), floored
  // at eps; q = clamp(round(x * (1 / scale)) + zp, qmin, qmax), zp = 0.
  kAoSymmetric,
  // [AO] MappingType.ASYMMETRIC: scale = (max(max, 0) - min(min, 0)) /
  // (qmax - qmin), floored; zp = clamp(qmin - round(min_neg / scale)).
  kAoAsymmetric,
  // [GPTQ] Quantizer.find_params(sym=True) + quantize: scale =
  // (xmax - xmin) / maxq with xmin = -xmax only when the row has a negative
  // value; zero = (maxq + 1) / 2; q = clamp(round(x / scale) + zero, 0, maxq).
  kGptqSymmetric,
  // [GPTQ] sym=False: scale = (xmax - xmin) / maxq, zero = round(-xmin / scale).
  kGptqAsymmetric,
  // The common kernel of docs/formats-reference.md §8.2 ("LLM.int8/TensorRT-style"): scale =
  // amax / qmax (FP32 division), q = clamp(round(x / scale), -qmax, qmax).
  // An all-zero group gets scale 1 (docs/formats-reference.md §8.2: "not examined").
  kAmaxOverQmax,
};

struct IntQuantRecipe {
  const char* name;          // profile as the CLI spells it after "FORMAT:"
  const char* source;        // docs/formats-reference.md §0 key and the function reproduced
  QuantScheme scheme;
  const FormatSpec* element;  // kInt8, kInt4, kUint4, kE4m3 or kE5m2
  // Integer code range [qmin, qmax] (FP8: unused, the cvt saturates to max).
  int qmin;
  int qmax;
  // torch.round / rint are half-even; C roundf is half-away (docs/formats-reference.md §8.1).
  RoundingMode rounding;
  // The scale floor: [AO] clamp(scale, min=eps), [TE] amax = max(amax, eps).
  float eps;
  // [TE] force_pow_2_scales: keep only sign and exponent bits of the scale.
  bool pow2_scale;
  AmaxNan amax_nan;
  // torch on CUDA divides an FP32 tensor by a Python float as a multiply by
  // fp32(1 / d): ATen div_true_kernel_cuda, "if the second operand is a CPU
  // scalar, compute a * reciprocal(b)"; CPU divides. [AO]'s
  // `max_val_pos / (float(quant_max - quant_min) / 2)` therefore gives
  // other scale bits on CUDA for most amax values (measured on the GPU
  // machine with torch 2.11; quant_profiles_test pins amax 3). GPTQ's
  // divisor maxq is a tensor, so it divides on both.
  bool scalar_divisor_as_reciprocal = false;
};

// torch.finfo(torch.float32).eps = 2^-23, the catalog's (recipe/catalog.h).
using recipe::kF32Epsilon;
static_assert(kF32Epsilon == F32Pow2(-23));

// The catalog's scaled scale rule as the older QuantScheme.
constexpr QuantScheme QuantSchemeOf(recipe::ScaleRule rule) {
  switch (rule) {
    case recipe::ScaleRule::kAoSymmetric: return QuantScheme::kAoSymmetric;
    case recipe::ScaleRule::kAoAsymmetric: return QuantScheme::kAoAsymmetric;
    case recipe::ScaleRule::kGptqSymmetric: return QuantScheme::kGptqSymmetric;
    case recipe::ScaleRule::kGptqAsymmetric: return QuantScheme::kGptqAsymmetric;
    case recipe::ScaleRule::kAmaxOverQmax: return QuantScheme::kAmaxOverQmax;
    default: return QuantScheme::kTeFp8;
  }
}

// One catalog (element, profile) pair in the IntQuantRecipe shape: the
// catalog's own recipe (recipe::MakeScaledRecipe) read back, so the code
// range, amax NaN rule and rounding are those the catalog derives, and the
// element is the namespace-scope spec the pair names.
constexpr IntQuantRecipe IntQuantRecipeView(const recipe::ScaledPair& pair) {
  const recipe::Recipe r = recipe::MakeScaledRecipe(pair.element, pair.profile);
  IntQuantRecipe q{};
  q.name = r.profile;
  q.source = r.source;
  q.scheme = QuantSchemeOf(r.scale_rule);
  q.element = &pair.element;
  q.qmin = r.qmin;
  q.qmax = r.qmax;
  q.rounding = r.element_encode.rounding;
  q.eps = r.eps;
  q.pow2_scale = r.pow2_scale;
  q.amax_nan = r.amax_nan;
  q.scalar_divisor_as_reciprocal = r.scalar_divisor_as_reciprocal;
  return q;
}

namespace detail {

inline constexpr std::size_t kScaledPairCount = std::size(recipe::kScaledPairs);

constexpr std::array<IntQuantRecipe, kScaledPairCount> BuildIntQuantRecipeViews() {
  std::array<IntQuantRecipe, kScaledPairCount> views{};
  for (std::size_t i = 0; i < kScaledPairCount; ++i) views[i] = IntQuantRecipeView(recipe::kScaledPairs[i]);
  return views;
}

}  // namespace detail

// One view per catalog pair, in the catalog's order.
inline constexpr std::array<IntQuantRecipe, detail::kScaledPairCount> kIntQuantRecipeViews =
    detail::BuildIntQuantRecipeViews();

namespace detail {

constexpr std::array<const IntQuantRecipe*, kScaledPairCount> BuildIntQuantRecipePointers() {
  std::array<const IntQuantRecipe*, kScaledPairCount> all{};
  for (std::size_t i = 0; i < kScaledPairCount; ++i) all[i] = &kIntQuantRecipeViews[i];
  return all;
}

// Not constexpr: reached only for a pair the catalog does not list, so the
// named constant that asked for it fails to compile with this name in the
// message instead of naming another recipe.
inline void ScaledPairNotInCatalog() {}

// The view of the catalog pair (element, profile).
constexpr const IntQuantRecipe& IntQuantRecipeNamed(const FormatSpec& element, std::string_view profile) {
  for (const IntQuantRecipe& q : kIntQuantRecipeViews) {
    if (q.element == &element && profile == q.name) return q;
  }
  ScaledPairNotInCatalog();
  return kIntQuantRecipeViews[0];
}

}  // namespace detail

inline constexpr std::array<const IntQuantRecipe*, detail::kScaledPairCount> kAllIntQuantRecipes =
    detail::BuildIntQuantRecipePointers();

// The names the kernels, benchmarks and tests use; each the catalog pair of
// that element and profile (recipe/catalog.h says what each reproduces).
inline constexpr const IntQuantRecipe& kTeFp8E4m3 = detail::IntQuantRecipeNamed(kE4m3, "te");
inline constexpr const IntQuantRecipe& kTeFp8E4m3Pow2 = detail::IntQuantRecipeNamed(kE4m3, "te-pow2");
inline constexpr const IntQuantRecipe& kTeFp8E5m2 = detail::IntQuantRecipeNamed(kE5m2, "te");
inline constexpr const IntQuantRecipe& kTeFp8E5m2Pow2 = detail::IntQuantRecipeNamed(kE5m2, "te-pow2");
inline constexpr const IntQuantRecipe& kAoSymInt8 = detail::IntQuantRecipeNamed(kInt8, "ao-sym");
inline constexpr const IntQuantRecipe& kAoSymInt4 = detail::IntQuantRecipeNamed(kInt4, "ao-sym");
inline constexpr const IntQuantRecipe& kAoAsymInt8 = detail::IntQuantRecipeNamed(kInt8, "ao-asym");
inline constexpr const IntQuantRecipe& kAoAsymUint4 = detail::IntQuantRecipeNamed(kUint4, "ao-asym");
inline constexpr const IntQuantRecipe& kAoSymCudaInt8 = detail::IntQuantRecipeNamed(kInt8, "ao-sym-cuda");
inline constexpr const IntQuantRecipe& kAoSymCudaInt4 = detail::IntQuantRecipeNamed(kInt4, "ao-sym-cuda");
inline constexpr const IntQuantRecipe& kAoAsymCudaInt8 = detail::IntQuantRecipeNamed(kInt8, "ao-asym-cuda");
inline constexpr const IntQuantRecipe& kAoAsymCudaUint4 = detail::IntQuantRecipeNamed(kUint4, "ao-asym-cuda");
inline constexpr const IntQuantRecipe& kGptqSymUint4 = detail::IntQuantRecipeNamed(kUint4, "gptq-sym");
inline constexpr const IntQuantRecipe& kGptqAsymUint4 = detail::IntQuantRecipeNamed(kUint4, "gptq-asym");
inline constexpr const IntQuantRecipe& kCommonInt8 = detail::IntQuantRecipeNamed(kInt8, "common");
inline constexpr const IntQuantRecipe& kCommonAwayInt8 = detail::IntQuantRecipeNamed(kInt8, "common-away");
inline constexpr const IntQuantRecipe& kCommonInt4 = detail::IntQuantRecipeNamed(kInt4, "common");
inline constexpr const IntQuantRecipe& kCommonAwayInt4 = detail::IntQuantRecipeNamed(kInt4, "common-away");

}  // namespace lowbit::block
