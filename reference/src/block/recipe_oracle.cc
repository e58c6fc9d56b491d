// Whole tensors through a recipe, as the recipe's data describe them
// (lowbit/formats/recipe/recipe.h): where the groups are (geometry), their
// statistics, the tensor and group scales (mx_oracle.cc, nvfp4_oracle.cc,
// scaled_oracle.cc), the element step, the element codes and how they are
// stored, and dequantization in the recipe's order.
#include "lowbit/reference/block/recipe_oracle.h"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lowbit/reference/oracle_encode.h"
#include "recipe_oracle_internal.h"

namespace lowbit::reference::block {
namespace internal {

Rational LargestFinite(const FormatSpec& format) {
  Rational best = 0;
  for (std::uint64_t code = 0; code <= format.CodeMask(); ++code) {
    const Exact v = ExactValue(format, code);
    if (v.value_class == ExactClass::kFinite && v.magnitude > best) best = v.magnitude;
  }
  return best;
}

Rational ElementMax(const recipe::Recipe& r) {
  if (r.element.IsFloat()) return LargestFinite(r.element);
  return Rational(r.qmax) * PowerOfTwo(r.element_implied_exponent);
}

F32 Bits(std::uint32_t bits) { return F32FromBits(bits); }
// binary32's largest finite value, (2 - 2^-23) * 2^127 (IEEE 754 §3.6).
F32 FltMax() { return F32FromBits(0x7F7FFFFFu); }

}  // namespace internal

namespace {

using internal::Bits;
using internal::GroupStats;
using recipe::Family;
using recipe::Geometry;
using recipe::Layout;
using recipe::Packing;
using recipe::Recipe;

std::string NameOf(const Recipe& r) { return std::string(r.name) + ":" + r.profile; }

// ---- geometry -------------------------------------------------------------------

// The groups of a layout over [rows, cols] (recipe.h Geometry): one group
// for the tensor; one per row; `size` consecutive elements of the flattened
// tensor, the last block possibly short; `size` consecutive elements along
// a row; tile_rows x size tiles. Groups are numbered row-major.
struct Grid {
  OracleStatus status = OracleStatus::kOk;
  bool flat = false;  // 1-D blocks of the flattened tensor
  long rows = 0, cols = 0;
  long group_rows = 0, group_cols = 0;  // flat: 1 x block size
  long grid_cols = 0;                   // groups along a row of groups
  long count = 0;

  long GroupOf(long i, long j) const {
    if (flat) return (i * cols + j) / group_cols;
    return (i / group_rows) * grid_cols + j / group_cols;
  }
};

// MX and NVFP4 scale blocks of the recipe's size (over the flattened tensor,
// or the same size along each row); scaled recipes any grid but a flattened
// block. Checked in the order recipe::TensorStatus lists its conditions.
Grid GridOf(const Recipe& r, const Layout& layout, long rows, long cols) {
  Grid g;
  g.rows = rows;
  g.cols = cols;
  if (rows < 1 || cols < 1) {
    g.status = OracleStatus::kEmpty;
    return g;
  }
  const bool applies = r.family() == Family::kScaled
                           ? layout.geometry != Geometry::kBlock1d
                           : (layout.geometry == Geometry::kBlock1d || layout.geometry == Geometry::kGroup) &&
                                 layout.size == r.layout.size;
  if (!applies) {
    g.status = OracleStatus::kLayoutNotForRecipe;
    return g;
  }
  if (BigInt(rows) * cols > BigInt(LONG_MAX)) {
    g.status = OracleStatus::kSizeOverflow;
    return g;
  }
  switch (layout.geometry) {
    case Geometry::kPerTensor:
      g.group_rows = rows;
      g.group_cols = cols;
      break;
    case Geometry::kPerRow:
      g.group_rows = 1;
      g.group_cols = cols;
      break;
    case Geometry::kBlock1d:
      if (layout.size < 1) {
        g.status = OracleStatus::kBadGroup;
        return g;
      }
      g.flat = true;
      g.group_rows = 1;
      g.group_cols = layout.size;
      g.count = (rows * cols + layout.size - 1) / layout.size;
      g.grid_cols = g.count;
      return g;
    case Geometry::kGroup:
    case Geometry::kTile2d:
      if (layout.size < 1) {
        g.status = OracleStatus::kBadGroup;
        return g;
      }
      if (cols % layout.size != 0) {
        g.status = OracleStatus::kColsNotMultipleOfGroup;
        return g;
      }
      g.group_cols = layout.size;
      g.group_rows = 1;
      if (layout.geometry == Geometry::kTile2d) {
        if (layout.tile_rows < 1) {
          g.status = OracleStatus::kBadGroup;
          return g;
        }
        if (rows % layout.tile_rows != 0) {
          g.status = OracleStatus::kRowsNotMultipleOfTile;
          return g;
        }
        g.group_rows = layout.tile_rows;
      }
      break;
  }
  g.grid_cols = cols / g.group_cols;
  g.count = (rows / g.group_rows) * g.grid_cols;
  return g;
}

void CheckSize(const Recipe& r, const std::vector<float>& x, long rows, long cols) {
  if (rows >= 1 && cols >= 1 && BigInt(rows) * cols != BigInt(x.size())) {
    throw std::invalid_argument("oracle " + NameOf(r) + ": " + std::to_string(x.size()) + " values for a " +
                                std::to_string(rows) + "x" + std::to_string(cols) + " tensor");
  }
}

// ---- statistics ---------------------------------------------------------------------

F32 AmaxStep(const Recipe& r, const F32& amax, const F32& x) {
  // torch.amax lets a NaN win; CUDA fmaxf skips it (Recipe::amax_nan).
  return r.amax_nan == AmaxNan::kIgnore ? F32Max(amax, F32Abs(x)) : TorchMax(amax, F32Abs(x));
}

GroupStats StatsOf(const Recipe& r, const std::vector<F32>& values) {
  GroupStats s{values.at(0), values.at(0), F32Constant(0)};
  for (const F32& v : values) {
    s.min = TorchMin(s.min, v);
    s.max = TorchMax(s.max, v);
    s.amax = AmaxStep(r, s.amax, v);
  }
  return s;
}

OracleScale ScaleOf(const Recipe& r, const GroupStats& s, const OracleTensorScale& t) {
  OracleScale out;
  switch (r.family()) {
    case Family::kMx: out = internal::MxScale(r, s.amax); break;
    case Family::kNvfp4: out = internal::Nvfp4Scale(r, t, s.amax); break;
    case Family::kScaled: out = internal::ScaledScale(r, s); break;
  }
  if (r.zero_point == recipe::ZeroPoint::kNone && out.zero_point != 0) {
    throw std::logic_error("recipe " + NameOf(r) + " stores no zero point, but its scale rule gives " +
                           std::to_string(out.zero_point));
  }
  return out;
}

// The scale dequantization reads from what is stored: a scale byte (MX,
// NVFP4) or the FP32 scale and zero point (scaled recipes).
OracleScale StoredScale(const Recipe& r, const OracleScale& stored) {
  if (r.family() == Family::kScaled) return stored;
  if (r.family() == Family::kMx) return internal::MxStoredScale(r, stored.code);
  OracleScale s = stored;
  s.decode_bits = F32ToBits(ExactValue(r.scale_format, stored.code));
  return s;
}

// ---- one element ----------------------------------------------------------------------

// The low total_bits of a two's complement integer.
std::uint8_t IntegerCode(const FormatSpec& element, const BigInt& value) {
  const BigInt modulus = BigInt(1) << element.total_bits;
  BigInt low = value % modulus;
  if (low < 0) low += modulus;
  return static_cast<std::uint8_t>(low);
}

BigInt Clamp(const BigInt& v, long lo, long hi) { return v < lo ? BigInt(lo) : (v > hi ? BigInt(hi) : v); }

// AutoAWQ's element on its FP16 layer (ScaleRule::kAwqAsymmetric), each
// operation rounded to FP16 (internal::HalfOf, HalfDiv, ...):
// pseudo_quantize_tensor's q0 = clamp(round(fp16(x) / s) + z, 0, 15) (a
// NaN quotient gives 0, an infinite one clamps) and W = (q0 - z) * s;
// WQLinear_GEMM.from_linear's round((W + z * s) / s), whose NaN or infinite
// quotient casts to 0 in the low bits.
std::uint8_t AwqElement(const Recipe& r, const OracleScale& s, const F32& x) {
  const F32 scale = Bits(s.factor_bits);
  const internal::Integer q =
      internal::RoundToInteger(internal::HalfDiv(internal::HalfOf(x), scale), RoundingMode::kNearestEven);
  BigInt q0 = 0;
  if (q.value_class == ExactClass::kInf) q0 = q.negative ? r.qmin : r.qmax;
  if (q.value_class == ExactClass::kFinite || q.value_class == ExactClass::kZero) {
    q0 = Clamp(q.value + s.zero_point, r.qmin, r.qmax);
  }
  const F32 weight = internal::HalfMul(F32Constant(Rational(q0 - s.zero_point)), scale);
  const F32 scale_zero = internal::HalfMul(F32Constant(Rational(s.zero_point)), scale);
  const internal::Integer t = internal::RoundToInteger(
      internal::HalfDiv(internal::HalfAdd(weight, scale_zero), Bits(s.decode_bits)), RoundingMode::kNearestEven);
  if (t.value_class == ExactClass::kNan || t.value_class == ExactClass::kInf) return IntegerCode(r.element, 0);
  return IntegerCode(r.element, t.value);
}

std::uint8_t EncodeElement(const Recipe& r, const OracleScale& s, const F32& x) {
  if (r.scale_rule == recipe::ScaleRule::kAwqAsymmetric) return AwqElement(r, s, x);
  // Recipe::element_step: x / factor or x * factor, one FP32 operation.
  const F32 factor = Bits(s.factor_bits);
  F32 y = r.element_step == recipe::ElementStep::kDivide ? F32Div(x, factor) : F32Mul(x, factor);
  switch (r.element_quirk) {
    case recipe::ElementQuirk::kNone:
      break;
    case recipe::ElementQuirk::kClampToMax: {
      // torchao: torch.clamp(y, -max, max) before the cast.
      const F32 max = F32Constant(internal::ElementMax(r));
      y = TorchClamp(y, F32Negate(max), max);
      break;
    }
    case recipe::ElementQuirk::kNegativeZeroAsPositive:
      // ModelOpt _cast_fp4: the sign is (y < 0), so -0.0 is positive.
      if (F32IsZero(y)) y.negative = false;
      break;
    case recipe::ElementQuirk::kFminfFmaxfClamp: {
      // vLLM: fmaxf(-max, fminf(y, max)), minNum / maxNum: NaN -> +max.
      const F32 max = F32Constant(internal::ElementMax(r));
      y = F32Max(F32Negate(max), F32Min(y, max));
      break;
    }
    case recipe::ElementQuirk::kRepackWithFp16Scale:
      // GPTQ / AWQ packers: applied to the rounded integer below.
      break;
  }
  if (r.element.IsFloat()) {
    return static_cast<std::uint8_t>(OracleEncode(r.element, y, r.element_encode).code);
  }
  if (r.family() == Family::kMx) {
    // MX integer elements mean code * 2^implied_exponent: the conversion of
    // y * 2^-implied by the element policy, then [qmin, qmax] (MXINT8 +-127,
    // never -128; docs/formats-reference.md §5.2).
    const F32 on_grid = F32Mul(y, F32Constant(PowerOfTwo(-r.element_implied_exponent)));
    const Exact v = ExactValue(r.element, OracleEncode(r.element, on_grid, r.element_encode).code);
    const BigInt value = boost::multiprecision::numerator(v.Signed());
    return IntegerCode(r.element, Clamp(value, r.qmin, r.qmax));
  }
  // Scaled integers, literally as the sources do it: round (the recipe's
  // rounding), add the zero point, clamp to [qmin, qmax]; a NaN survives
  // round and clamp and torch's CPU cast makes it 0 (docs/formats-reference.md
  // §8.1); an infinity clamps.
  const internal::Integer q = internal::RoundToInteger(y, r.element_encode.rounding);
  BigInt q0 = 0;
  if (q.value_class == ExactClass::kInf) q0 = q.negative ? r.qmin : r.qmax;
  if (q.value_class == ExactClass::kFinite || q.value_class == ExactClass::kZero) {
    q0 = Clamp(q.value + s.zero_point, r.qmin, r.qmax);
  }
  if (r.element_quirk != recipe::ElementQuirk::kRepackWithFp16Scale) return IntegerCode(r.element, q0);
  // GPTQ / AWQ checkpoints: the packer's integer from the fake-quantized
  // weight W = s * (q0 - z) and the FP16 scale: round((W + z * s) /
  // fp16(s)), no clamp, .to(int) (a NaN or infinite quotient gives 0 in
  // the low bits: x86 returns 0x80000000, torch's CPU int casts 0). AutoGPTQ
  // qlinear_cuda_old.py QuantLinear.pack, AutoAWQ gemm.py
  // WQLinear_GEMM.from_linear.
  const F32 scale = factor;
  const F32 weight = F32Mul(scale, F32Constant(Rational(q0 - s.zero_point)));
  const F32 scale_zero = F32Mul(F32Constant(Rational(s.zero_point)), scale);
  const internal::Integer t =
      internal::RoundToInteger(F32Div(F32Add(weight, scale_zero), Bits(s.decode_bits)), RoundingMode::kNearestEven);
  if (t.value_class == ExactClass::kNan || t.value_class == ExactClass::kInf) return IntegerCode(r.element, 0);
  return IntegerCode(r.element, t.value);
}

F32 DequantizeElement(const Recipe& r, const OracleScale& s, const OracleTensorScale& t, std::uint8_t code) {
  F32 q = ExactValue(r.element, code);
  if (!r.element.IsFloat()) {
    // (integer - zero point) * 2^implied_exponent: exact.
    q = F32Constant((q.Signed() - s.zero_point) * PowerOfTwo(r.element_implied_exponent));
  }
  const F32 scale = Bits(s.decode_bits);
  if (r.tensor_scale == recipe::TensorScaleRule::kNone) return F32Mul(q, scale);
  // Recipe::dequantize_order: (q * s_block) * s_tensor (TE, the GEMM's
  // alpha) or q * (s_block * s_tensor) (torchao, ModelOpt).
  const F32 tensor = Bits(t.decode_bits);
  return r.dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor
             ? F32Mul(F32Mul(q, scale), tensor)
             : F32Mul(q, F32Mul(scale, tensor));
}

std::uint8_t UnpackCode(Packing packing, const std::vector<std::uint8_t>& packed, long k) {
  if (packing == Packing::kOnePerByte) return packed.at(static_cast<std::size_t>(k));
  const std::uint8_t byte = packed.at(static_cast<std::size_t>(k / 2));
  const bool low = (k % 2 == 0) == (packing == Packing::kNibblesLowFirst);
  return low ? byte & 0x0F : byte >> 4;
}

OracleQuantized Encode(const Recipe& r, const Grid& g, const std::vector<float>& x,
                       const std::vector<OracleScale>& scales, const OracleTensorScale& t) {
  OracleQuantized out;
  out.scales = scales;
  out.tensor_scale = t;
  for (long i = 0; i < g.rows; ++i) {
    for (long j = 0; j < g.cols; ++j) {
      const OracleScale& s = scales.at(static_cast<std::size_t>(g.GroupOf(i, j)));
      out.codes.push_back(EncodeElement(r, s, F32FromFloat(x[static_cast<std::size_t>(i * g.cols + j)])));
    }
  }
  out.packed = OraclePack(r.packing, out.codes);
  return out;
}

}  // namespace

std::vector<std::uint8_t> OraclePack(Packing packing, const std::vector<std::uint8_t>& codes) {
  if (packing == Packing::kOnePerByte) return codes;
  std::vector<std::uint8_t> packed((codes.size() + 1) / 2, 0);
  for (std::size_t k = 0; k < codes.size(); ++k) {
    const bool low = (k % 2 == 0) == (packing == Packing::kNibblesLowFirst);
    packed[k / 2] |= static_cast<std::uint8_t>(low ? (codes[k] & 0x0F) : (codes[k] & 0x0F) << 4);
  }
  return packed;
}

OracleQuantized OracleQuantizeTensor(const Recipe& r, const Layout& layout, const std::vector<float>& x, long rows,
                                     long cols) {
  CheckSize(r, x, rows, cols);
  const Grid g = GridOf(r, layout, rows, cols);
  if (g.status != OracleStatus::kOk) {
    OracleQuantized out;
    out.status = g.status;
    return out;
  }
  OracleTensorScale t;
  if (r.tensor_scale != recipe::TensorScaleRule::kNone) {
    F32 amax = F32Constant(0);
    for (float v : x) amax = AmaxStep(r, amax, F32FromFloat(v));
    t = internal::Nvfp4TensorScale(r, amax);
  }
  std::vector<std::vector<F32>> groups(static_cast<std::size_t>(g.count));
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      groups[static_cast<std::size_t>(g.GroupOf(i, j))].push_back(
          F32FromFloat(x[static_cast<std::size_t>(i * cols + j)]));
    }
  }
  std::vector<OracleScale> scales;
  for (const std::vector<F32>& group : groups) scales.push_back(ScaleOf(r, StatsOf(r, group), t));
  return Encode(r, g, x, scales, t);
}

OracleScale OracleScaleFromRange(const Recipe& r, float lo, float hi, const OracleTensorScale& t) {
  const F32 a = F32FromFloat(lo);
  const F32 b = F32FromFloat(hi);
  return ScaleOf(r, GroupStats{a, b, TorchMax(F32Abs(a), F32Abs(b))}, t);
}

OracleQuantized OracleQuantizeWithScales(const Recipe& r, const Layout& layout, const std::vector<float>& x,
                                         long rows, long cols, const std::vector<OracleScale>& scales,
                                         const OracleTensorScale& t) {
  CheckSize(r, x, rows, cols);
  const Grid g = GridOf(r, layout, rows, cols);
  if (g.status != OracleStatus::kOk) {
    OracleQuantized out;
    out.status = g.status;
    return out;
  }
  if (scales.size() != static_cast<std::size_t>(g.count)) {
    throw std::invalid_argument("oracle " + NameOf(r) + ": " + std::to_string(scales.size()) + " scales for " +
                                std::to_string(g.count) + " groups");
  }
  return Encode(r, g, x, scales, t);
}

std::vector<std::uint16_t> OracleDequantizeTensorToF16(const Recipe& r, const Layout& layout,
                                                       const std::vector<std::uint8_t>& packed,
                                                       const std::vector<OracleScale>& scales, long rows, long cols) {
  std::vector<std::uint16_t> out;
  if (r.element_quirk != recipe::ElementQuirk::kRepackWithFp16Scale) return out;
  const Grid g = GridOf(r, layout, rows, cols);
  if (g.status != OracleStatus::kOk) return out;
  // (q - z) * s in FP16: one rounding of the exact product into FP16 (round
  // to nearest even, overflow to Inf, a NaN quiet with its sign).
  EncodeOptions o;
  o.rounding = RoundingMode::kNearestEven;
  o.overflow = Overflow::kFormatDefault;
  o.nan_sign = NanSign::kKeep;
  o.nan_payload = NanPayload::kQuietOnly;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      const OracleScale& s = scales.at(static_cast<std::size_t>(g.GroupOf(i, j)));
      const Exact q = ExactValue(r.element, UnpackCode(r.packing, packed, i * cols + j));
      const Exact scale = Bits(s.decode_bits);
      Exact product;
      const Rational difference = q.Signed() - s.zero_point;
      if (scale.value_class == ExactClass::kNan ||
          (scale.value_class == ExactClass::kInf && difference == 0)) {
        product.value_class = ExactClass::kNan;
      } else if (scale.value_class == ExactClass::kInf) {
        product.value_class = ExactClass::kInf;
        product.negative = (difference < 0) != scale.negative;
      } else if (difference == 0 || scale.value_class == ExactClass::kZero) {
        product.value_class = ExactClass::kZero;
        product.negative = (difference < 0) != scale.negative;
      } else {
        const Rational v = difference * scale.Signed();
        product.value_class = ExactClass::kFinite;
        product.negative = v < 0;
        product.magnitude = v < 0 ? Rational(-v) : v;
      }
      out.push_back(static_cast<std::uint16_t>(OracleEncode(kFp16, product, o).code));
    }
  }
  return out;
}

std::vector<std::uint32_t> OracleDequantizeTensor(const Recipe& r, const Layout& layout,
                                                  const std::vector<std::uint8_t>& packed,
                                                  const std::vector<OracleScale>& scales,
                                                  const OracleTensorScale& t, long rows, long cols) {
  std::vector<std::uint32_t> out;
  const Grid g = GridOf(r, layout, rows, cols);
  if (g.status != OracleStatus::kOk) return out;
  for (long i = 0; i < rows; ++i) {
    for (long j = 0; j < cols; ++j) {
      const OracleScale s = StoredScale(r, scales.at(static_cast<std::size_t>(g.GroupOf(i, j))));
      out.push_back(F32ToBits(DequantizeElement(r, s, t, UnpackCode(r.packing, packed, i * cols + j))));
    }
  }
  return out;
}

}  // namespace lowbit::reference::block
