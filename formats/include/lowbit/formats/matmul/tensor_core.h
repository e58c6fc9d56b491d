// The model of one tensor-core instruction: D = A * B + C on operand codes,
// bit for bit, for every instruction of formats/spec/.../tensor_core.h. One
// algorithm over that spec data (docs/tensor-cores.md "One fused step"), host
// and device, no allocation.
//
// The operands are decoded once into `TensorCoreTerm`s (a signed integer
// significand and the exponent e of the spec's step 1), so that a whole
// matrix product decodes each operand once and then runs only integer
// alignment per product (matmul/tensor_core_matrix.h). FusedDotStep is the
// single place where terms are aligned, truncated, added and rounded.
#pragma once

#include <cstdint>
#include <type_traits>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"
#include "lowbit/formats/round_pack.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/formats/unpacked.h"

namespace lowbit::matmul {

// A decoded multiplicand or accumulator value.
//   kind kFinite: value = significand * 2^(exponent - fraction_bits), with
//     `significand` signed (0 for a zero) and `exponent` the e of
//     docs/tensor-cores.md step 1 (normalised, or the smallest normal
//     exponent for subnormals); fraction_bits is the format's mantissa width.
enum class TermKind : std::uint8_t { kFinite, kPositiveInf, kNegativeInf, kNan };

struct TensorCoreTerm {
  std::int32_t significand = 0;
  std::int16_t exponent = 0;
  TermKind kind = TermKind::kFinite;
};

// The format a multiplicand has inside the datapath.
LOWBIT_HD_CONSTEXPR FormatSpec DatapathFormat(const TensorCoreOperand& operand) {
  // A local copy: device code cannot refer to the namespace-scope spec.
  constexpr FormatSpec kHalf = kFp16;
  return operand.widened_to_fp16 ? kHalf : operand.code_format;
}

LOWBIT_HD_CONSTEXPR TensorCoreTerm TermOfUnpacked(const FormatSpec& spec, const Unpacked& u) {
  TensorCoreTerm t;
  switch (u.value_class) {
    case ValueClass::kNan:
      t.kind = TermKind::kNan;
      return t;
    case ValueClass::kInf:
      t.kind = u.negative ? TermKind::kNegativeInf : TermKind::kPositiveInf;
      return t;
    case ValueClass::kZero:
      return t;
    case ValueClass::kFinite:
      break;
  }
  if (!spec.IsFloat()) {
    t.significand = u.negative ? -static_cast<std::int32_t>(u.significand)
                               : static_cast<std::int32_t>(u.significand);
    return t;
  }
  t.significand = u.negative ? -static_cast<std::int32_t>(u.significand)
                             : static_cast<std::int32_t>(u.significand);
  t.exponent = static_cast<std::int16_t>(u.exponent + spec.mantissa_bits);
  return t;
}

// A multiplicand code as the datapath sees it.
LOWBIT_HD_CONSTEXPR TensorCoreTerm DecodeMultiplicand(const TensorCoreOperand& operand,
                                                      std::uint32_t code) {
  std::uint64_t bits = code & operand.code_format.CodeMask();
  bits &= ~((std::uint64_t{1} << operand.ignored_low_bits) - 1);
  if (operand.widened_to_fp16) {
    // Exact: every E4M3 and E5M2 value is an FP16 value (docs/formats-reference.md §1).
    constexpr FormatSpec kHalf = kFp16;
    EncodeOptions exact;
    bits = RoundPack(kHalf, Unpack(operand.code_format, bits), exact).code;
  }
  const FormatSpec datapath = DatapathFormat(operand);
  return TermOfUnpacked(datapath, Unpack(datapath, bits));
}

// An accumulator code (C, or D of the previous step).
LOWBIT_HD_CONSTEXPR TensorCoreTerm DecodeAccumulator(const TensorCoreArithmetic& arith,
                                                     std::uint32_t code) {
  return TermOfUnpacked(arith.accumulator, Unpack(arith.accumulator, code));
}

namespace detail {

// value * 2^shift truncated toward zero (the magnitude is shifted, the sign
// kept). Branch-free so that the per-product loop of FusedDotStep has no
// data-dependent branch; callers keep shift below 40.
LOWBIT_HD_INLINE_CONSTEXPR std::int64_t AlignTowardZero(std::int64_t value, int shift) {
  const std::uint64_t magnitude = static_cast<std::uint64_t>(value < 0 ? -value : value);
  const int left = shift > 0 ? (shift < 63 ? shift : 63) : 0;  // zero products may carry any shift
  const int right = shift < 0 ? (-shift < 63 ? -shift : 63) : 0;  // >= 63 leaves 0: |value| < 2^62
  const auto aligned = static_cast<std::int64_t>((magnitude << left) >> right);
  return value < 0 ? -aligned : aligned;
}

// The accumulator's format with `kept_significand_bits`: where step 6
// truncates (FP32 with 13 mantissa bits for FP8 products).
LOWBIT_HD_CONSTEXPR FormatSpec KeptFormat(const TensorCoreArithmetic& arith) {
  FormatSpec kept = arith.accumulator;
  const int dropped = arith.accumulator.mantissa_bits - (arith.kept_significand_bits - 1);
  kept.mantissa_bits -= dropped;
  kept.total_bits -= dropped;
  return kept;
}

}  // namespace detail

// Step 6 and 7 for a finite exact sum `sum * 2^exponent`. A zero result is
// +0, whatever the signs: an exact zero sum, and a negative sum that rounds
// to zero (MMA-Sim adds +0.0 to every result, mmasim 2.1.1
// arithmetic/fdpa.py t_fdpa; docs/tensor-cores.md says what the hardware did).
LOWBIT_HD_CONSTEXPR std::uint32_t RoundFusedSum(const TensorCoreArithmetic& arith,
                                                std::int64_t sum, int exponent) {
  if (sum == 0) return 0;
  Unpacked u;
  u.value_class = ValueClass::kFinite;
  u.negative = sum < 0;
  u.significand = static_cast<std::uint64_t>(sum < 0 ? -sum : sum);
  u.exponent = exponent;
  const FormatSpec& acc = arith.accumulator;
  EncodeOptions options;
  options.keep_negative_zero = false;
  if (arith.rounding == FusedSumRounding::kNearestEven) {
    options.rounding = RoundingMode::kNearestEven;
    return static_cast<std::uint32_t>(RoundPack(acc, u, options).code);
  }
  // kTruncate. A magnitude of 2^(emax+1) or more is Inf, not the largest
  // finite value that IEEE truncation would give (MMA-Sim converts its
  // truncated significand to the output with round to nearest).
  const int value_exponent = exponent + HighestSetBit(u.significand);
  const int max_exponent = acc.MaxFiniteExponentField() - acc.bias;
  const std::uint32_t sign = u.negative ? static_cast<std::uint32_t>(acc.SignBit()) : 0u;
  if (value_exponent > max_exponent) {
    return sign | static_cast<std::uint32_t>(static_cast<std::uint64_t>(acc.MaxExponentField())
                                             << acc.mantissa_bits);
  }
  options.rounding = RoundingMode::kTowardZero;
  const FormatSpec kept = detail::KeptFormat(arith);
  const std::uint64_t code = RoundPack(kept, u, options).code;
  const int dropped = acc.mantissa_bits - kept.mantissa_bits;
  const std::uint64_t magnitude = (code & ~kept.SignBit()) << dropped;
  return magnitude == 0 ? 0u : sign | static_cast<std::uint32_t>(magnitude);
}

// a + b in the accumulator's format, one IEEE addition rounded to nearest
// even (FADD / HADD2 without flush to zero), NaN results as the datapath's
// nan_code: how C joins an instruction whose lowering adds it after the steps
// (tensor_core.h TensorCoreLowering). Exact through Unpack and RoundPack.
LOWBIT_HD_CONSTEXPR std::uint32_t AddRoundedNearest(const TensorCoreArithmetic& arith, std::uint32_t a_code,
                                                    std::uint32_t b_code) {
  const FormatSpec& acc = arith.accumulator;
  Unpacked a = Unpack(acc, a_code);
  Unpacked b = Unpack(acc, b_code);
  const std::uint64_t inf = static_cast<std::uint64_t>(acc.MaxExponentField()) << acc.mantissa_bits;
  if (a.value_class == ValueClass::kNan || b.value_class == ValueClass::kNan) return arith.nan_code;
  if (a.value_class == ValueClass::kInf || b.value_class == ValueClass::kInf) {
    if (a.value_class == ValueClass::kInf && b.value_class == ValueClass::kInf && a.negative != b.negative) {
      return arith.nan_code;
    }
    const bool negative = a.value_class == ValueClass::kInf ? a.negative : b.negative;
    return static_cast<std::uint32_t>(inf | (negative ? acc.SignBit() : 0));
  }
  if (a.value_class == ValueClass::kZero && b.value_class == ValueClass::kZero) {
    // IEEE 754 §6.3: +0 unless both are -0 (round to nearest).
    return (a.negative && b.negative) ? static_cast<std::uint32_t>(acc.SignBit()) : 0u;
  }
  if (a.value_class == ValueClass::kZero) return b_code;
  if (b.value_class == ValueClass::kZero) return a_code;
  // Both finite, non-zero, significands below 2^25. `hi` has the larger top
  // exponent; both are aligned to E = max(lower exponent, hi's - 38), and
  // bits of `lo` below E (only when lo < hi * 2^-13) become one sticky unit
  // at E - 1, which cannot move the result across a rounding boundary (the
  // result's last place is at least 2^(E + 13)).
  const int top_a = a.exponent + HighestSetBit(a.significand);
  const int top_b = b.exponent + HighestSetBit(b.significand);
  const Unpacked& hi = top_a >= top_b ? a : b;
  const Unpacked& lo = top_a >= top_b ? b : a;
  const int low_exponent = lo.exponent < hi.exponent ? lo.exponent : hi.exponent;
  const int e = low_exponent > hi.exponent - 38 ? low_exponent : hi.exponent - 38;
  const std::int64_t hi_aligned = static_cast<std::int64_t>(hi.significand << (hi.exponent - e + 1));
  std::int64_t lo_aligned = 0;
  if (lo.exponent >= e) {
    lo_aligned = static_cast<std::int64_t>(lo.significand << (lo.exponent - e + 1));
  } else {
    const int d = e - lo.exponent;
    const std::uint64_t kept = d >= 64 ? 0 : lo.significand >> d;
    const bool sticky = d >= 64 || (lo.significand & ((std::uint64_t{1} << d) - 1)) != 0;
    lo_aligned = static_cast<std::int64_t>((kept << 1) | (sticky ? 1 : 0));
  }
  const std::int64_t sum = (hi.negative ? -hi_aligned : hi_aligned) + (lo.negative ? -lo_aligned : lo_aligned);
  if (sum == 0) return 0;  // x + (-x) is +0 in round to nearest
  Unpacked u;
  u.value_class = ValueClass::kFinite;
  u.negative = sum < 0;
  u.significand = static_cast<std::uint64_t>(sum < 0 ? -sum : sum);
  u.exponent = e - 1;
  EncodeOptions nearest;
  return static_cast<std::uint32_t>(RoundPack(acc, u, nearest).code);
}

// Steps 2-5 for finite products held as separate arrays (significands and
// exponents of the datapath terms, the layout the matrix path keeps) and a
// finite C: returns the exact sum of the truncated terms in units of
// 2^(e_max - F), and e_max. `Lane` is the integer the products and their
// partial sum are formed in: int32 where ProductsFitInt32 says they fit (so
// that the loops vectorize to 32-bit lanes), int64 otherwise (TF32).
struct AlignedSum {
  std::int64_t sum = 0;
  int max_exponent = 0;
};

// Products below 2^30 and count aligned terms below 2^(F+2) each adding up
// below 2^31.
LOWBIT_HD_INLINE_CONSTEXPR bool ProductsFitInt32(const TensorCoreArithmetic& arith, int product_fraction_bits, int count) {
  int log2_count = 0;
  while ((1 << log2_count) < count) ++log2_count;
  return product_fraction_bits + 2 <= 30 && arith.aligned_fraction_bits + 2 + log2_count <= 31;
}

template <typename Lane>
LOWBIT_HD_INLINE_CONSTEXPR AlignedSum AlignAndAdd(const TensorCoreArithmetic& arith, int product_fraction_bits,
                                           const std::int32_t* significand_a, const std::int32_t* exponent_a,
                                           const std::int32_t* significand_b, const std::int32_t* exponent_b,
                                           int count, const TensorCoreTerm& c) {
  using Unsigned = std::conditional_t<sizeof(Lane) == 4, std::uint32_t, std::uint64_t>;
  constexpr int kLastBit = static_cast<int>(sizeof(Lane)) * 8 - 1;
  const int zero_exponent = arith.zero_term_exponent;
  // 2-3. Exponents; zero terms count as zero_term_exponent.
  int e_max = c.significand != 0 ? c.exponent : zero_exponent;
  for (int i = 0; i < count; ++i) {
    const Lane product = static_cast<Lane>(significand_a[i]) * significand_b[i];
    const int e = product == 0 ? zero_exponent : exponent_a[i] + exponent_b[i];
    e_max = e > e_max ? e : e_max;
  }
  // 4-5. Truncate every product to 2^(e_max - F) and add exactly. A product's
  // shift is at most F - product_fraction_bits (its e <= e_max); a zero
  // product aligns to 0 whatever its shift.
  const int f = arith.aligned_fraction_bits;
  const int base = f - product_fraction_bits - e_max;
  Lane lanes = 0;
  for (int i = 0; i < count; ++i) {
    const Lane product = static_cast<Lane>(significand_a[i]) * significand_b[i];
    const int shift = exponent_a[i] + exponent_b[i] + base;
    const auto magnitude = static_cast<Unsigned>(product < 0 ? -product : product);
    const int left = shift > 0 ? (shift < kLastBit ? shift : kLastBit) : 0;
    const int right = shift < 0 ? (-shift < kLastBit ? -shift : kLastBit) : 0;
    const auto aligned = static_cast<Lane>((magnitude << left) >> right);
    lanes += product < 0 ? -aligned : aligned;
  }
  const int c_shift = c.exponent - e_max + f - arith.accumulator.mantissa_bits;
  AlignedSum r;
  r.sum = static_cast<std::int64_t>(lanes) + detail::AlignTowardZero(c.significand, c_shift);
  r.max_exponent = e_max;
  return r;
}

// Steps 2-6 for finite operands and a finite C, from separate arrays: the
// path every finite step takes (FusedDotStep below, and the matrix path).
LOWBIT_HD_INLINE_CONSTEXPR std::uint32_t FiniteFusedDot(const TensorCoreArithmetic& arith, int product_fraction_bits,
                                                 const std::int32_t* significand_a, const std::int32_t* exponent_a,
                                                 const std::int32_t* significand_b, const std::int32_t* exponent_b,
                                                 int count, const TensorCoreTerm& c, AlignedSum* aligned_out = nullptr) {
  const AlignedSum aligned =
      ProductsFitInt32(arith, product_fraction_bits, count)
          ? AlignAndAdd<std::int32_t>(arith, product_fraction_bits, significand_a, exponent_a, significand_b,
                                      exponent_b, count, c)
          : AlignAndAdd<std::int64_t>(arith, product_fraction_bits, significand_a, exponent_a, significand_b,
                                      exponent_b, count, c);
  if (aligned_out != nullptr) *aligned_out = aligned;
  // 6. Round once.
  return RoundFusedSum(arith, aligned.sum, aligned.max_exponent - arith.aligned_fraction_bits);
}

// What one fused step did, for explaining it (the CLI's `lowbit mma`, Python's
// explain): filled by FusedDotStep when asked. Terms are the `count` products
// in order, then C (index count).
struct FusedDotTrace {
  static constexpr int kMaxTerms = 33;
  bool special = false;          // NaN / Inf rules decided the result (steps 2-6 skipped)
  int max_exponent = 0;          // e_max of step 3
  int unit_exponent = 0;         // the aligned grid: 2^(e_max - F)
  int term_count = 0;
  int exponent[kMaxTerms] = {};  // each term's e (zero terms: zero_term_exponent)
  std::int64_t aligned[kMaxTerms] = {};  // each term in units of the grid, truncated
  bool truncated[kMaxTerms] = {};        // whether step 4 dropped bits of the term
  std::int64_t sum = 0;          // step 5, in units of the grid
  std::uint32_t accumulator = 0;  // the C code the step started from
  std::uint32_t result = 0;      // D's code
};

// One fused step: `count` (<= 32) products a[i] * b[i] and the accumulator
// c, where the multiplicands have `fraction_bits_a` / `fraction_bits_b`
// (their datapath formats' mantissa widths). Returns D's code; fills `trace`
// when given.
LOWBIT_HD_CONSTEXPR std::uint32_t FusedDotStep(const TensorCoreArithmetic& arith,
                                               int fraction_bits_a, int fraction_bits_b,
                                               const TensorCoreTerm* a, const TensorCoreTerm* b,
                                               int count, std::uint32_t c_code,
                                               FusedDotTrace* trace = nullptr) {
  if (trace != nullptr) trace->accumulator = c_code;
  if (arith.rounding == FusedSumRounding::kWrapInteger) {
    std::int64_t sum = static_cast<std::int32_t>(c_code);
    for (int i = 0; i < count; ++i) {
      sum += static_cast<std::int64_t>(a[i].significand) * b[i].significand;
    }
    const auto d = static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum));
    if (trace != nullptr) {
      trace->term_count = count + 1;
      for (int i = 0; i < count; ++i) {
        trace->aligned[i] = static_cast<std::int64_t>(a[i].significand) * b[i].significand;
      }
      trace->aligned[count] = static_cast<std::int32_t>(c_code);
      trace->sum = sum;
      trace->result = d;
    }
    return d;
  }
  const TensorCoreTerm c = DecodeAccumulator(arith, c_code);
  // 7. Specials first: NaN, 0 * Inf, and infinities of both signs.
  bool nan = c.kind == TermKind::kNan;
  bool positive_inf = c.kind == TermKind::kPositiveInf;
  bool negative_inf = c.kind == TermKind::kNegativeInf;
  static_assert(static_cast<int>(TermKind::kFinite) == 0, "a zero OR over the kinds means all finite");
  unsigned kinds = static_cast<unsigned>(c.kind);
  for (int i = 0; i < count; ++i) kinds |= static_cast<unsigned>(a[i].kind) | static_cast<unsigned>(b[i].kind);
  const bool any_special = kinds != 0;
  if (any_special) {
    for (int i = 0; i < count; ++i) {
      const TermKind ka = a[i].kind;
      const TermKind kb = b[i].kind;
      if (ka == TermKind::kNan || kb == TermKind::kNan) {
        nan = true;
        continue;
      }
      const bool inf_a = ka != TermKind::kFinite;
      const bool inf_b = kb != TermKind::kFinite;
      if (!inf_a && !inf_b) continue;
      if ((inf_a && !inf_b && b[i].significand == 0) || (inf_b && !inf_a && a[i].significand == 0)) {
        nan = true;
        continue;
      }
      const bool negative_a = inf_a ? ka == TermKind::kNegativeInf : a[i].significand < 0;
      const bool negative_b = inf_b ? kb == TermKind::kNegativeInf : b[i].significand < 0;
      (negative_a != negative_b ? negative_inf : positive_inf) = true;
    }
    std::uint32_t special = 0;
    bool decided = false;
    if (nan || (positive_inf && negative_inf)) {
      special = arith.nan_code;
      decided = true;
    } else if (positive_inf || negative_inf) {
      const FormatSpec& acc = arith.accumulator;
      const std::uint64_t inf = static_cast<std::uint64_t>(acc.MaxExponentField()) << acc.mantissa_bits;
      special = static_cast<std::uint32_t>(inf | (negative_inf ? acc.SignBit() : 0));
      decided = true;
    }
    if (decided) {
      if (trace != nullptr) {
        trace->special = true;
        trace->result = special;
      }
      return special;
    }
  }
  // 2-5.
  const int c_fraction_bits = arith.accumulator.mantissa_bits;
  const int f = arith.aligned_fraction_bits;
  const int product_fraction_bits = fraction_bits_a + fraction_bits_b;
  constexpr int kMaxCount = FusedDotTrace::kMaxTerms - 1;
  std::int32_t sa[kMaxCount] = {}, ea[kMaxCount] = {}, sb[kMaxCount] = {}, eb[kMaxCount] = {};
  for (int i = 0; i < count; ++i) {
    sa[i] = a[i].significand;
    ea[i] = a[i].exponent;
    sb[i] = b[i].significand;
    eb[i] = b[i].exponent;
  }
  AlignedSum aligned;
  const std::uint32_t d = FiniteFusedDot(arith, product_fraction_bits, sa, ea, sb, eb, count, c, &aligned);
  const int e_max = aligned.max_exponent;
  const std::int64_t sum = aligned.sum;
  const int c_shift = c.exponent - e_max + f - c_fraction_bits;
  const std::int64_t c_aligned = detail::AlignTowardZero(c.significand, c_shift);
  if (trace != nullptr) {
    // The same terms again, each with whether step 4 cut bits off.
    trace->max_exponent = e_max;
    trace->unit_exponent = e_max - f;
    trace->term_count = count + 1;
    for (int i = 0; i < count; ++i) {
      const std::int64_t product = static_cast<std::int64_t>(a[i].significand) * b[i].significand;
      const int shift = a[i].exponent + b[i].exponent - e_max + f - product_fraction_bits;
      trace->exponent[i] = product == 0 ? arith.zero_term_exponent : a[i].exponent + b[i].exponent;
      trace->aligned[i] = product == 0 ? 0 : detail::AlignTowardZero(product, shift);
      trace->truncated[i] = product != 0 && shift < 0 && detail::AlignTowardZero(trace->aligned[i], -shift) != product;
    }
    trace->exponent[count] = c.significand != 0 ? c.exponent : arith.zero_term_exponent;
    trace->aligned[count] = c_aligned;
    trace->truncated[count] = c_shift < 0 && detail::AlignTowardZero(c_aligned, -c_shift) != c.significand;
    trace->sum = sum;
    trace->result = d;
  }
  return d;
}

// One output element of one instruction: the instruction's k products of
// row `a` and column `b` (codes, contiguous, in K order) and c; the steps take
// their products as the lowering says (inst.KOfStepProduct). `step_traces`,
// when given, holds inst.Steps() traces, filled step by step: the one walk
// that explaining an output renders (the CLI's `lowbit mma`, Python's
// mma_explain).
LOWBIT_HD_CONSTEXPR std::uint32_t TensorCoreDot(const TensorCoreInstruction& inst,
                                                const std::uint32_t* a, const std::uint32_t* b,
                                                std::uint32_t c, FusedDotTrace* step_traces = nullptr) {
  constexpr int kMaxStep = 32;
  const int step = inst.arithmetic.products_per_step;
  const int fa = DatapathFormat(inst.a).mantissa_bits;
  const int fb = DatapathFormat(inst.b).mantissa_bits;
  std::uint32_t d = inst.lowering.c_added_after_steps ? 0u : c;
  for (int s = 0; s < inst.Steps(); ++s) {
    TensorCoreTerm ta[kMaxStep];
    TensorCoreTerm tb[kMaxStep];
    for (int i = 0; i < step; ++i) {
      const int k = inst.KOfStepProduct(s, i);
      ta[i] = DecodeMultiplicand(inst.a, a[k]);
      tb[i] = DecodeMultiplicand(inst.b, b[k]);
    }
    d = FusedDotStep(inst.arithmetic, fa, fb, ta, tb, step, d, step_traces != nullptr ? step_traces + s : nullptr);
  }
  return inst.lowering.c_added_after_steps ? AddRoundedNearest(inst.arithmetic, d, c) : d;
}

// The whole instruction for an m x n tile: A is m x k (row-major codes), B is
// given as n x k (each output column's k codes contiguous: K-major, as
// mma.sync's .col B and wgmma's K-major B hold it), C and D are m x n
// row-major codes. `n` is inst.n for mma.sync and any multiple of 8 up to
// 256 for wgmma; the arithmetic of an element does not depend on n.
LOWBIT_HD_CONSTEXPR void TensorCoreMma(const TensorCoreInstruction& inst, int n,
                                       const std::uint32_t* a, const std::uint32_t* b,
                                       const std::uint32_t* c, std::uint32_t* d) {
  for (int i = 0; i < inst.m; ++i) {
    for (int j = 0; j < n; ++j) {
      d[i * n + j] = TensorCoreDot(inst, a + i * inst.k, b + j * inst.k, c[i * n + j]);
    }
  }
}

}  // namespace lowbit::matmul
