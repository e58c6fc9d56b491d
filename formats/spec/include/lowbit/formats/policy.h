// Encoding policy: how a value becomes a code. Every choice that real
// implementations make differently is an explicit argument here, never a type
// (docs/design.md "Encoding is not policy"). Profiles (profiles.h) bundle them.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/rounding_mode_list.h"

namespace lowbit {

// RoundingMode: one row per mode, with its name, in rounding_mode_list.h.

// What happens when the rounded magnitude exceeds the largest finite value.
enum class Overflow : std::uint8_t {
  // The format's own rule, IEEE 754 §7.4 generalised: modes that would round
  // an overflow away from zero give Inf; a format without Inf gives its NaN
  // (OCP E4M3 non-saturating mode, ml_dtypes, PyTorch <= 2.12); a format
  // without NaN or Inf (FP6, FP4, integers) saturates, since it has no other
  // choice (OCP MX §5.3.3, CUDA cuda_fp6.h / cuda_fp4.h). Modes that round
  // toward zero on that side (RZ, kDown for positives, kUp for negatives,
  // kOdd) give the largest finite value, as IEEE 754 §7.4 says.
  kFormatDefault,
  // Clamp to +-max finite (PTX .satfinite, CUDA __NV_SATFINITE).
  kSaturate,
  // Integers only: keep the low total_bits of the rounded integer (two's
  // complement wrap), as ml_dtypes' int4 casts do (docs/formats-reference.md §8.1).
  kWrap,
};

// An infinite input, when the policy is saturating. kLikeOverflow treats it as
// an overflow (PTX .satfinite maps +-Inf to +-max, docs/formats-reference.md §4.1-4.2).
// kAlwaysNonFinite gives Inf, or NaN where the format has no Inf, even when
// saturating (ml_dtypes with kSaturate=true, docs/formats-reference.md §4.1).
enum class InfInput : std::uint8_t { kLikeOverflow, kAlwaysNonFinite };

// The sign of a NaN result.
enum class NanSign : std::uint8_t {
  kKeep,      // the input's sign (IEEE 754 §6.3 recommends it)
  kPositive,  // NVIDIA hardware and CUDA headers (docs/formats-reference.md §9 rows 2, 5)
  kNegative,  // PyTorch 2.11 CPU FP32->BF16 gives 0xFFFF for every NaN (§3.2)
};

// The significand of a NaN result, for formats that have more than one NaN.
enum class NanPayload : std::uint8_t {
  kAllOnes,    // every mantissa bit set: 0x7FFF (BF16/FP16), 0x7F (E5M2), 0x7FFFFFFF
  kQuietOnly,  // only the quiet bit (mantissa MSB): 0x7FC0 (BF16), 0x7E (E5M2)
  kTruncate,   // the input's payload, MSB-aligned and cut or widened to the
               // destination's width, with the quiet bit forced on
  kPreserve,   // the same bits as kTruncate but the quiet bit left as it was,
               // so a signalling NaN stays signalling: BF16 -> FP32 as an exact
               // bit shift (PTX cvt.f32.bf16 on sm_90 [HW-verified], CUDA host
               // __internal_bfloat162float, c10::BFloat16; docs/formats-reference.md §3.2).
               // If no payload bit survives (narrowing), the quiet bit is set
               // so that the result is still a NaN.
};

// A NaN input into a format that has no NaN (FP6, FP4, integers).
enum class NanIntoNoNan : std::uint8_t {
  kPositiveMax,       // PTX .satfinite for e2m1/e2m3/e3m2: "positive MAX_NORM"
  kPositiveZero,      // PTX cvt.rni to integers (NaN -> 0); TE's FP4 reference
  kOppositeSignZero,  // ml_dtypes 0.6 float4/float6: +NaN -> -0, -NaN -> +0
};

// Zero into a format that has no zero (E8M0).
enum class ZeroIntoNoZero : std::uint8_t {
  kMinPositive,  // NVIDIA: results below 2^-127 clip to 2^-127 (code 0x00)
  kNan,          // ml_dtypes: 0 -> NaN
};

// A negative non-zero input into an unsigned format (E8M0, UE4M3, UINT4).
enum class NegativeIntoUnsigned : std::uint8_t {
  kMagnitude,  // use |x| (NVIDIA E8M0, PyTorch E8M0)
  kNan,        // NaN where the format has one (ml_dtypes E8M0); else clamp to 0
  kClampZero,  // clamp to 0 (UE4M3 by construction, integer saturation)
};

// Flags returned beside every code (IEEE 754 §7 names).
enum Flag : std::uint8_t {
  kFlagNone = 0,
  kFlagInexact = 1,    // the code's value differs from the input's
  kFlagUnderflow = 2,  // tiny (non-zero, below the smallest normal, before
                       // rounding) and inexact
  kFlagOverflow = 4,   // rounded magnitude exceeded the largest finite value
  kFlagInvalid = 8,    // NaN into a format without NaN; NaN/Inf into an integer;
                       // a negative or zero into a format that cannot hold it
};

// How a recipe reduces |x| over a block, group or tensor: a NaN element wins
// (torch.amax: torchao, microxcaling, ModelOpt) or is skipped (CUDA fmaxf /
// __hmax: TransformerEngine kernels); docs/formats-reference.md §5.3.
enum class AmaxNan : std::uint8_t {
  kPropagate,
  kIgnore,
};

struct EncodeOptions {
  RoundingMode rounding = RoundingMode::kNearestEven;
  Overflow overflow = Overflow::kFormatDefault;
  InfInput inf_input = InfInput::kLikeOverflow;
  NanSign nan_sign = NanSign::kKeep;
  NanPayload nan_payload = NanPayload::kTruncate;
  NanIntoNoNan nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  bool keep_negative_zero = true;  // false: -0 (and negatives rounding to 0) -> +0
  ZeroIntoNoZero zero_into_no_zero = ZeroIntoNoZero::kMinPositive;
  NegativeIntoUnsigned negative_into_unsigned = NegativeIntoUnsigned::kNan;
  // Stochastic rounding. The low `random_bit_count` bits of random_bits are
  // used (0 picks DefaultRandomBitCount of the destination); see round_pack.h.
  std::uint32_t random_bits = 0;
  int random_bit_count = 0;
};

struct EncodeResult {
  std::uint64_t code = 0;
  std::uint8_t flags = kFlagNone;
};

// The policy for reading a code back to FP32/FP64: only NaN shape varies.
struct DecodeOptions {
  NanSign nan_sign = NanSign::kKeep;
  NanPayload nan_payload = NanPayload::kTruncate;
};

}  // namespace lowbit
