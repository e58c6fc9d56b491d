// The tuned kernels' launchers (tensor_call.h) refuse bad arguments with one
// line that names the family and the fault, before the device is asked
// anything, so these run on any machine where lowbit::cuda is built, GPU or
// not (docs/bad-input.md "CUDA"): a null recipe, a recipe a family's kernels
// do not run, an input type that does not exist, sizes whose byte counts
// overflow; and empty tensors are ok. The pointers are a few host bytes,
// never read: each refusal comes first.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "block_model.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/status.h"
#include "lowbit/formats/recipe/recipe.h"
#include "tensor_call.h"

namespace lowbit::cuda::detail {
namespace {

constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::size_t k2p32 = std::size_t{1} << 32;

// Whether `s` refuses with a message that names `part`.
::testing::AssertionResult Refused(const Status& s, const std::string& part) {
  if (s.ok) return ::testing::AssertionFailure() << "accepted; wanted an error naming '" << part << "'";
  if (s.message.find(part) == std::string::npos) {
    return ::testing::AssertionFailure() << "'" << s.message << "' does not name '" << part << "'";
  }
  return ::testing::AssertionSuccess();
}

constexpr recipe::Layout kPerTensor{recipe::Geometry::kPerTensor, 0, 0};
constexpr recipe::Layout kPerRow{recipe::Geometry::kPerRow, 0, 0};

// A call of `r` over host bytes that no check reads.
struct HostCall {
  float host[16] = {};
  std::uint8_t bytes[16] = {};
  TensorCall Of(const recipe::Recipe* r, const recipe::Layout& layout, std::size_t rows, std::size_t cols) {
    TensorCall t;
    t.recipe = r;
    t.layout = layout;
    t.rows = rows;
    t.cols = cols;
    t.input = host;
    t.output = host;
    t.q.codes = bytes;
    t.q.scale_codes = bytes;
    t.q.scales = host;
    t.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(host);
    t.workspace = host;
    return t;
  }
};

TEST(CudaTensorCall, NullOrForeignRecipeRefused) {
  HostCall h;
  EXPECT_TRUE(Refused(RunTensorCall(true, h.Of(nullptr, kPerRow, 4, 4)), "cuda: null recipe"));
  EXPECT_TRUE(Refused(LaunchMx(true, h.Of(nullptr, kPerRow, 4, 4)), "mx: null recipe"));
  EXPECT_TRUE(Refused(LaunchNvfp4(false, h.Of(nullptr, kPerRow, 4, 4)), "nvfp4 dequantize: null recipe"));
  EXPECT_TRUE(Refused(LaunchFp8Scaled(RecipeKernel::kFp8PerRow, h.Of(nullptr, kPerRow, 4, 4)),
                    "fp8 per-token: null recipe"));
  EXPECT_TRUE(Refused(LaunchInt(true, h.Of(nullptr, kPerRow, 4, 4)), "int quantize: null recipe"));
  // torchao's ceil rule: an MX recipe, but not the semantics of the TE or
  // OCP recipe the kernels compile.
  const recipe::Recipe& ceil = testing::CatalogRecipeNamed("mxfp4", "ao-ceil");
  EXPECT_TRUE(Refused(LaunchMx(true, h.Of(&ceil, ceil.layout, 1, 32)), "no GPU kernel for the recipe 'mxfp4:ao-ceil'"));
  EXPECT_TRUE(Refused(RunTensorCall(true, h.Of(&ceil, ceil.layout, 1, 32)),
                    "no GPU kernel for the recipe 'mxfp4:ao-ceil' in this layout"));
  const recipe::Recipe& mxfp4 = testing::CatalogRecipeNamed("mxfp4", "te");
  EXPECT_TRUE(Refused(LaunchNvfp4(true, h.Of(&mxfp4, mxfp4.layout, 1, 32)), "nvfp4: no GPU kernel for the recipe"));
  EXPECT_TRUE(Refused(LaunchFp8Scaled(RecipeKernel::kFp8PerTensor, h.Of(&mxfp4, kPerTensor, 1, 32)),
                    "fp8 per-tensor: no GPU kernel for the recipe 'mxfp4:te'"));
  EXPECT_TRUE(Refused(LaunchFp8Scaled(RecipeKernel::kMx, h.Of(&mxfp4, kPerTensor, 1, 32)), "per tensor or per row"));
  EXPECT_TRUE(Refused(LaunchInt(true, h.Of(&mxfp4, kPerRow, 1, 32)), "float element"));
  // TE's FP8 recipe has no dequantize kernel, nor a per-group one.
  const recipe::Recipe& e4m3 = testing::CatalogRecipeNamed("e4m3", "te");
  EXPECT_TRUE(Refused(RunTensorCall(false, h.Of(&e4m3, kPerRow, 2, 8)), "no GPU kernel for the recipe 'e4m3:te'"));
  EXPECT_TRUE(Refused(RunTensorCall(true, h.Of(&e4m3, recipe::Layout{recipe::Geometry::kGroup, 4, 0}, 2, 8)),
                    "in this layout"));
  const recipe::Recipe& int8 = testing::CatalogRecipeNamed("int8", "ao-sym");
  EXPECT_TRUE(Refused(LaunchInt(true, h.Of(&int8, kPerTensor, 2, 8)), "layout must be per-row or per-group"));
}

TEST(CudaTensorCall, InputTypeOutOfRangeRefused) {
  HostCall h;
  const recipe::Recipe& mxfp4 = testing::CatalogRecipeNamed("mxfp4", "ocp");
  TensorCall t = h.Of(&mxfp4, mxfp4.layout, 1, 32);
  t.input_type = static_cast<InputType>(5);
  EXPECT_TRUE(Refused(RunTensorCall(true, t), "input type 5"));
}

TEST(CudaTensorCall, ModelKernelsTakeF32Only) {
  HostCall h;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (KernelOf(r, r.layout, true) != RecipeKernel::kModel) continue;
    TensorCall t = h.Of(&r, r.layout, 1, 32);
    t.input_type = InputType::kBf16;
    EXPECT_TRUE(Refused(RunTensorCall(true, t), "FP32 input and output"));
    return;
  }
  FAIL() << "no catalog recipe runs on the model recipe kernels in its own layout";
}

TEST(CudaTensorCall, SizeOverflowBeforeAnyDeviceCall) {
  HostCall h;
  const recipe::Recipe& mxfp4 = testing::CatalogRecipeNamed("mxfp4", "te");
  const recipe::Recipe& nvfp4 = testing::CatalogRecipeNamed("nvfp4", "te");
  const recipe::Recipe& e4m3 = testing::CatalogRecipeNamed("e4m3", "te");
  const recipe::Recipe& int8 = testing::CatalogRecipeNamed("int8", "ao-sym");
  for (bool quantize : {true, false}) {
    SCOPED_TRACE(quantize ? "quantize" : "dequantize");
    EXPECT_TRUE(Refused(LaunchMx(quantize, h.Of(&mxfp4, mxfp4.layout, k2p32, k2p32)), "overflow"));
    EXPECT_TRUE(Refused(LaunchNvfp4(quantize, h.Of(&nvfp4, nvfp4.layout, k2p32, k2p32)), "overflow"));
    EXPECT_TRUE(Refused(LaunchInt(quantize, h.Of(&int8, kPerRow, k2p32, k2p32)), "overflow"));
  }
  EXPECT_TRUE(Refused(LaunchFp8Scaled(RecipeKernel::kFp8PerTensor, h.Of(&e4m3, kPerTensor, k2p32, k2p32)), "overflow"));
  EXPECT_TRUE(Refused(LaunchFp8Scaled(RecipeKernel::kFp8PerRow, h.Of(&e4m3, kPerRow, k2p32, k2p32)), "overflow"));
}

TEST(CudaTensorCall, EmptyIsOk) {
  const recipe::Recipe& mxfp4 = testing::CatalogRecipeNamed("mxfp4", "te");
  const recipe::Recipe& nvfp4 = testing::CatalogRecipeNamed("nvfp4", "te");
  const recipe::Recipe& e4m3 = testing::CatalogRecipeNamed("e4m3", "te");
  const recipe::Recipe& int8 = testing::CatalogRecipeNamed("int8", "ao-sym");
  // Null buffers and a width that would overflow: rows 0 is checked first.
  auto empty = [](const recipe::Recipe& r, const recipe::Layout& layout) {
    TensorCall t;
    t.recipe = &r;
    t.layout = layout;
    t.rows = 0;
    t.cols = kSizeMax;
    return t;
  };
  for (bool quantize : {true, false}) {
    EXPECT_TRUE(LaunchMx(quantize, empty(mxfp4, mxfp4.layout)).ok);
    EXPECT_TRUE(LaunchNvfp4(quantize, empty(nvfp4, nvfp4.layout)).ok);
    EXPECT_TRUE(LaunchInt(quantize, empty(int8, kPerRow)).ok);
  }
  EXPECT_TRUE(LaunchFp8Scaled(RecipeKernel::kFp8PerTensor, empty(e4m3, kPerTensor)).ok);
  EXPECT_TRUE(LaunchFp8Scaled(RecipeKernel::kFp8PerRow, empty(e4m3, kPerRow)).ok);
}

}  // namespace
}  // namespace lowbit::cuda::detail
