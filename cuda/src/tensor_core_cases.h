// Generated operand sets for the tensor-core sweep, reproducible on host and
// device from (cases, seed, set, element): a counter-based generator, so the
// GPU draws 10^6 sets without storing them and a mismatch can be redrawn on
// the host. Each family aims at one place where a description of the
// arithmetic could be wrong (docs/tensor-cores.md "Verified on the hardware").
#pragma once

#include <cstdint>

#include "lowbit/cuda/tensor_core.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::cuda::tensor_core_cases {

// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014) over a counter.
LOWBIT_HD_CONSTEXPR std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

LOWBIT_HD_CONSTEXPR std::uint64_t Draw(std::uint64_t seed, std::int64_t set, std::uint32_t slot) {
  return Mix(Mix(seed ^ Mix(static_cast<std::uint64_t>(set))) + slot);
}

// Where an element sits: multiplicand A, multiplicand B, or the accumulator.
enum class Role : std::uint32_t { kA = 0, kB = 1, kC = 2 };

LOWBIT_HD_CONSTEXPR std::uint32_t Slot(Role role, int index, int salt = 0) {
  return (static_cast<std::uint32_t>(role) << 28) | (static_cast<std::uint32_t>(salt) << 24) |
         static_cast<std::uint32_t>(index);
}

// A float code from fields (exponent field clamped to the finite range).
LOWBIT_HD_CONSTEXPR std::uint32_t FloatCode(const FormatSpec& f, bool negative, int exponent_field,
                                            std::uint64_t mantissa) {
  const int top = f.MaxFiniteExponentField();
  exponent_field = exponent_field < 0 ? 0 : (exponent_field > top ? top : exponent_field);
  std::uint64_t code = (static_cast<std::uint64_t>(exponent_field) << f.mantissa_bits) |
                       (mantissa & f.MantissaMask());
  if ((code & ~f.SignBit()) > f.MaxFiniteCode()) code = f.MaxFiniteCode();
  return static_cast<std::uint32_t>(code | (negative ? f.SignBit() : 0));
}

// The set's per-set parameters (window of exponents, C's offset, ...).
struct SetShape {
  int window;       // width of the exponent window, in fields
  int center_a;     // exponent field of A's window centre
  int center_b;
  int c_offset;     // C's exponent relative to the products' (unbiased)
  int mantissa_bias;  // 0 random, 1 all ones, 2 zero
};

LOWBIT_HD_CONSTEXPR SetShape ShapeOf(const TensorCoreInstruction& inst, std::uint64_t seed, std::int64_t set) {
  const std::uint64_t r = Draw(seed, set, 0xFFFFFFu);
  constexpr int kWindows[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64};
  SetShape s{};
  s.window = kWindows[r % 12];
  const int max_a = inst.a.code_format.MaxFiniteExponentField();
  const int max_b = inst.b.code_format.MaxFiniteExponentField();
  // Centres near the middle of each range (products stay finite), spread by
  // a quarter of the range.
  s.center_a = max_a / 2 + static_cast<int>((r >> 8) % (max_a / 4 + 1)) - max_a / 8;
  s.center_b = max_b / 2 + static_cast<int>((r >> 16) % (max_b / 4 + 1)) - max_b / 8;
  s.c_offset = static_cast<int>((r >> 24) % 81) - 40;
  s.mantissa_bias = static_cast<int>((r >> 40) % 8);  // 0: ones, 1: zeros, else random
  return s;
}

LOWBIT_HD_CONSTEXPR std::uint64_t Mantissa(int bias, std::uint64_t r) {
  return bias == 0 ? ~std::uint64_t{0} : (bias == 1 ? 0 : r);
}

// A multiplicand code of `role` at `index` (0 .. rows*k) for the set.
LOWBIT_HD_CONSTEXPR std::uint32_t MultiplicandCode(const TensorCoreInstruction& inst, TensorCoreCases cases,
                                                   std::uint64_t seed, std::int64_t set, Role role,
                                                   int index) {
  const TensorCoreOperand& op = role == Role::kA ? inst.a : inst.b;
  const FormatSpec& f = op.code_format;
  const std::uint64_t r = Draw(seed, set, Slot(role, index));
  const bool negative = (r >> 63) != 0;
  if (!f.IsFloat()) {  // INT8
    switch (cases) {
      case TensorCoreCases::kCarries:
      case TensorCoreCases::kOverflow:
        return (r & 1) ? 0x80u : 0x7Fu;  // -128 and 127: the largest products
      case TensorCoreCases::kSignedZeros:
        return 0;
      default:
        return static_cast<std::uint32_t>(r & 0xFF);
    }
  }
  const SetShape s = ShapeOf(inst, seed, set);
  const int center = role == Role::kA ? s.center_a : s.center_b;
  const int offset = s.window == 0 ? 0 : static_cast<int>((r >> 8) % (s.window + 1)) - s.window / 2;
  const std::uint64_t mantissa = Mantissa(s.mantissa_bias, r >> 20);
  switch (cases) {
    case TensorCoreCases::kRandomCodes:
      return static_cast<std::uint32_t>(r & f.CodeMask());
    case TensorCoreCases::kExponentSpread:
      return FloatCode(f, negative, center + offset, mantissa);
    case TensorCoreCases::kCancellation: {
      // Row/column element i and i^1 of A hold x and -x (up to the low
      // mantissa bits); B holds the same value at i and i^1, so the two
      // products cancel but for a few low bits.
      const int partner = index & ~1;
      const std::uint64_t rp = Draw(seed, set, Slot(role, partner));
      const std::uint64_t m = (rp >> 20) ^ ((index & 1) && role == Role::kA ? (r & 3) : 0);
      const bool neg = ((rp >> 63) != 0) != ((index & 1) && role == Role::kA);
      return FloatCode(f, neg, center + static_cast<int>((rp >> 8) % (s.window + 1)) - s.window / 2, m);
    }
    case TensorCoreCases::kCarries:
      return FloatCode(f, (s.mantissa_bias & 1) != 0, center, ~std::uint64_t{0});
    case TensorCoreCases::kSubnormals:
      return FloatCode(f, negative, static_cast<int>(r % 3), r >> 20);  // fields 0, 1, 2
    case TensorCoreCases::kSpecials: {
      const int which = static_cast<int>((r >> 2) % 32);
      const std::uint64_t inf = static_cast<std::uint64_t>(f.MaxExponentField()) << f.mantissa_bits;
      const std::uint32_t sign = negative ? static_cast<std::uint32_t>(f.SignBit()) : 0u;
      switch (which) {
        case 0: return sign;                                              // +-0
        case 1: if (f.HasInf()) return sign | static_cast<std::uint32_t>(inf); return sign;
        case 2: if (f.HasNan()) return static_cast<std::uint32_t>(inf | f.MantissaMask()) | sign; return sign;
        case 3: if (f.HasInf()) return static_cast<std::uint32_t>(inf | 1) | sign; return sign;  // NaN, low payload
        case 4: return sign | static_cast<std::uint32_t>(f.MaxFiniteCode());
        case 5: return sign | 1u;                                         // smallest subnormal
        default: return FloatCode(f, negative, center + offset, mantissa);
      }
    }
    case TensorCoreCases::kSignedZeros:
      return negative ? static_cast<std::uint32_t>(f.SignBit()) : 0u;
    case TensorCoreCases::kOverflow:
      return FloatCode(f, negative && (r & 1), f.MaxFiniteExponentField() - static_cast<int>((r >> 8) % 3), mantissa);
  }
  return 0;
}

// C's code at `index` (0 .. m*n).
LOWBIT_HD_CONSTEXPR std::uint32_t AccumulatorCode(const TensorCoreInstruction& inst, TensorCoreCases cases,
                                                  std::uint64_t seed, std::int64_t set, int index) {
  const FormatSpec& f = inst.arithmetic.accumulator;
  const std::uint64_t r = Draw(seed, set, Slot(Role::kC, index));
  const bool negative = (r >> 63) != 0;
  if (!f.IsFloat()) {
    if (cases == TensorCoreCases::kOverflow || cases == TensorCoreCases::kCarries) {
      return (r & 1) ? 0x80000000u : 0x7FFFFFFFu;  // wrap-around on the next addition
    }
    return cases == TensorCoreCases::kSignedZeros ? 0u : static_cast<std::uint32_t>(r);
  }
  const SetShape s = ShapeOf(inst, seed, set);
  const int product_exponent = (s.center_a - inst.a.code_format.bias) + (s.center_b - inst.b.code_format.bias);
  const int field = product_exponent + f.bias + s.c_offset;
  switch (cases) {
    case TensorCoreCases::kRandomCodes:
      return static_cast<std::uint32_t>(r & f.CodeMask());
    case TensorCoreCases::kCancellation:
      // Near minus the first product pair's size: cancels most of the sum.
      return FloatCode(f, !negative, product_exponent + f.bias + static_cast<int>(r % 5) - 2, r >> 8);
    case TensorCoreCases::kCarries:
      return FloatCode(f, (s.mantissa_bias & 1) != 0, product_exponent + f.bias + 4 + static_cast<int>(r % 3), ~std::uint64_t{0});
    case TensorCoreCases::kSubnormals:
      return (r & 1) ? FloatCode(f, negative, 0, r >> 8) : (negative ? static_cast<std::uint32_t>(f.SignBit()) : 0u);
    case TensorCoreCases::kSignedZeros:
      return negative ? static_cast<std::uint32_t>(f.SignBit()) : 0u;
    case TensorCoreCases::kOverflow:
      return FloatCode(f, negative && (r & 2), f.MaxFiniteExponentField() - static_cast<int>((r >> 8) % 2), r >> 16);
    case TensorCoreCases::kSpecials:
      if ((r & 15) == 0) return static_cast<std::uint32_t>((static_cast<std::uint64_t>(f.MaxExponentField()) << f.mantissa_bits) | (negative ? f.SignBit() : 0));
      [[fallthrough]];
    case TensorCoreCases::kExponentSpread:
      return FloatCode(f, negative, field, r >> 8);
  }
  return 0;
}

}  // namespace lowbit::cuda::tensor_core_cases
