// QuantizedMatmulModel (formats/matmul/quantized_matmul.h) against a plain
// reference written here from the definitions (docs/tensor-cores.md "One
// fused step" and "Accumulation schedules", docs/matmul.md "One
// semantics"): the oracle's exact values (reference/exact_value.h) of the
// logical codes and scales, exact rational products, the operand rounding,
// the fused step's alignment and truncation, split-K, promotion and the
// epilogue, each as exact rational arithmetic with the rounding spelled out.
// It reads the test's own logical arrays, never the packed buffers the
// model reads. Shapes: K not a multiple of 16 or of the block, M = 1, 3, 17,
// odd N, L > 1, NaN / Inf / zero blocks and extreme scales, for every
// weight format and packing. Then batch invariance: each row of y has the
// same bits at M = 1 as inside M = 3, 16, 17 and 128. About 0.6 s at the ci
// level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/formats/fp32_bits.h"
#include "test_level.h"

namespace lowbit {
namespace {

using matmul::ActivationType;
using matmul::ScaleGeometry;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;
using reference::BigInt;
using reference::Exact;
using reference::ExactClass;
using reference::Rational;

// ---- exact arithmetic with IEEE specials ---------------------------------------

Exact Nan() {
  Exact e;
  e.value_class = ExactClass::kNan;
  return e;
}
Exact Inf(bool negative) {
  Exact e;
  e.value_class = ExactClass::kInf;
  e.negative = negative;
  return e;
}
Exact Zero(bool negative) {
  Exact e;
  e.negative = negative;
  return e;
}

Exact Multiply(const Exact& a, const Exact& b) {
  const bool negative = a.negative != b.negative;
  if (a.value_class == ExactClass::kNan || b.value_class == ExactClass::kNan) return Nan();
  if (a.value_class == ExactClass::kInf || b.value_class == ExactClass::kInf) {
    return a.value_class == ExactClass::kZero || b.value_class == ExactClass::kZero ? Nan() : Inf(negative);
  }
  if (a.value_class == ExactClass::kZero || b.value_class == ExactClass::kZero) return Zero(negative);
  Exact r = reference::ExactFromRational(a.magnitude * b.magnitude);
  r.negative = negative;
  return r;
}

// floor(log2 v) of a positive rational.
int FloorLog2(const Rational& v) {
  const BigInt num = boost::multiprecision::numerator(v);
  const BigInt den = boost::multiprecision::denominator(v);
  int e = static_cast<int>(boost::multiprecision::msb(num)) - static_cast<int>(boost::multiprecision::msb(den));
  if (reference::Compare(v, reference::PowerOfTwo(e)) < 0) --e;
  return e;
}

// An IEEE binary format by its precision p (with the leading bit) and
// exponent range.
struct Binary {
  int precision, emin, emax;
};
constexpr Binary kBinary32{24, -126, 127};
constexpr Binary kBinary16{11, -14, 15};
constexpr Binary kBfloat16{8, -126, 127};

// Rounds a finite magnitude to the format: to nearest even, or toward
// zero; false when the result is 2^(emax + 1) or more (Inf).
bool Round(const Rational& magnitude, const Binary& f, bool toward_zero, Rational* out) {
  const int e = FloorLog2(magnitude);
  const int quantum = (e < f.emin ? f.emin : e) - f.precision + 1;
  const Rational t = magnitude / reference::PowerOfTwo(quantum);
  BigInt q = boost::multiprecision::numerator(t) / boost::multiprecision::denominator(t);
  if (!toward_zero) {
    const int vs_half = reference::Compare(t - Rational(q), Rational(1, 2));
    if (vs_half > 0 || (vs_half == 0 && (q & 1) != 0)) ++q;
  }
  *out = Rational(q) * reference::PowerOfTwo(quantum);
  return reference::Compare(*out, reference::PowerOfTwo(f.emax + 1)) < 0;
}

// One IEEE operation's result: round an exact value to nearest even.
Exact RoundNearest(const Exact& v, const Binary& f) {
  if (v.value_class != ExactClass::kFinite) return v;
  Rational r;
  if (!Round(v.magnitude, f, false, &r)) return Inf(v.negative);
  if (r == 0) return Zero(v.negative);
  Exact out = reference::ExactFromRational(r);
  out.negative = v.negative;
  return out;
}

// FP32 a + b, IEEE 754 §6.3 zeros (round to nearest: x + (-x) is +0).
Exact Add32(const Exact& a, const Exact& b) {
  if (a.value_class == ExactClass::kNan || b.value_class == ExactClass::kNan) return Nan();
  if (a.value_class == ExactClass::kInf || b.value_class == ExactClass::kInf) {
    if (a.value_class == ExactClass::kInf && b.value_class == ExactClass::kInf && a.negative != b.negative) return Nan();
    return Inf(a.value_class == ExactClass::kInf ? a.negative : b.negative);
  }
  if (a.value_class == ExactClass::kZero && b.value_class == ExactClass::kZero) return Zero(a.negative && b.negative);
  return RoundNearest(reference::ExactFromRational(a.Signed() + b.Signed()), kBinary32);
}

// ---- the weights: logical data, the packed buffers made from it ------------------

struct Kind {
  const char* name;
  WeightFormat format;
  WeightPacking packing;
  ScaleType scale_type;
  FormatSpec element;
  FormatSpec scale;
};
const Kind kKinds[] = {
    {"nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, kE2m1, kUe4m3},
    {"mxfp4", WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, kE2m1, kE8m0},
    {"mxfp8 e4m3", WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, kE4m3, kE8m0},
    {"int4 fp32 scales", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, kInt4, kFp32},
    {"uint4 fp16 scales", WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kFp16, kUint4, kFp16},
    {"uint4 gptq fp16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, kUint4, kFp16},
    {"uint4 awq bf16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kBf16, kUint4, kBf16},
    {"e4m3 per channel", WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, kE4m3, kFp32},
};

struct Random {
  std::mt19937_64 rng;
  explicit Random(std::uint64_t seed) : rng(seed) {}
  std::int64_t Int(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  template <typename T>
  T Pick(std::initializer_list<T> v) {
    return v.begin()[Int(0, static_cast<std::int64_t>(v.size()) - 1)];
  }
};

struct Problem {
  Kind kind;
  ScaleGeometry geometry = ScaleGeometry::kRowGroups;
  std::int64_t n = 1, k = 1, block = 16, batch = 1;
  ActivationType act = ActivationType::kBf16;
  std::vector<std::uint8_t> codes;         // [L][N][K]
  std::vector<std::uint32_t> scale_bits;   // [L][scale slot]
  std::vector<std::int32_t> zeros;         // [L][scale slot] (lowbit) or [L][group][N] (GPTQ / AWQ); empty: none
  std::vector<float> outer;                // [L] NVFP4 tensor scale
  // packed
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> words;
  std::vector<std::uint8_t> scale_bytes;
  std::vector<std::uint16_t> scale_halves;
  std::vector<std::uint32_t> scale_words;
  std::vector<std::int32_t> zero_ints;
  std::vector<std::uint32_t> zero_words;
  std::vector<recipe::TensorScale> tensor_scales;

  std::int64_t Groups() const { return (k + block - 1) / block; }
  bool Words() const { return kind.packing != WeightPacking::kLowbit; }
  std::int64_t ScalesPerBatch() const {
    if (Words()) return Groups() * n;
    if (geometry == ScaleGeometry::kPerRow) return n;
    if (geometry == ScaleGeometry::kFlatBlocks) return (n * k + block - 1) / block;
    return n * Groups();
  }
  // Written from the layouts of docs/matmul.md "The packed weights".
  std::int64_t Slot(std::int64_t nn, std::int64_t kk) const {
    if (Words()) return (kk / block) * n + nn;
    if (geometry == ScaleGeometry::kPerRow) return nn;
    if (geometry == ScaleGeometry::kFlatBlocks) return (nn * k + kk) / block;
    return nn * Groups() + kk / block;
  }

  matmul::WeightView View() const {
    const void* c = Words() ? static_cast<const void*>(words.data()) : static_cast<const void*>(bytes.data());
    const void* s = kind.scale_type == ScaleType::kFp32 ? static_cast<const void*>(scale_words.data())
                    : (kind.scale_type == ScaleType::kFp16 || kind.scale_type == ScaleType::kBf16)
                        ? static_cast<const void*>(scale_halves.data())
                        : static_cast<const void*>(scale_bytes.data());
    const void* z = zeros.empty() ? nullptr
                    : Words()     ? static_cast<const void*>(zero_words.data())
                                  : static_cast<const void*>(zero_ints.data());
    return matmul::DenseWeights(kind.format, kind.packing, geometry, kind.scale_type, n, k, block, batch, c, s, z,
                                tensor_scales.empty() ? nullptr : tensor_scales.data());
  }
};

std::uint32_t RandomScale(Random& r, const Kind& kind, double special_rate) {
  const bool special = r.Chance(special_rate);
  switch (kind.scale_type) {
    case ScaleType::kE8m0: return special ? r.Pick<std::uint32_t>({0, 1, 253, 254, 255}) : r.Int(118, 134);
    case ScaleType::kUe4m3: return special ? r.Pick<std::uint32_t>({0, 1, 7, 0x7E, 0x7F}) : r.Int(0x20, 0x50);
    case ScaleType::kFp16:
      return special ? r.Pick<std::uint32_t>({0x0000, 0x0001, 0x7BFF, 0x7C00, 0x7E00}) : (r.Int(10, 18) << 10) | r.Int(0, 1023);
    case ScaleType::kBf16:
      return special ? r.Pick<std::uint32_t>({0x0000, 0x0001, 0x7F7F, 0x7F80, 0x7FC0}) : (r.Int(120, 130) << 7) | r.Int(0, 127);
    case ScaleType::kFp32:
      return special ? r.Pick<std::uint32_t>({0x00000000u, 0x00000001u, 0x7F7FFFFFu, 0x7F800000u, 0x7FC00000u})
                     : static_cast<std::uint32_t>((r.Int(118, 130) << 23) | r.Int(0, (1 << 23) - 1));
  }
  return 0;
}

std::uint16_t RandomActivation(Random& r, ActivationType t, double special_rate) {
  const bool bf16 = t == ActivationType::kBf16;
  if (r.Chance(special_rate)) {
    return bf16 ? r.Pick<std::uint16_t>({0x0000, 0x8000, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0})
                : r.Pick<std::uint16_t>({0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00});
  }
  const auto sign = static_cast<std::uint16_t>(r.Int(0, 1) << 15);
  if (bf16) return sign | static_cast<std::uint16_t>((r.Int(127 - 8, 127 + 8) << 7) | r.Int(0, 127));
  return sign | static_cast<std::uint16_t>((r.Int(15 - 8, 15 + 8) << 10) | r.Int(0, 1023));
}

Problem RandomProblem(Random& r, const Kind& kind, double special_rate) {
  Problem p;
  p.kind = kind;
  if (kind.format == WeightFormat::kFp8E4m3PerChannel) {
    p.geometry = ScaleGeometry::kPerRow;
    p.block = 0;
  } else if (p.Words() || matmul::IsIntegerFormat(kind.format)) {
    p.geometry = ScaleGeometry::kRowGroups;
    p.block = r.Pick<std::int64_t>({8, 16, 32});
  } else {
    p.geometry = r.Chance(0.5) ? ScaleGeometry::kFlatBlocks : ScaleGeometry::kRowGroups;
    p.block = kind.format == WeightFormat::kNvfp4 ? 16 : 32;
  }
  p.n = p.Words() ? 8 * r.Int(1, 2) : r.Pick<std::int64_t>({1, 3, 5, 17});
  p.k = kind.packing == WeightPacking::kGptq ? 8 * r.Int(1, 9) : r.Int(1, 75);
  p.batch = r.Pick<std::int64_t>({1, 1, 2});
  p.act = r.Chance(0.5) ? ActivationType::kBf16 : ActivationType::kFp16;
  const bool four = kind.element.total_bits == 4;
  p.codes.resize(static_cast<std::size_t>(p.batch * p.n * p.k));
  // A whole block of zeros or of NaN sometimes.
  const int fill = r.Chance(special_rate) ? r.Pick<int>({0, 0x7F}) : -1;
  for (auto& c : p.codes) {
    c = static_cast<std::uint8_t>(r.Int(0, four ? 15 : 255));
    if (!four && (c & 0x7F) == 0x7F && !r.Chance(special_rate)) c &= 0xFE;
  }
  if (fill >= 0) {
    const std::int64_t first = r.Int(0, p.n * p.k - 1);
    for (std::int64_t i = first; i < first + 16 && i < p.n * p.k; ++i) {
      p.codes[static_cast<std::size_t>(i)] = four ? 0 : static_cast<std::uint8_t>(fill);
    }
  }
  p.scale_bits.resize(static_cast<std::size_t>(p.batch * p.ScalesPerBatch()));
  for (auto& s : p.scale_bits) s = RandomScale(r, kind, special_rate);
  const bool with_zeros = matmul::IsIntegerFormat(kind.format) && (kind.format == WeightFormat::kUint4 || r.Chance(0.5));
  if (with_zeros) {
    p.zeros.resize(static_cast<std::size_t>(p.batch * (p.Words() ? p.Groups() * p.n : p.ScalesPerBatch())));
    for (auto& z : p.zeros) z = static_cast<std::int32_t>(r.Int(0, 15));
  }
  if (kind.format == WeightFormat::kNvfp4) {
    for (std::int64_t l = 0; l < p.batch; ++l) {
      float t = std::ldexp(static_cast<float>(r.Int(1, 1 << 20)), static_cast<int>(r.Int(-30, -10)));
      if (r.Chance(special_rate)) t = r.Pick<float>({0.0f, 1e-40f, 3.0e38f, INFINITY});
      p.outer.push_back(t);
    }
  }
  // Pack with the model's packers (formats/block/packing.h).
  const std::int64_t per = p.n * p.k;
  for (std::int64_t l = 0; l < p.batch; ++l) {
    const std::uint8_t* c = p.codes.data() + l * per;
    if (!p.Words()) {
      if (four) {
        std::vector<std::uint8_t> b(static_cast<std::size_t>((per + 1) / 2));
        block::PackNibbles(c, static_cast<long>(per), block::NibbleOrder::kLowFirst, b.data());
        p.bytes.insert(p.bytes.end(), b.begin(), b.end());
      } else {
        p.bytes.insert(p.bytes.end(), c, c + per);
      }
      continue;
    }
    std::vector<std::uint8_t> kn(static_cast<std::size_t>(per));
    for (std::int64_t nn = 0; nn < p.n; ++nn) {
      for (std::int64_t kk = 0; kk < p.k; ++kk) kn[static_cast<std::size_t>(kk * p.n + nn)] = c[nn * p.k + kk];
    }
    std::vector<std::uint32_t> w(static_cast<std::size_t>(kind.packing == WeightPacking::kGptq ? (p.k / 8) * p.n
                                                                                               : p.k * (p.n / 8)));
    if (kind.packing == WeightPacking::kGptq) {
      block::PackGptqQweight(kn.data(), p.k, p.n, w.data());
    } else {
      block::PackAwq(kn.data(), p.k, p.n, w.data());
    }
    p.words.insert(p.words.end(), w.begin(), w.end());
    if (with_zeros) {
      std::vector<std::uint8_t> gn(static_cast<std::size_t>(p.Groups() * p.n));
      for (std::size_t i = 0; i < gn.size(); ++i) {
        gn[i] = static_cast<std::uint8_t>(p.zeros[static_cast<std::size_t>(l * p.Groups() * p.n) + i]);
      }
      std::vector<std::uint32_t> zw(static_cast<std::size_t>(p.Groups() * (p.n / 8)));
      if (kind.packing == WeightPacking::kGptq) {
        block::PackGptqQzeros(gn.data(), p.Groups(), p.n, zw.data());
      } else {
        block::PackAwq(gn.data(), p.Groups(), p.n, zw.data());
      }
      p.zero_words.insert(p.zero_words.end(), zw.begin(), zw.end());
    }
  }
  for (std::uint32_t s : p.scale_bits) {
    switch (kind.scale_type) {
      case ScaleType::kE8m0:
      case ScaleType::kUe4m3: p.scale_bytes.push_back(static_cast<std::uint8_t>(s)); break;
      case ScaleType::kFp16:
      case ScaleType::kBf16: p.scale_halves.push_back(static_cast<std::uint16_t>(s)); break;
      case ScaleType::kFp32: p.scale_words.push_back(s); break;
    }
  }
  if (with_zeros && !p.Words()) p.zero_ints = p.zeros;
  for (float t : p.outer) p.tensor_scales.push_back({1.0f, t});
  return p;
}

// ---- the reference ------------------------------------------------------------------

struct Reference {
  const Problem& p;
  matmul::AccumulationSchedule s;
  TensorCoreInstruction inst;
  Binary operand;
  int operand_emin;

  Reference(const Problem& problem, const matmul::AccumulationSchedule& schedule)
      : p(problem), s(schedule), inst(Instruction(schedule.instruction)),
        operand(problem.act == ActivationType::kBf16 ? kBfloat16 : kBinary16),
        operand_emin(operand.emin) {}

  // W[l][n][k] times its block or group scale, exactly, then rounded once
  // into the operand type.
  Exact WeightOperand(std::int64_t l, std::int64_t nn, std::int64_t kk, std::int64_t* inexact) const {
    const std::uint8_t code = p.codes[static_cast<std::size_t>((l * p.n + nn) * p.k + kk)];
    const std::uint32_t scale_bits = p.scale_bits[static_cast<std::size_t>(l * p.ScalesPerBatch() + p.Slot(nn, kk))];
    Exact inner;
    if (p.kind.format == WeightFormat::kFp8E4m3PerChannel) {
      inner = reference::ExactValue(kE4m3, code);
    } else if (matmul::IsIntegerFormat(p.kind.format)) {
      const std::int64_t q = p.kind.format == WeightFormat::kInt4 && code >= 8 ? code - 16 : code;
      std::int32_t z = 0;
      if (!p.zeros.empty()) {
        z = p.Words() ? p.zeros[static_cast<std::size_t>(l * p.Groups() * p.n + (kk / p.block) * p.n + nn)]
                      : p.zeros[static_cast<std::size_t>(l * p.ScalesPerBatch() + p.Slot(nn, kk))];
      }
      inner = Multiply(reference::ExactFromRational(Rational(q - z)), reference::ExactValue(p.kind.scale, scale_bits));
    } else {
      inner = Multiply(reference::ExactValue(p.kind.element, code), reference::ExactValue(p.kind.scale, scale_bits));
    }
    const Exact rounded = RoundNearest(inner, operand);
    const bool same = inner.value_class == ExactClass::kNan
                          ? true
                          : rounded.value_class == inner.value_class && rounded.negative == inner.negative &&
                                rounded.magnitude == inner.magnitude;
    *inexact += same ? 0 : 1;
    return rounded;
  }
  float Outer(std::int64_t l, std::int64_t nn) const {
    if (p.kind.format == WeightFormat::kNvfp4) return p.outer[static_cast<std::size_t>(l)];
    if (p.kind.format == WeightFormat::kFp8E4m3PerChannel) {
      float f;
      std::memcpy(&f, &p.scale_bits[static_cast<std::size_t>(l * p.n + nn)], 4);
      return f;
    }
    return 1.0f;
  }

  // The exponent e of step 1: floor(log2 |v|), at least the format's emin.
  static int StepExponent(const Rational& magnitude, int emin) {
    const int e = FloorLog2(magnitude);
    return e < emin ? emin : e;
  }

  // One fused step over `count` products and the FP32 accumulator c
  // (docs/tensor-cores.md "One fused step", steps 1-7).
  Exact Step(const std::vector<Exact>& a, const std::vector<Exact>& b, const Exact& c) const {
    const TensorCoreArithmetic& arith = inst.arithmetic;
    bool nan = c.value_class == ExactClass::kNan, pos = false, neg = false;
    if (c.value_class == ExactClass::kInf) (c.negative ? neg : pos) = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Exact prod = Multiply(a[i], b[i]);
      if (prod.value_class == ExactClass::kNan) nan = true;
      if (prod.value_class == ExactClass::kInf) (prod.negative ? neg : pos) = true;
    }
    if (nan || (pos && neg)) return Nan();
    if (pos || neg) return Inf(neg);
    // 2-3: exponents, e_max.
    int e_max = c.value_class == ExactClass::kFinite ? StepExponent(c.magnitude, kBinary32.emin) : arith.zero_term_exponent;
    std::vector<Exact> products;
    std::vector<int> exps;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Exact prod = Multiply(a[i], b[i]);
      int e = arith.zero_term_exponent;
      if (prod.value_class == ExactClass::kFinite) {
        e = StepExponent(a[i].magnitude, operand_emin) + StepExponent(b[i].magnitude, operand_emin);
      }
      products.push_back(prod);
      exps.push_back(e);
      e_max = e > e_max ? e : e_max;
    }
    // 4-5: truncate toward zero to 2^(e_max - F), add exactly.
    const Rational unit = reference::PowerOfTwo(e_max - arith.aligned_fraction_bits);
    BigInt sum = 0;
    auto add_truncated = [&](const Exact& t) {
      if (t.value_class != ExactClass::kFinite) return;
      const Rational units = t.magnitude / unit;
      const BigInt whole = boost::multiprecision::numerator(units) / boost::multiprecision::denominator(units);
      sum += t.negative ? BigInt(-whole) : whole;
    };
    for (const Exact& prod : products) add_truncated(prod);
    add_truncated(c);
    // 6-7: one rounding, toward zero to 24 bits; zero is +0; 2^128 or more is Inf.
    if (sum == 0) return Zero(false);
    const bool negative = sum < 0;
    const Rational magnitude = Rational(negative ? BigInt(-sum) : sum) * unit;
    if (FloorLog2(magnitude) > kBinary32.emax) return Inf(negative);
    Rational r;
    Round(magnitude, Binary{arith.kept_significand_bits, kBinary32.emin, kBinary32.emax}, true, &r);
    if (r == 0) return Zero(false);
    Exact out = reference::ExactFromRational(r);
    out.negative = negative;
    return out;
  }

  // One output: x's and W's operand values along K, W's outer scale.
  Exact Dot(const std::vector<Exact>& xs, const std::vector<Exact>& ws, float outer) const {
    const std::int64_t kk = inst.k;
    const std::int64_t chunks = (p.k + kk - 1) / kk;
    auto term = [&](const std::vector<Exact>& v, std::int64_t i) { return i < p.k ? v[static_cast<std::size_t>(i)] : Zero(false); };
    auto chain = [&](std::int64_t first, std::int64_t last) {
      Exact d = Zero(false);
      for (std::int64_t c = first; c < last; ++c) {
        std::vector<Exact> a, b;
        for (std::int64_t i = c * kk; i < (c + 1) * kk; ++i) {
          a.push_back(term(xs, i));
          b.push_back(term(ws, i));
        }
        d = Step(a, b, d);
      }
      return d;
    };
    const std::int64_t per_part = (chunks + s.split_k - 1) / s.split_k;
    std::vector<Exact> parts;
    for (int part = 0; part < s.split_k; ++part) {
      const std::int64_t first = std::min(part * per_part, chunks);
      const std::int64_t last = std::min(first + per_part, chunks);
      if (s.promotion_interval == 0) {
        parts.push_back(chain(first, last));
        continue;
      }
      Exact acc = Zero(false);
      const std::int64_t per_promotion = s.promotion_interval / kk;
      for (std::int64_t b = first; b < last; b += per_promotion) acc = Add32(acc, chain(b, std::min(b + per_promotion, last)));
      parts.push_back(acc);
    }
    Exact v = parts[0];
    if (s.split_reduction == matmul::SplitReduction::kInOrder) {
      for (std::size_t i = 1; i < parts.size(); ++i) v = Add32(v, parts[i]);
    } else {
      for (std::size_t width = 1; width < parts.size(); width *= 2) {
        for (std::size_t i = 0; i + width < parts.size(); i += 2 * width) parts[i] = Add32(parts[i], parts[i + width]);
      }
      v = parts[0];
    }
    if (s.scale_per_column) v = RoundNearest(Multiply(v, reference::ExactValue(kFp32, F32Bits(outer))), kBinary32);
    if (s.alpha != 1.0f) v = RoundNearest(Multiply(v, reference::ExactValue(kFp32, F32Bits(s.alpha))), kBinary32);
    if (s.output == FormatId::kBf16) return RoundNearest(v, kBfloat16);
    if (s.output == FormatId::kFp16) return RoundNearest(v, kBinary16);
    return v;
  }
};

FormatSpec OutputSpec(FormatId id) { return id == FormatId::kBf16 ? kBf16 : id == FormatId::kFp16 ? kFp16 : kFp32; }

std::string Compare(const Exact& want, const FormatSpec& out, std::uint32_t code) {
  const Exact got = reference::ExactValue(out, code);
  if (want.value_class == ExactClass::kNan) return got.value_class == ExactClass::kNan ? "" : "want NaN";
  if (got.value_class != want.value_class || got.negative != want.negative ||
      (want.value_class == ExactClass::kFinite && got.magnitude != want.magnitude)) {
    return "want " + std::string(want.negative ? "-" : "+") +
           (want.value_class == ExactClass::kFinite ? want.magnitude.str()
            : want.value_class == ExactClass::kInf  ? "inf"
                                                    : "0") +
           ", got code " + std::to_string(code);
  }
  return "";
}

matmul::AccumulationSchedule RandomSchedule(Random& r, const Problem& p) {
  matmul::AccumulationSchedule s;
  const bool bf16 = p.act == ActivationType::kBf16;
  s.instruction = r.Chance(0.5) ? (bf16 ? TensorCoreId::kMmaBf16F32 : TensorCoreId::kMmaF16F32)
                                : (bf16 ? TensorCoreId::kWgmmaBf16F32 : TensorCoreId::kWgmmaF16F32);
  s.split_k = static_cast<int>(r.Pick<std::int64_t>({1, 1, 2, 3}));
  s.split_reduction = r.Chance(0.5) ? matmul::SplitReduction::kInOrder : matmul::SplitReduction::kPairwiseTree;
  s.promotion_interval = static_cast<int>(r.Pick<std::int64_t>({0, 0, 16, 32}));
  s.output = r.Pick<FormatId>({FormatId::kFp32, FormatId::kBf16, FormatId::kFp16});
  s.alpha = r.Pick<float>({1.0f, 1.0f, 0.5f, 3.0f});
  s.scale_per_column = matmul::HasOuterScale(p.kind.format);
  return s;
}

int ProblemsPerKind() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return 2;
    case testing::TestLevel::kCi: return 6;
    case testing::TestLevel::kFull: return 60;
  }
  return 6;
}

TEST(QuantizedMatmulModel, EveryOutputIsTheReferenceSchedule) {
  Random r(20261205);
  std::int64_t outputs = 0, inexact_total = 0;
  for (const Kind& kind : kKinds) {
    for (int i = 0; i < ProblemsPerKind(); ++i) {
      const Problem p = RandomProblem(r, kind, i % 2 == 0 ? 0.05 : 0.3);
      const std::int64_t m = r.Pick<std::int64_t>({1, 3, 17});
      std::vector<std::uint16_t> x(static_cast<std::size_t>(p.batch * m * p.k));
      for (auto& v : x) v = RandomActivation(r, p.act, 0.05);
      const matmul::AccumulationSchedule s = RandomSchedule(r, p);
      const matmul::QuantizedMatmulResult got = matmul::QuantizedMatmulModel(p.View(), x.data(), p.act, m, s);
      ASSERT_EQ(got.error, "") << kind.name;
      const Reference ref(p, s);
      const FormatSpec act = p.act == ActivationType::kBf16 ? kBf16 : kFp16;
      int failures = 0;
      std::int64_t inexact = 0;
      for (std::int64_t l = 0; l < p.batch; ++l) {
        std::vector<std::vector<Exact>> w(static_cast<std::size_t>(p.n));
        for (std::int64_t nn = 0; nn < p.n; ++nn) {
          for (std::int64_t kk = 0; kk < p.k; ++kk) {
            w[static_cast<std::size_t>(nn)].push_back(ref.WeightOperand(l, nn, kk, &inexact));
          }
        }
        for (std::int64_t mm = 0; mm < m; ++mm) {
          std::vector<Exact> xs;
          for (std::int64_t kk = 0; kk < p.k; ++kk) {
            xs.push_back(reference::ExactValue(act, x[static_cast<std::size_t>((l * m + mm) * p.k + kk)]));
          }
          for (std::int64_t nn = 0; nn < p.n; ++nn) {
            const Exact want = ref.Dot(xs, w[static_cast<std::size_t>(nn)], ref.Outer(l, nn));
            const std::uint32_t code = got.y[static_cast<std::size_t>((l * m + mm) * p.n + nn)];
            const std::string diff = Compare(want, OutputSpec(s.output), code);
            if (!diff.empty() && failures++ < 3) {
              ADD_FAILURE() << kind.name << " L=" << p.batch << " M=" << m << " N=" << p.n << " K=" << p.k
                            << " block " << p.block << " split " << s.split_k << " promotion "
                            << s.promotion_interval << " " << Instruction(s.instruction).name << ": y[" << l << "]["
                            << mm << "][" << nn << "] " << diff;
            }
            ++outputs;
          }
        }
      }
      EXPECT_EQ(got.inexact_weights, inexact) << kind.name;
      inexact_total += inexact;
    }
  }
  EXPECT_GT(outputs, 1000);
  EXPECT_GT(inexact_total, 0);  // the operand rounding is exercised, not only exact weights
}

// A row of y has the same bits whatever M: every row of a product at M = 3,
// 16, 17 and 128 equals the product of that row alone (M = 1).
TEST(QuantizedMatmulModel, RowsAreTheSameWhateverM) {
  Random r(31);
  int rows_checked = 0;
  for (const Kind& kind : kKinds) {
    const Problem p = RandomProblem(r, kind, 0.05);
    for (std::int64_t m : {3, 16, 17, 128}) {
      std::vector<std::uint16_t> x(static_cast<std::size_t>(p.batch * m * p.k));
      for (auto& v : x) v = RandomActivation(r, p.act, 0.02);
      const matmul::AccumulationSchedule s = RandomSchedule(r, p);
      const matmul::QuantizedMatmulResult all = matmul::QuantizedMatmulModel(p.View(), x.data(), p.act, m, s, 2);
      ASSERT_EQ(all.error, "");
      for (std::int64_t mm = 0; mm < m; ++mm) {
        for (std::int64_t l = 0; l < p.batch; ++l) {
          // Batch l's row mm alone, other batches' rows zero.
          std::vector<std::uint16_t> one(static_cast<std::size_t>(p.batch * p.k), 0);
          std::memcpy(one.data() + l * p.k, x.data() + (l * m + mm) * p.k, static_cast<std::size_t>(p.k) * 2);
          const matmul::QuantizedMatmulResult single = matmul::QuantizedMatmulModel(p.View(), one.data(), p.act, 1, s);
          ASSERT_EQ(single.error, "");
          for (std::int64_t nn = 0; nn < p.n; ++nn) {
            ASSERT_EQ(single.y[static_cast<std::size_t>(l * p.n + nn)],
                      all.y[static_cast<std::size_t>((l * m + mm) * p.n + nn)])
                << kind.name << " M=" << m << " row " << mm << " batch " << l << " column " << nn;
          }
          ++rows_checked;
        }
      }
    }
  }
  EXPECT_GT(rows_checked, 8 * (3 + 16 + 17 + 128));
}

// What the schedule must declare, each refused with one line.
TEST(QuantizedMatmulModel, SchedulesThatCannotRunAreRefused) {
  Random r(7);
  const Problem nvfp4 = RandomProblem(r, kKinds[0], 0.0);
  const Problem mxfp4 = RandomProblem(r, kKinds[1], 0.0);
  std::vector<std::uint16_t> x(static_cast<std::size_t>(2 * 100), 0x3F80);
  matmul::AccumulationSchedule s;
  s.instruction = nvfp4.act == ActivationType::kBf16 ? TensorCoreId::kMmaBf16F32 : TensorCoreId::kMmaF16F32;
  EXPECT_NE(matmul::QuantizedMatmulModel(nvfp4.View(), x.data(), nvfp4.act, 1, s).error.find("scale_per_column"),
            std::string::npos);
  s.scale_per_column = true;
  EXPECT_EQ(matmul::QuantizedMatmulModel(nvfp4.View(), x.data(), nvfp4.act, 1, s).error, "");
  const ActivationType other = nvfp4.act == ActivationType::kBf16 ? ActivationType::kFp16 : ActivationType::kBf16;
  EXPECT_NE(matmul::QuantizedMatmulModel(nvfp4.View(), x.data(), other, 1, s).error.find("operand type"),
            std::string::npos);
  s.instruction = TensorCoreId::kWgmmaE4m3E4m3F32;
  EXPECT_NE(matmul::QuantizedMatmulModel(nvfp4.View(), x.data(), nvfp4.act, 1, s).error.find("bf16 or f16"),
            std::string::npos);
  s.instruction = mxfp4.act == ActivationType::kBf16 ? TensorCoreId::kMmaBf16F32 : TensorCoreId::kMmaF16F32;
  EXPECT_NE(matmul::QuantizedMatmulModel(mxfp4.View(), x.data(), mxfp4.act, 1, s).error.find("no tensor or channel"),
            std::string::npos);
  s.scale_per_column = false;
  EXPECT_EQ(matmul::QuantizedMatmulModel(mxfp4.View(), x.data(), mxfp4.act, 0, s).error, "M = 0 is not positive");
  EXPECT_EQ(matmul::QuantizedMatmulModel(mxfp4.View(), nullptr, mxfp4.act, 1, s).error, "x is null");
  s.split_k = 0;
  EXPECT_EQ(matmul::QuantizedMatmulModel(mxfp4.View(), x.data(), mxfp4.act, 1, s).error,
            "split_k must be between 1 and 64");
}

}  // namespace
}  // namespace lowbit
