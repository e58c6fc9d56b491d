// The named alternatives of formats/include/lowbit/formats/alternatives/
// equal the model steps they replace (docs/design.md "Recipes are data too":
// a faster formulation sits beside the model with an equality test on every
// input). Host code, so CI runs it; the CUDA kernels call the same functions
// (their device compilation is swept by cuda/tests/fast_e2m1_test.cu,
// fast_mx_elements_test.cu and half_float_alternatives_test.cu).
//
// FP32 -> BF16 / FP16 (alternatives/f32_f16_bf16.h): every one of the 2^32
// inputs at full; at ci the binades where the formulation changes path,
// every rounding class of every exponent at the destination's round bit, and
// the prime stride; each under the default options and a set with every
// option that cannot act changed. BF16 / FP16 -> FP32: every code under
// every option set the predicate accepts.
//
// Single-FP32-input alternatives (the E2M1 encoders, the RCEIL conversion,
// the MXFP6 and MXINT8 element encoders): every one of the 2^32 inputs at
// LOWBIT_TEST_LEVEL=full; at ci every input of the binades where the result
// changes, every NaN / Inf / subnormal (the MXFP6 / MXINT8 sweeps: every
// rounding and NaN class of every exponent instead), every other exponent
// with its boundary mantissas, and a prime stride through all 2^32. The
// E2M1 decode: all 16 codes. The block-scale and scaled-element
// alternatives (two or three FP32 inputs): every recipe of the catalog they
// apply to, on boundary-biased inputs (powers of two and their neighbours,
// the products that land on a code boundary, 0, subnormals, FLT_MAX, Inf,
// NaN) and random ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/formats/alternatives/amax.h"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/alternatives/e8m0_rceil.h"
#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/alternatives/fp6.h"
#include "lowbit/formats/alternatives/mx_block.h"
#include "lowbit/formats/alternatives/mxint8.h"
#include "lowbit/formats/alternatives/nvfp4_te_scale.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/profiles/nvidia.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "test_level.h"

namespace lowbit {
namespace {

std::string Hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llX", static_cast<unsigned long long>(v));
  return b;
}

// ---- sweeps over single FP32 inputs -------------------------------------

// The inputs a sweep visits at the current level. `dense_exponents` are the
// exponent fields whose every mantissa is visited at ci (both signs).
struct SweepPlan {
  std::vector<std::uint32_t> dense_exponents;
  // At ci, also every input of exponent fields 0 and 0xFF (zeros, FP32
  // subnormals, Inf, every NaN). The MXFP6 / MXINT8 sweeps, which call the
  // model for several recipes per input, leave them to rounding_classes.
  bool dense_zero_and_nonfinite = true;
  // At ci, for every exponent field and sign: every value of the top 8
  // mantissa bits with the low 15 bits 0, 1, 0x4000 or 0x7FFF. That is every
  // rounding class (kept bit even or odd, round bit, sticky bits zero or not)
  // of a rounding whose round bit is one of the FP32 significand's bits
  // 15..23 (23 the implicit bit), as for every FP6 and INT8 result, and
  // every NaN class (quiet, signalling, payload).
  bool rounding_classes = false;
  // At ci, also these inputs (a sweep's own rounding classes, when its round
  // bit is not among rounding_classes' bits: FP32 -> FP16).
  std::vector<std::uint32_t> extra;
};

// Calls check(x) for every input of the plan at the current level, on every
// core; check returns false on a mismatch and describes it in *why. Returns
// how many inputs were checked.
std::uint64_t Sweep(const SweepPlan& plan, const std::function<bool(std::uint32_t, std::string*)>& check,
                    std::vector<std::string>* failures) {
  const testing::TestLevel level = testing::CurrentTestLevel();
  // Chunks of work: [begin, end) ranges of inputs (x) or of a list.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  std::vector<std::uint32_t> list;
  if (level == testing::TestLevel::kFull) {
    for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += std::uint64_t{1} << 24) {
      ranges.push_back({b, b + (std::uint64_t{1} << 24)});
    }
  } else {
    std::vector<std::uint32_t> exponents = plan.dense_exponents;
    if (plan.dense_zero_and_nonfinite) {
      exponents.push_back(0);     // zeros and subnormals
      exponents.push_back(0xFF);  // Inf and NaN
    }
    if (level == testing::TestLevel::kSmoke) exponents.clear();  // the list below only
    for (std::uint32_t e : exponents) {
      for (std::uint32_t sign : {0u, 1u}) {
        const std::uint64_t base = (static_cast<std::uint64_t>(sign) << 31) | (static_cast<std::uint64_t>(e) << 23);
        ranges.push_back({base, base + (std::uint64_t{1} << 23)});
      }
    }
    const std::uint32_t mantissas[] = {0, 1, 2, 0x1FFFFF, 0x200000, 0x200001, 0x3FFFFF, 0x400000, 0x400001,
                                       0x5FFFFF, 0x600000, 0x600001, 0x7FFFFE, 0x7FFFFF};
    for (std::uint32_t e = 0; e < 256; ++e) {
      for (std::uint32_t m : mantissas) {
        list.push_back((e << 23) | m);
        list.push_back(0x80000000u | (e << 23) | m);
      }
    }
    if (plan.rounding_classes && level != testing::TestLevel::kSmoke) {
      for (std::uint32_t e = 0; e < 256; ++e) {
        for (std::uint32_t top = 0; top < 256; ++top) {
          for (std::uint32_t low : {0u, 1u, 0x4000u, 0x7FFFu}) {
            const std::uint32_t x = (e << 23) | (top << 15) | low;
            list.push_back(x);
            list.push_back(0x80000000u | x);
          }
        }
      }
    }
    if (level != testing::TestLevel::kSmoke) list.insert(list.end(), plan.extra.begin(), plan.extra.end());
    // 4093 is prime: every low-bit residue shows up (~1.05M inputs).
    for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += 4093) list.push_back(static_cast<std::uint32_t>(x));
  }
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::uint64_t> checked(threads, 0);
  std::vector<std::vector<std::string>> bad(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::string why;
      auto one = [&](std::uint32_t x) {
        ++checked[t];
        if (!check(x, &why) && bad[t].size() < 8) bad[t].push_back("x=" + Hex(x) + ": " + why);
      };
      for (std::size_t r = t; r < ranges.size(); r += threads) {
        for (std::uint64_t x = ranges[r].first; x < ranges[r].second; ++x) one(static_cast<std::uint32_t>(x));
      }
      for (std::size_t k = t; k < list.size(); k += threads) one(list[k]);
    });
  }
  for (std::thread& th : pool) th.join();
  std::uint64_t total = 0;
  for (int t = 0; t < threads; ++t) {
    total += checked[t];
    failures->insert(failures->end(), bad[t].begin(), bad[t].end());
  }
  return total;
}

void ExpectSweptClean(std::uint64_t checked, const std::vector<std::string>& failures) {
  for (const std::string& f : failures) ADD_FAILURE() << f;
  // The body ran: a sweep that checked nothing would pass silently.
  const testing::TestLevel level = testing::CurrentTestLevel();
  EXPECT_GE(checked, level == testing::TestLevel::kFull ? (std::uint64_t{1} << 32) : 1000000u);
  std::printf("[ sweep    ] %llu inputs, %zu mismatches shown\n", static_cast<unsigned long long>(checked),
              failures.size());
}

// ---- E2M1 ------------------------------------------------------------------

TEST(AlternativeE2m1, EncodersEqualTheModelOnEveryInput) {
  const EncodeOptions model_options = recipe::SatfiniteElements();
  // Exponent fields 123..131: |x| in [2^-4, 32), every binade where a code
  // changes (0.25 .. 6) and those next to it, including the clamp of E' at 3.
  SweepPlan plan;
  for (std::uint32_t e = 123; e <= 131; ++e) plan.dense_exponents.push_back(e);
  std::vector<std::string> failures;
  const std::uint64_t checked = Sweep(plan, [&](std::uint32_t x, std::string* why) {
    const std::uint32_t want = static_cast<std::uint32_t>(EncodeF32Bits(kE2m1, x, model_options).code);
    const std::uint32_t one = alternatives::EncodeE2m1OneAddition(F32FromBits(x));
    const std::uint32_t two = alternatives::EncodeE2m1TwoPath(F32FromBits(x));
    if (one == want && two == want) return true;
    *why = "model " + Hex(want) + ", one-addition " + Hex(one) + ", two-path " + Hex(two);
    return false;
  }, &failures);
  ExpectSweptClean(checked, failures);
}

TEST(AlternativeE2m1, DecodeEqualsTheModelOnEveryCode) {
  for (std::uint32_t c = 0; c < 16; ++c) {
    EXPECT_EQ(F32Bits(alternatives::DecodeE2m1FromBits(c)), DecodeToF32Bits(kE2m1, c)) << c;
  }
}

// The encoders are also constant expressions, with the values of
// docs/formats-reference.md §4.5 (ties to even, saturation, NaN -> +6, -0).
static_assert(alternatives::EncodeE2m1OneAddition(5.0f) == 0x6);
static_assert(alternatives::EncodeE2m1OneAddition(-0.25f) == 0x8);
static_assert(alternatives::EncodeE2m1OneAddition(1e30f) == 0x7);
static_assert(alternatives::EncodeE2m1TwoPath(0.75f) == 0x2);
static_assert(alternatives::DecodeE2m1FromBits(0xF) == -6.0f);

// ---- E8M0 RCEIL --------------------------------------------------------------

// An MX recipe whose fp32(1/max) is exactly 1 (an integer element with qmax 1
// and no implied exponent), so the model's RCEIL rule value is the amax
// itself and its code is the model's E8M0 round-up of that value.
recipe::Recipe UnitRceilRecipe(bool saturate) {
  recipe::Recipe r{};
  for (const recipe::Recipe& c : recipe::kAllRecipes) {
    if (c.family() == recipe::Family::kMx && !c.element.IsFloat()) r = c;
  }
  EXPECT_STREQ(r.name, "mxint8");
  r.scale_rule = recipe::ScaleRule::kMxRceil;
  r.element_implied_exponent = 0;
  r.qmin = -1;
  r.qmax = 1;
  r.scale_saturate = saturate;
  EXPECT_EQ(recipe::MaxNormReciprocal(r), 1.0f);
  return r;
}

TEST(AlternativeE8m0Rceil, EqualsTheModelOnEveryInput) {
  for (bool saturate : {true, false}) {
    const recipe::Recipe r = UnitRceilRecipe(saturate);
    SweepPlan plan;
    // Subnormals (exponent 0, always dense), the first normal binade, 1.0's,
    // and the top binade where the round-up overflows.
    for (std::uint32_t e : {1u, 127u, 254u}) plan.dense_exponents.push_back(e);
    std::vector<std::string> failures;
    const std::uint64_t checked = Sweep(plan, [&](std::uint32_t x, std::string* why) {
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = F32FromBits(x);
      const std::uint32_t want = recipe::ChooseScale(r, stats).code;
      const std::uint32_t got = alternatives::E8m0RceilFromBits(F32FromBits(x), saturate);
      if (got == want) return true;
      *why = std::string(saturate ? "saturating" : "non-saturating") + ": model " + Hex(want) + ", bits " + Hex(got);
      return false;
    }, &failures);
    ExpectSweptClean(checked, failures);
  }
}

// ---- amax --------------------------------------------------------------------

// Every pair of a set with each class of FP32 magnitude (and, beyond the
// domain the kernels use, negative values too): both NaN rules.
TEST(AlternativeAmax, CombineEqualsTheModelOnEveryPairOfBoundaryValues) {
  std::vector<std::uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u,
                                     0x3F800001u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                     0x7F800001u, 0x7FBFFFFFu, 0xFF800001u, 0x7FFFFFFFu, 0x40C00000u, 0xC0C00000u};
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) bits.push_back(rng());
  int pairs = 0;
  for (AmaxNan rule : {AmaxNan::kIgnore, AmaxNan::kPropagate}) {
    for (std::uint32_t a : bits) {
      for (std::uint32_t b : bits) {
        const std::uint32_t want = F32Bits(recipe::CombineAmax(rule, F32FromBits(a), F32FromBits(b)));
        const std::uint32_t got = F32Bits(alternatives::CombineAmaxOfMagnitudes(rule, F32FromBits(a), F32FromBits(b)));
        // Both maxima of +0 and -0 are allowed by the model's rule only in
        // order; the kernels never see -0 (|x|), so compare magnitudes there.
        const bool zeros = (a & 0x7FFFFFFFu) == 0 && (b & 0x7FFFFFFFu) == 0;
        EXPECT_TRUE(zeros ? (got & 0x7FFFFFFFu) == 0 : got == want)
            << "rule " << int(rule) << " a " << Hex(a) << " b " << Hex(b) << ": model " << Hex(want) << ", got "
            << Hex(got);
        ++pairs;
      }
    }
  }
  EXPECT_GT(pairs, 80000);
}

// ---- block scales and scaled elements --------------------------------------

// Boundary-biased FP32 values >= 0: every power of two, its neighbours, the
// values 2^k * (1 - 2^-24) just below (docs/design.md "Tests"), midpoints,
// 0, the smallest subnormals, FLT_MAX, +Inf, +NaN; then `random` uniform bit
// patterns of non-negative floats.
std::vector<float> NonNegativeBoundaryValues(int random) {
  std::vector<std::uint32_t> bits = {0x00000000u, 0x00000001u, 0x00000002u, 0x003FFFFFu, 0x00400000u,
                                     0x00400001u, 0x007FFFFFu, 0x7F7FFFFFu, 0x7F7FFFFEu, 0x7F800000u,
                                     0x7FC00000u, 0x7F800001u};
  for (std::uint32_t e = 1; e < 255; ++e) {
    for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu}) bits.push_back((e << 23) | m);
  }
  std::mt19937 rng(20261124);
  for (int i = 0; i < random; ++i) bits.push_back(rng() & 0x7FFFFFFFu);
  std::vector<float> v;
  for (std::uint32_t b : bits) v.push_back(F32FromBits(b));
  return v;
}

// FP32 element values of both signs where a scaled element goes wrong: the
// boundary values, negated, and -0.
std::vector<float> SignedBoundaryValues(int random) {
  std::vector<float> v = NonNegativeBoundaryValues(random);
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

// How many random values the property tests add, and which share of the
// scale codes they visit, per level (smoke: seconds; full: ten times ci).
int RandomValues() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return 0;
    case testing::TestLevel::kCi: return 4000;
    case testing::TestLevel::kFull: return 40000;
  }
  return 4000;
}
bool VisitCode(int code) { return testing::CurrentTestLevel() != testing::TestLevel::kSmoke || code % 7 == 0 || code == 0xFF; }

std::vector<recipe::Recipe> MxRecipes() {
  std::vector<recipe::Recipe> rs;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() == recipe::Family::kMx) rs.push_back(r);
  }
  return rs;
}

std::string NameOf(const recipe::Recipe& r) { return std::string(r.name) + ":" + r.profile; }

// The amax values whose model scale is a boundary for this recipe: for
// every E8M0 code c, the product thresholds 2^(c - 127) divided by
// fp32(1/max) and their FP32 neighbours.
std::vector<float> ScaleBoundaryAmaxes(const recipe::Recipe& r) {
  std::vector<float> v = NonNegativeBoundaryValues(20000);
  const float rcp = recipe::MaxNormReciprocal(r);
  for (int c = 0; c < 255; ++c) {
    const float threshold = F32Pow2(c - 127) / rcp;
    const std::uint32_t b = F32Bits(threshold);
    for (std::uint32_t d : {b - 2, b - 1, b, b + 1, b + 2}) {
      if (d < 0x7F800000u) v.push_back(F32FromBits(d));
    }
  }
  return v;
}

void ExpectSameScale(const recipe::BlockScale& want, const recipe::BlockScale& got, const std::string& what) {
  EXPECT_EQ(got.code, want.code) << what;
  EXPECT_EQ(F32Bits(got.factor), F32Bits(want.factor)) << what;
  EXPECT_EQ(F32Bits(got.decode), F32Bits(want.decode)) << what;
  EXPECT_EQ(got.exponent, want.exponent) << what;
  EXPECT_EQ(F32Bits(got.rule_value), F32Bits(want.rule_value)) << what;
}

TEST(AlternativeMxScale, ChooseMxScaleCodeEqualsTheModelForEveryMxRecipe) {
  int rceil = 0;
  for (const recipe::Recipe& r : MxRecipes()) {
    rceil += r.scale_rule == recipe::ScaleRule::kMxRceil;
    int bad = 0;
    for (float amax : ScaleBoundaryAmaxes(r)) {
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = amax;
      const int want = recipe::ChooseScale(r, stats).code;
      const int got = alternatives::ChooseMxScaleCode(r, amax);
      if (got != want && bad++ < 4) {
        ADD_FAILURE() << NameOf(r) << " amax " << Hex(F32Bits(amax)) << ": model " << want << ", alternative " << got;
      }
    }
  }
  EXPECT_GE(rceil, 6) << "the RCEIL recipes (te, ao-rceil) are the ones with new code";
}

TEST(AlternativeMxScale, ChooseMxScaleFromBitsEqualsTheModelForEveryMxRecipe) {
  int compared = 0;
  for (const recipe::Recipe& r : MxRecipes()) {
    int bad = 0;
    for (float amax : ScaleBoundaryAmaxes(r)) {
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = amax;
      const recipe::BlockScale want = recipe::ChooseScale(r, stats);
      const recipe::BlockScale got = alternatives::ChooseMxScaleFromBits(r, amax);
      ++compared;
      if ((got.code != want.code || F32Bits(got.decode) != F32Bits(want.decode) || F32Bits(got.factor) != F32Bits(want.factor)) &&
          bad++ < 4) {
        ADD_FAILURE() << NameOf(r) << " amax " << Hex(F32Bits(amax)) << ": model code " << int{want.code} << " decode "
                      << Hex(F32Bits(want.decode)) << " factor " << Hex(F32Bits(want.factor)) << ", alternative code "
                      << int{got.code} << " decode " << Hex(F32Bits(got.decode)) << " factor " << Hex(F32Bits(got.factor));
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(AlternativeMxScale, ScaledElementByReciprocalEqualsTheModelForEveryMxRecipeAndCode) {
  const std::vector<float> xs = SignedBoundaryValues(RandomValues());
  for (const recipe::Recipe& r : MxRecipes()) {
    // Every scale the recipe's rule gives on the boundary amaxes (all codes
    // it can reach, the NaN code included).
    std::vector<recipe::BlockScale> scales;
    std::vector<bool> seen(256, false);
    for (float amax : ScaleBoundaryAmaxes(r)) {
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = amax;
      const recipe::BlockScale s = recipe::ChooseScale(r, stats);
      if (!seen[s.code]) {
        seen[s.code] = true;
        if (VisitCode(s.code)) scales.push_back(s);
      }
    }
    EXPECT_GE(scales.size(), testing::CurrentTestLevel() == testing::TestLevel::kSmoke ? 25u : 200u) << NameOf(r);
    int bad = 0;
    for (const recipe::BlockScale& s : scales) {
      for (float x : xs) {
        const std::uint32_t want = F32Bits(recipe::ScaledElement(r, s, x));
        const std::uint32_t got =
            F32Bits(alternatives::ScaledMxElementByReciprocal(r, alternatives::MxScaleByReciprocal(r, s.code), x));
        if (got != want && bad++ < 4) {
          ADD_FAILURE() << NameOf(r) << " code " << int(s.code) << " x " << Hex(F32Bits(x)) << ": model " << Hex(want)
                        << ", by reciprocal " << Hex(got);
        }
      }
    }
  }
}

// ScaledMxElementAnyNan leaves out the model's NaN-scale select; the codes
// agree for every MX recipe whose element conversion maps every NaN to one
// code: E2M1 through its alternatives, E4M3 / E5M2 through the model's
// conversion under the cuda-hw (nvidia profile) rule, for the recipes whose
// element rule that is (cuda/src/block_common.cuh HardwareEncodesElements).
TEST(AlternativeMxScale, ScaledElementAnyNanGivesTheModelsCodes) {
  const std::vector<float> xs = SignedBoundaryValues(RandomValues());
  int recipes = 0;
  for (const recipe::Recipe& r : MxRecipes()) {
    const bool e2m1 = profile_detail::SameLayout(r.element, kE2m1);
    const bool fp8 = profile_detail::SameLayout(r.element, kE4m3) || profile_detail::SameLayout(r.element, kE5m2);
    if (!e2m1 && !fp8) continue;
    // E2M1: the recipes whose element rule is the alternatives' (RNE; the
    // microxcaling "nearest" profile rounds half away and does not use them).
    const EncodeOptions satfinite = recipe::SatfiniteElements();
    if (e2m1 && (r.element_encode.rounding != satfinite.rounding ||
                 r.element_encode.nan_into_no_nan != satfinite.nan_into_no_nan ||
                 r.element_encode.keep_negative_zero != satfinite.keep_negative_zero ||
                 r.element_encode.overflow == Overflow::kWrap)) {
      continue;
    }
    FormatId id = FormatId::kE4m3;
    ASSERT_TRUE(profile_detail::IdentifyFormat(r.element, &id));
    EncodeOptions hw;
    ASSERT_TRUE(profile_detail::NvidiaEncodeOptions(true, id, RoundingMode::kNearestEven, &hw));
    // The FP8 recipes whose NaN-free results the instruction encodes as the
    // recipe does: the element rule equals the instruction's apart from the
    // NaN sign, which the recipes with a NaN-propagating amax never see.
    if (fp8) {
      EncodeOptions o = r.element_encode;
      if (r.amax_nan == AmaxNan::kPropagate) o.nan_sign = hw.nan_sign;
      if (o.rounding != hw.rounding || o.overflow != hw.overflow || o.inf_input != hw.inf_input ||
          o.nan_sign != hw.nan_sign) {
        continue;
      }
    }
    ++recipes;
    int bad = 0;
    std::vector<bool> seen(256, false);
    for (float amax : ScaleBoundaryAmaxes(r)) {
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = amax;
      const recipe::BlockScale s = recipe::ChooseScale(r, stats);
      if (seen[s.code]) continue;  // every code the rule reaches, once
      seen[s.code] = true;
      if (!VisitCode(s.code)) continue;
      const recipe::BlockScale fast = alternatives::MxScaleByReciprocal(r, s.code);
      for (float x : xs) {
        // Under a NaN-propagating amax a NaN or Inf element makes its block's
        // scale NaN (every MX rule maps a non-finite amax to 0xFF), so it
        // never meets a finite scale.
        if (r.amax_nan == AmaxNan::kPropagate && !F32IsFinite(F32Bits(x)) && s.code != recipe::kE8m0NanCode) {
          continue;
        }
        const std::uint32_t want = recipe::EncodeScaled(r, s, recipe::ScaledElement(r, s, x));
        const float y = alternatives::ScaledMxElementAnyNan(fast, x);
        const std::uint32_t got = e2m1 ? alternatives::EncodeE2m1OneAddition(y)
                                       : static_cast<std::uint32_t>(EncodeF32(r.element, y, hw).code);
        const std::uint32_t two = e2m1 ? alternatives::EncodeE2m1TwoPath(y) : got;
        if ((got != want || two != want) && bad++ < 4) {
          ADD_FAILURE() << NameOf(r) << " code " << int(s.code) << " x " << Hex(F32Bits(x)) << ": model " << Hex(want)
                        << ", alternative " << Hex(got) << " / " << Hex(two);
        }
      }
    }
  }
  EXPECT_GE(recipes, 7 + 2 * 2) << "the RNE mxfp4 recipes, and te / ocp of both MXFP8 formats";
}

// ---- MXFP6 and MXINT8 elements -----------------------------------------------

bool SameElementRule(const recipe::Recipe& a, const recipe::Recipe& b) {
  const EncodeOptions& x = a.element_encode;
  const EncodeOptions& y = b.element_encode;
  return profile_detail::SameLayout(a.element, b.element) && a.family() == b.family() && a.qmin == b.qmin &&
         a.qmax == b.qmax && x.rounding == y.rounding && x.overflow == y.overflow && x.inf_input == y.inf_input &&
         x.nan_sign == y.nan_sign && x.nan_payload == y.nan_payload && x.nan_into_no_nan == y.nan_into_no_nan &&
         x.keep_negative_zero == y.keep_negative_zero && x.zero_into_no_zero == y.zero_into_no_zero &&
         x.negative_into_unsigned == y.negative_into_unsigned && x.random_bits == y.random_bits &&
         x.random_bit_count == y.random_bit_count;
}

// The element rules an MX element alternative is proven for: one recipe for
// each distinct rule among the catalog's MX recipes with this element and
// "<format>:te" built for every MX element, MXINT8 included (the catalog
// lists no TE MXINT8; the rule is covered all the same). Every one of them
// must be a rule the alternatives apply to.
std::vector<recipe::Recipe> MxElementRules(const FormatSpec& element, bool (*applies)(const recipe::Recipe&),
                                           int expected_recipes) {
  std::vector<recipe::Recipe> all;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() == recipe::Family::kMx && profile_detail::SameLayout(r.element, element)) all.push_back(r);
  }
  EXPECT_EQ(static_cast<int>(all.size()), expected_recipes) << element.name;
  for (const recipe::MxFormat& f : recipe::kMxFormats) {
    if (!profile_detail::SameLayout(f.element, element)) continue;
    for (const recipe::MxProfile& p : recipe::kMxProfiles) {
      if (std::string(p.name) == "te") all.push_back(recipe::MakeMxRecipe(f, p));
    }
  }
  std::vector<recipe::Recipe> rules;
  for (const recipe::Recipe& r : all) {
    EXPECT_TRUE(applies(r)) << NameOf(r) << ": the alternatives do not cover this recipe's element rule";
    bool seen = false;
    for (const recipe::Recipe& q : rules) seen = seen || SameElementRule(q, r);
    if (!seen) rules.push_back(r);
  }
  return rules;
}

// The sweep of one element: for every input y and every distinct rule r,
// recipe::EncodeScaled(r, s, y) (s is not read for MX elements) against each
// alternative for r's rounding.
void ExpectMxElementAlternativesEqualTheModel(const std::vector<recipe::Recipe>& rules, const SweepPlan& plan,
                                              std::uint32_t (*const* even)(float), int even_count,
                                              std::uint32_t (*const* away)(float), int away_count) {
  std::vector<std::string> failures;
  int roundings[2] = {0, 0};
  for (const recipe::Recipe& r : rules) ++roundings[r.element_encode.rounding == RoundingMode::kNearestAway];
  EXPECT_GE(roundings[0], 1);
  EXPECT_GE(roundings[1], 1);
  const std::uint64_t checked = Sweep(plan, [&](std::uint32_t x, std::string* why) {
    const float y = F32FromBits(x);
    for (const recipe::Recipe& r : rules) {
      const std::uint32_t want = recipe::EncodeScaled(r, recipe::BlockScale{}, y);
      const bool ties_away = r.element_encode.rounding == RoundingMode::kNearestAway;
      const int n = ties_away ? away_count : even_count;
      for (int k = 0; k < n; ++k) {
        const std::uint32_t got = (ties_away ? away : even)[k](y);
        if (got != want) {
          *why = NameOf(r) + ": model " + Hex(want) + ", alternative " + std::to_string(k) + " (" +
                 (ties_away ? "ties away" : "ties to even") + ") " + Hex(got);
          return false;
        }
      }
    }
    return true;
  }, &failures);
  ExpectSweptClean(checked, failures);
}

constexpr RoundingMode kEven = RoundingMode::kNearestEven;
constexpr RoundingMode kAway = RoundingMode::kNearestAway;

TEST(AlternativeMxElements, E2m3EqualsTheModelOnEveryInputForEveryMxRecipe) {
  // 10 MX profiles over E2M3: 9 with ties to even (te's NaN sign differs
  // from the others', a distinct rule though FP6 has no NaN code), msx with
  // ties away.
  const std::vector<recipe::Recipe> rules = MxElementRules(kE2m3, alternatives::Fp6AlternativeApplies, 10);
  // Dense at ci (the rounding classes cover every other binade): [0.5, 1),
  // the last subnormals and the carry into the first normal binade, and
  // [4, 8), the saturation at 7.5 (7.75 and up).
  SweepPlan plan;
  plan.dense_exponents = {126, 129};
  plan.dense_zero_and_nonfinite = false;
  plan.rounding_classes = true;
  constexpr std::uint32_t (*kEvenForms[])(float) = {alternatives::EncodeE2m3FromBits<kEven>,
                                                    alternatives::EncodeE2m3OneAddition,
                                                    alternatives::EncodeE2m3<kEven>};
  constexpr std::uint32_t (*kAwayForms[])(float) = {alternatives::EncodeE2m3FromBits<kAway>,
                                                    alternatives::EncodeE2m3<kAway>};
  ExpectMxElementAlternativesEqualTheModel(rules, plan, kEvenForms, 3, kAwayForms, 2);
}

TEST(AlternativeMxElements, E3m2EqualsTheModelOnEveryInputForEveryMxRecipe) {
  const std::vector<recipe::Recipe> rules = MxElementRules(kE3m2, alternatives::Fp6AlternativeApplies, 10);
  // Dense at ci (the rounding classes cover every other binade): [0.125,
  // 0.25), the last subnormals and the carry into the first normal binade,
  // and [16, 32), the saturation at 28 (30 and up).
  SweepPlan plan;
  plan.dense_exponents = {124, 131};
  plan.dense_zero_and_nonfinite = false;
  plan.rounding_classes = true;
  constexpr std::uint32_t (*kEvenForms[])(float) = {alternatives::EncodeE3m2FromBits<kEven>,
                                                    alternatives::EncodeE3m2OneAddition,
                                                    alternatives::EncodeE3m2<kEven>};
  constexpr std::uint32_t (*kAwayForms[])(float) = {alternatives::EncodeE3m2FromBits<kAway>,
                                                    alternatives::EncodeE3m2<kAway>};
  ExpectMxElementAlternativesEqualTheModel(rules, plan, kEvenForms, 3, kAwayForms, 2);
}

TEST(AlternativeMxElements, Int8EqualsTheModelOnEveryInputForEveryMxRecipe) {
  // ocp, msx-even and te (ties to even), msx (ties away).
  const std::vector<recipe::Recipe> rules = MxElementRules(kInt8, alternatives::MxInt8AlternativeApplies, 3);
  // Dense at ci (the rounding classes cover every other binade): [0.5, 1)
  // (0 or 1) and [64, 128) (the clamp at 127: 127.5 rounds to 128 under
  // either tie rule).
  SweepPlan plan;
  plan.dense_exponents = {126, 133};
  plan.dense_zero_and_nonfinite = false;
  plan.rounding_classes = true;
  constexpr std::uint32_t (*kEvenForms[])(float) = {alternatives::EncodeMxInt8FromBits<kEven>,
                                                    alternatives::EncodeMxInt8MagicAdd,
                                                    alternatives::EncodeMxInt8<kEven>};
  constexpr std::uint32_t (*kAwayForms[])(float) = {alternatives::EncodeMxInt8FromBits<kAway>,
                                                    alternatives::EncodeMxInt8<kAway>};
  ExpectMxElementAlternativesEqualTheModel(rules, plan, kEvenForms, 3, kAwayForms, 2);
}

// The encoders are also constant expressions, with the model's special
// cases (alternatives/fp6.h, mxint8.h; docs/formats-reference.md §4.4, §5.2).
static_assert(alternatives::EncodeE2m3OneAddition(7.75f) == 0x1F);  // saturates
static_assert(alternatives::EncodeE2m3OneAddition(-0.0f) == 0x20);
static_assert(alternatives::EncodeE2m3OneAddition(0.0625f) == 0x00);  // a tie: to even (0)
static_assert(alternatives::EncodeE2m3FromBits<kAway>(0.0625f) == 0x01);
static_assert(alternatives::EncodeE3m2OneAddition(-F32FromBits(0x7F800000u)) == 0x3F);  // -Inf -> -max
static_assert(alternatives::EncodeE3m2FromBits<kEven>(F32FromBits(0xFFC00000u)) == 0x1F);  // -NaN -> +max
static_assert(alternatives::EncodeMxInt8MagicAdd(-127.5f) == 0x81);  // -128 clamped to -127
static_assert(alternatives::EncodeMxInt8MagicAdd(2.5f) == 0x02);
static_assert(alternatives::EncodeMxInt8FromBits<kAway>(2.5f) == 0x03);
static_assert(alternatives::EncodeMxInt8FromBits<kAway>(-0.0f) == 0x00);
static_assert(alternatives::EncodeMxInt8MagicAdd(F32FromBits(0xFFC00000u)) == 0x7F);  // -NaN -> +127

// ---- FP32 <-> BF16 / FP16 ------------------------------------------------------

// Every rounding class, for every exponent field and sign, of a rounding
// that drops the low dropped(field) bits (1..24) of the FP32 significand
// with its implicit bit: every pattern of the kept mantissa bits (at most
// 10 of them) with the dropped bits 0, 1, half - 1, half (the tie),
// half + 1 and all ones. Where all 24 are dropped the implicit bit is the
// round bit, and the mantissa field holds only sticky bits.
std::vector<std::uint32_t> RoundingClassInputs(const std::function<int(std::uint32_t)>& dropped) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t field = 0; field < 256; ++field) {
    const int d = std::min(std::max(dropped(field), 1), 23);
    const int kept_bits = 23 - d;
    EXPECT_LE(kept_bits, 10);
    const std::uint32_t half = 1u << (d - 1);
    const std::uint32_t lows[] = {0u, 1u, half - 1, half, half + 1, (1u << d) - 1};
    for (std::uint32_t kept = 0; kept < (1u << kept_bits); ++kept) {
      for (std::uint32_t low : lows) {
        const std::uint32_t x = (field << 23) | (kept << d) | low;
        v.push_back(x);
        v.push_back(0x80000000u | x);
      }
    }
  }
  return v;
}

// Options that differ from EncodeOptions{} only in fields that cannot act on
// a BF16 / FP16 / FP32 destination (alternatives/f32_f16_bf16.h): each
// sweep checks them beside the defaults, as the Applies predicates claim.
EncodeOptions InertFieldsChanged() {
  EncodeOptions o;
  o.inf_input = InfInput::kAlwaysNonFinite;
  o.nan_into_no_nan = NanIntoNoNan::kOppositeSignZero;
  o.zero_into_no_zero = ZeroIntoNoZero::kNan;
  o.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  o.random_bits = 0xFFFFFFFFu;
  o.random_bit_count = 5;
  return o;
}

// FP32 -> BF16 / FP16: each input against the model under both option sets.
void ExpectEncodeF32ToHalfEqualsTheModel(const FormatSpec& dst, std::uint16_t (*alternative)(std::uint32_t),
                                         const SweepPlan& plan) {
  const EncodeOptions option_sets[] = {EncodeOptions{}, InertFieldsChanged()};
  for (const EncodeOptions& o : option_sets) EXPECT_TRUE(alternatives::EncodeF32ToHalfAlternativeApplies(o));
  std::vector<std::string> failures;
  const std::uint64_t checked = Sweep(plan, [&](std::uint32_t x, std::string* why) {
    const std::uint32_t got = alternative(x);
    for (int k = 0; k < 2; ++k) {
      const std::uint32_t want = static_cast<std::uint32_t>(EncodeF32Bits(dst, x, option_sets[k]).code);
      if (got != want) {
        *why = std::string(k == 0 ? "default options" : "inert fields changed") + ": model " + Hex(want) +
               ", alternative " + Hex(got);
        return false;
      }
    }
    return true;
  }, &failures);
  ExpectSweptClean(checked, failures);
}

TEST(AlternativeHalfFloats, EncodeF32ToBf16EqualsTheModelOnEveryInput) {
  // Dense at ci besides fields 0 (every FP32 subnormal into a BF16
  // subnormal, and the carry into the smallest normal) and 0xFF (every NaN
  // payload, Inf): field 254, where rounding carries into Inf from
  // 0x7F7F8000. Every field's rounding classes at bit 16.
  SweepPlan plan;
  plan.dense_exponents = {254};
  plan.extra = RoundingClassInputs([](std::uint32_t) { return 16; });
  ExpectEncodeF32ToHalfEqualsTheModel(kBf16, alternatives::EncodeF32BitsToBf16, plan);
}

TEST(AlternativeHalfFloats, EncodeF32ToF16EqualsTheModelOnEveryInput) {
  // Dense at ci: field 102 ([2^-25, 2^-24): the tie at 2^-25 that gives 0,
  // the smallest subnormal), 112 (the last subnormals and the carry into the
  // smallest normal 2^-14) and 142 ([32768, 65536): 65504 = max, the tie
  // 65520 and the overflow into Inf). Every field's rounding classes at
  // FP16's round bit: bit 12 of the FP32 bits for normal results, bit
  // 125 - field of the significand for subnormal ones (fields 102 ... 112),
  // which also visits fields 0 and 0xFF (every top-10-bit NaN payload, both
  // signs, quiet or signalling) with their sticky bits.
  SweepPlan plan;
  plan.dense_exponents = {102, 112, 142};
  plan.dense_zero_and_nonfinite = false;
  plan.extra = RoundingClassInputs([](std::uint32_t field) {
    return field >= 113 ? 13 : static_cast<int>(126 - std::max(field, 102u));
  });
  ExpectEncodeF32ToHalfEqualsTheModel(kFp16, alternatives::EncodeF32BitsToF16, plan);
}

// BF16 / FP16 -> FP32: every code, under every rounding mode, overflow and
// Inf policy that WidenToF32AlternativeApplies accepts (the widening is
// exact; only saturating +-Inf acts) and with the inert fields changed,
// against Convert, and under the decode defaults against DecodeToF32Bits.
void ExpectWidenToF32EqualsTheModel(const FormatSpec& src, std::uint32_t (*alternative)(std::uint16_t)) {
  std::vector<EncodeOptions> option_sets;
  for (int r = 0; r <= static_cast<int>(RoundingMode::kStochastic); ++r) {
    for (Overflow overflow : {Overflow::kFormatDefault, Overflow::kSaturate, Overflow::kWrap}) {
      for (InfInput inf : {InfInput::kLikeOverflow, InfInput::kAlwaysNonFinite}) {
        EncodeOptions o = InertFieldsChanged();
        o.rounding = static_cast<RoundingMode>(r);
        o.overflow = overflow;
        o.inf_input = inf;
        option_sets.push_back(o);
      }
    }
  }
  option_sets.push_back(EncodeOptions{});
  option_sets.push_back(ToDecodeEncodeOptions(DecodeOptions{}));
  EXPECT_TRUE(alternatives::WidenToF32AlternativeApplies(DecodeOptions{}));
  int mismatches = 0, applied = 0;
  for (const EncodeOptions& o : option_sets) {
    // Saturation with InfInput::kLikeOverflow turns +-Inf into +-max: the
    // one combination the predicate refuses.
    const bool refused = o.overflow == Overflow::kSaturate && o.inf_input == InfInput::kLikeOverflow;
    EXPECT_EQ(alternatives::WidenToF32AlternativeApplies(o), !refused);
    if (refused) continue;
    ++applied;
    for (std::uint32_t c = 0; c < 0x10000; ++c) {
      const std::uint32_t got = alternative(static_cast<std::uint16_t>(c));
      const std::uint32_t want = static_cast<std::uint32_t>(Convert(src, c, kFp32, o).code);
      if (got != want && mismatches++ < 8) {
        ADD_FAILURE() << src.name << " code " << Hex(c) << " rounding " << int(o.rounding) << " overflow "
                      << int(o.overflow) << ": model " << Hex(want) << ", alternative " << Hex(got);
      }
    }
  }
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const std::uint32_t got = alternative(static_cast<std::uint16_t>(c));
    const std::uint32_t want = DecodeToF32Bits(src, c);
    if (got != want && mismatches++ < 8) {
      ADD_FAILURE() << src.name << " code " << Hex(c) << ", DecodeToF32Bits " << Hex(want) << ", alternative "
                    << Hex(got);
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Per rounding mode: 5 overflow / Inf combinations apply; plus 2.
  EXPECT_EQ(applied, (static_cast<int>(RoundingMode::kStochastic) + 1) * 5 + 2);
}

TEST(AlternativeHalfFloats, DecodeBf16ToF32EqualsTheModelOnEveryCode) {
  ExpectWidenToF32EqualsTheModel(kBf16, alternatives::DecodeBf16ToF32Bits);
}

TEST(AlternativeHalfFloats, DecodeF16ToF32EqualsTheModelOnEveryCode) {
  ExpectWidenToF32EqualsTheModel(kFp16, alternatives::DecodeF16ToF32Bits);
}

// The predicates refuse every single change of a field that can act, and
// each such change does act on some input (so no predicate is narrower than
// the model needs): FP32 -> FP16 65520 (overflow), 1 + 2^-11 (a tie), -0,
// signalling NaNs; FP16 -> FP32 -Inf, a negative signalling NaN and -0.
TEST(AlternativeHalfFloats, PredicatesRefuseEveryOptionThatActs) {
  const std::uint32_t encode_inputs[] = {0x477FF000u, 0x3F801000u, 0x80000000u, 0xFF800001u, 0x7F802000u};
  std::vector<EncodeOptions> acting;
  EncodeOptions o;
  o.rounding = RoundingMode::kTowardZero;
  acting.push_back(o);
  o = {};
  o.overflow = Overflow::kSaturate;
  acting.push_back(o);
  o = {};
  o.nan_sign = NanSign::kPositive;
  acting.push_back(o);
  o = {};
  o.nan_payload = NanPayload::kPreserve;
  acting.push_back(o);
  o = {};
  o.keep_negative_zero = false;
  acting.push_back(o);
  for (std::size_t k = 0; k < acting.size(); ++k) {
    EXPECT_FALSE(alternatives::EncodeF32ToHalfAlternativeApplies(acting[k])) << "option change " << k;
    bool acts = false;
    for (std::uint32_t x : encode_inputs) {
      acts |= EncodeF32Bits(kFp16, x, acting[k]).code != alternatives::EncodeF32BitsToF16(x);
    }
    EXPECT_TRUE(acts) << "option change " << k;
  }
  // Every change but the rounding mode acts on a widening too.
  for (std::size_t k = 1; k < acting.size(); ++k) {
    EXPECT_FALSE(alternatives::WidenToF32AlternativeApplies(acting[k])) << "option change " << k;
    bool acts = false;
    for (std::uint16_t c : {std::uint16_t{0xFC00}, std::uint16_t{0xFC01}, std::uint16_t{0x8000}}) {
      acts |= Convert(kFp16, c, kFp32, acting[k]).code != alternatives::DecodeF16ToF32Bits(c);
    }
    EXPECT_TRUE(acts) << "option change " << k;
  }
  DecodeOptions d;
  d.nan_payload = NanPayload::kPreserve;
  EXPECT_FALSE(alternatives::WidenToF32AlternativeApplies(d));
}

// Constant expressions too, with the values of docs/formats-reference.md
// §3.2-3.3 where the model and the hardware agree, and the model's NaN rule
// (sign and top payload bits kept, quieted) where they do not.
static_assert(alternatives::EncodeF32BitsToBf16(0x7F7F8000u) == 0x7F80);     // ties up into Inf
static_assert(alternatives::EncodeF32BitsToBf16(0x3F808000u) == 0x3F80);     // a tie to even
static_assert(alternatives::EncodeF32BitsToBf16(0x00000001u) == 0x0000);     // FP32 subnormal
static_assert(alternatives::EncodeF32BitsToBf16(0xFF800001u) == 0xFFC0);     // -sNaN quieted
static_assert(alternatives::EncodeF32BitsToF16(0x477FEFFFu) == 0x7BFF);      // just below 65520
static_assert(alternatives::EncodeF32BitsToF16(0x477FF000u) == 0x7C00);      // 65520 -> Inf
static_assert(alternatives::EncodeF32BitsToF16(0x33000000u) == 0x0000);      // 2^-25, a tie to 0
static_assert(alternatives::EncodeF32BitsToF16(0xB3000001u) == 0x8001);      // just above: -2^-24
static_assert(alternatives::EncodeF32BitsToF16(0x387FF000u) == 0x0400);      // carry into 2^-14
static_assert(alternatives::EncodeF32BitsToF16(0x7FC02000u) == 0x7E01);      // payload kept
static_assert(alternatives::DecodeBf16ToF32Bits(0xFF81) == 0xFFC10000u);     // -sNaN quieted
static_assert(alternatives::DecodeF16ToF32Bits(0x0001) == 0x33800000u);      // 2^-24
static_assert(alternatives::DecodeF16ToF32Bits(0x83FF) == 0xB87FC000u);      // -(2^-14 - 2^-24)
static_assert(alternatives::DecodeF16ToF32Bits(0x7C01) == 0x7FC02000u);      // sNaN quieted, payload kept

TEST(AlternativeNvfp4TeScale, EqualsTheModelWithTheModelsConversion) {
  const recipe::Recipe* te = nullptr;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.scale_rule == recipe::ScaleRule::kNvfp4Te) te = &r;
  }
  ASSERT_NE(te, nullptr);
  const recipe::Recipe r = *te;
  const alternatives::ModelScaleCodec codec{r};
  std::vector<float> tensor_amaxes = NonNegativeBoundaryValues(2000);
  std::vector<float> amaxes = NonNegativeBoundaryValues(2000);
  // Block amaxes at the UE4M3 code boundaries of a few tensor scales.
  for (float tensor : {1.0f, 2688.0f, 0.1f, 1e-20f, 3e25f}) {
    const recipe::TensorScale t = recipe::ChooseTensorScale(r, tensor);
    for (std::uint32_t code = 0; code < 0x7F; ++code) {
      const float v = DecodeToF32(r.scale_format, code) / (t.encode * (1.0f / recipe::MaxFiniteF32(r.element)));
      const std::uint32_t b = F32Bits(v);
      for (std::uint32_t d : {b - 1, b, b + 1}) amaxes.push_back(F32FromBits(d));
    }
  }
  std::mt19937 rng(7);
  int bad = 0;
  std::uint64_t checked = 0;
  for (float tensor : tensor_amaxes) {
    const recipe::TensorScale t = recipe::ChooseTensorScale(r, tensor);
    // Every block amax for a few tensor amaxes, a random subset for the rest.
    const bool all = rng() % 64 == 0;
    for (float amax : amaxes) {
      if (!all && rng() % 32 != 0) continue;
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = amax;
      const recipe::BlockScale want = recipe::ChooseScale(r, stats, t);
      const recipe::BlockScale got = alternatives::ChooseNvfp4TeScale(r, amax, t, codec);
      ++checked;
      const bool same = got.code == want.code && F32Bits(got.factor) == F32Bits(want.factor) &&
                        F32Bits(got.decode) == F32Bits(want.decode) && F32Bits(got.rule_value) == F32Bits(want.rule_value);
      if (!same && bad++ < 4) {
        ExpectSameScale(want, got, "tensor amax " + Hex(F32Bits(tensor)) + " amax " + Hex(F32Bits(amax)));
      }
    }
  }
  EXPECT_GE(checked, 100000u);
}

// ---- the host's FP32 multiply ------------------------------------------------

#if defined(__x86_64__) || defined(__i386__)
TEST(AlternativeX86Multiply, EqualsThisHostsMultiplyWithAtMostOneNan) {
  std::vector<std::uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x3F800000u, 0xBF800000u, 0x7F7FFFFFu,
                                     0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u,
                                     0x7FFFFFFFu, 0x00400000u, 0x42FE0000u, 0xC3000000u};
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) bits.push_back(rng());
  int compared = 0;
  for (std::uint32_t a : bits) {
    for (std::uint32_t b : bits) {
      if (F32IsNan(a) && F32IsNan(b)) continue;  // which NaN is the compiler's operand order
      volatile float va = F32FromBits(a), vb = F32FromBits(b);
      const std::uint32_t host = F32Bits(va * vb);
      const std::uint32_t got = F32Bits(F32MulAsX86(F32FromBits(a), F32FromBits(b)));
      EXPECT_EQ(got, host) << Hex(a) << " * " << Hex(b);
      ++compared;
    }
  }
  EXPECT_GT(compared, 90000);
}

// The model's division and subtraction with the NaN pinned (F32DivAsX86,
// F32SubAsX86) against this host's own operators: every pair of the same set,
// two NaNs included (division and subtraction do not commute, so the first
// operand is the first source of divss / subss whatever the compiler does).
TEST(AlternativeX86Multiply, ModelDivideAndSubtractEqualThisHostsOperators) {
  std::vector<std::uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x3F800000u, 0xBF800000u, 0x7F7FFFFFu,
                                     0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF812345u,
                                     0x7FFFFFFFu, 0x00400000u, 0x42FE0000u, 0xC3000000u};
  std::mt19937 rng(12);
  for (int i = 0; i < 300; ++i) bits.push_back(rng());
  int compared = 0, nan_results = 0;
  for (std::uint32_t a : bits) {
    for (std::uint32_t b : bits) {
      volatile float va = F32FromBits(a), vb = F32FromBits(b);
      const std::uint32_t quotient = F32Bits(va / vb), difference = F32Bits(va - vb), product = F32Bits(va * vb);
      EXPECT_EQ(F32Bits(F32DivAsX86(F32FromBits(a), F32FromBits(b))), quotient) << Hex(a) << " / " << Hex(b);
      EXPECT_EQ(F32Bits(F32SubAsX86(F32FromBits(a), F32FromBits(b))), difference) << Hex(a) << " - " << Hex(b);
      // F32MulAsX86 (recipe/steps.h DecodeElement): as mulss with a first.
      EXPECT_EQ(F32Bits(F32MulAsX86(F32FromBits(a), F32FromBits(b))), product) << Hex(a) << " * " << Hex(b);
      nan_results += F32IsNan(quotient) + F32IsNan(difference) + F32IsNan(product);
      ++compared;
    }
  }
  EXPECT_GT(compared, 90000);
  EXPECT_GT(nan_results, 1000);  // the NaN rule is what is under test
}
#endif

}  // namespace
}  // namespace lowbit
