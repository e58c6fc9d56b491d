// Division of 32-bit unsigned integers by a divisor fixed for a kernel
// launch, as a high multiply, an add and two shifts instead of the ~20
// instructions of a run-time 32-bit division (PTX has no integer divide
// instruction; nvcc expands one in software). The method is Granlund and
// Montgomery's, "Division by Invariant Integers using Multiplication" (PLDI
// 1994), Figure 4.1, exact for every dividend below 2^32: with
// l = ceil(log2 d), m = floor(2^32 (2^l - d) / d) + 1, t = mulhi(m, n),
// n / d = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
// cuda/tests/fast_divide_test.cc compares it with `/` over every divisor up to
// 2^16 and boundary-biased dividends, and over boundary divisors up to 2^32 - 1.
#pragma once

#include <cstdint>

#include "lowbit/formats/config.h"

namespace lowbit::cuda::detail {

struct FastDivider {
  std::uint32_t divisor = 1;
  std::uint32_t multiplier = 1;
  std::uint32_t shift1 = 0;
  std::uint32_t shift2 = 0;

  // The divisor must be at least 1.
  static constexpr FastDivider For(std::uint32_t d) {
    std::uint32_t l = 0;
    while (l < 32 && (std::uint64_t{1} << l) < d) ++l;  // ceil(log2 d)
    FastDivider f;
    f.divisor = d;
    f.multiplier =
        static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - d)) / d + 1);
    f.shift1 = l < 1 ? l : 1;
    f.shift2 = l > 1 ? l - 1 : 0;
    return f;
  }

  LOWBIT_HD_CONSTEXPR std::uint32_t Quotient(std::uint32_t n) const {
    std::uint32_t t = 0;
#if defined(__CUDA_ARCH__)
    if (!__builtin_is_constant_evaluated()) {
      t = __umulhi(multiplier, n);
    } else {
      t = static_cast<std::uint32_t>((static_cast<std::uint64_t>(multiplier) * n) >> 32);
    }
#else
    t = static_cast<std::uint32_t>((static_cast<std::uint64_t>(multiplier) * n) >> 32);
#endif
    return (t + ((n - t) >> shift1)) >> shift2;
  }
};

static_assert(FastDivider::For(1).Quotient(0xFFFFFFFFu) == 0xFFFFFFFFu);
static_assert(FastDivider::For(7).Quotient(0xFFFFFFFFu) == 0xFFFFFFFFu / 7);
static_assert(FastDivider::For(125).Quotient(999) == 7);
static_assert(FastDivider::For(0xFFFFFFFFu).Quotient(0xFFFFFFFEu) == 0);

}  // namespace lowbit::cuda::detail
