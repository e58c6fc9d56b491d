// MX scale rules: how the E8M0 block scale X = 2^e is chosen from the block's
// amax. All of them read the FP32 exponent bits; none uses a float log2
// (docs/design.md "Known traps (measured)"). docs/formats-reference.md §5.3 lists who uses which.
#pragma once

#include <cstdint>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/config.h"
#include "lowbit/formats/convert.h"

namespace lowbit::block {

enum class MxScaleRule : std::uint8_t {
  // [OCP-MX §6.3]: X = largest power of two <= amax, divided by 2^emax_elem.
  // e = exponent_field(amax) - 127 - emax. Clips elements whose scaled value
  // exceeds the element max ([MSX], [AO] ScaleCalculationMode.FLOOR).
  kFloor,
  // [AO] CEIL: e = exponent_field(amax) + (mantissa != 0) - 127 - emax.
  kCeil,
  // [AO] EVEN: round amax's significand half-up to the element's mantissa
  // width first (add 1 << (22 - mbits), clear the mantissa), then as kFloor.
  kEven,
  // NVIDIA RCEIL ([TE] MXFP8, [cuDNN], cuBLAS, [AO] RCEIL): the E8M0
  // round-up conversion of the FP32 product amax * fp32(1/max_elem).
  kRceil,
  // Nearest: the E8M0 round-to-nearest conversion of the same FP32 product
  // amax * fp32(1/max_elem), i.e. the power of two nearest to it with the
  // tie 1.5 * 2^k going up -- what PyTorch's and ml_dtypes' casts to
  // float8_e8m0fnu do (docs/formats-reference.md §4.7, §9 row 7). Unlike RCEIL it can pick
  // a scale one step smaller, so the largest element may clamp.
  kNearest,
};

struct MxScaleOptions {
  MxScaleRule rule = MxScaleRule::kFloor;
  // kRceil only: the E8M0 conversion saturates (Inf or > 2^127 -> 0xFE, as
  // TE's float_to_e8m0 / cvt.rp.satfinite) or gives NaN 0xFF ([AO]
  // _f32_to_e8m0_rceil). The other rules give 0xFF for a non-finite amax.
  bool saturate = false;
  // [MSX] _shared_exponents: an all-zero block uses FP32_MIN_NORMAL as its
  // amax, so e = -126 - emax (MXINT8: -126, code 0x01) instead of clamping
  // to -127.
  bool zero_amax_as_min_normal = false;
};

// What a scale choice produced, kept for `lowbit explain`.
struct MxScale {
  std::uint8_t code = 0;     // E8M0 byte; 0xFF is NaN
  int exponent = 0;          // e = code - 127 (meaningless when code == 0xFF)
  float rceil_product = 0;   // kRceil, kNearest: amax * fp32(1/max_elem), else 0
};

inline constexpr std::uint8_t kE8m0NanCode = 0xFF;

// fp32(1 / max finite element value): the constant TE calls
// Quantized_Limits<T>::max_norm_rcp and torchao writes 1.0 / max_pos.
// docs/formats-reference.md §5.3: fp32(1/448) = 0x3B124925, fp32(1/6) = 0x3E2AAAAB
// (pinned in proptests/block_scale_rule_test.cc).
LOWBIT_HD_CONSTEXPR float MaxNormReciprocal(const BlockSpec& spec) {
  const float max_elem =
      spec.element->IsFloat()
          ? DecodeToF32(*spec.element, spec.element->MaxFiniteCode())
          : static_cast<float>(spec.element_int_max) * F32Pow2(spec.element_implied_exponent);
  return 1.0f / max_elem;
}

LOWBIT_HD_CONSTEXPR MxScale ChooseMxScale(const BlockSpec& spec, float amax,
                                          const MxScaleOptions& options) {
  MxScale s;
  if (options.rule == MxScaleRule::kRceil || options.rule == MxScaleRule::kNearest) {
    s.rceil_product = amax * MaxNormReciprocal(spec);
    EncodeOptions e8m0;
    e8m0.rounding = options.rule == MxScaleRule::kRceil ? RoundingMode::kUp
                                                        : RoundingMode::kNearestEven;
    e8m0.overflow = options.saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
    e8m0.zero_into_no_zero = ZeroIntoNoZero::kMinPositive;  // 0 -> 2^-127 (0x00)
    e8m0.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
    s.code = static_cast<std::uint8_t>(EncodeF32(kE8m0, s.rceil_product, e8m0).code);
    s.exponent = static_cast<int>(s.code) - kF32Bias;
    return s;
  }
  std::uint32_t bits = F32Bits(amax) & ~kF32SignMask;
  if (options.rule == MxScaleRule::kEven && !F32IsNan(bits)) {
    const int mbits = spec.element->mantissa_bits;
    bits = (bits + (std::uint32_t{1} << (kF32MantissaBits - mbits - 1))) & kF32ExponentMask;
  }
  if (!F32IsFinite(bits)) {
    s.code = kE8m0NanCode;
    return s;
  }
  int e = F32ExponentField(bits) - kF32Bias;
  if (options.rule == MxScaleRule::kCeil && F32Mantissa(bits) != 0) ++e;
  if (bits == 0 && options.zero_amax_as_min_normal) e = 1 - kF32Bias;
  e -= spec.element_emax;
  if (e < -kF32Bias) e = -kF32Bias;    // E8M0 range -127..127 [OCP-MX §5.4.1]
  if (e > kF32Bias) {                  // [MSX]: > 127 -> NaN
    s.code = kE8m0NanCode;
    return s;
  }
  s.exponent = e;
  s.code = static_cast<std::uint8_t>(e + kF32Bias);
  return s;
}

}  // namespace lowbit::block
