// `lowbit quantize RECIPE [VALUES...] [--file PATH]`: quantizes numbers with a
// block recipe (formats/block/recipe_name.h) and prints, per block, the scale
// code and the element codes, then the dequantized values and the exact error
// metrics of the oracle (when lowbit::reference is built). Values are read
// exactly and rounded to nearest even into FP32, the recipes' input type.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/block/recipe_name.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/round_pack.h"
#include "parse.h"
#include "value_parse.h"
#include "value_text.h"
#if defined(LOWBIT_HAVE_REFERENCE)
#include "lowbit/reference/block/error_metrics.h"
#endif

namespace lowbit::tools {

// Shared with explain_command.cc (declared there too).
block::NamedRecipe ParseBlockRecipeOrThrow(const std::string& name);
std::vector<float> ReadF32Values(const std::vector<std::string>& texts, const std::string& file);
std::string F32Text(float x);

block::NamedRecipe ParseBlockRecipeOrThrow(const std::string& name) {
  block::NamedRecipe r;
  if (!block::ParseRecipeName(name, &r)) {
    std::string known;
    for (const block::BlockSpec* s : block::kAllBlockSpecs) known += std::string(known.empty() ? "" : ", ") + s->name;
    std::string profiles;
    for (const block::MxRecipe* m : block::kAllMxRecipes) profiles += std::string(profiles.empty() ? "" : ", ") + m->name;
    throw CommandError("unknown recipe '" + name + "' (FORMAT[:PROFILE]; formats: " + known +
                       "; MX profiles: " + profiles + "; NVFP4 profiles: te, ao, modelopt;" +
                       " mxint8 takes ocp, msx, msx-even)");
  }
  return r;
}

std::vector<float> ReadF32Values(const std::vector<std::string>& texts, const std::string& file) {
  std::vector<std::string> all = texts;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) throw CommandError("cannot read " + file);
    std::string word;
    while (in >> word) all.push_back(word);
  }
  if (all.empty()) throw CommandError("no values (give them as arguments or with --file)");
  std::vector<float> out;
  for (const std::string& t : all) {
    const EncodeResult r = RoundPack(kFp32, ParseExactValue(t), EncodeOptions{});
    out.push_back(BitCast<float>(static_cast<std::uint32_t>(r.code)));
  }
  return out;
}

std::string F32Text(float x) {
  return ExactDecimal(kFp32, block::F32Bits(x)) + " (" + Hex(block::F32Bits(x)) + ")";
}

namespace {

struct QuantizeArgs {
  std::string recipe;
  std::vector<std::string> values;
  std::string file;
};

std::string CodeList(const std::vector<std::uint8_t>& codes, long start, long n) {
  std::string s;
  for (long i = start; i < start + n; ++i) s += (i > start ? " " : "") + Hex(codes[static_cast<std::size_t>(i)]);
  return s;
}

void RunQuantize(const QuantizeArgs& args) {
  const block::NamedRecipe r = ParseBlockRecipeOrThrow(args.recipe);
  const std::vector<float> x = ReadF32Values(args.values, args.file);
  const long count = static_cast<long>(x.size());
  const int bs = r.spec->block_size;
  std::vector<std::uint8_t> codes(x.size());
  std::vector<std::uint8_t> scales(static_cast<std::size_t>(block::BlockCount(*r.spec, count)));
  std::vector<float> back(x.size());
  if (r.mx) {
    std::printf("recipe %s:%s  %s\n", r.spec->name, r.mx->name, r.mx->source);
    block::QuantizeMx(*r.spec, *r.mx, x.data(), count, codes.data(), scales.data());
    block::DequantizeMx(*r.spec, codes.data(), scales.data(), count, back.data());
  } else {
    const block::Nvfp4TensorScale t = block::QuantizeNvfp4(r.nvfp4, x.data(), count, codes.data(), scales.data());
    block::DequantizeNvfp4(r.nvfp4, t, codes.data(), scales.data(), count, back.data());
    std::printf("recipe %s  tensor scale %s\n", args.recipe.c_str(), F32Text(t.decode).c_str());
  }
  for (long start = 0, b = 0; start < count; start += bs, ++b) {
    const long n = count - start < bs ? count - start : bs;
    const std::uint8_t sc = scales[static_cast<std::size_t>(b)];
    std::printf("block %ld: scale %s = %s\n  codes: %s\n", b, Hex(sc).c_str(),
                ExactDecimal(*r.spec->scale, sc).c_str(), CodeList(codes, start, n).c_str());
  }
  std::printf("dequantized:");
  for (float v : back) std::printf(" %s", ExactDecimal(kFp32, block::F32Bits(v)).c_str());
  std::printf("\n");
#if defined(LOWBIT_HAVE_REFERENCE)
  const reference::block::ErrorMetrics m = reference::block::ExactErrorMetrics(x, back);
  std::printf("error (exact, %ld finite pairs, %ld left out): mse %.9g  sqnr %.6g dB  max abs %.9g  max rel %.9g\n",
              m.count, m.non_finite, m.mse.convert_to<double>(), m.sqnr_db,
              m.max_abs_error.convert_to<double>(), m.max_rel_error.convert_to<double>());
#endif
}

}  // namespace

void AddQuantizeCommand(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", "Quantize numbers with a block recipe (codes, scales, error)");
  cmd->add_option("recipe", args->recipe, "FORMAT[:PROFILE], e.g. mxfp4:ocp, mxfp8_e4m3:te, nvfp4:modelopt")
      ->required();
  cmd->add_option("values", args->values, "Numbers (decimal, hex float, inf, nan)");
  cmd->add_option("--file", args->file, "Text file of whitespace-separated numbers");
  cmd->callback([args] { RunQuantize(*args); });
}

}  // namespace lowbit::tools
