// Decode tables for formats of at most 8 bits, generated from the model
// (issue 4: "decode <= 8-bit formats with table lookups generated from the
// model"): entry c is DecodeToF32Bits / the BF16 decode of code c under the
// given NaN policy. Built once, on first use, for every policy.
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

}  // namespace lowbit::simd
