// Which boundary an input value sits on, for a destination format: the
// classes the generators of value_generators.h aim at. Use it to see what a
// property actually exercised (RC_CLASSIFY / RC_TAG), and lowbit's own test
// (proptests/testing/generator_coverage_test.cc) uses it to prove that each
// generator hits every class.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/testing/value_generators.h"

namespace lowbit::testing {

enum BoundaryClass : std::uint32_t {
  kClassTie = 1u << 0,               // exactly halfway between adjacent destination values
  kClassNearTie = 1u << 1,           // one input ulp (or less) off such a tie
  kClassDestinationValue = 1u << 2,  // exactly a value of the destination
  kClassBinadeEdge = 1u << 3,        // a power of two
  kClassBelowPowerOfTwo = 1u << 4,   // the input value just below a power of two (an amax 2^k (1 - 2^-24))
  kClassMax = 1u << 5,               // the destination's largest finite value
  kClassAboveMax = 1u << 6,          // finite and above the largest finite value (overflow tie included)
  kClassOverflowTie = 1u << 7,       // exactly max + half a top-binade quantum
  kClassHalfMinSubnormal = 1u << 8,  // half of the destination's smallest positive value
  kClassNan = 1u << 9,
  kClassNanPayload = 1u << 10,       // a NaN whose payload is not the all-ones or quiet-only pattern
  kClassNegativeZero = 1u << 11,
  kClassInfinity = 1u << 12,
  kClassInputSubnormal = 1u << 13,   // a subnormal of the input format
};

inline constexpr BoundaryClass kAllBoundaryClasses[] = {
    kClassTie,          kClassNearTie,          kClassDestinationValue, kClassBinadeEdge, kClassBelowPowerOfTwo,
    kClassMax,          kClassAboveMax,         kClassOverflowTie,      kClassHalfMinSubnormal,
    kClassNan,          kClassNanPayload,       kClassNegativeZero,     kClassInfinity,   kClassInputSubnormal,
};

inline const char* BoundaryClassName(BoundaryClass c) {
  switch (c) {
    case kClassTie: return "tie";
    case kClassNearTie: return "near tie";
    case kClassDestinationValue: return "destination value";
    case kClassBinadeEdge: return "binade edge";
    case kClassBelowPowerOfTwo: return "just below a power of two";
    case kClassMax: return "max";
    case kClassAboveMax: return "above max";
    case kClassOverflowTie: return "overflow tie";
    case kClassHalfMinSubnormal: return "half the smallest subnormal";
    case kClassNan: return "NaN";
    case kClassNanPayload: return "NaN payload";
    case kClassNegativeZero: return "-0";
    case kClassInfinity: return "Inf";
    case kClassInputSubnormal: return "input subnormal";
  }
  return "?";
}

// The classes of the input `code` of format `input` (a float format of at
// most 64 bits) for destination `dst`, as a mask of BoundaryClass. Ties and
// destination values are classified for destinations of at most 16 bits.
inline std::uint32_t ClassifyInput(const FormatSpec& input, std::uint64_t code, const FormatSpec& dst) {
  std::uint32_t c = 0;
  const double x = input.total_bits == 64 ? BitCast<double>(code) : DecodeToF64(input, code);
  const std::uint64_t magnitude = code & ~input.SignBit() & input.CodeMask();
  if (std::isnan(x)) {
    c |= kClassNan;
    if (input.specials == SpecialCodes::kIeee && input.mantissa_bits >= 2) {
      const std::uint64_t payload = magnitude & input.MantissaMask();
      const std::uint64_t quiet = std::uint64_t{1} << (input.mantissa_bits - 1);
      if (payload != input.MantissaMask() && payload != quiet) c |= kClassNanPayload;
    }
    return c;
  }
  if (std::isinf(x)) return c | kClassInfinity;
  if (x == 0) return std::signbit(x) ? c | kClassNegativeZero : c;
  const int exponent_field = static_cast<int>(magnitude >> input.mantissa_bits);
  if (input.has_subnormals && exponent_field == 0) c |= kClassInputSubnormal;
  const double a = std::fabs(x);
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  if (m == 0.5) c |= kClassBinadeEdge;
  // The next input value up is a power of two: the significand is all ones.
  if ((magnitude & input.MantissaMask()) == input.MantissaMask() && exponent_field != 0) c |= kClassBelowPowerOfTwo;
  const double max = MaxFiniteValue(dst);
  if (a == max) c |= kClassMax;
  if (a > max) c |= kClassAboveMax;
  if (dst.IsFloat() && a == max + TopQuantum(dst, max) / 2) c |= kClassOverflowTie;
  if (a == SmallestPositive(dst) / 2) c |= kClassHalfMinSubnormal;
  if (dst.total_bits > 16) return c;
  const std::vector<double>& values = DestinationValues(dst);
  const double beyond = max + TopQuantum(dst, max);
  // The adjacent pair around a: values[i] <= a < upper.
  std::size_t lo = 0;
  std::size_t hi = values.size();
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    (values[mid] <= a ? lo : hi) = mid;
  }
  if (a < values[0]) return c;
  if (a == values[lo]) return c | kClassDestinationValue;
  const double upper = lo + 1 < values.size() ? values[lo + 1] : beyond;
  if (a >= upper) return c;
  const double tie = (values[lo] + upper) / 2;
  if (a == tie) return c | kClassTie;
  // One ulp of the input at the tie (normal inputs; subnormal ties use the
  // subnormal quantum).
  int tie_exponent = 0;
  std::frexp(tie, &tie_exponent);
  const int min_exponent = input.MinNormalExponent() + 1;  // frexp's exponent is one above ilogb's
  const int quantum_exponent = (tie_exponent < min_exponent ? min_exponent : tie_exponent) - 1 - input.mantissa_bits;
  if (std::fabs(a - tie) <= std::ldexp(1.0, quantum_exponent)) c |= kClassNearTie;
  return c;
}

// The names of the classes in `mask`, comma separated.
inline std::string DescribeClasses(std::uint32_t mask) {
  std::string s;
  for (BoundaryClass c : kAllBoundaryClasses) {
    if ((mask & c) != 0) s += (s.empty() ? "" : ", ") + std::string(BoundaryClassName(c));
  }
  return s.empty() ? "none" : s;
}

}  // namespace lowbit::testing
