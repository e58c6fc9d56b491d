// Recipe-level registry rows: a whole recipe (recipe/catalog.h) over a
// row-major [rows, cols] FP32 tensor in one layout, one row per
// (operation, recipe name, backend), beside the element conversions of
// registry.h. Buffers are typed (recipe/tensor.h QuantizedTensor): element
// codes in the recipe's packing, scale codes or FP32 scales, zero points and
// the tensor scale, each only where the recipe has it. `lowbit verify` and the
// tests check every row against the scalar rows (the model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/stream.h"

namespace lowbit::registry {

struct Status;

enum class RecipeOperation : std::uint8_t {
  kQuantizeRecipe,    // float x[rows * cols] -> codes, scales (, zero points, tensor scale)
  kDequantizeRecipe,  // codes, scales ... -> float out[rows * cols]
};

inline constexpr RecipeOperation kAllRecipeOperations[] = {RecipeOperation::kQuantizeRecipe,
                                                           RecipeOperation::kDequantizeRecipe};

// "quantize-recipe" / "dequantize-recipe".
const char* RecipeOperationName(RecipeOperation operation);

// The recipe rows every backend offers: each MX and NVFP4 recipe at its
// block layout ("mxfp4:ocp", "nvfp4:te"), and each scaled recipe per group of
// 128 along K, per row (a weight's channel, an activation's token) and per
// tensor ("int4:ao-sym/g128", "int8:ao-sym/row", "e4m3:te/tensor";
// recipe_contract.h kListedScaledLayouts). The names parse with
// recipe::ParseTarget, the one grammar. Which backend has which of these rows
// is recipe_contract.h's kRecipeRowContract.
std::vector<std::string> AllRecipeNames();

// recipe::ParseTarget restricted to recipes; false (with the message) for an
// unknown name or an element format.
bool ParseRecipe(std::string_view name, recipe::Target* out, std::string* error = nullptr);

// The element counts of each buffer for a shape (recipe/tensor.h SizesOf);
// ok false with the model's reason when the layout does not tile the shape.
struct RecipeBuffers {
  bool ok = false;
  std::string error;
  recipe::BufferSizes sizes;
};
RecipeBuffers RecipeBufferSizes(const recipe::Target& target, std::size_t rows, std::size_t cols);

// Owned buffers of one quantized tensor, sized by RecipeBufferSizes (for
// tests, benchmarks and the CLI).
struct RecipeStorage {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scale_codes;
  std::vector<float> scales;
  std::vector<std::int32_t> zero_points;
  std::vector<recipe::TensorScale> tensor_scale;
  explicit RecipeStorage(const recipe::BufferSizes& s)
      : codes(static_cast<std::size_t>(s.code_bytes)),
        scale_codes(static_cast<std::size_t>(s.scale_codes)),
        scales(static_cast<std::size_t>(s.scales)),
        zero_points(static_cast<std::size_t>(s.zero_points)),
        tensor_scale(static_cast<std::size_t>(s.tensor_scales)) {}
  recipe::QuantizedTensor View() {
    return {codes.empty() ? nullptr : codes.data(), scale_codes.empty() ? nullptr : scale_codes.data(),
            scales.empty() ? nullptr : scales.data(), zero_points.empty() ? nullptr : zero_points.data(),
            tensor_scale.empty() ? nullptr : tensor_scale.data()};
  }
};

struct RecipeArgs {
  RecipeOperation operation = RecipeOperation::kQuantizeRecipe;
  recipe::Target target;            // recipe and layout (ParseRecipe)
  std::size_t rows = 0;
  std::size_t cols = 0;
  const float* x = nullptr;         // quantize input
  recipe::QuantizedTensor q;        // quantize output, dequantize input
  float* out = nullptr;             // dequantize output (output_format kFp32)
  // The element type of the dequantize output: kFp32 (the default) writes
  // `out`; kFp16 writes FP16 bits to `out_f16` (and leaves `out` alone), as
  // the GPTQ / AWQ kernels compute (q - z) * s in FP16. Only recipes with
  // recipe::DequantizesToF16 define an FP16 result, and only rows that
  // implement it accept one (the scalar and SIMD rows; the CUDA rows refuse
  // it by name, RequireF32Output).
  FormatId output_format = FormatId::kFp32;
  std::uint16_t* out_f16 = nullptr;
  // Optional, quantize only: given (static, calibrated) FP32 scales stored
  // instead of the ones the recipe derives from x: given_scale_count 1 (one
  // for every group) or one per group of the layout (e.g. per KV head). Only
  // recipes with recipe::TakesGivenScale accept them (vLLM FP8's
  // static_scaled_fp8_quant and KV cache); ValidateRecipeArgs refuses them
  // elsewhere.
  const float* given_scale = nullptr;
  std::size_t given_scale_count = 1;
  // Device rows: the stream to launch on (stream.h); host rows ignore it.
  StreamHandle stream = nullptr;
};

// What every backend checks first, so that each names the same problem the
// same way: a target that is not a recipe, an unknown operation, a shape the
// layout does not tile or whose sizes overflow (formats/checked_size.h), a
// null buffer the recipe needs, a typed buffer not aligned for its type, an
// output that overlaps an input or another output (registry.h
// CheckNoOverlap). rows == 0 or cols == 0 is an empty call: ok with any
// pointers (docs/bad-input.md).
Status ValidateRecipeArgs(const RecipeArgs& args);

// For rows that dequantize to FP32 only: ok for output_format kFp32, else
// an error naming the backend and where FP16 output runs.
Status RequireF32Output(const RecipeArgs& args, const char* backend);

struct RecipeEntry {
  RecipeOperation operation;
  std::string recipe;   // a name of AllRecipeNames()
  std::string backend;  // "scalar", "simd:AVX2", "cuda", ...
  std::function<bool()> available;
  std::function<Status(const RecipeArgs&)> run;
  // For ChooseRecipeRow (choose.h): the memory this row is chosen for, its
  // rank among the rows of the same recipe (the highest wins; the scalar
  // model is 0), whether it runs every layout the recipe allows (it reads
  // the layout from RecipeArgs::target, as the scalar rows do) and which
  // arguments it takes (empty: every valid call).
  Memory memory = Memory::kHost;
  int preference = 0;
  bool any_layout = false;
  std::function<bool(const RecipeArgs&)> supports;
};

}  // namespace lowbit::registry
