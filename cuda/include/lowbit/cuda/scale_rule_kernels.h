// Which GPU kernels take each scale rule: one row per rule of
// formats/spec/.../recipe/scale_rule_list.h, so that a new rule is a
// decision here, never a silent gap. The static_assert below fails to
// compile while a rule of the list has no row; cuda/tests/
// scale_rule_kernels_test.cc checks the registry's "cuda" rows against each
// row (docs/adding-a-recipe.md). Host code only (recipe_plan.h KernelOf,
// tests); it includes no CUDA header.
#pragma once

#include <cstdint>

#include "lowbit/formats/recipe/scale_rule_list.h"

namespace lowbit::cuda::detail {

enum class ScaleRuleKernels : std::uint8_t {
  // A tuned kernel of one family (mx.cu, nvfp4.cu, fp8_scaled.cu,
  // int_quantize.cu) for the profiles it implements; the registry's row
  // contract (registry/.../recipe_contract.h) lists them. At least one
  // catalog recipe of the rule has a GPU row.
  kTuned,
  // The model recipe kernels (model_recipe.h: the model's steps compiled for
  // the device): every catalog recipe of the rule, both ways, in every
  // listed layout that applies.
  kModel,
  // No GPU kernel: no catalog recipe of the rule has a GPU row (the scalar
  // and SIMD rows still check it on the host).
  kNone,
};

struct ScaleRuleKernelsRow {
  recipe::ScaleRule rule;
  ScaleRuleKernels kernels;
};

inline constexpr ScaleRuleKernelsRow kScaleRuleKernels[] = {
    // mx.cu: OCP's floor ("ocp") and TE's RCEIL ("te"); torchao's floor,
    // ceil, even and compiled RCEIL, microxcaling and "nearest" have no GPU
    // kernel (their scale or element steps differ from mx.cu's).
    {recipe::ScaleRule::kMxFloor, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kMxCeil, ScaleRuleKernels::kNone},
    {recipe::ScaleRule::kMxEven, ScaleRuleKernels::kNone},
    {recipe::ScaleRule::kMxRceil, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kMxNearest, ScaleRuleKernels::kNone},
    {recipe::ScaleRule::kMxRceilEager, ScaleRuleKernels::kModel},
    // nvfp4.cu: TE's recipe; torchao's and ModelOpt's earlier orders have
    // no GPU kernel.
    {recipe::ScaleRule::kNvfp4Te, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kNvfp4Torchao, ScaleRuleKernels::kNone},
    {recipe::ScaleRule::kNvfp4ModelOpt, ScaleRuleKernels::kNone},
    {recipe::ScaleRule::kNvfp4Torchao018, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kNvfp4ModelOpt047, ScaleRuleKernels::kModel},
    // fp8_scaled.cu (TE current scaling, quantize per tensor and per row)
    // and int_quantize.cu (the integer recipes per row and per group; GPTQ
    // with FP16 scales runs on the model recipe kernels, by its element
    // quirk, model_recipe.h).
    {recipe::ScaleRule::kTeFp8, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kAoSymmetric, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kAoAsymmetric, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kGptqSymmetric, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kGptqAsymmetric, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kAmaxOverQmax, ScaleRuleKernels::kTuned},
    {recipe::ScaleRule::kVllmFp8PerTensor, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kVllmFp8PerToken, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kAmaxOverQmaxFloored, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kVllmFp8KvCache, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kAwqAsymmetric, ScaleRuleKernels::kModel},
    {recipe::ScaleRule::kVllmFp8KvCalculated, ScaleRuleKernels::kModel},
};

// How many rows name `rule`.
constexpr int ScaleRuleKernelsRows(recipe::ScaleRule rule) {
  int n = 0;
  for (const ScaleRuleKernelsRow& row : kScaleRuleKernels) n += row.rule == rule ? 1 : 0;
  return n;
}

constexpr bool EveryScaleRuleHasOneKernelsRow() {
  for (recipe::ScaleRule rule : recipe::kAllScaleRules) {
    if (ScaleRuleKernelsRows(rule) != 1) return false;
  }
  return true;
}
static_assert(EveryScaleRuleHasOneKernelsRow(),
              "every rule of recipe/scale_rule_list.h needs exactly one row in kScaleRuleKernels "
              "(docs/adding-a-recipe.md)");

constexpr ScaleRuleKernels KernelsOf(recipe::ScaleRule rule) {
  for (const ScaleRuleKernelsRow& row : kScaleRuleKernels) {
    if (row.rule == rule) return row.kernels;
  }
  return ScaleRuleKernels::kNone;  // unreachable: the static_assert above
}

}  // namespace lowbit::cuda::detail
