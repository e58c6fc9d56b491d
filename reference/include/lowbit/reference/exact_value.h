// ExactValue: what a code of a format means, as an exact rational, read from
// the field formula of the format's description (docs/formats-reference.md §1) and nothing
// else. This is the oracle's decoder; it shares no code with the model's
// Unpack (docs/design.md "Three roles, kept apart").
#pragma once

#include <cstdint>

#include <boost/multiprecision/cpp_int.hpp>

#include "lowbit/formats/format_spec.h"

namespace lowbit::reference {

using BigInt = boost::multiprecision::cpp_int;
using Rational = boost::multiprecision::cpp_rational;

enum class ExactClass : std::uint8_t { kZero, kFinite, kInf, kNan };

// A value as the oracle sees it. Also the oracle's input type: an exact value
// to be encoded (any magnitude, any NaN payload).
struct Exact {
  ExactClass value_class = ExactClass::kZero;
  bool negative = false;
  // kFinite: the magnitude, > 0. Zero for every other class.
  Rational magnitude;
  // kNan: the NaN's mantissa field placed with its most significant bit at bit
  // 63 (bit 63 is the quiet bit of IEEE-style formats). A format whose NaN
  // has no mantissa bits of its own (E8M0 0xFF, FNUZ 0x80) reports 1 << 63:
  // a single NaN counts as quiet.
  std::uint64_t nan_payload = 0;

  // The signed value of a zero or finite Exact.
  Rational Signed() const { return negative ? Rational(-magnitude) : magnitude; }
};

// 2^k exactly, for any k (never through a float: Boost 1.74 misrounds
// rational -> float conversions of subnormals, docs/design.md "Known traps (measured)").
Rational PowerOfTwo(int k);

// -1, 0 or +1 as a < b, a == b, a > b, by cross-multiplying numerators and
// (positive) denominators: boost::rational's operator< works by repeated
// division and dominated the exhaustive sweeps' run time.
int Compare(const Rational& a, const Rational& b);

// The exact meaning of `code` (its low total_bits bits) in `spec`.
Exact ExactValue(const FormatSpec& spec, std::uint64_t code);

// A finite or zero Exact from a signed rational (zero is +0).
Exact ExactFromRational(const Rational& value);

}  // namespace lowbit::reference
