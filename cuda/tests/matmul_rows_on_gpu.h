// What every CUDA matmul row's registry test asks of its rows through the
// harness (check::CheckMatmul, `lowbit verify`'s path): on the GPU each row
// passes, having checked something, with no mismatch; without one each row
// comes out SKIPPED, never passed.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "lowbit/check/check.h"
#include "lowbit/cuda/device.h"
#include "lowbit/registry/matmul_entry.h"

namespace lowbit::cuda::testing {

inline void ExpectRowsPassOnTheGpuAndAreSkippedWithout(const std::vector<const registry::MatmulEntry*>& rows) {
  ASSERT_FALSE(rows.empty());
  for (const registry::MatmulEntry* e : rows) {
    const check::Row row = check::CheckMatmul(*e, nullptr, check::Level::kSmoke);
    if (!GpuAvailable()) {
      EXPECT_EQ(row.outcome(), check::Row::Outcome::kSkipped) << registry::MatmulRowName(*e);
      continue;
    }
    EXPECT_EQ(row.outcome(), check::Row::Outcome::kPassed) << row.format << ": " << row.skipped;
    EXPECT_GT(row.checked, 0u);
    if (!row.first_mismatches.empty()) {
      ADD_FAILURE() << row.format << " " << row.first_mismatches[0].where << " " << row.first_mismatches[0].note;
    }
  }
}

}  // namespace lowbit::cuda::testing
