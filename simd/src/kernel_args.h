// What the non-target code hands a per-target kernel: plain pointers and a
// plan, already validated (convert.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "decode_tables.h"
#include "encode_plan.h"

namespace lowbit::simd {

// How input elements become FP32 bits: as they are, or widened exactly.
enum class InputKind : std::uint8_t { kF32, kBf16, kF16 };

struct EncodeJob {
  const EncodePlan* plan;
  InputKind input_kind;
  const void* input;
  void* output;
  int output_bytes;  // 1, 2 or 4: registry CodeBytes of the destination
  std::size_t count;
  const std::uint32_t* random_bits;  // kStochastic only
};

struct DecodeJob {
  const std::int32_t* table;  // decode_tables.h
  // The table's 16-bit halves (decode_tables.h DecodeTableNarrow): what the
  // in-register lookups of AVX-512 targets read.
  const std::uint16_t* narrow_low;
  const std::uint16_t* narrow_high;
  const std::uint8_t* narrow_planes;
  bool narrow_low_zero;  // FP32 output: every entry's low half is zero
  const std::uint8_t* codes;
  int code_bits;  // the format's total_bits (<= 8)
  void* output;
  int output_bytes;  // 4 (FP32) or 2 (BF16)
  std::size_t count;
  // FP32 output of a float format: the arithmetic decode that the targets
  // without register tables use instead of a gather; null when none applies.
  const ArithmeticDecode* arithmetic;
};

}  // namespace lowbit::simd
