// The SIMD block quantizers' vector scale steps equal the model's scale
// step, recipe::ChooseScale (formats/recipe/steps.h), on every compiled
// target the CPU runs.
//
// MX (simd/src/block_scale-inl.h VectorMxScaleCodes, called through
// simd/block_scale.h MxScaleCodesOnTarget): the E8M0 code, for every catalog
// MX recipe whose rule it covers:
//
//   full   every one of the 2^32 FP32 amax bit patterns;
//   ci     every exponent field with both signs and the mantissas where a
//          rule changes its answer (0, 1, the EVEN half-up points of 1-3
//          mantissa bits and their neighbours, 2^22 +- 1, all ones), the
//          amaxes whose RCEIL product lands next to each power of two, a
//          prime stride through the subnormals and the Inf / NaN patterns,
//          and a prime stride through all 2^32;
//   smoke  the same without the subnormal and NaN strides, with a coarser
//          stride through all 2^32.
//
// NVFP4 (VectorNvfp4Scale, through Nvfp4ScalesOnTarget): the UE4M3 code AND
// the FP32 element factor's bits, for every catalog NVFP4 recipe (every
// NVFP4 rule) under tensor scales that reach every branch of the step (see
// kTensorScaleCases):
//
//   full   every one of the 2^32 FP32 amax bit patterns under 5 of the
//          tensor scales (kTensorScaleCases says which);
//   ci     every exponent field with both signs and the mantissas 0, 1, 2,
//          2^22 +- 1 and all ones; the amaxes whose rule value (before the
//          UE4M3 conversion) lands within 3 ulps of every UE4M3 value, of
//          every midpoint between neighbours (the rounding ties), of the
//          overflow tie above the largest value and of the floors; a prime
//          stride through all 2^32;
//   smoke  the same with a coarser stride.
//
// The model is computed once per input and compared with every target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/simd/block_scale.h"
#include "lowbit/simd/simd.h"
#include "test_level.h"

namespace lowbit {
namespace {

std::string Hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llX", static_cast<unsigned long long>(v));
  return b;
}

// The catalog's MX recipes with a vector scale rule, one per distinct set of
// the fields the rule reads (the others share its answer on every input, so
// checking them again would only cost time); the key names every field.
std::vector<recipe::Recipe> VectorScaleRecipes() {
  std::map<std::tuple<int, int, int, bool, bool, std::uint32_t>, recipe::Recipe> distinct;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (!simd::HasVectorMxScale(r)) continue;
    // recipe/steps.h ChooseMxScale: RCEIL reads the product's reciprocal and
    // the saturation; the bit rules read element_emax, the zero rule and
    // (EVEN) the element's mantissa bits.
    const bool rceil = r.scale_rule == recipe::ScaleRule::kMxRceil;
    const bool even = r.scale_rule == recipe::ScaleRule::kMxEven;
    distinct.emplace(std::make_tuple(static_cast<int>(r.scale_rule), rceil ? 0 : r.element_emax,
                                     even ? r.element.mantissa_bits : 0, rceil && r.scale_saturate,
                                     !rceil && r.zero_amax_as_min_normal,
                                     rceil ? F32Bits(recipe::MaxNormReciprocal(r)) : 0u),
                     r);
  }
  std::vector<recipe::Recipe> out;
  for (const auto& [key, r] : distinct) out.push_back(r);
  return out;
}

// The inputs below exhaustive levels (see the file comment).
std::vector<std::uint32_t> SampledInputs(const recipe::Recipe& r, testing::TestLevel level) {
  std::vector<std::uint32_t> v;
  std::vector<std::uint32_t> mantissas = {0, 1, 2, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFE, 0x7FFFFF};
  for (int mbits = 1; mbits <= 3; ++mbits) {
    const std::uint32_t step = std::uint32_t{1} << (kF32MantissaBits - mbits);
    for (std::uint32_t m = step / 2; m < (std::uint32_t{1} << kF32MantissaBits); m += step) {
      for (std::uint32_t d : {m - 1, m, m + 1}) mantissas.push_back(d);
    }
  }
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : mantissas) {
      v.push_back((e << kF32MantissaBits) | m);
      v.push_back(kF32SignMask | (e << kF32MantissaBits) | m);
    }
  }
  // RCEIL: amax * fp32(1/max) next to 2^k (the round-up boundary).
  const float rcp = recipe::MaxNormReciprocal(r);
  for (int k = -149; k <= 128; ++k) {
    const std::uint32_t b = F32Bits(F32Pow2(k) / rcp);
    for (std::uint32_t d = b - 3; d <= b + 3; ++d) v.push_back(d);
  }
  if (level != testing::TestLevel::kSmoke) {
    // Every 61st (a prime) at ci, next to the boundary mantissas above.
    for (std::uint32_t m = 0; m < (std::uint32_t{1} << kF32MantissaBits); m += 61) {
      v.push_back(m);                             // +0 and the subnormals
      v.push_back(kF32ExponentMask | m);  // +Inf and the NaNs
    }
  }
  const std::uint64_t stride = level == testing::TestLevel::kSmoke ? 65521 : 4093;  // primes
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += stride) v.push_back(static_cast<std::uint32_t>(x));
  return v;
}

std::vector<std::int64_t> RunnableTargets() {
  std::vector<std::int64_t> t;
  for (std::int64_t target : simd::CompiledTargets()) {
    if (simd::TargetAvailable(target)) t.push_back(target);
  }
  return t;
}

// Compares the vector codes of every target with the model's on inputs
// [begin, end) of `inputs` (or of all 2^32 when inputs is null); returns how
// many inputs were checked and appends up to a few mismatches to *bad.
std::uint64_t CompareRange(const recipe::Recipe& r, const std::vector<std::int64_t>& targets,
                           const std::vector<std::uint32_t>* inputs, std::uint64_t begin, std::uint64_t end,
                           std::vector<std::string>* bad) {
  constexpr std::uint64_t kChunk = 1 << 16;
  std::vector<std::uint32_t> amax(kChunk);
  std::vector<std::uint8_t> want(kChunk), got(kChunk);
  std::uint64_t checked = 0;
  for (std::uint64_t at = begin; at < end; at += kChunk) {
    const std::size_t n = static_cast<std::size_t>(std::min(kChunk, end - at));
    for (std::size_t i = 0; i < n; ++i) {
      amax[i] = inputs ? (*inputs)[at + i] : static_cast<std::uint32_t>(at + i);
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = F32FromBits(amax[i]);
      want[i] = recipe::ChooseScale(r, stats).code;
    }
    for (std::int64_t target : targets) {
      std::fill(got.begin(), got.end(), std::uint8_t{0xCD});
      const registry::Status s = simd::MxScaleCodesOnTarget(target, r, amax.data(), n, got.data());
      if (!s.ok) {
        bad->push_back(std::string(simd::TargetName(target)) + ": " + s.message);
        return checked;
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (got[i] != want[i] && bad->size() < 8) {
          bad->push_back(std::string(simd::TargetName(target)) + " amax " + Hex(amax[i]) + ": model " +
                         std::to_string(want[i]) + ", vector " + std::to_string(got[i]));
        }
      }
    }
    checked += n;
  }
  return checked;
}

TEST(SimdBlockScale, VectorMxScaleEqualsTheModelOnEveryAmax) {
  const testing::TestLevel level = testing::CurrentTestLevel();
  const std::vector<std::int64_t> targets = RunnableTargets();
  ASSERT_FALSE(targets.empty()) << "no compiled SIMD target runs on this CPU";
  std::string names;
  for (std::int64_t t : targets) names += std::string(" ") + simd::TargetName(t);
  const std::vector<recipe::Recipe> recipes = VectorScaleRecipes();
  // floor, ceil, even and RCEIL are all in the catalog (OCP, torchao, TE).
  int rules_seen[4] = {};
  for (const recipe::Recipe& r : recipes) {
    rules_seen[0] += r.scale_rule == recipe::ScaleRule::kMxFloor;
    rules_seen[1] += r.scale_rule == recipe::ScaleRule::kMxCeil;
    rules_seen[2] += r.scale_rule == recipe::ScaleRule::kMxEven;
    rules_seen[3] += r.scale_rule == recipe::ScaleRule::kMxRceil;
  }
  for (int seen : rules_seen) EXPECT_GT(seen, 0) << "a vector scale rule without a catalog recipe";
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const recipe::Recipe& r : recipes) {
    const std::vector<std::uint32_t> inputs =
        level == testing::TestLevel::kFull ? std::vector<std::uint32_t>{} : SampledInputs(r, level);
    const std::uint64_t total = level == testing::TestLevel::kFull ? (std::uint64_t{1} << 32) : inputs.size();
    std::vector<std::uint64_t> checked(threads, 0);
    std::vector<std::vector<std::string>> bad(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::uint64_t begin = total * t / threads, end = total * (t + 1) / threads;
        checked[t] = CompareRange(r, targets, level == testing::TestLevel::kFull ? nullptr : &inputs, begin, end,
                                  &bad[t]);
      });
    }
    for (std::thread& th : pool) th.join();
    std::uint64_t sum = 0;
    for (int t = 0; t < threads; ++t) {
      sum += checked[t];
      for (const std::string& b : bad[t]) ADD_FAILURE() << r.name << ":" << r.profile << " " << b;
    }
    // The body ran over every input it was given.
    EXPECT_EQ(sum, total) << r.name << ":" << r.profile;
    EXPECT_GE(sum, level == testing::TestLevel::kFull ? (std::uint64_t{1} << 32) : 60000u);
    std::printf("[ scale    ] %s:%s (rule %d) %llu amaxes on%s\n", r.name, r.profile,
                static_cast<int>(r.scale_rule), static_cast<unsigned long long>(sum), names.c_str());
  }
}

TEST(SimdBlockScale, RulesWithoutAVectorFormAreRefused) {
  int refused = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() != recipe::Family::kMx || simd::HasVectorMxScale(r)) continue;
    std::uint32_t amax = 0;
    std::uint8_t code = 0;
    EXPECT_FALSE(simd::MxScaleCodesOnTarget(simd::kBestTarget, r, &amax, 1, &code).ok) << r.name;
    ++refused;
  }
  // kMxNearest and kMxRceilEager (ao-rceil-eager) stay on the model's step.
  EXPECT_GT(refused, 0);
}

// ---- NVFP4 -------------------------------------------------------------------

// The tensor scales the NVFP4 step is checked under: most chosen by the
// model from a tensor amax, as the quantizers do (recipe::ChooseTensorScale,
// per recipe), and two given directly (the hook takes any pair). Together
// they reach the branches of recipe/steps.h ChooseNvfp4Scale: unit scales,
// block scales that clamp at 448 and at the floors, a factor that overflows
// (TE's fminf to FLT_MAX, torchao 0.18's 1 / pts = Inf, ModelOpt's and
// torchao's pts * 448 past FLT_MAX), a zero and an infinite tensor scale
// (0 / 0 and Inf / Inf rule values), and NaN tensor scales whose payload
// differs from the NaN code's decode (the pinned first-NaN-wins products).
struct TensorScaleCase {
  const char* what;
  bool full;                  // also swept over all 2^32 amaxes at full
  bool direct;                // t as given, else ChooseTensorScale(r, tensor_amax)
  std::uint32_t tensor_amax;  // FP32 bits
  recipe::TensorScale t;
};
// At full, 5 of them per recipe (25 sweeps of 2^32; the 5 TE sweeps took 4
// CPU-minutes each on this 2-core VM, so the whole test is about 100
// CPU-minutes): the unit, tiny, huge, zero and NaN tensor scales. Each
// sweep passes every amax, so the clamps at 448 and at the floors are
// reached under every tensor scale; the others differ from these only in
// where the boundaries lie, which ci samples.
const TensorScaleCase kTensorScaleCases[] = {
    {"tensor amax 2688 (unit tensor scale: TE S_enc = S_dec = 1, pts = 1)", true, false, 0x45280000u, {}},
    {"tensor amax 1", false, false, 0x3F800000u, {}},
    {"tensor amax 2^-126 (tiny: S_enc FLT_MAX, pts subnormal, 1 / pts Inf)", true, false, 0x00800000u, {}},
    {"tensor amax FLT_MAX (huge: pts * 448 overflows)", true, false, 0x7F7FFFFFu, {}},
    {"tensor amax 2^40 (block scales at the floors)", false, false, 0x53800000u, {}},
    {"tensor amax 0", true, false, 0x00000000u, {}},
    {"tensor amax +Inf", false, false, 0x7F800000u, {}},
    {"tensor amax NaN 0x7FA12345 (signalling, payload)", true, false, 0x7FA12345u, {}},
    {"S_enc 0, S_dec / pts -NaN 0xFF800001", false, true, 0, {0.0f, F32FromBits(0xFF800001u)}},
    {"S_enc 3, S_dec / pts -0.75", false, true, 0, {3.0f, -0.75f}},
};

recipe::TensorScale TensorScaleOf(const TensorScaleCase& c, const recipe::Recipe& r) {
  return c.direct ? c.t : recipe::ChooseTensorScale(r, F32FromBits(c.tensor_amax));
}

// The FP32 values where the step's answer changes, as rule values (the value
// handed to the UE4M3 conversion): every UE4M3 value, every midpoint between
// neighbours, the overflow tie (the largest value plus half its spacing) and
// the torchao and ModelOpt floors (the model's own helpers).
std::vector<double> RuleValueBoundaries(const recipe::Recipe& r) {
  std::vector<double> v;
  const std::uint64_t max_code = r.scale_format.MaxFiniteCode();
  for (std::uint64_t c = 0; c <= max_code; ++c) {
    const double value = DecodeToF32(r.scale_format, c);
    v.push_back(value);
    if (c < max_code) {
      v.push_back((value + DecodeToF32(r.scale_format, c + 1)) / 2);
    } else {
      v.push_back(value + (value - DecodeToF32(r.scale_format, c - 1)) / 2);
    }
  }
  v.push_back(recipe::detail::Nvfp4TorchaoScaleFloor(r));
  v.push_back(recipe::detail::Nvfp4ModelOptScaleFloor(r));
  return v;
}

std::vector<std::uint32_t> Nvfp4SampledInputs(const recipe::Recipe& r, const recipe::TensorScale& t,
                                              testing::TestLevel level) {
  std::vector<std::uint32_t> v;
  const std::uint32_t mantissas[] = {0, 1, 2, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFE, 0x7FFFFF};
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : mantissas) {
      v.push_back((e << kF32MantissaBits) | m);
      v.push_back(kF32SignMask | (e << kF32MantissaBits) | m);
    }
  }
  // The amax whose rule value is each boundary, by the rule's arithmetic
  // undone in double (TE: amax * S_enc / 6; torchao: amax / 6 / pts;
  // ModelOpt: amax / (6 * pts)), rounded to FP32, and 3 ulps either side:
  // the FP32 rounding of the rule decides which side of the boundary each
  // lands on, so the ties themselves and their neighbours are all drawn.
  const double element_max = recipe::MaxFiniteF32(r.element);
  const double per_amax = r.scale_rule == recipe::ScaleRule::kNvfp4Te
                              ? static_cast<double>(t.encode) / element_max
                              : 1.0 / (element_max * static_cast<double>(t.decode));
  for (double boundary : RuleValueBoundaries(r)) {
    const double amax = boundary / per_amax;
    if (!(amax > 0) || amax > recipe::kF32Max) continue;  // NaN, zero, negative or past FP32
    const std::uint32_t b = F32Bits(static_cast<float>(amax));
    for (std::uint32_t d = b < 3 ? 0 : b - 3; d <= b + 3; ++d) v.push_back(d);
  }
  const std::uint64_t stride = level == testing::TestLevel::kSmoke ? 262139 : 16381;  // primes
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += stride) v.push_back(static_cast<std::uint32_t>(x));
  return v;
}

// As CompareRange, for the NVFP4 step: codes and factor bits.
std::uint64_t CompareNvfp4Range(const recipe::Recipe& r, const recipe::TensorScale& t,
                                const std::vector<std::int64_t>& targets, const std::vector<std::uint32_t>* inputs,
                                std::uint64_t begin, std::uint64_t end, std::vector<std::string>* bad) {
  constexpr std::uint64_t kChunk = 1 << 16;
  std::vector<std::uint32_t> amax(kChunk), want_factor(kChunk), got_factor(kChunk);
  std::vector<std::uint8_t> want(kChunk), got(kChunk);
  std::uint64_t checked = 0;
  for (std::uint64_t at = begin; at < end; at += kChunk) {
    const std::size_t n = static_cast<std::size_t>(std::min(kChunk, end - at));
    for (std::size_t i = 0; i < n; ++i) {
      amax[i] = inputs ? (*inputs)[at + i] : static_cast<std::uint32_t>(at + i);
      recipe::GroupStats stats = recipe::EmptyStats();
      stats.amax = F32FromBits(amax[i]);
      const recipe::BlockScale s = recipe::ChooseScale(r, stats, t);
      want[i] = s.code;
      want_factor[i] = F32Bits(s.factor);
    }
    for (std::int64_t target : targets) {
      std::fill(got.begin(), got.end(), std::uint8_t{0xCD});
      std::fill(got_factor.begin(), got_factor.end(), 0xCDCDCDCDu);
      const registry::Status s = simd::Nvfp4ScalesOnTarget(target, r, t, amax.data(), n, got.data(), got_factor.data());
      if (!s.ok) {
        bad->push_back(std::string(simd::TargetName(target)) + ": " + s.message);
        return checked;
      }
      for (std::size_t i = 0; i < n; ++i) {
        if ((got[i] != want[i] || got_factor[i] != want_factor[i]) && bad->size() < 8) {
          bad->push_back(std::string(simd::TargetName(target)) + " amax " + Hex(amax[i]) + ": model code " +
                         Hex(want[i]) + " factor " + Hex(want_factor[i]) + ", vector code " + Hex(got[i]) +
                         " factor " + Hex(got_factor[i]));
        }
      }
    }
    checked += n;
  }
  return checked;
}

TEST(SimdBlockScale, VectorNvfp4ScaleEqualsTheModelOnEveryAmax) {
  const testing::TestLevel level = testing::CurrentTestLevel();
  const std::vector<std::int64_t> targets = RunnableTargets();
  ASSERT_FALSE(targets.empty()) << "no compiled SIMD target runs on this CPU";
  std::string names;
  for (std::int64_t t : targets) names += std::string(" ") + simd::TargetName(t);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int recipes = 0;
  for (const recipe::Nvfp4Profile& profile : recipe::kNvfp4Profiles) {
    const recipe::Recipe r = recipe::MakeNvfp4Recipe(profile);
    ++recipes;
    for (const TensorScaleCase& c : kTensorScaleCases) {
      if (level == testing::TestLevel::kFull && !c.full) continue;
      const recipe::TensorScale t = TensorScaleOf(c, r);
      const std::vector<std::uint32_t> inputs =
          level == testing::TestLevel::kFull ? std::vector<std::uint32_t>{} : Nvfp4SampledInputs(r, t, level);
      const std::uint64_t total = level == testing::TestLevel::kFull ? (std::uint64_t{1} << 32) : inputs.size();
      std::vector<std::uint64_t> checked(threads, 0);
      std::vector<std::vector<std::string>> bad(threads);
      std::vector<std::thread> pool;
      for (int k = 0; k < threads; ++k) {
        pool.emplace_back([&, k] {
          const std::uint64_t begin = total * k / threads, end = total * (k + 1) / threads;
          checked[k] = CompareNvfp4Range(r, t, targets, level == testing::TestLevel::kFull ? nullptr : &inputs,
                                         begin, end, &bad[k]);
        });
      }
      for (std::thread& th : pool) th.join();
      std::uint64_t sum = 0;
      for (int k = 0; k < threads; ++k) {
        sum += checked[k];
        for (const std::string& b : bad[k]) {
          ADD_FAILURE() << r.name << ":" << r.profile << " under " << c.what << " (S_enc " << Hex(F32Bits(t.encode))
                        << ", S_dec " << Hex(F32Bits(t.decode)) << "): " << b;
        }
      }
      // The body ran over every input it was given.
      EXPECT_EQ(sum, total) << r.name << ":" << r.profile << " " << c.what;
      EXPECT_GE(sum, level == testing::TestLevel::kFull ? (std::uint64_t{1} << 32) : 20000u);
      std::printf("[ scale    ] %s:%s under %s: %llu amaxes on%s\n", r.name, r.profile, c.what,
                  static_cast<unsigned long long>(sum), names.c_str());
      std::fflush(stdout);  // a full run takes long: show each sweep as it ends, also when piped
    }
  }
  EXPECT_EQ(recipes, 5) << "every NVFP4 rule (te, ao, modelopt, ao-0.18, modelopt-0.47) has a catalog row";
}

// The tensor scale cases reach what they say they reach: a test whose
// inputs missed the branches would pass without checking them. Counted on
// the model over the ci sample of each (recipe, tensor scale).
TEST(SimdBlockScale, Nvfp4CasesReachEveryBranch) {
  int clamped_high = 0, floored = 0, factor_flt_max = 0, factor_inf = 0, nan_code = 0, nan_factor_pinned = 0;
  for (const recipe::Nvfp4Profile& profile : recipe::kNvfp4Profiles) {
    const recipe::Recipe r = recipe::MakeNvfp4Recipe(profile);
    const std::uint8_t max_code = static_cast<std::uint8_t>(r.scale_format.MaxFiniteCode());
    for (const TensorScaleCase& c : kTensorScaleCases) {
      const recipe::TensorScale t = TensorScaleOf(c, r);
      for (std::uint32_t a : Nvfp4SampledInputs(r, t, testing::TestLevel::kCi)) {
        recipe::GroupStats stats;
        stats.amax = F32FromBits(a);
        const recipe::BlockScale s = recipe::ChooseScale(r, stats, t);
        const std::uint32_t f = F32Bits(s.factor);
        clamped_high += s.code == max_code;
        floored += s.rule_value == recipe::detail::Nvfp4TorchaoScaleFloor(r) ||
                   s.rule_value == recipe::detail::Nvfp4ModelOptScaleFloor(r);
        factor_flt_max += f == F32Bits(recipe::kF32Max);
        factor_inf += f == kF32ExponentMask;
        nan_code += F32IsNan(F32Bits(s.decode));
        // Both operands of the factor's product NaN, with different bits.
        nan_factor_pinned += F32IsNan(F32Bits(s.decode)) && F32IsNan(F32Bits(t.decode)) &&
                             (F32Bits(s.decode) | kF32QuietBit) !=
                                 (F32Bits(t.decode) | kF32QuietBit);
      }
    }
  }
  EXPECT_GT(clamped_high, 0);
  EXPECT_GT(floored, 0);
  EXPECT_GT(factor_flt_max, 0);
  EXPECT_GT(factor_inf, 0);
  EXPECT_GT(nan_code, 0);
  EXPECT_GT(nan_factor_pinned, 0);
}

TEST(SimdBlockScale, Nvfp4HookRejectsWhatIsWrong) {
  std::uint32_t amax = 0, factor = 0;
  std::uint8_t code = 0;
  const recipe::TensorScale t;
  const recipe::Recipe te = recipe::MakeNvfp4Recipe(recipe::kNvfp4Profiles[0]);
  // An MX recipe, and an NVFP4 recipe whose fields are not its rule's
  // catalog recipe: the kernels would compute another recipe, so both are refused.
  EXPECT_FALSE(
      simd::Nvfp4ScalesOnTarget(simd::kBestTarget, recipe::kAllRecipes[0], t, &amax, 1, &code, &factor).ok);
  recipe::Recipe changed = te;
  changed.element_step = recipe::ElementStep::kDivide;
  EXPECT_FALSE(simd::Nvfp4ScalesOnTarget(simd::kBestTarget, changed, t, &amax, 1, &code, &factor).ok);
  EXPECT_FALSE(simd::Nvfp4ScalesOnTarget(simd::kBestTarget, te, t, nullptr, 1, &code, &factor).ok);
  EXPECT_TRUE(simd::Nvfp4ScalesOnTarget(simd::kBestTarget, te, t, nullptr, 0, nullptr, nullptr).ok);
  EXPECT_FALSE(simd::Nvfp4ScalesOnTarget(std::int64_t{1} << 60, te, t, &amax, 1, &code, &factor).ok);
}

}  // namespace
}  // namespace lowbit
