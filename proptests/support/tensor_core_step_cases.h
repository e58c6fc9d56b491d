// Operand sets for one fused tensor-core step (formats/spec/.../tensor_core.h),
// biased to where a description of the arithmetic could be wrong: exponent
// windows of many widths (the alignment of step 4), exact and near
// cancellation, all-ones significands (carries), subnormal operands and C,
// C far above or below the products, signed zeros, near-overflow, NaN/Inf,
// and operands with few significant bits (steps 4-6 then lose nothing, so the
// spec fixes D exactly). Written once over a source of uniform integers, so
// that a sweep draws 10^5 sets from a seeded SplitMix64 and a RapidCheck
// property draws the same families with shrinking.
#pragma once

#include <cstdint>
#include <vector>

#include <rapidcheck.h>

#include "lowbit/formats/format_spec.h"
#include "lowbit/formats/tensor_core.h"

namespace lowbit::testing {

// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): fast and seedable.
struct SplitMixSource {
  std::uint64_t state;
  std::uint64_t Next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (the modulo bias is far below what the tests care about).
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(Next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

// The same draws from RapidCheck (inside a property), so they shrink.
struct RapidCheckSource {
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi) { return *rc::gen::inRange<std::int64_t>(lo, hi + 1); }
};

enum class StepFamily : std::uint8_t {
  kRandomCodes,   // any code of each format, NaN and Inf included
  kWindow,        // exponents in a window of width 0..255 fields
  kFewBits,       // short significands in a narrow window: exact steps
  kCancellation,  // products in pairs x*y, x*(-y) (or one code off), C cancels too
  kCarries,       // all-ones significands at one exponent
  kSubnormals,    // subnormal operands and C
  kFarC,          // C 20..300 binades above or below the products
  kSignedZeros,   // zeros of both signs, zero products, C = +-0
  kNearOverflow,  // the largest exponents, C near the accumulator's maximum
  kSpecials,      // finite sets with NaN / Inf / zero codes mixed in
  kCount,
};

inline const char* StepFamilyName(StepFamily f) {
  static const char* const kNames[] = {"random codes", "exponent window", "few bits", "cancellation", "carries",
                                       "subnormals",   "C far away",      "signed zeros", "near overflow",
                                       "specials"};
  return kNames[static_cast<int>(f)];
}

struct StepCase {
  StepFamily family = StepFamily::kRandomCodes;
  std::vector<std::uint32_t> a, b;  // count codes each
  std::uint32_t c = 0;              // accumulator code
};

// A float code from fields: the exponent field clamped to the finite range,
// the result clamped to the largest finite code (E4M3's S.1111.111 is NaN).
inline std::uint32_t FloatCodeOf(const FormatSpec& f, bool negative, std::int64_t field, std::uint64_t mantissa) {
  const std::int64_t top = f.MaxFiniteExponentField();
  field = field < 0 ? 0 : (field > top ? top : field);
  std::uint64_t code = (static_cast<std::uint64_t>(field) << f.mantissa_bits) | (mantissa & f.MantissaMask());
  if (code > f.MaxFiniteCode()) code = f.MaxFiniteCode();
  return static_cast<std::uint32_t>(code | (negative ? f.SignBit() : 0));
}

namespace detail {

template <typename Source>
std::uint32_t SpecialCodeOf(const FormatSpec& f, Source& src) {
  const bool negative = src.Uniform(0, 1) == 1;
  const std::uint64_t sign = negative ? f.SignBit() : 0;
  const std::uint64_t top = static_cast<std::uint64_t>(f.MaxExponentField()) << f.mantissa_bits;
  switch (src.Uniform(0, 2)) {
    case 0:  // zero
      return static_cast<std::uint32_t>(sign);
    case 1:  // infinity, or the largest finite value where there is none
      return static_cast<std::uint32_t>(sign | (f.HasInf() ? top : f.MaxFiniteCode()));
    default:  // a NaN (any payload where the format has several)
      if (f.specials == SpecialCodes::kIeee) {
        return static_cast<std::uint32_t>(sign | top | static_cast<std::uint64_t>(src.Uniform(1, static_cast<std::int64_t>(f.MantissaMask()))));
      }
      return static_cast<std::uint32_t>(sign | top | f.MantissaMask());  // OCP E4M3 S.1111.111
  }
}

// How the significands of one set are drawn.
enum class MantissaMode : std::uint8_t { kRandom, kAllOnes, kZero, kTopBits, kMixed };

template <typename Source>
std::uint64_t MantissaOf(const FormatSpec& f, MantissaMode mode, int top_bits, Source& src) {
  const std::uint64_t mask = f.MantissaMask();
  switch (mode) {
    case MantissaMode::kAllOnes: return mask;
    case MantissaMode::kZero: return 0;
    case MantissaMode::kTopBits: {
      const int keep = top_bits < f.mantissa_bits ? top_bits : f.mantissa_bits;
      const std::uint64_t high = static_cast<std::uint64_t>(src.Uniform(0, (std::int64_t{1} << keep) - 1));
      return high << (f.mantissa_bits - keep);
    }
    case MantissaMode::kMixed: {
      const int pick = static_cast<int>(src.Uniform(0, 3));
      return pick == 0 ? mask : (pick == 1 ? 0 : static_cast<std::uint64_t>(src.Uniform(0, static_cast<std::int64_t>(mask))));
    }
    default: return static_cast<std::uint64_t>(src.Uniform(0, static_cast<std::int64_t>(mask)));
  }
}

template <typename Source>
std::uint32_t IntegerCodeOf(const FormatSpec& f, Source& src) {
  const std::int64_t lo = f.IntMin(), hi = f.IntMax();
  std::int64_t v = 0;
  switch (src.Uniform(0, 3)) {
    case 0: v = src.Uniform(0, 1) ? lo : hi; break;       // the extremes
    case 1: v = src.Uniform(-2, 2); break;                // around zero
    case 2: v = src.Uniform(0, 1) ? lo + src.Uniform(0, 3) : hi - src.Uniform(0, 3); break;
    default: v = src.Uniform(lo, hi); break;
  }
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(v) & f.CodeMask());
}

}  // namespace detail

// One set of `count` products and a C for `inst`'s datapath and operands.
template <typename Source>
StepCase DrawStepCase(const TensorCoreInstruction& inst, int count, Source& src) {
  using detail::MantissaMode;
  const FormatSpec& fa = inst.a.code_format;
  const FormatSpec& fb = inst.b.code_format;
  const FormatSpec& acc = inst.arithmetic.accumulator;
  StepCase s;
  s.family = static_cast<StepFamily>(src.Uniform(0, static_cast<int>(StepFamily::kCount) - 1));
  s.a.resize(static_cast<std::size_t>(count));
  s.b.resize(static_cast<std::size_t>(count));

  if (!acc.IsFloat()) {  // integer MMAs: extremes, small values, anything
    for (int i = 0; i < count; ++i) {
      s.a[i] = detail::IntegerCodeOf(fa, src);
      s.b[i] = detail::IntegerCodeOf(fb, src);
    }
    s.c = detail::IntegerCodeOf(acc, src);
    return s;
  }
  if (s.family == StepFamily::kRandomCodes) {
    for (int i = 0; i < count; ++i) {
      s.a[i] = static_cast<std::uint32_t>(src.Uniform(0, static_cast<std::int64_t>(fa.CodeMask())));
      s.b[i] = static_cast<std::uint32_t>(src.Uniform(0, static_cast<std::int64_t>(fb.CodeMask())));
    }
    s.c = static_cast<std::uint32_t>(src.Uniform(0, static_cast<std::int64_t>(acc.CodeMask())));
    return s;
  }

  // Exponent-field centres and a window, per family.
  static constexpr int kWindows[] = {0, 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 255};
  std::int64_t window = kWindows[src.Uniform(0, static_cast<int>(sizeof(kWindows) / sizeof(kWindows[0])) - 1)];
  std::int64_t centre_a = src.Uniform(0, fa.MaxFiniteExponentField());
  std::int64_t centre_b = src.Uniform(0, fb.MaxFiniteExponentField());
  MantissaMode mode = static_cast<MantissaMode>(src.Uniform(0, 4));
  int top_bits = static_cast<int>(src.Uniform(0, 3));
  std::int64_t c_offset = src.Uniform(-30, 30);  // C's exponent - the products' centre
  bool c_zero = src.Uniform(0, 5) == 0;
  switch (s.family) {
    case StepFamily::kFewBits:
      window = src.Uniform(0, 3);
      mode = MantissaMode::kTopBits;
      c_offset = src.Uniform(-4, 4);
      // Centres away from the subnormal range and the top (exact sums in range).
      centre_a = fa.MaxFiniteExponentField() / 2 + src.Uniform(-2, 2);
      centre_b = fb.MaxFiniteExponentField() / 2 + src.Uniform(-2, 2);
      break;
    case StepFamily::kCarries:
      window = src.Uniform(0, 1);
      mode = MantissaMode::kAllOnes;
      c_offset = src.Uniform(-3, 3);
      break;
    case StepFamily::kSubnormals:
      centre_a = src.Uniform(0, 2);
      centre_b = src.Uniform(0, fb.MaxFiniteExponentField() / 2);
      if (src.Uniform(0, 1)) std::swap(centre_a, centre_b);
      window = src.Uniform(0, 2);
      c_zero = src.Uniform(0, 1) == 1;  // then e_max may be zero_term_exponent
      break;
    case StepFamily::kFarC:
      c_offset = (src.Uniform(0, 1) ? 1 : -1) * src.Uniform(20, 300);
      break;
    case StepFamily::kNearOverflow:
      centre_a = fa.MaxFiniteExponentField() - src.Uniform(0, 2);
      centre_b = fb.MaxFiniteExponentField() - src.Uniform(0, 2);
      window = src.Uniform(0, 2);
      break;
    default:
      break;
  }
  auto draw = [&](const FormatSpec& f, std::int64_t centre) {
    const bool negative = src.Uniform(0, 1) == 1;
    const std::int64_t field = centre + src.Uniform(-window, window);
    std::uint32_t code = FloatCodeOf(f, negative, field, detail::MantissaOf(f, mode, top_bits, src));
    // A field clamped to 0 is a subnormal (or zero with a zero mantissa).
    return code;
  };
  for (int i = 0; i < count; ++i) {
    s.a[i] = draw(fa, centre_a);
    s.b[i] = draw(fb, centre_b);
  }
  // C, in the accumulator: its unbiased exponent relative to the products'.
  const std::int64_t product_exponent = (centre_a - fa.bias) + (centre_b - fb.bias);
  const bool c_negative = src.Uniform(0, 1) == 1;
  if (s.family == StepFamily::kSubnormals && src.Uniform(0, 1)) {
    s.c = FloatCodeOf(acc, c_negative, 0, detail::MantissaOf(acc, mode, top_bits, src));
  } else if (s.family == StepFamily::kNearOverflow && src.Uniform(0, 1)) {
    s.c = FloatCodeOf(acc, c_negative, acc.MaxFiniteExponentField() - src.Uniform(0, 1),
                      detail::MantissaOf(acc, mode, top_bits, src));
  } else {
    s.c = FloatCodeOf(acc, c_negative, product_exponent + c_offset + acc.bias, detail::MantissaOf(acc, mode, top_bits, src));
  }
  if (c_zero) s.c = static_cast<std::uint32_t>(c_negative ? acc.SignBit() : 0);

  switch (s.family) {
    case StepFamily::kCancellation: {
      // Pairs x*y + x*(-y): exact cancellation, or one code of y off.
      for (int i = 0; i + 1 < count; i += 2) {
        s.a[i + 1] = s.a[i];
        std::uint32_t partner = s.b[i] ^ static_cast<std::uint32_t>(fb.SignBit());
        const std::int64_t nudge = src.Uniform(0, 3) == 0 ? src.Uniform(-1, 1) : 0;
        const std::uint64_t magnitude = partner & ~fb.SignBit();
        if (nudge > 0 && magnitude < fb.MaxFiniteCode()) ++partner;
        if (nudge < 0 && magnitude > 0) --partner;
        s.b[i + 1] = partner;
      }
      break;
    }
    case StepFamily::kSignedZeros: {
      // Zeros of both signs on one side (or both) of most products.
      for (int i = 0; i < count; ++i) {
        if (src.Uniform(0, 3) != 0) s.a[i] = static_cast<std::uint32_t>(src.Uniform(0, 1) ? fa.SignBit() : 0);
        if (src.Uniform(0, 3) == 0) s.b[i] = static_cast<std::uint32_t>(src.Uniform(0, 1) ? fb.SignBit() : 0);
      }
      if (src.Uniform(0, 1)) s.c = static_cast<std::uint32_t>(src.Uniform(0, 1) ? acc.SignBit() : 0);
      break;
    }
    case StepFamily::kSpecials: {
      const std::int64_t how_many = src.Uniform(1, 3);
      for (std::int64_t n = 0; n < how_many; ++n) {
        const int where = static_cast<int>(src.Uniform(0, 2 * count));
        if (where == 2 * count) {
          s.c = detail::SpecialCodeOf(acc, src);
        } else if (where % 2 == 0) {
          s.a[where / 2] = detail::SpecialCodeOf(fa, src);
        } else {
          s.b[where / 2] = detail::SpecialCodeOf(fb, src);
        }
      }
      break;
    }
    default:
      break;
  }
  return s;
}

}  // namespace lowbit::testing
