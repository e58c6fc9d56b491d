// FP32 arithmetic for the block oracle, written from IEEE 754-2019 §4.3 and
// §7 as exact rational operations followed by one round-to-nearest-even into
// binary32, decided by comparing exact values (never by casting a rational
// to float: Boost 1.74 misrounds subnormals, docs/design.md "Known traps
// (measured)"). The recipes' FP32 operation order is re-stated with these in
// mx_oracle.cc, nvfp4_oracle.cc and scaled_oracle.cc; nothing here is shared
// with the model.
#pragma once

#include <cstdint>

#include "lowbit/reference/exact_value.h"

namespace lowbit::reference::block {

// An FP32 datum as an Exact (value class, sign, magnitude). NaN results are
// +NaN: no recipe output here depends on a NaN's sign (each conversion of a
// NaN picks its own sign by policy).
using F32 = Exact;

F32 F32FromBits(std::uint32_t bits);
F32 F32FromFloat(float x);
std::uint32_t F32ToBits(const F32& x);  // x must already be an FP32 value

// The FP32 value nearest to the exact `value` (ties to even), IEEE overflow to
// Inf (|value| >= 2^128 - 2^103).
F32 RoundToF32(const Exact& value);

// An exact constant as an F32 (the caller knows it is an FP32 value, or
// rounds it with RoundToF32).
F32 F32Constant(const Rational& value);
F32 F32Nan();

F32 F32Mul(const F32& a, const F32& b);
F32 F32Div(const F32& a, const F32& b);
// IEEE 754 §6.1 / §6.3 addition: Inf - Inf is NaN; an exact zero sum is +0
// (round to nearest), -0 only for (-0) + (-0).
F32 F32Add(const F32& a, const F32& b);
F32 F32Sub(const F32& a, const F32& b);
F32 F32Negate(F32 x);  // the sign flipped (a NaN stays +NaN)
F32 F32Abs(F32 x);
// fminf / fmaxf: a NaN operand is ignored (IEEE 754-2008 minNum / maxNum).
F32 F32Min(const F32& a, const F32& b);
F32 F32Max(const F32& a, const F32& b);
// torch.minimum / torch.maximum (and amin / amax): a NaN operand wins.
F32 TorchMin(const F32& a, const F32& b);
F32 TorchMax(const F32& a, const F32& b);
// torch.clamp(x, lo, hi): NaN passes through.
F32 TorchClamp(const F32& x, const F32& lo, const F32& hi);
bool F32IsNan(const F32& x);
bool F32IsInf(const F32& x);
bool F32IsZero(const F32& x);
// a < b for non-NaN values (signed comparison).
bool F32Less(const F32& a, const F32& b);

// Largest k with 2^k <= q, for q > 0, by exact comparison.
int FloorLog2(const Rational& q);

}  // namespace lowbit::reference::block
