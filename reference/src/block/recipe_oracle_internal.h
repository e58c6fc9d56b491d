// What recipe_oracle.cc shares with the three scale-rule files of the oracle
// (mx_oracle.cc, nvfp4_oracle.cc, scaled_oracle.cc). Internal to
// lowbit::reference.
#pragma once

#include <cstdint>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/reference/block/fp32_arith.h"
#include "lowbit/reference/block/recipe_oracle.h"
#include "lowbit/reference/exact_value.h"

namespace lowbit::reference::block::internal {

// Statistics of a block or group: min and max as torch.amin / torch.amax (a
// NaN wins), amax = max |x| from +0 by the recipe's NaN rule (Recipe::amax_nan:
// torch.amax lets a NaN win, CUDA fmaxf skips it).
struct GroupStats {
  F32 min, max, amax;
};

// The largest finite magnitude of a format, read off its values
// (ExactValue of every code): E4M3 448, E5M2 57344, E2M1 6, UE4M3 448, INT8 127.
Rational LargestFinite(const FormatSpec& format);

// The largest element magnitude of a recipe: the float element's largest
// value, or qmax * 2^implied_exponent for integer MX elements (MXINT8 127/64,
// docs/formats-reference.md §5.2). Scaled integer recipes: qmax.
Rational ElementMax(const recipe::Recipe& r);

F32 Bits(std::uint32_t bits);  // F32FromBits
F32 FltMax();                  // the largest finite FP32 value (FLT_MAX)

// ---- the scale rules, one file per family ------------------------------------

// mx_oracle.cc: the E8M0 scale of a block from its amax (Recipe::scale_rule
// kMxFloor .. kMxNearest), and the factor of Recipe::element_step.
OracleScale MxScale(const recipe::Recipe& r, const F32& amax);
// The scale of a stored E8M0 byte.
OracleScale MxStoredScale(const recipe::Recipe& r, std::uint8_t code);

// nvfp4_oracle.cc: the FP32 tensor scale from the tensor's amax
// (Recipe::tensor_scale), and the UE4M3 block scale (kNvfp4Te, kNvfp4Torchao,
// kNvfp4ModelOpt) under it.
OracleTensorScale Nvfp4TensorScale(const recipe::Recipe& r, const F32& tensor_amax);
OracleScale Nvfp4Scale(const recipe::Recipe& r, const OracleTensorScale& t, const F32& amax);

// scaled_oracle.cc: the FP32 scale (and zero point) of a group (kTeFp8,
// kAoSymmetric, kAoAsymmetric, kGptqSymmetric, kGptqAsymmetric,
// kAmaxOverQmax).
OracleScale ScaledScale(const recipe::Recipe& r, const GroupStats& s);

// FP16 arithmetic (scaled_oracle.cc): torch .half() of an FP32 value, and
// one +, -, *, / of FP16 operands rounded once to FP16, as F32 values.
F32 HalfOf(const F32& v);
F32 HalfAdd(const F32& a, const F32& b);
F32 HalfSub(const F32& a, const F32& b);
F32 HalfMul(const F32& a, const F32& b);
F32 HalfDiv(const F32& a, const F32& b);

// An integer result of torch.round / C roundf, which may be Inf or NaN.
struct Integer {
  ExactClass value_class = ExactClass::kFinite;  // kFinite, kInf or kNan
  bool negative = false;
  BigInt value;  // kFinite
};
// docs/formats-reference.md §8.1: torch.round half-even, C roundf half-away.
Integer RoundToInteger(const F32& v, RoundingMode mode);

}  // namespace lowbit::reference::block::internal
