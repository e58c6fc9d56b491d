// Exact error metrics of a quantization: x is the input, y the dequantized
// result. Sums are exact rationals; only SQNR, a logarithm, is a double.
// Pairs where either side is not finite are left out and counted.
#pragma once

#include <vector>

#include "lowbit/reference/exact_value.h"

namespace lowbit::reference::block {

struct ErrorMetrics {
  long count = 0;       // finite pairs measured
  long non_finite = 0;  // pairs left out (NaN or Inf on either side)
  Rational sum_squared_error;   // sum (x - y)^2
  Rational sum_squared_signal;  // sum x^2
  Rational mse;                 // sum_squared_error / count (0 if count == 0)
  Rational max_abs_error;       // max |x - y|
  Rational max_rel_error;       // max |x - y| / |x| over x != 0
  // 10 log10(signal / error): +inf when the error is 0, -inf when the signal is.
  double sqnr_db = 0;
};

ErrorMetrics ExactErrorMetrics(const std::vector<float>& x, const std::vector<float>& y);

}  // namespace lowbit::reference::block
