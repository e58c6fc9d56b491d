// The claim a kernel passing the hardware's E4M3 conversion as NVFP4's
// block-scale codec (recipe::ChooseScaleWith) rests on: for
// every NVFP4 recipe of the catalog, the model's UE4M3 conversion of a
// block-scale value v under the recipe's options
// (recipe::detail::Nvfp4ScaleCodecOfModel, Nvfp4ScaleOptions) equals the
// model's E4M3 conversion of v under cvt.rn.satfinite's options (the
// conversion the cuda-hw E4M3 rows sweep the instruction against) for
// every v from +0 to 448 and every NaN, and the model's UE4M3 decode of
// every finite code equals its E4M3 decode. Every such FP32 pattern at
// LOWBIT_TEST_LEVEL=full; at ci every exponent with the rounding classes of
// E4M3's 3 mantissa bits (ties, either side, 0, all ones) and a strided
// sample; at smoke the sample.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "f32_pattern_sweep.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit {
namespace {

// cvt.rn.satfinite.e4m3x2.f32's rule (formats/include/lowbit/formats/
// profiles/nvidia.h, as cuda/src/hardware_rule.h reads it): round to
// nearest even, saturate, +-Inf to +-max, NaN to 0x7F.
EncodeOptions SatfiniteE4m3() { return recipe::SatfiniteElements(); }

bool InDomain(std::uint32_t bits) {
  return bits <= F32Bits(448.0f) || F32IsNan(bits);
}

TEST(Nvfp4ScaleCodec, Ue4m3EqualsE4m3FromZeroTo448AndNan) {
  int recipes = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() != recipe::Family::kNvfp4) continue;
    ++recipes;
    const recipe::detail::Nvfp4ScaleCodecOfModel model;
    testing::ExpectSameOnF32Patterns(
        [&](std::uint32_t bits) {
          if (!InDomain(bits)) return true;
          const float v = F32FromBits(bits);
          const std::uint64_t e4m3 = EncodeF32(kE4m3, v, SatfiniteE4m3()).code;
          return model.Encode(r, v) == e4m3;
        },
        [](const auto& check) {
          // E4M3 keeps 3 of FP32's 23 mantissa bits: the low 20 bits of
          // the ties, either side of them, 0 and all ones, every exponent.
          for (std::uint32_t field = 0; field < 256; ++field) {
            for (std::uint32_t top = 0; top < 8; ++top) {
              for (const std::uint32_t low : {0u, 1u, 0x7FFFFu, 0x80000u, 0x80001u, 0xFFFFFu}) {
                check((field << 23) | (top << 20) | low);
              }
            }
          }
        });
    for (std::uint32_t code = 0; code < 0x7F; ++code) {
      const float ue4m3 = model.Decode(r, static_cast<std::uint8_t>(code));
      const float e4m3 = DecodeToF32(kE4m3, code);
      EXPECT_EQ(F32Bits(ue4m3), F32Bits(e4m3)) << r.profile << " code " << code;
    }
  }
  EXPECT_EQ(recipes, 5);
}

}  // namespace
}  // namespace lowbit
