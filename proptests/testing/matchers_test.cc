// lowbit::testing's gtest assertions (testing/include/lowbit/testing/
// matchers.h): a kernel that matches the model passes; one that does not
// fails with lowbit::check's report (the first mismatch decoded, and the
// diagnosis naming the convention it follows); a check that compared
// nothing fails; DiagnosedAs finds a full-match candidate by name. The
// "kernels" are the model itself under other options, so the expected
// diagnosis is known by construction.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/testing/matchers.h"

namespace lowbit::testing {
namespace {

std::vector<float> Inputs() {
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i) * 0.0371f);
  x.push_back(1.0625f);  // a tie of E4M3 (docs/formats-reference.md §1): 1 and 1.125 either side
  return x;
}

std::vector<std::uint8_t> EncodeAll(const std::vector<float>& x, RoundingMode mode) {
  EncodeOptions o;
  o.rounding = mode;
  std::vector<std::uint8_t> codes;
  for (float v : x) codes.push_back(static_cast<std::uint8_t>(EncodeF32(kE4m3, v, o).code));
  return codes;
}

TEST(Matchers, MatchingCodesPass) {
  const std::vector<float> x = Inputs();
  const std::vector<std::uint8_t> codes = EncodeAll(x, RoundingMode::kNearestEven);
  EXPECT_TRUE(CodesMatchModel(ParseTargetOrDie("e4m3"), Fp32Inputs(x), Codes(codes)));
  LOWBIT_EXPECT_CODES_MATCH(ParseTargetOrDie("e4m3"), Fp32Inputs(x), Codes(codes));
}

TEST(Matchers, MismatchPrintsTheDecodedReportAndTheDiagnosis) {
  const std::vector<float> x = Inputs();
  const std::vector<std::uint8_t> codes = EncodeAll(x, RoundingMode::kTowardZero);
  const ::testing::AssertionResult result = CodesMatchModel(ParseTargetOrDie("e4m3"), Fp32Inputs(x), Codes(codes));
  ASSERT_FALSE(result);
  const std::string message = result.message();
  EXPECT_NE(message.find("first mismatches"), std::string::npos) << message;
  EXPECT_NE(message.find(" apart"), std::string::npos) << message;  // the distance in codes
  EXPECT_NE(message.find("rtz"), std::string::npos) << message;          // the diagnosis
  const check::Report report = ElementReport(ParseTargetOrDie("e4m3"), Fp32Inputs(x), Codes(codes));
  EXPECT_EQ(message, check::ReportText(report));
  EXPECT_TRUE(DiagnosedAs(report, "rtz"));
  EXPECT_FALSE(DiagnosedAs(report, "profile ml_dtypes"));
}

TEST(Matchers, NothingComparedFails) {
  const std::vector<float> none;
  const std::vector<std::uint8_t> no_codes;
  EXPECT_FALSE(CodesMatchModel(ParseTargetOrDie("e4m3"), Fp32Inputs(none), Codes(no_codes)));
}

TEST(Matchers, BadTargetThrows) { EXPECT_THROW(ParseTargetOrDie("e4m4"), std::invalid_argument); }

TEST(Matchers, RecipeOutputsOfTheModelPassAndAWrongScaleFailsWithItsBlock) {
  const check::Target target = ParseTargetOrDie("mxfp8_e4m3");
  const long rows = 2;
  const long cols = 64;
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 37) * 0.25f - 4.0f;
  recipe::GroupGrid g;
  ASSERT_EQ(recipe::MakeGroupGrid(target.recipe, target.layout, rows, cols, &g), recipe::TensorStatus::kOk);
  const recipe::BufferSizes sizes = recipe::SizesOf(target.recipe, g);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<std::uint8_t> scale_codes(static_cast<std::size_t>(sizes.scale_codes));
  recipe::QuantizedTensor q;
  q.codes = codes.data();
  q.scale_codes = scale_codes.data();
  ASSERT_EQ(recipe::QuantizeTensor(target.recipe, target.layout, x.data(), rows, cols, q), recipe::TensorStatus::kOk);
  check::RecipeOutputs out;
  out.codes = Codes(codes);
  out.scale_codes = scale_codes.data();
  out.scale_code_count = scale_codes.size();
  LOWBIT_EXPECT_RECIPE_MATCHES(target, Fp32Inputs(x), rows, cols, out);
  // Dequantized values: the model's own pass, one flipped bit fails.
  std::vector<float> back(x.size());
  ASSERT_EQ(recipe::DequantizeTensor(target.recipe, target.layout, recipe::AsConst(q), rows, cols, back.data()),
            recipe::TensorStatus::kOk);
  EXPECT_TRUE(DequantizedMatchesModel(target, out, rows, cols, back.data()));
  back[3] = std::nextafter(back[3], 1e30f);
  EXPECT_FALSE(DequantizedMatchesModel(target, out, rows, cols, back.data()));
  scale_codes[1] += 1;
  const ::testing::AssertionResult result = RecipeOutputsMatchModel(target, Fp32Inputs(x), rows, cols, out);
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("block 1"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace lowbit::testing
