// Named MX recipes, each reproducing one implementation (docs/formats-reference.md §5,
// §9 rows 8-10). A profile is data: scale rule, amax NaN rule, element
// scaling order and element conversion policy.
#pragma once

#include <string_view>

#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/policy.h"

namespace lowbit::block {

namespace detail {

// Round-to-nearest-even, clamp to +-max ("normal numbers that exceed the max
// normal ... should be clamped to the max normal, preserving the sign",
// [OCP-MX §6.3]); the sign of a NaN is kept.
LOWBIT_HD_CONSTEXPR EncodeOptions SaturatingElements(RoundingMode rounding, NanSign nan_sign) {
  EncodeOptions o;
  o.rounding = rounding;
  o.overflow = Overflow::kSaturate;
  o.inf_input = InfInput::kLikeOverflow;
  o.nan_sign = nan_sign;
  o.nan_payload = NanPayload::kAllOnes;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return o;
}

}  // namespace detail

// The OCP MX v1.0 spec: floor rule, x / X, roundTiesToEven, clamp. A NaN or
// Inf amax gives the NaN scale (the spec's special-value rules were not
// re-read, docs/formats-reference.md §11; this follows [MSX] and [AO]).
inline constexpr MxRecipe kOcpMx{
    "ocp", "[OCP-MX §6.3]",
    {MxScaleRule::kFloor, false, false}, AmaxNan::kPropagate, ElementScaling::kDivide,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};

// microxcaling's defaults: round="nearest" is half-away
// (sign(A)*floor(|A|+0.5), [MSX] _round_mantissa), zero block amax taken as
// FP32_MIN_NORMAL (docs/formats-reference.md §5.2, §9 row 9).
inline constexpr MxRecipe kMsxMx{
    "msx", "[MSX] mx_ops._quantize_mx round='nearest'",
    {MxScaleRule::kFloor, false, true}, AmaxNan::kPropagate, ElementScaling::kDivide,
    detail::SaturatingElements(RoundingMode::kNearestAway, NanSign::kKeep)};

// microxcaling with round="even".
inline constexpr MxRecipe kMsxMxEven{
    "msx-even", "[MSX] mx_ops._quantize_mx round='even'",
    {MxScaleRule::kFloor, false, true}, AmaxNan::kPropagate, ElementScaling::kDivide,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};

// TransformerEngine MXFP8: amax by fmaxf (NaN ignored), RCEIL through
// float_to_e8m0 (round up, satfinite), x * exp2f_rcp(e), cvt.rn.satfinite
// (NaN -> +NaN 0x7F; FP4 NaN -> +6). docs/formats-reference.md §5.3, §9 rows 8, 10.
inline constexpr MxRecipe kTeMx{
    "te", "[TE] quantize_mxfp8.cuh, ptx.cuh float_to_e8m0 / exp2f_rcp",
    {MxScaleRule::kRceil, true, false}, AmaxNan::kIgnore, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kPositive)};

// torchao to_mx with each ScaleCalculationMode: torch.amax (NaN propagates),
// a non-finite amax gives 0xFF, x * _e8m0_scale_to_reciprocal_fp32, clamp to
// +-max then a round-to-nearest-even cast. FP4/FP6 NaN elements: torchao's
// bit arithmetic produces an unspecified code (docs/formats-reference.md §4.5); here the
// block's NaN scale carries the NaN and the element takes +max.
inline constexpr MxRecipe kAoMxFloor{
    "ao-floor", "[AO] mx_tensor.to_mx FLOOR",
    {MxScaleRule::kFloor, false, false}, AmaxNan::kPropagate, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};
inline constexpr MxRecipe kAoMxCeil{
    "ao-ceil", "[AO] mx_tensor.to_mx CEIL",
    {MxScaleRule::kCeil, false, false}, AmaxNan::kPropagate, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};
inline constexpr MxRecipe kAoMxEven{
    "ao-even", "[AO] mx_tensor.to_mx EVEN",
    {MxScaleRule::kEven, false, false}, AmaxNan::kPropagate, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};
// RCEIL: descale = max_abs * (1.0 / max_pos), _f32_to_e8m0_rceil (no
// saturation: > 2^127 and Inf -> 0xFF).
inline constexpr MxRecipe kAoMxRceil{
    "ao-rceil", "[AO] mx_tensor._to_mx_rceil",
    {MxScaleRule::kRceil, false, false}, AmaxNan::kPropagate, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};

// The nearest-power-of-two scale rule (kNearest) with the OCP element
// handling. Not a profile of one implementation: it is what a recipe gets by
// casting amax / max_elem with torch's `.to(torch.float8_e8m0fnu)` (round to
// nearest, ties up; non-saturating, so Inf/overflow gives the NaN scale).
inline constexpr MxRecipe kNearestMx{
    "nearest", "lowbit: E8M0 round-to-nearest of amax * fp32(1/max_elem) (docs/formats-reference.md §4.7)",
    {MxScaleRule::kNearest, false, false}, AmaxNan::kPropagate, ElementScaling::kMultiplyReciprocal,
    detail::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};

inline constexpr const MxRecipe* kAllMxRecipes[] = {&kOcpMx,     &kMsxMx,    &kMsxMxEven,
                                                    &kTeMx,      &kAoMxFloor, &kAoMxCeil,
                                                    &kAoMxEven,  &kAoMxRceil, &kNearestMx};

constexpr const MxRecipe* FindMxRecipe(std::string_view name) {
  for (const MxRecipe* r : kAllMxRecipes) {
    if (name == r->name) return r;
  }
  return nullptr;
}

}  // namespace lowbit::block
