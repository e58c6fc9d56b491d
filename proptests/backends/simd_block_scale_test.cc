// The SIMD MX quantizers' vector scale rule (simd/src/block_scale-inl.h
// VectorMxScaleCodes, called through simd/block_scale.h
// MxScaleCodesOnTarget) equals the model's scale step, recipe::ChooseScale's
// code (formats/recipe/steps.h), for every catalog MX recipe whose rule it
// covers, on every compiled target the CPU runs:
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

#include "lowbit/formats/block/fp32_bits.h"
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
                                     rceil ? block::F32Bits(recipe::MaxNormReciprocal(r)) : 0u),
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
    const std::uint32_t step = std::uint32_t{1} << (block::kF32MantissaBits - mbits);
    for (std::uint32_t m = step / 2; m < (std::uint32_t{1} << block::kF32MantissaBits); m += step) {
      for (std::uint32_t d : {m - 1, m, m + 1}) mantissas.push_back(d);
    }
  }
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : mantissas) {
      v.push_back((e << block::kF32MantissaBits) | m);
      v.push_back(block::kF32SignMask | (e << block::kF32MantissaBits) | m);
    }
  }
  // RCEIL: amax * fp32(1/max) next to 2^k (the round-up boundary).
  const float rcp = recipe::MaxNormReciprocal(r);
  for (int k = -149; k <= 128; ++k) {
    const std::uint32_t b = block::F32Bits(block::F32Pow2(k) / rcp);
    for (std::uint32_t d = b - 3; d <= b + 3; ++d) v.push_back(d);
  }
  if (level != testing::TestLevel::kSmoke) {
    // Every 61st (a prime) at ci, next to the boundary mantissas above.
    for (std::uint32_t m = 0; m < (std::uint32_t{1} << block::kF32MantissaBits); m += 61) {
      v.push_back(m);                             // +0 and the subnormals
      v.push_back(block::kF32ExponentMask | m);  // +Inf and the NaNs
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
      stats.amax = block::F32FromBits(amax[i]);
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

}  // namespace
}  // namespace lowbit
