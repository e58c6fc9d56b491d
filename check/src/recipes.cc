// Recipe rows (registry recipe_entry.h): every non-scalar recipe backend
// against the scalar row of the same recipe (the block models) on generated
// tensors; any differing output byte (quantize: codes and scales;
// dequantize: FP32 bits) is a mismatch. Tensors are biased to where block
// bugs live (docs/design.md "Tests"): all-zero groups, NaN / Inf inside
// groups, elements on the ties of a power-of-two scale, amax just below a
// power of two, one outlier; block recipes also get a length that leaves a
// short last block. Dequantize rows read the scalar quantize output with some
// codes and scale bytes replaced by random ones (NaN scales included).
//
// Deliberately thin over RecipeEntry / RecipeArgs: the typed buffers come
// from RecipeBufferSizes (RecipeStorage) and the recipe from ParseRecipe, the
// one name grammar.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/registry/registry.h"

namespace lowbit::check {
namespace {

using registry::RecipeArgs;
using registry::RecipeEntry;
using registry::RecipeOperation;

struct Rng {
  std::uint64_t s;
  std::uint64_t Next() {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<std::uint64_t>(n)); }
};

float Pow2(int k) { return F32Pow2(k); }

// 16-element chunks (the smallest block) each of one biased kind.
std::vector<float> Tensor(std::size_t count, std::uint64_t seed) {
  Rng rng{seed};
  std::vector<float> x(count);
  for (std::size_t start = 0; start < count; start += 16) {
    const int kind = rng.Below(6);
    const int k = rng.Below(40) - 20;
    for (std::size_t i = start; i < count && i < start + 16; ++i) {
      const float u = static_cast<float>(rng.Below(1 << 16) - (1 << 15)) / 4096.0f;
      switch (kind) {
        case 0: x[i] = rng.Below(2) ? 0.0f : -0.0f; break;
        case 1: x[i] = static_cast<float>(rng.Below(31) - 15) / 2.0f * Pow2(k); break;
        case 2: x[i] = F32FromBits(static_cast<std::uint32_t>(rng.Next())); break;
        default: x[i] = u * Pow2(k); break;
      }
    }
    const std::size_t at = start + static_cast<std::size_t>(rng.Below(16));
    if (at < count && rng.Below(3) == 0) {
      const float specials[] = {F32FromBits(0x7FC00000u), F32FromBits(0xFFC00001u),
                                F32FromBits(0x7F800000u), F32FromBits(0xFF800000u),
                                (1.0f - Pow2(-24)) * Pow2(k),   7.0f * Pow2(k),
                                7.5f * Pow2(k),                 6.0f * Pow2(k),
                                4096.0f * Pow2(k)};
      x[at] = specials[rng.Below(9)];
    }
  }
  return x;
}

// A second odd length whose short last block always ends in -Inf, so the
// block's scale is NaN or saturated: a kernel that encodes the zeros it pads
// with under that scale writes a nonzero unused nibble (found on the GPU: the
// MX kernel wrote 0x7 there under the OCP rule, x / NaN -> +max).
constexpr std::size_t kShortLastBlockEndingInInf = 999;

// (rows, cols) per level: cols a multiple of 128 (groups of 128 tile them);
// block recipes (1-D blocks over the flattened tensor) also run odd lengths
// that leave a short last block.
std::vector<std::pair<std::size_t, std::size_t>> Shapes(Level level, bool block_recipe) {
  std::vector<std::pair<std::size_t, std::size_t>> v = {{2, 128}};
  if (level != Level::kSmoke) {
    v.insert(v.end(), {{5, 384}, {16, 1024}});
    if (block_recipe) v.insert(v.end(), {{1, 1001}, {1, kShortLastBlockEndingInInf}});
  }
  if (level == Level::kFull) {
    v.insert(v.end(), {{64, 4096}, {3, 128 * 999}});
    if (block_recipe) v.push_back({1, 100003});
  }
  return v;
}

std::string ShapeText(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

// Byte-wise buffers (codes, scale codes): the differing bytes.
void CompareBytes(const std::vector<std::uint8_t>& expected, const std::vector<std::uint8_t>& got,
                  const char* what, const std::string& shape, Row* row) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == got[i]) continue;
    Mismatch m;
    m.combo = shape;
    m.where = std::string(what) + " " + std::to_string(i);
    m.expected = expected[i];
    m.expected_value = std::to_string(expected[i]);
    m.actual = got[i];
    m.actual_value = std::to_string(got[i]);
    internal::AddMismatch(row, std::move(m));
  }
}

// One FP32 output that should have `want`'s bits.
void CompareF32(float want, float have, const std::string& where, const std::string& shape,
                Row* row) {
  const std::uint32_t want_bits = F32Bits(want);
  const std::uint32_t have_bits = F32Bits(have);
  if (want_bits == have_bits) return;
  Mismatch m;
  m.combo = shape;
  m.where = where;
  m.output_format = kFp32.name;
  m.expected = want_bits;
  m.expected_value = internal::ValueText(kFp32, want_bits);
  m.actual = have_bits;
  m.actual_value = internal::ValueText(kFp32, have_bits);
  m.code_distance = internal::CodeDistance(kFp32, want_bits, have_bits);
  internal::AddMismatch(row, std::move(m));
}

void CompareF32s(const std::vector<float>& expected, const std::vector<float>& got,
                 const char* what, const std::string& shape, Row* row) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CompareF32(expected[i], got[i], std::string(what) + " " + std::to_string(i), shape, row);
  }
}

// Every output of a quantize: each typed buffer the recipe fills.
std::uint64_t OutputCount(const registry::RecipeStorage& s) {
  return s.codes.size() + s.scale_codes.size() + s.scales.size() + s.zero_points.size() +
         2 * s.tensor_scale.size();
}

void CompareQuantized(const registry::RecipeStorage& want, const registry::RecipeStorage& have,
                      const std::string& shape, Row* row) {
  CompareBytes(want.codes, have.codes, "code byte", shape, row);
  CompareBytes(want.scale_codes, have.scale_codes, "scale code", shape, row);
  CompareF32s(want.scales, have.scales, "scale", shape, row);
  for (std::size_t i = 0; i < want.zero_points.size(); ++i) {
    if (want.zero_points[i] == have.zero_points[i]) continue;
    Mismatch m;
    m.combo = shape;
    m.where = "zero point " + std::to_string(i);
    m.expected = static_cast<std::uint32_t>(want.zero_points[i]);
    m.expected_value = std::to_string(want.zero_points[i]);
    m.actual = static_cast<std::uint32_t>(have.zero_points[i]);
    m.actual_value = std::to_string(have.zero_points[i]);
    internal::AddMismatch(row, std::move(m));
  }
  for (std::size_t i = 0; i < want.tensor_scale.size(); ++i) {
    CompareF32(want.tensor_scale[i].encode, have.tensor_scale[i].encode, "tensor scale (encode)",
               shape, row);
    CompareF32(want.tensor_scale[i].decode, have.tensor_scale[i].decode, "tensor scale (decode)",
               shape, row);
  }
}

void KernelError(const std::string& shape, const registry::Status& status, std::uint64_t outputs,
                 Row* row) {
  Mismatch m;
  m.combo = shape;
  m.note = "kernel error: " + status.message;
  internal::AddMismatch(row, std::move(m));
  row->mismatches += outputs - 1;  // none of the outputs can be trusted
}

void CheckShape(const RecipeEntry& entry, const RecipeEntry& scalar,
                const recipe::Target& target, std::size_t rows, std::size_t cols,
                std::uint64_t seed, Row* row) {
  const registry::RecipeBuffers sizes = registry::RecipeBufferSizes(target, rows, cols);
  if (!sizes.ok) return;  // the layout does not tile this shape
  const std::string shape = ShapeText(rows, cols);
  const std::size_t count = rows * cols;
  std::vector<float> x = Tensor(count, seed);
  if (rows == 1 && cols == kShortLastBlockEndingInInf) x.back() = F32FromBits(0xFF800000u);
  registry::RecipeStorage want(sizes.sizes);
  RecipeArgs a;
  a.operation = RecipeOperation::kQuantizeRecipe;
  a.target = target;
  a.rows = rows;
  a.cols = cols;
  a.x = x.data();
  a.q = want.View();
  registry::Status s = scalar.run(a);
  if (!s.ok) {
    row->skipped = "scalar: " + s.message;
    return;
  }
  if (entry.operation == RecipeOperation::kQuantizeRecipe) {
    registry::RecipeStorage have(sizes.sizes);
    a.q = have.View();
    s = entry.run(a);
    row->checked += OutputCount(want);
    if (!s.ok) {
      KernelError(shape, s, OutputCount(want), row);
      return;
    }
    CompareQuantized(want, have, shape, row);
    return;
  }
  // Dequantize: the scalar quantize output with a few random element codes
  // and scale codes (NaN scales included); FP32 scales, zero points and the
  // tensor scale stay as quantized (the tensor already varies them).
  const recipe::Recipe& r = *target.recipe;
  Rng rng{seed ^ 0x5EEDull};
  const std::uint8_t code_mask = r.packing == recipe::Packing::kOnePerByte
                                     ? static_cast<std::uint8_t>(r.element.CodeMask())
                                     : std::uint8_t{0xFF};  // two 4-bit codes
  for (std::size_t i = 0; i < want.codes.size(); i += 1 + static_cast<std::size_t>(rng.Below(8))) {
    want.codes[i] = static_cast<std::uint8_t>(rng.Next()) & code_mask;
  }
  const auto scale_mask = static_cast<std::uint8_t>(r.scale_format.CodeMask());
  for (std::size_t i = 0; i < want.scale_codes.size();
       i += 1 + static_cast<std::size_t>(rng.Below(8))) {
    want.scale_codes[i] = static_cast<std::uint8_t>(rng.Next()) & scale_mask;
  }
  a.operation = RecipeOperation::kDequantizeRecipe;
  a.q = want.View();
  std::vector<float> expected(count), got(count);
  a.out = expected.data();
  s = scalar.run(a);
  if (!s.ok) {
    row->skipped = "scalar: " + s.message;
    return;
  }
  a.out = got.data();
  s = entry.run(a);
  row->checked += count;
  if (!s.ok) {
    KernelError(shape, s, count, row);
    return;
  }
  CompareF32s(expected, got, "element", shape, row);
}

}  // namespace

bool Filter::Recipe(std::string_view recipe) const {
  return format.empty() ||
         (recipe.size() > format.size() && recipe.substr(0, format.size()) == format &&
          recipe[format.size()] == ':');
}

Row CheckRecipe(const RecipeEntry& entry, const RecipeEntry* scalar, Level level) {
  Row row;
  row.kind = RowKind::kRecipe;
  row.backend = entry.backend;
  row.operation = registry::RecipeOperationName(entry.operation);
  row.format = entry.recipe;
  recipe::Target target;
  std::string error;
  if (scalar == nullptr) {
    row.skipped = "no scalar row to compare with";
  } else if (!entry.available()) {
    row.skipped = "backend not available here";
  } else if (!registry::ParseRecipe(entry.recipe, &target, &error)) {
    row.skipped = "not a recipe name: " + error;
  } else {
    std::uint64_t seed = 1;
    const bool block_recipe = target.recipe->family() != recipe::Family::kScaled;
    for (const auto& [r, c] : Shapes(level, block_recipe)) {
      CheckShape(entry, *scalar, target, r, c, seed++, &row);
    }
  }
  return row;
}

std::vector<Row> CheckRecipes(const registry::Registry& registry, Level level,
                              const Filter& filter, Progress* progress) {
  std::vector<const RecipeEntry*> selected;
  for (const RecipeEntry& entry : registry.RecipeEntries()) {
    if (entry.backend == "scalar" || !filter.Backend(entry.backend)) continue;
    if (!filter.Recipe(entry.recipe)) continue;
    selected.push_back(&entry);
  }
  std::vector<Row> rows;
  if (progress && !selected.empty()) progress->Begin("recipes vs model", selected.size());
  for (const RecipeEntry* entry : selected) {
    rows.push_back(CheckRecipe(*entry, registry.FindRecipe(entry->operation, entry->recipe, "scalar"),
                               level));
    if (progress) progress->Advance(1);
  }
  if (progress && !selected.empty()) progress->End();
  return rows;
}

}  // namespace lowbit::check
