// `lowbit check TARGET --input FILE --output FILE [--scales FILE]
// [--zero-points FILE] [--tensor-scale VALUE|FILE] [--layout L] [--json]`:
// compares what a user's kernel wrote with the model, on the inputs it read.
// A thin caller of lowbit/check/user_outputs.h (the gtest matchers and
// Python's assert_matches print the same report); docs/check-your-kernel.md
// is the user's guide.
//
// TARGET is the one name grammar (formats/.../recipe/names.h): a format with
// its options (e4m3, e4m3:nvidia, bf16 --round rtz --saturate) or a recipe
// (mxfp8, nvfp4:te, int4:ao-sym/g128). FILEs are .npy (npy_file.h) or raw
// bytes (--dtype says the input type, the target the output width).
//
// Exit status: 0 every output matches; 1 a mismatch (the report says which
// and the diagnosis what the kernel does instead); 2 bad usage or a file
// that cannot be read (main.cc prints the error).
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "f32_values.h"
#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/checked_size.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/user_word.h"
#include "npy_file.h"
#include "parse.h"

namespace lowbit::tools {

namespace {

struct CheckArgs {
  std::string target;
  std::string input;
  std::string output;
  std::string scales;
  std::string zero_points;
  std::string tensor_scale;
  std::string layout;
  std::string profile;
  std::string round;
  bool saturate = false;
  std::string dtype;    // input type of a raw (or opaque .npy) input file
  std::string shape;    // ROWSxCOLS or N, for raw inputs
  std::string packing;  // one-per-byte | low-first | high-first
  std::size_t max_mismatches = 8;
  bool json = false;
};

constexpr FormatId kInputTypes[] = {FormatId::kFp64, FormatId::kFp32, FormatId::kFp16, FormatId::kBf16};

FormatId InputTypeName(const std::string& name) {
  const FormatId id = ParseFormat(name);
  for (FormatId t : kInputTypes) {
    if (t == id) return id;
  }
  throw CommandError("--dtype " + QuoteUserWord(name) + " is not an input type (fp64, fp32, fp16 or bf16)");
}

// The input type of the --input file: the .npy dtype (float64/32/16, and
// ml_dtypes' bfloat16, which .npy stores as '<V2'), or --dtype.
FormatId InputType(const BinaryArray& a, const std::string& dtype) {
  const bool given = !dtype.empty();
  const FormatId from_flag = given ? InputTypeName(dtype) : FormatId::kFp32;
  if (!a.npy) {
    if (!given) throw CommandError(a.name + ": a raw file; say its type with --dtype fp32|fp16|bf16|fp64");
    return from_flag;
  }
  FormatId from_file = FormatId::kFp32;
  bool known = true;
  if (a.kind == 'f' && a.item_bytes == 8) {
    from_file = FormatId::kFp64;
  } else if (a.kind == 'f' && a.item_bytes == 4) {
    from_file = FormatId::kFp32;
  } else if (a.kind == 'f' && a.item_bytes == 2) {
    from_file = FormatId::kFp16;
  } else if (a.kind == 'V' && a.item_bytes == 2) {
    from_file = FormatId::kBf16;  // ml_dtypes.bfloat16
  } else {
    known = false;
  }
  if (!known) {
    // Unsigned words holding the bits (np.uint16 of BF16, np.uint32 of FP32):
    // words of another width are the wrong size for --dtype, not a wrong type.
    if (given && a.kind == 'u') {
      const int need = Spec(from_flag).total_bits / 8;
      if (a.item_bytes == need) return from_flag;
      throw CommandError(a.name + ": --dtype " + Spec(from_flag).name + " needs " + std::to_string(need) +
                         "-byte words; the file holds " + a.descr + " (" + std::to_string(a.item_bytes) +
                         "-byte words)");
    }
    throw CommandError(a.name + ": dtype " + a.descr + " is not an input type (float64, float32, float16, "
                       "ml_dtypes.bfloat16, or unsigned words with --dtype)");
  }
  if (given && from_flag != from_file) {
    throw CommandError(a.name + ": the file holds " + Spec(from_file).name + " (" + a.descr + "), --dtype says " +
                       Spec(from_flag).name);
  }
  return from_file;
}

// One dimension of --shape: a whole number from 1 up.
std::size_t ShapeDimension(const std::string& text, const std::string& shape) {
  try {
    const std::uint64_t v = ParseUnsigned(text, kMaxModelElements, "--shape");
    if (v == 0) throw CommandError("");
    return static_cast<std::size_t>(v);
  } catch (const CommandError&) {
    throw CommandError("--shape " + QuoteUserWord(shape) + ": " + QuoteUserWord(text) +
                       " is not a whole number from 1 (ROWSxCOLS or N)");
  }
}

// rows x cols of the tensor: --shape, else the .npy shape (leading
// dimensions folded into rows), else one row.
void TensorShape(const CheckArgs& args, const BinaryArray& input, long* rows, long* cols) {
  const std::size_t count = input.Count();
  std::size_t r = 1;
  std::size_t c = count;
  if (!args.shape.empty()) {
    const std::size_t x = args.shape.find('x');
    if (x == std::string::npos) {
      c = ShapeDimension(args.shape, args.shape);
    } else {
      r = ShapeDimension(args.shape.substr(0, x), args.shape);
      c = ShapeDimension(args.shape.substr(x + 1), args.shape);
    }
    std::size_t product = 0;
    if (!CheckedElementCount(r, c, &product) || product != count) {
      throw CommandError("--shape " + QuoteUserWord(args.shape) + " does not hold the " + std::to_string(count) +
                         " values of " + input.name);
    }
  } else if (input.npy && input.shape.size() >= 2) {
    c = input.shape.back();
    r = c == 0 ? 0 : count / c;
  }
  if (count == 0) throw CommandError(input.name + ": no values");
  *rows = static_cast<long>(r);
  *cols = static_cast<long>(c);
}

recipe::Packing PackingName(const std::string& name) {
  if (name == "one-per-byte") return recipe::Packing::kOnePerByte;
  if (name == "low-first") return recipe::Packing::kNibblesLowFirst;
  if (name == "high-first") return recipe::Packing::kNibblesHighFirst;
  throw CommandError("--packing " + QuoteUserWord(name) + " (one-per-byte, low-first, high-first)");
}

// The output codes of `n` elements of `element` (bits per code). Two codes
// per byte when --packing says so, or when the file holds ceil(n / 2) bytes
// of codes of at most 4 bits (in `natural` nibble order).
check::CodeBuffer OutputCodes(BinaryArray* out, const FormatSpec& element, std::size_t n, int code_bytes,
                              recipe::Packing natural, const std::string& packing) {
  const std::string what = std::string(element.name) + " codes";
  recipe::Packing p = recipe::Packing::kOnePerByte;
  if (!packing.empty()) {
    p = PackingName(packing);
  } else if (element.total_bits <= 4 && n > 1 && out->data.size() == n / 2 + n % 2 && out->data.size() != n) {
    p = natural == recipe::Packing::kOnePerByte ? recipe::Packing::kNibblesLowFirst : natural;
  }
  if (p != recipe::Packing::kOnePerByte) {
    if (element.total_bits > 4) {
      throw CommandError("--packing " + QuoteUserWord(packing) + ": two codes per byte hold codes of at most 4 bits; " +
                         element.name + " has " + std::to_string(element.total_bits));
    }
    RequireItemBytes(out, 1, "packed " + what);
    if (out->Count() != n / 2 + n % 2) {
      throw CommandError(out->name + ": " + std::to_string(n) + " elements packed two per byte need " +
                         std::to_string(n / 2 + n % 2) + " bytes, the file holds " + std::to_string(out->Count()));
    }
    return {out->data.data(), n, 1, p};
  }
  RequireItemBytes(out, code_bytes, what);
  if (out->Count() != n) {
    throw CommandError(out->name + ": " + std::to_string(out->Count()) + " codes for " + std::to_string(n) +
                       " inputs");
  }
  return {out->data.data(), n, code_bytes, recipe::Packing::kOnePerByte};
}

// A file given for data that is checked must hold some: an empty scales
// file (/dev/null, a (0,) .npy) is an error, never "no scales given" (which
// would leave the scales unchecked and the run passing).
void RequireData(const BinaryArray& a, const char* why) {
  if (a.data.empty()) throw CommandError(a.name + ": holds no data (" + why + "; leave the option out to skip them)");
}

int CodeBytes(const FormatSpec& f) { return f.total_bits <= 8 ? 1 : f.total_bits <= 16 ? 2 : f.total_bits <= 32 ? 4 : 8; }

float TensorScaleValue(const std::string& text) {
  BinaryArray a;
  try {
    a = ReadArrayFile("--tensor-scale", text);
  } catch (const CommandError& e) {
    // Not a readable file: a number, or the file's error if it is not one.
    try {
      return ReadF32Values({text}, "")[0];
    } catch (const CommandError&) {
      throw CommandError(std::string(e.what()) + " (and " + QuoteUserWord(text) + " is not a number either)");
    }
  }
  if (a.npy && a.kind != 'f') throw CommandError(a.name + ": dtype " + a.descr + " is not float32");
  RequireItemBytes(&a, 4, "fp32 tensor scales");
  if (a.Count() != 1) throw CommandError(a.name + ": holds " + std::to_string(a.Count()) + " values, not one");
  float v;
  std::memcpy(&v, a.data.data(), 4);
  return v;
}

void Finish(const check::Report& report, bool json) {
  if (!report.error.empty()) throw CommandError(report.error);
  std::fputs((json ? check::ReportJson(report) + "\n" : check::ReportText(report)).c_str(), stdout);
  if (!report.Passed()) throw CommandExit{1};
}

void RunCheck(const CheckArgs& args) {
  check::TargetOptions options;
  options.profile = args.profile;
  // Every spelling --round accepts (parse.h), as the canonical name the
  // check library reads.
  if (!args.round.empty()) options.rounding = RoundingModeName(ParseRoundingMode(args.round));
  options.saturate = args.saturate;
  options.layout = args.layout;
  check::Target target;
  std::string error;
  if (!check::ParseTarget(args.target, options, &target, &error)) {
    throw CommandError(error + " (lowbit list formats, lowbit list recipes)");
  }
  check::CheckOptions check_options;
  check_options.max_mismatches = args.max_mismatches;

  BinaryArray input = ReadArrayFile("--input", args.input);
  const FormatId input_type = InputType(input, args.dtype);
  RequireItemBytes(&input, Spec(input_type).total_bits / 8, std::string(Spec(input_type).name) + " values");
  long rows = 0;
  long cols = 0;
  TensorShape(args, input, &rows, &cols);
  const std::size_t n = input.Count();
  BinaryArray output = ReadArrayFile("--output", args.output);
  const check::InputBuffer inputs{input_type, input.data.data(), n};

  if (target.kind == check::Target::Kind::kFormat) {
    if (!args.scales.empty() || !args.zero_points.empty() || !args.tensor_scale.empty()) {
      throw CommandError("--scales, --zero-points and --tensor-scale apply to recipes; '" + target.name +
                         "' is a format");
    }
    const FormatSpec& dst = Spec(target.format);
    const check::CodeBuffer codes =
        OutputCodes(&output, dst, n, CodeBytes(dst), recipe::Packing::kOnePerByte, args.packing);
    Finish(check::CheckElementOutputs(target, inputs, codes, check_options), args.json);
    return;
  }

  const recipe::Recipe& r = target.recipe;
  check::RecipeOutputs outputs;
  outputs.codes = OutputCodes(&output, r.element, n, 1, r.packing, args.packing);
  BinaryArray scales;
  std::vector<float> scale_values;
  if (!args.scales.empty()) {
    scales = ReadArrayFile("--scales", args.scales);
    RequireData(scales, "the recipe's scales are checked against them");
    if (r.family() == recipe::Family::kScaled) {
      if (scales.npy && scales.kind != 'f') throw CommandError(scales.name + ": dtype " + scales.descr + " is not float32");
      RequireItemBytes(&scales, 4, "fp32 scales");
      scale_values.resize(scales.Count());
      std::memcpy(scale_values.data(), scales.data.data(), scales.data.size());
      outputs.scales = scale_values.data();
      outputs.scale_count = scale_values.size();
    } else {
      RequireItemBytes(&scales, 1, std::string(r.scale_format.name) + " scale codes");
      outputs.scale_codes = scales.data.data();
      outputs.scale_code_count = scales.Count();
    }
  }
  BinaryArray zero_points;
  std::vector<std::int32_t> zero_point_values;
  if (!args.zero_points.empty()) {
    zero_points = ReadArrayFile("--zero-points", args.zero_points);
    RequireData(zero_points, "the recipe's zero points are checked against them");
    if (zero_points.npy && zero_points.kind != 'i') {
      throw CommandError(zero_points.name + ": dtype " + zero_points.descr + " is not int32");
    }
    RequireItemBytes(&zero_points, 4, "int32 zero points");
    zero_point_values.resize(zero_points.Count());
    std::memcpy(zero_point_values.data(), zero_points.data.data(), zero_points.data.size());
    outputs.zero_points = zero_point_values.data();
    outputs.zero_point_count = zero_point_values.size();
  }
  if (!args.tensor_scale.empty()) outputs.tensor_scale = TensorScaleValue(args.tensor_scale);
  Finish(check::CheckRecipeOutputs(target, inputs, rows, cols, outputs, check_options), args.json);
}

// "MODE in {rne,rna,...}": every spelling --round accepts (parse.h).
std::string RoundingModeHelp() {
  std::string help = "MODE in {";
  for (const std::string& spelling : RoundingModeSpellings()) help += (help.back() == '{' ? "" : ",") + spelling;
  return help + "}";
}

}  // namespace

void AddCheckCommand(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Check a kernel's dumped outputs against the model, with a diagnosis");
  cmd->add_option("target", args->target,
                  "FORMAT[:PROFILE] or RECIPE[/LAYOUT], e.g. e4m3, e4m3:nvidia, bf16, mxfp8, nvfp4:te, "
                  "int4:ao-sym/g128")
      ->required();
  cmd->add_option("--input", args->input, "The kernel's inputs: .npy or raw (--dtype)")->required();
  cmd->add_option("--output", args->output, "The kernel's output codes: .npy or raw")->required();
  cmd->add_option("--scales", args->scales, "Recipes: the block scales (E8M0/UE4M3 bytes) or FP32 group scales");
  cmd->add_option("--zero-points", args->zero_points, "Recipes with a zero point: int32 per group");
  cmd->add_option("--tensor-scale", args->tensor_scale, "NVFP4: the FP32 tensor scale, a number or a file");
  cmd->add_option("--layout", args->layout, "Scaled recipes: tensor, row, channel, token, group:G, block:RxG");
  cmd->add_option("--profile", args->profile, "Formats: compare with this implementation (lowbit list profiles)");
  cmd->add_option("--round", args->round, "Formats without a profile: the rounding mode (default rne)")
      ->check(GrammarValidator(RoundingModeHelp(),
                               [](const std::string& name) { ParseRoundingMode(name); }));
  cmd->add_flag("--saturate", args->saturate, "Formats without a profile: overflow clamps to the largest finite value");
  cmd->add_option("--dtype", args->dtype, "Input type of a raw --input (or of unsigned .npy words)")
      ->check(GrammarValidator("TYPE in {fp32,fp16,bf16,fp64}", [](const std::string& name) { InputTypeName(name); }));
  cmd->add_option("--shape", args->shape, "ROWSxCOLS (or N) of a raw --input (default: the .npy shape, or one row)");
  cmd->add_option("--packing", args->packing,
                  "Output codes of <= 4 bits, one or two per byte (default: from the file size)")
      ->check(GrammarValidator("PACKING in {one-per-byte,low-first,high-first}",
                               [](const std::string& name) { PackingName(name); }));
  cmd->add_option("--max-mismatches", args->max_mismatches, "First mismatches shown")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("--json", args->json, "The report as one JSON object");
  cmd->callback([args] { RunCheck(*args); });
  AddCheckGemmCommand(app);
}

}  // namespace lowbit::tools
