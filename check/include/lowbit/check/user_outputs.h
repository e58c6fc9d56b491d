// lowbit::check — users' own kernels against the model: hand over the
// inputs a kernel read and the outputs it wrote (raw typed buffers), get back
// a Report with the first mismatches decoded and, when anything differs, a
// diagnosis of which known convention the kernel follows instead
// (docs/check-your-kernel.md; docs/design.md "Everything that computes is a
// registry entry": users' kernel checks are thin callers of the harness).
//
// `lowbit check`, the gtest matchers of lowbit::testing and the Python
// `lowbit.testing.assert_matches` all call these functions and print
// ReportText / ReportJson, so the three say the same thing.
//
// A target is named with the one grammar of formats/.../recipe/names.h
// (`e4m3`, `e4m3:nvidia`, `nvfp4:te`, `int4:ao-sym/g128`); the element
// options a name cannot carry (rounding mode, saturation) come in
// TargetOptions, as the CLI's --round / --saturate / --profile / --layout do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/check/check.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/profile_id.h"
#include "lowbit/formats/recipe/recipe.h"

namespace lowbit::check {

// ---- what the kernel is meant to reproduce -----------------------------------

// The element options a target name cannot spell (the CLI's flags).
struct TargetOptions {
  // An element profile ("nvidia", "ml_dtypes", aliases as names.h accepts);
  // the same as writing it after ':' in the name (not both).
  std::string profile;
  // Element formats without a profile: the rounding mode (rne when empty;
  // the spellings of tools/parse.h: rne, rna, rtz, up, down, odd, and the
  // tie rules rnu, rnd, rnz of policy.h). Stochastic rounding cannot be
  // checked from outputs alone and is refused.
  std::string rounding;
  // Element formats without a profile: clamp overflow to +-max finite
  // (Overflow::kSaturate) instead of the format's own rule.
  bool saturate = false;
  // Scaled recipes: tensor | row | channel | token | gN | group:N |
  // tile:RxG | block:RxG (names.h ParseLayout); the same as "/LAYOUT" in the
  // name (not both).
  std::string layout;
};

struct Target {
  enum class Kind : std::uint8_t { kFormat, kRecipe };
  Kind kind = Kind::kFormat;
  // The canonical spelling ("e4m3:nvidia", "e4m3 rtz+sat", "int4:ao-sym/g128").
  std::string name;

  // kFormat: the destination, and either a profile (ProfileEncode, with
  // `options.rounding` as its mode) or the model's options (Convert).
  FormatId format = FormatId::kFp32;
  std::optional<ProfileId> profile;
  EncodeOptions options;

  // kRecipe: the catalog recipe (by value: the diagnosis runs variants of it)
  // and the layout of its groups.
  recipe::Recipe recipe{};
  recipe::Layout layout;
};

// Parses `name` (+ options) into *out. False with a message naming the
// problem (unknown format or profile, with a "did you mean"; a layout on a
// format; two profiles or two layouts; a rounding option on a recipe).
bool ParseTarget(std::string_view name, const TargetOptions& options, Target* out, std::string* error);

// Targets built in code (the gtest matchers, Python).
Target FormatTarget(FormatId format, const EncodeOptions& options = {});
Target ProfileTarget(FormatId format, ProfileId profile,
                     RoundingMode rounding = RoundingMode::kNearestEven);
Target RecipeTarget(const recipe::Recipe& recipe, const recipe::Layout& layout);
Target RecipeTarget(const recipe::Recipe& recipe);  // its default layout

// ---- what the kernel read and wrote --------------------------------------------

// `count` values of `type` (kFp64, kFp32, kFp16, kBf16), native byte order,
// contiguous. Recipes read FP32; FP16 and BF16 inputs widen to it exactly,
// FP64 inputs are refused for recipes (the model's recipes take FP32).
struct InputBuffer {
  FormatId type = FormatId::kFp32;
  const void* data = nullptr;
  std::size_t count = 0;
};

// Output codes: `count` codes, either one per `code_bytes` bytes (1, 2, 4 or
// 8, native byte order; the code in the low bits, higher bits must be 0) or,
// for codes of at most 4 bits, two per byte in `packing`'s nibble order
// (code_bytes is then ignored; an odd count leaves the last high/low nibble
// unchecked).
struct CodeBuffer {
  const void* data = nullptr;
  std::size_t count = 0;
  int code_bytes = 1;
  recipe::Packing packing = recipe::Packing::kOnePerByte;
};

// What a recipe kernel wrote for a row-major [rows, cols] tensor. Buffers a
// recipe does not have stay empty; a buffer the recipe has but the caller
// leaves out (a null pointer and a count of 0) is not compared (e.g. codes
// only). A buffer given with a pointer is compared, or the check refuses: a
// count that is not one per group, 0 included, is an error, never "left
// out" (docs/bad-input.md "Empty values and files with no data").
struct RecipeOutputs {
  // Element codes; packing kOnePerByte or the recipe's own nibble order
  // (a different order is a mismatch, and a diagnosis candidate).
  CodeBuffer codes;
  // MX: E8M0 bytes, NVFP4: UE4M3 bytes, one per group (GroupGrid order).
  const std::uint8_t* scale_codes = nullptr;
  std::size_t scale_code_count = 0;
  // Scaled recipes: the FP32 dequantization scale per group.
  const float* scales = nullptr;
  std::size_t scale_count = 0;
  // Recipes with an integer zero point: one per group.
  const std::int32_t* zero_points = nullptr;
  std::size_t zero_point_count = 0;
  // NVFP4: the stored FP32 tensor scale (TE's S_dec, torchao's
  // per_tensor_scale), as the kernel computed it from the whole tensor.
  std::optional<float> tensor_scale;
};

// ---- the report ------------------------------------------------------------------

// A recipe mismatch's block: its index (GroupGrid order), its amax (the
// model's statistic) and the scale the model chose and the kernel stored.
struct BlockInfo {
  long index = -1;
  std::string amax;            // "5.5"
  std::string expected_scale;  // "0x7e (0.5)", or the FP32 scale
  std::string actual_scale;    // "" when the kernel's scales were not given
};

struct OutputMismatch {
  Mismatch mismatch;            // check.h: input bits and value, codes with values, distance
  long element = -1;            // flat index of the element (or group for a scale)
  std::optional<BlockInfo> block;  // recipes
};

// One class of elements where a candidate and the kernel differ, e.g. "NaN
// inputs": 254 elements, first one candidate 0x7f, kernel 0xff.
struct DifferenceClass {
  std::string what;   // "NaN inputs", "ties", "overflow", "subnormal results", "scales", ...
  std::uint64_t count = 0;
  std::uint64_t candidate_code = 0;  // the first such element's code under the candidate
  std::uint64_t actual_code = 0;     // and the kernel's
};

// A known convention re-run on the same inputs.
struct Candidate {
  std::string name;  // "profile ml_dtypes", "rounding rtz", "scale rule mx-ceil", "packing nibbles high first"
  std::string kind;  // "target", "profile", "rounding", "subnormals", "scale rule", "operation order", "packing", ...
  std::string detail;  // what the convention is, in a sentence
  std::uint64_t checked = 0;  // outputs compared (codes + scales)
  std::uint64_t matched = 0;  // of those, equal to the kernel's
  std::vector<DifferenceClass> differences;  // where the kernel differs, largest class first
  bool FullMatch() const { return checked > 0 && matched == checked; }
};

// The diagnosis re-runs every candidate on at most this many outputs.
inline constexpr std::uint64_t kMaxDiagnosedOutputs = std::uint64_t{1} << 22;

struct Diagnosis {
  bool ran = false;
  // Full matches first (the target itself never appears), then by matched
  // descending.
  std::vector<Candidate> candidates;
  // Where the kernel differs from the target itself, by class (the
  // "differs from nvidia on the 254 NaN inputs" part); candidate_code is the
  // target's code there.
  std::vector<DifferenceClass> target_differences;
  // Outputs the candidates were compared on (all of them, or the first
  // kMaxDiagnosedOutputs).
  std::uint64_t compared = 0;
  // One line: "matches profile ml_dtypes on all 65536 inputs; differs from
  // nvidia on the 254 NaN inputs (expected 0x7f, got 0xff)" or "matches no
  // known convention (closest: ...)".
  std::string summary;
  bool MatchesSome() const { return !candidates.empty() && candidates.front().FullMatch(); }
};

struct Report {
  std::string target;  // Target::name
  std::string kind;    // "encode", "quantize", "dequantize"
  // Set when the buffers themselves are wrong (sizes, types, a code with
  // stray high bits counts as a mismatch instead): nothing was compared.
  std::string error;
  std::uint64_t checked = 0;     // outputs compared (codes, scales, values)
  std::uint64_t mismatches = 0;  // of those, differing
  std::uint64_t scale_mismatches = 0;  // recipes: of the mismatches, scales / zero points / tensor scale
  // Outputs the target leaves undefined (a profile without a result for
  // that input): not compared.
  std::uint64_t undefined = 0;
  std::vector<OutputMismatch> first_mismatches;
  Diagnosis diagnosis;  // run when mismatches > 0 and CheckOptions::diagnose
  bool Passed() const { return error.empty() && mismatches == 0 && checked > 0; }
};

struct CheckOptions {
  std::size_t max_mismatches = 8;  // first_mismatches kept
  bool diagnose = true;            // run the diagnosis on a mismatch
};

// ---- the checks ---------------------------------------------------------------------

// Element conversion: outputs[i] must be the target's code of inputs[i].
Report CheckElementOutputs(const Target& target, const InputBuffer& inputs, const CodeBuffer& outputs,
                           const CheckOptions& options = {});

// Recipe quantization of a row-major [rows, cols] tensor.
Report CheckRecipeOutputs(const Target& target, const InputBuffer& inputs, long rows, long cols,
                          const RecipeOutputs& outputs, const CheckOptions& options = {});

// Recipe dequantization: `values` ([rows, cols] FP32) must be the model's
// DequantizeTensor of the stored buffers in `quantized` (codes, scales, zero
// points, tensor scale). Compared bit for bit (NaN bits included).
Report CheckRecipeDequantized(const Target& target, const RecipeOutputs& quantized, long rows, long cols,
                              const float* values, const CheckOptions& options = {});

// ---- rendering ------------------------------------------------------------------------

// Lines a person reads: the verdict, the first mismatches decoded, the
// diagnosis.
std::string ReportText(const Report& report);
// One JSON object (UTF-8, no trailing newline) with every field of Report.
std::string ReportJson(const Report& report);

}  // namespace lowbit::check
