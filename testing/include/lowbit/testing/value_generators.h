// RapidCheck generators of single values, biased to where rounding bugs live
// for a given destination format (docs/design.md "Tests"): ties between
// adjacent destination values (exactly and +-1 ulp of the input format), the
// destination's values themselves, binade edges (so 2^k nudged one ulp down:
// an amax just below a power of two, 2^k (1 - 2^-24) in FP32), the largest
// finite value, the overflow tie and the first value past it, half of the
// smallest subnormal, NaN payloads of both signs, +-0, +-Inf, input
// subnormals and random bits. Random inputs alone almost never hit a tie
// (docs/formats-reference.md §9, docs/design.md "Tests").
//
// Part of lowbit::testing (find_package(lowbit) ... lowbit::testing): use
// these in your own RapidCheck properties, e.g.
//   rc::check([] { const std::uint32_t bits = *lowbit::testing::BoundaryF32Bits(lowbit::kE4m3); ... });
// Every generator takes the destination by reference: pass one of the
// namespace-scope specs (lowbit::kE4m3, ...) or a spec that outlives it.
// ClassifyInput (boundary_classes.h) says which boundary a drawn value hits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/profiles/profile_id.h"

namespace lowbit {
// RapidCheck prints counterexamples with showValue (found by ADL).
inline void showValue(FormatId id, std::ostream& os) { os << Spec(id).name; }
inline void showValue(ProfileId id, std::ostream& os) { os << ProfileName(id); }
}  // namespace lowbit

namespace lowbit::testing {

// The finite non-negative values of `dst` in increasing order, as doubles
// (every value of a format of at most 16 bits is a double), decoded by the
// model from every code. Integers: IntMin..IntMax. Cached per layout (specs
// are often copies, e.g. recipe::Recipe::element, so not per address).
inline const std::vector<double>& DestinationValues(const FormatSpec& dst) {
  static std::mutex mutex;
  static std::map<std::vector<int>, std::vector<double>> cache;
  const std::vector<int> key = {static_cast<int>(dst.kind), dst.total_bits, dst.has_sign, dst.exponent_bits,
                                dst.mantissa_bits, dst.bias, dst.has_subnormals, static_cast<int>(dst.specials)};
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<double>& v = cache[key];
  if (!v.empty()) return v;
  if (!dst.IsFloat()) {
    for (std::int64_t k = dst.IntMin(); k <= dst.IntMax(); ++k) v.push_back(static_cast<double>(k));
    return v;
  }
  if (dst.total_bits > 16) {
    // FP32 / FP64: too many values to list; the landmarks stand in for them
    // (0, the smallest subnormal and normal, 1, the largest finite value).
    v = {0.0, std::ldexp(1.0, dst.MinNormalExponent() - dst.mantissa_bits), std::ldexp(1.0, dst.MinNormalExponent()),
         1.0, DecodeToF64(dst, dst.MaxFiniteCode())};
    return v;
  }
  for (std::uint64_t code = 0; code < (std::uint64_t{1} << dst.total_bits); ++code) {
    if ((code & dst.SignBit()) != 0) continue;
    const double x = DecodeToF64(dst, code);
    if (std::isfinite(x) && !std::signbit(x)) v.push_back(x);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The largest finite value of `dst` (any width), decoded by the model.
inline double MaxFiniteValue(const FormatSpec& dst) {
  return dst.IsFloat() ? DecodeToF64(dst, dst.MaxFiniteCode()) : static_cast<double>(dst.IntMax());
}

// One quantum of the destination's top binade: max + it is the first value
// past max of the same format with an unbounded exponent.
inline double TopQuantum(const FormatSpec& dst, double max) {
  if (!dst.IsFloat()) return 1.0;
  return std::ldexp(1.0, std::ilogb(max) - dst.mantissa_bits);
}

// The smallest positive value of `dst` (the smallest subnormal where there
// are subnormals; 2^-127 for E8M0; 1 for integers).
inline double SmallestPositive(const FormatSpec& dst) {
  if (!dst.IsFloat()) return 1.0;
  return dst.has_subnormals ? std::ldexp(1.0, dst.MinNormalExponent() - dst.mantissa_bits)
                            : std::ldexp(1.0, dst.MinNormalExponent());
}

namespace detail {

// A positive exact anchor for `dst` (before nudging and sign).
inline rc::Gen<double> Anchor(const FormatSpec& dst) {
  return rc::gen::exec([&dst]() -> double {
    const std::vector<double>& values = DestinationValues(dst);
    const double max = MaxFiniteValue(dst);
    // FP64's max + one quantum is Inf: stay at max there.
    const double beyond = std::isfinite(max + TopQuantum(dst, max)) ? max + TopQuantum(dst, max) : max;
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
        const double smallest = values[0] != 0 || values.size() < 2 ? values[0] : values[1];
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

// FP64 input bits for encoding into `dst`.
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

// FP32 input bits for encoding into `dst`.
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

// FP32 values for encoding into `dst` (BoundaryF32Bits as floats).
inline rc::Gen<float> BoundaryF32(const FormatSpec& dst) {
  return rc::gen::map(BoundaryF32Bits(dst), [](std::uint32_t b) { return BitCast<float>(b); });
}

// Input codes of any float `input` format (BF16, FP16, an FP8 that is widened,
// ...) for encoding into `dst`: the same anchors, rounded to `input` by the
// model (round to nearest even) and nudged by one code of `input`, plus the
// input's own zeros, Infs, NaN payloads, subnormals and random codes.
inline rc::Gen<std::uint64_t> BoundaryInputCodes(const FormatSpec& input, const FormatSpec& dst) {
  return rc::gen::exec([&input, &dst]() -> std::uint64_t {
    const std::uint64_t sign = *rc::gen::arbitrary<bool>() ? input.SignBit() : 0;
    const std::uint64_t exp_mask = static_cast<std::uint64_t>(input.MaxExponentField()) << input.mantissa_bits;
    const int kind = *rc::gen::weightedElement<int>({{12, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}});
    switch (kind) {
      case 0: {
        EncodeOptions saturate;
        saturate.overflow = Overflow::kFormatDefault;
        std::uint64_t code = EncodeF64(input, *detail::Anchor(dst), saturate).code & ~input.SignBit();
        const int nudge = *rc::gen::weightedElement<int>({{2, 0}, {1, -1}, {1, 1}});
        // Codes of a sign-magnitude float are ordered by magnitude: +-1 is
        // the next value up or down (clamped at 0 and at the top finite code).
        if (nudge < 0 && code > 0) --code;
        if (nudge > 0 && code < input.MaxFiniteCode()) ++code;
        return sign | code;
      }
      case 1:
        return input.HasNegativeZero() ? sign : 0;
      case 2:  // infinity where the input has it, else its largest finite value
        return sign | (input.HasInf() ? exp_mask : input.MaxFiniteCode());
      case 3: {  // a NaN with a random payload (IEEE-style inputs), or the NaN code
        if (input.specials == SpecialCodes::kIeee && input.mantissa_bits > 0) {
          return sign | exp_mask | *rc::gen::inRange<std::uint64_t>(1, std::uint64_t{1} << input.mantissa_bits);
        }
        if (input.specials == SpecialCodes::kAllOnesIsNan) return sign | exp_mask | input.MantissaMask();
        if (input.specials == SpecialCodes::kNegativeZeroIsNan) return input.SignBit();
        return sign;
      }
      case 4:  // an input subnormal
        if (!input.has_subnormals || input.mantissa_bits == 0) return sign;
        return sign | *rc::gen::inRange<std::uint64_t>(1, std::uint64_t{1} << input.mantissa_bits);
      default:  // any code
        return *rc::gen::arbitrary<std::uint64_t>() & input.CodeMask();
    }
  });
}

// BF16 input bits for encoding into `dst` (what a BF16 kernel reads).
inline rc::Gen<std::uint16_t> BoundaryBf16Bits(const FormatSpec& dst) {
  return rc::gen::map(BoundaryInputCodes(kBf16, dst), [](std::uint64_t c) { return static_cast<std::uint16_t>(c); });
}

// FP16 input bits for encoding into `dst`.
inline rc::Gen<std::uint16_t> BoundaryF16Bits(const FormatSpec& dst) {
  return rc::gen::map(BoundaryInputCodes(kFp16, dst), [](std::uint64_t c) { return static_cast<std::uint16_t>(c); });
}

// Codes of `format` itself (what a decode kernel reads): +-0, the smallest
// subnormal and normal, +-max, the NaN and Inf codes, and any code. Every
// code of a format up to 16 bits is reachable.
inline rc::Gen<std::uint64_t> BoundaryCodes(const FormatSpec& format) {
  return rc::gen::exec([&format]() -> std::uint64_t {
    const std::uint64_t sign = *rc::gen::arbitrary<bool>() ? format.SignBit() : 0;
    const std::uint64_t exp_mask = format.IsFloat()
                                       ? static_cast<std::uint64_t>(format.MaxExponentField()) << format.mantissa_bits
                                       : 0;
    const int kind = *rc::gen::weightedElement<int>({{2, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {4, 5}});
    switch (kind) {
      case 0: return sign;                              // zero (or the FNUZ NaN)
      case 1: return sign | 1;                          // smallest subnormal / positive
      case 2: return sign | format.MaxFiniteCode();      // +-max
      case 3: return sign | exp_mask;                   // Inf / E8M0 NaN / top binade
      case 4: return sign | exp_mask | format.MantissaMask();  // a NaN code where one exists
      default: return *rc::gen::arbitrary<std::uint64_t>() & format.CodeMask();  // any code
    }
  });
}

// ---- policies ---------------------------------------------------------------

// Any encode policy that applies to `dst`: every rounding mode, overflow
// rule (wrap: integers only) and NaN / -0 / unsigned / Inf choice, with
// random words for stochastic rounding. Shrinks toward the defaults.
inline rc::Gen<EncodeOptions> AnyEncodeOptions(const FormatSpec& dst) {
  return rc::gen::exec([&dst]() -> EncodeOptions {
    EncodeOptions o;
    o.rounding = static_cast<RoundingMode>(*rc::gen::inRange(0, 7));
    o.overflow = static_cast<Overflow>(*rc::gen::inRange(0, dst.IsFloat() ? 2 : 3));
    o.inf_input = static_cast<InfInput>(*rc::gen::inRange(0, 2));
    o.nan_sign = static_cast<NanSign>(*rc::gen::inRange(0, 3));
    o.nan_payload = static_cast<NanPayload>(*rc::gen::inRange(0, 4));
    o.nan_into_no_nan = static_cast<NanIntoNoNan>(*rc::gen::inRange(0, 3));
    o.keep_negative_zero = !*rc::gen::arbitrary<bool>();
    o.zero_into_no_zero = static_cast<ZeroIntoNoZero>(*rc::gen::inRange(0, 2));
    o.negative_into_unsigned = static_cast<NegativeIntoUnsigned>(*rc::gen::inRange(0, 3));
    if (o.rounding == RoundingMode::kStochastic) {
      o.random_bits = *rc::gen::arbitrary<std::uint32_t>();
      o.random_bit_count = *rc::gen::inRange(0, 24);
    }
    return o;
  });
}

// Any named profile (profile_id.h).
inline rc::Gen<ProfileId> AnyProfile() {
  return rc::gen::elementOf(std::vector<ProfileId>(std::begin(kAllProfiles), std::end(kAllProfiles)));
}

// Any element format.
inline rc::Gen<FormatId> AnyFormat() {
  return rc::gen::elementOf(std::vector<FormatId>(std::begin(kAllFormats), std::end(kAllFormats)));
}

}  // namespace lowbit::testing
