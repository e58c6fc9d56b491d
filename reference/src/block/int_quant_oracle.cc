// Scaled quantization per docs/formats-reference.md §7 and §8.2, one FP32 rounding per
// operation the source performs, in the source's order; integer rounding and
// clamping on exact rationals, literally round -> + zero point -> clamp.
#include "lowbit/reference/block/int_quant_oracle.h"

#include <cstdint>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/reference/block/fp32_arith.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"

namespace lowbit::reference::block {
namespace {

using lowbit::block::Granularity;
using lowbit::block::IntQuantRecipe;
using lowbit::block::QuantLayout;
using lowbit::block::QuantScheme;
using lowbit::block::QuantStatus;

F32 Constant(const Rational& value) { return ExactFromRational(value); }
F32 Nan() { return F32FromBits(0x7FC00000u); }
bool IsInf(const F32& x) { return x.value_class == ExactClass::kInf; }
bool IsZero(const F32& x) { return x.value_class == ExactClass::kZero; }
F32 Negate(F32 x) {
  if (!F32IsNan(x)) x.negative = !x.negative;
  return x;
}
F32 Abs(F32 x) {
  x.negative = false;
  return x;
}

// IEEE 754 §6.1 / §6.3 addition: Inf - Inf is NaN; an exact zero sum is +0.
F32 F32Add(const F32& a, const F32& b) {
  if (F32IsNan(a) || F32IsNan(b)) return Nan();
  if (IsInf(a) && IsInf(b)) return a.negative == b.negative ? a : Nan();
  if (IsInf(a)) return a;
  if (IsInf(b)) return b;
  if (IsZero(a) && IsZero(b)) {
    F32 z;
    z.negative = a.negative && b.negative;
    return z;
  }
  return RoundToF32(ExactFromRational(a.Signed() + b.Signed()));
}
F32 F32Sub(const F32& a, const F32& b) { return F32Add(a, Negate(b)); }

// torch.minimum / torch.maximum / amin / amax: a NaN wins.
F32 TorchMin(const F32& a, const F32& b) {
  if (F32IsNan(a)) return a;
  if (F32IsNan(b)) return b;
  return F32Less(b, a) ? b : a;
}
F32 TorchMax(const F32& a, const F32& b) {
  if (F32IsNan(a)) return a;
  if (F32IsNan(b)) return b;
  return F32Less(a, b) ? b : a;
}

// An integer result that may be infinite or NaN (what torch.round returns).
struct Integer {
  ExactClass value_class = ExactClass::kFinite;  // kFinite, kInf or kNan
  bool negative = false;
  BigInt value;  // kFinite
};

// round(v) to an integer: docs/formats-reference.md §8.1, torch.round half-even, C roundf
// half-away from zero.
Integer RoundToInteger(const F32& v, RoundingMode mode) {
  Integer out;
  if (F32IsNan(v)) {
    out.value_class = ExactClass::kNan;
    return out;
  }
  if (IsInf(v)) {
    out.value_class = ExactClass::kInf;
    out.negative = v.negative;
    return out;
  }
  const Rational m = v.magnitude;  // 0 for a zero
  BigInt t = boost::multiprecision::numerator(m) / boost::multiprecision::denominator(m);  // floor of |v|
  const Rational frac = m - Rational(t);
  const Rational half(1, 2);
  if (frac > half || (frac == half && (mode == RoundingMode::kNearestAway || (t & 1) != 0))) t += 1;
  out.value = v.negative ? BigInt(-t) : t;
  return out;
}

// clamp(q + zero_point, lo, hi) in the integers; NaN -> 0 (torch's CPU cast
// of a NaN, docs/formats-reference.md §8.1).
std::int32_t AddZeroAndClamp(const Integer& q, std::int64_t zero_point, std::int64_t lo, std::int64_t hi) {
  if (q.value_class == ExactClass::kNan) return 0;
  if (q.value_class == ExactClass::kInf) return static_cast<std::int32_t>(q.negative ? lo : hi);
  const BigInt v = q.value + zero_point;
  if (v < lo) return static_cast<std::int32_t>(lo);
  if (v > hi) return static_cast<std::int32_t>(hi);
  return static_cast<std::int32_t>(v);
}

F32 ValueOf(float x) { return F32FromFloat(x); }

struct Stats {
  F32 min, max, amax;
};

Stats StatsOf(const IntQuantRecipe& r, const std::vector<F32>& group) {
  Stats s{group[0], group[0], Constant(0)};
  const bool ignore_nan = r.amax_nan == lowbit::block::AmaxNan::kIgnore;
  for (const F32& v : group) {
    s.min = TorchMin(s.min, v);
    s.max = TorchMax(s.max, v);
    const F32 a = Abs(v);
    if (F32IsNan(a)) {
      if (!ignore_nan && !F32IsNan(s.amax)) s.amax = a;
      continue;
    }
    if (!F32IsNan(s.amax) && F32Less(s.amax, a)) s.amax = a;
  }
  return s;
}

// TE compute_scale_from_amax, step by step (docs/formats-reference.md §7).
F32 TeScale(const IntQuantRecipe& r, F32 amax) {
  const F32 eps = ValueOf(r.eps);
  if (!F32IsNan(amax) && F32Less(amax, eps)) amax = eps;
  if (F32IsNan(amax) || IsInf(amax) || IsZero(amax)) return Constant(1);
  const Rational max_fp8 = r.element->exponent_bits == 5 ? Rational(57344) : Rational(448);
  F32 scale = F32Div(Constant(max_fp8), amax);
  if (IsInf(scale)) scale = F32FromBits(0x7F7FFFFFu);  // value_for_inf = FLT_MAX
  if (r.pow2_scale) {
    // Keeping sign and exponent bits rounds a normal positive value down to
    // a power of two; a subnormal (never reached: 448 / FLT_MAX is normal)
    // would become 0.
    if (scale.magnitude < PowerOfTwo(-126)) return Constant(0);
    int k = 0;
    while (PowerOfTwo(k) > scale.magnitude) --k;
    while (PowerOfTwo(k + 1) <= scale.magnitude) ++k;
    scale = Constant(PowerOfTwo(k));
  }
  return scale;
}

// tensor / Python float: an FP32 division on CPU; on CUDA a multiply by the
// FP32 reciprocal of the scalar (ATen div_true_kernel_cuda).
F32 DivideByScalar(const IntQuantRecipe& r, const F32& a, const Rational& d) {
  if (!r.scalar_divisor_as_reciprocal) return F32Div(a, Constant(d));
  return F32Mul(a, RoundToF32(Constant(Rational(1) / d)));
}

struct Params {
  F32 encode, decode;
  std::int32_t zero_point = 0;
};

Params ParamsFromStats(const IntQuantRecipe& r, const Stats& s) {
  Params p{Constant(1), Constant(1), 0};
  const F32 zero = Constant(0);
  const F32 eps = ValueOf(r.eps);
  auto floor_at_eps = [&](const F32& scale) {  // torch.clamp(min=eps): NaN passes
    return !F32IsNan(scale) && F32Less(scale, eps) ? eps : scale;
  };
  switch (r.scheme) {
    case QuantScheme::kTeFp8:
      p.encode = TeScale(r, s.amax);
      p.decode = F32Div(Constant(1), p.encode);
      return p;
    case QuantScheme::kAoSymmetric: {
      const F32 min_neg = TorchMin(s.min, zero);
      const F32 max_pos = TorchMax(Negate(min_neg), TorchMax(s.max, zero));
      const F32 scale = floor_at_eps(DivideByScalar(r, max_pos, Rational(r.qmax - r.qmin, 2)));
      p.decode = scale;
      p.encode = F32Div(Constant(1), scale);
      // int((quant_max + quant_min + 1) / 2), Python true division then int().
      const Rational mid(r.qmax + r.qmin + 1, 2);
      p.zero_point = static_cast<std::int32_t>(boost::multiprecision::numerator(mid) /
                                               boost::multiprecision::denominator(mid));
      return p;
    }
    case QuantScheme::kAoAsymmetric: {
      const F32 min_neg = TorchMin(s.min, zero);
      const F32 max_pos = TorchMax(s.max, zero);
      const F32 scale = floor_at_eps(DivideByScalar(r, F32Sub(max_pos, min_neg), Rational(r.qmax - r.qmin)));
      p.decode = scale;
      p.encode = F32Div(Constant(1), scale);
      // quant_min - torch.round(min_val_neg / scale), clamp(quant_min, quant_max).
      const Integer rounded = RoundToInteger(F32Div(min_neg, scale), RoundingMode::kNearestEven);
      if (rounded.value_class == ExactClass::kNan) {
        p.zero_point = 0;  // NaN survives clamp; the integer cast gives 0
      } else if (rounded.value_class == ExactClass::kInf) {
        p.zero_point = rounded.negative ? r.qmax : r.qmin;  // qmin - (-+Inf), clamped
      } else {
        const BigInt zp = BigInt(r.qmin) - rounded.value;
        p.zero_point = static_cast<std::int32_t>(zp < r.qmin ? BigInt(r.qmin) : (zp > r.qmax ? BigInt(r.qmax) : zp));
      }
      return p;
    }
    case QuantScheme::kGptqSymmetric:
    case QuantScheme::kGptqAsymmetric: {
      F32 xmin = TorchMin(s.min, zero);
      F32 xmax = TorchMax(s.max, zero);
      if (r.scheme == QuantScheme::kGptqSymmetric) {
        xmax = TorchMax(Abs(xmin), xmax);
        if (!F32IsNan(xmin) && F32Less(xmin, zero)) xmin = Negate(xmax);
      }
      if (IsZero(xmin) && IsZero(xmax)) {
        xmin = Constant(-1);
        xmax = Constant(1);
      }
      const F32 scale = F32Div(F32Sub(xmax, xmin), Constant(r.qmax));
      p.encode = scale;
      p.decode = scale;
      if (r.scheme == QuantScheme::kGptqSymmetric) {
        p.zero_point = (r.qmax + 1) / 2;
      } else {
        const Integer z = RoundToInteger(F32Div(Negate(xmin), scale), RoundingMode::kNearestEven);
        // An infinite or NaN zero casts to 0 (torch CPU, docs/formats-reference.md §8.1).
        p.zero_point = z.value_class == ExactClass::kFinite ? static_cast<std::int32_t>(z.value) : 0;
      }
      return p;
    }
    case QuantScheme::kAmaxOverQmax: {
      F32 scale = F32Div(s.amax, Constant(r.qmax));
      if (IsZero(scale)) scale = Constant(1);
      p.encode = scale;
      p.decode = scale;
      return p;
    }
  }
  return p;
}

std::uint8_t QuantizeValue(const IntQuantRecipe& r, const Params& p, const F32& x) {
  if (r.scheme == QuantScheme::kTeFp8) {
    // static_cast<fp8>(x * scale): cvt.rn.satfinite, NaN -> +0x7F.
    EncodeOptions o;
    o.overflow = Overflow::kSaturate;
    o.nan_sign = NanSign::kPositive;
    o.nan_payload = NanPayload::kAllOnes;
    return static_cast<std::uint8_t>(OracleEncode(*r.element, F32Mul(x, p.encode), o).code);
  }
  const bool multiply = r.scheme == QuantScheme::kAoSymmetric || r.scheme == QuantScheme::kAoAsymmetric;
  const F32 y = multiply ? F32Mul(x, p.encode) : F32Div(x, p.encode);
  const std::int32_t q = AddZeroAndClamp(RoundToInteger(y, r.rounding), p.zero_point, r.qmin, r.qmax);
  const std::uint32_t mask = (1u << r.element->total_bits) - 1;
  return static_cast<std::uint8_t>(static_cast<std::uint32_t>(q) & mask);
}

// The integer a stored code means: two's complement for signed elements.
std::int64_t CodeInteger(const FormatSpec& element, std::uint8_t code) {
  const std::int64_t v = code & ((1 << element.total_bits) - 1);
  return element.has_sign && v >= (1 << (element.total_bits - 1)) ? v - (1 << element.total_bits) : v;
}

F32 DequantizeValue(const IntQuantRecipe& r, const Params& p, std::uint8_t code) {
  if (r.scheme == QuantScheme::kTeFp8) return F32Mul(ExactValue(*r.element, code), p.decode);
  // (q - zero_point) as an integer, exactly representable, times the scale.
  return F32Mul(Constant(Rational(CodeInteger(*r.element, code) - p.zero_point)), p.decode);
}

// Group shape and checks, restated from the layout's description.
struct Grid {
  QuantStatus status = QuantStatus::kOk;
  long group_rows = 0, group_cols = 0;
  long Index(long r, long c, long cols) const { return (r / group_rows) * (cols / group_cols) + c / group_cols; }
  long Count(long rows, long cols) const { return (rows / group_rows) * (cols / group_cols); }
};

Grid GridOf(const QuantLayout& layout, long rows, long cols) {
  Grid g;
  if (rows < 1 || cols < 1) {
    g.status = QuantStatus::kEmpty;
    return g;
  }
  switch (layout.granularity) {
    case Granularity::kPerTensor: g.group_rows = rows; g.group_cols = cols; return g;
    case Granularity::kPerRow: g.group_rows = 1; g.group_cols = cols; return g;
    case Granularity::kPerGroup:
    case Granularity::kBlock2d: break;
  }
  const bool two_d = layout.granularity == Granularity::kBlock2d;
  if (layout.group < 1 || (two_d && layout.block_rows < 1)) {
    g.status = QuantStatus::kBadGroup;
  } else if (cols % layout.group != 0) {
    g.status = QuantStatus::kColsNotMultipleOfGroup;
  } else if (two_d && rows % layout.block_rows != 0) {
    g.status = QuantStatus::kRowsNotMultipleOfBlock;
  }
  g.group_cols = layout.group;
  g.group_rows = two_d ? layout.block_rows : 1;
  return g;
}

OracleQuantParams ToBits(const Params& p) { return {F32ToBits(p.encode), F32ToBits(p.decode), p.zero_point}; }
Params FromBits(const OracleQuantParams& p) {
  return {F32FromBits(p.encode_bits), F32FromBits(p.decode_bits), p.zero_point};
}

}  // namespace

OracleQuantParams OracleQuantParamsFromRange(const IntQuantRecipe& recipe, float lo, float hi) {
  const F32 a = Abs(ValueOf(lo));
  const F32 b = Abs(ValueOf(hi));
  const Stats s{ValueOf(lo), ValueOf(hi), TorchMax(a, b)};
  return ToBits(ParamsFromStats(recipe, s));
}

OracleQuantResult OracleQuantizeWithParams(const IntQuantRecipe& recipe, const QuantLayout& layout,
                                           const std::vector<float>& x, long rows, long cols,
                                           const std::vector<OracleQuantParams>& params) {
  OracleQuantResult out;
  const Grid grid = GridOf(layout, rows, cols);
  out.status = grid.status;
  if (grid.status != QuantStatus::kOk) return out;
  out.params = params;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      const Params p = FromBits(params[static_cast<std::size_t>(grid.Index(i, j, cols))]);
      out.codes.push_back(QuantizeValue(recipe, p, ValueOf(x[static_cast<std::size_t>(i * cols + j)])));
    }
  }
  return out;
}

OracleQuantResult OracleQuantizeMatrix(const IntQuantRecipe& recipe, const QuantLayout& layout,
                                       const std::vector<float>& x, long rows, long cols) {
  const Grid grid = GridOf(layout, rows, cols);
  if (grid.status != QuantStatus::kOk) {
    OracleQuantResult out;
    out.status = grid.status;
    return out;
  }
  std::vector<std::vector<F32>> groups(static_cast<std::size_t>(grid.Count(rows, cols)));
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      groups[static_cast<std::size_t>(grid.Index(i, j, cols))].push_back(
          ValueOf(x[static_cast<std::size_t>(i * cols + j)]));
    }
  }
  std::vector<OracleQuantParams> params;
  for (const std::vector<F32>& g : groups) params.push_back(ToBits(ParamsFromStats(recipe, StatsOf(recipe, g))));
  return OracleQuantizeWithParams(recipe, layout, x, rows, cols, params);
}

std::vector<std::uint32_t> OracleDequantizeMatrix(const IntQuantRecipe& recipe, const QuantLayout& layout,
                                                  const std::vector<std::uint8_t>& codes, long rows, long cols,
                                                  const std::vector<OracleQuantParams>& params) {
  std::vector<std::uint32_t> out;
  const Grid grid = GridOf(layout, rows, cols);
  if (grid.status != QuantStatus::kOk) return out;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      const Params p = FromBits(params[static_cast<std::size_t>(grid.Index(i, j, cols))]);
      out.push_back(F32ToBits(DequantizeValue(recipe, p, codes[static_cast<std::size_t>(i * cols + j)])));
    }
  }
  return out;
}

}  // namespace lowbit::reference::block
