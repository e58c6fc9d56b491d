// NVFP4 recipes: E2M1 elements, 16-element blocks, a UE4M3 block scale and an
// FP32 per-tensor scale. TE, torchao and ModelOpt compute the same idea with
// different FP32 operations, floors and zero guards (docs/formats-reference.md §6,
// §9 row 11); recipe/steps.h writes each out in its own order.
//
// The Nvfp4Recipe enum and the functions over it are views of the catalog,
// kept for the kernels' call shape: ToRecipe returns the catalog's entry for
// the profile (recipe::kNvfp4Profiles in recipe/catalog.h, where each
// profile's name, source and rule are typed once), and every step below is
// recipe/steps.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::block {

// One enumerator per row of recipe::kNvfp4Profiles, named after its rule.
enum class Nvfp4Recipe : std::uint8_t {
  kTe,        // recipe::ScaleRule::kNvfp4Te
  kTorchao,   // recipe::ScaleRule::kNvfp4Torchao
  kModelOpt,  // recipe::ScaleRule::kNvfp4ModelOpt
  kTorchao018,   // recipe::ScaleRule::kNvfp4Torchao018 (torchao 0.18.0)
  kModelOpt047,  // recipe::ScaleRule::kNvfp4ModelOpt047 (nvidia-modelopt 0.47.0)
};

LOWBIT_HD_CONSTEXPR recipe::ScaleRule ScaleRuleOf(Nvfp4Recipe r) {
  switch (r) {
    case Nvfp4Recipe::kTe: return recipe::ScaleRule::kNvfp4Te;
    case Nvfp4Recipe::kTorchao: return recipe::ScaleRule::kNvfp4Torchao;
    case Nvfp4Recipe::kTorchao018: return recipe::ScaleRule::kNvfp4Torchao018;
    case Nvfp4Recipe::kModelOpt047: return recipe::ScaleRule::kNvfp4ModelOpt047;
    case Nvfp4Recipe::kModelOpt: break;
  }
  return recipe::ScaleRule::kNvfp4ModelOpt;
}

// The enumerator of an NVFP4 scale rule; false for a rule of another family.
constexpr bool Nvfp4RecipeOf(recipe::ScaleRule rule, Nvfp4Recipe* out) {
  for (Nvfp4Recipe r : {Nvfp4Recipe::kTe, Nvfp4Recipe::kTorchao, Nvfp4Recipe::kModelOpt, Nvfp4Recipe::kTorchao018,
                        Nvfp4Recipe::kModelOpt047}) {
    if (ScaleRuleOf(r) == rule) {
      *out = r;
      return true;
    }
  }
  return false;
}

namespace detail {

// Not constexpr: reached only for a rule without a catalog row, so asking
// for one fails to compile with this name in the message.
inline void Nvfp4ProfileNotInCatalog() {}

// The row of recipe::kNvfp4Profiles with this rule (compile time only).
constexpr std::size_t Nvfp4ProfileIndex(recipe::ScaleRule rule) {
  for (std::size_t i = 0; i < std::size(recipe::kNvfp4Profiles); ++i) {
    if (recipe::kNvfp4Profiles[i].rule == rule) return i;
  }
  Nvfp4ProfileNotInCatalog();
  return 0;
}

// The catalog's recipe for one rule, built at compile time: device code may
// call ToRecipe at run time and cannot read the namespace-scope table there.
template <recipe::ScaleRule kRule>
LOWBIT_HD_CONSTEXPR recipe::Recipe Nvfp4CatalogRecipe() {
  constexpr recipe::Recipe kRecipe = recipe::MakeNvfp4Recipe(recipe::kNvfp4Profiles[Nvfp4ProfileIndex(kRule)]);
  return kRecipe;
}

}  // namespace detail

// The legacy enum as the one recipe shape: the catalog's NVFP4 entry
// (recipe/catalog.h). Every arithmetic step below is recipe/steps.h's; these
// functions keep the older call shape for callers not yet moved to it.
LOWBIT_HD_CONSTEXPR recipe::Recipe ToRecipe(Nvfp4Recipe r) {
  switch (r) {
    case Nvfp4Recipe::kTe: return detail::Nvfp4CatalogRecipe<recipe::ScaleRule::kNvfp4Te>();
    case Nvfp4Recipe::kTorchao: return detail::Nvfp4CatalogRecipe<recipe::ScaleRule::kNvfp4Torchao>();
    case Nvfp4Recipe::kTorchao018: return detail::Nvfp4CatalogRecipe<recipe::ScaleRule::kNvfp4Torchao018>();
    case Nvfp4Recipe::kModelOpt047: return detail::Nvfp4CatalogRecipe<recipe::ScaleRule::kNvfp4ModelOpt047>();
    case Nvfp4Recipe::kModelOpt: break;
  }
  return detail::Nvfp4CatalogRecipe<recipe::ScaleRule::kNvfp4ModelOpt>();
}

inline constexpr float kF32Max = recipe::kF32Max;
// 448 * 6: UE4M3 max times E2M1 max (recipe::TensorRange).
inline constexpr float kNvfp4GlobalRange = recipe::TensorRange(ToRecipe(Nvfp4Recipe::kTe));
static_assert(kNvfp4GlobalRange == 2688.0f);

// TE's S_enc and the stored S_dec (TE) / per_tensor_scale (torchao) /
// weights_scaling_factor_2 (ModelOpt).
using Nvfp4TensorScale = recipe::TensorScale;

LOWBIT_HD_CONSTEXPR AmaxNan Nvfp4AmaxNan(Nvfp4Recipe r) { return ToRecipe(r).amax_nan; }

LOWBIT_HD_CONSTEXPR Nvfp4TensorScale Nvfp4TensorScaleFromAmax(Nvfp4Recipe r, float amax) {
  return recipe::ChooseTensorScale(ToRecipe(r), amax);
}

namespace detail {
LOWBIT_HD_CONSTEXPR float ClampF32(float x, float lo, float hi) { return recipe::TorchClamp(x, lo, hi); }
}  // namespace detail

// Quantizes x[0..n), n <= 16, with the tensor scale already chosen; returns
// the UE4M3 scale byte. A short last block behaves as zero-padded.
LOWBIT_HD_CONSTEXPR std::uint8_t QuantizeNvfp4Block(Nvfp4Recipe nv, const Nvfp4TensorScale& t,
                                                    const float* x, int n, std::uint8_t* codes) {
  const recipe::Recipe r = ToRecipe(nv);
  const recipe::GroupStats stats = recipe::StatsOf(r, x, n);
  const recipe::BlockScale s = recipe::ChooseScale(r, stats, t);
  for (int i = 0; i < n; ++i) {
    const float y = recipe::ScaledElement(r, s, x[i]);
    codes[i] = recipe::EncodeScaled(r, s, y);
  }
  return s.code;
}

LOWBIT_HD_CONSTEXPR float DequantizeNvfp4Element(Nvfp4Recipe nv, const Nvfp4TensorScale& t,
                                                 std::uint8_t scale_code, std::uint8_t code) {
  const recipe::Recipe r = ToRecipe(nv);
  return recipe::DecodeElement(r, recipe::StoredScale(r, scale_code, 0.0f, 0), t, code);
}

LOWBIT_HD_CONSTEXPR Nvfp4TensorScale QuantizeNvfp4(Nvfp4Recipe nv, const float* x, long count,
                                                   std::uint8_t* codes, std::uint8_t* scales) {
  const recipe::Recipe r = ToRecipe(nv);
  const Nvfp4TensorScale t = recipe::TensorScaleOf(r, x, count);
  for (long start = 0, b = 0; start < count; start += 16, ++b) {
    const int n = static_cast<int>(count - start < 16 ? count - start : 16);
    scales[b] = QuantizeNvfp4Block(nv, t, x + start, n, codes + start);
  }
  return t;
}

LOWBIT_HD_CONSTEXPR void DequantizeNvfp4(Nvfp4Recipe recipe, const Nvfp4TensorScale& t,
                                         const std::uint8_t* codes, const std::uint8_t* scales,
                                         long count, float* out) {
  for (long i = 0; i < count; ++i) out[i] = DequantizeNvfp4Element(recipe, t, scales[i / 16], codes[i]);
}

// The enumerator of the catalog profile called `name` ("te", "ao", "modelopt").
constexpr bool FindNvfp4Recipe(std::string_view name, Nvfp4Recipe* out) {
  for (const recipe::Nvfp4Profile& p : recipe::kNvfp4Profiles) {
    if (name == p.name) return Nvfp4RecipeOf(p.rule, out);
  }
  return false;
}

}  // namespace lowbit::block
