// Recipe-level registry rows: a whole block or group recipe (MX, NVFP4,
// INT4 per group) over an FP32 tensor, one row per (operation, recipe,
// backend), beside the element conversions of registry.h. `lowbit verify`
// checks every row against the scalar rows (the model) on generated tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/formats/block/recipe_name.h"

namespace lowbit::registry {

struct Status;

enum class RecipeOperation : std::uint8_t {
  kQuantizeRecipe,    // float x[rows * cols] -> codes, scales
  kDequantizeRecipe,  // codes, scales -> float out[rows * cols]
};

// "quantize-recipe" / "dequantize-recipe".
const char* RecipeOperationName(RecipeOperation operation);

// Recipe names: "mxfp4:ocp" ... (block/recipe_name.h ParseRecipeName) for MX
// and NVFP4 over the flattened tensor, and "int4:ao-sym/g128" (an
// int_quant_recipe.h INT4 / UINT4 recipe, per group of 128 along K).
// Every int_quant_recipe.h recipe (INT8, INT4, UINT4, TE FP8) also comes as
// "FORMAT:PROFILE/g128", "/row" (one scale per row: per channel of a weight,
// per token of an activation) and "/tensor", e.g. "int8:ao-sym/row",
// "e4m3:te/tensor".
std::vector<std::string> AllRecipeNames();

// What a name stands for: an MX / NVFP4 recipe (block.spec set) or an
// INT4 / UINT4 recipe with its group along K.
struct RecipeParts {
  block::NamedRecipe block;
  const block::IntQuantRecipe* int_recipe = nullptr;
  int group = 0;
  // int_recipe: "/g<group>" per group, "/row" per row, "/tensor" per tensor.
  block::Granularity granularity = block::Granularity::kPerGroup;
};
bool ParseRecipe(std::string_view name, RecipeParts* out);

// Bytes of the two buffers a recipe fills (quantize) or reads (dequantize):
//   MX:    codes = one element code per byte; scales = one E8M0 byte per block
//   NVFP4: codes = one E2M1 code per byte; scales = one UE4M3 byte per
//          16-element block, then the block::Nvfp4TensorScale (two floats)
//   INT4:  codes = packed two per byte, low nibble first; scales = one
//          block::QuantParams per group
//   INT8, FP8: codes = one per byte; scales = one block::QuantParams per group
// Zero sizes (ok false) for an unknown name or a shape the recipe does not
// tile (INT4: cols must be a multiple of the group).
struct RecipeBuffers {
  bool ok = false;
  std::size_t codes_bytes = 0;
  std::size_t scales_bytes = 0;
};
RecipeBuffers RecipeBufferSizes(std::string_view recipe, std::size_t rows, std::size_t cols);

struct RecipeArgs {
  RecipeOperation operation = RecipeOperation::kQuantizeRecipe;
  std::string recipe;
  std::size_t rows = 0;
  std::size_t cols = 0;
  const float* x = nullptr;         // quantize input
  std::uint8_t* codes = nullptr;    // quantize output, dequantize input
  std::uint8_t* scales = nullptr;   // quantize output, dequantize input
  float* out = nullptr;             // dequantize output
};

struct RecipeEntry {
  RecipeOperation operation;
  std::string recipe;
  std::string backend;  // "scalar", "simd:AVX2", ...
  std::function<bool()> available;
  std::function<Status(const RecipeArgs&)> run;
};

}  // namespace lowbit::registry
