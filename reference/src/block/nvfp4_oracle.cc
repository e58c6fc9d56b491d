// NVFP4 per docs/formats-reference.md §6.1 (TE) and §6.2 (torchao, ModelOpt), one FP32
// rounding per operation the source performs, in the source's order.
#include "lowbit/reference/block/nvfp4_oracle.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/reference/block/fp32_arith.h"
#include "lowbit/reference/oracle_encode.h"

namespace lowbit::reference::block {
namespace {

using lowbit::block::Nvfp4Recipe;

F32 Constant(const Rational& value) {
  F32 x;
  x.value_class = value == 0 ? ExactClass::kZero : ExactClass::kFinite;
  x.negative = value < 0;
  x.magnitude = x.negative ? Rational(-value) : value;
  return x;
}

F32 FltMax() { return F32FromBits(0x7F7FFFFFu); }

// torch.clamp(x, lo, hi): NaN passes through.
F32 Clamp(const F32& x, const F32& lo, const F32& hi) {
  if (F32IsNan(x)) return x;
  if (F32Less(x, lo)) return lo;
  if (F32Less(hi, x)) return hi;
  return x;
}

F32 AbsMax(const std::vector<float>& x, bool ignore_nan) {
  F32 best = Constant(0);
  for (float v : x) {
    F32 a = F32FromFloat(v);
    a.negative = false;
    if (F32IsNan(a)) {
      if (!ignore_nan) return a;
      continue;
    }
    if (F32Less(best, a)) best = a;
  }
  return best;
}

// E4M3 block scale byte, round to nearest even. TE converts with satfinite;
// torch's cast does not saturate (docs/formats-reference.md §4.1); NaN -> 0x7F.
std::uint8_t E4m3(const F32& x, bool saturate) {
  EncodeOptions o;
  o.overflow = saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
  o.nan_sign = NanSign::kPositive;
  o.nan_payload = NanPayload::kAllOnes;
  return static_cast<std::uint8_t>(OracleEncode(kE4m3, x, o).code);
}

// E2M1, round to nearest even, saturating, NaN -> +6 (PTX .satfinite).
std::uint8_t E2m1(const F32& x) {
  EncodeOptions o;
  o.overflow = Overflow::kSaturate;
  o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
  return static_cast<std::uint8_t>(OracleEncode(kE2m1, x, o).code);
}

F32 Decode(const FormatSpec& spec, std::uint8_t code) { return ExactValue(spec, code); }

}  // namespace

float OracleNvfp4TensorAmax(Nvfp4Recipe recipe, const std::vector<float>& x) {
  const std::uint32_t bits = F32ToBits(AbsMax(x, recipe == Nvfp4Recipe::kTe));
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

OracleTensorScale OracleNvfp4TensorScale(Nvfp4Recipe recipe, float tensor_amax) {
  const F32 amax = F32FromFloat(tensor_amax);
  OracleTensorScale t;
  if (recipe == Nvfp4Recipe::kTe) {
    // S_enc = fminf(2688 / amax, FLT_MAX); 1 when amax is 0 or S_enc is 0
    // (amax Inf); S_dec = 1 / S_enc.
    F32 s_enc = F32Min(F32Div(Constant(2688), amax), FltMax());
    if (amax.value_class == ExactClass::kZero || s_enc.value_class == ExactClass::kZero) {
      s_enc = Constant(1);
    }
    t.encode_bits = F32ToBits(s_enc);
    // TE divides in double and narrows; a quotient rounded to 53 bits and
    // then to 24 is the quotient rounded to 24 (53 >= 2 * 24 + 2).
    t.decode_bits = F32ToBits(F32Div(Constant(1), s_enc));
    return t;
  }
  // torchao per_tensor_amax_to_scale, ModelOpt weights_scaling_factor_2.
  t.decode_bits = F32ToBits(F32Div(amax, Constant(2688)));
  return t;
}

OracleBlock OracleQuantizeNvfp4Block(Nvfp4Recipe recipe, const OracleTensorScale& t,
                                     const std::vector<float>& x) {
  OracleBlock out;
  const F32 s_dec = F32FromBits(t.decode_bits);
  const F32 amax = AbsMax(x, recipe == Nvfp4Recipe::kTe);
  F32 factor;  // TE: the multiplier; others: the divisor
  switch (recipe) {
    case Nvfp4Recipe::kTe: {
      // dec_b = amax_b * (S_enc * fp32(1/6)), at most FLT_MAX, to E4M3
      // satfinite; enc_b = fminf(1 / (fp8 * S_dec), FLT_MAX).
      const F32 sixth = RoundToF32(Constant(Rational(1, 6)));
      const F32 dec_b = F32Min(F32Mul(amax, F32Mul(F32FromBits(t.encode_bits), sixth)), FltMax());
      out.scale = E4m3(dec_b, true);
      factor = F32Min(F32Div(Constant(1), F32Mul(Decode(kE4m3, out.scale), s_dec)), FltMax());
      break;
    }
    case Nvfp4Recipe::kTorchao: {
      // clamp((amax / 6) / pts, 2^-6, 448) to E4M3; total = pts * fp8.
      const F32 scaled = F32Div(F32Div(amax, Constant(6)), s_dec);
      out.scale = E4m3(Clamp(scaled, Constant(PowerOfTwo(-6)), Constant(448)), false);
      factor = F32Mul(s_dec, Decode(kE4m3, out.scale));
      break;
    }
    case Nvfp4Recipe::kModelOpt: {
      // amax / (6 * wsf2); exactly 0 -> 1.0; below 2^-9 -> 2^-9; E4M3;
      // divisor fp8 * wsf2.
      F32 s = F32Div(amax, F32Mul(Constant(6), s_dec));
      if (s.value_class == ExactClass::kZero) s = Constant(1);
      if (!F32IsNan(s) && F32Less(s, Constant(PowerOfTwo(-9)))) s = Constant(PowerOfTwo(-9));
      out.scale = E4m3(s, false);
      factor = F32Mul(Decode(kE4m3, out.scale), s_dec);
      break;
    }
  }
  for (float v : x) {
    F32 y = recipe == Nvfp4Recipe::kTe ? F32Mul(F32FromFloat(v), factor)
                                       : F32Div(F32FromFloat(v), factor);
    if (recipe == Nvfp4Recipe::kTorchao) y = Clamp(y, Constant(-6), Constant(6));
    // ModelOpt's sign bit is (x < 0): -0.0 counts as positive.
    if (recipe == Nvfp4Recipe::kModelOpt && y.value_class == ExactClass::kZero) y.negative = false;
    out.codes.push_back(E2m1(y));
  }
  return out;
}

std::vector<std::uint32_t> OracleDequantizeNvfp4Block(Nvfp4Recipe recipe, const OracleTensorScale& t,
                                                      std::uint8_t scale,
                                                      const std::vector<std::uint8_t>& codes) {
  const F32 s = Decode(kE4m3, scale);
  const F32 s_dec = F32FromBits(t.decode_bits);
  std::vector<std::uint32_t> out;
  for (std::uint8_t c : codes) {
    const F32 q = Decode(kE2m1, c);
    // TE: (q * s) * S_dec; torchao / ModelOpt: q * (s * S).
    const F32 v = recipe == Nvfp4Recipe::kTe ? F32Mul(F32Mul(q, s), s_dec) : F32Mul(q, F32Mul(s, s_dec));
    out.push_back(F32ToBits(v));
  }
  return out;
}

}  // namespace lowbit::reference::block
