// The oracle's bound on one fused tensor-core step: how far the step's output
// D may lie from the exact sum of its products and C, from the parameters of
// lowbit/formats/tensor_core.h read as a specification (its header comment,
// steps 1-7; docs/tensor-cores.md "One fused step"), and the codes the spec
// fixes outright (NaN, Inf, integer sums, exact results). It decodes codes
// with ExactValue and shares no code with the model's matmul/tensor_core.h
// (docs/design.md "Three roles, kept apart").
//
// The bound, for finite operands. Let t_0..t_L be the L products and C (each
// exact: a product of two operands of at most 24 significant bits is exact),
// S = sum t_i exactly, e_i the spec's exponent of t_i (step 1: the exponent
// of the leading bit, but never below the smallest normal exponent of the
// term's format; a product's e is e_a + e_b; a zero term's e is
// zero_term_exponent, step 2), e_max = max e_i (step 3), u = 2^(e_max - F).
//   Step 4 replaces t_i by T_i = sign(t_i) * floor(|t_i| / u) * u, so
//   0 <= |t_i| - |T_i| < u, with equality to 0 exactly when t_i is a
//   multiple of u, and T_i = 0 exactly when |t_i| < u. Step 5 is exact, so
//   with A = S minus the terms below u, and P (N) the number of positive
//   (negative) terms of at least u that are not multiples of u, the aligned
//   sum
//       S' = sum T_i  lies in  [A - P u, A + N u]
//   (each positive partly truncated term moves the sum down by less than u,
//   each negative one up by less than u).
//   Step 6 is a rounding R to kept_significand_bits bits (p) at the
//   accumulator's exponent range: toward zero for kTruncate (|R(x) - x| <
//   one unit in the last place of x), to nearest even for kNearestEven
//   (|R(x) - x| <= half a unit); step 7 makes a magnitude of 2^(emax+1) or
//   more after the rounding an infinity, and every zero result +0 (an exact
//   zero sum, and a negative sum that rounds to zero). Every such R is
//   monotone (x <= y implies R(x) <= R(y), infinities at the ends), so
//       R(A - P u) <= D <= R(A + N u),
//   which implies the textbook form |D - S| < (L + 1) u + ulp_p(|S| +
//   (L + 1) u) (a half ulp for nearest: each of the L + 1 terms loses less
//   than u, step 6 less than one unit in the last kept place) but is tighter
//   and needs no case for overflow or for the subnormal range. D itself must
//   be a value R can produce (R(D) = D: for FP8 products' FP32 output, the
//   low 10 bits are zero), and never -0.
// Where the spec makes the result exact. When every term is a multiple of u
// or below u (P = N = 0), S' = A and the interval shrinks to the one value
// R(A): D's code is fixed. When moreover no term is below u, A = S; when S
// then has at most p significant bits and lies in range, R(S) = S and D
// equals the exact sum (a zero S gives +0, whatever the signs of the zero
// terms).
// Specials (step 7): a NaN operand or C, a product 0 * Inf, or infinities of
// both signs among the products and C give nan_code; otherwise an infinite
// product or C gives the infinity of its sign.
// Integer instructions (kWrapInteger): D is the exact sum modulo 2^32.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/reference/exact_value.h"

namespace lowbit::reference {

// m * 2^q exactly. Every value a fused step meets is such a dyadic rational;
// the oracle keeps them in this form so that a sum of terms far apart in
// magnitude is one exact integer addition (cpp_rational would normalise a
// fraction at every step, about 20 times slower, and the sweeps run 10^5
// steps per instruction).
struct Dyadic {
  BigInt m;
  int q = 0;
};

// The exact rational a Dyadic stands for.
Rational ToRational(const Dyadic& x);

// -1, 0 or +1 as a < b, a == b, a > b.
int CompareDyadic(const Dyadic& a, const Dyadic& b);

// An operand or C as step 1 reads it.
struct StepValue {
  ExactClass value_class = ExactClass::kZero;
  bool negative = false;
  std::int64_t magnitude = 0;  // kFinite: |value| = magnitude * 2^scale, magnitude odd (floats)
  int scale = 0;
  int exponent = 0;            // e of step 1 (floats, kFinite)
};

// A value after step 6/7: a signed zero, a finite value or an infinity.
struct StepResult {
  ExactClass value_class = ExactClass::kZero;  // never kNan
  bool negative = false;
  Dyadic value;  // kFinite: the signed value
};

// R of step 6-7 for the accumulator `acc` with `kept_bits` significant bits
// (its own mantissa_bits + 1 for a plain IEEE rounding) applied to x: a zero x
// gives +0, a non-zero x that rounds to zero a zero of x's sign, as IEEE
// rounding does (Bound then makes every zero +0, step 7).
StepResult RoundIntoAccumulator(const FormatSpec& acc, int kept_bits, FusedSumRounding rounding, const Dyadic& x);

// What the spec says about one fused step.
struct FusedStepBound {
  enum class Outcome : std::uint8_t { kSpecial, kInteger, kFinite };
  Outcome outcome = Outcome::kFinite;
  std::uint32_t code = 0;  // kSpecial (NaN or Inf code) and kInteger: D's code

  // kFinite:
  Dyadic exact_sum;      // S
  int max_exponent = 0;  // e_max
  int unit_exponent = 0; // e_max - F
  int inexact_positive = 0;  // P
  int inexact_negative = 0;  // N
  int vanished_terms = 0;    // terms below u, truncated to 0
  Dyadic aligned_lowest;   // A - P u: the least step 5's sum S' can be
  Dyadic aligned_highest;  // A + N u: the most
  StepResult lowest;     // R(A - P u), a zero as +0
  StepResult highest;    // R(A + N u), a zero as +0
  // P = N = 0: D's code is fixed (lowest == highest).
  bool code_fixed() const { return inexact_positive == 0 && inexact_negative == 0; }
  // ... and no term is below u: steps 4-5 lose nothing, S' = S.
  bool exact_terms() const { return code_fixed() && vanished_terms == 0; }
  // ... and R(S) = S: D is the exact sum itself.
  bool exact_result = false;
  bool overflow = false;  // lowest or highest is infinite
};

// The oracle for one datapath and its two operand descriptions. Codes of at
// most 16 bits are decoded once into a table (ExactValue per code).
class FusedStepOracle {
 public:
  FusedStepOracle(const TensorCoreArithmetic& arithmetic, const TensorCoreOperand& a, const TensorCoreOperand& b);

  // One step: a[i] * b[i] for i < count, and C = c (a code of the accumulator).
  FusedStepBound Bound(const std::uint32_t* a, const std::uint32_t* b, int count, std::uint32_t c) const;

  // Empty when `d` (an accumulator code) is a result the spec allows for
  // `bound`; otherwise what is wrong, with the bound's numbers.
  std::string Check(const FusedStepBound& bound, std::uint32_t d) const;

  // One IEEE addition x + y of accumulator codes rounded to nearest even,
  // a NaN result written as nan_code (how C joins the steps of an
  // instruction whose lowering adds it after them: TensorCoreLowering).
  std::uint32_t AddNearest(std::uint32_t x, std::uint32_t y) const;

  StepValue DecodeA(std::uint32_t code) const;
  StepValue DecodeB(std::uint32_t code) const;
  StepValue DecodeAccumulator(std::uint32_t code) const;

  // The code of a StepResult in the accumulator format (exact: the value
  // must be one of the format's).
  std::uint32_t CodeOf(const StepResult& r) const;

  const TensorCoreArithmetic& arithmetic() const { return arithmetic_; }

  struct Table;  // every code of a format of at most 16 bits, decoded (the .cc's)

 private:
  TensorCoreArithmetic arithmetic_;
  TensorCoreOperand a_, b_;
  std::shared_ptr<const Table> a_table_, b_table_;
  std::shared_ptr<const Table> accumulator_table_;  // null for 32-bit accumulators
};

}  // namespace lowbit::reference
