// The model (recipe::QuantizeTensor / DequantizeTensor, recipe/tensor.h)
// against the oracle (reference/block/recipe_oracle.h) on one tensor, for
// any recipe of the catalog: the same refusal of a shape, the same stored
// codes (packed as the recipe says), scales, zero points and tensor scale,
// and the same dequantized values. Shared by block_model_vs_oracle_test.cc
// (MX, NVFP4) and quant_model_vs_oracle_test.cc (scaled INT / FP8).
#pragma once

#include <bit>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/reference/block/recipe_oracle.h"

namespace lowbit::testing {

namespace ref = lowbit::reference::block;

// Equal FP32 bits, every NaN equal to every NaN (which NaN a product gives
// is the hardware's choice, docs/formats-reference.md §3.1).
inline bool IsNanBits(std::uint32_t b) { return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu) != 0; }
inline bool SameF32(std::uint32_t a, std::uint32_t b) {
  const bool a_nan = IsNanBits(a);
  const bool b_nan = IsNanBits(b);
  return a_nan || b_nan ? a_nan == b_nan : a == b;
}

// The two status lists name the same conditions.
inline bool SameStatus(recipe::TensorStatus model, ref::OracleStatus oracle) {
  switch (model) {
    case recipe::TensorStatus::kOk: return oracle == ref::OracleStatus::kOk;
    case recipe::TensorStatus::kEmpty: return oracle == ref::OracleStatus::kEmpty;
    case recipe::TensorStatus::kBadGroup: return oracle == ref::OracleStatus::kBadGroup;
    case recipe::TensorStatus::kColsNotMultipleOfGroup: return oracle == ref::OracleStatus::kColsNotMultipleOfGroup;
    case recipe::TensorStatus::kRowsNotMultipleOfTile: return oracle == ref::OracleStatus::kRowsNotMultipleOfTile;
    case recipe::TensorStatus::kLayoutNotForRecipe: return oracle == ref::OracleStatus::kLayoutNotForRecipe;
    case recipe::TensorStatus::kSizeOverflow: return oracle == ref::OracleStatus::kSizeOverflow;
  }
  return false;
}

// "mxfp8_e4m3:ao-floor" -> "mxfp8_e4m3_ao_floor" (a gtest parameter name).
inline std::string TestName(const recipe::Recipe& r) {
  std::string s = std::string(r.name) + "_" + r.profile;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

// Indices into recipe::kAllRecipes of one family.
inline std::vector<int> RecipesOf(bool (*wanted)(recipe::Family)) {
  std::vector<int> v;
  for (int i = 0; i < static_cast<int>(recipe::kAllRecipes.size()); ++i) {
    if (wanted(recipe::kAllRecipes[static_cast<std::size_t>(i)].family())) v.push_back(i);
  }
  return v;
}

// Fills x group by group (the model's grid, used only to place values):
// `fill(x, indices)` biases each group on its own. When the layout does not
// apply, the whole tensor is one group.
template <typename Fill>
void FillByGroup(const recipe::Recipe& r, const recipe::Layout& layout, long rows, long cols, std::vector<float>* x,
                 Fill&& fill) {
  x->assign(static_cast<std::size_t>(rows > 0 && cols > 0 ? rows * cols : 0), 0.0f);
  if (x->empty()) return;
  recipe::GroupGrid g;
  if (recipe::MakeGroupGrid(r, layout, rows, cols, &g) != recipe::TensorStatus::kOk) {
    std::vector<long> all;
    for (long k = 0; k < rows * cols; ++k) all.push_back(k);
    fill(x, all);
    return;
  }
  for (long group = 0; group < g.Count(); ++group) {
    std::vector<long> members;
    recipe::ForEachInGroup(g, group, [&](long k) { members.push_back(k); });
    fill(x, members);
  }
}

// Dynamic quantization and dequantization of x, model against oracle.
inline void CheckTensorAgainstOracle(const recipe::Recipe& r, const recipe::Layout& layout,
                                     const std::vector<float>& x, long rows, long cols) {
  RC_LOG() << r.name << ":" << r.profile << " layout " << static_cast<int>(layout.geometry) << " size "
           << layout.size << " tile_rows " << layout.tile_rows << " shape " << rows << "x" << cols << "\n";
  const ref::OracleQuantized want = ref::OracleQuantizeTensor(r, layout, x, rows, cols);

  recipe::GroupGrid g;
  const recipe::TensorStatus shape_status = recipe::MakeGroupGrid(r, layout, rows, cols, &g);
  RC_ASSERT(SameStatus(shape_status, want.status));
  if (shape_status != recipe::TensorStatus::kOk) {
    // QuantizeTensor refuses it too, before touching a buffer.
    RC_ASSERT(recipe::QuantizeTensor(r, layout, x.data(), rows, cols, recipe::QuantizedTensor{}) == shape_status);
    return;
  }

  const recipe::BufferSizes sizes = recipe::SizesOf(r, g);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes), 0xA5);
  std::vector<std::uint8_t> scale_codes(static_cast<std::size_t>(sizes.scale_codes));
  std::vector<float> scales(static_cast<std::size_t>(sizes.scales));
  std::vector<std::int32_t> zero_points(static_cast<std::size_t>(sizes.zero_points));
  recipe::TensorScale tensor_scale;
  recipe::QuantizedTensor q;
  q.codes = codes.data();
  q.scale_codes = sizes.scale_codes > 0 ? scale_codes.data() : nullptr;
  q.scales = sizes.scales > 0 ? scales.data() : nullptr;
  q.zero_points = sizes.zero_points > 0 ? zero_points.data() : nullptr;
  q.tensor_scale = sizes.tensor_scales > 0 ? &tensor_scale : nullptr;
  RC_ASSERT(recipe::QuantizeTensor(r, layout, x.data(), rows, cols, q) == recipe::TensorStatus::kOk);

  RC_ASSERT(static_cast<long>(want.scales.size()) == g.Count());
  if (r.tensor_scale != recipe::TensorScaleRule::kNone) {
    RC_ASSERT(sizes.tensor_scales == 1);
    RC_ASSERT(SameF32(std::bit_cast<std::uint32_t>(tensor_scale.encode), want.tensor_scale.encode_bits));
    RC_ASSERT(SameF32(std::bit_cast<std::uint32_t>(tensor_scale.decode), want.tensor_scale.decode_bits));
  }
  for (long k = 0; k < g.Count(); ++k) {
    const ref::OracleScale& w = want.scales[static_cast<std::size_t>(k)];
    if (r.family() == recipe::Family::kScaled) {
      RC_ASSERT(SameF32(std::bit_cast<std::uint32_t>(scales[static_cast<std::size_t>(k)]), w.decode_bits));
    } else {
      RC_ASSERT(static_cast<int>(scale_codes[static_cast<std::size_t>(k)]) == static_cast<int>(w.code));
    }
    if (r.zero_point == recipe::ZeroPoint::kInteger) RC_ASSERT(zero_points[static_cast<std::size_t>(k)] == w.zero_point);
  }
  RC_ASSERT(codes == want.packed);

  std::vector<float> back(x.size());
  RC_ASSERT(recipe::DequantizeTensor(r, layout, recipe::AsConst(q), rows, cols, back.data()) ==
            recipe::TensorStatus::kOk);
  const std::vector<std::uint32_t> want_back =
      ref::OracleDequantizeTensor(r, layout, want.packed, want.scales, want.tensor_scale, rows, cols);
  RC_ASSERT(want_back.size() == back.size());
  for (std::size_t i = 0; i < back.size(); ++i) RC_ASSERT(SameF32(std::bit_cast<std::uint32_t>(back[i]), want_back[i]));
}

}  // namespace lowbit::testing
