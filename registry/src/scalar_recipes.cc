// The recipe rows' names, buffer sizes and the scalar backend: the block
// models themselves (mx_recipe.h, nvfp4_recipe.h, int_quant.h + packing.h).
#include <cstring>
#include <string>

#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

namespace {

// nvfp4_recipe.h FindNvfp4Recipe spells them so.
constexpr const char* kNvfp4Profiles[] = {"te", "ao", "modelopt"};

// The layouts every int_quant_recipe.h recipe is listed with: "/g128"
// (INT4-g128, the weight-only layout of AO, GPTQ and AWQ by default; also
// per-group INT8 / FP8), "/row" (AO
// per-channel weights and per-token activations) and "/tensor" (TE current
// scaling, AO per-tensor).
constexpr const char* kIntLayoutSuffixes[] = {"/g128", "/row", "/tensor"};

block::QuantLayout IntLayout(const RecipeParts& parts) { return {parts.granularity, parts.group, 0}; }

// INT4 / UINT4 codes travel packed two per byte, INT8 / FP8 one per byte.
bool PackedCodes(const block::IntQuantRecipe& r) { return r.element->total_bits == 4; }

Status RunScalarRecipe(const RecipeArgs& a) {
  RecipeParts parts;
  const RecipeBuffers sizes = RecipeBufferSizes(a.recipe, a.rows, a.cols);
  if (!ParseRecipe(a.recipe, &parts) || !sizes.ok) {
    return Status::Error("scalar: unknown recipe or untiled shape: " + a.recipe);
  }
  const std::size_t count = a.rows * a.cols;
  const bool quantize = a.operation == RecipeOperation::kQuantizeRecipe;
  if (count == 0) return Status::Ok();
  if (a.codes == nullptr || a.scales == nullptr || (quantize ? a.x == nullptr : a.out == nullptr)) {
    return Status::Error("scalar: null buffer for " + a.recipe);
  }
  const long n = static_cast<long>(count);
  if (parts.int_recipe != nullptr) {
    auto* params = reinterpret_cast<block::QuantParams*>(a.scales);
    std::string codes(count, '\0');
    auto* c = reinterpret_cast<std::uint8_t*>(codes.data());
    const long rows = static_cast<long>(a.rows), cols = static_cast<long>(a.cols);
    const bool packed = PackedCodes(*parts.int_recipe);
    if (!packed) c = a.codes;
    if (quantize) {
      block::QuantizeMatrix(*parts.int_recipe, IntLayout(parts), a.x, rows, cols, c, params);
      if (packed) block::PackNibbles(c, n, block::NibbleOrder::kLowFirst, a.codes);
    } else {
      if (packed) block::UnpackNibbles(a.codes, n, block::NibbleOrder::kLowFirst, c);
      block::DequantizeMatrix(*parts.int_recipe, IntLayout(parts), c, rows, cols, params, a.out);
    }
    return Status::Ok();
  }
  const block::BlockSpec& spec = *parts.block.spec;
  if (&spec == &block::kNvfp4) {
    const std::size_t blocks = (count + 15) / 16;
    if (quantize) {
      const block::Nvfp4TensorScale t =
          block::QuantizeNvfp4(parts.block.nvfp4, a.x, n, a.codes, a.scales);
      std::memcpy(a.scales + blocks, &t, sizeof(t));
    } else {
      block::Nvfp4TensorScale t;
      std::memcpy(&t, a.scales + blocks, sizeof(t));
      block::DequantizeNvfp4(parts.block.nvfp4, t, a.codes, a.scales, n, a.out);
    }
    return Status::Ok();
  }
  if (quantize) {
    block::QuantizeMx(spec, *parts.block.mx, a.x, n, a.codes, a.scales);
  } else {
    block::DequantizeMx(spec, a.codes, a.scales, n, a.out);
  }
  return Status::Ok();
}

}  // namespace

const char* RecipeOperationName(RecipeOperation operation) {
  return operation == RecipeOperation::kQuantizeRecipe ? "quantize-recipe" : "dequantize-recipe";
}

std::vector<std::string> AllRecipeNames() {
  std::vector<std::string> names;
  for (const block::BlockSpec* spec : block::kAllBlockSpecs) {
    if (spec == &block::kNvfp4) {
      for (const char* p : kNvfp4Profiles) names.push_back(std::string(spec->name) + ":" + p);
      continue;
    }
    for (const block::MxRecipe* r : block::kAllMxRecipes) {
      if (block::MxRecipeApplies(*spec, *r)) names.push_back(std::string(spec->name) + ":" + r->name);
    }
  }
  for (const block::IntQuantRecipe* r : block::kAllIntQuantRecipes) {
    for (const char* suffix : kIntLayoutSuffixes) {
      names.push_back(std::string(r->element->name) + ":" + r->name + suffix);
    }
  }
  return names;
}

bool ParseRecipe(std::string_view name, RecipeParts* out) {
  *out = RecipeParts{};
  const std::size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    const block::IntQuantRecipe* r = block::FindIntQuantRecipe(name.substr(0, slash));
    if (r == nullptr) return false;
    const std::string_view layout = name.substr(slash);
    if (layout == "/row" || layout == "/tensor") {
      out->int_recipe = r;
      out->granularity = layout == "/row" ? block::Granularity::kPerRow : block::Granularity::kPerTensor;
      return true;
    }
    if (layout.substr(0, 2) != "/g") return false;
    const std::string_view group = layout.substr(2);
    if (group.empty()) return false;
    int g = 0;
    for (char c : group) {
      if (c < '0' || c > '9' || g > 1 << 20) return false;
      g = g * 10 + (c - '0');
    }
    out->int_recipe = r;
    out->group = g;
    return g > 0;
  }
  return block::ParseRecipeName(name, &out->block) && out->block.spec != nullptr;
}

RecipeBuffers RecipeBufferSizes(std::string_view recipe, std::size_t rows, std::size_t cols) {
  RecipeParts parts;
  if (!ParseRecipe(recipe, &parts)) return {};
  const std::size_t count = rows * cols;
  if (parts.int_recipe != nullptr) {
    block::GroupGrid grid;
    if (block::MakeGroupGrid(IntLayout(parts), static_cast<long>(rows), static_cast<long>(cols), &grid) !=
        block::QuantStatus::kOk) {
      return {};
    }
    const std::size_t codes = PackedCodes(*parts.int_recipe) ? (count + 1) / 2 : count;
    return {true, codes, static_cast<std::size_t>(grid.Count()) * sizeof(block::QuantParams)};
  }
  const std::size_t bs = static_cast<std::size_t>(parts.block.spec->block_size);
  const std::size_t blocks = (count + bs - 1) / bs;
  if (parts.block.spec == &block::kNvfp4) {
    return {true, count, blocks + sizeof(block::Nvfp4TensorScale)};
  }
  return {true, count, blocks};
}

void RegisterScalarRecipes(Registry& registry) {
  for (const std::string& name : AllRecipeNames()) {
    for (RecipeOperation op : {RecipeOperation::kQuantizeRecipe, RecipeOperation::kDequantizeRecipe}) {
      registry.AddRecipe(RecipeEntry{op, name, "scalar", [] { return true; }, RunScalarRecipe});
    }
  }
}

}  // namespace lowbit::registry
