// EncodePlan: everything an array encode needs besides the input, computed
// once per call from the scalar model so that the vector code does only the
// rounding arithmetic (round_pack.h steps 5-7) and selects between constants
// for the special cases (steps 1-4 and 8), all of them taken from the model
// itself rather than re-derived.
#pragma once

#include <cstdint>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/policy.h"

namespace lowbit::simd {

enum class PlanKind : std::uint8_t {
  kFloat,       // a float destination with subnormals (BF16 ... E2M1, UE4M3)
  kPowerOfTwo,  // E8M0: no zero, no subnormals, exponent field 0 = 2^-127
  kInteger,     // INT8, INT4, UINT4
  kIdentity,    // FP32 -> FP32: only NaN, Inf, zero and sign policies apply
  // A float destination with at most 7 non-zero magnitudes (E2M1) and a
  // deterministic mode: the magnitude code is the number of thresholds at or
  // below |x| (FP32 bits of non-negative values order like the values).
  kThreshold,
};

inline constexpr int kMaxThresholds = 7;
// The range of EncodePlan::cell_code: FP32 bits of 2^-3 and of 2^4.
inline constexpr std::uint32_t kCellLow = 0x3E000000u;
inline constexpr std::uint32_t kCellHigh = 0x41800000u;
inline constexpr int kCellShift = 21;

struct EncodePlan {
  PlanKind kind = PlanKind::kFloat;
  RoundingMode rounding = RoundingMode::kNearestEven;
  // Floats: stored mantissa bits m, and the FP32 exponent field of the
  // destination's smallest normal (min_normal_exponent + 127).
  std::uint32_t mantissa_bits = 0;
  std::uint32_t min_normal_field32 = 0;
  // Floats: FP32 exponent fields min_normal_field32 .. + normal_field_span
  // hold the destination's normal binades (the fast path's range).
  std::uint32_t normal_field_span = 0;
  std::uint32_t max_code = 0;    // largest finite magnitude code (sign clear)
  std::uint32_t sign_code = 0;   // the destination's sign bit, 0 if unsigned
  // Step 4: a zero result (or input) that is negative / that is positive.
  std::uint32_t zero_negative = 0;
  std::uint32_t zero_positive = 0;
  // Step 1: NaN codes per input sign; when nan_payload_shift >= 0 the input's
  // mantissa >> nan_payload_shift is OR-ed in (NanPayload::kTruncate), or,
  // when nan_preserve_quiet != 0 (NanPayload::kPreserve), OR-ed in if it is
  // non-zero and nan_preserve_quiet is OR-ed in otherwise.
  std::uint32_t nan_positive = 0;
  std::uint32_t nan_negative = 0;
  int nan_payload_shift = -1;
  std::uint32_t nan_preserve_quiet = 0;
  // Step 2 and 8: Inf inputs and finite overflow, per sign.
  std::uint32_t inf_positive = 0;
  std::uint32_t inf_negative = 0;
  std::uint32_t overflow_positive = 0;
  std::uint32_t overflow_negative = 0;
  // The overflow codes are the magnitude max_code or max_code + 1 (E4M3's
  // NaN, E5M2's Inf, a saturated result) with the sign bit OR-ed in: then
  // step 8 of a normal result is min(magnitude, overflow_positive) | sign.
  bool overflow_by_min = false;
  // Step 3: negative non-zero input into an unsigned format.
  bool negative_as_magnitude = false;  // use |x|
  std::uint32_t negative_code = 0;     // else this code
  // Integers: largest magnitude per sign, code mask, wrap instead of saturate.
  std::uint32_t int_limit_positive = 0;
  std::uint32_t int_limit_negative = 0;
  std::uint32_t code_mask = 0;
  bool wrap = false;
  // kThreshold: threshold[sign][k - 1] is the smallest |x| (FP32 bits) whose
  // code has magnitude >= k, found by bisection on the model.
  std::uint32_t threshold[2][kMaxThresholds] = {};
  // kThreshold, sign-symmetric modes: the magnitude code as a table lookup
  // on |x| in [2^-3, 2^4), when every finite threshold lies there and at a
  // quarter-binade start P (FP32 bits, a multiple of 2^21) or at P + 1, so
  // that within a quarter binade only the start itself can differ from the
  // rest. Index: bits 21..26 of |x| (the field mod 16 and the top two
  // mantissa bits; the 32 quarter binades of [2^-3, 2^4) give 32 distinct
  // values), with bit 5 flipped when bits 0..20 are zero (the start itself),
  // which gives the other 32. Below 2^-3 the code is that of 2^-3 (no
  // threshold lies below).
  bool has_cell_codes = false;
  std::uint8_t cell_code[64] = {};
  // Stochastic rounding: random bits used per element (1..31).
  std::uint32_t random_bit_count = 0;
};

// The plan for encoding FP32 bits (or exactly widened BF16/FP16 bits) into
// `dst` under `options`. `dst` is any format but FP64.
EncodePlan MakeEncodePlan(const FormatSpec& dst, const EncodeOptions& options);

}  // namespace lowbit::simd
