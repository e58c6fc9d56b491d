// `lowbit explain RECIPE[,PROFILE...] VALUES...`: walks one block through a
// recipe step by step (amax, scale rule, scale exponent or FP32 scale, scale
// code, scaled elements, codes, dequantized values) so a person can see why a
// code came out. Several profiles of one format ("mxfp4:ocp,te") are walked
// one after the other and compared on the block's largest element: for an
// MXFP4 amax of 6 * 2^k * 1.01, OCP floor keeps X = 2^k and clamps it to 6,
// RCEIL takes X = 2^(k+1) and rounds 3.03 to 3. Scaled INT/FP8 recipes
// ("int8:ao-sym,common", "uint4:gptq-sym,gptq-asym", "e4m3:te,te-pow2") are
// walked the same way over the values as one group: amax 127.5 shows
// torchao's amax/127.5 reaching -128 where the common amax/127 kernel stops
// at -127. Names go through the one grammar (recipe::ParseTarget); every
// number printed is read from the model's trace of the block
// (formats/.../recipe/trace.h, trace_tensor.h).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "f32_values.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/trace_tensor.h"
#include "lowbit/formats/user_word.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {

namespace {

struct ExplainArgs {
  std::string recipes;
  std::vector<std::string> values;
};

// One line per rule: its name and formula from the list of scale rules
// (recipe/scale_rule_list.h, where every rule has both);
// CliQuantizeTest.ExplainPrintsARuleForEveryRecipe checks that every catalog
// recipe prints a non-empty rule line.
const char* ScaleRuleText(recipe::ScaleRule rule) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    for (recipe::ScaleRule r : recipe::kAllScaleRules) {
      t.push_back(std::string(recipe::ScaleRuleName(r)) + ": " + recipe::ScaleRuleFormula(r));
    }
    return t;
  }();
  return texts[static_cast<std::size_t>(rule)].c_str();
}

std::string Decimal(float x) { return ExactDecimal(kFp32, F32Bits(x)); }

struct Largest {
  std::string recipe;
  float value = 0;
  std::uint8_t code = 0;
  float dequantized = 0;
  std::string scale;
};

// The model's trace of the values as one block (MX, NVFP4: the recipe's
// 1-D block, the values at most one block long) or one group (scaled
// recipes: per tensor). For NVFP4 the values are then the whole tensor too,
// so its tensor amax and block amax are the same statistics.
recipe::TraceTensor TraceOneBlock(const recipe::Recipe& r, const std::vector<float>& x) {
  const recipe::Layout layout = r.family() == recipe::Family::kScaled ? recipe::Layout{} : r.layout;
  recipe::TraceTensor trace;
  const recipe::TensorStatus st = recipe::TraceTensorOf(r, layout, x.data(), 1, static_cast<long>(x.size()), &trace);
  if (st != recipe::TensorStatus::kOk || trace.blocks.size() != 1) throw CommandError(recipe::TensorStatusText(st));
  return trace;
}

// One line per element: input -> scaled value -> code = its value -> the
// dequantized value.
void PrintElements(const recipe::Recipe& r, const recipe::TraceBlock& b, int largest) {
  for (const recipe::TraceElement& e : b.elements) {
    const std::string value = r.family() == recipe::Family::kScaled && !r.element.IsFloat()
                                  ? std::to_string(recipe::IntegerOfCode(r.element, e.code))
                                  : ExactDecimal(r.element, e.code);
    std::printf("   [%ld] %s -> %s -> code %s = %s -> %s%s\n", e.index, Decimal(e.input).c_str(), Decimal(e.scaled).c_str(),
                Hex(e.code).c_str(), value.c_str(), Decimal(e.decoded).c_str(), e.index == largest ? "   <- largest" : "");
  }
}

Largest ExplainMx(const recipe::Recipe& r, const std::vector<float>& x, int largest) {
  const recipe::TraceTensor trace = TraceOneBlock(r, x);
  const recipe::TraceBlock& b = trace.blocks[0];
  const recipe::GroupStats& stats = b.stats;
  const recipe::BlockScale& s = b.scale;
  std::printf("== %s  %s\n", recipe::RecipeName(r).c_str(), r.source);
  std::printf("1. amax = %s  (NaN %s)\n", F32Text(stats.amax).c_str(),
              r.amax_nan == AmaxNan::kIgnore ? "ignored, fmaxf" : "propagates, torch.amax");
  std::printf("2. scale rule: %s; emax(%s) = %d\n", ScaleRuleText(r.scale_rule), r.element.name, r.element_emax);
  if (r.scale_rule == recipe::ScaleRule::kMxRceil || r.scale_rule == recipe::ScaleRule::kMxNearest) {
    std::printf("   amax * fp32(1/max_elem) = %s * %s = %s\n", F32Text(stats.amax).c_str(),
                F32Text(recipe::MaxNormReciprocal(r)).c_str(), F32Text(s.rule_value).c_str());
  } else {
    // The fields of amax as kFp32 lays them out.
    const std::uint32_t bits = F32Bits(stats.amax);
    const int exponent_field = static_cast<int>(bits >> kFp32.mantissa_bits) & kFp32.MaxExponentField();
    const std::uint32_t mantissa = bits & ((std::uint32_t{1} << kFp32.mantissa_bits) - 1);
    std::printf("   FP32 exponent field of amax = %d, mantissa %s\n", exponent_field, Hex(mantissa).c_str());
  }
  std::string scale_text;
  if (s.code == recipe::kE8m0NanCode) {
    scale_text = "NaN";
    std::printf("3. scale code 0xff: NaN, every element of the block decodes to NaN\n");
  } else {
    scale_text = "2^" + std::to_string(s.exponent);
    std::printf("3. scale exponent e = %d -> E8M0 code %s, X = %s\n", s.exponent, Hex(s.code).c_str(),
                scale_text.c_str());
  }
  const std::string integer_grid =
      r.element.IsFloat() ? "" : ", times 2^" + std::to_string(-r.element_implied_exponent) + " onto the integer grid";
  std::printf("4. scaled elements (%s X%s):\n", r.element_step == recipe::ElementStep::kDivide ? "x /" : "x * 1/",
              integer_grid.c_str());
  PrintElements(r, b, largest);
  const recipe::TraceElement& l = b.elements[static_cast<std::size_t>(largest)];
  return {r.profile, l.input, l.code, l.decoded, scale_text};
}

Largest ExplainNvfp4(const recipe::Recipe& r, const std::string& name, const std::vector<float>& x, int largest) {
  const recipe::TraceTensor trace = TraceOneBlock(r, x);
  const recipe::TraceBlock& b = trace.blocks[0];
  const recipe::GroupStats& stats = b.stats;
  const recipe::TensorScale& t = trace.tensor_scale;
  const recipe::BlockScale& s = b.scale;
  std::printf("== %s (the values are the whole tensor)  %s\n", name.c_str(), r.source);
  std::printf("   scale rule: %s\n", ScaleRuleText(r.scale_rule));
  std::printf("1. tensor amax = %s; tensor scale: encode %s, stored decode %s\n", F32Text(stats.amax).c_str(),
              F32Text(t.encode).c_str(), F32Text(t.decode).c_str());
  std::printf("2. block amax = %s; FP32 block scale before E4M3 = %s\n", F32Text(stats.amax).c_str(),
              F32Text(s.rule_value).c_str());
  std::printf("3. block scale code %s = %s\n", Hex(s.code).c_str(), ExactDecimal(r.scale_format, s.code).c_str());
  std::printf("4. elements %s %s:\n", r.element_step == recipe::ElementStep::kMultiply ? "x *" : "x /",
              F32Text(s.factor).c_str());
  PrintElements(r, b, largest);
  const recipe::TraceElement& l = b.elements[static_cast<std::size_t>(largest)];
  return {name, l.input, l.code, l.decoded, ExactDecimal(r.scale_format, s.code)};
}

Largest ExplainScaled(const recipe::Recipe& r, const std::vector<float>& x, int largest) {
  const recipe::TraceTensor trace = TraceOneBlock(r, x);
  const recipe::TraceBlock& b = trace.blocks[0];
  const recipe::GroupStats& stats = b.stats;
  const recipe::BlockScale& s = b.scale;
  std::printf("== %s  %s\n", recipe::RecipeName(r).c_str(), r.source);
  std::printf("1. min = %s, max = %s, amax = %s  (NaN %s)\n", F32Text(stats.min).c_str(), F32Text(stats.max).c_str(),
              F32Text(stats.amax).c_str(), r.amax_nan == AmaxNan::kIgnore ? "ignored, fmaxf" : "propagates, torch");
  std::printf("2. scale rule: %s\n   scale (stored, dequantizes) = %s; encode factor = %s; zero point %d\n",
              ScaleRuleText(r.scale_rule), F32Text(s.decode).c_str(), F32Text(s.factor).c_str(), s.zero_point);
  const char* rounding = r.element_encode.rounding == RoundingMode::kNearestAway ? "round half away" : "round half even";
  if (r.element.IsFloat()) {
    // FP8 elements (TE, vLLM): the element format bounds the codes; the
    // recipe's integer range [qmin, qmax] is unused (0, 0) for them.
    std::printf("3. elements (%s, %s codes):\n", rounding, r.element.name);
  } else {
    std::printf("3. elements (%s, range [%d, %d]):\n", rounding, r.qmin, r.qmax);
  }
  PrintElements(r, b, largest);
  const recipe::TraceElement& l = b.elements[static_cast<std::size_t>(largest)];
  return {r.profile, l.input, l.code, l.decoded, Decimal(s.decode)};
}

int LargestMagnitude(const std::vector<float>& x) {
  int largest = 0;
  for (int i = 1; i < static_cast<int>(x.size()); ++i) {
    if (F32Abs(x[static_cast<std::size_t>(i)]) > F32Abs(x[static_cast<std::size_t>(largest)])) {
      largest = i;
    }
  }
  return largest;
}

void RunExplain(const ExplainArgs& args) {
  // "mxfp4:ocp,te" -> "mxfp4:ocp", "mxfp4:te"; a part with its own format
  // ("mxfp4:ocp,mxfp4:te") stands as written. Each name is then parsed whole
  // by the one grammar, all of them before anything is printed.
  std::vector<std::string> names;
  const std::size_t colon = args.recipes.find(':');
  const std::size_t first_comma = args.recipes.find(',');
  const std::string format =
      args.recipes.substr(0, colon != std::string::npos && colon < first_comma ? colon : first_comma);
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = args.recipes.find(',', begin);
    const std::string part = args.recipes.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (part.empty()) throw CommandError("empty recipe name in " + QuoteUserWord(args.recipes));
    names.push_back(begin == 0 || part.find(':') != std::string::npos ? part : format + ":" + part);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  std::vector<const recipe::Recipe*> recipes;
  for (const std::string& name : names) recipes.push_back(ParseRecipeOrThrow(name).recipe);
  const recipe::Family family = recipes[0]->family();
  for (std::size_t i = 1; i < recipes.size(); ++i) {
    if (recipes[i]->family() != family) {
      throw CommandError(QuoteUserWord(names[i]) + " is another kind of recipe than " + QuoteUserWord(names[0]));
    }
  }

  std::vector<float> x = ReadF32Values(args.values, "");
  std::vector<Largest> summary;
  if (family == recipe::Family::kScaled) {
    const int largest = LargestMagnitude(x);
    for (const recipe::Recipe* r : recipes) summary.push_back(ExplainScaled(*r, x, largest));
    std::printf("largest element %s:\n", Decimal(x[static_cast<std::size_t>(largest)]).c_str());
    for (const Largest& l : summary) {
      std::printf("  %-12s scale %-14s code %s -> %s\n", l.recipe.c_str(), l.scale.c_str(), Hex(l.code).c_str(),
                  Decimal(l.dequantized).c_str());
    }
    return;
  }
  const int block_size = recipes[0]->layout.size;
  if (static_cast<int>(x.size()) > block_size) {
    std::printf("note: explaining the first block (%d of %zu values)\n", block_size, x.size());
    x.resize(static_cast<std::size_t>(block_size));
  }
  const int largest = LargestMagnitude(x);
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    summary.push_back(family == recipe::Family::kMx ? ExplainMx(*recipes[i], x, largest)
                                                    : ExplainNvfp4(*recipes[i], names[i], x, largest));
  }
  std::printf("largest element %s:\n", Decimal(x[static_cast<std::size_t>(largest)]).c_str());
  for (const Largest& l : summary) {
    std::printf("  %-10s scale %-8s code %s -> %s (error %.9g)\n", l.recipe.c_str(), l.scale.c_str(), Hex(l.code).c_str(),
                Decimal(l.dequantized).c_str(), static_cast<double>(l.dequantized) - static_cast<double>(l.value));
  }
}

}  // namespace

void AddExplainCommand(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand("explain", "Walk one block through a recipe, step by step");
  cmd->add_option("recipe", args->recipes, "FORMAT[:PROFILE[,PROFILE...]], e.g. mxfp4:ocp,te or int8:ao-sym,common")
      ->required();
  cmd->add_option("values", args->values, "The block's numbers")->required();
  cmd->callback([args] { RunExplain(*args); });
}

}  // namespace lowbit::tools
