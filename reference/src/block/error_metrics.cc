// MSE, SQNR, max absolute and relative error of a quantization, summed in
// exact rationals over the FP32 inputs and outputs.
#include "lowbit/reference/block/error_metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include "lowbit/reference/block/fp32_arith.h"

namespace lowbit::reference::block {

ErrorMetrics ExactErrorMetrics(const std::vector<float>& x, const std::vector<float>& y) {
  ErrorMetrics m;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const F32 a = F32FromFloat(x[i]);
    const F32 b = F32FromFloat(y[i]);
    const bool finite = (a.value_class == ExactClass::kZero || a.value_class == ExactClass::kFinite) &&
                        (b.value_class == ExactClass::kZero || b.value_class == ExactClass::kFinite);
    if (!finite) {
      ++m.non_finite;
      continue;
    }
    ++m.count;
    const Rational diff = a.Signed() - b.Signed();
    const Rational abs_diff = diff < 0 ? Rational(-diff) : diff;
    m.sum_squared_error += diff * diff;
    m.sum_squared_signal += a.Signed() * a.Signed();
    if (abs_diff > m.max_abs_error) m.max_abs_error = abs_diff;
    if (a.value_class == ExactClass::kFinite) {
      const Rational rel = abs_diff / a.magnitude;
      if (rel > m.max_rel_error) m.max_rel_error = rel;
    }
  }
  if (m.count > 0) m.mse = m.sum_squared_error / m.count;
  if (m.sum_squared_error == 0) {
    m.sqnr_db = std::numeric_limits<double>::infinity();
  } else if (m.sum_squared_signal == 0) {
    m.sqnr_db = -std::numeric_limits<double>::infinity();
  } else {
    // A ratio of rationals; its double is only for display and comparisons
    // at the 1e-12 level.
    const Rational ratio = m.sum_squared_signal / m.sum_squared_error;
    m.sqnr_db = 10.0 * std::log10(ratio.convert_to<double>());
  }
  return m;
}

}  // namespace lowbit::reference::block
