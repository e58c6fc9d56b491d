// Decode tables for formats of at most 8 bits, generated from the model
// (never retyped): entry c is DecodeToF32Bits / the BF16 decode of code c
// under the given NaN policy. Built once, on first use, for every policy.
#pragma once

#include <cstdint>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/policy.h"

namespace lowbit::simd {

inline constexpr int kDecodeTableSize = 256;

// The table for `format` (total_bits <= 8): FP32 bits, or BF16 bits in the
// low half when `to_bf16`. Entries past 2^total_bits repeat the masked code.
const std::int32_t* DecodeTable(FormatId format, bool to_bf16, const DecodeOptions& options);

// The same table split into 16-bit halves, for in-register lookups
// (convert-inl.h DecodeNarrowLoop): entry c is high[c] << 16 | low[c] for
// FP32, and low[c] alone for BF16 (high all zero). `planes` holds each half's
// bytes as 256-byte planes: low half's low bytes, its high bytes, then the
// high half's. `high_zero` / `low_zero` say that a half is zero in every entry
// (BF16 tables; FP32 tables except where a NaN payload fills the low mantissa
// bits, NanPayload::kAllOnes), so its lookups can be left out.
struct NarrowDecodeTable {
  const std::uint16_t* low;      // 256
  const std::uint16_t* high;     // 256
  const std::uint8_t* planes;    // 4 x 256
  bool low_zero;
  bool high_zero;
};
NarrowDecodeTable DecodeTableNarrow(FormatId format, bool to_bf16, const DecodeOptions& options);

// An FP32 decode of a <= 8-bit float format by arithmetic instead of a
// table lookup (convert-inl.h DecodeArithmeticLoop, the targets without
// AVX-512's register tables). A normal code's magnitude bits placed under
// FP32's exponent and mantissa fields plus (127 - bias) in the exponent field
// are its FP32 bits; a subnormal code's mantissa m is m * 2^(1 - bias -
// mantissa bits), an integer conversion and a multiply by a power of two,
// both exact and with no subnormal operand (x86 multiplies subnormal
// operands through a slow microcode assist); the sign bit is ORed in. Codes
// where that differs from the model's table (NaN and Inf codes, a policy's
// NaN bits, FNUZ's 0x80) take the table's own entry: every magnitude >=
// top_first from `top` (at most 16 of them per sign), and `odd_code` (one
// more code, any magnitude) `odd_value`. Built from the model's table and
// checked against it on every code when the table is built
// (decode_tables.cc); null for a format where that leaves more than those
// codes to the table.
struct ArithmeticDecode {
  std::uint32_t code_mask;       // the format's CodeMask
  std::uint32_t magnitude_mask;  // code bits below the sign
  int sign_shift;                // the sign bit's position in a code; -1 when unsigned
  int mantissa_shift;            // 23 - mantissa bits
  std::uint32_t exponent_offset;  // (127 - bias) << 23, added to a normal code's shifted bits
  std::uint32_t subnormal_limit;  // 2^mantissa bits: magnitudes below it are subnormal (or 0)
  float subnormal_scale;          // 2^(1 - bias - mantissa bits)
  std::uint32_t top_first;       // >= 1; magnitude_mask + 1 when no code takes `top`
  alignas(64) std::int32_t top[32];  // [sign * 16 + magnitude - top_first]: table entries
  std::uint32_t odd_code;            // > 255 when none
  std::int32_t odd_value;
};
const ArithmeticDecode* DecodeArithmetic(FormatId format, const DecodeOptions& options);

}  // namespace lowbit::simd
