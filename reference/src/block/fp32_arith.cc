// IEEE 754 binary32 operations as exact rationals plus one rounding
// (IEEE 754-2019 §4.3.1 roundTiesToEven, §7.4 overflow, §6.1 Inf arithmetic,
// §7.2 invalid operations -> NaN).
#include "lowbit/reference/block/fp32_arith.h"

#include <cstdint>
#include <utility>

#include "lowbit/formats/format_list.h"

namespace lowbit::reference::block {
namespace {

F32 Nan() {
  F32 x;
  x.value_class = ExactClass::kNan;
  x.nan_payload = std::uint64_t{1} << 63;
  return x;
}

F32 Inf(bool negative) {
  F32 x;
  x.value_class = ExactClass::kInf;
  x.negative = negative;
  return x;
}

F32 Zero(bool negative) {
  F32 x;
  x.negative = negative;
  return x;
}

}  // namespace

int FloorLog2(const Rational& q) {
  // Start from the bit lengths of numerator and denominator, then correct.
  const BigInt num = boost::multiprecision::numerator(q);
  const BigInt den = boost::multiprecision::denominator(q);
  int k = static_cast<int>(boost::multiprecision::msb(num)) -
          static_cast<int>(boost::multiprecision::msb(den));
  while (PowerOfTwo(k) > q) --k;
  while (PowerOfTwo(k + 1) <= q) ++k;
  return k;
}

F32 F32Nan() { return Nan(); }

F32 F32Constant(const Rational& value) { return ExactFromRational(value); }

F32 F32FromBits(std::uint32_t bits) { return ExactValue(kFp32, bits); }

F32 F32FromFloat(float x) {
  std::uint32_t bits;
  static_assert(sizeof bits == sizeof x);
  __builtin_memcpy(&bits, &x, sizeof bits);
  return F32FromBits(bits);
}

bool F32IsNan(const F32& x) { return x.value_class == ExactClass::kNan; }
bool F32IsInf(const F32& x) { return x.value_class == ExactClass::kInf; }
bool F32IsZero(const F32& x) { return x.value_class == ExactClass::kZero; }

F32 RoundToF32(const Exact& value) {
  if (value.value_class != ExactClass::kFinite) return value;
  // binary32: 24-bit significands, emin = -126, subnormal quantum 2^-149.
  const int e = FloorLog2(value.magnitude);
  const int quantum_exponent = (e < -126 ? -126 : e) - 23;
  const Rational scaled = value.magnitude / PowerOfTwo(quantum_exponent);
  BigInt n = boost::multiprecision::numerator(scaled) / boost::multiprecision::denominator(scaled);
  const Rational rest = scaled - Rational(n);
  const Rational half(1, 2);
  if (rest > half || (rest == half && (n & 1) != 0)) n += 1;
  if (n == 0) return Zero(value.negative);
  const Rational rounded = Rational(n) * PowerOfTwo(quantum_exponent);
  if (rounded >= PowerOfTwo(128)) return Inf(value.negative);
  F32 out;
  out.value_class = ExactClass::kFinite;
  out.negative = value.negative;
  out.magnitude = rounded;
  return out;
}

std::uint32_t F32ToBits(const F32& x) {
  const std::uint32_t sign = x.negative ? 0x80000000u : 0u;
  switch (x.value_class) {
    case ExactClass::kNan:
      return 0x7FC00000u;
    case ExactClass::kInf:
      return sign | 0x7F800000u;
    case ExactClass::kZero:
      return sign;
    case ExactClass::kFinite:
      break;
  }
  const int e = FloorLog2(x.magnitude);
  if (e < -126) {
    const Rational n = x.magnitude / PowerOfTwo(-149);
    return sign | static_cast<std::uint32_t>(boost::multiprecision::numerator(n));
  }
  const Rational significand = x.magnitude / PowerOfTwo(e - 23);  // in [2^23, 2^24)
  const std::uint32_t n = static_cast<std::uint32_t>(boost::multiprecision::numerator(significand));
  return sign | (static_cast<std::uint32_t>(e + 127) << 23) | (n - (1u << 23));
}

F32 F32Mul(const F32& a, const F32& b) {
  const bool negative = a.negative != b.negative;
  if (F32IsNan(a) || F32IsNan(b)) return Nan();
  const bool a_inf = a.value_class == ExactClass::kInf;
  const bool b_inf = b.value_class == ExactClass::kInf;
  const bool a_zero = a.value_class == ExactClass::kZero;
  const bool b_zero = b.value_class == ExactClass::kZero;
  if ((a_inf && b_zero) || (b_inf && a_zero)) return Nan();
  if (a_inf || b_inf) return Inf(negative);
  if (a_zero || b_zero) return Zero(negative);
  Exact product;
  product.value_class = ExactClass::kFinite;
  product.negative = negative;
  product.magnitude = a.magnitude * b.magnitude;
  return RoundToF32(product);
}

F32 F32Div(const F32& a, const F32& b) {
  const bool negative = a.negative != b.negative;
  if (F32IsNan(a) || F32IsNan(b)) return Nan();
  const bool a_inf = a.value_class == ExactClass::kInf;
  const bool b_inf = b.value_class == ExactClass::kInf;
  const bool a_zero = a.value_class == ExactClass::kZero;
  const bool b_zero = b.value_class == ExactClass::kZero;
  if ((a_inf && b_inf) || (a_zero && b_zero)) return Nan();
  if (a_inf) return Inf(negative);
  if (b_inf || a_zero) return Zero(negative);
  if (b_zero) return Inf(negative);  // division by zero
  Exact quotient;
  quotient.value_class = ExactClass::kFinite;
  quotient.negative = negative;
  quotient.magnitude = a.magnitude / b.magnitude;
  return RoundToF32(quotient);
}

bool F32Less(const F32& a, const F32& b) {
  auto key = [](const F32& x) -> std::pair<int, Rational> {
    if (x.value_class == ExactClass::kInf) return {x.negative ? -1 : 1, Rational(0)};
    return {0, x.Signed()};
  };
  const auto ka = key(a);
  const auto kb = key(b);
  if (ka.first != kb.first) return ka.first < kb.first;
  return ka.second < kb.second;
}

F32 F32Min(const F32& a, const F32& b) {
  if (F32IsNan(a)) return b;
  if (F32IsNan(b)) return a;
  return F32Less(b, a) ? b : a;
}

}  // namespace lowbit::reference::block

namespace lowbit::reference::block {

F32 F32Max(const F32& a, const F32& b) {
  if (F32IsNan(a)) return b;
  if (F32IsNan(b)) return a;
  return F32Less(a, b) ? b : a;
}

F32 TorchMin(const F32& a, const F32& b) {
  if (F32IsNan(a)) return a;
  if (F32IsNan(b)) return b;
  return F32Less(b, a) ? b : a;
}

F32 TorchMax(const F32& a, const F32& b) {
  if (F32IsNan(a)) return a;
  if (F32IsNan(b)) return b;
  return F32Less(a, b) ? b : a;
}

F32 TorchClamp(const F32& x, const F32& lo, const F32& hi) {
  if (F32IsNan(x)) return x;
  if (F32Less(x, lo)) return lo;
  if (F32Less(hi, x)) return hi;
  return x;
}

F32 F32Negate(F32 x) {
  if (!F32IsNan(x)) x.negative = !x.negative;
  return x;
}

F32 F32Abs(F32 x) {
  x.negative = false;
  return x;
}

F32 F32Add(const F32& a, const F32& b) {
  if (F32IsNan(a) || F32IsNan(b)) return Nan();
  if (F32IsInf(a) && F32IsInf(b)) return a.negative == b.negative ? a : Nan();
  if (F32IsInf(a)) return a;
  if (F32IsInf(b)) return b;
  if (F32IsZero(a) && F32IsZero(b)) return Zero(a.negative && b.negative);
  return RoundToF32(ExactFromRational(a.Signed() + b.Signed()));
}

F32 F32Sub(const F32& a, const F32& b) { return F32Add(a, F32Negate(b)); }

}  // namespace lowbit::reference::block
