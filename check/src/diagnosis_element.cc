// Candidates for an element conversion (diagnosis.h): the other profiles,
// the model's options with one policy changed (rounding mode, saturation,
// the NaN / zero / sign rules of policy.h), and named deviations users
// write (subnormals flushed, bit truncation, a detour through FP16 or BF16,
// floor(x + 0.5)), alone and in the pairs that kernels write together (a
// rounding mode with flushed subnormals, a detour then truncation, a table
// lookup that saturates and has one zero).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "diagnosis.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/profiles/profiles.h"
#include "user_outputs_internal.h"

namespace lowbit::check::internal {

namespace {

std::uint64_t ExponentField(const FormatSpec& f, std::uint64_t code) {
  return (code >> f.mantissa_bits) & static_cast<std::uint64_t>(f.MaxExponentField());
}

// A subnormal code of a float format with subnormals.
bool IsSubnormal(const FormatSpec& f, std::uint64_t code) {
  return f.IsFloat() && f.has_subnormals && ExponentField(f, code) == 0 && (code & f.MantissaMask()) != 0;
}

// The options the target's conversion uses: a profile's (the quirks that
// options cannot say stay with ProfileEncode), or the target's own.
EncodeOptions BaseOptions(const Target& t, const FormatSpec& dst) {
  EncodeOptions o = t.options;
  if (t.profile) {
    EncodeOptions p;
    if (ProfileEncodeOptions(*t.profile, dst, t.options.rounding, &p)) o = p;
  }
  return o;
}

const char* OverflowText(Overflow o) {
  switch (o) {
    case Overflow::kFormatDefault: return "overflow by the format's rule (Inf or NaN)";
    case Overflow::kSaturate: return "saturate to the largest finite value";
    case Overflow::kWrap: return "wrap around";
  }
  return "?";
}

// DESIGNED WRONG, on purpose: the deviations below are conventions users
// write by mistake; the diagnosis names them when a kernel matches one.

// Flush to zero: a subnormal result becomes a zero of its sign (CUDA
// -ftz=true / --use_fast_math on the FP32 side, x86 FTZ).
std::uint64_t FlushSubnormalResult(const FormatSpec& dst, std::uint64_t code) {
  return IsSubnormal(dst, code) ? (code & dst.SignBit()) : code;
}

// Denormals are zero: a subnormal input is read as a zero of its sign (x86
// DAZ, CUDA -ftz on the input side).
std::uint64_t ZeroSubnormalInput(const FormatSpec& in, std::uint64_t code) {
  return IsSubnormal(in, code) ? (code & in.SignBit()) : code;
}

// Bit truncation: keep the top bits of the input when the destination is
// the input with fewer mantissa bits (FP32 -> BF16 as `bits >> 16`, FP16 ->
// E5M2 as `bits >> 8`): no rounding, no overflow, and a NaN whose payload
// sits only in the cut bits becomes an infinity.
bool IsTruncationOf(const FormatSpec& in, const FormatSpec& dst) {
  return in.IsFloat() && dst.IsFloat() && in.exponent_bits == dst.exponent_bits && in.bias == dst.bias &&
         dst.mantissa_bits < in.mantissa_bits && in.specials == SpecialCodes::kIeee &&
         dst.specials == SpecialCodes::kIeee && in.total_bits - dst.total_bits == in.mantissa_bits - dst.mantissa_bits;
}

// floor(x + 0.5) into an integer format, the sum in the input's C type
// (FP32 for FP32 / BF16 / FP16 inputs, FP64 for FP64): ties toward +Inf
// except where the sum itself rounds, 0.49999997f + 0.5f = 1.0f (and odd
// integers from 2^23 on, beyond every integer format lowbit has).
std::uint64_t FloorOfSumWithHalf(const FormatSpec& in, std::uint64_t input, const FormatSpec& dst,
                                 EncodeOptions o) {
  o.rounding = RoundingMode::kDown;
  if (in.total_bits == 64) {
    double x;
    std::memcpy(&x, &input, sizeof x);
    return EncodeF64(dst, x + 0.5, o).code;
  }
  const float x = DecodeToF32(in, input);
  return EncodeF32(dst, x + 0.5f, o).code;
}

}  // namespace

bool TargetEncode(const Target& t, const FormatSpec& in, std::uint64_t input, std::uint64_t* out) {
  const FormatSpec& dst = Spec(t.format);
  if (t.profile) {
    EncodeResult r;
    if (!ProfileEncode(*t.profile, in, input, dst, t.options.rounding, &r)) return false;
    *out = r.code;
    return true;
  }
  *out = Convert(in, input, dst, t.options).code;
  return true;
}

std::string ElementClass(const Target& t, const FormatSpec& in, std::uint64_t input, std::uint64_t expected) {
  const FormatSpec& dst = Spec(t.format);
  const Unpacked u = Unpack(in, input);
  if (u.value_class == ValueClass::kNan) return "NaN inputs";
  if (u.value_class == ValueClass::kInf) return "infinite inputs";
  if (u.value_class == ValueClass::kZero) return (input & in.SignBit()) != 0 ? "-0 inputs" : "+0 inputs";
  const EncodeOptions o = BaseOptions(t, dst);
  const EncodeResult r = Convert(in, input, dst, o);
  if ((r.flags & kFlagOverflow) != 0) return "inputs beyond the largest finite value";
  if (u.negative && !dst.has_sign) return "negative inputs";
  if (IsSubnormal(in, input)) return "subnormal inputs";
  if (IsSubnormal(dst, expected)) return "inputs with subnormal results";
  if ((r.flags & kFlagInexact) == 0) return "exact inputs";
  // A tie is where ties toward +Inf and toward -Inf part. Even and away
  // agree on the ties whose even neighbour is the one away from zero
  // (-127.5 into INT8: both give -128), so they cannot tell.
  EncodeOptions up = o;
  up.rounding = RoundingMode::kNearestUp;
  EncodeOptions down = o;
  down.rounding = RoundingMode::kNearestDown;
  if (Convert(in, input, dst, up).code != Convert(in, input, dst, down).code) return "ties";
  return "inexact inputs (not ties)";
}

Diagnosis DiagnoseElement(const Target& t, const FormatSpec& in, const std::vector<std::uint64_t>& inputs,
                          const std::vector<std::uint64_t>& expected, const std::vector<std::size_t>& elements,
                          const Slots& slots, const CodeBuffer& raw, std::uint64_t total) {
  const FormatSpec& dst = Spec(t.format);
  const RoundingMode mode = t.options.rounding;
  DiagnosisBuilder b(slots);
  b.SetTarget([&](std::size_t i, std::uint64_t* out) {
    *out = expected[i];
    return true;
  });

  // 1. The other profiles, in the same rounding mode.
  for (ProfileId p : kAllProfiles) {
    if (t.profile && *t.profile == p) continue;
    EncodeResult probe;
    if (!ProfileEncode(p, in, 0, dst, mode, &probe)) continue;  // no such conversion there
    b.Add({std::string("profile ") + ProfileName(p), "profile", ProfileSource(p)},
          [&, p](std::size_t i, std::uint64_t* out) {
            EncodeResult r;
            if (!ProfileEncode(p, in, inputs[i], dst, mode, &r)) return false;
            *out = r.code;
            return true;
          });
  }

  // 2. The target's options with the rounding mode and / or the overflow
  // rule changed.
  const EncodeOptions base = BaseOptions(t, dst);
  const auto add_options = [&](const std::string& name, const std::string& kind, const std::string& detail,
                               const EncodeOptions& o) {
    b.Add({name, kind, detail}, [&, o](std::size_t i, std::uint64_t* out) {
      *out = Convert(in, inputs[i], dst, o).code;
      return true;
    });
  };
  constexpr RoundingMode kModes[] = {
      RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
      RoundingMode::kUp,          RoundingMode::kDown,        RoundingMode::kOdd,
      RoundingMode::kNearestUp,   RoundingMode::kNearestDown, RoundingMode::kNearestTowardZero};
  const auto is_nearest = [](RoundingMode m) {
    return m == RoundingMode::kNearestEven || m == RoundingMode::kNearestAway || m == RoundingMode::kNearestUp ||
           m == RoundingMode::kNearestDown || m == RoundingMode::kNearestTowardZero;
  };
  for (RoundingMode m : kModes) {
    for (Overflow ov : {Overflow::kFormatDefault, Overflow::kSaturate}) {
      // With a nearest mode, also the sign of zero dropped: a lookup in a
      // table of values with one zero (argmin over np.unique of the values)
      // rounds to nearest, saturates and gives +0 for -0 and for tiny
      // negatives together.
      const bool can_drop_zero_sign = is_nearest(m) && dst.HasNegativeZero() && base.keep_negative_zero;
      for (bool drop_zero_sign : {false, true}) {
        if (drop_zero_sign && !can_drop_zero_sign) continue;
        if (m == base.rounding && ov == base.overflow && !drop_zero_sign) continue;
        EncodeOptions o = base;
        o.rounding = m;
        o.overflow = ov;
        if (drop_zero_sign) o.keep_negative_zero = false;
        std::string name;
        if (m != base.rounding) name = "rounding " + RoundingText(m);
        if (ov != base.overflow) {
          name += (name.empty() ? "" : " + ") +
                  std::string(ov == Overflow::kSaturate ? "saturation" : "no saturation (Inf / NaN on overflow)");
        }
        if (drop_zero_sign) name += (name.empty() ? "" : " + ") + std::string("-0 becomes +0");
        add_options(name, m != base.rounding ? "rounding" : "saturation",
                    "rounding " + RoundingText(m) + ", " + OverflowText(ov) +
                        (drop_zero_sign ? ", -0 and negatives rounding to zero give +0" : ""),
                    o);
      }
    }
  }

  // 3. One NaN / zero / sign rule of policy.h changed.
  struct Flip {
    const char* name;
    void (*apply)(EncodeOptions*);
  };
  static constexpr Flip kFlips[] = {
      {"infinity saturates too", [](EncodeOptions* o) { o->inf_input = InfInput::kLikeOverflow; }},
      {"infinity stays Inf / NaN when saturating", [](EncodeOptions* o) { o->inf_input = InfInput::kAlwaysNonFinite; }},
      {"NaN sign kept", [](EncodeOptions* o) { o->nan_sign = NanSign::kKeep; }},
      {"NaN sign positive", [](EncodeOptions* o) { o->nan_sign = NanSign::kPositive; }},
      {"NaN sign negative", [](EncodeOptions* o) { o->nan_sign = NanSign::kNegative; }},
      {"NaN payload all ones", [](EncodeOptions* o) { o->nan_payload = NanPayload::kAllOnes; }},
      {"NaN payload quiet bit only", [](EncodeOptions* o) { o->nan_payload = NanPayload::kQuietOnly; }},
      {"NaN payload truncated", [](EncodeOptions* o) { o->nan_payload = NanPayload::kTruncate; }},
      {"NaN payload preserved (signalling kept)", [](EncodeOptions* o) { o->nan_payload = NanPayload::kPreserve; }},
      {"-0 becomes +0", [](EncodeOptions* o) { o->keep_negative_zero = false; }},
      {"-0 kept", [](EncodeOptions* o) { o->keep_negative_zero = true; }},
      {"NaN into a format without NaN gives +max",
       [](EncodeOptions* o) { o->nan_into_no_nan = NanIntoNoNan::kPositiveMax; }},
      {"NaN into a format without NaN gives +0",
       [](EncodeOptions* o) { o->nan_into_no_nan = NanIntoNoNan::kPositiveZero; }},
      {"NaN into a format without NaN gives a zero of the opposite sign",
       [](EncodeOptions* o) { o->nan_into_no_nan = NanIntoNoNan::kOppositeSignZero; }},
      {"zero into E8M0 gives 2^-127", [](EncodeOptions* o) { o->zero_into_no_zero = ZeroIntoNoZero::kMinPositive; }},
      {"zero into E8M0 gives NaN", [](EncodeOptions* o) { o->zero_into_no_zero = ZeroIntoNoZero::kNan; }},
      {"negative into unsigned takes |x|",
       [](EncodeOptions* o) { o->negative_into_unsigned = NegativeIntoUnsigned::kMagnitude; }},
      {"negative into unsigned gives NaN",
       [](EncodeOptions* o) { o->negative_into_unsigned = NegativeIntoUnsigned::kNan; }},
      {"negative into unsigned clamps to 0",
       [](EncodeOptions* o) { o->negative_into_unsigned = NegativeIntoUnsigned::kClampZero; }},
  };
  for (const Flip& f : kFlips) {
    EncodeOptions o = base;
    f.apply(&o);
    add_options(f.name, "special values", std::string(f.name) + " (policy.h), otherwise as the target", o);
  }

  // 4. Named deviations.
  if (dst.IsFloat() && dst.has_subnormals) {
    b.Add({"subnormal results flushed to zero", "subnormals",
           "a subnormal result becomes a zero of its sign (FTZ, -ftz=true / --use_fast_math)"},
          [&](std::size_t i, std::uint64_t* out) {
            *out = FlushSubnormalResult(dst, expected[i]);
            return true;
          });
    // Two deviations at once: another rounding mode, and its subnormal
    // results flushed (a truncating kernel built with --use_fast_math).
    for (RoundingMode m : kModes) {
      if (m == base.rounding) continue;
      EncodeOptions o = base;
      o.rounding = m;
      b.Add({"rounding " + RoundingText(m) + " + subnormal results flushed to zero", "subnormals",
             "rounding " + RoundingText(m) + ", then a subnormal result becomes a zero of its sign"},
            [&, o](std::size_t i, std::uint64_t* out) {
              *out = FlushSubnormalResult(dst, Convert(in, inputs[i], dst, o).code);
              return true;
            });
    }
  }
  if (in.IsFloat() && in.has_subnormals) {
    const auto daz = [&](std::size_t i, std::uint64_t* out) {
      return TargetEncode(t, in, ZeroSubnormalInput(in, inputs[i]), out);
    };
    b.Add({"subnormal inputs read as zero", "subnormals", "a subnormal input is read as a zero of its sign (DAZ)"},
          daz);
    if (dst.IsFloat() && dst.has_subnormals) {
      b.Add({"subnormals flushed on input and output", "subnormals", "DAZ on the input and FTZ on the result"},
            [&, daz](std::size_t i, std::uint64_t* out) {
              if (!daz(i, out)) return false;
              *out = FlushSubnormalResult(dst, *out);
              return true;
            });
    }
  }
  if (IsTruncationOf(in, dst)) {
    const int shift = in.total_bits - dst.total_bits;
    b.Add({"truncation (the input's top bits)", "rounding",
           "the top " + std::to_string(dst.total_bits) + " bits of the input, no rounding (bits >> " +
               std::to_string(shift) + ")"},
          [&, shift](std::size_t i, std::uint64_t* out) {
            *out = inputs[i] >> shift;
            return true;
          });
  }
  // A detour: the input rounded to FP16 or BF16 first (a kernel that
  // converts through __half / __nv_bfloat16), then the target's conversion.
  for (FormatId via : {FormatId::kFp16, FormatId::kBf16}) {
    const FormatSpec& v = Spec(via);
    if (in.total_bits <= v.total_bits || dst.total_bits >= v.total_bits) continue;
    b.Add({std::string("converted through ") + v.name + " first", "double rounding",
           std::string("the input rounded to nearest even into ") + v.name + ", then the target's conversion"},
          [&, via](std::size_t i, std::uint64_t* out) {
            const std::uint64_t mid = Convert(in, inputs[i], Spec(via), EncodeOptions{}).code;
            return TargetEncode(t, Spec(via), mid, out);
          });
    // The detour, then the top bits of it: E5M2 as the high byte of an
    // FP16 (`__half` bits >> 8).
    if (IsTruncationOf(v, dst)) {
      const int shift = v.total_bits - dst.total_bits;
      b.Add({std::string("converted through ") + v.name + " first, then truncated (its top bits)", "double rounding",
             std::string("the input rounded to nearest even into ") + v.name + ", then its top " +
                 std::to_string(dst.total_bits) + " bits (bits >> " + std::to_string(shift) + ")"},
            [&, via, shift](std::size_t i, std::uint64_t* out) {
              *out = Convert(in, inputs[i], Spec(via), EncodeOptions{}).code >> shift;
              return true;
            });
    }
  }
  // floor(x + 0.5) into an integer format: ties toward +Inf, and the one
  // input below a half that the FP32 sum rounds up.
  if (!dst.IsFloat() && in.IsFloat() && in.total_bits >= 16) {
    b.Add({"floor(x + 0.5) in the input's precision", "rounding",
           "floor(x + 0.5f) (x + 0.5 for FP64 inputs): ties toward +Inf, and 0.49999997f + 0.5f rounds to 1"},
          [&](std::size_t i, std::uint64_t* out) {
            *out = FloorOfSumWithHalf(in, inputs[i], dst, base);
            return true;
          });
  }

  // 5. Packed 4-bit codes in the other nibble order.
  std::vector<std::uint64_t> swapped;
  if (raw.packing != recipe::Packing::kOnePerByte && dst.total_bits <= 4) {
    const recipe::Packing other = raw.packing == recipe::Packing::kNibblesLowFirst
                                      ? recipe::Packing::kNibblesHighFirst
                                      : recipe::Packing::kNibblesLowFirst;
    swapped.resize(elements.size());
    const auto* bytes = static_cast<const std::uint8_t*>(raw.data);
    for (std::size_t i = 0; i < elements.size(); ++i) {
      swapped[i] = recipe::LoadCode(other, bytes, static_cast<long>(elements[i]));
    }
    b.Add({other == recipe::Packing::kNibblesHighFirst ? "packing nibbles high first" : "packing nibbles low first",
           "packing", "the kernel's bytes read with element 0 in the other nibble"},
          [&](std::size_t i, std::uint64_t* out) {
            *out = expected[i];
            return true;
          },
          &swapped);
  }
  return b.Finish(t.name, "inputs", total);
}

}  // namespace lowbit::check::internal
