// The compiled Highway targets (simd.h CompiledTargets, TargetName,
// TargetAvailable) and a probe kernel that says which target's code ran, so
// that the tests can check the dispatch of target_dispatch.h.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
// A name no Highway source has: foreach_target.h includes it by a quoted
// name, which the compiler looks up first beside foreach_target.h itself
// (a Highway source tree has hwy/targets.cc).
#define HWY_TARGET_INCLUDE "simd_targets.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace lowbit::simd {
namespace HWY_NAMESPACE {

// HWY_TARGET is the target this copy of the file is compiled for.
std::int64_t CompiledFor() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace lowbit::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "lowbit/simd/simd.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(CompiledFor);

int TargetPreference(std::int64_t target) {
  return 64 - std::countr_zero(static_cast<std::uint64_t>(target));  // 1 (bit 63) .. 64 (bit 0)
}

namespace detail {

// hwy::SupportedTargets() runs CPUID on every call in Highway 1.0.3, which
// costs more than a 4096-element kernel, so the CPU is asked once.
bool CpuHasTarget(std::int64_t target) {
  static const std::int64_t kCpu = hwy::SupportedTargets();
  return (kCpu & target) != 0;
}

registry::Status TargetError(std::int64_t target) {
  if (DispatchTableIndex(target) < 0) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in");
  }
  return registry::Status::Error(std::string("simd: this CPU does not support ") +
                                 TargetName(target));
}

}  // namespace detail

std::vector<std::int64_t> CompiledTargets() {
  // Highway's target bits are smaller for better targets: lowest bit first.
  std::vector<std::int64_t> targets;
  for (std::int64_t rest = HWY_TARGETS; rest != 0; rest &= rest - 1) {
    targets.push_back(rest & -rest);
  }
  return targets;
}

const char* TargetName(std::int64_t target) { return hwy::TargetName(target); }

bool TargetAvailable(std::int64_t target) {
  return detail::DispatchTableIndex(target) >= 0 && detail::CpuHasTarget(target);
}

std::int64_t TargetThatRuns(std::int64_t target) {
  const auto probe = LOWBIT_SIMD_KERNEL(CompiledFor, target);
  return probe == nullptr ? 0 : probe();
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
