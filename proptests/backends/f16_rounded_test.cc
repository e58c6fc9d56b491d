// alternatives/f16_rounded.h against the model's recipe::F16RoundedF32,
// results compared as bits (NaN payloads and the sign of zero included):
// every FP32 pattern at LOWBIT_TEST_LEVEL=full; at ci, for every exponent
// and sign, the patterns whose 13 bits below FP16's mantissa are a rounding
// class (0, one, the tie minus one, the tie, the tie plus one, all ones)
// under 16 mantissa prefixes, and a strided sample; at smoke the sample.
#include <gtest/gtest.h>

#include <cstdint>

#include "f32_pattern_sweep.h"
#include "lowbit/formats/alternatives/f16_rounded.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit {
namespace {

bool Same(std::uint32_t bits) {
  const float v = F32FromBits(bits);
  return F32Bits(alternatives::F16RoundedF32Alternative(v)) == F32Bits(recipe::F16RoundedF32(v));
}

TEST(AlternativeF16Rounded, EqualsTheModelOnEveryTestedPattern) {
  testing::ExpectSameOnF32Patterns(Same, [](const auto& check) {
    // FP16 keeps 10 of FP32's 23 mantissa bits for a normal result and
    // fewer below 2^-14, so the classes are taken at the normal cut (13
    // low bits) and, in the subnormal binades, again by the strided sweep.
    constexpr std::uint32_t kLow[] = {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu};
    for (std::uint32_t sign = 0; sign < 2; ++sign) {
      for (std::uint32_t field = 0; field < 256; ++field) {
        for (std::uint32_t prefix = 0; prefix < 1024; prefix += 64) {
          for (const std::uint32_t low : kLow) {
            for (const std::uint32_t odd : {0u, 1u}) {
              check((sign << 31) | (field << 23) | ((prefix | odd) << 13) | low);
            }
          }
        }
      }
    }
    // Every pattern of the binades where FP16 is subnormal or overflows
    // (2^-25 .. 2^-14 and 2^15 .. 2^17), every 7th.
    for (std::uint32_t m = 0x33000000u; m < 0x38800000u; m += 7) check(m);
    for (std::uint32_t m = 0x47000000u; m < 0x48000000u; m += 7) check(m | 0x80000000u);
  });
}

}  // namespace
}  // namespace lowbit
