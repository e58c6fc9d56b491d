// `lowbit verify`, recipe rows (registry recipe_entry.h): every non-scalar
// recipe backend against the scalar row (the block models) on generated
// tensors; any differing output byte (quantize: codes and scales; dequantize:
// FP32 bits) is a mismatch. Tensors are biased to where block bugs live
// (docs/design.md "Tests"): all-zero groups, NaN / Inf inside groups, elements on
// the ties of a power-of-two scale, amax just below a power of two, one
// outlier; block recipes also get a length that leaves a short last block.
// Dequantize rows read the scalar quantize output with some codes and scale
// bytes replaced by random ones (NaN scales included).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/registry/registry.h"
#include "verify.h"

namespace lowbit::tools {
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

float Pow2(int k) { return block::F32Pow2(k); }

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
        case 2: x[i] = block::F32FromBits(static_cast<std::uint32_t>(rng.Next())); break;
        default: x[i] = u * Pow2(k); break;
      }
    }
    const std::size_t at = start + static_cast<std::size_t>(rng.Below(16));
    if (at < count && rng.Below(3) == 0) {
      const float specials[] = {block::F32FromBits(0x7FC00000u), block::F32FromBits(0xFFC00001u),
                                block::F32FromBits(0x7F800000u), block::F32FromBits(0xFF800000u),
                                (1.0f - Pow2(-24)) * Pow2(k),   7.0f * Pow2(k),
                                7.5f * Pow2(k),                 6.0f * Pow2(k),
                                4096.0f * Pow2(k)};
      x[at] = specials[rng.Below(9)];
    }
  }
  return x;
}

// (rows, cols) per level: cols a multiple of 128 (INT4-g128 tiles them);
// block recipes also run one odd flat length.
std::vector<std::pair<std::size_t, std::size_t>> Shapes(VerifyLevel level, bool block_recipe) {
  std::vector<std::pair<std::size_t, std::size_t>> v = {{2, 128}};
  if (level != VerifyLevel::kSmoke) {
    v.insert(v.end(), {{5, 384}, {16, 1024}});
    if (block_recipe) v.push_back({1, 1001});
  }
  if (level == VerifyLevel::kFull) {
    v.insert(v.end(), {{64, 4096}, {3, 128 * 999}});
    if (block_recipe) v.push_back({1, 100003});
  }
  return v;
}

std::uint64_t CountDiffering(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                             std::string* example, const char* what) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (n++ == 0 && example->empty()) {
      *example = std::string(what) + " byte " + std::to_string(i) + ": model " +
                 std::to_string(a[i]) + ", kernel " + std::to_string(b[i]);
    }
  }
  return n;
}

void CheckShape(const RecipeEntry& entry, const RecipeEntry& scalar, std::size_t rows,
                std::size_t cols, std::uint64_t seed, VerifyRow* row) {
  const registry::RecipeBuffers sizes = registry::RecipeBufferSizes(entry.recipe, rows, cols);
  if (!sizes.ok) return;
  const std::size_t count = rows * cols;
  const std::vector<float> x = Tensor(count, seed);
  RecipeArgs a;
  a.operation = RecipeOperation::kQuantizeRecipe;
  a.recipe = entry.recipe;
  a.rows = rows;
  a.cols = cols;
  a.x = x.data();
  std::vector<std::uint8_t> codes(sizes.codes_bytes), scales(sizes.scales_bytes);
  a.codes = codes.data();
  a.scales = scales.data();
  registry::Status s = scalar.run(a);
  if (!s.ok) {
    row->skipped = "scalar: " + s.message;
    return;
  }
  if (entry.operation == RecipeOperation::kQuantizeRecipe) {
    std::vector<std::uint8_t> k_codes(codes.size()), k_scales(scales.size());
    a.codes = k_codes.data();
    a.scales = k_scales.data();
    s = entry.run(a);
    row->checked += codes.size() + scales.size();
    if (!s.ok) {
      row->mismatches += codes.size() + scales.size();
      if (row->example.empty()) row->example = s.message;
      return;
    }
    row->mismatches += CountDiffering(codes, k_codes, &row->example, "code");
    row->mismatches += CountDiffering(scales, k_scales, &row->example, "scale");
    return;
  }
  // Dequantize: a few random code and scale bytes (not INT4 parameters,
  // whose floats the quantize output already varies).
  Rng rng{seed ^ 0x5EEDull};
  registry::RecipeParts parts;
  registry::ParseRecipe(entry.recipe, &parts);
  const std::uint8_t code_mask =
      parts.int_recipe != nullptr ? 0xFF : static_cast<std::uint8_t>(parts.block.spec->element->CodeMask());
  for (std::size_t i = 0; i < codes.size(); i += 1 + static_cast<std::size_t>(rng.Below(8))) {
    codes[i] = static_cast<std::uint8_t>(rng.Next()) & code_mask;
  }
  if (parts.int_recipe == nullptr) {
    const std::size_t scale_bytes = parts.block.spec == &block::kNvfp4 ? scales.size() - sizeof(block::Nvfp4TensorScale) : scales.size();
    for (std::size_t i = 0; i < scale_bytes; i += 1 + static_cast<std::size_t>(rng.Below(8))) {
      scales[i] = static_cast<std::uint8_t>(rng.Next());
    }
  }
  a.operation = RecipeOperation::kDequantizeRecipe;
  a.codes = codes.data();
  a.scales = scales.data();
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
    row->mismatches += count;
    if (row->example.empty()) row->example = s.message;
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (block::F32Bits(expected[i]) == block::F32Bits(got[i])) continue;
    if (row->mismatches++ == 0 && row->example.empty()) {
      row->example = "element " + std::to_string(i) + ": model bits " +
                     std::to_string(block::F32Bits(expected[i])) + ", kernel " +
                     std::to_string(block::F32Bits(got[i]));
    }
  }
}

}  // namespace

std::vector<VerifyRow> VerifyRecipes(const registry::Registry& registry, VerifyLevel level,
                                     const VerifyFilter& filter, Progress& progress) {
  (void)progress;
  std::vector<VerifyRow> rows;
  for (const RecipeEntry& entry : registry.RecipeEntries()) {
    if (entry.backend == "scalar" || !filter.Backend(entry.backend)) continue;
    if (!filter.format.empty() && entry.recipe.rfind(filter.format + ":", 0) != 0) continue;
    VerifyRow row;
    row.backend = entry.backend;
    row.operation = registry::RecipeOperationName(entry.operation);
    row.format = entry.recipe;
    const RecipeEntry* scalar = registry.FindRecipe(entry.operation, entry.recipe, "scalar");
    if (scalar == nullptr) {
      row.skipped = "no scalar row to compare with";
    } else if (!entry.available()) {
      row.skipped = "backend not available here";
    } else {
      registry::RecipeParts parts;
      registry::ParseRecipe(entry.recipe, &parts);
      std::uint64_t seed = 1;
      for (const auto& [r, c] : Shapes(level, parts.int_recipe == nullptr)) {
        CheckShape(entry, *scalar, r, c, seed++, &row);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lowbit::tools
