// Unpacked: a code as an exact value (significand * 2^exponent) plus its class.
// Every conversion is Unpack(source) followed by RoundPack(destination), so a
// wider input (FP64, FP16, BF16) goes in exactly, never through a second
// rounding (docs/design.md "One rounding point").
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/format_spec.h"

namespace lowbit {

enum class ValueClass : std::uint8_t { kZero, kFinite, kInf, kNan };

struct Unpacked {
  ValueClass value_class = ValueClass::kZero;
  bool negative = false;
  // kFinite: value = significand * 2^exponent, significand != 0.
  std::uint64_t significand = 0;
  int exponent = 0;
  // kNan: the mantissa field MSB-aligned at bit 63 (bit 63 is the quiet bit of
  // IEEE-style formats); formats with a single NaN report 1 << 63.
  std::uint64_t nan_payload = 0;
};

// Index of the highest set bit of a non-zero x.
LOWBIT_HD_CONSTEXPR int HighestSetBit(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  // __clzll is not constexpr: constant evaluation in the device pass (a
  // static_assert in device code, tests/nvcc) takes the portable loop.
  if (__builtin_is_constant_evaluated()) {
    int i = 63;
    while (!(x >> i)) --i;
    return i;
  }
  return 63 - __clzll(static_cast<long long>(x));
#else
  return 63 - __builtin_clzll(x);
#endif
}

LOWBIT_HD_CONSTEXPR Unpacked Unpack(const FormatSpec& spec, std::uint64_t code) {
  code &= spec.CodeMask();
  Unpacked u;
  if (!spec.IsFloat()) {
    std::int64_t v = static_cast<std::int64_t>(code);
    if (spec.has_sign && (code & spec.SignBit())) {
      v -= static_cast<std::int64_t>(spec.CodeMask()) + 1;  // sign-extend
    }
    u.negative = v < 0;
    u.significand = static_cast<std::uint64_t>(v < 0 ? -v : v);
    u.value_class = v == 0 ? ValueClass::kZero : ValueClass::kFinite;
    return u;
  }
  u.negative = (code & spec.SignBit()) != 0;
  const int m = spec.mantissa_bits;
  const int exp_field = static_cast<int>((code >> m) & static_cast<std::uint64_t>(spec.MaxExponentField()));
  const std::uint64_t mant = code & spec.MantissaMask();
  const std::uint64_t single_nan_payload = std::uint64_t{1} << 63;
  switch (spec.specials) {
    case SpecialCodes::kIeee:
      if (exp_field == spec.MaxExponentField()) {
        u.value_class = mant == 0 ? ValueClass::kInf : ValueClass::kNan;
        u.nan_payload = mant << (64 - m);
        return u;
      }
      break;
    case SpecialCodes::kAllOnesIsNan:
      if (exp_field == spec.MaxExponentField() && mant == spec.MantissaMask()) {
        u.value_class = ValueClass::kNan;
        u.nan_payload = m == 0 ? single_nan_payload : mant << (64 - m);
        return u;
      }
      break;
    case SpecialCodes::kNegativeZeroIsNan:
      if (code == spec.SignBit()) {
        u.value_class = ValueClass::kNan;
        u.negative = false;  // the NaN's "sign bit" is its whole identity
        u.nan_payload = single_nan_payload;
        return u;
      }
      break;
    case SpecialCodes::kNone:
      break;
  }
  if (exp_field == 0 && spec.has_subnormals) {
    if (mant == 0) {
      u.value_class = ValueClass::kZero;
      return u;
    }
    u.value_class = ValueClass::kFinite;
    u.significand = mant;
    u.exponent = spec.MinNormalExponent() - m;
    return u;
  }
  u.value_class = ValueClass::kFinite;
  u.significand = mant | (std::uint64_t{1} << m);
  u.exponent = exp_field - spec.bias - m;
  return u;
}

}  // namespace lowbit
