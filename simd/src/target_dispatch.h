// Which compiled Highway target runs a kernel: Highway's own dispatch table.
//
// Every kernel is exported with HWY_EXPORT (hwy/highway.h), which builds one
// table per kernel with an entry per compiled target. `LOWBIT_SIMD_KERNEL(
// Kernel, target)` picks from that table:
//   - target kBestTarget (0): HWY_DYNAMIC_DISPATCH, i.e. the best compiled
//     target the CPU supports (or the one hwy::SetSupportedTargetsForTest
//     forces);
//   - a named target (HWY_SSE4, HWY_AVX2, HWY_NEON, ...): that target's entry
//     of the same table, or null when it is not compiled in or the CPU lacks
//     it.
// The named entry is found by the table's own index rule (hwy/targets.h of
// Highway 1.0.3, "ChosenTarget mask"): entry 0 is the initialising
// trampoline, entries 1..HWY_MAX_DYNAMIC_TARGETS are the target bits shifted
// by HWY_CHOSEN_TARGET_SHIFT (best first), and the last entry is the EMU128 /
// SCALAR fallback; a build with one target has a one-entry table. Reading a
// table entry changes no process-wide state, unlike
// hwy::SetSupportedTargetsForTest, so runs on named targets may go on in
// several threads at once, beside dynamic dispatch. The simd_dispatch test
// (TargetThatRuns) checks that each named entry runs its own target.
//
// Include after hwy/highway.h in a file that includes hwy/foreach_target.h
// (inside its HWY_ONCE part): the index depends on this translation unit's
// HWY_TARGETS, which every simd/ source shares (simd/CMakeLists.txt).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd::detail {

// Index of `target` (one bit of HWY_TARGETS) in this translation unit's
// HWY_EXPORT tables, or -1 when it is not a compiled target.
constexpr int DispatchTableIndex(std::int64_t target) {
  if (target == 0 || (target & (target - 1)) != 0 || (target & HWY_TARGETS) == 0) return -1;
  if constexpr ((HWY_TARGETS & (HWY_TARGETS - 1)) == 0) {
    return 0;  // one target: HWY_EXPORT builds a one-entry table
  } else {
    if (target == HWY_EMU128 || target == HWY_SCALAR) return HWY_MAX_DYNAMIC_TARGETS + 1;
    const std::int64_t shifted = HWY_CHOSEN_TARGET_SHIFT(target);
    return shifted == 0 ? -1 : std::countr_zero(static_cast<std::uint64_t>(shifted));
  }
}

// The table size HWY_EXPORT gives this translation unit.
constexpr std::size_t kDispatchTableSize =
    (HWY_TARGETS & (HWY_TARGETS - 1)) == 0 ? 1 : HWY_MAX_DYNAMIC_TARGETS + 2;

// Whether the CPU runs `target` (simd_targets.cc: hwy::SupportedTargets, asked once).
bool CpuHasTarget(std::int64_t target);

// `table`'s entry for `target`, or null when that target is not compiled in
// or the CPU lacks it.
template <typename Kernel, std::size_t kSize>
Kernel TargetEntry(Kernel const (&table)[kSize], std::int64_t target) {
  static_assert(kSize == kDispatchTableSize, "not an HWY_EXPORT table of this translation unit");
  const int index = DispatchTableIndex(target);
  if (index < 0 || !CpuHasTarget(target)) return nullptr;
  return table[index];
}

// The error for a target whose entry is null: not compiled in, or not
// supported by this CPU.
registry::Status TargetError(std::int64_t target);

}  // namespace lowbit::simd::detail

// The kernel `FUNC_NAME` (exported with HWY_EXPORT in this scope) for
// `target`: HWY_DYNAMIC_DISPATCH for 0, else the named target's entry or null.
#define LOWBIT_SIMD_KERNEL(FUNC_NAME, target)                                            \
  ((target) == 0 ? &HWY_DYNAMIC_DISPATCH(FUNC_NAME)                                      \
                 : ::lowbit::simd::detail::TargetEntry(HWY_DISPATCH_TABLE(FUNC_NAME), \
                                                       (target)))
