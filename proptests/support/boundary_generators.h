// RapidCheck generators of FP32 / FP64 inputs biased to where rounding bugs
// live for a given destination format (docs/design.md "Property tests"): ties
// between adjacent destination values (exactly and +-1 ulp of the input
// format), the destination's values themselves, binade edges, max / the
// overflow tie / the first value past max, half of the smallest subnormal,
// NaN payloads of both signs, +-0, +-Inf, input subnormals and random bits.
// Random inputs alone almost never hit a tie
// (docs/formats-reference.md §9 / docs/design.md "Tests").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/reference/value_grid.h"

namespace lowbit {
// RapidCheck prints counterexamples with showValue (found by ADL).
inline void showValue(FormatId id, std::ostream& os) { os << Spec(id).name; }
}  // namespace lowbit

namespace lowbit::testing {

// Destinations the oracle encodes into (formats of at most 16 bits).
inline std::vector<FormatId> OracleDestinations() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits <= 16) v.push_back(id);
  }
  return v;
}

namespace detail {

// The destination's non-negative values in increasing order, as doubles
// (every value of a <= 16-bit format is a double). Integers: IntMin..IntMax.
inline std::vector<double> BuildDestinationValues(const FormatSpec& dst) {
  std::vector<double> v;
  if (!dst.IsFloat()) {
    for (std::int64_t k = dst.IntMin(); k <= dst.IntMax(); ++k) v.push_back(static_cast<double>(k));
    return v;
  }
  for (const reference::GridPoint& p : reference::GridFor(dst).points) {
    v.push_back(DecodeToF64(dst, p.code));
  }
  return v;
}

// Cached per format (built on first use; tests draw from one thread).
inline const std::vector<double>& DestinationValues(const FormatSpec& dst) {
  static std::map<const FormatSpec*, std::vector<double>> cache;
  std::vector<double>& v = cache[&dst];
  if (v.empty()) v = BuildDestinationValues(dst);
  return v;
}

// One quantum of the destination's top binade: max + it is the first value
// past max of the same format with unbounded exponent.
inline double TopQuantum(const FormatSpec& dst, double max) {
  if (!dst.IsFloat()) return 1.0;
  return std::ldexp(1.0, std::ilogb(max) - dst.mantissa_bits);
}

// A positive exact anchor for `dst` (before nudging and sign).
inline rc::Gen<double> Anchor(const FormatSpec& dst) {
  return rc::gen::exec([&dst]() -> double {
    const std::vector<double>& values = DestinationValues(dst);
    const double max = values.back();
    const double beyond = max + TopQuantum(dst, max);
    const int kind = *rc::gen::inRange(0, 8);
    switch (kind) {
      case 0:
      case 1: {  // a tie between adjacent values (the top one may be `beyond`)
        const std::size_t i = *rc::gen::inRange<std::size_t>(0, values.size());
        const double upper = i + 1 < values.size() ? values[i + 1] : beyond;
        return std::fabs((values[i] + upper) / 2);
      }
      case 2: {  // a value of the destination
        const std::size_t i = *rc::gen::inRange<std::size_t>(0, values.size());
        return std::fabs(values[i]);
      }
      case 3: {  // a binade edge 2^e across the destination's range and beyond
        const int top = std::ilogb(beyond) + 2;
        const int bottom = dst.IsFloat() ? dst.MinNormalExponent() - dst.mantissa_bits - 3 : -3;
        return std::ldexp(1.0, *rc::gen::inRange(bottom, top + 1));
      }
      case 4: {  // around max: max, the overflow tie, beyond, far beyond
        const double candidates[] = {max, max + TopQuantum(dst, max) / 2, beyond, 2 * beyond,
                                     max * 1.5, 1e30};
        return *rc::gen::elementOf(std::vector<double>(std::begin(candidates), std::end(candidates)));
      }
      case 5: {  // half the smallest non-zero value, the smallest, the smallest normal
        const double smallest = values[0] != 0 ? values[0] : values[1];
        const double normal = dst.IsFloat() ? std::ldexp(1.0, dst.MinNormalExponent()) : 1.0;
        const double candidates[] = {smallest / 2, smallest, normal, normal / 2,
                                     smallest / 4, (smallest + normal) / 2};
        return *rc::gen::elementOf(std::vector<double>(std::begin(candidates), std::end(candidates)));
      }
      case 6: {  // integers and half-integers (INT8/INT4 rounding, E8M0 1.5 * 2^k)
        const int k = *rc::gen::inRange(-20, 300);
        return k / 2.0;
      }
      default: {  // 1.5 * 2^e: the E8M0 / power-of-two tie
        const int e = *rc::gen::inRange(-140, 130);
        return std::ldexp(1.5, e);
      }
    }
  });
}

}  // namespace detail

// FP64 input bits for encoding into `dst` (which must outlive the generator).
inline rc::Gen<std::uint64_t> BoundaryF64Bits(const FormatSpec& dst) {
  return rc::gen::exec([&dst]() -> std::uint64_t {
    const std::uint64_t sign = *rc::gen::arbitrary<bool>() ? std::uint64_t{1} << 63 : 0;
    const int kind = *rc::gen::weightedElement<int>({{12, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}});
    switch (kind) {
      case 0: {  // an anchor, nudged by -1, 0 or +1 ulp of FP64
        double x = *detail::Anchor(dst);
        const int nudge = *rc::gen::weightedElement<int>({{2, 0}, {1, -1}, {1, 1}});
        if (nudge != 0) x = std::nextafter(x, nudge > 0 ? std::numeric_limits<double>::infinity() : 0.0);
        return sign | BitCast<std::uint64_t>(x);
      }
      case 1:  // zero
        return sign;
      case 2:  // infinity
        return sign | 0x7FF0000000000000ULL;
      case 3: {  // NaN with a random non-zero payload
        const std::uint64_t payload = *rc::gen::inRange<std::uint64_t>(1, std::uint64_t{1} << 52);
        return sign | 0x7FF0000000000000ULL | payload;
      }
      case 4:  // an FP64 subnormal
        return sign | *rc::gen::inRange<std::uint64_t>(1, std::uint64_t{1} << 52);
      default:  // random bits
        return *rc::gen::arbitrary<std::uint64_t>();
    }
  });
}

// FP32 input bits for encoding into `dst` (which must outlive the generator).
inline rc::Gen<std::uint32_t> BoundaryF32Bits(const FormatSpec& dst) {
  return rc::gen::exec([&dst]() -> std::uint32_t {
    const std::uint32_t sign = *rc::gen::arbitrary<bool>() ? 0x80000000u : 0;
    const int kind = *rc::gen::weightedElement<int>({{12, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}});
    switch (kind) {
      case 0: {  // an anchor (exact in FP32 unless beyond its range), nudged
        const double anchor = *detail::Anchor(dst);
        float x = anchor > std::numeric_limits<float>::max() ? std::numeric_limits<float>::infinity()
                                                               : static_cast<float>(anchor);
        const int nudge = *rc::gen::weightedElement<int>({{2, 0}, {1, -1}, {1, 1}});
        if (nudge != 0) x = std::nextafter(x, nudge > 0 ? std::numeric_limits<float>::infinity() : 0.0f);
        return sign | BitCast<std::uint32_t>(x);
      }
      case 1:
        return sign;
      case 2:
        return sign | 0x7F800000u;
      case 3:
        return sign | 0x7F800000u | *rc::gen::inRange<std::uint32_t>(1, 1u << 23);
      case 4:
        return sign | *rc::gen::inRange<std::uint32_t>(1, 1u << 23);
      default:
        return *rc::gen::arbitrary<std::uint32_t>();
    }
  });
}

}  // namespace lowbit::testing
