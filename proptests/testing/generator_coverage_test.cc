// lowbit::testing's generators hit what they promise (testing/include/
// lowbit/testing/*_generators.h): every value generator reaches every
// boundary class of boundary_classes.h for every destination of at most 16
// bits, the block and matrix generators build every group shape for every
// recipe of the catalog, each drawn group really has its shape (a tie-aligned
// MX group lands on element ties once scaled, a NaN-inside group holds a
// NaN, ...), 1-D layouts get short last blocks, and shrinking keeps all of
// that (every shrink candidate still satisfies its shapes).
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/testing/block_generators.h"
#include "lowbit/testing/boundary_classes.h"
#include "lowbit/testing/value_generators.h"
#include "test_level.h"

namespace lowbit::testing {
namespace {

// Draws from a generator outside a property, reproducibly.
template <typename T>
std::vector<T> Sample(const rc::Gen<T>& gen, int count, std::uint64_t seed) {
  rc::Random random(seed);
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(gen(random.split(), rc::kNominalSize).value());
  return out;
}

int Draws(int smoke, int ci) { return CurrentTestLevel() == TestLevel::kSmoke ? smoke : ci; }

std::vector<FormatId> SmallDestinations() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits <= 16) v.push_back(id);
  }
  return v;
}

// The classes an input format can hold for `dst`: a tie needs one bit more
// than the destination's significand; the overflow tie only exists for float
// destinations, the NaN payload and subnormals only for IEEE-style inputs.
std::uint32_t Reachable(const FormatSpec& input, const FormatSpec& dst) {
  std::uint32_t want = 0;
  for (BoundaryClass c : kAllBoundaryClasses) want |= c;
  const int dst_bits = dst.IsFloat() ? dst.mantissa_bits : 16;
  if (input.mantissa_bits <= dst_bits) want &= ~(kClassTie | kClassOverflowTie);
  if (!dst.IsFloat()) want &= ~kClassOverflowTie;
  return want;
}

void ExpectCovers(const std::string& what, std::uint32_t seen, std::uint32_t want) {
  const std::uint32_t missing = want & ~seen;
  EXPECT_EQ(missing, 0u) << what << " never drew: " << DescribeClasses(missing);
}

TEST(ValueGenerators, F32HitsEveryBoundaryClass) {
  for (FormatId id : SmallDestinations()) {
    const FormatSpec& dst = Spec(id);
    std::uint32_t seen = 0;
    for (std::uint32_t bits : Sample(BoundaryF32Bits(dst), Draws(4000, 20000), 1)) seen |= ClassifyInput(kFp32, bits, dst);
    ExpectCovers(std::string("BoundaryF32Bits(") + dst.name + ")", seen, Reachable(kFp32, dst));
  }
}

TEST(ValueGenerators, F64HitsEveryBoundaryClass) {
  for (FormatId id : SmallDestinations()) {
    const FormatSpec& dst = Spec(id);
    std::uint32_t seen = 0;
    for (std::uint64_t bits : Sample(BoundaryF64Bits(dst), Draws(4000, 20000), 2)) seen |= ClassifyInput(kFp64, bits, dst);
    ExpectCovers(std::string("BoundaryF64Bits(") + dst.name + ")", seen, Reachable(kFp64, dst));
  }
}

TEST(ValueGenerators, Bf16AndF16HitEveryBoundaryClass) {
  for (FormatId id : SmallDestinations()) {
    const FormatSpec& dst = Spec(id);
    if (dst.total_bits > 8) continue;  // BF16 / FP16 inputs cannot hold the ties of a 16-bit destination
    for (const FormatSpec* input : {&kBf16, &kFp16}) {
      std::uint32_t seen = 0;
      for (std::uint64_t code : Sample(BoundaryInputCodes(*input, dst), Draws(4000, 20000), 3)) {
        seen |= ClassifyInput(*input, code, dst);
      }
      std::uint32_t want = Reachable(*input, dst);
      // FP16 tops out at 65504: E8M0's, E5M2's range and beyond are out of reach.
      if (input == &kFp16 && MaxFiniteValue(dst) >= 65504) want &= ~(kClassAboveMax | kClassOverflowTie | kClassMax);
      if (input == &kFp16 && dst.IsFloat() && SmallestPositive(dst) / 2 < std::ldexp(1.0, -24)) {
        want &= ~kClassHalfMinSubnormal;
      }
      if (input == &kFp16 && id == FormatId::kE8m0) want = kClassNan | kClassNanPayload | kClassInfinity | kClassNegativeZero | kClassInputSubnormal | kClassBinadeEdge | kClassDestinationValue | kClassBelowPowerOfTwo;
      ExpectCovers(std::string("BoundaryInputCodes(") + input->name + ", " + dst.name + ")", seen, want);
    }
  }
}

// The classifier itself on hand-picked values (docs/formats-reference.md §1:
// E4M3's max is 448, the next value past it with an unbounded exponent 480,
// its smallest subnormal 2^-9).
TEST(BoundaryClasses, ClassifiesKnownE4m3Inputs) {
  const auto bits = [](float x) { return static_cast<std::uint64_t>(BitCast<std::uint32_t>(x)); };
  EXPECT_EQ(ClassifyInput(kFp32, bits(1.0625f), kE4m3), kClassTie);  // between 1 and 1.125
  EXPECT_EQ(ClassifyInput(kFp32, bits(std::nextafter(1.0625f, 2.0f)), kE4m3), kClassNearTie);
  EXPECT_EQ(ClassifyInput(kFp32, bits(464.0f), kE4m3), kClassTie | kClassAboveMax | kClassOverflowTie);
  EXPECT_EQ(ClassifyInput(kFp32, bits(448.0f), kE4m3), kClassMax | kClassDestinationValue);
  EXPECT_EQ(ClassifyInput(kFp32, bits(std::ldexp(1.0f, -10)), kE4m3), kClassHalfMinSubnormal | kClassBinadeEdge | kClassTie);
  EXPECT_EQ(ClassifyInput(kFp32, 0x3F7FFFFFu, kE4m3), kClassBelowPowerOfTwo);  // 1 - 2^-24
  EXPECT_EQ(ClassifyInput(kFp32, 0x3F77FFFFu, kE4m3), kClassNearTie);  // one ulp below the tie 0.96875
  EXPECT_EQ(ClassifyInput(kFp32, 0x80000000u, kE4m3), kClassNegativeZero);
  EXPECT_EQ(ClassifyInput(kFp32, 0x7F800001u, kE4m3), kClassNan | kClassNanPayload);
  EXPECT_EQ(ClassifyInput(kFp32, 0x7FC00000u, kE4m3), kClassNan);
  EXPECT_EQ(ClassifyInput(kFp32, 0xFF800000u, kE4m3), kClassInfinity);
}

TEST(ValueGenerators, CodesReachEveryCodeOfSmallFormats) {
  for (FormatId id : {FormatId::kE2m1, FormatId::kE3m2, FormatId::kE4m3, FormatId::kInt4}) {
    const FormatSpec& f = Spec(id);
    std::set<std::uint64_t> seen;
    for (std::uint64_t c : Sample(BoundaryCodes(f), Draws(4000, 8000), 4)) {
      EXPECT_EQ(c & ~f.CodeMask(), 0u) << f.name;
      seen.insert(c);
    }
    EXPECT_EQ(seen.size(), f.CodeMask() + 1) << f.name;
  }
}

// ---- blocks and matrices --------------------------------------------------------

// Whether group `members` of m satisfies `shape` for recipe r.
std::string ShapeViolation(const recipe::Recipe& r, GroupShape shape, const std::vector<float>& x) {
  bool any_nan = false;
  bool any_inf = false;
  bool all_zero = true;
  float amax = 0;
  for (float v : x) {
    any_nan |= std::isnan(v);
    any_inf |= std::isinf(v);
    all_zero &= v == 0;
    if (std::isfinite(v)) amax = std::fmax(amax, std::fabs(v));
  }
  switch (shape) {
    case GroupShape::kAllZero: return all_zero ? "" : "all-zero group holds a non-zero";
    case GroupShape::kNanInside: return any_nan ? "" : "NaN-inside group holds no NaN";
    case GroupShape::kInfInside: return any_inf && !any_nan ? "" : "Inf-inside group holds no Inf";
    case GroupShape::kBelowPowerOfTwo: {
      const std::uint32_t b = BitCast<std::uint32_t>(amax);
      return (b & 0x7FFFFFu) == 0x7FFFFFu ? "" : "amax is not just below a power of two";
    }
    case GroupShape::kTieAligned: {
      // Every value / 2^k is an element tie, the amax the element's max.
      if (!std::isfinite(amax) || amax == 0 || any_nan) return "tie-aligned group without a finite amax";
      const std::vector<double> grid = detail::ElementGrid(r);
      const int k = std::ilogb(amax) - std::ilogb(grid.back());
      if (std::ldexp(static_cast<double>(amax), -k) != grid.back()) return "tie-aligned amax is not max x 2^k";
      for (float v : x) {
        const double u = std::ldexp(std::fabs(static_cast<double>(v)), -k);
        if (u == grid.back()) continue;
        bool tie = false;
        for (std::size_t j = 0; j + 1 < grid.size() && !tie; ++j) tie = u == (grid[j] + grid[j + 1]) / 2;
        if (!tie) {
          char text[96];
          std::snprintf(text, sizeof text, "tie-aligned value %a (amax %a) is not a tie", v, amax);
          return text;
        }
      }
      return "";
    }
    case GroupShape::kTinyScale: return amax < std::ldexp(1.0f, -119) ? "" : "tiny-scale group has a large amax";
    case GroupShape::kHugeScale: return amax >= std::ldexp(1.0f, 107) ? "" : "huge-scale group has a small amax";
    case GroupShape::kOneOutlier:
    case GroupShape::kRandom: return any_nan || any_inf ? "finite group holds a NaN or Inf" : "";
  }
  return "unknown shape";
}

std::string MatrixViolation(const recipe::Recipe& r, const recipe::Layout& layout, const Matrix& m) {
  if (static_cast<long>(m.values.size()) != m.rows * m.cols) return "size differs from rows x cols";
  recipe::GroupGrid g;
  if (recipe::MakeGroupGrid(r, layout, m.rows, m.cols, &g) != recipe::TensorStatus::kOk) {
    return "the generated shape does not fit the layout";
  }
  if (static_cast<long>(m.shapes.size()) != g.Count()) return "one shape per group expected";
  for (long group = 0; group < g.Count(); ++group) {
    std::vector<float> x;
    recipe::ForEachInGroup(g, group, [&](long k) { x.push_back(m.values[static_cast<std::size_t>(k)]); });
    const std::string v = ShapeViolation(r, m.shapes[static_cast<std::size_t>(group)], x);
    if (!v.empty()) return "group " + std::to_string(group) + ": " + v;
  }
  return "";
}

TEST(BlockGenerators, EveryRecipeGetsEveryShapeAndEachHolds) {
  const int draws = Draws(120, 400);
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    std::set<GroupShape> shapes;
    bool partial = false;
    for (const Matrix& m : Sample(Matrices(r), draws, 5)) {
      const std::string v = MatrixViolation(r, r.layout, m);
      ASSERT_EQ(v, "") << recipe::RecipeName(r) << ": " << v;
      shapes.insert(m.shapes.begin(), m.shapes.end());
      partial |= m.partial_last_block;
    }
    EXPECT_EQ(shapes.size(), static_cast<std::size_t>(kGroupShapeCount)) << recipe::RecipeName(r);
    if (r.layout.geometry == recipe::Geometry::kBlock1d) EXPECT_TRUE(partial) << recipe::RecipeName(r);
    for (const std::vector<float>& block : Sample(Blocks(r), Draws(20, 60), 6)) {
      if (r.layout.size > 0) EXPECT_EQ(static_cast<int>(block.size()), r.layout.size) << recipe::RecipeName(r);
    }
  }
}

TEST(BlockGenerators, ScaledRecipesUnderEveryLayout) {
  const recipe::Recipe* r = recipe::FindRecipe("int4", "ao-sym");
  ASSERT_NE(r, nullptr);
  const recipe::Layout layouts[] = {{recipe::Geometry::kPerRow, 0, 0},
                                    {recipe::Geometry::kGroup, 32, 0},
                                    {recipe::Geometry::kTile2d, 16, 2}};
  for (const recipe::Layout& layout : layouts) {
    for (const Matrix& m : Sample(Matrices(*r, layout), Draws(40, 150), 7)) {
      EXPECT_EQ(MatrixViolation(*r, layout, m), "") << recipe::LayoutName(layout);
    }
  }
}

TEST(BlockGenerators, ShrinkingKeepsTheStructure) {
  rc::Random random(8);
  int candidates = 0;
  for (const recipe::Recipe* r : {recipe::FindRecipe("mxfp4", "ocp"), recipe::FindRecipe("nvfp4", "te"),
                                  recipe::FindRecipe("int8", "ao-sym")}) {
    ASSERT_NE(r, nullptr);
    for (int i = 0; i < Draws(10, 40); ++i) {
      const rc::Shrinkable<Matrix> s = Matrices(*r)(random.split(), rc::kNominalSize);
      const Matrix original = s.value();
      // The first shrinks of the first two levels: what a failing property walks through.
      int level_one = 0;
      for (rc::Seq<rc::Shrinkable<Matrix>> seq = s.shrinks(); auto c = seq.next();) {
        if (++level_one > 12) break;
        const Matrix m = c->value();
        ++candidates;
        EXPECT_EQ(MatrixViolation(*r, r->layout, m), "") << recipe::RecipeName(*r);
        EXPECT_EQ(m.partial_last_block, original.partial_last_block) << recipe::RecipeName(*r);
        if (level_one <= 3) {
          int level_two = 0;
          for (rc::Seq<rc::Shrinkable<Matrix>> inner = c->shrinks(); auto d = inner.next();) {
            if (++level_two > 6) break;
            ++candidates;
            EXPECT_EQ(MatrixViolation(*r, r->layout, d->value()), "") << recipe::RecipeName(*r);
          }
        }
      }
    }
  }
  EXPECT_GT(candidates, 0);  // the loop above ran
}

}  // namespace
}  // namespace lowbit::testing
