// `lowbit quantize RECIPE [VALUES...] [--file PATH]`: quantizes numbers with a
// block recipe (formats/block/recipe_name.h) and prints, per block, the scale
// code and the element codes, then the dequantized values and the exact error
// metrics of the oracle (when lowbit::reference is built). Values are read
// exactly and rounded to nearest even into FP32, the recipes' input type.
// Scaled INT8/INT4/UINT4/FP8 recipes (formats/block/int_quant_recipe.h, e.g.
// int8:ao-sym, uint4:gptq-sym, e4m3:te) also take --shape ROWSxCOLS,
// --layout tensor|row|channel|token|group:G|block:RxG and --static LO,HI
// (a calibrated range instead of the data's own statistics).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_recipe.h"
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

std::string ScaledRecipeNames() {
  std::string names;
  for (const block::IntQuantRecipe* r : block::kAllIntQuantRecipes) {
    names += std::string(names.empty() ? "" : ", ") + r->element->name + ":" + r->name;
  }
  return names;
}

// Recipe names go through the one grammar (formats/.../recipe/names.h); its
// message names the problem and, on a near miss, what was probably meant.
block::NamedRecipe ParseBlockRecipeOrThrow(const std::string& name) {
  block::NamedRecipe r;
  std::string error;
  if (!block::ParseRecipeName(name, &r, &error)) {
    if (block::FindIntQuantRecipe(name) != nullptr) {
      error = "'" + name + "' is a scaled recipe; give it to `lowbit quantize`";
    }
    throw CommandError(error + " (lowbit list recipes)");
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
  std::string shape;            // ROWSxCOLS; default 1 x count
  std::string layout = "tensor";
  std::string static_range;     // LO,HI
};

std::string CodeList(const std::vector<std::uint8_t>& codes, long start, long n) {
  std::string s;
  for (long i = start; i < start + n; ++i) s += (i > start ? " " : "") + Hex(codes[static_cast<std::size_t>(i)]);
  return s;
}

long ParseCount(const std::string& text, const char* what) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) throw CommandError(std::string("bad ") + what + " '" + text + "'");
  return v;
}

// recipe::ParseLayout, the grammar's own: "tensor", "row" / "channel" /
// "token", "group:G" (or "gG"), "block:RxG" (or "tile:RxG").
block::QuantLayout ParseLayout(const std::string& text) {
  recipe::Layout layout;
  std::string error;
  if (!recipe::ParseLayout(text, &layout, &error)) throw CommandError(error);
  block::QuantLayout l;
  switch (layout.geometry) {
    case recipe::Geometry::kPerTensor: l.granularity = block::Granularity::kPerTensor; break;
    case recipe::Geometry::kPerRow: l.granularity = block::Granularity::kPerRow; break;
    case recipe::Geometry::kGroup: l.granularity = block::Granularity::kPerGroup; break;
    default: l.granularity = block::Granularity::kBlock2d; break;
  }
  l.group = layout.size;
  l.block_rows = layout.tile_rows;
  return l;
}

std::string LayoutText(const block::QuantLayout& l) {
  switch (l.granularity) {
    case block::Granularity::kPerTensor: return "per tensor";
    case block::Granularity::kPerRow: return "per row (channel / token)";
    case block::Granularity::kPerGroup: return "per group of " + std::to_string(l.group) + " along K";
    case block::Granularity::kBlock2d:
      return "2-D blocks of " + std::to_string(l.block_rows) + "x" + std::to_string(l.group);
  }
  return "";
}

void PrintErrorMetrics(const std::vector<float>& x, const std::vector<float>& back) {
#if defined(LOWBIT_HAVE_REFERENCE)
  const reference::block::ErrorMetrics m = reference::block::ExactErrorMetrics(x, back);
  std::printf("error (exact, %ld finite pairs, %ld left out): mse %.9g  sqnr %.6g dB  max abs %.9g  max rel %.9g\n",
              m.count, m.non_finite, m.mse.convert_to<double>(), m.sqnr_db,
              m.max_abs_error.convert_to<double>(), m.max_rel_error.convert_to<double>());
#else
  (void)x;
  (void)back;
#endif
}

void RunScaledQuantize(const block::IntQuantRecipe& r, const QuantizeArgs& args) {
  const std::vector<float> x = ReadF32Values(args.values, args.file);
  const long count = static_cast<long>(x.size());
  long rows = 1;
  long cols = count;
  if (!args.shape.empty()) {
    const std::size_t sep = args.shape.find('x');
    if (sep == std::string::npos) throw CommandError("bad shape '" + args.shape + "' (ROWSxCOLS)");
    rows = ParseCount(args.shape.substr(0, sep), "rows");
    cols = ParseCount(args.shape.substr(sep + 1), "columns");
    if (rows * cols != count) {
      throw CommandError("shape " + args.shape + " needs " + std::to_string(rows * cols) + " values, got " +
                         std::to_string(count));
    }
  }
  const block::QuantLayout layout = ParseLayout(args.layout);
  block::GroupGrid grid;
  const block::QuantStatus st = block::MakeGroupGrid(layout, rows, cols, &grid);
  if (st != block::QuantStatus::kOk) {
    throw CommandError(std::string(block::QuantStatusText(st)) + " (shape " + std::to_string(rows) + "x" +
                       std::to_string(cols) + ", layout " + args.layout + ")");
  }
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  if (args.static_range.empty()) {
    block::ChooseQuantParams(r, layout, x.data(), rows, cols, params.data());
  } else {
    const std::size_t comma = args.static_range.find(',');
    if (comma == std::string::npos) throw CommandError("bad --static '" + args.static_range + "' (LO,HI)");
    const std::vector<float> range =
        ReadF32Values({args.static_range.substr(0, comma), args.static_range.substr(comma + 1)}, "");
    for (block::QuantParams& p : params) p = block::QuantParamsFromStats(r, block::StatsOfRange(range[0], range[1]));
  }
  std::vector<std::uint8_t> codes(x.size());
  std::vector<float> back(x.size());
  block::QuantizeWithParams(r, layout, x.data(), rows, cols, params.data(), codes.data());
  block::DequantizeMatrix(r, layout, codes.data(), rows, cols, params.data(), back.data());
  std::printf("recipe %s:%s  %s\n", r.element->name, r.name, r.source);
  std::printf("shape %ldx%ld, %s, %ld group%s, %s scales\n", rows, cols, LayoutText(layout).c_str(), grid.Count(),
              grid.Count() == 1 ? "" : "s", args.static_range.empty() ? "dynamic" : "static");
  for (long g = 0; g < grid.Count(); ++g) {
    const block::QuantParams& p = params[static_cast<std::size_t>(g)];
    std::printf("group %ld: scale %s  encode %s  zero point %d\n  codes:", g, F32Text(p.decode).c_str(),
                F32Text(p.encode).c_str(), p.zero_point);
    for (long i = 0; i < rows; ++i) {
      for (long j = 0; j < cols; ++j) {
        if (block::GroupOf(grid, i, j) == g) std::printf(" %s", Hex(codes[static_cast<std::size_t>(i * cols + j)]).c_str());
      }
    }
    std::printf("\n");
  }
  std::printf("dequantized:");
  for (float v : back) std::printf(" %s", ExactDecimal(kFp32, block::F32Bits(v)).c_str());
  std::printf("\n");
  PrintErrorMetrics(x, back);
}

void RunQuantize(const QuantizeArgs& args) {
  if (const block::IntQuantRecipe* scaled = block::FindIntQuantRecipe(args.recipe)) {
    RunScaledQuantize(*scaled, args);
    return;
  }
  if (!args.shape.empty() || args.layout != "tensor" || !args.static_range.empty()) {
    throw CommandError("--shape, --layout and --static apply to scaled recipes (" + ScaledRecipeNames() + ")");
  }
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
  PrintErrorMetrics(x, back);
}

}  // namespace

void AddQuantizeCommand(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", "Quantize numbers with a block recipe (codes, scales, error)");
  cmd->add_option("recipe", args->recipe, "FORMAT[:PROFILE], e.g. mxfp4:ocp, mxfp8_e4m3:te, nvfp4:modelopt, int8:ao-sym, e4m3:te")
      ->required();
  cmd->add_option("values", args->values, "Numbers (decimal, hex float, inf, nan)");
  cmd->add_option("--file", args->file, "Text file of whitespace-separated numbers");
  cmd->add_option("--shape", args->shape, "Scaled recipes: ROWSxCOLS of the row-major matrix (default 1xN)");
  cmd->add_option("--layout", args->layout, "Scaled recipes: tensor, row, channel, token, group:G, block:RxG");
  cmd->add_option("--static", args->static_range, "Scaled recipes: calibrated range LO,HI (static scales)");
  cmd->callback([args] { RunQuantize(*args); });
}

}  // namespace lowbit::tools
