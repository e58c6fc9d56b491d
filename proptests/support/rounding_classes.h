// Expected codes of all 2^32 FP32 inputs of a conversion with the model asked
// once per rounding class instead of once per input, so that a 2^32 sweep
// costs the code under test's time, not the scalar model's (about 10x slower
// per input): the exhaustive sweeps of simd_convert_test and
// nvidia_fp32_sweep_test run at LOWBIT_TEST_LEVEL=ci through this.
//
// Why it holds: round_pack.h step 5 aligns the significand to the
// destination's quantum (a shift that depends only on the sign and exponent
// field), and steps 6-9 read the discarded bits only through `vs_half` and
// `inexact` for every non-stochastic mode. So within a (sign, exponent) group,
// inputs with the same kept bits and the same class of discarded bits (zero,
// below half, half, above half) have the same code; the model is evaluated on
// one representative per class. Groups where nothing is discarded (integers
// >= 2^23), NaN/Inf and the subnormal group of a destination without
// subnormals (E8M0 quantises them on 2^-127) get the model per input.
// Before either, a finite group of one sign whose smallest and largest input
// have the same code has that code throughout: rounding is monotone in the
// magnitude (round_pack.h rounds |x|, then overflows when the rounded
// magnitude is over the largest finite value), so every input between two
// that round to one value or both overflow does the same (the group holds no
// zero, the one value with two codes). That is what makes groups above a
// format's range (INT8 from 2^8 on) cheap.
// The tests that use this check the premise against the model per input on
// inputs spread over every kind of group (ModelClassesAreSound).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lowbit/formats/format_spec.h"

namespace lowbit::testing {

inline constexpr std::uint32_t kFp32GroupSize = 1u << 23;  // mantissas of one (sign, exponent)

// The model's shift (round_pack.h step 5) for FP32 exponent field e.
inline int ModelShift(const FormatSpec& dst, std::uint32_t e) {
  const int lsb_exponent = static_cast<int>(e == 0 ? 1 : e) - 127 - 23;
  if (!dst.IsFloat()) return -lsb_exponent;  // quantum 2^0
  const int value_exponent = static_cast<int>(e == 0 ? 0 : e) - 127;  // e == 0: below every min
  const int min_exponent = dst.MinNormalExponent();
  const int quantum =
      (e != 0 && value_exponent > min_exponent ? value_exponent : min_exponent) - dst.mantissa_bits;
  return quantum - lsb_exponent;
}

// How ExpectedGroupByClasses finds a group's codes.
enum class GroupMethod { kConstant, kByClasses, kPerInput };

template <class Model>
GroupMethod GroupMethodFor(const FormatSpec& dst, std::uint32_t sign, std::uint32_t e,
                           const Model& model) {
  const std::uint32_t top = (sign << 31) | (e << 23);
  if (e != 0 && e != 255 && model(top) == model(top | (kFp32GroupSize - 1))) {
    return GroupMethod::kConstant;
  }
  if (e == 255 || ModelShift(dst, e) <= 0 || (e == 0 && !dst.has_subnormals)) {
    return GroupMethod::kPerInput;
  }
  return GroupMethod::kByClasses;
}

// Writes `code` (out_bytes wide, little-endian) into out[from..to).
inline void FillCodes(std::uint8_t* out, std::size_t out_bytes, std::uint64_t from,
                      std::uint64_t to, std::uint64_t code) {
  if (out_bytes == 1) {
    std::memset(out + from, static_cast<int>(code), to - from);
    return;
  }
  for (std::uint64_t i = from; i < to; ++i) std::memcpy(out + i * out_bytes, &code, out_bytes);
}

// Expected codes of the 2^23 inputs (sign, e, mantissa 0..2^23-1), out_bytes
// each, from `model(fp32_bits) -> code`. Within one kept value the four
// classes are consecutive mantissa ranges ({0}, [1, half), {half},
// (half, 2^s)), so each range is filled with the model's code for its first
// input. Returns how the codes were found.
template <class Model>
GroupMethod ExpectedGroupByClasses(const FormatSpec& dst, std::uint32_t sign, std::uint32_t e,
                                   std::size_t out_bytes, std::uint8_t* out, const Model& model) {
  constexpr std::uint64_t kGroup = kFp32GroupSize;
  const std::uint32_t top = (sign << 31) | (e << 23);
  const int s = ModelShift(dst, e);
  const GroupMethod method = GroupMethodFor(dst, sign, e, model);
  if (method == GroupMethod::kConstant) {
    FillCodes(out, out_bytes, 0, kGroup, model(top));
    return method;
  }
  if (method == GroupMethod::kPerInput) {
    for (std::uint32_t m = 0; m < kGroup; ++m) {
      const std::uint64_t code = model(top | m);
      std::memcpy(out + std::size_t{m} * out_bytes, &code, out_bytes);
    }
    return method;
  }
  const std::uint64_t hidden = e == 0 ? 0 : kGroup;  // sig = hidden | m
  const int shift = s > 40 ? 40 : s;  // sig < 2^24: any shift >= 25 discards all alike
  const std::uint64_t step = std::uint64_t{1} << shift;
  const std::uint64_t half = step >> 1;
  const std::uint64_t lo = hidden, hi = hidden + kGroup;  // sig range
  for (std::uint64_t base = (lo >> shift) << shift; base < hi; base += step) {
    const std::uint64_t bounds[5] = {base, base + 1, base + half, base + half + 1, base + step};
    for (int c = 0; c < 4; ++c) {
      const std::uint64_t from = std::max(bounds[c], lo), to = std::min(bounds[c + 1], hi);
      if (from >= to) continue;
      const std::uint64_t code = model(top | static_cast<std::uint32_t>(from - hidden));
      FillCodes(out, out_bytes, from - hidden, to - hidden, code);
    }
  }
  return method;
}

// The mantissas that the premise tests (*ModelClasses.AreSound) compare per
// input: a stride of 997 through the group and, around each visited input,
// the edges of its rounding class (0, 1, half - 1, half, half + 1 and
// step - 1 discarded bits), where ties and carries live.
template <class Visit>
void ForEachClassEdgeMantissa(const FormatSpec& dst, std::uint32_t e, Visit visit) {
  const int s = ModelShift(dst, e);
  const std::uint64_t step = s <= 0 ? 1 : s >= 23 ? (1u << 23) : (std::uint64_t{1} << s);
  const std::uint64_t half = step / 2;
  const std::uint64_t edges[] = {0, 1, half == 0 ? 0 : half - 1, half, half + 1, step - 1};
  for (std::uint32_t visited = 0; visited < kFp32GroupSize; visited += 997) {
    for (std::uint64_t edge : edges) {
      visit(static_cast<std::uint32_t>(
          std::min<std::uint64_t>(visited / step * step + edge, kFp32GroupSize - 1)));
    }
  }
}

// The (sign, exponent) groups the premise checks visit: zero and FP32
// subnormals, the subnormal and normal ranges of the small formats (2^-27 ..
// 2^-6), 1.0 and around it, the FP8/FP16 maxima (2^8, 2^15, 2^16), the
// largest finite group; both signs.
inline constexpr std::uint32_t kClassCheckGroups[] = {
    0u,   1u,   100u, 110u, 113u, 118u, 120u, 121u, 124u, 126u, 127u, 130u, 135u, 142u, 143u, 254u,
    256u, 257u, 369u, 376u, 383u, 398u, 406u, 510u};

}  // namespace lowbit::testing
