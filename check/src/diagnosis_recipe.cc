// Recipes through the model's steps with one named change (diagnosis.h),
// and the candidates for a recipe kernel: the other catalog recipes of the
// same format, each scale rule, the other operation order, the element
// rounding modes, the amax NaN rule, and a few deviations users write (a
// float log2 for the MX exponent, the element emax left out, no tensor
// scale in NVFP4's block scale, the other nibble order).
#include <cmath>
#include <string>
#include <vector>

#include "diagnosis.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/trace_tensor.h"
#include "user_outputs_internal.h"

namespace lowbit::check::internal {

namespace {

using recipe::BlockScale;
using recipe::Family;
using recipe::GroupStats;
using recipe::Recipe;
using recipe::ScaleRule;

// DESIGNED WRONG, on purpose: the MX scale exponent from a float log2,
// floor(log2f(amax)) - emax_elem, as kernels write it. FP32 log2 of an amax
// just below a power of two rounds up to the power, one exponent too high
// (docs/design.md "Known traps (measured)"); the model reads the exponent
// bits instead (steps.h ChooseMxScale). Zero, Inf and NaN amax take the
// model's scale (a log2 of them has no floor to take).
BlockScale FloatLog2MxScale(const Recipe& r, const GroupStats& stats) {
  BlockScale s = recipe::ChooseScale(r, stats);
  const float amax = stats.amax;
  if (!(amax > 0.0f) || !std::isfinite(amax)) return s;
  int e = static_cast<int>(std::floor(std::log2(amax))) - r.element_emax;
  if (e < -127) e = -127;
  if (e > 127) {
    s.code = recipe::kE8m0NanCode;
  } else {
    s.code = static_cast<std::uint8_t>(e + 127);
  }
  s.exponent = e;
  s.decode = DecodeToF32(r.scale_format, s.code);
  s.factor = r.element_step == recipe::ElementStep::kDivide ? s.decode : recipe::E8m0ReciprocalF32(s.code);
  return s;
}

}  // namespace

RecipeRun RunRecipe(const RecipeVariant& v, const recipe::Layout& layout, const recipe::GroupGrid& grid,
                    const std::vector<float>& x) {
  const Recipe& r = v.recipe;
  // A flipped element step encodes with the other ElementStep and the
  // factor below; the scale stays the one the recipe chooses and stores.
  Recipe element_recipe = r;
  if (v.flip_step) {
    element_recipe.element_step = r.element_step == recipe::ElementStep::kDivide ? recipe::ElementStep::kMultiply
                                                                                 : recipe::ElementStep::kDivide;
  }
  const auto choose = [&](const GroupStats& stats, const recipe::TensorScale& t, long) {
    BlockScale s = v.scale == RecipeVariant::Scale::kFloatLog2 && r.family() == Family::kMx
                       ? FloatLog2MxScale(r, stats)
                       : recipe::ChooseScale(r, stats,
                                             v.scale == RecipeVariant::Scale::kNoTensorScale ? recipe::TensorScale{} : t);
    if (v.flip_step) {
      // Multiply by fp32(1 / factor) where the recipe divides; divide by the
      // stored dequantization scale (times the tensor scale) where it
      // multiplies by a reciprocal.
      s.factor = r.element_step == recipe::ElementStep::kDivide ? 1.0f / s.factor
                 : r.family() == Family::kNvfp4                 ? s.decode * t.decode
                                                                : s.decode;
    }
    return s;
  };
  // The model's trace under the variant; a deviation differs from the
  // model only in the scale it chooses and the element step.
  recipe::TraceTensor trace;
  RecipeRun run;
  if (recipe::TraceTensorWithScales(element_recipe, layout, x.data(), grid.rows, grid.cols, choose, &trace) !=
      recipe::TensorStatus::kOk) {
    return run;  // no outputs: DiagnoseRecipe leaves a variant of another size out
  }
  run.codes.assign(x.size(), 0);
  run.tensor = trace.tensor_scale;
  for (const recipe::TraceBlock& b : trace.blocks) {
    if (r.family() == Family::kScaled) {
      run.scales.push_back(b.scale.decode);
    } else {
      run.scale_codes.push_back(b.scale.code);
    }
    if (r.zero_point == recipe::ZeroPoint::kInteger) run.zero_points.push_back(b.scale.zero_point);
    run.amax.push_back(b.stats.amax);
    for (const recipe::TraceElement& e : b.elements) run.codes[static_cast<std::size_t>(e.index)] = e.code;
  }
  return run;
}

std::vector<std::uint64_t> RecipeSlotValues(const RecipeRun& run, const RecipeParts& parts) {
  std::vector<std::uint64_t> v;
  if (parts.codes) v.insert(v.end(), run.codes.begin(), run.codes.end());
  if (parts.scale_codes) v.insert(v.end(), run.scale_codes.begin(), run.scale_codes.end());
  if (parts.scales) {
    for (float s : run.scales) v.push_back(F32Bits(s));
  }
  if (parts.zero_points) {
    for (std::int32_t z : run.zero_points) v.push_back(static_cast<std::uint32_t>(z));
  }
  if (parts.tensor_scale) v.push_back(F32Bits(run.tensor.decode));
  return v;
}

Diagnosis DiagnoseRecipe(const Target& t, const recipe::GroupGrid& grid, const std::vector<float>& x,
                         const RecipeRun& model, const RecipeParts& parts, const Slots& slots,
                         const CodeBuffer& codes_raw, std::uint64_t total) {
  const Recipe& r = t.recipe;
  const std::vector<std::uint64_t> target_slots = RecipeSlotValues(model, parts);
  DiagnosisBuilder b(slots);
  const auto from_vector = [](const std::vector<std::uint64_t>& values) {
    return [&values](std::size_t i, std::uint64_t* out) {
      *out = values[i];
      return true;
    };
  };
  b.SetTarget(from_vector(target_slots));
  const auto add = [&](const std::string& name, const std::string& kind, const std::string& detail,
                       const RecipeVariant& v) {
    const std::vector<std::uint64_t> values = RecipeSlotValues(RunRecipe(v, t.layout, grid, x), parts);
    if (values.size() != target_slots.size()) return;  // another recipe storing other buffers
    b.Add({name, kind, detail}, from_vector(values));
  };
  const auto variant = [&r](auto&& change) {
    RecipeVariant v;
    v.recipe = r;
    change(v);
    return v;
  };

  // 1. The other catalog recipes of the same format (their own scale rule,
  // operation order, tensor scale and element policy together).
  for (const Recipe& other : recipe::kAllRecipes) {
    if (std::string(other.name) != r.name || std::string(other.profile) == r.profile) continue;
    if (!recipe::LayoutApplies(other, t.layout)) continue;
    RecipeVariant v;
    v.recipe = other;
    add("recipe " + recipe::RecipeName(other), "recipe", other.source, v);
  }

  // 2. The scale rule.
  if (r.family() == Family::kMx) {
    for (ScaleRule rule : {ScaleRule::kMxFloor, ScaleRule::kMxCeil, ScaleRule::kMxEven, ScaleRule::kMxRceil,
                           ScaleRule::kMxNearest}) {
      if (rule == r.scale_rule) continue;
      add(std::string("scale rule ") + recipe::ScaleRuleName(rule), "scale rule",
          "the E8M0 exponent by the " + std::string(recipe::ScaleRuleName(rule)) + " rule (" +
              recipe::ScaleRuleFormula(rule) + ")",
          variant([rule](RecipeVariant& v) { v.recipe.scale_rule = rule; }));
    }
    add("scale exponent from a float log2", "scale rule",
        "floor(log2f(amax)) - emax_elem instead of amax's exponent bits: one too high just below a power of two",
        variant([](RecipeVariant& v) { v.scale = RecipeVariant::Scale::kFloatLog2; }));
    if (r.element_emax != 0) {
      add("element emax not subtracted", "scale rule",
          "the scale exponent is amax's exponent itself, without subtracting the element's emax (" +
              std::to_string(r.element_emax) + ")",
          variant([](RecipeVariant& v) { v.recipe.element_emax = 0; }));
    }
    add(r.scale_saturate ? "scale conversion not saturating" : "scale conversion saturating", "scale rule",
        "RCEIL / nearest E8M0 conversion with the other overflow rule",
        variant([](RecipeVariant& v) { v.recipe.scale_saturate = !v.recipe.scale_saturate; }));
    add(r.zero_amax_as_min_normal ? "all-zero block keeps amax 0" : "all-zero block takes FP32_MIN_NORMAL as amax",
        "scale rule", "microxcaling's zero_amax_as_min_normal flipped",
        variant([](RecipeVariant& v) { v.recipe.zero_amax_as_min_normal = !v.recipe.zero_amax_as_min_normal; }));
  }
  if (r.family() == Family::kNvfp4) {
    add("tensor scale left out of the block scales", "operation order",
        "block scales chosen as if the tensor scale were 1, the tensor scale still computed and stored",
        variant([](RecipeVariant& v) { v.scale = RecipeVariant::Scale::kNoTensorScale; }));
  }
  if (r.family() == Family::kScaled) {
    if (r.eps != 0.0f) {
      add("no eps floor on the scale", "scale rule", "the scale is not clamped to eps",
          variant([](RecipeVariant& v) { v.recipe.eps = 0.0f; }));
    }
    if (r.scale_rule == ScaleRule::kTeFp8) {
      add(r.pow2_scale ? "scale not rounded to a power of two" : "scale rounded down to a power of two", "scale rule",
          "TE force_pow_2_scales flipped", variant([](RecipeVariant& v) { v.recipe.pow2_scale = !v.recipe.pow2_scale; }));
    }
    if (r.scale_rule == ScaleRule::kAoSymmetric || r.scale_rule == ScaleRule::kAoAsymmetric) {
      add(r.scalar_divisor_as_reciprocal ? "scale as one division" : "scale divided as x * fp32(1/d)",
          "operation order", "torch CUDA's scalar division (scalar_divisor_as_reciprocal) flipped",
          variant([](RecipeVariant& v) { v.recipe.scalar_divisor_as_reciprocal = !v.recipe.scalar_divisor_as_reciprocal; }));
    }
  }

  // 3. The element step in the other order.
  add(r.element_step == recipe::ElementStep::kDivide ? "multiply by the reciprocal of the scale"
                                                     : "divide by the stored scale",
      "operation order",
      r.element_step == recipe::ElementStep::kDivide
          ? "x * fp32(1 / scale) where the recipe divides x / scale"
          : "x / stored scale where the recipe multiplies by a reciprocal",
      variant([](RecipeVariant& v) { v.flip_step = true; }));

  // 4. The element rounding mode and overflow.
  for (RoundingMode m : {RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
                         RoundingMode::kNearestUp, RoundingMode::kNearestDown, RoundingMode::kNearestTowardZero}) {
    if (m == r.element_encode.rounding) continue;
    add("element rounding " + RoundingText(m), "rounding", "the element conversion rounds " + RoundingText(m),
        variant([m](RecipeVariant& v) { v.recipe.element_encode.rounding = m; }));
  }
  if (r.element.IsFloat() && r.element.HasNan()) {
    const bool sat = r.element_encode.overflow == Overflow::kSaturate;
    add(sat ? "element conversion not saturating" : "element conversion saturating", "saturation",
        "the element conversion with the other overflow rule", variant([sat](RecipeVariant& v) {
          v.recipe.element_encode.overflow = sat ? Overflow::kFormatDefault : Overflow::kSaturate;
        }));
  }

  // 5. The amax NaN rule.
  add(r.amax_nan == AmaxNan::kPropagate ? "amax ignores NaN (fmaxf)" : "amax propagates NaN (torch.amax)", "amax",
      "the block statistic with the other NaN rule", variant([](RecipeVariant& v) {
        v.recipe.amax_nan = v.recipe.amax_nan == AmaxNan::kPropagate ? AmaxNan::kIgnore : AmaxNan::kPropagate;
      }));

  // 6. Packed codes in the other nibble order: the model's outputs against
  // the kernel's bytes read the other way.
  std::vector<std::uint64_t> swapped;
  if (parts.codes && codes_raw.packing != recipe::Packing::kOnePerByte) {
    const recipe::Packing other = codes_raw.packing == recipe::Packing::kNibblesLowFirst
                                      ? recipe::Packing::kNibblesHighFirst
                                      : recipe::Packing::kNibblesLowFirst;
    swapped = slots.actual;
    const auto* bytes = static_cast<const std::uint8_t*>(codes_raw.data);
    for (std::size_t k = 0; k < x.size() && k < swapped.size(); ++k) {
      swapped[k] = recipe::LoadCode(other, bytes, static_cast<long>(k));
    }
    b.Add({other == recipe::Packing::kNibblesHighFirst ? "packing nibbles high first" : "packing nibbles low first",
           "packing", "the kernel's code bytes read with element 0 in the other nibble"},
          from_vector(target_slots), &swapped);
  }
  return b.Finish(t.name, "outputs", total);
}

}  // namespace lowbit::check::internal
