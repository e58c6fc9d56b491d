// The user's per-token FP8 kernel (per_token_fp8.cu) checked with
// lowbit::testing, found through find_package(lowbit): the kernel claims to
// be TransformerEngine's current scaling per row, which lowbit names
// "e4m3:te/row". Property tests feed it lowbit's boundary-biased rows (ties
// after scaling, one outlier, NaN/Inf inside, all zeros, tiny and huge
// amax, BF16 inputs on E4M3's ties and just past its max) and compare codes
// and scales with the model; the wrong variants must fail, and the diagnosis
// must name what they do instead.
//
// PerTokenFp8Host runs the kernel's own __host__ __device__ code on the CPU
// (CI, no GPU); PerTokenFp8Gpu launches it on a GPU and skips without one,
// unless LOWBIT_REQUIRE_GPU=1 (the GPU machine), where no GPU is a failure.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "lowbit/formats/convert.h"
#include "lowbit/testing/testing.h"
#include "per_token_fp8.h"

namespace {

using user_kernel::Variant;

// What the kernel claims to reproduce.
const lowbit::check::Target& Target() {
  static const lowbit::check::Target target = lowbit::testing::ParseTargetOrDie("e4m3:te/row");
  return target;
}

// The generators give FP32 values; the kernel reads BF16 (rounded to nearest
// even by the model: the tie-aligned rows stay on ties, E4M3's ties need 4
// significant bits).
std::vector<std::uint16_t> ToBf16(const std::vector<float>& x) {
  std::vector<std::uint16_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = static_cast<std::uint16_t>(lowbit::EncodeF32(lowbit::kBf16, x[i]).code);
  return out;
}

struct Run {
  std::vector<std::uint8_t> codes;
  std::vector<float> scale_inv;
  std::string error;
};

Run Quantize(bool gpu, const std::vector<std::uint16_t>& x, long rows, long cols, Variant variant) {
  Run run{std::vector<std::uint8_t>(x.size()), std::vector<float>(static_cast<std::size_t>(rows)), ""};
  if (gpu) {
    run.error = user_kernel::QuantizeRowsOnGpu(x.data(), rows, cols, run.codes.data(), run.scale_inv.data(), variant);
  } else {
    user_kernel::QuantizeRowsOnHost(x.data(), rows, cols, run.codes.data(), run.scale_inv.data(), variant);
  }
  return run;
}

lowbit::check::Report Check(const std::vector<std::uint16_t>& x, long rows, long cols, const Run& run) {
  lowbit::check::RecipeOutputs out;
  out.codes = lowbit::testing::Codes(run.codes);
  out.scales = run.scale_inv.data();
  out.scale_count = run.scale_inv.size();
  return lowbit::testing::RecipeReport(Target(), lowbit::testing::Bf16Inputs(x), rows, cols, out);
}

// lowbit's rows for this recipe and layout, as the kernel reads them.
void PropertyOnGeneratedRows(bool gpu, Variant variant) {
  lowbit::testing::CheckProperty(gpu ? 300 : 200, [gpu, variant] {
    const lowbit::testing::Matrix m = *lowbit::testing::Matrices(Target().recipe, Target().layout);
    const std::vector<std::uint16_t> x = ToBf16(m.values);
    const Run run = Quantize(gpu, x, m.rows, m.cols, variant);
    RC_ASSERT(run.error.empty());
    const lowbit::check::Report report = Check(x, m.rows, m.cols, run);
    if (!report.Passed()) RC_FAIL(lowbit::check::ReportText(report));
  });
}

// Rows of single BF16 values biased to E4M3's boundaries (with the scale a
// row gets, these land on scaled ties and near the saturation point).
void PropertyOnBoundaryRows(bool gpu) {
  lowbit::testing::CheckProperty(200, [gpu] {
    const long rows = *rc::gen::inRange(1, 4);
    const long cols = *rc::gen::inRange(1, 300);
    std::vector<std::uint16_t> x(static_cast<std::size_t>(rows * cols));
    for (std::uint16_t& v : x) v = *lowbit::testing::BoundaryBf16Bits(lowbit::kE4m3);
    const Run run = Quantize(gpu, x, rows, cols, Variant::kCorrect);
    RC_ASSERT(run.error.empty());
    const lowbit::check::Report report = Check(x, rows, cols, run);
    if (!report.Passed()) RC_FAIL(lowbit::check::ReportText(report));
  });
}

// One larger tensor of lowbit's rows (fixed seed), grown until the wrong
// variant writes at least kMinDifferingCodes codes that the kernel's correct
// variant does not (both run on the host here, so the count is the kernel's
// own and does not depend on how lowbit's generators happen to fall): the
// division variant differs from the multiplication on only a few inputs
// (x / fp32(1/s) against x * s: one FP32 ulp on near-ties), so a fixed
// number of rows could miss it.
struct Tensor {
  std::vector<std::uint16_t> x;
  long rows = 0;
  long cols = 0;
};
constexpr int kMinDifferingCodes = 8;
constexpr int kMaxRows = 4096;
int DifferingCodes(const Tensor& t, Variant variant) {
  const Run correct = Quantize(false, t.x, t.rows, t.cols, Variant::kCorrect);
  const Run wrong = Quantize(false, t.x, t.rows, t.cols, variant);
  int differing = 0;
  for (std::size_t i = 0; i < correct.codes.size(); ++i) differing += correct.codes[i] != wrong.codes[i];
  return differing;
}
Tensor TensorWhereVariantDiffers(Variant variant) {
  Tensor t;
  t.cols = 512;
  rc::Random random(11);
  while (t.rows < kMaxRows) {
    for (int i = 0; i < 16; ++i) {
      const lowbit::testing::Matrix m =
          lowbit::testing::MatrixOfShape(Target().recipe, Target().layout, 1, t.cols)(random.split(), rc::kNominalSize).value();
      const std::vector<std::uint16_t> row = ToBf16(m.values);
      t.x.insert(t.x.end(), row.begin(), row.end());
      ++t.rows;
    }
    if (DifferingCodes(t, variant) >= kMinDifferingCodes) break;
  }
  return t;
}

void WrongVariantIsDiagnosed(bool gpu, Variant variant, const char* convention) {
  const Tensor t = TensorWhereVariantDiffers(variant);
  ASSERT_GE(DifferingCodes(t, variant), kMinDifferingCodes)
      << "no tensor of up to " << kMaxRows << " generated rows tells this variant from the correct one";
  const Run run = Quantize(gpu, t.x, t.rows, t.cols, variant);
  ASSERT_EQ(run.error, "");
  const lowbit::check::Report report = Check(t.x, t.rows, t.cols, run);
  EXPECT_FALSE(lowbit::testing::ReportPassed(report)) << "the wrong variant passed the check";
  EXPECT_TRUE(lowbit::testing::DiagnosedAs(report, convention));
  std::printf("%s", lowbit::check::ReportText(report).c_str());
}

bool SkipWithoutGpu() {
  if (user_kernel::CudaDeviceAvailable()) return false;
  const char* required = std::getenv("LOWBIT_REQUIRE_GPU");
  if (required != nullptr && std::string(required) == "1") {
    ADD_FAILURE() << "LOWBIT_REQUIRE_GPU=1 but no CUDA device is usable";
  }
  return true;
}

TEST(PerTokenFp8Host, MatchesTheModelOnGeneratedRows) { PropertyOnGeneratedRows(false, Variant::kCorrect); }
TEST(PerTokenFp8Host, MatchesTheModelOnBoundaryRows) { PropertyOnBoundaryRows(false); }
TEST(PerTokenFp8Host, DivisionVariantIsDiagnosed) { WrongVariantIsDiagnosed(false, Variant::kDivideByScaleInv, "divide by the stored scale"); }
TEST(PerTokenFp8Host, TowardZeroVariantIsDiagnosed) { WrongVariantIsDiagnosed(false, Variant::kTowardZero, "rounding rtz"); }

TEST(PerTokenFp8Gpu, MatchesTheModelOnGeneratedRows) {
  if (SkipWithoutGpu()) GTEST_SKIP() << "no CUDA device";
  PropertyOnGeneratedRows(true, Variant::kCorrect);
}
TEST(PerTokenFp8Gpu, MatchesTheModelOnBoundaryRows) {
  if (SkipWithoutGpu()) GTEST_SKIP() << "no CUDA device";
  PropertyOnBoundaryRows(true);
}
TEST(PerTokenFp8Gpu, DivisionVariantIsDiagnosed) {
  if (SkipWithoutGpu()) GTEST_SKIP() << "no CUDA device";
  WrongVariantIsDiagnosed(true, Variant::kDivideByScaleInv, "divide by the stored scale");
}
TEST(PerTokenFp8Gpu, TowardZeroVariantIsDiagnosed) {
  if (SkipWithoutGpu()) GTEST_SKIP() << "no CUDA device";
  WrongVariantIsDiagnosed(true, Variant::kTowardZero, "rounding rtz");
}

}  // namespace
