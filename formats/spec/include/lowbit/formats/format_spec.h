// FormatSpec: one aggregate per element encoding. Everything the model, the
// oracle and the kernels know about a format's layout is here, as data.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"

namespace lowbit {

enum class FormatKind : std::uint8_t {
  kFloat,    // sign / exponent / mantissa fields
  kInteger,  // two's complement (signed) or plain binary (unsigned)
};

// Which codes are not finite numbers. Each value names one convention that a
// real format uses (docs/formats-reference.md §1).
enum class SpecialCodes : std::uint8_t {
  // IEEE 754 style: exponent all ones, mantissa 0 = Inf, mantissa != 0 = NaN.
  // FP32, BF16, FP16, E5M2, and ml_dtypes' float8_e3m4 / float8_e4m3.
  kIeee,
  // No Inf; the single code with exponent and mantissa all ones is NaN (per
  // sign). OCP E4M3 ("FN"), UE4M3 (PTX §5.2.3), and E8M0 (OCP MX §5.4.1: 0xFF).
  kAllOnesIsNan,
  // No Inf, no -0; the code "sign set, everything else zero" is the only NaN.
  // E4M3FNUZ and E5M2FNUZ (ml_dtypes, PyTorch).
  kNegativeZeroIsNan,
  // Every code is a finite number: FP6 E2M3/E3M2, FP4 E2M1 (OCP MX §5.3.3),
  // and all integer formats.
  kNone,
};

struct FormatSpec {
  const char* name;          // canonical lower-case name, as the CLI spells it
  FormatKind kind;
  int total_bits;            // bits of one code (a code sits in the low bits)
  bool has_sign;             // a sign bit (floats) / two's complement (ints)
  int exponent_bits;         // floats only
  int mantissa_bits;         // floats only (stored fraction bits)
  int bias;                  // floats only
  bool has_subnormals;       // exponent field 0 encodes 0 and subnormals;
                             // false (E8M0): field 0 is a normal 2^-bias, no zero
  SpecialCodes specials;
  // The name of this format's type in ml_dtypes (`ml_dtypes.float8_e4m3fn`),
  // nullptr where ml_dtypes has no such type. It is an accepted alias
  // (FindFormat), it puts the format into the `ml_dtypes` profile, and it
  // names the ml_dtypes results the profile test compares with. Not part of
  // the layout: identifying a format (profiles/format_match.h) ignores it.
  const char* ml_dtypes_name = nullptr;

  // ---- derived properties (all constexpr, nothing stored twice) ----
  LOWBIT_HD_CONSTEXPR std::uint64_t CodeMask() const {
    return total_bits >= 64 ? ~std::uint64_t{0}
                            : (std::uint64_t{1} << total_bits) - 1;
  }
  LOWBIT_HD_CONSTEXPR bool IsFloat() const { return kind == FormatKind::kFloat; }
  LOWBIT_HD_CONSTEXPR std::uint64_t SignBit() const {
    return has_sign ? std::uint64_t{1} << (total_bits - 1) : 0;
  }
  LOWBIT_HD_CONSTEXPR int MaxExponentField() const { return (1 << exponent_bits) - 1; }
  LOWBIT_HD_CONSTEXPR std::uint64_t MantissaMask() const {
    return (std::uint64_t{1} << mantissa_bits) - 1;
  }
  LOWBIT_HD_CONSTEXPR bool HasInf() const { return specials == SpecialCodes::kIeee; }
  LOWBIT_HD_CONSTEXPR bool HasNan() const {
    return specials != SpecialCodes::kNone;
  }
  LOWBIT_HD_CONSTEXPR bool HasNegativeZero() const {
    return IsFloat() && has_sign && has_subnormals &&
           specials != SpecialCodes::kNegativeZeroIsNan;
  }
  LOWBIT_HD_CONSTEXPR bool HasZero() const { return !IsFloat() || has_subnormals; }
  // Unbiased exponent of the smallest normal (also the exponent of subnormals).
  LOWBIT_HD_CONSTEXPR int MinNormalExponent() const {
    return has_subnormals ? 1 - bias : -bias;
  }
  // Largest exponent field that holds finite numbers.
  LOWBIT_HD_CONSTEXPR int MaxFiniteExponentField() const {
    return specials == SpecialCodes::kIeee ? MaxExponentField() - 1 : MaxExponentField();
  }
  // Largest finite magnitude as a code (sign clear).
  LOWBIT_HD_CONSTEXPR std::uint64_t MaxFiniteCode() const {
    if (!IsFloat()) {
      return has_sign ? (std::uint64_t{1} << (total_bits - 1)) - 1 : CodeMask();
    }
    const std::uint64_t top = static_cast<std::uint64_t>(MaxFiniteExponentField())
                              << mantissa_bits;
    // kAllOnesIsNan reserves the all-ones mantissa at the top exponent.
    const std::uint64_t mant = specials == SpecialCodes::kAllOnesIsNan
                                   ? MantissaMask() - 1
                                   : MantissaMask();
    // E8M0: MantissaMask() is 0, so "all ones minus one" would underflow; the
    // top exponent field itself is then the NaN and the max is one field below.
    if (specials == SpecialCodes::kAllOnesIsNan && mantissa_bits == 0) {
      return static_cast<std::uint64_t>(MaxExponentField() - 1);
    }
    return top | mant;
  }
  // Integers: smallest and largest value.
  LOWBIT_HD_CONSTEXPR std::int64_t IntMin() const {
    return has_sign ? -(std::int64_t{1} << (total_bits - 1)) : 0;
  }
  LOWBIT_HD_CONSTEXPR std::int64_t IntMax() const {
    return static_cast<std::int64_t>(MaxFiniteCode());
  }
};

}  // namespace lowbit
