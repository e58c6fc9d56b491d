// The fused-step bound of tensor_core_bound.h: decoding with ExactValue, the
// sum with exact integers, rounding by counting bits of exact values.
#include "lowbit/reference/tensor_core_bound.h"

#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "lowbit/formats/format_list.h"

namespace lowbit::reference {
namespace {

using boost::multiprecision::lsb;
using boost::multiprecision::msb;

// The format a multiplicand is in when step 1 reads it: FP16 for operands
// the instruction widens first (TensorCoreOperand::widened_to_fp16).
FormatSpec DatapathFormat(const TensorCoreOperand& operand) {
  return operand.widened_to_fp16 ? kFp16 : operand.code_format;
}

// Exact -> StepValue for a value of a float format whose smallest normal
// exponent is `min_normal_exponent` (step 1's e is never below it).
StepValue StepValueOf(const Exact& x, bool is_float, int min_normal_exponent) {
  using boost::multiprecision::denominator;
  using boost::multiprecision::numerator;
  StepValue v;
  v.value_class = x.value_class;
  v.negative = x.negative;
  if (x.value_class != ExactClass::kFinite) return v;
  const BigInt num = numerator(x.magnitude);
  const BigInt den = denominator(x.magnitude);
  const int den_bits = static_cast<int>(msb(den));
  if (den != (BigInt(1) << den_bits)) throw std::logic_error("a decoded code is not a dyadic rational");
  if (!is_float) {
    if (den_bits != 0) throw std::logic_error("an integer code decoded to a fraction");
    v.magnitude = num.convert_to<std::int64_t>();
    return v;
  }
  const int zeros = static_cast<int>(lsb(num));
  const BigInt odd = num >> zeros;
  if (msb(odd) > 40) throw std::logic_error("a decoded significand is wider than any operand format");
  v.magnitude = odd.convert_to<std::int64_t>();
  v.scale = zeros - den_bits;
  const int leading = static_cast<int>(msb(odd)) + v.scale;
  v.exponent = leading > min_normal_exponent ? leading : min_normal_exponent;
  return v;
}

// Whether a positive StepValue is a value of `f` (used to pin that widening
// an operand to FP16 is exact).
bool RepresentableIn(const FormatSpec& f, const StepValue& v) {
  const int leading = static_cast<int>(msb(BigInt(v.magnitude))) + v.scale;
  const int lowest_unit = (leading > f.MinNormalExponent() ? leading : f.MinNormalExponent()) - f.mantissa_bits;
  const int max_exponent = f.MaxFiniteExponentField() - f.bias;
  return v.scale >= lowest_unit && leading <= max_exponent;
}

StepValue DecodeCode(const FormatSpec& code_format, int ignored_low_bits, const FormatSpec& datapath,
                     std::uint64_t code) {
  code &= ~((std::uint64_t{1} << ignored_low_bits) - 1);
  const StepValue v =
      StepValueOf(ExactValue(code_format, code), code_format.IsFloat(), datapath.MinNormalExponent());
  if (v.value_class == ExactClass::kFinite && code_format.IsFloat() && !RepresentableIn(datapath, v)) {
    throw std::logic_error("an operand is not exact in the datapath format");
  }
  return v;
}

Dyadic Aligned(const Dyadic& x, int q) {
  Dyadic r;
  r.m = x.m << (x.q - q);
  r.q = q;
  return r;
}

// -Inf < every finite value and zero < +Inf; zeros of both signs are equal.
int CompareResults(const StepResult& a, const StepResult& b) {
  auto rank = [](const StepResult& r) { return r.value_class == ExactClass::kInf ? (r.negative ? -1 : 1) : 0; };
  if (rank(a) != rank(b)) return rank(a) < rank(b) ? -1 : 1;
  if (rank(a) != 0) return 0;
  Dyadic zero;
  return CompareDyadic(a.value_class == ExactClass::kFinite ? a.value : zero,
                       b.value_class == ExactClass::kFinite ? b.value : zero);
}

std::string Describe(const Dyadic& x) {
  std::ostringstream os;
  const double approx = x.m == 0 ? 0.0 : std::ldexp(x.m.convert_to<double>(), x.q);
  os << x.m << "*2^" << x.q << " (~" << approx << ")";
  return os.str();
}

std::string Describe(const StepResult& r) {
  switch (r.value_class) {
    case ExactClass::kZero: return r.negative ? "-0" : "+0";
    case ExactClass::kInf: return r.negative ? "-Inf" : "+Inf";
    default: return Describe(r.value);
  }
}

StepResult ResultOf(const StepValue& v) {
  StepResult r;
  r.value_class = v.value_class;
  r.negative = v.negative;
  if (v.value_class == ExactClass::kFinite) {
    r.value.m = v.negative ? -BigInt(v.magnitude) : BigInt(v.magnitude);
    r.value.q = v.scale;
  }
  return r;
}

std::uint32_t InfinityCode(const FormatSpec& acc, bool negative) {
  const std::uint64_t inf = static_cast<std::uint64_t>(acc.MaxExponentField()) << acc.mantissa_bits;
  return static_cast<std::uint32_t>(inf | (negative ? acc.SignBit() : 0));
}

}  // namespace

Rational ToRational(const Dyadic& x) { return Rational(x.m) * PowerOfTwo(x.q); }

int CompareDyadic(const Dyadic& a, const Dyadic& b) {
  const int q = a.q < b.q ? a.q : b.q;
  const BigInt left = a.m << (a.q - q);
  const BigInt right = b.m << (b.q - q);
  return left < right ? -1 : (left == right ? 0 : 1);
}

StepResult RoundIntoAccumulator(const FormatSpec& acc, int kept_bits, FusedSumRounding rounding, const Dyadic& x) {
  StepResult r;
  if (x.m == 0) return r;  // a zero sum is +0
  r.negative = x.m < 0;
  const BigInt magnitude = r.negative ? BigInt(-x.m) : x.m;
  const int leading = static_cast<int>(msb(magnitude)) + x.q;
  const int min_normal = acc.MinNormalExponent();
  const int max_exponent = acc.MaxFiniteExponentField() - acc.bias;
  // The unit of the last kept place: p bits from the leading one, never
  // below the subnormal spacing of the (kept) format.
  const int unit = (leading > min_normal ? leading : min_normal) - (kept_bits - 1);
  BigInt kept;
  if (unit <= x.q) {
    kept = magnitude << (x.q - unit);
  } else {
    const int shift = unit - x.q;
    kept = magnitude >> shift;
    if (rounding == FusedSumRounding::kNearestEven) {
      const BigInt rest = magnitude - (kept << shift);
      const BigInt half = BigInt(1) << (shift - 1);
      if (rest > half || (rest == half && (kept & 1) != 0)) kept += 1;
    }
  }
  if (kept == 0) {
    r.value_class = ExactClass::kZero;  // a non-zero sum below the last place keeps its sign
    return r;
  }
  if (static_cast<int>(msb(kept)) + unit > max_exponent) {
    r.value_class = ExactClass::kInf;  // 2^(emax+1) or more after rounding
    return r;
  }
  r.value_class = ExactClass::kFinite;
  r.value.m = r.negative ? BigInt(-kept) : kept;
  r.value.q = unit;
  return r;
}

struct FusedStepOracle::Table {
  std::vector<StepValue> values;  // indexed by code
};

namespace {

std::shared_ptr<const FusedStepOracle::Table> TableFor(const FormatSpec& code_format, int ignored_low_bits,
                                                      const FormatSpec& datapath);

}  // namespace

FusedStepOracle::FusedStepOracle(const TensorCoreArithmetic& arithmetic, const TensorCoreOperand& a,
                                 const TensorCoreOperand& b)
    : arithmetic_(arithmetic), a_(a), b_(b) {
  if (arithmetic.products_per_step < 1 || arithmetic.kept_significand_bits < 1) {
    throw std::invalid_argument("a datapath needs products and kept bits");
  }
  if (a.code_format.total_bits <= 16) a_table_ = TableFor(a.code_format, a.ignored_low_bits, DatapathFormat(a));
  if (b.code_format.total_bits <= 16) b_table_ = TableFor(b.code_format, b.ignored_low_bits, DatapathFormat(b));
  if (arithmetic.accumulator.total_bits <= 16) {
    accumulator_table_ = TableFor(arithmetic.accumulator, 0, arithmetic.accumulator);
  }
}

StepValue FusedStepOracle::DecodeA(std::uint32_t code) const {
  code &= static_cast<std::uint32_t>(a_.code_format.CodeMask());
  return a_table_ ? a_table_->values[code] : DecodeCode(a_.code_format, a_.ignored_low_bits, DatapathFormat(a_), code);
}

StepValue FusedStepOracle::DecodeB(std::uint32_t code) const {
  code &= static_cast<std::uint32_t>(b_.code_format.CodeMask());
  return b_table_ ? b_table_->values[code] : DecodeCode(b_.code_format, b_.ignored_low_bits, DatapathFormat(b_), code);
}

StepValue FusedStepOracle::DecodeAccumulator(std::uint32_t code) const {
  const FormatSpec& acc = arithmetic_.accumulator;
  code &= static_cast<std::uint32_t>(acc.CodeMask());
  return accumulator_table_ ? accumulator_table_->values[code] : DecodeCode(acc, 0, acc, code);
}

FusedStepBound FusedStepOracle::Bound(const std::uint32_t* a, const std::uint32_t* b, int count,
                                      std::uint32_t c) const {
  FusedStepBound bound;
  const FormatSpec& acc = arithmetic_.accumulator;
  if (arithmetic_.rounding == FusedSumRounding::kWrapInteger) {
    // The exact integer sum, reduced modulo 2^32 into [0, 2^32).
    auto signed_value = [](const StepValue& v) { return v.negative ? -BigInt(v.magnitude) : BigInt(v.magnitude); };
    BigInt sum = signed_value(DecodeAccumulator(c));
    for (int i = 0; i < count; ++i) sum += signed_value(DecodeA(a[i])) * signed_value(DecodeB(b[i]));
    const BigInt modulus = BigInt(1) << 32;
    BigInt reduced = sum % modulus;
    if (reduced < 0) reduced += modulus;
    bound.outcome = FusedStepBound::Outcome::kInteger;
    bound.code = reduced.convert_to<std::uint32_t>();
    return bound;
  }

  // Step 7's specials, decided before any arithmetic.
  const StepValue cv = DecodeAccumulator(c);
  bool nan = cv.value_class == ExactClass::kNan;
  bool positive_inf = cv.value_class == ExactClass::kInf && !cv.negative;
  bool negative_inf = cv.value_class == ExactClass::kInf && cv.negative;
  struct Term {
    bool negative;
    std::int64_t magnitude;  // 0: a zero term
    int scale;
    int exponent;
  };
  std::vector<Term> terms;
  terms.reserve(static_cast<std::size_t>(count) + 1);
  for (int i = 0; i < count; ++i) {
    const StepValue x = DecodeA(a[i]);
    const StepValue y = DecodeB(b[i]);
    if (x.value_class == ExactClass::kNan || y.value_class == ExactClass::kNan) {
      nan = true;
      continue;
    }
    const bool inf = x.value_class == ExactClass::kInf || y.value_class == ExactClass::kInf;
    const bool zero = x.value_class == ExactClass::kZero || y.value_class == ExactClass::kZero;
    if (inf) {
      if (zero) {
        nan = true;  // 0 * Inf
      } else {
        (x.negative != y.negative ? negative_inf : positive_inf) = true;
      }
      continue;
    }
    if (zero) {
      terms.push_back({false, 0, 0, arithmetic_.zero_term_exponent});
    } else {
      terms.push_back({x.negative != y.negative, x.magnitude * y.magnitude, x.scale + y.scale,
                       x.exponent + y.exponent});
    }
  }
  if (nan || (positive_inf && negative_inf)) {
    bound.outcome = FusedStepBound::Outcome::kSpecial;
    bound.code = arithmetic_.nan_code;
    return bound;
  }
  if (positive_inf || negative_inf) {
    bound.outcome = FusedStepBound::Outcome::kSpecial;
    bound.code = InfinityCode(acc, negative_inf);
    return bound;
  }
  if (cv.value_class == ExactClass::kZero) {
    terms.push_back({false, 0, 0, arithmetic_.zero_term_exponent});
  } else {
    terms.push_back({cv.negative, cv.magnitude, cv.scale, cv.exponent});
  }

  // Steps 2-3: e_max over every term, zero terms at zero_term_exponent.
  int e_max = terms.front().exponent;
  for (const Term& t : terms) e_max = t.exponent > e_max ? t.exponent : e_max;
  const int unit = e_max - arithmetic_.aligned_fraction_bits;
  // The exact sum S on the grid of the finest term (or u), and the terms that
  // are not multiples of u = 2^unit (a term's magnitude is odd, so it is a
  // multiple of 2^unit exactly when its scale is unit or more).
  int finest = unit;
  for (const Term& t : terms) {
    if (t.magnitude != 0 && t.scale < finest) finest = t.scale;
  }
  // A term below u in magnitude truncates to exactly 0 (floor(|t| / u) = 0):
  // it leaves the sum and the interval alone.
  BigInt sum = 0, vanished = 0;
  for (const Term& t : terms) {
    if (t.magnitude == 0) continue;
    const BigInt aligned = BigInt(t.magnitude) << (t.scale - finest);
    const BigInt signed_term = t.negative ? BigInt(-aligned) : aligned;
    sum += signed_term;
    if (t.scale >= unit) continue;
    if (static_cast<int>(msb(BigInt(t.magnitude))) + t.scale < unit) {
      vanished += signed_term;
      ++bound.vanished_terms;
    } else {
      ++(t.negative ? bound.inexact_negative : bound.inexact_positive);
    }
  }
  const BigInt one_unit = BigInt(1) << (unit - finest);
  bound.outcome = FusedStepBound::Outcome::kFinite;
  bound.max_exponent = e_max;
  bound.unit_exponent = unit;
  bound.exact_sum = Dyadic{sum, finest};
  const BigInt kept = sum - vanished;
  const Dyadic low{kept - one_unit * bound.inexact_positive, finest};
  const Dyadic high{kept + one_unit * bound.inexact_negative, finest};
  // Step 7: every zero result of the step is +0, also a negative sum that
  // rounds to zero.
  auto step_result = [&](const Dyadic& x) {
    StepResult r = RoundIntoAccumulator(acc, arithmetic_.kept_significand_bits, arithmetic_.rounding, x);
    if (r.value_class == ExactClass::kZero) r.negative = false;
    return r;
  };
  bound.aligned_lowest = low;
  bound.aligned_highest = high;
  bound.lowest = step_result(low);
  bound.highest = step_result(high);
  bound.overflow = bound.lowest.value_class == ExactClass::kInf || bound.highest.value_class == ExactClass::kInf;
  if (bound.exact_terms()) {
    const StepResult r = bound.lowest;  // == highest
    bound.exact_result = sum == 0 ? r.value_class == ExactClass::kZero && !r.negative
                                  : r.value_class == ExactClass::kFinite && CompareDyadic(r.value, bound.exact_sum) == 0;
  }
  return bound;
}

std::string FusedStepOracle::Check(const FusedStepBound& bound, std::uint32_t d) const {
  std::ostringstream why;
  if (bound.outcome != FusedStepBound::Outcome::kFinite) {
    if (d == bound.code) return "";
    why << std::hex << "D = 0x" << d << " but the spec gives 0x" << bound.code
        << (bound.outcome == FusedStepBound::Outcome::kInteger ? " (the exact integer sum modulo 2^32)"
                                                               : " (NaN/Inf rule of step 7)");
    return why.str();
  }
  const StepValue dv = DecodeAccumulator(d);
  const StepResult dr = ResultOf(dv);
  std::string problem;
  if (dv.value_class == ExactClass::kNan) {
    problem = "D is a NaN where every term is finite";
  } else if (CompareResults(dr, bound.lowest) < 0) {
    problem = "D is below R(S - P u)";
  } else if (CompareResults(dr, bound.highest) > 0) {
    problem = "D is above R(S + N u)";
  } else if (dv.value_class == ExactClass::kZero && dv.negative) {
    // Step 7 of the spec (formats/spec/include/lowbit/formats/tensor_core.h):
    // a zero result is +0, also when a negative sum rounds to zero.
    problem = "D is -0 but a zero result is +0";
  } else if (dv.value_class == ExactClass::kFinite) {
    const StepResult again =
        RoundIntoAccumulator(arithmetic_.accumulator, arithmetic_.kept_significand_bits, arithmetic_.rounding, dr.value);
    if (again.value_class != ExactClass::kFinite || CompareDyadic(again.value, dr.value) != 0) {
      problem = "D has more significant bits than step 6 keeps";
    }
  }
  if (problem.empty()) return "";
  why << problem << ": D = 0x" << std::hex << d << std::dec << " = " << Describe(dr) << "; S = "
      << Describe(bound.exact_sum) << ", e_max = " << bound.max_exponent << ", u = 2^" << bound.unit_exponent
      << ", partly truncated terms P = " << bound.inexact_positive << " positive, N = " << bound.inexact_negative
      << " negative, " << bound.vanished_terms << " below u; allowed [" << Describe(bound.lowest) << ", " << Describe(bound.highest) << "]";
  return why.str();
}

std::uint32_t FusedStepOracle::CodeOf(const StepResult& r) const {
  const FormatSpec& acc = arithmetic_.accumulator;
  const std::uint64_t sign = r.negative ? acc.SignBit() : 0;
  if (r.value_class == ExactClass::kZero) return static_cast<std::uint32_t>(sign);
  if (r.value_class == ExactClass::kInf) return InfinityCode(acc, r.negative);
  // Odd significand first: a rounding that carried into a new binade leaves
  // trailing zeros.
  BigInt magnitude = r.value.m < 0 ? BigInt(-r.value.m) : r.value.m;
  const int zeros = static_cast<int>(lsb(magnitude));
  magnitude >>= zeros;
  const int q = r.value.q + zeros;
  const int leading = static_cast<int>(msb(magnitude)) + q;
  const bool subnormal = leading < acc.MinNormalExponent();
  const int field = subnormal ? 0 : leading + acc.bias;
  const int unit = (subnormal ? acc.MinNormalExponent() : leading) - acc.mantissa_bits;
  if (q < unit) throw std::logic_error("CodeOf: the value is not one of the format's");
  BigInt significand = magnitude << (q - unit);
  if (!subnormal) significand -= BigInt(1) << acc.mantissa_bits;
  const std::uint64_t code = (static_cast<std::uint64_t>(field) << acc.mantissa_bits) |
                             significand.convert_to<std::uint64_t>();
  return static_cast<std::uint32_t>(sign | code);
}

std::uint32_t FusedStepOracle::AddNearest(std::uint32_t x, std::uint32_t y) const {
  const FormatSpec& acc = arithmetic_.accumulator;
  const StepValue a = DecodeAccumulator(x);
  const StepValue b = DecodeAccumulator(y);
  if (a.value_class == ExactClass::kNan || b.value_class == ExactClass::kNan) return arithmetic_.nan_code;
  const bool inf_a = a.value_class == ExactClass::kInf;
  const bool inf_b = b.value_class == ExactClass::kInf;
  if (inf_a && inf_b && a.negative != b.negative) return arithmetic_.nan_code;
  if (inf_a || inf_b) return InfinityCode(acc, inf_a ? a.negative : b.negative);
  // IEEE 754 §6.3: an exact zero sum is +0 in round to nearest, except
  // (-0) + (-0).
  if (a.value_class == ExactClass::kZero && b.value_class == ExactClass::kZero) {
    return (a.negative && b.negative) ? static_cast<std::uint32_t>(acc.SignBit()) : 0u;
  }
  Dyadic sum;
  const StepResult ra = ResultOf(a), rb = ResultOf(b);
  if (a.value_class == ExactClass::kZero) {
    sum = rb.value;
  } else if (b.value_class == ExactClass::kZero) {
    sum = ra.value;
  } else {
    const int q = ra.value.q < rb.value.q ? ra.value.q : rb.value.q;
    sum = Dyadic{Aligned(ra.value, q).m + Aligned(rb.value, q).m, q};
  }
  return CodeOf(RoundIntoAccumulator(acc, acc.mantissa_bits + 1, FusedSumRounding::kNearestEven, sum));
}

namespace {

std::shared_ptr<const FusedStepOracle::Table> TableFor(const FormatSpec& code_format, int ignored_low_bits,
                                                      const FormatSpec& datapath) {
  using Key = std::tuple<int, int, int, int, int, int, int, int, int, int>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const FusedStepOracle::Table>> cache;
  const Key key{static_cast<int>(code_format.kind), code_format.total_bits, code_format.has_sign,
                code_format.exponent_bits, code_format.mantissa_bits, code_format.bias,
                static_cast<int>(code_format.specials), ignored_low_bits, datapath.MinNormalExponent(),
                datapath.mantissa_bits};
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const FusedStepOracle::Table>& slot = cache[key];
  if (slot) return slot;
  auto table = std::make_shared<FusedStepOracle::Table>();
  const std::uint64_t codes = std::uint64_t{1} << code_format.total_bits;
  table->values.reserve(codes);
  for (std::uint64_t code = 0; code < codes; ++code) {
    table->values.push_back(DecodeCode(code_format, ignored_low_bits, datapath, code));
  }
  slot = table;
  return slot;
}

}  // namespace

}  // namespace lowbit::reference
