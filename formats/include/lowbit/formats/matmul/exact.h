// The exact mode of the matrix-product oracle (docs/matmul.md "The two
// modes of the oracle"): y[l][m][n] = sum_k x[l][m][k] * W[l][n][k] computed with no
// rounding at all from the exactly dequantized weights (dequantize.h) and
// activations, then rounded ONCE, to nearest even, to the output type by the
// model's encoder (convert.h EncodeF64). Host only.
//
// Why the sum is exact. Every term is x * w with x a BF16 / FP16 value and
// w a binary64 that holds the weight exactly (dequantize.h). TwoProduct
// (p = x * w rounded, e = fma(x, w, -p)) splits the product into two
// binary64 values with p + e == x * w exactly whenever no underflow occurs
// (Ogita, Rump, Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput.
// 26(6), 2005, Algorithm 3.5). Both p and e are then added into a fixed-point
// accumulator (ExactSum): an integer count of 2^kLowExponent held in 32-bit
// limbs of 64-bit words, so each addition is integer arithmetic and exact.
// Nothing is lost as long as every added value is a multiple of
// 2^kLowExponent and the total stays below 2^kHighExponent; ExactSum checks
// both on every addition and reports `out_of_range` instead of a wrong sum.
// For the formats here the bounds hold with margin: the smallest product bit
// is 2^-159 (NVFP4 weight, dequantize.h) times 2^-133 (the BF16 subnormal
// step) = 2^-292 > 2^kLowExponent = 2^-352, so fma's error term is never
// subnormal (binary64 subnormals start below 2^-1022); the largest product
// is below 2^141 * 2^128 = 2^269 and K < 2^40 terms stay below 2^309 <
// 2^kHighExponent.
//
// Rounding once. The accumulator's value is rounded to binary64 with
// round-to-odd (truncate, and set the last bit if anything was cut), then
// to the output format with round-to-nearest-even. With 53 >= p + 2 bits
// for every output precision p <= 24 this double rounding equals one direct
// rounding (Boldo, Melquiond, "Emulation of FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE Trans. Computers 57(4),
// 2008, Theorem 1), including at the output's subnormals and overflow (the
// round-to-odd value keeps the sticky information below every output step).
//
// Specials (IEEE 754-2019 §6.1, §6.2, §7.2): a NaN term or 0 * Inf gives NaN;
// +Inf and -Inf terms together give NaN; otherwise an infinite term gives
// that infinity. A zero sum is +0 unless every term is -0 (§6.3: a sum of
// zeros of opposite signs is +0 in round-to-nearest; x + x keeps x's sign).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::matmul {

class ExactSum {
 public:
  // The accumulator holds integers times 2^kLowExponent in kLimbs limbs of
  // 32 bits: values of magnitude below 2^kHighExponent.
  static constexpr int kLowExponent = -352;
  static constexpr int kLimbs = 22;
  static constexpr int kLimbBits = 32;
  static constexpr int kHighExponent = kLowExponent + kLimbs * kLimbBits - 2;  // sign and carry room: 2^350

  // Adds one binary64 value exactly (or marks the sum out of range).
  void Add(double v) {
    if (std::isnan(v)) {
      nan_ = true;
      return;
    }
    if (std::isinf(v)) {
      (v > 0 ? pos_inf_ : neg_inf_) = true;
      return;
    }
    if (v == 0) {
      if (!std::signbit(v)) all_negative_zero_ = false;
      return;
    }
    all_negative_zero_ = false;
    int exponent = 0;
    const double fraction = std::frexp(std::fabs(v), &exponent);  // |v| = fraction * 2^exponent, fraction in [0.5, 1)
    std::uint64_t mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));  // exact: 53 bits
    int lsb = exponent - 53;  // |v| = mantissa * 2^lsb
    while ((mantissa & 1) == 0) {
      mantissa >>= 1;
      ++lsb;
    }
    int bits = 0;
    for (std::uint64_t m = mantissa; m != 0; m >>= 1) ++bits;
    if (lsb < kLowExponent || lsb + bits > kHighExponent) {
      out_of_range_ = true;
      return;
    }
    const int position = lsb - kLowExponent;
    const int limb = position / kLimbBits;
    unsigned __int128 magnitude = static_cast<unsigned __int128>(mantissa) << (position % kLimbBits);  // < 2^85
    const std::int64_t sign = v < 0 ? -1 : 1;
    for (int j = limb; magnitude != 0; ++j) {
      limbs_[j] += sign * static_cast<std::int64_t>(static_cast<std::uint64_t>(magnitude) & 0xFFFFFFFFu);
      magnitude >>= kLimbBits;
    }
    // Each addition moves a limb by less than 2^32: normalizing every 2^29
    // additions keeps every limb below 2^62 in magnitude.
    if (++pending_ == (1 << 29)) Normalize();
  }

  // Adds x * y exactly: TwoProduct, or the IEEE special for NaN / Inf / 0.
  void AddProduct(double x, double y) {
    if (std::isnan(x) || std::isnan(y)) {
      nan_ = true;
      return;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x == 0 || y == 0) {
        nan_ = true;  // 0 * Inf
        return;
      }
      ((std::signbit(x) != std::signbit(y)) ? neg_inf_ : pos_inf_) = true;
      return;
    }
    if (x == 0 || y == 0) {
      Add(std::signbit(x) != std::signbit(y) ? -0.0 : 0.0);
      return;
    }
    const double p = x * y;
    if (std::isinf(p)) {
      out_of_range_ = true;  // a finite product past binary64: outside the bounds argued above
      return;
    }
    const double e = std::fma(x, y, -p);
    Add(p);
    Add(e);
  }

  bool out_of_range() const { return out_of_range_; }

  // The sum rounded to binary64 with round-to-odd (see the header comment),
  // specials per IEEE. Valid when !out_of_range().
  double RoundToOdd() const { return Round(/*to_odd=*/true); }
  // The sum rounded to the nearest binary64, ties to even.
  double RoundToNearest() const { return Round(/*to_odd=*/false); }
  // The sign of the exact sum: -1, 0 or 1 (finite sums only).
  int Sign() const {
    std::vector<std::uint32_t> magnitude;
    return Magnitude(&magnitude);
  }

 private:
  void Normalize() {
    for (int i = 0; i + 1 < kLimbs; ++i) {
      const std::int64_t carry = limbs_[i] >> kLimbBits;  // floor division by 2^32
      limbs_[i] -= carry * (std::int64_t{1} << kLimbBits);
      limbs_[i + 1] += carry;
    }
    pending_ = 0;
  }

  // The absolute value as limbs (low first) and the sign of the finite sum.
  int Magnitude(std::vector<std::uint32_t>* out) const {
    ExactSum copy = *this;
    copy.Normalize();  // limbs 0..kLimbs-2 in [0, 2^32), the top limb signed
    const bool negative = copy.limbs_[kLimbs - 1] < 0;
    out->assign(kLimbs, 0);
    // Two's complement over the whole width: negate when negative.
    std::uint64_t carry = 1;
    bool any = false;
    for (int i = 0; i < kLimbs; ++i) {
      std::uint32_t word = static_cast<std::uint32_t>(static_cast<std::uint64_t>(copy.limbs_[i]) & 0xFFFFFFFFu);
      if (negative) {
        const std::uint64_t t = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~word)) + carry;
        word = static_cast<std::uint32_t>(t);
        carry = t >> 32;
      }
      (*out)[i] = word;
      any = any || word != 0;
    }
    if (!any) return 0;
    return negative ? -1 : 1;
  }

  double Round(bool to_odd) const {
    if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<double>::quiet_NaN();
    if (pos_inf_) return std::numeric_limits<double>::infinity();
    if (neg_inf_) return -std::numeric_limits<double>::infinity();
    std::vector<std::uint32_t> magnitude;
    const int sign = Magnitude(&magnitude);
    if (sign == 0) return all_negative_zero_ ? -0.0 : 0.0;
    const auto bit = [&](int i) { return i >= 0 && ((magnitude[i / kLimbBits] >> (i % kLimbBits)) & 1u) != 0; };
    int top = kLimbs * kLimbBits - 1;
    while (!bit(top)) --top;
    // The 53 bits from `top` down, then what lies below them.
    const int low = top - 52;
    std::uint64_t significand = 0;
    for (int i = top; i >= low; --i) significand = (significand << 1) | (bit(i) ? 1u : 0u);
    bool sticky = false;
    for (int i = low - 2; i >= 0 && !sticky; --i) sticky = bit(i);
    const bool round_bit = bit(low - 1);
    if (to_odd) {
      if (round_bit || sticky) significand |= 1;
    } else if (round_bit && (sticky || (significand & 1) != 0)) {
      ++significand;  // may reach 2^53: ldexp below is still exact
    }
    const double value = std::ldexp(static_cast<double>(significand), low + kLowExponent);
    return sign < 0 ? -value : value;
  }

  std::int64_t limbs_[kLimbs] = {};
  int pending_ = 0;
  bool nan_ = false;
  bool pos_inf_ = false;
  bool neg_inf_ = false;
  bool all_negative_zero_ = true;
  bool out_of_range_ = false;
};

// The exact sum rounded once to `type`: the output code (FP32 bits, or BF16 /
// FP16 bits in the low 16).
inline std::uint32_t RoundExactSum(const ExactSum& sum, OutputType type) {
  return static_cast<std::uint32_t>(EncodeF64(OutputFormatOf(type), sum.RoundToOdd()).code);
}

struct ExactMatmulResult {
  ValidationResult status;
  // [batch][M][N], dense: the output code of each y (OutputType's bits).
  std::vector<std::uint32_t> codes;
  // [batch][M][N]: the exact sum rounded to the nearest binary64 (for error
  // bounds; NaN / Inf as the specials say).
  std::vector<double> nearest;
};

// The exact mode over a whole problem (host memory). The problem is checked
// with Validate first; y is not written (WriteOutput does that).
inline ExactMatmulResult ExactMatmul(const MatmulProblem& p) {
  ExactMatmulResult r;
  r.status = Validate(p);
  if (!r.status.ok) return r;
  const DequantizedWeights w = DequantizeWeights(p.w);
  if (!w.status.ok) {
    r.status = w.status;
    return r;
  }
  const std::int64_t n_out = p.w.n, k_in = p.w.k;
  r.codes.resize(static_cast<std::size_t>(p.w.batch * p.m * n_out));
  r.nearest.resize(r.codes.size());
  std::vector<double> x(static_cast<std::size_t>(k_in));
  std::size_t i = 0;
  for (std::int64_t l = 0; l < p.w.batch; ++l) {
    for (std::int64_t m = 0; m < p.m; ++m) {
      for (std::int64_t k = 0; k < k_in; ++k) x[static_cast<std::size_t>(k)] = ActivationValue(p, l, m, k);
      for (std::int64_t n = 0; n < n_out; ++n) {
        ExactSum sum;
        const double* row = w.values.data() + (l * n_out + n) * k_in;
        for (std::int64_t k = 0; k < k_in; ++k) sum.AddProduct(x[static_cast<std::size_t>(k)], row[k]);
        if (sum.out_of_range()) {
          r.status = {false, "y[" + std::to_string(l) + "][" + std::to_string(m) + "][" + std::to_string(n) +
                                 "]: a term is outside the exact accumulator's range"};
          r.codes.clear();
          r.nearest.clear();
          return r;
        }
        r.codes[i] = RoundExactSum(sum, p.y.type);
        r.nearest[i] = sum.RoundToNearest();
        ++i;
      }
    }
  }
  return r;
}

// Stores dense [batch][M][N] output codes into p.y with its strides.
inline void WriteOutput(const MatmulProblem& p, const std::vector<std::uint32_t>& codes) {
  std::size_t i = 0;
  for (std::int64_t l = 0; l < p.w.batch; ++l) {
    for (std::int64_t m = 0; m < p.m; ++m) {
      for (std::int64_t n = 0; n < p.w.n; ++n, ++i) {
        const std::int64_t at = l * p.y.batch_stride + m * p.y.row_stride + n;
        if (p.y.type == OutputType::kFp32) {
          static_cast<std::uint32_t*>(p.y.data)[at] = codes[i];
        } else {
          static_cast<std::uint16_t*>(p.y.data)[at] = static_cast<std::uint16_t>(codes[i]);
        }
      }
    }
  }
}

// Reads p.y back as dense [batch][M][N] codes (the inverse of WriteOutput).
inline std::vector<std::uint32_t> ReadOutput(const MatmulProblem& p) {
  std::vector<std::uint32_t> codes(static_cast<std::size_t>(p.w.batch * p.m * p.w.n));
  std::size_t i = 0;
  for (std::int64_t l = 0; l < p.w.batch; ++l) {
    for (std::int64_t m = 0; m < p.m; ++m) {
      for (std::int64_t n = 0; n < p.w.n; ++n, ++i) {
        const std::int64_t at = l * p.y.batch_stride + m * p.y.row_stride + n;
        codes[i] = p.y.type == OutputType::kFp32 ? static_cast<const std::uint32_t*>(p.y.data)[at]
                                                 : static_cast<const std::uint16_t*>(p.y.data)[at];
      }
    }
  }
  return codes;
}

}  // namespace lowbit::matmul
