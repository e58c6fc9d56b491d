// Which GPU kernel runs a recipe (lowbit/cuda/recipe_plan.h KernelOf) is a
// function of the recipe's fields: pinned at compile time for catalog
// recipes, for a renamed copy of one (same kernel) and for a copy with one
// field changed (no tuned kernel); and, over the whole catalog, the tuned
// kernels take exactly the catalog recipes they were written for, named
// here by their catalog names. Host code; runs without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/recipe_quantize.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit::cuda {
namespace {

using detail::KernelOf;
using detail::RecipeKernel;

// The catalog recipe "name:profile" at compile time.
constexpr const recipe::Recipe& Catalog(std::string_view name, std::string_view profile) {
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.name == name && r.profile == profile) return r;
  }
  throw "no such recipe in recipe/catalog.h";  // not a constant: a compile error at the call
}

constexpr recipe::Layout kPerTensor{recipe::Geometry::kPerTensor, 0, 0};
constexpr recipe::Layout kPerRow{recipe::Geometry::kPerRow, 0, 0};
constexpr recipe::Layout kGroup128{recipe::Geometry::kGroup, 128, 0};
constexpr recipe::Layout kTile{recipe::Geometry::kTile2d, 128, 128};

constexpr recipe::Recipe Renamed(recipe::Recipe r) {
  r.name = "a user's";
  r.profile = "own name";
  return r;
}

// MX: TE's and OCP's recipes, whatever their name; the same RCEIL rule with
// torchao's other steps, or TE's with another element rounding, is not the
// kernels' recipe.
constexpr const recipe::Recipe& kMxfp4Te = Catalog("mxfp4", "te");
static_assert(KernelOf(kMxfp4Te, kMxfp4Te.layout, true) == RecipeKernel::kMx);
static_assert(KernelOf(Catalog("mxfp8_e4m3", "ocp"), kMxfp4Te.layout, false) == RecipeKernel::kMx);
static_assert(KernelOf(Renamed(kMxfp4Te), kMxfp4Te.layout, true) == RecipeKernel::kMx);
static_assert(Catalog("mxfp4", "ao-rceil").scale_rule == kMxfp4Te.scale_rule &&
              KernelOf(Catalog("mxfp4", "ao-rceil"), kMxfp4Te.layout, true) == RecipeKernel::kNone);
static_assert(KernelOf(Catalog("mxfp4", "ao-ceil"), kMxfp4Te.layout, true) == RecipeKernel::kNone);
constexpr recipe::Recipe kMxfp4TeTowardZero = [] {
  recipe::Recipe r = Catalog("mxfp4", "te");
  r.element_encode.rounding = RoundingMode::kTowardZero;
  return r;
}();
static_assert(KernelOf(kMxfp4TeTowardZero, kMxfp4Te.layout, true) == RecipeKernel::kNone);
// TE's rule on MXINT8 is a recipe the catalog does not list: no copy of the
// kernels is compiled for it.
constexpr recipe::Recipe kMxint8Te = recipe::MakeMxRecipe(recipe::kMxFormats[5], recipe::kMxProfiles[detail::kMxTeProfile]);
static_assert(std::string_view(recipe::kMxFormats[5].name) == "mxint8" &&
              KernelOf(kMxint8Te, kMxint8Te.layout, true) == RecipeKernel::kNone);

// NVFP4: TE's recipe only; torchao 0.18's runs on the model recipe kernels.
static_assert(KernelOf(Renamed(Catalog("nvfp4", "te")), Catalog("nvfp4", "te").layout, true) == RecipeKernel::kNvfp4);
static_assert(KernelOf(Catalog("nvfp4", "ao"), Catalog("nvfp4", "ao").layout, true) == RecipeKernel::kNone);
static_assert(KernelOf(Catalog("nvfp4", "ao-0.18"), Catalog("nvfp4", "ao-0.18").layout, true) ==
              RecipeKernel::kModel);

// FP8 current scaling: quantize per tensor and per row, not pow2 scales.
static_assert(KernelOf(Catalog("e4m3", "te"), kPerTensor, true) == RecipeKernel::kFp8PerTensor);
static_assert(KernelOf(Catalog("e5m2", "te"), kPerRow, true) == RecipeKernel::kFp8PerRow);
static_assert(KernelOf(Catalog("e4m3", "te"), kPerRow, false) == RecipeKernel::kNone);
static_assert(KernelOf(Catalog("e4m3", "te"), kGroup128, true) == RecipeKernel::kNone);
static_assert(KernelOf(Catalog("e4m3", "te-pow2"), kPerTensor, true) == RecipeKernel::kNone);

// Integers: per row and per group, both ways; a changed code range is not
// the kernels' recipe; GPTQ with FP16 scales runs on the model kernels.
static_assert(KernelOf(Renamed(Catalog("int8", "ao-sym")), kPerRow, false) == RecipeKernel::kInt);
static_assert(KernelOf(Catalog("uint4", "gptq-asym"), kGroup128, true) == RecipeKernel::kInt);
static_assert(KernelOf(Catalog("int4", "common"), kTile, true) == RecipeKernel::kNone);
constexpr recipe::Recipe kInt8Narrow = [] {
  recipe::Recipe r = Catalog("int8", "ao-sym");
  r.qmin = -127;
  return r;
}();
static_assert(Catalog("int8", "ao-sym").qmin == -128 && KernelOf(kInt8Narrow, kPerRow, true) == RecipeKernel::kNone);
static_assert(KernelOf(Catalog("uint4", "gptq-sym-fp16"), kGroup128, true) == RecipeKernel::kModel);

static_assert(RunsQuantize(Catalog("e4m3", "te"), kPerTensor) && !RunsDequantize(Catalog("e4m3", "te"), kPerTensor));

// Over the catalog, the tuned kernels take exactly the recipes they were
// written for: MX "te" and "ocp" (every MX format that lists them), NVFP4
// "te", FP8 "te" quantize per tensor, and the integer recipes of
// kScaledPairs per row.
TEST(CudaRecipePlan, TunedKernelsTakeTheCatalogRecipesTheyWereWrittenFor) {
  int mx = 0, nvfp4 = 0, fp8 = 0, integer = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    const std::string name = recipe::RecipeName(r);
    const std::string_view profile = r.profile;
    const RecipeKernel block = KernelOf(r, r.layout, true);
    const bool mx_written = r.family() == recipe::Family::kMx && (profile == "te" || profile == "ocp");
    EXPECT_EQ(block == RecipeKernel::kMx, mx_written) << name;
    mx += mx_written;
    const bool nvfp4_written = r.family() == recipe::Family::kNvfp4 && profile == "te";
    EXPECT_EQ(block == RecipeKernel::kNvfp4, nvfp4_written) << name;
    nvfp4 += nvfp4_written;
    const bool fp8_written = (name == "e4m3:te" || name == "e5m2:te");
    EXPECT_EQ(KernelOf(r, kPerTensor, true) == RecipeKernel::kFp8PerTensor, fp8_written) << name;
    fp8 += fp8_written;
    bool integer_written = false;
    for (const recipe::ScaledPair& p : recipe::kScaledPairs) {
      integer_written |= !p.element.IsFloat() && name == std::string(p.element.name) + ":" + p.profile.name;
    }
    EXPECT_EQ(KernelOf(r, kPerRow, true) == RecipeKernel::kInt, integer_written) << name;
    integer += integer_written;
  }
  // 5 float MX formats x 2 + MXINT8's "ocp"; one NVFP4; two FP8; 14 integer.
  EXPECT_EQ(mx, 11);
  EXPECT_EQ(nvfp4, 1);
  EXPECT_EQ(fp8, 2);
  EXPECT_EQ(integer, 14);
}

}  // namespace
}  // namespace lowbit::cuda
