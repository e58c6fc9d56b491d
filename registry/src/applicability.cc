// Which (operation, format) rows exist: the coverage contract of registry.h.
// (Operation names and buffer types are the kOperationInfo table in registry.h.)
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

bool BfloatHoldsExactly(const FormatSpec& spec) {
  // BF16 has 8 significant bits, normal exponents -126..127 and its last
  // subnormal place is 2^-133 (docs/formats-reference.md §1, row BF16).
  constexpr int kBf16Precision = 8;
  constexpr int kBf16MaxExponent = 127;
  constexpr int kBf16MinQuantum = -133;
  if (!spec.IsFloat()) {
    // Every integer of magnitude <= 2^8 is a BF16 value and 2^8 + 1 is not. A
    // signed n-bit format reaches 2^(n-1), an unsigned one 2^n - 1: both fit
    // exactly when their magnitude bits are at most 8.
    const int magnitude_bits = spec.has_sign ? spec.total_bits - 1 : spec.total_bits;
    return magnitude_bits <= kBf16Precision;
  }
  // From the largest finite code, not MaxFiniteExponentField(): E8M0's NaN
  // takes its whole top exponent field (0xFF), so its largest value is 2^127.
  const int max_exponent =
      static_cast<int>((spec.MaxFiniteCode() & ~spec.SignBit()) >> spec.mantissa_bits) -
      spec.bias;
  const int min_quantum = spec.MinNormalExponent() - spec.mantissa_bits;
  return spec.mantissa_bits + 1 <= kBf16Precision && max_exponent <= kBf16MaxExponent &&
         min_quantum >= kBf16MinQuantum;
}

bool OperationApplies(Operation operation, FormatId format) {
  if (static_cast<int>(format) >= kFormatCount) return false;
  if (format == FormatId::kFp64) return false;
  switch (operation) {
    case Operation::kEncodeF32:
    case Operation::kEncodeBf16:
    case Operation::kEncodeF16:
    case Operation::kDecodeToF32:
      return true;
    case Operation::kDecodeToBf16:
      return BfloatHoldsExactly(Spec(format));
  }
  return false;
}

}  // namespace lowbit::registry
