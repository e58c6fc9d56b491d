// The diagnosis of user_outputs.h: when a kernel's outputs differ from the
// target, re-run known conventions on the same inputs and say which of them
// the kernel follows (docs/check-your-kernel.md "The diagnosis").
//
// A check flattens what the kernel wrote into slots (element codes, then
// block scales, zero points, the tensor scale), each with a class that the
// report names ("NaN inputs", "ties", "block scales"). A candidate is a
// function giving its output for each slot; DiagnosisBuilder counts where it
// agrees with the kernel and, where not, in which classes.
//
// The candidates are built from the model's own policies and recipes
// (policy.h options, profiles.h, the recipe catalog and its fields) and a
// few named deviations in diagnosis_*.cc: deliberately wrong conventions
// that users write (a float log2 for a scale exponent, subnormals flushed to
// zero, bit truncation), each said to be wrong where it is defined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::check::internal {

struct Slots {
  std::vector<std::uint64_t> actual;     // what the kernel wrote, one value per slot
  std::vector<std::uint8_t> cls;         // each slot's class: an index into class_names
  std::vector<std::string> class_names;  // "NaN inputs", "ties", "block scales", ...
  std::uint8_t AddClass(const std::string& name);  // the index of `name`, added if new
};

// A candidate's output for slot i; false where it has none.
using SlotFn = std::function<bool(std::size_t slot, std::uint64_t* out)>;

struct CandidateInfo {
  std::string name;
  std::string kind;
  std::string detail;
};

class DiagnosisBuilder {
 public:
  explicit DiagnosisBuilder(const Slots& slots) : slots_(slots) {}
  // The target's outputs (equal to the kernel's on most slots): candidates
  // with exactly these outputs say nothing and are left out.
  void SetTarget(const SlotFn& target);
  // `actual` replaces the kernel's slots for this candidate (the kernel's
  // bytes read in another packing); nullptr: the kernel's slots.
  void Add(const CandidateInfo& info, const SlotFn& outputs, const std::vector<std::uint64_t>* actual = nullptr);
  // `noun` names the slots in the summary ("inputs", "outputs").
  Diagnosis Finish(const std::string& target_name, const std::string& noun, std::uint64_t total);

 private:
  const Slots& slots_;
  std::uint64_t target_hash_ = 0;
  std::vector<DifferenceClass> target_differences_;
  std::vector<Candidate> candidates_;
  std::vector<std::uint64_t> hashes_;
};

// A rounding mode as a candidate's name says it: the word of the CLI's
// --round ("rtz"), and for the tie rules that are no IEEE 754 attribute what
// the tie does ("rnu (ties toward +Inf)").
std::string RoundingText(RoundingMode mode);

// "the 254 NaN inputs (expected 0x7f, got 0xff)", up to three classes.
std::string DescribeDifferences(const std::vector<DifferenceClass>& classes, const char* expected_word);

// ---- element conversions ---------------------------------------------------------

// The target's code of `input` (a code of `in`); false where the target
// (a profile) leaves it undefined.
bool TargetEncode(const Target& target, const FormatSpec& in, std::uint64_t input, std::uint64_t* out);

// `slots` hold the elements the target defines; `inputs[i]` is slot i's
// input code, `expected[i]` the target's code. `raw` is the kernel's buffer
// (for the packing candidate) and `elements[i]` slot i's element index.
Diagnosis DiagnoseElement(const Target& target, const FormatSpec& in, const std::vector<std::uint64_t>& inputs,
                          const std::vector<std::uint64_t>& expected, const std::vector<std::size_t>& elements,
                          const Slots& slots, const CodeBuffer& raw, std::uint64_t total);

// The class of an element conversion's slot ("NaN inputs", "ties", ...).
std::string ElementClass(const Target& target, const FormatSpec& in, std::uint64_t input, std::uint64_t expected);

// ---- recipes -----------------------------------------------------------------------

// A recipe with the model's steps, or one named deviation in them.
struct RecipeVariant {
  recipe::Recipe recipe{};
  enum class Scale : std::uint8_t {
    kModel,         // ChooseScale
    kFloatLog2,     // MX: floor(log2f(amax)) instead of the exponent bits
    kNoTensorScale, // NVFP4: block scales as if the tensor scale were 1
  };
  Scale scale = Scale::kModel;
  // Divide instead of multiplying by the reciprocal, or the other way round
  // (ElementStep), keeping the scale the recipe stores.
  bool flip_step = false;
};

// One quantization of x: a code per element (unpacked), the stored scale
// per group, zero points, the tensor scale, and each group's amax, read from
// the model's trace under the variant (recipe/trace_tensor.h
// TraceTensorWithScales).
struct RecipeRun {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scale_codes;  // MX, NVFP4
  std::vector<float> scales;              // scaled recipes
  std::vector<std::int32_t> zero_points;  // recipes with a zero point
  recipe::TensorScale tensor;
  std::vector<float> amax;
};

RecipeRun RunRecipe(const RecipeVariant& variant, const recipe::Layout& layout, const recipe::GroupGrid& grid,
                    const std::vector<float>& x);

// Which buffers the kernel gave.
struct RecipeParts {
  bool codes = false;
  bool scale_codes = false;
  bool scales = false;
  bool zero_points = false;
  bool tensor_scale = false;
};

// The slot values of a run: codes, scale codes or FP32 scale bits, zero
// points (as uint32 bits), the tensor scale's FP32 bits, for the parts given.
std::vector<std::uint64_t> RecipeSlotValues(const RecipeRun& run, const RecipeParts& parts);

// `codes_raw`: the kernel's code bytes (for the packing candidate); x the
// inputs, `model` the target's run.
Diagnosis DiagnoseRecipe(const Target& target, const recipe::GroupGrid& grid, const std::vector<float>& x,
                         const RecipeRun& model, const RecipeParts& parts, const Slots& slots,
                         const CodeBuffer& codes_raw, std::uint64_t total);

}  // namespace lowbit::check::internal
