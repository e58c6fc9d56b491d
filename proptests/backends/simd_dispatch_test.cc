// The dispatch of the SIMD kernels (simd/src/target_dispatch.h): a named
// target runs that target's code, kBestTarget is Highway's dynamic dispatch
// (the best target the CPU runs, or the one hwy::SetSupportedTargetsForTest
// forces), unknown targets are errors, and runs on named targets in several
// threads at once each stay on their own target (no process-wide state).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "hwy/targets.h"
#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/register.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

std::vector<std::int64_t> AvailableTargets() {
  std::vector<std::int64_t> v;
  for (std::int64_t t : simd::CompiledTargets()) {
    if (simd::TargetAvailable(t)) v.push_back(t);
  }
  return v;
}

TEST(SimdDispatch, SomeTargetIsCompiledAndRunnable) {
  const std::vector<std::int64_t> compiled = simd::CompiledTargets();
  ASSERT_FALSE(compiled.empty());
  EXPECT_FALSE(AvailableTargets().empty());
  for (std::size_t i = 0; i < compiled.size(); ++i) {
    std::printf("compiled target %s: %s\n", simd::TargetName(compiled[i]),
                simd::TargetAvailable(compiled[i]) ? "runs here" : "not supported by this CPU");
    // Best first: Highway's target bits are smaller for better targets.
    if (i > 0) EXPECT_LT(compiled[i - 1], compiled[i]);
  }
}

LOWBIT_SIMD_TARGET_SUITE(SimdDispatch);

TEST_P(SimdDispatch, NamedTargetRunsItsOwnCode) {
  EXPECT_EQ(simd::TargetThatRuns(target()), target()) << target_name();
}

// Highway's own dynamic dispatch: forcing one target with
// SetSupportedTargetsForTest (process-wide, so this test restores it) makes
// kBestTarget run that target.
TEST_P(SimdDispatch, BestTargetFollowsHighwaysChosenTarget) {
  hwy::SetSupportedTargetsForTest(target());
  const std::int64_t forced = simd::TargetThatRuns(simd::kBestTarget);
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_EQ(forced, target()) << simd::TargetName(forced);
}

TEST(SimdDispatch, BestTargetIsTheBestTheCpuRuns) {
  const std::vector<std::int64_t> available = AvailableTargets();
  ASSERT_FALSE(available.empty());
  EXPECT_EQ(simd::TargetThatRuns(simd::kBestTarget), available.front());
}

TEST(SimdDispatch, UnknownTargetsAreErrors) {
  const std::int64_t not_a_target = std::int64_t{1} << 60;
  EXPECT_FALSE(simd::TargetAvailable(not_a_target));
  EXPECT_FALSE(simd::TargetAvailable(simd::kBestTarget));
  EXPECT_EQ(simd::TargetThatRuns(not_a_target), 0);
  float in[1] = {1.0f};
  std::uint8_t out[1];
  registry::ConvertArgs args{};
  args.operation = registry::Operation::kEncodeF32;
  args.format = FormatId::kE4m3;
  args.input = in;
  args.output = out;
  args.count = 1;
  const registry::Status s = simd::ConvertOnTarget(not_a_target, args);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("not compiled in"), std::string::npos) << s.message;
  // ConvertOnTarget names a target; kBestTarget is Convert's.
  EXPECT_FALSE(simd::ConvertOnTarget(simd::kBestTarget, args).ok);
  EXPECT_TRUE(simd::Convert(args).ok);
  EXPECT_EQ(out[0], EncodeF32(kE4m3, 1.0f).code);
}

// One thread per available target, each running its own target's probe and
// an E4M3 encode, beside a thread using dynamic dispatch: every call runs the
// target it names and gives the model's codes.
TEST(SimdDispatch, NamedTargetsRunConcurrently) {
  const std::vector<std::int64_t> targets = AvailableTargets();
  std::vector<float> x(1000);
  std::vector<std::uint8_t> expected(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i) / 7.0f - 70.0f;
    expected[i] = static_cast<std::uint8_t>(EncodeF32(kE4m3, x[i]).code);
  }
  std::atomic<int> failures{0};
  auto run = [&](std::int64_t target) {
    std::vector<std::uint8_t> out(x.size());
    registry::ConvertArgs args{};
    args.operation = registry::Operation::kEncodeF32;
    args.format = FormatId::kE4m3;
    args.input = x.data();
    args.output = out.data();
    args.count = x.size();
    for (int k = 0; k < 200; ++k) {
      if (target != simd::kBestTarget && simd::TargetThatRuns(target) != target) ++failures;
      const registry::Status s =
          target == simd::kBestTarget ? simd::Convert(args) : simd::ConvertOnTarget(target, args);
      if (!s.ok || out != expected) ++failures;
    }
  };
  std::vector<std::thread> threads;
  for (std::int64_t t : targets) threads.emplace_back(run, t);
  threads.emplace_back(run, simd::kBestTarget);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// The registry rows: one backend "simd:<TARGET>" per compiled target, each
// available exactly when the CPU runs it (a target the CPU lacks is listed,
// and `lowbit verify` shows it as skipped).
TEST(SimdDispatch, RegistryRowsFollowTheTargets) {
  registry::Registry r;
  registry::RegisterSimdBackends(r);
  for (std::int64_t target : simd::CompiledTargets()) {
    const std::string backend = std::string("simd:") + simd::TargetName(target);
    const registry::KernelEntry* e = r.Find(registry::Operation::kEncodeF32, FormatId::kE4m3, backend);
    ASSERT_NE(e, nullptr) << backend;
    EXPECT_EQ(e->available(), simd::TargetAvailable(target)) << backend;
  }
}

}  // namespace
}  // namespace lowbit
