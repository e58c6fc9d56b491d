// The per-call constants of an encode, each one asked of the model
// (formats/convert.h) with a probe input of the right class, so that special
// cases can never drift from the scalar semantics.
#include "encode_plan.h"

#include <cassert>
#include <cstring>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/round_pack.h"

namespace lowbit::simd {
namespace {

// Probe inputs (FP32 bits). The NaN probes carry only the quiet bit, so that
// a kTruncate payload computed from them adds nothing the kernel's own
// payload OR would not add (the kernel ORs the input's mantissa back in).
constexpr std::uint32_t kPositiveQuietNan = 0x7FC00000;
constexpr std::uint32_t kNegativeQuietNan = 0xFFC00000;
constexpr std::uint32_t kPositiveInf = 0x7F800000;
constexpr std::uint32_t kNegativeInf = 0xFF800000;
constexpr std::uint32_t kPositiveZero = 0x00000000;
constexpr std::uint32_t kNegativeZero = 0x80000000;
constexpr std::uint32_t kMinusOne = 0xBF800000;
constexpr int kFp32MantissaBits = 23;
constexpr int kFp32Bias = 127;

std::uint32_t Code(const FormatSpec& dst, std::uint32_t bits, const EncodeOptions& o) {
  return static_cast<std::uint32_t>(EncodeF32Bits(dst, bits, o).code);
}

bool SameOptions(const EncodeOptions& a, const EncodeOptions& b) {
  return a.rounding == b.rounding && a.overflow == b.overflow && a.inf_input == b.inf_input &&
         a.nan_sign == b.nan_sign && a.nan_payload == b.nan_payload &&
         a.nan_into_no_nan == b.nan_into_no_nan && a.keep_negative_zero == b.keep_negative_zero &&
         a.zero_into_no_zero == b.zero_into_no_zero &&
         a.negative_into_unsigned == b.negative_into_unsigned &&
         a.random_bit_count == b.random_bit_count;  // random_bits: per element, not planned
}

bool SameSpec(const FormatSpec& a, const FormatSpec& b) {
  return std::strcmp(a.name, b.name) == 0 && a.kind == b.kind && a.total_bits == b.total_bits &&
         a.has_sign == b.has_sign && a.exponent_bits == b.exponent_bits &&
         a.mantissa_bits == b.mantissa_bits && a.bias == b.bias &&
         a.has_subnormals == b.has_subnormals && a.specials == b.specials;
}

EncodePlan BuildEncodePlan(const FormatSpec& dst, const EncodeOptions& o) {
  EncodePlan p;
  p.rounding = o.rounding;
  if (!dst.IsFloat()) {
    p.kind = PlanKind::kInteger;
  } else if (dst.total_bits == 32) {
    p.kind = PlanKind::kIdentity;
  } else if (!dst.has_subnormals) {
    // Only E8M0 lacks subnormals; the kernel's power-of-two path assumes its
    // layout (no mantissa, bias 127: code 0 = 2^-127, an FP32 subnormal).
    assert(dst.mantissa_bits == 0 && dst.bias == kFp32Bias);
    p.kind = PlanKind::kPowerOfTwo;
  }
  p.mantissa_bits = static_cast<std::uint32_t>(dst.IsFloat() ? dst.mantissa_bits : 0);
  p.min_normal_field32 =
      dst.IsFloat() ? static_cast<std::uint32_t>(dst.MinNormalExponent() + kFp32Bias) : 0;
  if (p.kind == PlanKind::kFloat) {
    p.normal_field_span =
        static_cast<std::uint32_t>(dst.MaxFiniteExponentField() - 1);  // fields 1 .. max
  }
  p.max_code = static_cast<std::uint32_t>(dst.MaxFiniteCode());
  p.sign_code = static_cast<std::uint32_t>(dst.SignBit());
  p.zero_positive = Code(dst, kPositiveZero, o);
  p.zero_negative = Code(dst, kNegativeZero, o);
  p.nan_positive = Code(dst, kPositiveQuietNan, o);
  p.nan_negative = Code(dst, kNegativeQuietNan, o);
  if (dst.IsFloat() && dst.specials == SpecialCodes::kIeee &&
      (o.nan_payload == NanPayload::kTruncate || o.nan_payload == NanPayload::kPreserve)) {
    p.nan_payload_shift = kFp32MantissaBits - dst.mantissa_bits;
    if (o.nan_payload == NanPayload::kPreserve) {
      // The probe's payload is the quiet bit alone; take it out of the base.
      p.nan_preserve_quiet = std::uint32_t{1} << (dst.mantissa_bits - 1);
      p.nan_positive &= ~p.nan_preserve_quiet;
      p.nan_negative &= ~p.nan_preserve_quiet;
    }
  }
  p.inf_positive = Code(dst, kPositiveInf, o);
  p.inf_negative = Code(dst, kNegativeInf, o);
  p.overflow_positive = static_cast<std::uint32_t>(detail::OverflowResult(dst, false, false, o).code);
  p.overflow_negative = static_cast<std::uint32_t>(detail::OverflowResult(dst, true, false, o).code);
  p.overflow_by_min = (p.overflow_positive == p.max_code || p.overflow_positive == p.max_code + 1) &&
                      p.overflow_negative == (p.overflow_positive | p.sign_code);
  if (!dst.has_sign) {
    p.negative_as_magnitude = o.negative_into_unsigned == NegativeIntoUnsigned::kMagnitude;
    p.negative_code = Code(dst, kMinusOne, o);
  }
  if (!dst.IsFloat()) {
    p.int_limit_positive = static_cast<std::uint32_t>(dst.IntMax());
    p.int_limit_negative = static_cast<std::uint32_t>(-dst.IntMin());
    p.code_mask = static_cast<std::uint32_t>(dst.CodeMask());
    p.wrap = o.overflow == Overflow::kWrap;
  }
  if (p.kind == PlanKind::kFloat && dst.MaxFiniteCode() <= kMaxThresholds &&
      o.rounding != RoundingMode::kStochastic) {
    // Every deterministic mode is monotone in |x| for each sign, so the
    // magnitude code steps up at one threshold per code.
    p.kind = PlanKind::kThreshold;
    const std::uint64_t magnitude_mask = dst.CodeMask() & ~dst.SignBit();
    for (int sign = 0; sign < 2; ++sign) {
      const std::uint32_t sign_bit = sign ? 0x80000000u : 0u;
      for (std::uint64_t k = 1; k <= kMaxThresholds; ++k) {
        // Finite inputs only (an Inf input is the kernel's step 2); the
        // answer lies in [lo, hi], hi = +Inf meaning "no finite input".
        std::uint64_t lo = 0, hi = kPositiveInf;
        while (lo < hi) {
          const std::uint64_t mid = (lo + hi) / 2;
          const std::uint64_t code =
              EncodeF32Bits(dst, sign_bit | static_cast<std::uint32_t>(mid), o).code;
          if ((code & magnitude_mask) >= k) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        p.threshold[sign][k - 1] = static_cast<std::uint32_t>(lo);
      }
    }
    p.has_cell_codes = o.rounding != RoundingMode::kUp && o.rounding != RoundingMode::kDown &&
                       o.rounding != RoundingMode::kNearestUp && o.rounding != RoundingMode::kNearestDown &&
                       p.zero_positive == 0 && p.zero_negative == p.sign_code;
    for (int k = 0; k < kMaxThresholds; ++k) {
      const std::uint32_t t = p.threshold[0][k];
      const std::uint32_t start = t & ~((std::uint32_t{1} << kCellShift) - 1);
      if (t >= kPositiveInf) continue;  // no finite input reaches this code
      if (t <= kCellLow || t >= kCellHigh || t - start > 1) p.has_cell_codes = false;
    }
    if (p.has_cell_codes) {
      // Count the thresholds at or below the quarter binade's start (the
      // exact entry) and at or below start + 1 (every other input of it).
      for (std::uint32_t start = kCellLow; start < kCellHigh; start += 1u << kCellShift) {
        const std::uint32_t cell = (start >> kCellShift) & 63u;
        for (int k = 0; k < kMaxThresholds; ++k) {
          p.cell_code[cell ^ 32u] += p.threshold[0][k] <= start ? 1 : 0;
          p.cell_code[cell] += p.threshold[0][k] <= start + 1 ? 1 : 0;
        }
      }
    }
  }
  p.random_bit_count = static_cast<std::uint32_t>(
      o.random_bit_count > 0 ? o.random_bit_count : DefaultRandomBitCount(dst));
  return p;
}

}  // namespace

EncodePlan MakeEncodePlan(const FormatSpec& dst, const EncodeOptions& o) {
  // The E2M1 thresholds cost a few hundred model calls: remember the last
  // plan of this thread (calls on one array tend to repeat their options).
  struct Cached {
    bool valid = false;
    FormatSpec dst{};
    EncodeOptions options;
    EncodePlan plan;
  };
  thread_local Cached cached;
  if (cached.valid && SameSpec(cached.dst, dst) && SameOptions(cached.options, o)) {
    return cached.plan;
  }
  cached.plan = BuildEncodePlan(dst, o);
  cached.valid = true;
  cached.dst = dst;
  cached.options = o;
  return cached.plan;
}

}  // namespace lowbit::simd
