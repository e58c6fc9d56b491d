// RapidCheck generators of blocks, groups and whole matrices for any recipe of
// the catalog (lowbit/formats/recipe/catalog.h), biased group by group to
// what breaks quantization kernels (docs/design.md "Tests"): one outlier, all
// zeros (of both signs), NaN or Inf inside, values that land exactly on ties
// of the element grid once scaled, an amax just below a power of two, tiny
// and huge scales (FP32 subnormal amax, amax near FLT_MAX), and shapes whose
// last 1-D block is partial.
//
// Shrinking keeps the structure: the shape of each group (GroupShape) and
// whether the last block is partial are drawn without shrinking, so a shrunk
// counterexample is still, say, "a group with a NaN inside, in a tensor whose
// last block is short"; what shrinks is the number of rows and blocks, the
// positions, and the values within the group's binade.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/testing/value_generators.h"

namespace lowbit::testing {

// How one group (block) of a generated tensor was built.
enum class GroupShape : std::uint8_t {
  kRandom,           // any FP32 values within a few binades of 2^k
  kOneOutlier,       // small values and one far larger one
  kAllZero,          // +0 and -0 only
  kNanInside,        // finite values and a NaN (random sign and payload)
  kInfInside,        // finite values and +-Inf
  kTieAligned,       // amax = the element's max x 2^k, the others element ties x 2^k
  kBelowPowerOfTwo,  // amax = 2^k (1 - 2^-24): a float log2 lands one too high
  kTinyScale,        // amax among FP32 subnormals / the smallest normals
  kHugeScale,        // amax near FLT_MAX
};
inline constexpr int kGroupShapeCount = 9;

inline const char* GroupShapeName(GroupShape s) {
  switch (s) {
    case GroupShape::kRandom: return "random";
    case GroupShape::kOneOutlier: return "one outlier";
    case GroupShape::kAllZero: return "all zeros";
    case GroupShape::kNanInside: return "NaN inside";
    case GroupShape::kInfInside: return "Inf inside";
    case GroupShape::kTieAligned: return "tie-aligned";
    case GroupShape::kBelowPowerOfTwo: return "amax just below a power of two";
    case GroupShape::kTinyScale: return "tiny scale";
    case GroupShape::kHugeScale: return "huge scale";
  }
  return "?";
}
inline void showValue(GroupShape s, std::ostream& os) { os << GroupShapeName(s); }

// A generated tensor: row-major [rows, cols] FP32 values, and how each group
// of the layout was built (the group order of recipe::MakeGroupGrid).
struct Matrix {
  long rows = 0;
  long cols = 0;
  std::vector<float> values;
  std::vector<GroupShape> shapes;
  bool partial_last_block = false;  // a 1-D layout whose last block is short
};

inline void showValue(const Matrix& m, std::ostream& os) {
  os << m.rows << "x" << m.cols << (m.partial_last_block ? " (last block partial)" : "") << " groups [";
  for (std::size_t i = 0; i < m.shapes.size(); ++i) os << (i ? ", " : "") << GroupShapeName(m.shapes[i]);
  os << "] values [";
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    os << (i ? ", " : "") << m.values[i];
    if (i == 63 && m.values.size() > 64) {
      os << ", ... " << m.values.size() - 64 << " more";
      break;
    }
  }
  os << "]";
}

namespace detail {

// The recipe's element values in element units (before the scale): the
// float element's values, or code x 2^implied_exponent for integers.
inline std::vector<double> ElementGrid(const recipe::Recipe& r) {
  std::vector<double> v = DestinationValues(r.element);
  if (!r.element.IsFloat()) {
    std::vector<double> kept;
    const double lo = r.qmin != 0 || r.qmax != 0 ? r.qmin : static_cast<double>(r.element.IntMin());
    const double hi = r.qmin != 0 || r.qmax != 0 ? r.qmax : static_cast<double>(r.element.IntMax());
    for (double x : v) {
      if (x >= 0 && x >= lo && x <= hi) kept.push_back(std::ldexp(x, r.element_implied_exponent));
    }
    v = kept;
  }
  return v;
}

inline float Signed(float x, bool negative) { return negative ? -x : x; }

// Any FP32 value whose binade is within 3 of 2^k (k clamped to the normals),
// from one random word.
inline float NearBinade(int k, std::uint64_t word) {
  int e = k - static_cast<int>((word >> 32) % 4) + 127;
  e = e < 1 ? 1 : (e > 254 ? 254 : e);
  return BitCast<float>((static_cast<std::uint32_t>(word) & 0x807FFFFFu) | (static_cast<std::uint32_t>(e) << 23));
}

// Fills the elements `where` of *x as one group of shape `shape` for recipe r.
//
// Every group draws the same ingredients in the same order, whatever its
// shape and size (a scale exponent, a position, a sign, a payload, one
// random word per element as one container): RapidCheck replays recorded
// draws by position while it shrinks, so a shrink that changes the number
// of rows must never make one group read another kind of draw. Indices are
// reduced into range, and a replayed word list of another length is cycled.
inline void FillGroup(const recipe::Recipe& r, GroupShape shape, const std::vector<long>& where,
                      std::vector<float>* x) {
  const std::size_t n = where.size();
  const int base_k = *rc::gen::inRange(-12, 13);
  const int tiny_k = *rc::gen::inRange(-149, -120);
  const int huge_k = *rc::gen::inRange(110, 128);
  const std::size_t special_draw = *rc::gen::inRange<std::size_t>(0, n > 0 ? n : 1);
  const bool negative = *rc::gen::arbitrary<bool>();
  const std::uint32_t payload = *rc::gen::inRange<std::uint32_t>(1, 1u << 23);
  const int outlier_mantissa = *rc::gen::inRange(8, 64);
  const int outlier_binades = *rc::gen::inRange(6, 24);
  const std::vector<std::uint64_t> words =
      *rc::gen::container<std::vector<std::uint64_t>>(n, rc::gen::arbitrary<std::uint64_t>());
  if (n == 0) return;
  const std::size_t special = special_draw % n;
  const auto word = [&](std::size_t i) -> std::uint64_t { return words.empty() ? 0 : words[i % words.size()]; };
  const auto at = [&](std::size_t i) -> float& { return (*x)[static_cast<std::size_t>(where[i])]; };
  const int k = shape == GroupShape::kTinyScale ? tiny_k : shape == GroupShape::kHugeScale ? huge_k : base_k;
  switch (shape) {
    case GroupShape::kAllZero:
      for (std::size_t i = 0; i < n; ++i) at(i) = Signed(0.0f, (word(i) & 1) != 0);
      return;
    case GroupShape::kTieAligned: {
      const std::vector<double> grid = ElementGrid(r);
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t j = static_cast<std::size_t>(word(i) % (grid.size() - 1));
        const double tie = (grid[j] + grid[j + 1]) / 2;
        at(i) = Signed(static_cast<float>(std::ldexp(tie, k)), ((word(i) >> 40) & 1) != 0);
      }
      at(special) = Signed(static_cast<float>(std::ldexp(grid.back(), k)), negative);
      return;
    }
    case GroupShape::kTinyScale:
      // FP32 subnormals and the smallest normals: below 2^(k+29) <= 2^-120.
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bits = static_cast<std::uint32_t>(word(i) % 0x03800000u);
        at(i) = Signed(BitCast<float>(bits >> (-120 - k)), ((word(i) >> 40) & 1) != 0);
      }
      return;
    default:
      break;
  }
  for (std::size_t i = 0; i < n; ++i) at(i) = NearBinade(k, word(i));
  switch (shape) {
    case GroupShape::kOneOutlier:
      at(special) = Signed(std::ldexp(outlier_mantissa / 8.0f, k + outlier_binades), negative);
      if (!std::isfinite(at(special))) at(special) = Signed(std::numeric_limits<float>::max(), negative);
      break;
    case GroupShape::kNanInside:
      at(special) = BitCast<float>((negative ? 0xFF800000u : 0x7F800000u) | payload);
      break;
    case GroupShape::kInfInside:
      at(special) = Signed(std::numeric_limits<float>::infinity(), negative);
      break;
    case GroupShape::kBelowPowerOfTwo:
      at(special) = Signed(std::nextafter(std::ldexp(1.0f, k + 1), 0.0f), negative);
      break;
    case GroupShape::kHugeScale: {
      const float top[] = {std::numeric_limits<float>::max(), std::nextafter(std::ldexp(1.0f, 127), 0.0f),
                           std::ldexp(1.5f, 127)};
      at(special) = Signed(top[payload % 3], negative);
      break;
    }
    default:
      break;
  }
}

inline rc::Gen<GroupShape> AnyGroupShape() {
  return rc::gen::noShrink(rc::gen::map(rc::gen::inRange(0, kGroupShapeCount),
                                        [](int s) { return static_cast<GroupShape>(s); }));
}

}  // namespace detail

// The number of elements of one block or group of r's default layout (MX 32,
// NVFP4 16, a scaled recipe's group size, or for per-tensor / per-row recipes
// a length of 1..64).
inline rc::Gen<int> BlockLength(const recipe::Recipe& r) {
  if (r.layout.size > 0) return rc::gen::just(r.layout.size);
  return rc::gen::inRange(1, 65);
}

// One block (group) of values for recipe r, of one GroupShape.
inline rc::Gen<std::vector<float>> Blocks(const recipe::Recipe& r) {
  return rc::gen::exec([r]() -> std::vector<float> {
    const GroupShape shape = *detail::AnyGroupShape();
    const int n = *BlockLength(r);
    std::vector<float> x(static_cast<std::size_t>(n), 0.0f);
    std::vector<long> all;
    for (long k = 0; k < n; ++k) all.push_back(k);
    detail::FillGroup(r, shape, all, &x);
    return x;
  });
}

// A [rows, cols] tensor for recipe r under `layout`, each group biased on its
// own. When the layout does not apply (recipe::MakeGroupGrid refuses it),
// the whole tensor is one group.
inline rc::Gen<Matrix> MatrixOfShape(const recipe::Recipe& r, const recipe::Layout& layout, long rows, long cols) {
  return rc::gen::exec([r, layout, rows, cols]() -> Matrix {
    Matrix m;
    m.rows = rows;
    m.cols = cols;
    m.values.assign(static_cast<std::size_t>(rows > 0 && cols > 0 ? rows * cols : 0), 0.0f);
    if (m.values.empty()) return m;
    recipe::GroupGrid g;
    if (recipe::MakeGroupGrid(r, layout, rows, cols, &g) != recipe::TensorStatus::kOk) {
      std::vector<long> all;
      for (long k = 0; k < rows * cols; ++k) all.push_back(k);
      m.shapes.push_back(*detail::AnyGroupShape());
      detail::FillGroup(r, m.shapes.back(), all, &m.values);
      return m;
    }
    m.partial_last_block = g.flat && (rows * cols) % g.group_cols != 0;
    for (long group = 0; group < g.Count(); ++group) {
      std::vector<long> members;
      recipe::ForEachInGroup(g, group, [&](long k) { members.push_back(k); });
      m.shapes.push_back(*detail::AnyGroupShape());
      detail::FillGroup(r, m.shapes.back(), members, &m.values);
    }
    return m;
  });
}

// A tensor of a shape that the layout accepts: for 1-D blocks any length,
// and half the time one whose last block is partial (kept while shrinking);
// for groups and tiles whole groups; for per-row and per-tensor scales 1..64
// columns.
inline rc::Gen<Matrix> Matrices(const recipe::Recipe& r, const recipe::Layout& layout) {
  return rc::gen::exec([r, layout]() -> Matrix {
    long rows = *rc::gen::inRange(1, 5);
    long cols = 1;
    switch (layout.geometry) {
      case recipe::Geometry::kBlock1d: {
        const bool partial = *rc::gen::noShrink(rc::gen::arbitrary<bool>());
        const long blocks = *rc::gen::inRange(1, 4);
        cols = blocks * layout.size;
        if (partial) {
          rows = 1;
          cols += *rc::gen::inRange<long>(1, layout.size);
        }
        break;
      }
      case recipe::Geometry::kGroup:
        cols = static_cast<long>(layout.size) * *rc::gen::inRange(1, 4);
        break;
      case recipe::Geometry::kTile2d:
        rows = static_cast<long>(layout.tile_rows) * *rc::gen::inRange(1, 3);
        cols = static_cast<long>(layout.size) * *rc::gen::inRange(1, 3);
        break;
      default:
        cols = *rc::gen::inRange(1, 65);
        break;
    }
    return *MatrixOfShape(r, layout, rows, cols);
  });
}

// Matrices for r's default layout.
inline rc::Gen<Matrix> Matrices(const recipe::Recipe& r) { return Matrices(r, r.layout); }

// Any recipe of the catalog.
inline rc::Gen<const recipe::Recipe*> AnyRecipe() {
  std::vector<const recipe::Recipe*> all;
  for (const recipe::Recipe& r : recipe::kAllRecipes) all.push_back(&r);
  return rc::gen::elementOf(all);
}

}  // namespace lowbit::testing
