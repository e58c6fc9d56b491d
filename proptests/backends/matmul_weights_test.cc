// The packed-weight view (formats/matmul/weights.h): lowbit's own quantized
// tensors (the model's recipe/tensor.h QuantizeTensor, what lowbit.quantize
// runs) read through the view give the model's dequantized values, the GPTQ
// and AWQ word layouts read back the codes lowbit's packers stored, and
// Validate names each bad argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lowbit/formats/matmul/dequantize.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "matmul_support.h"

namespace lowbit::matmul_test {
namespace {

struct ModelCase {
  const char* format;
  const char* profile;
  recipe::Layout layout;  // geometry {} = the recipe's default
  bool use_default_layout;
  matmul::WeightFormat weight_format;
  matmul::ScaleType scale_type;
  matmul::ScaleGeometry geometry;
  std::int64_t n, k;
};

// Quantizes a random W [N, K] with the model and reads it back through the
// view: each exact weight rounded to FP32 once must equal the model's
// DequantizeTensor value (its single FP32 multiply for these recipes: MX
// element * scale, NVFP4 TE (q * s) * t with q * s exact, scaled (q - z) * s).
void CheckModelRoundTrip(const ModelCase& c) {
  const recipe::Recipe* r = recipe::FindRecipe(c.format, c.profile);
  ASSERT_NE(r, nullptr) << c.format << ":" << c.profile;
  const recipe::Layout layout = c.use_default_layout ? r->layout : c.layout;
  recipe::GroupGrid grid;
  ASSERT_EQ(recipe::MakeGroupGrid(*r, layout, c.n, c.k, &grid), recipe::TensorStatus::kOk);
  const recipe::BufferSizes sizes = recipe::SizesOf(*r, grid);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<std::uint8_t> scale_codes(static_cast<std::size_t>(sizes.scale_codes));
  std::vector<float> scales(static_cast<std::size_t>(sizes.scales));
  std::vector<std::int32_t> zeros(static_cast<std::size_t>(sizes.zero_points));
  std::vector<recipe::TensorScale> tensor_scale(static_cast<std::size_t>(sizes.tensor_scales));
  recipe::QuantizedTensor q{codes.data(), scale_codes.empty() ? nullptr : scale_codes.data(),
                            scales.empty() ? nullptr : scales.data(), zeros.empty() ? nullptr : zeros.data(),
                            tensor_scale.empty() ? nullptr : tensor_scale.data()};
  Random rnd(static_cast<std::uint64_t>(c.n * 1000 + c.k));
  std::vector<float> w(static_cast<std::size_t>(c.n * c.k));
  for (float& v : w) v = static_cast<float>(std::ldexp(static_cast<double>(rnd.Int(-1000000, 1000000)), -18));
  ASSERT_EQ(recipe::QuantizeTensor(*r, layout, w.data(), c.n, c.k, q), recipe::TensorStatus::kOk);
  std::vector<float> model(w.size());
  ASSERT_EQ(recipe::DequantizeTensor(*r, layout, recipe::AsConst(q), c.n, c.k, model.data()),
            recipe::TensorStatus::kOk);

  const void* scales_ptr = scale_codes.empty() ? static_cast<const void*>(scales.data()) : scale_codes.data();
  const matmul::WeightView view = matmul::DenseWeights(
      c.weight_format, matmul::WeightPacking::kLowbit, c.geometry, c.scale_type, c.n, c.k,
      c.geometry == matmul::ScaleGeometry::kPerRow ? 0 : layout.size, 1, codes.data(), scales_ptr,
      zeros.empty() ? nullptr : zeros.data(), tensor_scale.empty() ? nullptr : tensor_scale.data());
  const matmul::DequantizedWeights exact = matmul::DequantizeWeights(view);
  ASSERT_TRUE(exact.status.ok) << exact.status.error;
  for (std::size_t i = 0; i < model.size(); ++i) {
    const float rounded = static_cast<float>(exact.values[i]);
    ASSERT_TRUE(rounded == model[i] || (std::isnan(rounded) && std::isnan(model[i])))
        << c.format << ":" << c.profile << " element " << i << ": exact " << exact.values[i] << ", model "
        << model[i];
  }
}

TEST(MatmulWeights, LowbitQuantizedTensorsReadThroughTheView) {
  using matmul::ScaleGeometry;
  using matmul::ScaleType;
  using matmul::WeightFormat;
  const ModelCase cases[] = {
      // MX / NVFP4 default layout: 1-D blocks of the flattened tensor, K
      // not a multiple of the block (blocks run across rows), odd N.
      {"mxfp4", "ocp", {}, true, WeightFormat::kMxfp4, ScaleType::kE8m0, ScaleGeometry::kFlatBlocks, 5, 77},
      {"mxfp8_e4m3", "ocp", {}, true, WeightFormat::kMxfp8E4m3, ScaleType::kE8m0, ScaleGeometry::kFlatBlocks, 3,
       45},
      {"nvfp4", "te", {}, true, WeightFormat::kNvfp4, ScaleType::kUe4m3, ScaleGeometry::kFlatBlocks, 7, 37},
      // Per-row groups ("/g16", "/g32").
      {"nvfp4", "te", {recipe::Geometry::kGroup, 16, 0}, false, WeightFormat::kNvfp4, ScaleType::kUe4m3,
       ScaleGeometry::kRowGroups, 3, 64},
      {"mxfp4", "ocp", {recipe::Geometry::kGroup, 32, 0}, false, WeightFormat::kMxfp4, ScaleType::kE8m0,
       ScaleGeometry::kRowGroups, 3, 96},
      // Scaled integer recipes per group of 128, with and without zero points.
      {"int4", "ao-sym", {recipe::Geometry::kGroup, 128, 0}, false, WeightFormat::kInt4, ScaleType::kFp32,
       ScaleGeometry::kRowGroups, 3, 256},
      {"uint4", "gptq-asym", {recipe::Geometry::kGroup, 128, 0}, false, WeightFormat::kUint4, ScaleType::kFp32,
       ScaleGeometry::kRowGroups, 5, 256},
      {"uint4", "ao-asym", {recipe::Geometry::kGroup, 32, 0}, false, WeightFormat::kUint4, ScaleType::kFp32,
       ScaleGeometry::kRowGroups, 2, 96},
      // FP8 per output channel.
      {"e4m3", "te", {recipe::Geometry::kPerRow, 0, 0}, false, WeightFormat::kFp8E4m3PerChannel, ScaleType::kFp32,
       ScaleGeometry::kPerRow, 9, 33},
  };
  for (const ModelCase& c : cases) {
    SCOPED_TRACE(std::string(c.format) + ":" + c.profile);
    CheckModelRoundTrip(c);
  }
}

// GPTQ / AWQ: the view reads back the [K][N] codes and the zero points that
// lowbit's packers (formats/block/packing.h) stored.
TEST(MatmulWeights, GptqAndAwqWordsReadBackThePackedCodes) {
  for (const char* kind_name : {"uint4/g128+gptq-fp16", "uint4/g128+awq-bf16"}) {
    const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(kind_name);
    ASSERT_NE(kind, nullptr);
    Random r(3);
    for (int t = 0; t < 20; ++t) {
      Problem p = RandomProblem(r, *kind, 0.0);
      const matmul::MatmulProblem view = p.View();
      for (std::int64_t l = 0; l < p.batch; ++l) {
        for (std::int64_t n = 0; n < p.n; ++n) {
          for (std::int64_t k = 0; k < p.k; ++k) {
            ASSERT_EQ(matmul::WeightCode(view.w, l, n, k), p.codes[static_cast<std::size_t>((l * p.n + n) * p.k + k)])
                << kind_name << " l=" << l << " n=" << n << " k=" << k;
            ASSERT_EQ(matmul::ZeroPointOf(view.w, l, n, k), p.Zero(l, n, k)) << kind_name;
          }
        }
      }
    }
  }
}

// ---- Validate names the problem -------------------------------------------------

struct Fixture {
  Problem p;
  matmul::MatmulProblem view;
};

Fixture Nvfp4Fixture() {
  Random r(1);
  Fixture f{RandomProblem(r, *registry::FindMatmulWeightKind("nvfp4"), 0.0, 3), {}};
  f.view = f.p.View();
  return f;
}

std::string ErrorOf(const matmul::MatmulProblem& p) {
  const matmul::ValidationResult v = matmul::Validate(p);
  return v.ok ? "ok" : v.error;
}

TEST(MatmulValidate, AcceptsTheDenseProblem) {
  Fixture f = Nvfp4Fixture();
  EXPECT_EQ(ErrorOf(f.view), "ok");
}

TEST(MatmulValidate, NamesEachProblem) {
  struct Case {
    const char* what;
    void (*mutate)(matmul::MatmulProblem&);
    const char* expected;  // a substring of the message
  };
  const Case cases[] = {
      {"K zero", [](matmul::MatmulProblem& p) { p.w.k = 0; }, "K = 0 is not positive"},
      {"K negative", [](matmul::MatmulProblem& p) { p.w.k = -4; }, "K = -4 is not positive"},
      {"N zero", [](matmul::MatmulProblem& p) { p.w.n = 0; }, "N = 0 is not positive"},
      {"M zero", [](matmul::MatmulProblem& p) { p.m = 0; }, "M = 0 is not positive"},
      {"batch zero", [](matmul::MatmulProblem& p) { p.w.batch = 0; }, "batch L = 0 is not positive"},
      {"null codes", [](matmul::MatmulProblem& p) { p.w.codes = nullptr; }, "codes is null"},
      {"null scales", [](matmul::MatmulProblem& p) { p.w.scales = nullptr; }, "scales is null"},
      {"null tensor scale", [](matmul::MatmulProblem& p) { p.w.tensor_scale = nullptr; }, "tensor_scale is null"},
      {"scales too few", [](matmul::MatmulProblem& p) { p.w.scales_count -= 1; }, "scales holds"},
      {"scales too many", [](matmul::MatmulProblem& p) { p.w.scales_count += 1; }, "the shape needs"},
      {"codes wrong size", [](matmul::MatmulProblem& p) { p.w.codes_count += 2; }, "codes holds"},
      {"wrong block", [](matmul::MatmulProblem& p) { p.w.block = 32; }, "nvfp4 blocks are 16 elements"},
      {"wrong scale type", [](matmul::MatmulProblem& p) { p.w.scale_type = matmul::ScaleType::kE8m0; },
       "nvfp4 scales are UE4M3"},
      {"zeros on nvfp4", [](matmul::MatmulProblem& p) { p.w.zeros = p.w.codes; }, "have no zero points"},
      {"x too small", [](matmul::MatmulProblem& p) { p.x.count -= 1; }, "x holds"},
      {"x row stride", [](matmul::MatmulProblem& p) { p.x.row_stride = p.w.k - 1; }, "x row stride"},
      {"y row stride", [](matmul::MatmulProblem& p) { p.y.row_stride = p.w.n - 1; }, "y row stride"},
      {"null y", [](matmul::MatmulProblem& p) { p.y.data = nullptr; }, "y is null"},
      {"y misaligned",
       [](matmul::MatmulProblem& p) {
         p.y.type = matmul::OutputType::kFp32;
         p.y.data = static_cast<char*>(p.y.data) + 2;
       },
       "y is not aligned to 4 bytes"},
      {"x misaligned", [](matmul::MatmulProblem& p) { p.x.data = static_cast<const char*>(p.x.data) + 1; },
       "x is not aligned to 2 bytes"},
      {"y overlaps x",
       [](matmul::MatmulProblem& p) {
         p.y.type = matmul::OutputType::kBf16;
         p.y.data = const_cast<void*>(p.x.data);
         p.y.row_stride = p.w.n;
         p.y.batch_stride = p.m * p.w.n;
         p.y.count = (p.w.batch - 1) * p.y.batch_stride + (p.m - 1) * p.y.row_stride + p.w.n;
       },
       "y overlaps x"},
      {"bad activation type", [](matmul::MatmulProblem& p) { p.x.type = static_cast<matmul::ActivationType>(7); },
       "activations must be BF16 or FP16"},
      {"bad output type", [](matmul::MatmulProblem& p) { p.y.type = static_cast<matmul::OutputType>(9); },
       "the output must be BF16, FP16 or FP32"},
      {"bad format", [](matmul::MatmulProblem& p) { p.w.format = static_cast<matmul::WeightFormat>(42); },
       "unknown weight format"},
  };
  for (const Case& c : cases) {
    Fixture f = Nvfp4Fixture();
    c.mutate(f.view);
    const std::string error = ErrorOf(f.view);
    EXPECT_NE(error, "ok") << c.what;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.what << ": " << error;
  }
}

TEST(MatmulValidate, IntegerLayoutsNameTheirShapeRules) {
  Random r(5);
  Problem p = RandomProblem(r, *registry::FindMatmulWeightKind("uint4/g128+gptq-fp16"), 0.0, 1);
  matmul::MatmulProblem v = p.View();
  v.w.k = 12;  // not a multiple of 8
  EXPECT_NE(ErrorOf(v).find("K = 12 is not a multiple of 8"), std::string::npos) << ErrorOf(v);
  v = p.View();
  v.w.n = 12;
  EXPECT_NE(ErrorOf(v).find("N = 12 is not a multiple of 8"), std::string::npos) << ErrorOf(v);
  v = p.View();
  v.w.geometry = matmul::ScaleGeometry::kFlatBlocks;
  EXPECT_NE(ErrorOf(v).find("per group along K"), std::string::npos) << ErrorOf(v);
  v = p.View();
  v.w.scale_type = matmul::ScaleType::kE8m0;
  EXPECT_NE(ErrorOf(v).find("FP32, FP16 or BF16 scales"), std::string::npos) << ErrorOf(v);
  v = p.View();
  v.w.block = 0;
  EXPECT_NE(ErrorOf(v).find("group size must be positive"), std::string::npos) << ErrorOf(v);
  if (p.with_zeros) {
    v = p.View();
    v.w.zeros_count += 1;
    EXPECT_NE(ErrorOf(v).find("zeros (qzeros) holds"), std::string::npos) << ErrorOf(v);
  }
}

TEST(MatmulValidate, BatchStridesMustCoverEachBatch) {
  Random r(9);
  Problem p = RandomProblem(r, *registry::FindMatmulWeightKind("mxfp4"), 0.0, 3);
  p.batch = 2;
  p.codes.resize(static_cast<std::size_t>(2 * p.n * p.k));
  p.scale_bits.resize(static_cast<std::size_t>(2 * p.ScalesPerBatch()), 127);
  p.x.resize(static_cast<std::size_t>(2 * p.m * p.k), 0x3F80);
  Pack(p);
  matmul::MatmulProblem v = p.View();
  EXPECT_EQ(ErrorOf(v), "ok");
  v.y.batch_stride = 1;
  EXPECT_NE(ErrorOf(v).find("y batch stride 1 is less than one batch's"), std::string::npos) << ErrorOf(v);
  v = p.View();
  v.w.scales_batch_stride = -1;
  EXPECT_NE(ErrorOf(v).find("scales batch stride is negative"), std::string::npos) << ErrorOf(v);
  // A shared weight (stride 0) with one batch's buffers is valid.
  v = p.View();
  v.w.codes_batch_stride = 0;
  v.w.codes_count = static_cast<std::int64_t>(p.code_bytes.size() / 2);
  v.w.scales_batch_stride = 0;
  v.w.scales_count = p.ScalesPerBatch();
  EXPECT_EQ(ErrorOf(v), "ok");
}

}  // namespace
}  // namespace lowbit::matmul_test
