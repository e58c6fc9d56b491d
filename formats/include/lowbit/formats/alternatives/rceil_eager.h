// A named alternative to the model's recipe::detail::RceilEagerExponent
// (recipe/mx_scale.h: torchao 0.18's eager RCEIL, ceil(log2(d)) with log2
// in FP32), for kernels that pass it to recipe::ChooseScaleWith.
//
// The model derives the answer in double arithmetic per call: the FP32
// spacing next to k from a loop over log2 |k|, then 2^h - 1 as four terms
// of a series with two double divisions (about 150 SASS instructions a
// block on sm_90, a sixth of an MX eager quantize's instructions an
// element, bench/RESULTS.md "GPU roofline"). Its answer for d = 2^k * (1 +
// m * 2^-23) is k when m = 0 or m is below a threshold M that depends on k
// only through that spacing, k + 1 otherwise. Here M is looked up: the
// spacing index i = floor(log2 |k|) + 1, one less for a negative k whose
// magnitude is a power of two (0 .. 7 for every normal d), picks M from
// Thresholds(), each found once at compile time by bisection on the model's
// own function at a representative k of that index (so no threshold is
// typed here). A subnormal d takes the model.
//
// Proof: proptests/backends/rceil_eager_test.cc compares it with the model
// on every finite nonzero FP32 pattern at LOWBIT_TEST_LEVEL=full (at ci:
// every exponent with the mantissas 0 .. 64 and a strided sample).
#pragma once

#include <array>
#include <cstdint>

#include "lowbit/formats/config.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/mx_scale.h"

namespace lowbit::alternatives {

namespace rceil_eager_detail {

inline constexpr int kIndices = 8;

// A k of spacing index i: -1 for 0 (|k| = 1 and a power of two), else
// 2^(i - 1).
LOWBIT_HD_CONSTEXPR int RepresentativeK(int i) { return i == 0 ? -1 : 1 << (i - 1); }

// The spacing index of k (k != 0, |k| <= 127). floor(log2 |k|) is the
// exponent of |k| as an FP32 value (exact: |k| < 2^24), no loop.
LOWBIT_HD_CONSTEXPR int SpacingIndex(int k) {
  const unsigned magnitude = static_cast<unsigned>(k < 0 ? -k : k);
  const int log2 = F32ExponentField(F32Bits(static_cast<float>(magnitude))) - kF32Bias;
  const bool power_of_two = (magnitude & (magnitude - 1)) == 0;
  return log2 + 1 - (k < 0 && power_of_two ? 1 : 0);
}

// The smallest mantissa m in [1, 2^23) for which the model gives k + 1 at
// 2^k * (1 + m * 2^-23) (2^23 if none), by bisection: the model gives k
// below it and k + 1 from it on.
LOWBIT_HD_CONSTEXPR std::uint32_t ThresholdAt(int k) {
  std::uint32_t lo = 1, hi = 1u << 23;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    const std::uint32_t bits = (static_cast<std::uint32_t>(k + kF32Bias) << 23) | mid;
    if (recipe::detail::RceilEagerExponent(F32FromBits(bits)) == k + 1) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

LOWBIT_HD_CONSTEXPR std::array<std::uint32_t, kIndices> Thresholds() {
  std::array<std::uint32_t, kIndices> t{};
  for (int i = 0; i < kIndices; ++i) t[i] = ThresholdAt(RepresentativeK(i));
  return t;
}

// The thresholds packed 5 bits each into one word (each is at most 23, so
// a device reads them without a table in memory).
LOWBIT_HD_CONSTEXPR std::uint64_t PackedThresholds() {
  const std::array<std::uint32_t, kIndices> t = Thresholds();
  std::uint64_t packed = 0;
  for (int i = 0; i < kIndices; ++i) packed |= static_cast<std::uint64_t>(t[i]) << (5 * i);
  return packed;
}
inline constexpr std::uint64_t kPackedThresholds = PackedThresholds();
static_assert(Thresholds()[kIndices - 1] < 32, "a threshold does not fit 5 bits");
// What proptests/backends/torchao_modelopt_vllm_recipes_test.cc
// (ThresholdsOfFp32Log2) works out by hand: M = 23 for k = 64 .. 126, 1
// (never kept) for k = 1 .. 3 and -1.
static_assert(Thresholds()[7] == 23 && Thresholds()[1] == 1 && Thresholds()[0] == 1);

}  // namespace rceil_eager_detail

// recipe::detail::RceilEagerExponent(d) for every finite nonzero FP32 d,
// the model's domain (the model itself for subnormals).
LOWBIT_HD_CONSTEXPR int RceilEagerExponentFromBits(float d) {
  using namespace rceil_eager_detail;
  const std::uint32_t bits = F32Bits(d);
  const int field = F32ExponentField(bits);
  if (field == 0 || field == 0xFF) return recipe::detail::RceilEagerExponent(d);
  const int k = field - kF32Bias;
  const std::uint32_t m = F32Mantissa(bits);
  if (m == 0) return k;
  if (k == 0) return 1;  // spacing index undefined; the model never keeps 2^0 with m > 0
  const std::uint32_t threshold = static_cast<std::uint32_t>(kPackedThresholds >> (5 * SpacingIndex(k))) & 31u;
  return m < threshold ? k : k + 1;
}

// The same as a functor for recipe::ChooseScaleWith.
struct RceilEagerExponentAlternative {
  LOWBIT_HD_CONSTEXPR int operator()(float d) const { return RceilEagerExponentFromBits(d); }
};

}  // namespace lowbit::alternatives
