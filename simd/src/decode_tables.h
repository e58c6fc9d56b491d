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

}  // namespace lowbit::simd
