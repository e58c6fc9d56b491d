// NVFP4 per docs/formats-reference.md §6.1 (TE) and §6.2 (torchao, ModelOpt):
// the FP32 tensor scale and the block scale, one FP32 rounding per operation
// the source performs, in the source's order. The block scale is stored in
// the recipe's scale format (UE4M3, PTX ISA §5.2.3) and the elements in its
// element format (E2M1); their largest values (448, 6), the scale format's
// smallest normal (2^-6) and smallest subnormal (2^-9) are read off the
// formats' value lists, and the tensor range 2688 is their FP32 product.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lowbit/reference/oracle_encode.h"
#include "lowbit/reference/value_grid.h"
#include "recipe_oracle_internal.h"

namespace lowbit::reference::block::internal {
namespace {

using recipe::Recipe;
using recipe::ScaleRule;
using recipe::TensorScaleRule;

F32 ScaleMax(const Recipe& r) { return F32Constant(LargestFinite(r.scale_format)); }
F32 ElementMaxF32(const Recipe& r) { return F32Constant(LargestFinite(r.element)); }

// block scale max * element max (448 * 6 = 2688, exact in FP32): TE
// compute_global_encode_scaling_factor_FP4, torchao per_tensor_amax_to_scale,
// ModelOpt get_weights_scaling_factor_2 all use this product.
F32 TensorRange(const Recipe& r) { return F32Mul(ScaleMax(r), ElementMaxF32(r)); }

// The block scale byte, round to nearest even. TE converts with
// cvt.rn.satfinite (static_cast<fp8e4m3>); torch's .to(float8_e4m3fn) does
// not saturate (docs/formats-reference.md §4.1), so an overflow is the NaN
// code; a NaN gives the positive all-ones NaN either way.
std::uint8_t ScaleCode(const Recipe& r, const F32& x) {
  EncodeOptions o;
  o.overflow = r.scale_rule == ScaleRule::kNvfp4Te ? Overflow::kSaturate : Overflow::kFormatDefault;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return static_cast<std::uint8_t>(OracleEncode(r.scale_format, x, o).code);
}

F32 ScaleValue(const Recipe& r, std::uint8_t code) { return ExactValue(r.scale_format, code); }

}  // namespace

OracleTensorScale Nvfp4TensorScale(const Recipe& r, const F32& amax) {
  OracleTensorScale t;
  switch (r.tensor_scale) {
    case TensorScaleRule::kNone:
      return t;
    case TensorScaleRule::kTeGlobalEncode: {
      // S_enc = fminf(2688 / amax, FLT_MAX); "if global amax is 0 or
      // infinity, return 1" (amax 0, or S_enc 0 for amax Inf); S_dec =
      // 1 / S_enc. TE divides in double and narrows: a quotient rounded to
      // 53 bits and then to 24 is the quotient rounded to 24 (53 >= 2*24 + 2).
      F32 s_enc = F32Min(F32Div(TensorRange(r), amax), FltMax());
      if (F32IsZero(amax) || F32IsZero(s_enc)) s_enc = F32Constant(1);
      t.encode_bits = F32ToBits(s_enc);
      t.decode_bits = F32ToBits(F32Div(F32Constant(1), s_enc));
      return t;
    }
    case TensorScaleRule::kAmaxOverRange:
      // amax.float() / (448 * 6), one FP32 division, no guard.
      t.encode_bits = 0;
      t.decode_bits = F32ToBits(F32Div(amax, TensorRange(r)));
      return t;
  }
  return t;
}

OracleScale Nvfp4Scale(const Recipe& r, const OracleTensorScale& t, const F32& amax) {
  OracleScale out;
  const F32 s_dec = Bits(t.decode_bits);
  const ValueGrid& scale_grid = GridFor(r.scale_format);
  F32 factor;  // the multiplier or divisor of Recipe::element_step
  switch (r.scale_rule) {
    case ScaleRule::kNvfp4Te: {
      // compute_decoding_scaling_factor: dec_b = fminf(amax_b * (S_enc *
      // fp32(1/6)), FLT_MAX), to the scale format satfinite; the encode
      // factor fminf(1 / (fp8 * S_dec), FLT_MAX).
      const F32 element_max_inv = RoundToF32(F32Constant(Rational(1) / LargestFinite(r.element)));
      const F32 dec_b = F32Min(F32Mul(amax, F32Mul(Bits(t.encode_bits), element_max_inv)), FltMax());
      out.code = ScaleCode(r, dec_b);
      factor = F32Min(F32Div(F32Constant(1), F32Mul(ScaleValue(r, out.code), s_dec)), FltMax());
      break;
    }
    case ScaleRule::kNvfp4Torchao:
    case ScaleRule::kNvfp4Torchao018: {
      // block_scale = max_abs / 6; scaled = block_scale / per_tensor_scale;
      // clamp(min=E4M3_EPS (the smallest normal, 2^-6), max=448); total =
      // per_tensor_scale * fp8 (divisor). torchao 0.18.0: the multiplier
      // (1.0 / per_tensor_scale) / fp8.
      const F32 scaled = F32Div(F32Div(amax, ElementMaxF32(r)), s_dec);
      out.code = ScaleCode(r, TorchClamp(scaled, F32Constant(scale_grid.min_normal), ScaleMax(r)));
      factor = r.scale_rule == ScaleRule::kNvfp4Torchao018
                   ? F32Div(F32Div(F32Constant(1), s_dec), ScaleValue(r, out.code))
                   : F32Mul(s_dec, ScaleValue(r, out.code));
      break;
    }
    case ScaleRule::kNvfp4ModelOpt:
    case ScaleRule::kNvfp4ModelOpt047: {
      // per_block_amax / (6 * wsf2); exactly 0 -> 1.0; below the smallest
      // subnormal (2^-9) -> it; to the scale format; divisor fp8 * wsf2.
      F32 s = F32Div(amax, F32Mul(ElementMaxF32(r), s_dec));
      if (F32IsZero(s)) s = F32Constant(1);
      const F32 smallest = F32Constant(scale_grid.points.at(1).magnitude);  // points[0] is 0
      if (!F32IsNan(s) && F32Less(s, smallest)) s = smallest;
      // 0.47.0: .clamp(min=2^-9, max=448), the upper bound too.
      if (r.scale_rule == ScaleRule::kNvfp4ModelOpt047 && !F32IsNan(s) && F32Less(ScaleMax(r), s)) s = ScaleMax(r);
      out.code = ScaleCode(r, s);
      factor = F32Mul(ScaleValue(r, out.code), s_dec);
      break;
    }
    default:
      throw std::invalid_argument(std::string("recipe ") + r.name + ":" + r.profile + " has no NVFP4 scale rule");
  }
  out.factor_bits = F32ToBits(factor);
  out.decode_bits = F32ToBits(ScaleValue(r, out.code));
  return out;
}

}  // namespace lowbit::reference::block::internal
