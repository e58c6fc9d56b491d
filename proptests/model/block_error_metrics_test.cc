// The oracle's exact error metrics on a hand-computed example.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/reference/block/error_metrics.h"

namespace lowbit::reference::block {
namespace {

TEST(ErrorMetricsTest, HandComputedExample) {
  // x = {1, 2, -4}, y = {1, 1, -4}: errors 0, 1, 0 -> SSE 1, MSE 1/3,
  // signal 1 + 4 + 16 = 21, SQNR 10 log10(21) = 13.2222 dB, max abs 1,
  // max rel 1/2.
  const ErrorMetrics m = ExactErrorMetrics({1.0f, 2.0f, -4.0f}, {1.0f, 1.0f, -4.0f});
  EXPECT_EQ(m.count, 3);
  EXPECT_EQ(m.sum_squared_error, Rational(1));
  EXPECT_EQ(m.mse, Rational(1, 3));
  EXPECT_EQ(m.sum_squared_signal, Rational(21));
  EXPECT_EQ(m.max_abs_error, Rational(1));
  EXPECT_EQ(m.max_rel_error, Rational(1, 2));
  EXPECT_NEAR(m.sqnr_db, 13.2221929, 1e-6);
}

TEST(ErrorMetricsTest, NonFinitePairsAreCountedAndLeftOut) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ErrorMetrics m = ExactErrorMetrics({1.0f, nan}, {1.0f, 0.0f});
  EXPECT_EQ(m.count, 1);
  EXPECT_EQ(m.non_finite, 1);
  EXPECT_TRUE(std::isinf(m.sqnr_db));
}

}  // namespace
}  // namespace lowbit::reference::block
