// Users' kernels against the model (user_outputs.h): read the buffers, run
// the model on the same inputs, compare output by output, decode the first
// mismatches, and on a mismatch run the diagnosis (diagnosis.h).
#include "lowbit/check/user_outputs.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "describe.h"
#include "diagnosis.h"
#include "user_outputs_internal.h"
#include "lowbit/formats/checked_size.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/user_word.h"

namespace lowbit::check {

namespace {

using internal::Slots;

bool IsInputType(FormatId id) {
  return id == FormatId::kFp64 || id == FormatId::kFp32 || id == FormatId::kFp16 || id == FormatId::kBf16;
}

std::uint64_t LoadUnsigned(const void* data, std::size_t index, int bytes) {
  const auto* p = static_cast<const unsigned char*>(data) + index * static_cast<std::size_t>(bytes);
  switch (bytes) {
    case 1: return *p;
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

std::uint64_t InputCode(const InputBuffer& in, std::size_t i) {
  return LoadUnsigned(in.data, i, Spec(in.type).total_bits / 8);
}

std::uint64_t OutputCode(const CodeBuffer& out, std::size_t i) {
  if (out.packing != recipe::Packing::kOnePerByte) {
    return recipe::LoadCode(out.packing, static_cast<const std::uint8_t*>(out.data), static_cast<long>(i));
  }
  return LoadUnsigned(out.data, i, out.code_bytes);
}

// The problem with a code buffer of `count` codes of `f`, or "".
std::string CodeBufferProblem(const CodeBuffer& b, const FormatSpec& f, const char* what) {
  if (b.count > 0 && b.data == nullptr) return std::string(what) + ": no data for " + std::to_string(b.count) + " codes";
  if (b.packing != recipe::Packing::kOnePerByte) {
    if (f.total_bits > 4) {
      return std::string(what) + ": two codes per byte hold codes of at most 4 bits; " + f.name + " has " +
             std::to_string(f.total_bits);
    }
    return "";
  }
  if (b.code_bytes != 1 && b.code_bytes != 2 && b.code_bytes != 4 && b.code_bytes != 8) {
    return std::string(what) + ": " + std::to_string(b.code_bytes) + " bytes per code (1, 2, 4 or 8)";
  }
  if (b.code_bytes * 8 < f.total_bits) {
    return std::string(what) + ": " + std::to_string(b.code_bytes) + " byte" + (b.code_bytes == 1 ? "" : "s") +
           " per code cannot hold " + f.name + "'s " + std::to_string(f.total_bits) + " bits";
  }
  std::size_t bytes = 0;
  if (!CheckedMul(b.count, static_cast<std::size_t>(b.code_bytes), &bytes)) {
    return std::string(what) + ": " + std::to_string(b.count) + " codes overflow the byte size";
  }
  return "";
}

std::string InputProblem(const InputBuffer& in) {
  if (!IsInputType(in.type)) {
    return std::string("input type ") + Spec(in.type).name + " is not one of fp64, fp32, fp16, bf16";
  }
  if (in.count > 0 && in.data == nullptr) return "inputs: no data for " + std::to_string(in.count) + " values";
  return "";
}

void Keep(Report* r, const CheckOptions& o, OutputMismatch m) {
  if (r->first_mismatches.size() < o.max_mismatches) r->first_mismatches.push_back(std::move(m));
}

std::string F32Text(float v) { return internal::ValueText(kFp32, F32Bits(v)); }

// ---- recipes: slot layout ---------------------------------------------------------

struct SlotRanges {
  std::size_t codes = 0, scale_codes = 0, scales = 0, zero_points = 0, tensor = 0;  // counts
};

SlotRanges RangesOf(const internal::RecipeParts& p, std::size_t n, std::size_t groups) {
  SlotRanges s;
  s.codes = p.codes ? n : 0;
  s.scale_codes = p.scale_codes ? groups : 0;
  s.scales = p.scales ? groups : 0;
  s.zero_points = p.zero_points ? groups : 0;
  s.tensor = p.tensor_scale ? 1 : 0;
  return s;
}

std::string ScaleText(const recipe::Recipe& r, std::uint64_t slot_value, bool is_code) {
  if (is_code) return internal::Hex(slot_value) + " (" + internal::ValueText(r.scale_format, slot_value) + ")";
  return internal::ValueText(kFp32, slot_value);
}

}  // namespace

// ---- element conversions ----------------------------------------------------------

Report CheckElementOutputs(const Target& t, const InputBuffer& inputs, const CodeBuffer& outputs,
                           const CheckOptions& options) {
  Report r;
  r.target = t.name;
  r.kind = "encode";
  if (t.kind != Target::Kind::kFormat) {
    r.error = QuoteUserWord(t.name) + " is a recipe: check it with its scales (CheckRecipeOutputs, lowbit check --scales)";
    return r;
  }
  const FormatSpec& dst = Spec(t.format);
  r.error = InputProblem(inputs);
  if (r.error.empty()) r.error = CodeBufferProblem(outputs, dst, "outputs");
  if (r.error.empty() && inputs.count != outputs.count) {
    r.error = std::to_string(inputs.count) + " inputs but " + std::to_string(outputs.count) + " output codes";
  }
  if (!r.error.empty()) return r;
  const FormatSpec& in = Spec(inputs.type);
  if (t.profile && !internal::ProfileConverts(*t.profile, in, dst, t.options.rounding)) {
    r.error = std::string("profile ") + ProfileName(*t.profile) + " has no conversion " + in.name + " -> " +
              dst.name + " with rounding " + internal::RoundingName(t.options.rounding) +
              " (nothing could be compared)";
    return r;
  }
  for (std::size_t i = 0; i < inputs.count; ++i) {
    const std::uint64_t input = InputCode(inputs, i);
    std::uint64_t expected = 0;
    if (!internal::TargetEncode(t, in, input, &expected)) {
      ++r.undefined;
      continue;
    }
    ++r.checked;
    const std::uint64_t actual = OutputCode(outputs, i);
    if (actual == expected) continue;
    ++r.mismatches;
    OutputMismatch m;
    m.mismatch = internal::ElementMismatch("", in, input, dst, expected, actual);
    m.mismatch.where = "element " + std::to_string(i);
    m.element = static_cast<long>(i);
    Keep(&r, options, std::move(m));
  }
  if (r.mismatches == 0 || !options.diagnose) return r;

  // The slots of the diagnosis: the elements the target defines (the first
  // kMaxDiagnosedOutputs of them).
  Slots slots;
  std::vector<std::uint64_t> slot_inputs;
  std::vector<std::uint64_t> slot_expected;
  std::vector<std::size_t> elements;
  for (std::size_t i = 0; i < inputs.count && slots.actual.size() < kMaxDiagnosedOutputs; ++i) {
    const std::uint64_t input = InputCode(inputs, i);
    std::uint64_t expected = 0;
    if (!internal::TargetEncode(t, in, input, &expected)) continue;
    slots.actual.push_back(OutputCode(outputs, i));
    slots.cls.push_back(slots.AddClass(internal::ElementClass(t, in, input, expected)));
    slot_inputs.push_back(input);
    slot_expected.push_back(expected);
    elements.push_back(i);
  }
  r.diagnosis = internal::DiagnoseElement(t, in, slot_inputs, slot_expected, elements, slots, outputs, r.checked);
  return r;
}

// ---- recipes ----------------------------------------------------------------------------

namespace {

// Checks what a recipe check shares (target, inputs, shape); fills the grid
// and the FP32 inputs. False with r->error set.
bool PrepareRecipe(const Target& t, const InputBuffer* inputs, long rows, long cols, Report* r,
                   recipe::GroupGrid* grid, std::vector<float>* x) {
  if (t.kind != Target::Kind::kRecipe) {
    r->error = "'" + t.name + "' is a format, not a recipe: check it with CheckElementOutputs";
    return false;
  }
  if (rows < 1 || cols < 1) {
    r->error = "shape " + std::to_string(rows) + "x" + std::to_string(cols) + " holds no elements";
    return false;
  }
  std::size_t n = 0;
  if (!CheckedElementCount(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), &n)) {
    r->error = "shape " + std::to_string(rows) + "x" + std::to_string(cols) + " has more elements than fit";
    return false;
  }
  const recipe::TensorStatus st = recipe::MakeGroupGrid(t.recipe, t.layout, rows, cols, grid);
  if (st != recipe::TensorStatus::kOk) {
    r->error = std::string(recipe::TensorStatusText(st)) + " (shape " + std::to_string(rows) + "x" +
               std::to_string(cols) + ", layout " + recipe::LayoutName(t.layout) + ")";
    return false;
  }
  if (inputs == nullptr) return true;
  r->error = InputProblem(*inputs);
  if (r->error.empty() && inputs->type == FormatId::kFp64) {
    r->error = "recipes read fp32 inputs (fp16 and bf16 widen exactly); round fp64 inputs to fp32 first";
  }
  if (r->error.empty() && inputs->count != n) {
    r->error = "shape " + std::to_string(rows) + "x" + std::to_string(cols) + " needs " + std::to_string(n) +
               " inputs, got " + std::to_string(inputs->count);
  }
  if (!r->error.empty()) return false;
  x->resize(n);
  const FormatSpec& in = Spec(inputs->type);
  for (std::size_t i = 0; i < n; ++i) (*x)[i] = DecodeToF32(in, InputCode(*inputs, i));
  return true;
}

// The problems with the buffers a recipe kernel gave; fills `parts`.
std::string RecipeOutputsProblem(const recipe::Recipe& rc, const RecipeOutputs& o, std::size_t n, std::size_t groups,
                                 internal::RecipeParts* parts) {
  // "got 2, the layout makes 1 group (one each)".
  const auto count_problem = [groups](const char* what, std::size_t got) {
    return std::string(what) + ": got " + std::to_string(got) + ", the layout makes " + std::to_string(groups) +
           (groups == 1 ? " group" : " groups") + " (one each)";
  };
  if (o.codes.data != nullptr || o.codes.count > 0) {
    parts->codes = true;
    if (o.codes.packing == recipe::Packing::kOnePerByte && o.codes.code_bytes != 1) {
      return "codes: recipe element codes are one per byte (code_bytes 1) or two per byte";
    }
    std::string p = CodeBufferProblem(o.codes, rc.element, "codes");
    if (!p.empty()) return p;
    if (o.codes.count != n) {
      return "codes: " + std::to_string(n) + " elements need " + std::to_string(n) + " codes, got " +
             std::to_string(o.codes.count);
    }
  }
  if (o.scale_codes != nullptr || o.scale_code_count > 0) {
    if (rc.family() == recipe::Family::kScaled) {
      return "scale codes: " + recipe::RecipeName(rc) + " stores FP32 scales (give them as scales)";
    }
    if (o.scale_codes == nullptr) return "scale codes: no data";
    if (o.scale_code_count != groups) {
      return count_problem("scale codes", o.scale_code_count);
    }
    parts->scale_codes = true;
  }
  if (o.scales != nullptr || o.scale_count > 0) {
    if (rc.family() != recipe::Family::kScaled) {
      return "scales: " + recipe::RecipeName(rc) + " stores " + rc.scale_format.name + " scale bytes (give them as "
             "scale codes)";
    }
    if (o.scales == nullptr) return "scales: no data";
    if (o.scale_count != groups) {
      return count_problem("scales", o.scale_count);
    }
    parts->scales = true;
  }
  if (o.zero_points != nullptr || o.zero_point_count > 0) {
    if (rc.zero_point != recipe::ZeroPoint::kInteger) return "zero points: " + recipe::RecipeName(rc) + " has none";
    if (o.zero_points == nullptr) return "zero points: no data";
    if (o.zero_point_count != groups) {
      return count_problem("zero points", o.zero_point_count);
    }
    parts->zero_points = true;
  }
  if (o.tensor_scale) {
    if (rc.tensor_scale == recipe::TensorScaleRule::kNone) {
      return "tensor scale: " + recipe::RecipeName(rc) + " has no tensor-level scale";
    }
    parts->tensor_scale = true;
  }
  if (!parts->codes && !parts->scale_codes && !parts->scales && !parts->zero_points && !parts->tensor_scale) {
    return "no outputs to compare (give codes, scales, zero points or the tensor scale)";
  }
  return "";
}

}  // namespace

Report CheckRecipeOutputs(const Target& t, const InputBuffer& inputs, long rows, long cols,
                          const RecipeOutputs& outputs, const CheckOptions& options) {
  Report r;
  r.target = t.name;
  r.kind = "quantize";
  recipe::GroupGrid grid;
  std::vector<float> x;
  if (!PrepareRecipe(t, &inputs, rows, cols, &r, &grid, &x)) return r;
  const recipe::Recipe& rc = t.recipe;
  const std::size_t n = x.size();
  const std::size_t groups = static_cast<std::size_t>(grid.Count());
  internal::RecipeParts parts;
  r.error = RecipeOutputsProblem(rc, outputs, n, groups, &parts);
  if (!r.error.empty()) return r;

  internal::RecipeVariant model_variant;
  model_variant.recipe = rc;
  const internal::RecipeRun model = internal::RunRecipe(model_variant, t.layout, grid, x);
  const std::vector<std::uint64_t> expected = internal::RecipeSlotValues(model, parts);

  // The kernel's slots, in RecipeSlotValues' order.
  Slots slots;
  const SlotRanges ranges = RangesOf(parts, n, groups);
  const std::uint8_t elements_class = slots.AddClass("element codes");
  const std::uint8_t special_class = slots.AddClass("NaN or infinite elements");
  for (std::size_t k = 0; k < ranges.codes; ++k) {
    slots.actual.push_back(OutputCode(outputs.codes, k));
    slots.cls.push_back(std::isfinite(x[k]) ? elements_class : special_class);
  }
  const std::uint8_t scale_class = slots.AddClass("block scales");
  for (std::size_t g = 0; g < ranges.scale_codes; ++g) {
    slots.actual.push_back(outputs.scale_codes[g]);
    slots.cls.push_back(scale_class);
  }
  for (std::size_t g = 0; g < ranges.scales; ++g) {
    slots.actual.push_back(F32Bits(outputs.scales[g]));
    slots.cls.push_back(scale_class);
  }
  const std::uint8_t zero_point_class = slots.AddClass("zero points");
  for (std::size_t g = 0; g < ranges.zero_points; ++g) {
    slots.actual.push_back(static_cast<std::uint32_t>(outputs.zero_points[g]));
    slots.cls.push_back(zero_point_class);
  }
  if (ranges.tensor) {
    slots.actual.push_back(F32Bits(*outputs.tensor_scale));
    slots.cls.push_back(slots.AddClass("tensor scale"));
  }

  // The block of an element or group, decoded.
  const bool scale_is_code = rc.family() != recipe::Family::kScaled;
  const auto block_info = [&](long g) {
    BlockInfo b;
    b.index = g;
    const std::size_t gi = static_cast<std::size_t>(g);
    b.amax = F32Text(model.amax[gi]);
    b.expected_scale = scale_is_code ? ScaleText(rc, model.scale_codes[gi], true)
                                     : ScaleText(rc, F32Bits(model.scales[gi]), false);
    if (parts.scale_codes) b.actual_scale = ScaleText(rc, outputs.scale_codes[gi], true);
    if (parts.scales) b.actual_scale = ScaleText(rc, F32Bits(outputs.scales[gi]), false);
    return b;
  };

  r.checked = expected.size();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == slots.actual[i]) continue;
    ++r.mismatches;
    OutputMismatch m;
    std::size_t k = i;
    if (k < ranges.codes) {
      const long row = static_cast<long>(k) / cols;
      const long col = static_cast<long>(k) % cols;
      m.mismatch = internal::ElementMismatch("", kFp32, F32Bits(x[k]), rc.element, expected[i], slots.actual[i]);
      m.mismatch.where = "element " + std::to_string(k) + " (row " + std::to_string(row) + ", col " +
                         std::to_string(col) + ")";
      m.element = static_cast<long>(k);
      m.block = block_info(recipe::GroupOf(grid, row, col));
      Keep(&r, options, std::move(m));
      continue;
    }
    ++r.scale_mismatches;
    k -= ranges.codes;
    const auto scale_mismatch = [&](const FormatSpec& f, const std::string& where, long group) {
      Mismatch mm;
      mm.where = where;
      mm.output_format = f.name;
      mm.expected = expected[i];
      mm.expected_value = internal::ValueText(f, expected[i]);
      mm.actual = slots.actual[i];
      mm.actual_value = internal::ValueText(f, slots.actual[i]);
      mm.code_distance = internal::CodeDistance(f, expected[i], slots.actual[i]);
      m.mismatch = mm;
      m.element = group;
      if (group >= 0) m.block = block_info(group);
    };
    if (k < ranges.scale_codes) {
      scale_mismatch(rc.scale_format, "scale of block " + std::to_string(k), static_cast<long>(k));
    } else if ((k -= ranges.scale_codes) < ranges.scales) {
      scale_mismatch(kFp32, "scale of group " + std::to_string(k), static_cast<long>(k));
    } else if ((k -= ranges.scales) < ranges.zero_points) {
      Mismatch mm;
      mm.where = "zero point of group " + std::to_string(k);
      mm.expected = expected[i];
      mm.expected_value = std::to_string(static_cast<std::int32_t>(expected[i]));
      mm.actual = slots.actual[i];
      mm.actual_value = std::to_string(static_cast<std::int32_t>(slots.actual[i]));
      m.mismatch = mm;
      m.element = static_cast<long>(k);
      m.block = block_info(static_cast<long>(k));
    } else {
      scale_mismatch(kFp32, "tensor scale", -1);
    }
    Keep(&r, options, std::move(m));
  }
  if (r.mismatches == 0 || !options.diagnose) return r;
  r.diagnosis = internal::DiagnoseRecipe(t, grid, x, model, parts, slots, outputs.codes, r.checked);
  return r;
}

Report CheckRecipeDequantized(const Target& t, const RecipeOutputs& q, long rows, long cols, const float* values,
                              const CheckOptions& options) {
  Report r;
  r.target = t.name;
  r.kind = "dequantize";
  recipe::GroupGrid grid;
  std::vector<float> unused;
  if (!PrepareRecipe(t, nullptr, rows, cols, &r, &grid, &unused)) return r;
  const recipe::Recipe& rc = t.recipe;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const std::size_t groups = static_cast<std::size_t>(grid.Count());
  internal::RecipeParts parts;
  r.error = RecipeOutputsProblem(rc, q, n, groups, &parts);
  if (r.error.empty() && values == nullptr) r.error = "values: no data";
  if (r.error.empty() && !parts.codes) r.error = "codes: dequantization needs the element codes";
  if (r.error.empty() && rc.family() == recipe::Family::kScaled && !parts.scales) {
    r.error = "scales: dequantization needs the FP32 scales";
  }
  if (r.error.empty() && rc.family() != recipe::Family::kScaled && !parts.scale_codes) {
    r.error = "scale codes: dequantization needs the scale bytes";
  }
  if (r.error.empty() && rc.zero_point == recipe::ZeroPoint::kInteger && !parts.zero_points) {
    r.error = "zero points: dequantization of " + recipe::RecipeName(rc) + " needs them";
  }
  if (r.error.empty() && rc.tensor_scale != recipe::TensorScaleRule::kNone && !parts.tensor_scale) {
    r.error = "tensor scale: dequantization of " + recipe::RecipeName(rc) + " needs it";
  }
  if (!r.error.empty()) return r;

  // The codes one per byte, so the model reads them whatever their packing.
  std::vector<std::uint8_t> codes(n);
  for (std::size_t k = 0; k < n; ++k) codes[k] = static_cast<std::uint8_t>(OutputCode(q.codes, k));
  recipe::TensorScale tensor;
  if (q.tensor_scale) tensor.decode = *q.tensor_scale;
  recipe::ConstQuantizedTensor c;
  c.codes = codes.data();
  c.scale_codes = q.scale_codes;
  c.scales = q.scales;
  c.zero_points = q.zero_points;
  c.tensor_scale = q.tensor_scale ? &tensor : nullptr;
  const auto dequantize = [&](recipe::Recipe variant) {
    variant.packing = recipe::Packing::kOnePerByte;
    std::vector<float> out(n);
    recipe::DequantizeTensor(variant, t.layout, c, rows, cols, out.data());
    std::vector<std::uint64_t> bits(n);
    for (std::size_t k = 0; k < n; ++k) bits[k] = F32Bits(out[k]);
    return bits;
  };
  const std::vector<std::uint64_t> expected = dequantize(rc);
  Slots slots;
  const std::uint8_t value_class = slots.AddClass("values");
  const std::uint8_t nan_class = slots.AddClass("NaN values");
  for (std::size_t k = 0; k < n; ++k) {
    slots.actual.push_back(F32Bits(values[k]));
    slots.cls.push_back(std::isnan(F32FromBits(static_cast<std::uint32_t>(expected[k]))) ? nan_class
                                                                                                  : value_class);
  }
  r.checked = n;
  for (std::size_t k = 0; k < n; ++k) {
    if (expected[k] == slots.actual[k]) continue;
    ++r.mismatches;
    OutputMismatch m;
    m.mismatch = internal::ElementMismatch("", rc.element, codes[k], kFp32, expected[k], slots.actual[k]);
    m.mismatch.where = "element " + std::to_string(k);
    m.element = static_cast<long>(k);
    Keep(&r, options, std::move(m));
  }
  if (r.mismatches == 0 || !options.diagnose) return r;
  internal::DiagnosisBuilder b(slots);
  b.SetTarget([&](std::size_t i, std::uint64_t* out) {
    *out = expected[i];
    return true;
  });
  if (rc.family() == recipe::Family::kNvfp4) {
    recipe::Recipe other = rc;
    other.dequantize_order = rc.dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor
                                 ? recipe::DequantizeOrder::kElementTimesScaleTensorProduct
                                 : recipe::DequantizeOrder::kElementTimesScaleThenTensor;
    const std::vector<std::uint64_t> v = dequantize(other);
    b.Add({other.dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor
               ? "dequantize as (q * block scale) * tensor scale"
               : "dequantize as q * (block scale * tensor scale)",
           "operation order", "the two scales multiplied in the other order"},
          [&v](std::size_t i, std::uint64_t* out) {
            *out = v[i];
            return true;
          });
  }
  for (const recipe::Recipe& other : recipe::kAllRecipes) {
    if (std::string(other.name) != rc.name || std::string(other.profile) == rc.profile) continue;
    if (!recipe::LayoutApplies(other, t.layout)) continue;
    // Only recipes that read the same buffers.
    if (other.zero_point != rc.zero_point ||
        (other.tensor_scale == recipe::TensorScaleRule::kNone) != (rc.tensor_scale == recipe::TensorScaleRule::kNone)) {
      continue;
    }
    const std::vector<std::uint64_t> v = dequantize(other);
    b.Add({"recipe " + recipe::RecipeName(other), "recipe", other.source}, [&v](std::size_t i, std::uint64_t* out) {
      *out = v[i];
      return true;
    });
  }
  r.diagnosis = b.Finish(t.name, "values", n);
  return r;
}

}  // namespace lowbit::check
