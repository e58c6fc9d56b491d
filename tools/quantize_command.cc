// `lowbit quantize RECIPE [VALUES...] [--file PATH]`: quantizes numbers with a
// recipe of the catalog (formats/spec/.../recipe/catalog.h, names parsed by
// recipe::ParseTarget) and prints, per block or group, the scale and the
// element codes, then the dequantized values and the exact error metrics of
// the oracle (when lowbit::reference is built). Values are read exactly and
// rounded to nearest even into FP32, the recipes' input type. Every number
// printed comes from the model: for scaled recipes read from its trace of
// the tensor (formats/.../recipe/trace.h, trace_tensor.h); for MX and NVFP4,
// whose inputs can be whole files, from the registry's scalar recipe rows
// (the model's tensor.h functions over the shared thread pool), which store
// scale codes and codes and no trace.
//
// MX and NVFP4 recipes take the values as one flat vector in 1-D blocks.
// Scaled INT8/INT4/UINT4/FP8 recipes (e.g. int8:ao-sym, uint4:gptq-sym,
// e4m3:te) also take --shape ROWSxCOLS, a layout (in the name,
// int4:ao-sym/g2, or --layout tensor|row|channel|token|group:G|block:RxG)
// and --static LO,HI (a calibrated range instead of the data's own
// statistics). The recipes that take a given scale (the vLLM FP8 ones,
// recipe::TakesGivenScale: static_scaled_fp8_quant, the KV cache's k_scale /
// v_scale) also take --scale S (one stored FP32 scale for every group) or
// --scale S1,S2,... / --scale-file PATH (one per group of the layout, e.g.
// per KV head with the layout gHEAD_SIZE); each must be a finite number > 0.
// They run on the model's steps, which is the scalar registry row (the SIMD
// and CUDA rows refuse given scales).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "f32_values.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/recipe/trace_tensor.h"
#include "lowbit/formats/round_pack.h"
#include "lowbit/formats/user_word.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/parallel.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"
#include "parse.h"
#include "value_text.h"
#if defined(LOWBIT_HAVE_REFERENCE)
#include "lowbit/reference/block/error_metrics.h"
#endif

namespace lowbit::tools {

std::string ScaledRecipeNames() {
  std::string names;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() == recipe::Family::kScaled) names += (names.empty() ? "" : ", ") + recipe::RecipeName(r);
  }
  return names;
}

namespace {

struct QuantizeArgs {
  std::string recipe;
  std::vector<std::string> values;
  std::string file;
  std::string shape;         // ROWSxCOLS; default 1 x count
  std::string layout;        // empty: the name's layout, else per tensor
  std::string static_range;  // LO,HI
  std::string given_scale;   // --scale S or S1,S2,...
  std::string scale_file;    // --scale-file PATH
};

// One dimension of --shape: a whole number from 1 to `max` (the number of
// values given, so that rows x cols cannot overflow: both are at most 2^25
// with the 64 MiB --file limit). The product is checked against the count by
// the caller.
long ParseDimension(const std::string& text, const char* what, const std::string& shape, long max) {
  std::uint64_t v = 0;
  try {
    v = ParseUnsigned(text, ~std::uint64_t{0}, "--shape");
  } catch (const CommandError&) {
    throw CommandError("--shape " + QuoteUserWord(shape) + ": " + what + " " + QuoteUserWord(text) +
                       " is not a whole number (ROWSxCOLS, e.g. 2x16)");
  }
  if (v == 0) throw CommandError("--shape " + QuoteUserWord(shape) + ": " + what + " must be at least 1");
  if (v > static_cast<std::uint64_t>(max)) {
    throw CommandError("--shape " + QuoteUserWord(shape) + ": " + what + " " + std::to_string(v) + " is more than the " +
                       std::to_string(max) + " value" + (max == 1 ? "" : "s") + " given");
  }
  return static_cast<long>(v);
}

std::string LayoutText(const recipe::Layout& l) {
  switch (l.geometry) {
    case recipe::Geometry::kPerTensor: return "per tensor";
    case recipe::Geometry::kPerRow: return "per row (channel / token)";
    case recipe::Geometry::kBlock1d: return "1-D blocks of " + std::to_string(l.size);
    case recipe::Geometry::kGroup: return "per group of " + std::to_string(l.size) + " along K";
    case recipe::Geometry::kTile2d: return "2-D blocks of " + std::to_string(l.tile_rows) + "x" + std::to_string(l.size);
  }
  return "";
}

// The CLI spells a 2-D tile "block:RxG", so a tile that does not fit is a
// block height here.
std::string StatusText(recipe::TensorStatus st) {
  if (st == recipe::TensorStatus::kRowsNotMultipleOfTile) return "rows are not a multiple of the block height";
  return recipe::TensorStatusText(st);
}

// The element codes of one group, in the group's row-major order.
std::string GroupCodes(const recipe::Recipe& r, const recipe::GroupGrid& g, long group,
                       const std::vector<std::uint8_t>& codes) {
  std::string s;
  recipe::ForEachInGroup(g, group, [&](long k) {
    s += (s.empty() ? "" : " ") + Hex(recipe::LoadCode(r.packing, codes.data(), k));
  });
  return s;
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

void PrintDequantized(const std::vector<float>& back) {
  std::printf("dequantized:");
  for (float v : back) std::printf(" %s", ExactDecimal(kFp32, F32Bits(v)).c_str());
  std::printf("\n");
}

// The layout of a scaled recipe: from the name ("int4:ao-sym/g2"), from
// --layout, or per tensor; not from both.
recipe::Layout ScaledLayout(const recipe::Target& t, const QuantizeArgs& args, std::string* text) {
  const std::size_t slash = args.recipe.find('/');
  if (slash == std::string::npos) {
    *text = args.layout.empty() ? "tensor" : args.layout;
    recipe::Layout layout;
    std::string error;
    if (!recipe::ParseLayout(*text, &layout, &error)) throw CommandError("--layout: " + error);
    return layout;
  }
  if (!args.layout.empty()) {
    throw CommandError("two layouts: " + QuoteUserWord(args.recipe.substr(slash + 1)) +
                       " in the recipe name and --layout " + QuoteUserWord(args.layout) + " (give one)");
  }
  *text = args.recipe.substr(slash + 1);
  return t.layout;
}

// --static LO,HI: a calibrated range is two finite numbers with LO <= HI
// (a NaN or infinite bound gives no scale, and LO > HI no range).
recipe::GroupStats StaticRange(const std::string& text) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) {
    throw CommandError("--static " + QuoteUserWord(text) + ": expected LO,HI, e.g. -2.5,3");
  }
  const std::vector<float> range = ReadF32Values({text.substr(0, comma), text.substr(comma + 1)}, "");
  for (float bound : range) {
    if (!std::isfinite(bound)) {
      throw CommandError("--static " + QuoteUserWord(text) + ": LO and HI must be finite numbers (got " +
                         F32Text(bound) + ")");
    }
  }
  if (range[0] > range[1]) {
    throw CommandError("--static " + QuoteUserWord(text) + ": LO " + F32Text(range[0]) + " is greater than HI " +
                       F32Text(range[1]));
  }
  return recipe::StatsOfRange(range[0], range[1]);
}

// --scale S[,S...] or --scale-file PATH: the given (static) scales, each a
// finite number > 0 (a zero, negative, infinite or NaN scale gives no codes
// a kernel would: vLLM divides by it or multiplies by its reciprocal), and
// either one for every group or one per group (`groups` of the layout).
std::vector<float> GivenScales(const recipe::Recipe& r, const QuantizeArgs& args, long groups,
                               const std::string& layout_text) {
  const std::string what = args.scale_file.empty() ? "--scale " + QuoteUserWord(args.given_scale)
                                                   : "--scale-file " + QuoteUserWord(args.scale_file);
  if (!args.given_scale.empty() && !args.scale_file.empty()) throw CommandError("give --scale or --scale-file, not both");
  if (!args.static_range.empty()) throw CommandError(what + " and --static: give one (a scale, or a range to derive it)");
  if (!recipe::TakesGivenScale(r)) {
    throw CommandError(recipe::RecipeName(r) + " takes no given scale (only the vLLM FP8 recipes do: e4m3:vllm, "
                       "e4m3:vllm-token, e4m3:vllm-kv; the others derive their scale from the data)");
  }
  std::vector<std::string> words;
  if (!args.given_scale.empty()) {
    std::size_t begin = 0;
    for (;;) {
      const std::size_t comma = args.given_scale.find(',', begin);
      words.push_back(args.given_scale.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
      if (words.back().empty()) throw CommandError(what + ": an empty scale (S, or S1,S2,... one per group)");
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
  }
  std::vector<float> scales;
  try {
    scales = ReadF32Values(words, args.scale_file);
  } catch (const CommandError& e) {
    throw CommandError(what + ": " + e.what());
  }
  for (std::size_t i = 0; i < scales.size(); ++i) {
    const float s = scales[i];
    if (!std::isfinite(s) || !(s > 0.0f)) {
      throw CommandError(what + ": scale " + std::to_string(i + 1) + " is " + F32Text(s) +
                         "; a given scale must be a finite number > 0");
    }
  }
  if (scales.size() != 1 && static_cast<long>(scales.size()) != groups) {
    throw CommandError(what + ": " + std::to_string(scales.size()) + " scales for " + std::to_string(groups) +
                       " group" + (groups == 1 ? "" : "s") + " (layout " + layout_text +
                       "); give 1, or one per group (per head: the layout gHEAD_SIZE)");
  }
  return scales;
}

void RunScaledQuantize(const recipe::Recipe& r, const recipe::Target& t, const QuantizeArgs& args) {
  const std::vector<float> x = ReadF32Values(args.values, args.file);
  const long count = static_cast<long>(x.size());
  long rows = 1;
  long cols = count;
  if (!args.shape.empty()) {
    const std::size_t sep = args.shape.find('x');
    if (sep == std::string::npos) throw CommandError("--shape " + QuoteUserWord(args.shape) + ": expected ROWSxCOLS, e.g. 2x16");
    rows = ParseDimension(args.shape.substr(0, sep), "rows", args.shape, count);
    cols = ParseDimension(args.shape.substr(sep + 1), "columns", args.shape, count);
    // rows, cols <= count < 2^31 here, so the product fits in a long.
    if (rows * cols != count) {
      throw CommandError("--shape " + QuoteUserWord(args.shape) + " needs " + std::to_string(rows * cols) + " values, got " +
                         std::to_string(count));
    }
  }
  std::string layout_text;
  const recipe::Layout layout = ScaledLayout(t, args, &layout_text);
  recipe::GroupGrid grid;
  const recipe::TensorStatus st = recipe::MakeGroupGrid(r, layout, rows, cols, &grid);
  if (st != recipe::TensorStatus::kOk) {
    throw CommandError(StatusText(st) + " (shape " + std::to_string(rows) + "x" + std::to_string(cols) + ", layout " +
                       layout_text + ")");
  }

  // The model's trace, each group's scale from its own statistics
  // (dynamic), from the calibrated range (static, the same for every group),
  // or given (one for every group or one per group).
  recipe::TraceTensor trace;
  const bool given = !args.given_scale.empty() || !args.scale_file.empty();
  recipe::TensorStatus traced = recipe::TensorStatus::kOk;
  if (given) {
    const std::vector<float> given_scales = GivenScales(r, args, grid.Count(), layout_text);
    traced = recipe::TraceTensorWithGivenScales(r, layout, x.data(), rows, cols, given_scales.data(),
                                                static_cast<long>(given_scales.size()), &trace);
  } else if (args.static_range.empty()) {
    traced = recipe::TraceTensorOf(r, layout, x.data(), rows, cols, &trace);
  } else {
    traced = recipe::TraceTensorWithRange(r, layout, x.data(), rows, cols, StaticRange(args.static_range), &trace);
  }
  if (traced != recipe::TensorStatus::kOk) throw CommandError(StatusText(traced));
  std::vector<float> back(x.size());
  for (const recipe::TraceBlock& b : trace.blocks) {
    for (const recipe::TraceElement& e : b.elements) back[static_cast<std::size_t>(e.index)] = e.decoded;
  }

  std::printf("recipe %s  %s\n", recipe::RecipeName(r).c_str(), r.source);
  std::printf("shape %ldx%ld, %s, %ld group%s, %s scales\n", rows, cols, LayoutText(layout).c_str(), grid.Count(),
              grid.Count() == 1 ? "" : "s", given ? "given" : args.static_range.empty() ? "dynamic" : "static");
  for (const recipe::TraceBlock& b : trace.blocks) {
    std::string codes;
    for (const recipe::TraceElement& e : b.elements) codes += (codes.empty() ? "" : " ") + Hex(e.code);
    std::printf("group %ld: scale %s  encode %s  zero point %d\n  codes: %s\n", b.index, F32Text(b.scale.decode).c_str(),
                F32Text(b.scale.factor).c_str(), b.scale.zero_point, codes.c_str());
  }
  PrintDequantized(back);
  PrintErrorMetrics(x, back);
}

// recipe::QuantizeTensor then DequantizeTensor over [1, count] in the
// recipe's own layout, as the registry's scalar recipe rows (which are those
// functions) split over every core by the one shared pool
// (registry/parallel.h: whole blocks per thread, bit for bit one thread's).
void RunModelRowsOnAllCores(const recipe::Recipe& r, const std::vector<float>& x, long count,
                            const recipe::QuantizedTensor& q, std::vector<float>& back) {
  static const registry::Registry* const rows = [] {
    auto* table = new registry::Registry();  // built once, never destroyed
    registry::RegisterScalarRecipes(*table);
    return table;
  }();
  registry::RecipeArgs args;
  recipe::Target target;
  target.kind = recipe::Target::Kind::kRecipe;
  target.recipe = &r;
  target.layout = r.layout;
  args.target = target;
  args.rows = 1;
  args.cols = static_cast<std::size_t>(count);
  for (registry::RecipeOperation op : registry::kAllRecipeOperations) {
    args.operation = op;
    // The row the registry chooses for host buffers (registry/choose.h), as
    // for the Python package; this table holds the model's rows only.
    const registry::RecipeEntry* row = registry::ChooseRecipeRow(*rows, args, registry::Memory::kHost);
    const bool quantize = op == registry::RecipeOperation::kQuantizeRecipe;
    args.x = quantize ? x.data() : nullptr;
    args.q = q;
    args.out = quantize ? nullptr : back.data();
    const registry::Status st = row != nullptr ? registry::RunParallel(*row, args) : registry::Status::Ok();
    if (row == nullptr) {
      // Not a registry row: the model on this thread.
      if (quantize) {
        recipe::QuantizeTensor(r, r.layout, x.data(), 1, count, q);
      } else {
        recipe::DequantizeTensor(r, r.layout, recipe::AsConst(q), 1, count, back.data());
      }
    } else if (!st.ok) {
      throw CommandError(st.message);
    }
  }
}

// MX and NVFP4: the values as one flat vector in the recipe's 1-D blocks (a
// "/gN" in the name can only repeat the block size).
void RunBlockQuantize(const recipe::Recipe& r, const QuantizeArgs& args) {
  const std::vector<float> x = ReadF32Values(args.values, args.file);
  const long count = static_cast<long>(x.size());
  recipe::GroupGrid grid;
  const recipe::TensorStatus st = recipe::MakeGroupGrid(r, r.layout, 1, count, &grid);
  if (st != recipe::TensorStatus::kOk) throw CommandError(StatusText(st));
  const recipe::BufferSizes sizes = recipe::SizesOf(r, grid);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<std::uint8_t> scale_codes(static_cast<std::size_t>(sizes.scale_codes));
  recipe::TensorScale tensor_scale;
  recipe::QuantizedTensor q;
  q.codes = codes.data();
  q.scale_codes = scale_codes.data();
  q.tensor_scale = sizes.tensor_scales > 0 ? &tensor_scale : nullptr;
  std::vector<float> back(x.size());
  RunModelRowsOnAllCores(r, x, count, q, back);

  if (q.tensor_scale != nullptr) {
    std::printf("recipe %s  tensor scale %s\n", args.recipe.c_str(), F32Text(tensor_scale.decode).c_str());
  } else {
    std::printf("recipe %s  %s\n", recipe::RecipeName(r).c_str(), r.source);
  }
  for (long b = 0; b < grid.Count(); ++b) {
    const std::uint8_t sc = scale_codes[static_cast<std::size_t>(b)];
    std::printf("block %ld: scale %s = %s\n  codes: %s\n", b, Hex(sc).c_str(), ValueText(r.scale_format, sc).c_str(),
                GroupCodes(r, grid, b, codes).c_str());
  }
  PrintDequantized(back);
  PrintErrorMetrics(x, back);
}

void RunQuantize(const QuantizeArgs& args) {
  const recipe::Target t = ParseRecipeOrThrow(args.recipe);
  const recipe::Recipe& r = *t.recipe;
  if (r.family() == recipe::Family::kScaled) {
    RunScaledQuantize(r, t, args);
    return;
  }
  if (!args.shape.empty() || (!args.layout.empty() && args.layout != "tensor") || !args.static_range.empty() ||
      !args.given_scale.empty() || !args.scale_file.empty()) {
    throw CommandError("--shape, --layout, --static, --scale and --scale-file apply to scaled recipes (" +
                       ScaledRecipeNames() + ")");
  }
  RunBlockQuantize(r, args);
}

}  // namespace

void AddQuantizeCommand(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  CLI::App* cmd = app.add_subcommand("quantize", "Quantize numbers with a recipe (codes, scales, error)");
  cmd->add_option("recipe", args->recipe,
                  "FORMAT[:PROFILE][/LAYOUT], e.g. mxfp4:ocp, mxfp8_e4m3:te, nvfp4:modelopt, int8:ao-sym, "
                  "int4:ao-sym/g2, e4m3:te")
      ->required();
  cmd->add_option("values", args->values, "Numbers (decimal, hex float, inf, nan)");
  cmd->add_option("--file", args->file, "Text file of whitespace-separated numbers");
  cmd->add_option("--shape", args->shape, "Scaled recipes: ROWSxCOLS of the row-major matrix (default 1xN)");
  cmd->add_option("--layout", args->layout,
                  "Scaled recipes: tensor (default), row, channel, token, group:G, block:RxG");
  cmd->add_option("--static", args->static_range, "Scaled recipes: calibrated range LO,HI (static scales)");
  cmd->add_option("--scale", args->given_scale,
                  "vLLM FP8 recipes: given stored scale S (every group) or S1,S2,... (one per group, e.g. per "
                  "KV head with /gHEAD_SIZE); finite, > 0");
  cmd->add_option("--scale-file", args->scale_file,
                  "vLLM FP8 recipes: text file of given scales (1, or one per group), as --scale");
  cmd->callback([args] { RunQuantize(*args); });
}

}  // namespace lowbit::tools
