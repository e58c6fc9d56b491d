// `lowbit explain RECIPE[,PROFILE...] VALUES...`: walks one block through a
// recipe step by step (amax, scale exponent, scale code, scaled elements,
// codes, dequantized values) so a person can see why a code came out. Several
// profiles of one format ("mxfp4:ocp,te") are walked one after the other and
// compared on the block's largest element: for an MXFP4 amax of
// 6 * 2^k * 1.01, OCP floor keeps X = 2^k and clamps it to 6, RCEIL takes
// X = 2^(k+1) and rounds 3.03 to 3. Scaled INT/FP8 recipes ("int8:ao-sym,
// common", "uint4:gptq-sym,gptq-asym", "e4m3:te,te-pow2") are walked the same
// way over the values as one per-tensor group: amax 127.5 shows torchao's
// amax/127.5 reaching -128 where the common amax/127 kernel stops at -127.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/mx_scale_rule.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/block/recipe_name.h"
#include "lowbit/formats/convert.h"
#include "parse.h"
#include "value_text.h"

namespace lowbit::tools {

// Defined in quantize_command.cc.
block::NamedRecipe ParseBlockRecipeOrThrow(const std::string& name);
std::vector<float> ReadF32Values(const std::vector<std::string>& texts, const std::string& file);
std::string F32Text(float x);

namespace {

struct ExplainArgs {
  std::string recipes;
  std::vector<std::string> values;
};

const char* RuleText(block::MxScaleRule rule) {
  switch (rule) {
    case block::MxScaleRule::kFloor: return "floor: e = floor(log2 amax) - emax, from the FP32 exponent bits";
    case block::MxScaleRule::kCeil: return "ceil: e = exponent(amax) + (mantissa != 0) - emax";
    case block::MxScaleRule::kEven: return "even: round amax to the element's mantissa width, then floor";
    case block::MxScaleRule::kRceil: return "RCEIL: X = round_up_pow2(fp32(amax * fp32(1/max_elem)))";
    case block::MxScaleRule::kNearest: return "nearest: X = nearest_pow2(fp32(amax * fp32(1/max_elem))), 1.5*2^k ties up";
  }
  return "";
}

struct Largest {
  std::string recipe;
  float value = 0;
  std::uint8_t code = 0;
  float dequantized = 0;
  std::string scale;
};

Largest ExplainMx(const block::BlockSpec& spec, const block::MxRecipe& recipe, const std::vector<float>& x,
                  int largest) {
  const int n = static_cast<int>(x.size());
  std::vector<std::uint8_t> codes(x.size());
  block::MxTrace trace;
  const std::uint8_t scale = block::QuantizeMxBlock(spec, recipe, x.data(), n, codes.data(), &trace);
  std::vector<float> back(x.size());
  block::DequantizeMxBlock(spec, scale, codes.data(), n, back.data());
  std::printf("== %s:%s  %s\n", spec.name, recipe.name, recipe.source);
  std::printf("1. amax = %s  (NaN %s)\n", F32Text(trace.amax).c_str(),
              recipe.amax_nan == block::AmaxNan::kIgnore ? "ignored, fmaxf" : "propagates, torch.amax");
  std::printf("2. scale rule %s; emax(%s) = %d\n", RuleText(recipe.scale.rule), spec.element->name, spec.element_emax);
  if (recipe.scale.rule == block::MxScaleRule::kRceil || recipe.scale.rule == block::MxScaleRule::kNearest) {
    std::printf("   amax * fp32(1/max_elem) = %s * %s = %s\n", F32Text(trace.amax).c_str(),
                F32Text(block::MaxNormReciprocal(spec)).c_str(), F32Text(trace.scale.rceil_product).c_str());
  } else {
    const std::uint32_t bits = block::F32Bits(trace.amax);
    std::printf("   FP32 exponent field of amax = %d, mantissa %s\n", block::F32ExponentField(bits),
                Hex(block::F32Mantissa(bits)).c_str());
  }
  std::string scale_text;
  if (scale == block::kE8m0NanCode) {
    scale_text = "NaN";
    std::printf("3. scale code 0xff: NaN, every element of the block decodes to NaN\n");
  } else {
    scale_text = "2^" + std::to_string(trace.scale.exponent);
    std::printf("3. scale exponent e = %d -> E8M0 code %s, X = %s\n", trace.scale.exponent, Hex(scale).c_str(),
                scale_text.c_str());
  }
  std::printf("4. scaled elements (%s X%s):\n",
              recipe.scaling == block::ElementScaling::kDivide ? "x /" : "x * 1/",
              spec.element->IsFloat() ? "" : ", times 2^6 onto the integer grid");
  for (int i = 0; i < n; ++i) {
    const std::string element_value = spec.element->IsFloat()
                                          ? ExactDecimal(*spec.element, codes[static_cast<std::size_t>(i)])
                                          : ExactDecimal(kInt8, codes[static_cast<std::size_t>(i)]);
    std::printf("   [%d] %s -> %s -> code %s = %s -> %s%s\n", i, ExactDecimal(kFp32, block::F32Bits(x[static_cast<std::size_t>(i)])).c_str(),
                ExactDecimal(kFp32, block::F32Bits(trace.scaled[i])).c_str(), Hex(codes[static_cast<std::size_t>(i)]).c_str(),
                element_value.c_str(), ExactDecimal(kFp32, block::F32Bits(back[static_cast<std::size_t>(i)])).c_str(),
                i == largest ? "   <- largest" : "");
  }
  return {recipe.name, x[static_cast<std::size_t>(largest)], codes[static_cast<std::size_t>(largest)],
          back[static_cast<std::size_t>(largest)], scale_text};
}

Largest ExplainNvfp4(block::Nvfp4Recipe recipe, const std::string& name, const std::vector<float>& x, int largest) {
  const int n = static_cast<int>(x.size());
  const float tensor_amax = block::AbsMax(x.data(), n, block::Nvfp4AmaxNan(recipe));
  const block::Nvfp4TensorScale t = block::Nvfp4TensorScaleFromAmax(recipe, tensor_amax);
  std::vector<std::uint8_t> codes(x.size());
  block::Nvfp4Trace trace;
  const std::uint8_t scale = block::QuantizeNvfp4Block(recipe, t, x.data(), n, codes.data(), &trace);
  std::printf("== %s (the values are the whole tensor)\n", name.c_str());
  std::printf("1. tensor amax = %s; tensor scale: encode %s, stored decode %s\n", F32Text(tensor_amax).c_str(),
              F32Text(t.encode).c_str(), F32Text(t.decode).c_str());
  std::printf("2. block amax = %s; FP32 block scale before E4M3 = %s\n", F32Text(trace.amax).c_str(),
              F32Text(trace.block_scale_f32).c_str());
  std::printf("3. block scale code %s = %s\n", Hex(scale).c_str(), ExactDecimal(kE4m3, scale).c_str());
  std::printf("4. elements %s %s:\n", recipe == block::Nvfp4Recipe::kTe ? "x *" : "x /",
              F32Text(trace.element_factor).c_str());
  Largest out{name, x[static_cast<std::size_t>(largest)], codes[static_cast<std::size_t>(largest)], 0,
              ExactDecimal(kE4m3, scale)};
  for (int i = 0; i < n; ++i) {
    const float back = block::DequantizeNvfp4Element(recipe, t, scale, codes[static_cast<std::size_t>(i)]);
    if (i == largest) out.dequantized = back;
    std::printf("   [%d] %s -> %s -> code %s = %s -> %s%s\n", i, ExactDecimal(kFp32, block::F32Bits(x[static_cast<std::size_t>(i)])).c_str(),
                ExactDecimal(kFp32, block::F32Bits(trace.scaled[i])).c_str(), Hex(codes[static_cast<std::size_t>(i)]).c_str(),
                ExactDecimal(kE2m1, codes[static_cast<std::size_t>(i)]).c_str(), ExactDecimal(kFp32, block::F32Bits(back)).c_str(),
                i == largest ? "   <- largest" : "");
  }
  return out;
}

const char* SchemeText(block::QuantScheme s) {
  switch (s) {
    case block::QuantScheme::kTeFp8: return "scale = max_fp8 / max(amax, eps) (amax 0/Inf/NaN -> 1, Inf -> FLT_MAX); y = x * scale; satfinite cvt";
    case block::QuantScheme::kAoSymmetric: return "scale = max(amax / ((qmax - qmin) / 2), eps); y = x * fp32(1 / scale); q = clamp(round(y) + zp)";
    case block::QuantScheme::kAoAsymmetric: return "scale = max((max+ - min-) / (qmax - qmin), eps); zp = clamp(qmin - round(min- / scale)); y = x * fp32(1 / scale)";
    case block::QuantScheme::kGptqSymmetric: return "xmin = -xmax if any x < 0; scale = (xmax - xmin) / maxq; zero = (maxq + 1) / 2; y = x / scale";
    case block::QuantScheme::kGptqAsymmetric: return "scale = (xmax - xmin) / maxq; zero = round(-xmin / scale); y = x / scale";
    case block::QuantScheme::kAmaxOverQmax: return "scale = amax / qmax (0 -> 1); y = x / scale; q = clamp(round(y), -qmax, qmax)";
  }
  return "";
}

Largest ExplainScaled(const block::IntQuantRecipe& r, const std::vector<float>& x, int largest) {
  const long n = static_cast<long>(x.size());
  std::vector<block::QuantParams> params(1);
  std::vector<std::uint8_t> codes(x.size());
  block::QuantizeMatrix(r, block::QuantLayout{}, x.data(), 1, n, codes.data(), params.data());
  const block::QuantParams& p = params[0];
  block::GroupGrid grid;
  block::MakeGroupGrid(block::QuantLayout{}, 1, n, &grid);
  const block::GroupStats st = block::StatsOfGroup(r, grid, x.data(), n, 0);
  std::printf("== %s:%s  %s\n", r.element->name, r.name, r.source);
  std::printf("1. min = %s, max = %s, amax = %s  (NaN %s)\n", F32Text(st.min).c_str(), F32Text(st.max).c_str(),
              F32Text(st.amax).c_str(), r.amax_nan == block::AmaxNan::kIgnore ? "ignored, fmaxf" : "propagates, torch");
  std::printf("2. %s\n   scale (stored, dequantizes) = %s; encode factor = %s; zero point %d\n",
              SchemeText(r.scheme), F32Text(p.decode).c_str(), F32Text(p.encode).c_str(), p.zero_point);
  std::printf("3. elements (%s, range [%d, %d]):\n",
              r.rounding == RoundingMode::kNearestAway ? "round half away" : "round half even", r.qmin, r.qmax);
  Largest out{std::string(r.name), x[static_cast<std::size_t>(largest)], codes[static_cast<std::size_t>(largest)], 0,
              ExactDecimal(kFp32, block::F32Bits(p.decode))};
  for (long i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    const float back = block::DequantizeElement(r, p, codes[k]);
    if (i == largest) out.dequantized = back;
    const std::string value = r.scheme == block::QuantScheme::kTeFp8
                                  ? ExactDecimal(*r.element, codes[k])
                                  : std::to_string(block::IntegerOfCode(*r.element, codes[k]));
    std::printf("   [%ld] %s -> %s -> code %s = %s -> %s%s\n", i, ExactDecimal(kFp32, block::F32Bits(x[k])).c_str(),
                ExactDecimal(kFp32, block::F32Bits(block::ScaledElement(r, p, x[k]))).c_str(), Hex(codes[k]).c_str(),
                value.c_str(), ExactDecimal(kFp32, block::F32Bits(back)).c_str(), i == largest ? "   <- largest" : "");
  }
  return out;
}

void RunExplain(const ExplainArgs& args) {
  // "mxfp4:ocp,te" -> "mxfp4:ocp", "mxfp4:te".
  std::vector<std::string> names;
  const std::size_t colon = args.recipes.find(':');
  const std::string format = args.recipes.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : args.recipes.substr(colon + 1);
  do {
    const std::size_t comma = rest.find(',');
    const std::string profile = rest.substr(0, comma);
    names.push_back(profile.empty() ? format : format + ":" + profile);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  } while (!rest.empty());
  std::vector<float> x = ReadF32Values(args.values, "");
  if (block::FindIntQuantRecipe(names[0]) != nullptr) {
    int largest = 0;
    for (int i = 1; i < static_cast<int>(x.size()); ++i) {
      if (block::F32Abs(x[static_cast<std::size_t>(i)]) > block::F32Abs(x[static_cast<std::size_t>(largest)])) largest = i;
    }
    std::vector<Largest> summary;
    for (const std::string& name : names) {
      const block::IntQuantRecipe* r = block::FindIntQuantRecipe(name);
      if (r == nullptr) throw CommandError("unknown scaled recipe '" + name + "'");
      summary.push_back(ExplainScaled(*r, x, largest));
    }
    std::printf("largest element %s:\n", ExactDecimal(kFp32, block::F32Bits(x[static_cast<std::size_t>(largest)])).c_str());
    for (const Largest& l : summary) {
      std::printf("  %-12s scale %-14s code %s -> %s\n", l.recipe.c_str(), l.scale.c_str(), Hex(l.code).c_str(),
                  ExactDecimal(kFp32, block::F32Bits(l.dequantized)).c_str());
    }
    return;
  }
  const block::NamedRecipe first = ParseBlockRecipeOrThrow(names[0]);
  if (static_cast<int>(x.size()) > first.spec->block_size) {
    std::printf("note: explaining the first block (%d of %zu values)\n", first.spec->block_size, x.size());
    x.resize(static_cast<std::size_t>(first.spec->block_size));
  }
  int largest = 0;
  for (int i = 1; i < static_cast<int>(x.size()); ++i) {
    if (block::F32Abs(x[static_cast<std::size_t>(i)]) > block::F32Abs(x[static_cast<std::size_t>(largest)])) largest = i;
  }
  std::vector<Largest> summary;
  for (const std::string& name : names) {
    const block::NamedRecipe r = ParseBlockRecipeOrThrow(name);
    summary.push_back(r.mx ? ExplainMx(*r.spec, *r.mx, x, largest) : ExplainNvfp4(r.nvfp4, name, x, largest));
  }
  std::printf("largest element %s:\n", ExactDecimal(kFp32, block::F32Bits(x[static_cast<std::size_t>(largest)])).c_str());
  for (const Largest& l : summary) {
    std::printf("  %-10s scale %-8s code %s -> %s (error %.9g)\n", l.recipe.c_str(), l.scale.c_str(), Hex(l.code).c_str(),
                ExactDecimal(kFp32, block::F32Bits(l.dequantized)).c_str(),
                static_cast<double>(l.dequantized) - static_cast<double>(l.value));
  }
}

}  // namespace

void AddExplainCommand(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand("explain", "Walk one block through a recipe, step by step");
  cmd->add_option("recipe", args->recipes, "FORMAT[:PROFILE[,PROFILE...]], e.g. mxfp4:ocp,te")->required();
  cmd->add_option("values", args->values, "The block's numbers")->required();
  cmd->callback([args] { RunExplain(*args); });
}

}  // namespace lowbit::tools
