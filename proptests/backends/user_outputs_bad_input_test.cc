// The C++ door of lowbit::check (check/include/lowbit/check/user_outputs.h)
// with the bad input the CLI and Python refuse (docs/bad-input.md "Empty
// values and files with no data", "Contradictory options", "Words in
// messages"): a buffer handed over with no items is an error, never "left
// out"; a profile without the rounding asked for is refused before anything
// is compared; user words in messages are quoted.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/check/user_outputs.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::check {
namespace {

// 32 ones and their MXFP8 (E4M3, OCP) quantization worked by hand: amax 1,
// scale exponent 0 - emax 8 = -8 (E8M0 0x77), each element 1 / 2^-8 = 256 =
// E4M3 0x78.
struct Mxfp8Block {
  std::vector<float> x = std::vector<float>(32, 1.0f);
  std::vector<std::uint8_t> codes = std::vector<std::uint8_t>(32, 0x78);
  std::uint8_t scale = 0x77;
};

Target Mxfp8() {
  Target t;
  std::string error;
  EXPECT_TRUE(ParseTarget("mxfp8", TargetOptions{}, &t, &error)) << error;
  return t;
}

TEST(UserOutputsBadInput, AScaleBufferWithNoItemsIsAnErrorNotLeftOut) {
  const Mxfp8Block b;
  const InputBuffer in{FormatId::kFp32, b.x.data(), b.x.size()};
  RecipeOutputs out;
  out.codes = {b.codes.data(), b.codes.size(), 1};
  out.scale_codes = &b.scale;
  out.scale_code_count = 1;
  const Report full = CheckRecipeOutputs(Mxfp8(), in, 1, 32, out);
  EXPECT_TRUE(full.Passed()) << full.error;
  EXPECT_EQ(full.checked, 33u);
  // Left out (null, 0): the codes alone are compared.
  out.scale_codes = nullptr;
  out.scale_code_count = 0;
  const Report codes_only = CheckRecipeOutputs(Mxfp8(), in, 1, 32, out);
  EXPECT_TRUE(codes_only.Passed()) << codes_only.error;
  EXPECT_EQ(codes_only.checked, 32u);
  // Handed over with no items: refused, nothing passes.
  out.scale_codes = &b.scale;
  out.scale_code_count = 0;
  const Report empty = CheckRecipeOutputs(Mxfp8(), in, 1, 32, out);
  EXPECT_FALSE(empty.Passed());
  EXPECT_EQ(empty.error, "scale codes: got 0, the layout makes 1 group (one each)");
}

TEST(UserOutputsBadInput, AProfileWithoutTheRoundingAskedForIsRefused) {
  // nvidia's E4M3 conversion is cvt.rn.satfinite only: with rtz every
  // output was undefined and the check compared nothing.
  TargetOptions options;
  options.profile = "nvidia";
  options.rounding = "rtz";
  Target t;
  std::string error;
  EXPECT_FALSE(ParseTarget("e4m3", options, &t, &error));
  EXPECT_EQ(error, "profile nvidia has no conversion to e4m3 with rounding rtz (from any of fp32, bf16, fp16, fp64)");
  // A target built in code is refused when checked, naming the input type.
  const float x[2] = {1.0f, 2.5f};
  const std::uint8_t codes[2] = {0x38, 0x42};
  const Report r = CheckElementOutputs(ProfileTarget(FormatId::kE4m3, ProfileId::kNvidia, RoundingMode::kTowardZero),
                                       InputBuffer{FormatId::kFp32, x, 2}, CodeBuffer{codes, 2, 1});
  EXPECT_FALSE(r.Passed());
  EXPECT_EQ(r.checked, 0u);
  EXPECT_EQ(r.error, "profile nvidia has no conversion fp32 -> e4m3 with rounding rtz (nothing could be compared)");
}

TEST(UserOutputsBadInput, UserWordsInMessagesAreQuoted) {
  Target t;
  std::string error;
  TargetOptions options;
  options.rounding = "r\x1b[31m\n";
  EXPECT_FALSE(ParseTarget("e4m3", options, &t, &error));
  EXPECT_NE(error.find("unknown rounding mode 'r\\x1b[31m\\x0a'"), std::string::npos) << error;
  options = {};
  options.layout = std::string(100000, 'g');
  EXPECT_FALSE(ParseTarget("int8:ao-sym/row", options, &t, &error));
  EXPECT_NE(error.find("'... (100000 bytes) (give one)"), std::string::npos) << error.substr(0, 300);
  EXPECT_LT(error.size(), 400u);
}

}  // namespace
}  // namespace lowbit::check
