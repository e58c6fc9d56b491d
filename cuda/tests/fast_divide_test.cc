// cuda/src/fast_divide.h FastDivider equals the `/` of unsigned 32-bit
// integers. A host test (the same function compiles for the device, where
// __umulhi is the same high product): every divisor up to 2^16 against
// dividends at and around its first and last multiples, 0 and 2^32 - 1, and
// a pseudo-random spread, then divisors near powers of two and near 2^32.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "fast_divide.h"

namespace lowbit::cuda::detail {
namespace {

std::vector<std::uint32_t> DividendsFor(std::uint32_t d, std::mt19937& rng) {
  std::vector<std::uint32_t> n = {0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  const std::uint32_t top = 0xFFFFFFFFu / d * d;  // the largest multiple of d
  for (std::uint32_t k = 0; k < 3; ++k) {
    for (std::uint32_t m : {k * d, top - k * d}) {
      n.push_back(m);
      n.push_back(m - 1);
      n.push_back(m + 1);
    }
  }
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 8; ++i) n.push_back(any(rng));
  return n;
}

void ExpectExact(std::uint32_t d, std::mt19937& rng) {
  const FastDivider f = FastDivider::For(d);
  for (std::uint32_t n : DividendsFor(d, rng)) {
    ASSERT_EQ(f.Quotient(n), n / d) << "n = " << n << ", d = " << d;
  }
}

TEST(FastDivider, EveryDivisorUpTo65536) {
  std::mt19937 rng(1);
  for (std::uint32_t d = 1; d <= 65536; ++d) ExpectExact(d, rng);
}

TEST(FastDivider, DivisorsNearPowersOfTwoAndTheTop) {
  std::mt19937 rng(2);
  for (int e = 16; e < 32; ++e) {
    const std::uint32_t p = std::uint32_t{1} << e;
    for (std::uint32_t d : {p - 1, p, p + 1, p + 3 * (p >> 2)}) ExpectExact(d, rng);
  }
  for (std::uint32_t d = 0xFFFFFFFFu; d > 0xFFFFFF00u; --d) ExpectExact(d, rng);
}

}  // namespace
}  // namespace lowbit::cuda::detail
