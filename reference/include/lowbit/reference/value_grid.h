// ValueGrid: the finite non-negative values of a floating-point format, in
// increasing order, each with its code, built by decoding every code with
// ExactValue and sorting the results. The oracle rounds by locating an input
// between two entries of this list (comparison of exact rationals), never by
// bit manipulation.
#pragma once

#include <cstdint>
#include <vector>

#include "lowbit/formats/format_spec.h"
#include "lowbit/reference/exact_value.h"

namespace lowbit::reference {

struct GridPoint {
  Rational magnitude;
  std::uint64_t code = 0;  // sign bit clear
  // Whether the integral significand (the value divided by its binade's
  // quantum) is odd; the parity that round-to-nearest-even and round-to-odd
  // look at.
  bool odd_significand = false;
};

struct ValueGrid {
  std::vector<GridPoint> points;  // strictly increasing magnitudes; +0 first when the format has zero
  // The first value above the largest finite one in the same format with an
  // unbounded exponent range: max + one quantum of the top binade (E4M3 480,
  // E5M2 65536, E2M1 8, E8M0 2^128). Rounding to it is an overflow
  // (IEEE 754 §7.4 "were the exponent range unbounded").
  GridPoint beyond_max;
  Rational min_normal;  // smallest normal magnitude; smaller non-zero inputs are tiny
};

// The grid of a float format of at most 16 bits, built once and cached (the
// cache is thread safe). Throws std::invalid_argument for integer formats and
// formats wider than 16 bits.
const ValueGrid& GridFor(const FormatSpec& spec);

}  // namespace lowbit::reference
