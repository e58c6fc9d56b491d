// Shared by the matmul tests: random packed-weight problems built from
// logical codes and scales (then packed by lowbit's own packers), and the
// rational reference of y = x * W^T computed from the oracle's decoders
// (reference/exact_value.h) with IEEE specials spelled out here, so the
// exact mode (formats/matmul/exact.h) is checked against arithmetic it does
// not share (docs/design.md "Three roles, kept apart").
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/registry/matmul_entry.h"

namespace lowbit::matmul_test {

using reference::Exact;
using reference::ExactClass;
using reference::Rational;

// ---- the rational reference --------------------------------------------------

inline Exact Multiply(const Exact& a, const Exact& b) {
  Exact r;
  r.negative = a.negative != b.negative;
  if (a.value_class == ExactClass::kNan || b.value_class == ExactClass::kNan) {
    r.value_class = ExactClass::kNan;
  } else if (a.value_class == ExactClass::kInf || b.value_class == ExactClass::kInf) {
    const bool zero = a.value_class == ExactClass::kZero || b.value_class == ExactClass::kZero;
    r.value_class = zero ? ExactClass::kNan : ExactClass::kInf;  // 0 * Inf is NaN (IEEE 754 §7.2)
  } else if (a.value_class == ExactClass::kZero || b.value_class == ExactClass::kZero) {
    r.value_class = ExactClass::kZero;
  } else {
    r.value_class = ExactClass::kFinite;
    r.magnitude = a.magnitude * b.magnitude;
  }
  return r;
}

inline Exact FromInteger(std::int64_t v) {
  Exact r;
  if (v == 0) return r;
  r.value_class = ExactClass::kFinite;
  r.negative = v < 0;
  r.magnitude = Rational(v < 0 ? -v : v);
  return r;
}

// IEEE sum of exact terms (no rounding until the end): NaN if any NaN or
// +Inf with -Inf; an infinity if any; a zero sum is -0 only if every term
// is -0 (§6.3).
struct RationalSum {
  bool nan = false, pos_inf = false, neg_inf = false, all_negative_zero = true;
  Rational total = 0;
  void Add(const Exact& t) {
    switch (t.value_class) {
      case ExactClass::kNan: nan = true; return;
      case ExactClass::kInf: (t.negative ? neg_inf : pos_inf) = true; return;
      case ExactClass::kZero: if (!t.negative) all_negative_zero = false; return;
      case ExactClass::kFinite:
        all_negative_zero = false;
        total += t.Signed();
        return;
    }
  }
};

// The binary format's round-to-nearest-even of a positive rational, written
// from the definition: the quantum 2^(max(e, emin) - p + 1) with e = floor(log2
// |v|); ties to the even multiple; at or past 2^(emax + 1) it is Inf (false).
inline bool RoundToBinary(const Rational& magnitude, int precision, int emin, int emax, Rational* out) {
  using reference::BigInt;
  const BigInt num = boost::multiprecision::numerator(magnitude);
  const BigInt den = boost::multiprecision::denominator(magnitude);
  int e = static_cast<int>(boost::multiprecision::msb(num)) - static_cast<int>(boost::multiprecision::msb(den));
  if (reference::Compare(magnitude, reference::PowerOfTwo(e)) < 0) --e;
  const int quantum_exp = (e < emin ? emin : e) - precision + 1;
  const Rational t = magnitude / reference::PowerOfTwo(quantum_exp);
  BigInt q = boost::multiprecision::numerator(t) / boost::multiprecision::denominator(t);
  const Rational rem = t - Rational(q);
  const int vs_half = reference::Compare(rem, Rational(1, 2));
  if (vs_half > 0 || (vs_half == 0 && (q & 1) != 0)) ++q;
  *out = Rational(q) * reference::PowerOfTwo(quantum_exp);
  return reference::Compare(*out, reference::PowerOfTwo(emax + 1)) < 0;
}

// Whether `code` of the output type is the one rounding of the sum.
inline std::string CheckRounded(const RationalSum& s, matmul::OutputType type, std::uint32_t code) {
  const FormatSpec spec = matmul::OutputFormatOf(type);
  const Exact got = reference::ExactValue(spec, code);
  const int precision = spec.mantissa_bits + 1;
  const int emax = (1 << (spec.exponent_bits - 1)) - 1;
  const int emin = 1 - emax;
  ExactClass want_class = ExactClass::kFinite;
  bool want_negative = false;
  Rational want;
  if (s.nan || (s.pos_inf && s.neg_inf)) {
    want_class = ExactClass::kNan;
  } else if (s.pos_inf || s.neg_inf) {
    want_class = ExactClass::kInf;
    want_negative = s.neg_inf;
  } else if (s.total == 0) {
    want_class = ExactClass::kZero;
    want_negative = s.all_negative_zero;
  } else {
    want_negative = s.total < 0;
    const Rational magnitude = want_negative ? Rational(-s.total) : s.total;
    if (!RoundToBinary(magnitude, precision, emin, emax, &want)) want_class = ExactClass::kInf;
    if (want_class == ExactClass::kFinite && want == 0) want_class = ExactClass::kZero;  // underflow to zero
  }
  if (got.value_class != want_class) {
    return "class differs: want " + std::to_string(static_cast<int>(want_class)) + ", got " +
           std::to_string(static_cast<int>(got.value_class)) + " (code " + std::to_string(code) + ")";
  }
  if (want_class == ExactClass::kNan) return "";
  if (got.negative != want_negative) return "sign differs (code " + std::to_string(code) + ")";
  if (want_class == ExactClass::kFinite && got.magnitude != want) {
    return "value differs: want " + want.str() + ", got " + got.magnitude.str() + " (code " + std::to_string(code) + ")";
  }
  return "";
}

// ---- random problems ------------------------------------------------------------

// One problem with its own buffers. Logical data first (codes[l][n][k],
// scale bits and zero points per (l, n, group)), then the packed buffers.
struct Problem {
  registry::MatmulWeightKind kind;
  matmul::ScaleGeometry geometry = matmul::ScaleGeometry::kRowGroups;
  std::int64_t n = 1, k = 1, m = 1, batch = 1, block = 16;
  matmul::ActivationType act = matmul::ActivationType::kBf16;
  matmul::OutputType out = matmul::OutputType::kFp32;
  bool with_zeros = false;
  std::vector<std::uint8_t> codes;          // [L][N][K]
  std::vector<std::uint32_t> scale_bits;    // per (l, scale index) as laid out below
  std::vector<std::int32_t> zero_points;    // per (l, n, group along K) when with_zeros
  std::vector<float> tensor_scales;         // per l (NVFP4)
  std::vector<std::uint16_t> x;             // [L][M][K]
  // packed
  std::vector<std::uint8_t> code_bytes;
  std::vector<std::uint32_t> code_words;
  std::vector<std::uint8_t> scale_bytes;
  std::vector<std::uint16_t> scale_halves;
  std::vector<float> scale_floats;
  std::vector<std::int32_t> zero_ints;
  std::vector<std::uint32_t> zero_words;
  std::vector<recipe::TensorScale> tensor_scale_structs;
  std::vector<std::uint32_t> y32;
  std::vector<std::uint16_t> y16;

  std::int64_t GroupsPerRow() const { return (k + block - 1) / block; }
  // The independent spelling of which scale an element uses (weights.h
  // ScaleIndex is the model's): flat 1-D blocks of the [N][K] tensor,
  // per-row blocks, or per row; GPTQ / AWQ [group][n].
  std::int64_t ScaleSlot(std::int64_t nn, std::int64_t kk) const {
    if (kind.packing != matmul::WeightPacking::kLowbit) return (kk / block) * n + nn;
    switch (geometry) {
      case matmul::ScaleGeometry::kFlatBlocks: return (nn * k + kk) / block;
      case matmul::ScaleGeometry::kRowGroups: return nn * GroupsPerRow() + kk / block;
      case matmul::ScaleGeometry::kPerRow: return nn;
    }
    return 0;
  }
  std::int64_t ScalesPerBatch() const {
    if (kind.packing != matmul::WeightPacking::kLowbit) return GroupsPerRow() * n;
    switch (geometry) {
      case matmul::ScaleGeometry::kFlatBlocks: return (n * k + block - 1) / block;
      case matmul::ScaleGeometry::kRowGroups: return n * GroupsPerRow();
      case matmul::ScaleGeometry::kPerRow: return n;
    }
    return 0;
  }
  std::int32_t Zero(std::int64_t l, std::int64_t nn, std::int64_t kk) const {
    if (!with_zeros) return 0;
    return zero_points[static_cast<std::size_t>(l * ScalesPerBatch() + ScaleSlot(nn, kk))];
  }

  matmul::MatmulProblem View() {
    matmul::MatmulProblem p;
    const void* codes_ptr = kind.packing == matmul::WeightPacking::kLowbit ? static_cast<const void*>(code_bytes.data())
                                                                            : static_cast<const void*>(code_words.data());
    const void* scales_ptr = nullptr;
    switch (kind.scale_type) {
      case matmul::ScaleType::kE8m0:
      case matmul::ScaleType::kUe4m3: scales_ptr = scale_bytes.data(); break;
      case matmul::ScaleType::kFp16:
      case matmul::ScaleType::kBf16: scales_ptr = scale_halves.data(); break;
      case matmul::ScaleType::kFp32: scales_ptr = scale_floats.data(); break;
    }
    const void* zeros_ptr = nullptr;
    if (with_zeros) {
      zeros_ptr = kind.packing == matmul::WeightPacking::kLowbit ? static_cast<const void*>(zero_ints.data())
                                                                  : static_cast<const void*>(zero_words.data());
    }
    p.w = matmul::DenseWeights(kind.format, kind.packing, geometry, kind.scale_type, n, k, block, batch, codes_ptr,
                               scales_ptr, zeros_ptr,
                               tensor_scale_structs.empty() ? nullptr : tensor_scale_structs.data());
    p.m = m;
    p.x.type = act;
    p.x.data = x.data();
    p.x.count = static_cast<std::int64_t>(x.size());
    p.x.row_stride = k;
    p.x.batch_stride = m * k;
    p.y.type = out;
    p.y.row_stride = n;
    p.y.batch_stride = m * n;
    if (out == matmul::OutputType::kFp32) {
      y32.assign(static_cast<std::size_t>(batch * m * n), 0);
      p.y.data = y32.data();
      p.y.count = static_cast<std::int64_t>(y32.size());
    } else {
      y16.assign(static_cast<std::size_t>(batch * m * n), 0);
      p.y.data = y16.data();
      p.y.count = static_cast<std::int64_t>(y16.size());
    }
    return p;
  }
};

// Boundary-biased bits: specials and extremes at `special_rate`, else
// moderate values.
struct Random {
  std::mt19937_64 rng;
  explicit Random(std::uint64_t seed) : rng(seed) {}
  std::uint64_t Bits(int n) { return rng() & ((n >= 64) ? ~0ull : ((1ull << n) - 1)); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  std::int64_t Int(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }
  template <typename T>
  T Pick(std::initializer_list<T> values) {
    return values.begin()[Int(0, static_cast<std::int64_t>(values.size()) - 1)];
  }
};

// Activation bits: moderate magnitudes, sometimes 0, -0, subnormal, max,
// Inf or NaN.
inline std::uint16_t RandomActivation(Random& r, matmul::ActivationType t, double special_rate) {
  const bool bf16 = t == matmul::ActivationType::kBf16;
  if (r.Chance(special_rate)) {
    return bf16 ? r.Pick<std::uint16_t>({0x0000, 0x8000, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0})
                : r.Pick<std::uint16_t>({0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00});
  }
  // exponent within +-8 of 1, random mantissa and sign
  const std::uint16_t sign = static_cast<std::uint16_t>(r.Bits(1) << 15);
  if (bf16) return sign | static_cast<std::uint16_t>((r.Int(127 - 8, 127 + 8) << 7) | r.Bits(7));
  return sign | static_cast<std::uint16_t>((r.Int(15 - 8, 15 + 8) << 10) | r.Bits(10));
}

// Scale bits of a kind: moderate, sometimes extreme or NaN.
inline std::uint32_t RandomScale(Random& r, matmul::ScaleType t, double special_rate) {
  const bool special = r.Chance(special_rate);
  switch (t) {
    case matmul::ScaleType::kE8m0:
      return special ? r.Pick<std::uint32_t>({0, 1, 253, 254, 255}) : static_cast<std::uint32_t>(r.Int(120, 134));
    case matmul::ScaleType::kUe4m3:
      return special ? r.Pick<std::uint32_t>({0, 1, 7, 0x7E, 0x7F}) : static_cast<std::uint32_t>(r.Int(0x20, 0x50));
    case matmul::ScaleType::kFp16:
      return special ? r.Pick<std::uint32_t>({0x0000, 0x0001, 0x7BFF, 0x7C00, 0x7E00})
                     : static_cast<std::uint32_t>((r.Int(10, 18) << 10) | r.Bits(10));
    case matmul::ScaleType::kBf16:
      return special ? r.Pick<std::uint32_t>({0x0000, 0x0001, 0x7F7F, 0x7F80, 0x7FC0})
                     : static_cast<std::uint32_t>((r.Int(120, 130) << 7) | r.Bits(7));
    case matmul::ScaleType::kFp32:
      return special ? r.Pick<std::uint32_t>({0x00000000u, 0x00000001u, 0x7F7FFFFFu, 0x7F800000u, 0x7FC00000u})
                     : static_cast<std::uint32_t>((r.Int(120, 130) << 23) | r.Bits(23));
  }
  return 0;
}

// Packs the logical data of `p` into its buffers with lowbit's packers
// (formats/block/packing.h; the nibble order of recipe/tensor.h StoreCode).
inline void Pack(Problem& p) {
  const std::int64_t per_batch_elements = p.n * p.k;
  const bool four_bit = matmul::IsFourBit(p.kind.format);
  p.code_bytes.clear();
  p.code_words.clear();
  for (std::int64_t l = 0; l < p.batch; ++l) {
    const std::uint8_t* c = p.codes.data() + l * per_batch_elements;
    if (p.kind.packing == matmul::WeightPacking::kLowbit) {
      if (four_bit) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>((per_batch_elements + 1) / 2));
        block::PackNibbles(c, static_cast<long>(per_batch_elements), block::NibbleOrder::kLowFirst, bytes.data());
        p.code_bytes.insert(p.code_bytes.end(), bytes.begin(), bytes.end());
      } else {
        p.code_bytes.insert(p.code_bytes.end(), c, c + per_batch_elements);
      }
      continue;
    }
    // GPTQ / AWQ read [K][N] codes.
    std::vector<std::uint8_t> kn(static_cast<std::size_t>(per_batch_elements));
    for (std::int64_t nn = 0; nn < p.n; ++nn) {
      for (std::int64_t kk = 0; kk < p.k; ++kk) kn[static_cast<std::size_t>(kk * p.n + nn)] = c[nn * p.k + kk];
    }
    if (p.kind.packing == matmul::WeightPacking::kGptq) {
      std::vector<std::uint32_t> words(static_cast<std::size_t>((p.k / 8) * p.n));
      block::PackGptqQweight(kn.data(), p.k, p.n, words.data());
      p.code_words.insert(p.code_words.end(), words.begin(), words.end());
    } else {
      std::vector<std::uint32_t> words(static_cast<std::size_t>(p.k * (p.n / 8)));
      block::PackAwq(kn.data(), p.k, p.n, words.data());
      p.code_words.insert(p.code_words.end(), words.begin(), words.end());
    }
  }
  p.scale_bytes.clear();
  p.scale_halves.clear();
  p.scale_floats.clear();
  for (std::uint32_t bits : p.scale_bits) {
    switch (p.kind.scale_type) {
      case matmul::ScaleType::kE8m0:
      case matmul::ScaleType::kUe4m3: p.scale_bytes.push_back(static_cast<std::uint8_t>(bits)); break;
      case matmul::ScaleType::kFp16:
      case matmul::ScaleType::kBf16: p.scale_halves.push_back(static_cast<std::uint16_t>(bits)); break;
      case matmul::ScaleType::kFp32: {
        float f;
        static_assert(sizeof f == sizeof bits);
        std::memcpy(&f, &bits, sizeof f);
        p.scale_floats.push_back(f);
        break;
      }
    }
  }
  p.zero_ints.clear();
  p.zero_words.clear();
  if (p.with_zeros) {
    if (p.kind.packing == matmul::WeightPacking::kLowbit) {
      p.zero_ints = p.zero_points;
    } else {
      // [groups][N] zero points -> [groups][N / 8] words per batch.
      const std::int64_t groups = p.GroupsPerRow();
      for (std::int64_t l = 0; l < p.batch; ++l) {
        std::vector<std::uint8_t> gn(static_cast<std::size_t>(groups * p.n));
        for (std::int64_t g = 0; g < groups; ++g) {
          for (std::int64_t nn = 0; nn < p.n; ++nn) {
            gn[static_cast<std::size_t>(g * p.n + nn)] =
                static_cast<std::uint8_t>(p.zero_points[static_cast<std::size_t>(l * groups * p.n + g * p.n + nn)]);
          }
        }
        std::vector<std::uint32_t> words(static_cast<std::size_t>(groups * (p.n / 8)));
        if (p.kind.packing == matmul::WeightPacking::kGptq) {
          block::PackGptqQzeros(gn.data(), groups, p.n, words.data());
        } else {
          block::PackAwq(gn.data(), groups, p.n, words.data());
        }
        p.zero_words.insert(p.zero_words.end(), words.begin(), words.end());
      }
    }
  }
  p.tensor_scale_structs.clear();
  for (float t : p.tensor_scales) p.tensor_scale_structs.push_back({1.0f, t});
}

// A random problem of `kind`: shapes that do not tile (K not a multiple of
// the block or group), M in {1, 3, 16} (or `m` if given), odd N where the
// packing allows, L > 1 sometimes.
inline Problem RandomProblem(Random& r, const registry::MatmulWeightKind& kind, double special_rate,
                             std::int64_t m = 0) {
  Problem p;
  p.kind = kind;
  const bool words = kind.packing != matmul::WeightPacking::kLowbit;
  if (kind.format == matmul::WeightFormat::kFp8E4m3PerChannel) {
    p.geometry = matmul::ScaleGeometry::kPerRow;
    p.block = 0;
  } else if (words) {
    p.geometry = matmul::ScaleGeometry::kRowGroups;
  } else {
    p.geometry = r.Chance(0.5) ? matmul::ScaleGeometry::kFlatBlocks : matmul::ScaleGeometry::kRowGroups;
  }
  if (p.block != 0 || p.geometry != matmul::ScaleGeometry::kPerRow) {
    p.block = matmul::IsIntegerFormat(kind.format) ? r.Pick<std::int64_t>({8, 16, 32, 128}) : kind.block;
  }
  p.n = words ? 8 * r.Int(1, 3) : r.Pick<std::int64_t>({1, 3, 5, 8, 17});
  p.k = words && kind.packing == matmul::WeightPacking::kGptq ? 8 * r.Int(1, 12) : r.Int(1, 100);
  p.m = m != 0 ? m : r.Pick<std::int64_t>({1, 3, 16});
  p.batch = r.Pick<std::int64_t>({1, 1, 2, 3});
  p.act = r.Chance(0.5) ? matmul::ActivationType::kBf16 : matmul::ActivationType::kFp16;
  p.out = r.Pick<matmul::OutputType>({matmul::OutputType::kBf16, matmul::OutputType::kFp16, matmul::OutputType::kFp32});
  p.with_zeros = matmul::IsIntegerFormat(kind.format) && (kind.format == matmul::WeightFormat::kUint4 || r.Chance(0.5));
  const int code_bits = matmul::IsFourBit(kind.format) ? 4 : 8;
  p.codes.resize(static_cast<std::size_t>(p.batch * p.n * p.k));
  for (auto& c : p.codes) {
    c = static_cast<std::uint8_t>(r.Bits(code_bits));
    // E4M3 NaN codes (0x7F, 0xFF) only at the special rate.
    if (code_bits == 8 && (c & 0x7F) == 0x7F && !r.Chance(special_rate)) c = static_cast<std::uint8_t>(c & 0xFE);
  }
  p.scale_bits.resize(static_cast<std::size_t>(p.batch * p.ScalesPerBatch()));
  for (auto& s : p.scale_bits) s = RandomScale(r, kind.scale_type, special_rate);
  if (p.with_zeros) {
    if (words) {
      p.zero_points.resize(static_cast<std::size_t>(p.batch * p.GroupsPerRow() * p.n));
    } else {
      p.zero_points.resize(p.scale_bits.size());
    }
    for (auto& z : p.zero_points) z = static_cast<std::int32_t>(r.Bits(4));
  }
  if (kind.format == matmul::WeightFormat::kNvfp4) {
    for (std::int64_t l = 0; l < p.batch; ++l) {
      float t = std::ldexp(static_cast<float>(r.Int(1, 1 << 20)), static_cast<int>(r.Int(-30, -10)));
      if (r.Chance(special_rate)) t = r.Pick<float>({0.0f, 1e-40f, 3.0e38f, INFINITY});
      p.tensor_scales.push_back(t);
    }
  }
  p.x.resize(static_cast<std::size_t>(p.batch * p.m * p.k));
  for (auto& v : p.x) v = RandomActivation(r, p.act, special_rate);
  Pack(p);
  return p;
}

// W[l][n][k] from the logical data through the oracle's decoders.
inline Exact ReferenceWeight(const Problem& p, std::int64_t l, std::int64_t nn, std::int64_t kk) {
  const std::uint8_t code = p.codes[static_cast<std::size_t>((l * p.n + nn) * p.k + kk)];
  const std::uint32_t scale_bits =
      p.scale_bits[static_cast<std::size_t>(l * p.ScalesPerBatch() + p.ScaleSlot(nn, kk))];
  const Exact scale = reference::ExactValue(matmul::ScaleFormatOf(p.kind.scale_type), scale_bits);
  if (matmul::IsIntegerFormat(p.kind.format)) {
    // Two's complement nibble for int4 (-8..7), 0..15 for uint4.
    const std::int64_t q = p.kind.format == matmul::WeightFormat::kInt4 && code >= 8 ? code - 16 : code;
    std::int32_t z = 0;
    if (p.with_zeros) {
      z = p.kind.packing == matmul::WeightPacking::kLowbit
              ? p.zero_points[static_cast<std::size_t>(l * p.ScalesPerBatch() + p.ScaleSlot(nn, kk))]
              : p.zero_points[static_cast<std::size_t>(l * p.GroupsPerRow() * p.n + (kk / p.block) * p.n + nn)];
    }
    return Multiply(FromInteger(q - z), scale);
  }
  Exact v = Multiply(reference::ExactValue(matmul::ElementFormatOf(p.kind.format), code), scale);
  if (p.kind.format == matmul::WeightFormat::kNvfp4) {
    std::uint32_t t_bits;
    std::memcpy(&t_bits, &p.tensor_scales[static_cast<std::size_t>(l)], 4);
    v = Multiply(v, reference::ExactValue(kFp32, t_bits));
  }
  return v;
}

}  // namespace lowbit::matmul_test
