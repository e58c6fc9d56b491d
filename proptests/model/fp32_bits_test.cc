// F32IsNan (formats/include/lowbit/formats/fp32_bits.h) tests
// "sign cleared, above +Inf" in one compare. It must be IEEE 754-2019 §3.4's
// NaN: exponent field all ones and a mantissa not 0. Both forms, and the
// host's std::isnan as an independent witness, on every FP32 bit pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "lowbit/formats/fp32_bits.h"

namespace lowbit {
namespace {

TEST(Fp32Bits, IsNanIsExponentAllOnesAndMantissaNotZeroOnEveryPattern) {
  std::uint64_t nans = 0;
  std::uint64_t wrong = 0;
  std::uint32_t first_wrong = 0;
  for (std::uint64_t p = 0; p < (std::uint64_t{1} << 32); ++p) {
    const auto bits = static_cast<std::uint32_t>(p);
    const bool field_definition = (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    const bool witness = std::isnan(value);
    const bool model = F32IsNan(bits);
    nans += model ? 1 : 0;
    if (model != field_definition || model != witness) {
      if (wrong++ == 0) first_wrong = bits;
    }
  }
  EXPECT_EQ(wrong, 0u) << "first differing pattern 0x" << std::hex << first_wrong;
  // 2 signs x (2^23 - 1) nonzero mantissas.
  EXPECT_EQ(nans, 2 * ((std::uint64_t{1} << 23) - 1));
}

}  // namespace
}  // namespace lowbit
