// Properties every rounding must have, checked on the model with
// boundary-biased FP64 / FP32 inputs (boundary_generators.h):
//   monotone       x <= y  =>  value(enc x) <= value(enc y)
//   sign-symmetric enc(-x) = -enc(x) for RNE / RNA / RTZ / odd, signed floats
//   error bound    |value(enc x) - x| <= half the neighbour spacing (nearest),
//                  < the spacing (directed, odd, stochastic), for in-range x
//   idempotent     a representable value encodes to itself, exactly, no flags
// The error is measured exactly (oracle rationals), never in floating point.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "boundary_generators.h"
#include "generators_at_level.h"
#include "lowbit/formats/convert.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#include "lowbit/reference/value_grid.h"
#include "option_generators.h"

namespace lowbit {
namespace {

using reference::Exact;
using reference::ExactClass;
using reference::Rational;

constexpr testing::LevelCounts kDraws = {100, 5000, 1000000};

const std::vector<FormatId> kDestinations = testing::OracleDestinations();
const std::vector<RoundingMode> kModes(std::begin(testing::kAllModes), std::end(testing::kAllModes));

bool IsNan(const FormatSpec& spec, std::uint64_t code) {
  return reference::ExactValue(spec, code).value_class == ExactClass::kNan;
}

TEST(RoundingProperties, Monotone) {
  testing::CheckAtLevel(kDraws, [] {
    const FormatSpec& dst = Spec(*rc::gen::elementOf(kDestinations));
    const double x = BitCast<double>(*testing::BoundaryF64Bits(dst));
    const double y = BitCast<double>(*testing::BoundaryF64Bits(dst));
    RC_PRE(!std::isnan(x) && !std::isnan(y));
    EncodeOptions o;
    o.rounding = *rc::gen::elementOf(kModes);
    o.overflow = *rc::gen::elementOf(std::vector<Overflow>{Overflow::kFormatDefault, Overflow::kSaturate});
    o.random_bits = *rc::gen::arbitrary<std::uint32_t>();  // one fixed word for both inputs
    // |x| of a negative would break monotonicity by design; clamp instead.
    o.negative_into_unsigned = NegativeIntoUnsigned::kClampZero;
    const double lo = x < y ? x : y;
    const double hi = x < y ? y : x;
    const EncodeResult a = EncodeF64(dst, lo, o);
    const EncodeResult b = EncodeF64(dst, hi, o);
    // Overflow into a NaN (E4M3, FNUZ, E8M0) leaves the ordered values.
    if (IsNan(dst, a.code) || IsNan(dst, b.code)) return;
    RC_ASSERT(DecodeToF64(dst, a.code) <= DecodeToF64(dst, b.code));
  });
}

TEST(RoundingProperties, SignSymmetric) {
  testing::CheckAtLevel(kDraws, [] {
    std::vector<FormatId> signed_floats;
    for (FormatId id : kDestinations) {
      if (Spec(id).IsFloat() && Spec(id).has_sign) signed_floats.push_back(id);
    }
    const FormatSpec& dst = Spec(*rc::gen::elementOf(signed_floats));
    const double x = BitCast<double>(*testing::BoundaryF64Bits(dst));
    RC_PRE(!std::isnan(x));
    EncodeOptions o;
    o.rounding = *rc::gen::elementOf(std::vector<RoundingMode>{
        RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
        RoundingMode::kOdd, RoundingMode::kNearestTowardZero});
    o.overflow = *rc::gen::elementOf(std::vector<Overflow>{Overflow::kFormatDefault, Overflow::kSaturate});
    const EncodeResult plus = EncodeF64(dst, x, o);
    const EncodeResult minus = EncodeF64(dst, -x, o);
    RC_ASSERT(plus.flags == minus.flags);
    if (IsNan(dst, plus.code)) {
      RC_ASSERT(IsNan(dst, minus.code));
      return;
    }
    const double p = DecodeToF64(dst, plus.code);
    const double m = DecodeToF64(dst, minus.code);
    RC_ASSERT(m == -p);
    // Zero keeps the input's sign where the format has -0 (not FNUZ).
    if (p == 0 && dst.HasNegativeZero()) RC_ASSERT(std::signbit(p) != std::signbit(m));
  });
}

// Ties toward +Inf are ties toward -Inf seen in a mirror: rnu(x) = -rnd(-x),
// code for code (flags too), on every signed float destination.
TEST(RoundingProperties, NearestUpMirrorsNearestDown) {
  testing::CheckAtLevel(kDraws, [] {
    std::vector<FormatId> signed_floats;
    for (FormatId id : kDestinations) {
      if (Spec(id).IsFloat() && Spec(id).has_sign && Spec(id).HasNegativeZero()) signed_floats.push_back(id);
    }
    const FormatSpec& dst = Spec(*rc::gen::elementOf(signed_floats));
    const double x = BitCast<double>(*testing::BoundaryF64Bits(dst));
    RC_PRE(!std::isnan(x));
    EncodeOptions up, down;
    up.rounding = RoundingMode::kNearestUp;
    down.rounding = RoundingMode::kNearestDown;
    up.overflow = down.overflow = *rc::gen::elementOf(std::vector<Overflow>{Overflow::kFormatDefault, Overflow::kSaturate});
    const EncodeResult a = EncodeF64(dst, x, up);
    const EncodeResult b = EncodeF64(dst, -x, down);
    RC_ASSERT(a.flags == b.flags);
    if (IsNan(dst, a.code)) {
      RC_ASSERT(IsNan(dst, b.code));
      return;
    }
    RC_ASSERT(a.code == (b.code ^ dst.SignBit()));
  });
}

TEST(RoundingProperties, ErrorWithinModeBound) {
  testing::CheckAtLevel(kDraws, [] {
    const FormatSpec& dst = Spec(*rc::gen::elementOf(kDestinations));
    const std::uint64_t bits = *testing::BoundaryF64Bits(dst);
    const Exact x = reference::ExactValue(kFp64, bits);
    RC_PRE(x.value_class == ExactClass::kFinite);
    RC_PRE(dst.has_sign || !x.negative);
    // In range: between the extreme values (no overflow, no E8M0 clipping).
    if (dst.IsFloat()) {
      const reference::ValueGrid& grid = reference::GridFor(dst);
      RC_PRE(x.magnitude <= grid.points.back().magnitude);
      RC_PRE(x.magnitude >= grid.points.front().magnitude);
    } else {
      RC_PRE(x.Signed() >= Rational(dst.IntMin()) && x.Signed() <= Rational(dst.IntMax()));
    }
    EncodeOptions o;
    o.rounding = *rc::gen::elementOf(kModes);
    o.random_bits = *rc::gen::arbitrary<std::uint32_t>();
    const EncodeResult r = EncodeF64(dst, BitCast<double>(bits), o);
    const Exact got = reference::ExactValue(dst, r.code);
    RC_ASSERT(got.value_class == ExactClass::kZero || got.value_class == ExactClass::kFinite);
    Rational error = got.Signed() - x.Signed();
    if (error < 0) error = -error;
    // The spacing of the two neighbours of |x|.
    const reference::Location loc = reference::Locate(dst, x.magnitude);
    Rational spacing = 1;
    if (dst.IsFloat()) {
      const reference::ValueGrid& grid = reference::GridFor(dst);
      const Rational& lower = grid.points[loc.lower].magnitude;
      const Rational& upper = loc.lower + 1 < grid.points.size() ? grid.points[loc.lower + 1].magnitude
                                                                 : grid.beyond_max.magnitude;
      spacing = upper - lower;
    }
    if (loc.exact) {
      RC_ASSERT(error == 0);
    } else if (o.rounding == RoundingMode::kNearestEven || o.rounding == RoundingMode::kNearestAway ||
               o.rounding == RoundingMode::kNearestUp || o.rounding == RoundingMode::kNearestDown ||
               o.rounding == RoundingMode::kNearestTowardZero) {
      RC_ASSERT(error * 2 <= spacing);
    } else {
      RC_ASSERT(error < spacing);
    }
    RC_ASSERT(((r.flags & kFlagInexact) != 0) == (error != 0));
  });
}

TEST(RoundingProperties, IdempotentOnRepresentableValues) {
  testing::CheckAtLevel(kDraws, [] {
    const FormatSpec& dst = Spec(*rc::gen::elementOf(kDestinations));
    const std::uint64_t code = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << dst.total_bits);
    // Finite values and zeros (an Inf saturates under kSaturate, by design).
    const ExactClass value_class = reference::ExactValue(dst, code).value_class;
    RC_PRE(value_class == ExactClass::kFinite || value_class == ExactClass::kZero);
    const double value = DecodeToF64(dst, code);
    const float value32 = DecodeToF32(dst, code);
    for (const testing::OptionSet& set : testing::OptionSetsFor(dst)) {
      EncodeOptions o = set.options;
      o.random_bits = 0xFFFFFFFFu;  // would round away if anything were discarded
      // -0 becomes +0 when the bundle drops negative zeros.
      const bool negative_zero = value == 0 && std::signbit(value);
      const std::uint64_t expected = negative_zero && !o.keep_negative_zero ? 0 : code;
      const EncodeResult r64 = EncodeF64(dst, value, o);
      const EncodeResult r32 = EncodeF32(dst, value32, o);
      RC_ASSERT(r64.code == expected);
      RC_ASSERT(r64.flags == kFlagNone);
      RC_ASSERT(r32.code == expected);
      RC_ASSERT(r32.flags == kFlagNone);
    }
  });
}

}  // namespace
}  // namespace lowbit
