// The model's results that the block-recipe GPU tests (MX, NVFP4) compare
// with: x[0..n) as one row of a recipe's 1-D blocks (recipe/tensor.h
// QuantizeTensor, a short last block included) with the codes read back one
// per element, and one element dequantized as recipe::DequantizeTensor does
// (recipe::DecodeElement of the stored scale and the tensor scale).
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::cuda::testing {

struct ModelBlocks {
  std::vector<std::uint8_t> codes;        // one per element
  std::vector<std::uint8_t> scale_codes;  // one per block
  recipe::TensorScale tensor_scale{};     // recipes with a tensor scale (NVFP4)
};

inline ModelBlocks QuantizeBlocksByModel(const recipe::Recipe& r, const float* x, std::size_t n) {
  ModelBlocks m;
  recipe::GroupGrid g;
  const long count = static_cast<long>(n);
  EXPECT_EQ(recipe::MakeGroupGrid(r, r.layout, 1, count, &g), recipe::TensorStatus::kOk) << recipe::RecipeName(r);
  const recipe::BufferSizes sizes = recipe::SizesOf(r, g);
  std::vector<std::uint8_t> stored(static_cast<std::size_t>(sizes.code_bytes));
  m.scale_codes.resize(static_cast<std::size_t>(sizes.scale_codes));
  recipe::QuantizedTensor q;
  q.codes = stored.data();
  q.scale_codes = m.scale_codes.data();
  q.tensor_scale = &m.tensor_scale;
  EXPECT_EQ(recipe::QuantizeTensor(r, r.layout, x, 1, count, q), recipe::TensorStatus::kOk) << recipe::RecipeName(r);
  m.codes.resize(n);
  for (long i = 0; i < count; ++i) m.codes[static_cast<std::size_t>(i)] = recipe::LoadCode(r.packing, stored.data(), i);
  return m;
}

inline float DequantizeBlockElementByModel(const recipe::Recipe& r, const recipe::TensorScale& t,
                                           std::uint8_t scale_code, std::uint8_t code) {
  return recipe::DecodeElement(r, recipe::StoredScale(r, scale_code, 0.0f, 0), t, code);
}

// The catalog recipe "format:profile" (recipe/names.h FindRecipe); a test
// that names one the catalog lacks fails here.
inline const recipe::Recipe& CatalogRecipeNamed(const char* format, const char* profile) {
  const recipe::Recipe* r = recipe::FindRecipe(format, profile);
  EXPECT_NE(r, nullptr) << format << ":" << profile;
  return r != nullptr ? *r : recipe::kAllRecipes[0];
}

}  // namespace lowbit::cuda::testing
