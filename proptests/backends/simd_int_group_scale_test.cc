// The SIMD group quantizers' vector scale step (simd/src/
// int_group_scale-inl.h VectorIntGroupScale, through simd/block_scale.h
// IntGroupScalesOnTarget) equals the model's scale step, recipe::ChooseScale
// (formats/recipe/scaled_scale.h), on every compiled target the CPU runs:
// the stored scale's and the element factor's FP32 bits and the zero point,
// for every catalog recipe whose rule it covers, on the amaxes of groups
// without NaN (+0 to +Inf):
//
//   full   every one of those 2^31 - 2^23 + 1 FP32 amax bit patterns;
//   ci     every exponent field with the mantissas 0, 1, 2, 2^22 +- 1 and
//          all ones, the smallest subnormals, the amaxes within 3 ulps of
//          where a rule's floor or zero test changes its answer and of
//          where the factor overflows, and a prime stride through them all;
//   smoke  the same with a coarser stride.
//
// The TorchAO symmetric rule reads min and max: the model is asked with
// three groups of that amax (its extreme at +amax, at -amax, at both), and a
// property draws ordinary groups (any min <= max without NaN) against the
// vector step of their amax. GPTQ's rules (VectorGptqScale, through
// MinMaxGroupScalesOnTarget) read min and max, a domain too large to walk:
// a property draws them biased to where the rule changes its answer. Last,
// the group quantizers that use these steps (int_group_quantize-inl.h
// QuantizeGroupsLoop: batches of consecutive groups) or write packed codes
// four vectors at a time equal the model end to end on inputs biased to
// NaN / Inf groups, rounding ties and all-zero groups.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/simd/block_scale.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"
#include "test_level.h"

namespace lowbit {
namespace {

constexpr std::uint32_t kInfBits = kF32ExponentMask;

// The catalog's recipes with a vector group scale rule, one per distinct set
// of the fields the rule reads (recipe/scaled_scale.h ChooseScaledScale:
// rule, qmin, qmax, eps and the reciprocal division).
std::vector<recipe::Recipe> VectorScaleRecipes() {
  std::map<std::tuple<int, int, int, std::uint32_t, bool>, recipe::Recipe> distinct;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (!simd::HasVectorIntGroupScale(r)) continue;
    distinct.emplace(std::make_tuple(static_cast<int>(r.scale_rule), r.qmin, r.qmax, F32Bits(r.eps),
                                     r.scalar_divisor_as_reciprocal),
                     r);
  }
  std::vector<recipe::Recipe> out;
  for (const auto& [key, r] : distinct) out.push_back(r);
  return out;
}

// The inputs below the full level (see the file comment).
std::vector<std::uint32_t> SampledInputs(const recipe::Recipe& r, testing::TestLevel level) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t e = 0; e < 255; ++e) {
    for (std::uint32_t m : {0u, 1u, 2u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFEu, 0x7FFFFFu}) {
      v.push_back((e << kF32MantissaBits) | m);
    }
  }
  for (std::uint32_t b = 0; b < 256; ++b) v.push_back(b);  // amax / qmax underflowing to 0
  // Where the answer changes: the floor (scale = eps: amax near eps times
  // the divisor, or eps itself), the factor 1 / scale overflowing (scale
  // near 2^-128) and the largest values.
  const float qmax = static_cast<float>(r.qmax);
  const float half_range = (qmax - static_cast<float>(r.qmin)) / 2.0f;
  for (float edge : {r.eps, r.eps * half_range, r.eps * qmax, 0x1p-128f * half_range, 0x1p-128f * qmax,
                     recipe::kF32Max, recipe::kF32Max / half_range}) {
    const std::uint32_t b = F32Bits(edge);
    for (std::uint32_t d = b < 3 ? 0 : b - 3; d <= b + 3 && d <= kInfBits; ++d) v.push_back(d);
  }
  v.push_back(kInfBits);
  const std::uint64_t stride = level == testing::TestLevel::kSmoke ? 65521 : 4093;  // primes
  for (std::uint64_t x = 0; x <= kInfBits; x += stride) v.push_back(static_cast<std::uint32_t>(x));
  return v;
}

std::vector<std::int64_t> RunnableTargets() {
  std::vector<std::int64_t> t;
  for (std::int64_t target : simd::CompiledTargets()) {
    if (simd::TargetAvailable(target)) t.push_back(target);
  }
  return t;
}

// The model's scale of a group without NaN whose amax is a: with min and
// max as the shape (0: the extreme is +a; 1: -a; 2: both).
recipe::BlockScale ModelScale(const recipe::Recipe& r, float a, int shape) {
  recipe::GroupStats stats;
  stats.amax = a;
  stats.min = shape == 0 ? 0.0f : -a;
  stats.max = shape == 1 ? 0.0f : a;
  return recipe::ChooseScale(r, stats);
}

std::string Mismatch(const std::string& what, std::int64_t target, std::uint32_t amax, int shape,
                     const recipe::BlockScale& want, std::uint32_t decode, std::uint32_t factor, std::int32_t zp) {
  return what + " on " + simd::TargetName(target) + " amax " + testing::Hex(amax) + " shape " +
         std::to_string(shape) + ": model decode " + testing::F32Hex(want.decode) + " factor " +
         testing::F32Hex(want.factor) + " zero point " + std::to_string(want.zero_point) + ", vector " +
         testing::Hex(decode) + " " + testing::Hex(factor) + " " + std::to_string(zp);
}

// Compares every target with the model on inputs [begin, end) of `inputs`
// (or of 0 .. +Inf's bits when inputs is null); returns how many inputs were
// checked and appends up to a few mismatches to *bad.
std::uint64_t CompareRange(const recipe::Recipe& r, const std::vector<std::int64_t>& targets,
                           const std::vector<std::uint32_t>* inputs, std::uint64_t begin, std::uint64_t end,
                           std::vector<std::string>* bad) {
  constexpr std::uint64_t kChunk = 1 << 16;
  std::vector<std::uint32_t> amax(kChunk), decode(kChunk), factor(kChunk);
  std::vector<std::int32_t> zp(kChunk);
  std::vector<recipe::BlockScale> want(kChunk * 3);
  const bool symmetric = r.scale_rule == recipe::ScaleRule::kAoSymmetric;
  std::uint64_t checked = 0;
  for (std::uint64_t at = begin; at < end; at += kChunk) {
    const std::size_t n = static_cast<std::size_t>(std::min(kChunk, end - at));
    for (std::size_t i = 0; i < n; ++i) {
      amax[i] = inputs ? (*inputs)[at + i] : static_cast<std::uint32_t>(at + i);
      for (int shape = 0; shape < (symmetric ? 3 : 1); ++shape) {
        want[3 * i + shape] = ModelScale(r, F32FromBits(amax[i]), shape);
      }
    }
    for (std::int64_t target : targets) {
      std::fill(decode.begin(), decode.end(), 0xCDCDCDCDu);
      std::fill(factor.begin(), factor.end(), 0xCDCDCDCDu);
      const registry::Status s =
          simd::IntGroupScalesOnTarget(target, r, amax.data(), n, decode.data(), factor.data(), zp.data());
      if (!s.ok) {
        bad->push_back(std::string(simd::TargetName(target)) + ": " + s.message);
        return checked;
      }
      for (std::size_t i = 0; i < n; ++i) {
        for (int shape = 0; shape < (symmetric ? 3 : 1); ++shape) {
          const recipe::BlockScale& w = want[3 * i + shape];
          if ((decode[i] != F32Bits(w.decode) || factor[i] != F32Bits(w.factor) ||
               zp[i] != w.zero_point) &&
              bad->size() < 8) {
            bad->push_back(Mismatch(recipe::RecipeName(r), target, amax[i], shape, w, decode[i], factor[i], zp[i]));
          }
        }
      }
    }
    checked += n;
  }
  return checked;
}

TEST(SimdIntGroupScale, VectorScaleEqualsTheModelOnEveryAmax) {
  const testing::TestLevel level = testing::CurrentTestLevel();
  const std::vector<std::int64_t> targets = RunnableTargets();
  ASSERT_FALSE(targets.empty());
  const std::vector<recipe::Recipe> recipes = VectorScaleRecipes();
  // TorchAO symmetric (plain and with the reciprocal division), common,
  // common with the floor: the kernels' rules are all in the catalog.
  ASSERT_GE(recipes.size(), 4u);
  const bool full = level == testing::TestLevel::kFull;
  const int threads = full ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1;
  for (const recipe::Recipe& r : recipes) {
    const std::vector<std::uint32_t> inputs = full ? std::vector<std::uint32_t>{} : SampledInputs(r, level);
    const std::uint64_t total = full ? std::uint64_t{kInfBits} + 1 : inputs.size();
    std::vector<std::uint64_t> checked(threads, 0);
    std::vector<std::vector<std::string>> bad(threads);
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) {
      pool.emplace_back([&, k] {
        const std::uint64_t begin = total * k / threads, end = total * (k + 1) / threads;
        checked[k] = CompareRange(r, targets, full ? nullptr : &inputs, begin, end, &bad[k]);
      });
    }
    for (std::thread& th : pool) th.join();
    std::uint64_t sum = 0;
    for (int k = 0; k < threads; ++k) {
      sum += checked[k];
      for (const std::string& b : bad[k]) ADD_FAILURE() << b;
    }
    // Every input was compared, and there were enough of them: every
    // NaN-free amax at full, a stride of 4093 at ci, 65521 at smoke.
    EXPECT_EQ(sum, total) << recipe::RecipeName(r);
    const std::uint64_t least = full ? std::uint64_t{kInfBits} + 1
                                     : level == testing::TestLevel::kSmoke ? 30000u : 500000u;
    EXPECT_GE(sum, least) << recipe::RecipeName(r);
  }
}

// Any group without NaN (min <= max, amax = max(|min|, |max|)): the model's
// scale from its min and max equals the vector step's from its amax.
TEST(SimdIntGroupScale, ScaleOfAnyGroupIsTheScaleOfItsAmax) {
  const std::vector<recipe::Recipe> recipes = VectorScaleRecipes();
  ASSERT_FALSE(recipes.empty());
  testing::CheckAtLevel({200, 20000, 1000000}, [&] {
    const recipe::Recipe& r = *rc::gen::elementOf(recipes);
    const auto not_nan = rc::gen::suchThat(testing::BiasedFloat(), [](float v) { return !std::isnan(v); });
    float lo = *not_nan;
    float hi = *rc::gen::oneOf(not_nan, rc::gen::just(lo), rc::gen::just(-lo), rc::gen::just(0.0f),
                               rc::gen::just(-0.0f));
    if (hi < lo) std::swap(lo, hi);
    recipe::GroupStats stats;
    stats.min = lo;
    stats.max = hi;
    const std::uint32_t amax = std::max(F32Bits(lo) & ~kF32SignMask, F32Bits(hi) & ~kF32SignMask);
    stats.amax = F32FromBits(amax);
    const recipe::BlockScale want = recipe::ChooseScale(r, stats);
    std::uint32_t decode = 0, factor = 0;
    std::int32_t zp = 0;
    const registry::Status s = simd::IntGroupScalesOnTarget(simd::kBestTarget, r, &amax, 1, &decode, &factor, &zp);
    RC_ASSERT(s.ok);
    RC_ASSERT(decode == F32Bits(want.decode));
    RC_ASSERT(factor == F32Bits(want.factor));
    RC_ASSERT(zp == want.zero_point);
  });
}

TEST(SimdIntGroupScale, HookRejectsWhatIsWrong) {
  std::uint32_t amax = 0x3F800000u, decode = 0, factor = 0;
  std::int32_t zp = 0;
  const recipe::Recipe* gptq = recipe::FindRecipe("uint4", "gptq-asym");
  ASSERT_NE(gptq, nullptr);
  EXPECT_FALSE(simd::HasVectorIntGroupScale(*gptq));
  registry::Status s = simd::IntGroupScalesOnTarget(simd::kBestTarget, *gptq, &amax, 1, &decode, &factor, &zp);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("no vector group scale rule"), std::string::npos) << s.message;
  const recipe::Recipe* ao = recipe::FindRecipe("int4", "ao-sym");
  ASSERT_NE(ao, nullptr);
  for (std::uint32_t wrong : {0x80000000u, 0xBF800000u, 0x7F800001u, 0x7FC00000u}) {
    s = simd::IntGroupScalesOnTarget(simd::kBestTarget, *ao, &wrong, 1, &decode, &factor, &zp);
    EXPECT_FALSE(s.ok) << testing::Hex(wrong);
    EXPECT_NE(s.message.find("negative or NaN"), std::string::npos) << s.message;
  }
  s = simd::IntGroupScalesOnTarget(simd::kBestTarget, *ao, nullptr, 1, &decode, &factor, &zp);
  EXPECT_FALSE(s.ok);
  EXPECT_TRUE(simd::IntGroupScalesOnTarget(simd::kBestTarget, *ao, nullptr, 0, nullptr, nullptr, nullptr).ok);
}

// GPTQ's min / max rules (int_group_scale-inl.h VectorGptqScale, through
// MinMaxGroupScalesOnTarget) against the model on groups without NaN or
// Inf: any finite min <= max, biased to zeros (the all-zero group and the
// sign of a zero), subnormals (a scale underflowing to 0: the zero point's
// non-finite ratio), ranges that overflow, and zero points on their
// rounding ties (-xmin / scale exactly half an odd integer).
std::vector<recipe::Recipe> MinMaxScaleRecipes() {
  std::map<std::tuple<int, int, int>, recipe::Recipe> distinct;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (simd::HasVectorMinMaxGroupScale(r)) {
      distinct.emplace(std::make_tuple(static_cast<int>(r.scale_rule), r.qmin, r.qmax), r);
    }
  }
  std::vector<recipe::Recipe> out;
  for (const auto& [key, r] : distinct) out.push_back(r);
  return out;
}

rc::Gen<float> FiniteBiased() {
  return rc::gen::oneOf(
      rc::gen::suchThat(testing::BiasedFloat(), [](float v) { return std::isfinite(v); }),
      rc::gen::element(0.0f, -0.0f, 0x1p-149f, -0x1p-149f, recipe::kF32Max, -recipe::kF32Max),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 64), rc::gen::arbitrary<bool>()),
                   [](std::pair<int, bool> p) { return (p.second ? -1.0f : 1.0f) * 0x1p-149f * p.first; }));
}

TEST(SimdIntGroupScale, VectorGptqScaleEqualsTheModel) {
  const std::vector<recipe::Recipe> recipes = MinMaxScaleRecipes();
  ASSERT_GE(recipes.size(), 2u);  // symmetric and asymmetric
  const std::vector<std::int64_t> targets = RunnableTargets();
  ASSERT_FALSE(targets.empty());
  testing::CheckAtLevel({500, 50000, 2000000}, [&] {
    const recipe::Recipe& r = *rc::gen::elementOf(recipes);
    float lo = 0.0f, hi = 0.0f;
    if (*rc::gen::inRange(0, 4) == 0) {
      // A zero point tie: scale 2^e, xmin = -(n + 1/2) * 2^e, xmax = xmin + qmax * 2^e.
      const int e = *rc::gen::inRange(-140, 100);
      const int n = *rc::gen::inRange(0, r.qmax);
      lo = -std::ldexp(static_cast<float>(n) + 0.5f, e);
      hi = lo + std::ldexp(static_cast<float>(r.qmax), e);
    } else {
      lo = *FiniteBiased();
      hi = *rc::gen::oneOf(FiniteBiased(), rc::gen::just(lo), rc::gen::just(-lo));
    }
    if (hi < lo) std::swap(lo, hi);
    recipe::GroupStats stats;
    stats.min = lo;
    stats.max = hi;
    stats.amax = std::max(std::fabs(lo), std::fabs(hi));
    const recipe::BlockScale want = recipe::ChooseScale(r, stats);
    const std::uint32_t min_bits = F32Bits(lo), max_bits = F32Bits(hi);
    for (std::int64_t target : targets) {
      std::uint32_t decode = 0, factor = 0;
      std::int32_t zp = 0;
      const registry::Status s =
          simd::MinMaxGroupScalesOnTarget(target, r, &min_bits, &max_bits, 1, &decode, &factor, &zp);
      RC_ASSERT(s.ok);
      RC_ASSERT(decode == F32Bits(want.decode));
      RC_ASSERT(factor == F32Bits(want.factor));
      RC_ASSERT(zp == want.zero_point);
    }
  });
}

TEST(SimdIntGroupScale, MinMaxHookRejectsWhatIsWrong) {
  std::uint32_t lo = 0xBF800000u, hi = 0x3F800000u, decode = 0, factor = 0;
  std::int32_t zp = 0;
  const recipe::Recipe* ao = recipe::FindRecipe("int4", "ao-sym");
  ASSERT_NE(ao, nullptr);
  registry::Status s = simd::MinMaxGroupScalesOnTarget(simd::kBestTarget, *ao, &lo, &hi, 1, &decode, &factor, &zp);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("no vector min / max group scale rule"), std::string::npos) << s.message;
  const recipe::Recipe* gptq = recipe::FindRecipe("uint4", "gptq-asym");
  ASSERT_NE(gptq, nullptr);
  EXPECT_TRUE(simd::MinMaxGroupScalesOnTarget(simd::kBestTarget, *gptq, &lo, &hi, 1, &decode, &factor, &zp).ok);
  for (const auto& [wrong_lo, wrong_hi] : {std::pair{hi, lo}, std::pair{0x7F800000u, hi}, std::pair{lo, 0x7FC00000u}}) {
    s = simd::MinMaxGroupScalesOnTarget(simd::kBestTarget, *gptq, &wrong_lo, &wrong_hi, 1, &decode, &factor, &zp);
    EXPECT_FALSE(s.ok) << testing::Hex(wrong_lo) << " " << testing::Hex(wrong_hi);
    EXPECT_NE(s.message.find("not finite, or a min above its max"), std::string::npos) << s.message;
  }
}

// The group quantizers over recipes with the vector step and every 4-bit
// integer recipe (the packed four-vector element path, PackedGroupCodes, at
// groups of 64 and 128 and per row), at group sizes where batches of
// consecutive groups take the vector step, with enough groups for several
// full batches and a short last one, against the model.
void QuantizeWithVectorScaleMatchesModel(std::int64_t target) {
  static const std::vector<const recipe::Recipe*> recipes = [] {
    std::vector<const recipe::Recipe*> v;
    for (const recipe::Recipe* r : testing::CatalogRecipes(recipe::Family::kScaled)) {
      const bool int4 = !r->element.IsFloat() && r->element.total_bits == 4;
      if (simd::HasVectorIntGroupScale(*r) || simd::HasVectorMinMaxGroupScale(*r) || int4) v.push_back(r);
    }
    return v;
  }();
  RC_PRE(!recipes.empty());
  const recipe::Recipe& r = **rc::gen::elementOf(recipes);
  const int group = *rc::gen::element(128, 64, 32, 16);
  const bool per_row = *rc::gen::inRange(0, 4) == 0;
  const recipe::Layout layout = per_row ? recipe::Layout{recipe::Geometry::kPerRow, 0, 0}
                                        : recipe::Layout{recipe::Geometry::kGroup, group, 0};
  const std::size_t cols = static_cast<std::size_t>(group) * *rc::gen::inRange<std::size_t>(1, 5);
  const std::size_t rows = *rc::gen::inRange<std::size_t>(1, per_row ? 40 : 70);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 4);  // in floats: unaligned
  std::vector<float> x(rows * cols);
  const std::size_t fill = per_row ? cols : static_cast<std::size_t>(group);
  for (std::size_t s = 0; s < x.size(); s += fill) {
    // Mostly ordinary groups (the vector path), some biased (NaN, Inf,
    // zeros, ties: the model's path inside a vector batch).
    if (*rc::gen::inRange(0, 4) == 0) {
      testing::FillBiasedRun(r, x.data() + s, fill);
    } else {
      const int k = *rc::gen::inRange(-30, 30);
      for (std::size_t i = 0; i < fill; ++i) {
        x[s + i] = std::ldexp(static_cast<float>(*rc::gen::inRange(-1 << 20, 1 << 20)), k - 20);
      }
    }
  }
  testing::CheckQuantizeMatchesModel(target, r, layout, x, rows, cols, offset);
}

LOWBIT_SIMD_TARGET_SUITE(SimdIntGroupScaleQuantize);
TEST_P(SimdIntGroupScaleQuantize, VectorScaleGroupsMatchModel) {
  testing::CheckAtLevel({20, 300, 20000}, [this] { QuantizeWithVectorScaleMatchesModel(target()); });
}

}  // namespace
}  // namespace lowbit
