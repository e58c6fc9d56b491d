// The registry's choice of a row (registry/choose.h), the one rule the Python
// package, the CLI and the benchmarks use: the rows registered for the
// caller's memory, available here and taking the arguments, the highest
// preference first, ties to the first registered; for recipes a row of the
// exact name before a row that reads any layout from the target.
#include <gtest/gtest.h>

#include <string>

#include "lowbit/check/backends.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/registry.h"
#if defined(LOWBIT_HAVE_SIMD)
#include "lowbit/simd/simd.h"
#endif

namespace lowbit::registry {
namespace {

Status Ok(const ConvertArgs&) { return Status::Ok(); }
Status OkRecipe(const RecipeArgs&) { return Status::Ok(); }

KernelEntry Row(const char* backend, Memory memory, int preference, bool available = true) {
  KernelEntry e;
  e.operation = Operation::kEncodeF32;
  e.format = FormatId::kE4m3;
  e.backend = backend;
  e.supports = [](const ConvertArgs&) { return true; };
  e.available = [available] { return available; };
  e.run = Ok;
  e.memory = memory;
  e.preference = preference;
  return e;
}

ConvertArgs EncodeE4m3(RoundingMode mode) {
  ConvertArgs a;
  a.operation = Operation::kEncodeF32;
  a.format = FormatId::kE4m3;
  a.encode.rounding = mode;
  return a;
}

std::string Chosen(const KernelEntry* e) { return e != nullptr ? e->backend : "none"; }
std::string Chosen(const RecipeEntry* e) { return e != nullptr ? e->backend : "none"; }

TEST(ChooseConvertRow, HighestPreferenceThatRunsTheCallInThatMemory) {
  Registry reg;
  reg.Add(Row("model", Memory::kHost, 0));
  KernelEntry rne_only = Row("rne-only", Memory::kHost, 2);
  rne_only.supports = [](const ConvertArgs& a) { return a.encode.rounding == RoundingMode::kNearestEven; };
  reg.Add(rne_only);
  reg.Add(Row("not-here", Memory::kHost, 5, /*available=*/false));
  reg.Add(Row("device", Memory::kDevice, 9));
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, EncodeE4m3(RoundingMode::kNearestEven), Memory::kHost)), "rne-only");
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, EncodeE4m3(RoundingMode::kTowardZero), Memory::kHost)), "model");
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, EncodeE4m3(RoundingMode::kTowardZero), Memory::kDevice)), "device");
  ConvertArgs other = EncodeE4m3(RoundingMode::kNearestEven);
  other.format = FormatId::kE5m2;
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, other, Memory::kHost)), "none");
}

TEST(ChooseConvertRow, TiesGoToTheFirstRegistered) {
  Registry reg;
  reg.Add(Row("first", Memory::kHost, 1));
  reg.Add(Row("second", Memory::kHost, 1));
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, EncodeE4m3(RoundingMode::kNearestEven), Memory::kHost)), "first");
}

TEST(ChooseConvertRow, NoDeviceRowThatIsAvailableMeansNone) {
  Registry reg;
  reg.Add(Row("model", Memory::kHost, 0));
  reg.Add(Row("device", Memory::kDevice, 1, /*available=*/false));
  EXPECT_EQ(Chosen(ChooseConvertRow(reg, EncodeE4m3(RoundingMode::kNearestEven), Memory::kDevice)), "none");
}

RecipeArgs Call(const char* name, RecipeOperation op = RecipeOperation::kQuantizeRecipe) {
  RecipeArgs a;
  a.operation = op;
  EXPECT_TRUE(ParseRecipe(name, &a.target)) << name;
  return a;
}

TEST(ChooseRecipeRow, ExactNameFirstThenAnyLayoutRowsOfTheRecipe) {
  Registry reg;
  reg.AddRecipe(RecipeEntry{RecipeOperation::kQuantizeRecipe, "int8:ao-sym/row", "model", [] { return true; },
                            OkRecipe, Memory::kHost, 0, /*any_layout=*/true});
  reg.AddRecipe(RecipeEntry{RecipeOperation::kQuantizeRecipe, "int8:ao-sym/row", "fast", [] { return true; },
                            OkRecipe, Memory::kHost, 3, false,
                            [](const RecipeArgs& a) { return a.given_scale == nullptr; }});
  reg.AddRecipe(RecipeEntry{RecipeOperation::kQuantizeRecipe, "int8:ao-sym/g128", "fast-g128",
                            [] { return true; }, OkRecipe, Memory::kHost, 3, false});
  reg.AddRecipe(RecipeEntry{RecipeOperation::kQuantizeRecipe, "int8:ao-sym/row", "device", [] { return true; },
                            OkRecipe, Memory::kDevice, 0, false});
  // Reads any layout and ranks highest, but a row of the exact name wins.
  reg.AddRecipe(RecipeEntry{RecipeOperation::kQuantizeRecipe, "int8:ao-sym/tensor", "any-layout-fast",
                            [] { return true; }, OkRecipe, Memory::kHost, 5, /*any_layout=*/true});
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-sym/row"), Memory::kHost)), "fast");
  RecipeArgs given = Call("int8:ao-sym/row");
  const float scale = 0.5f;
  given.given_scale = &scale;
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, given, Memory::kHost)), "model");  // "fast" does not take it
  // g128 has a row of its own; g64 only the rows that read any layout, the
  // highest ranked of them.
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-sym/g128"), Memory::kHost)), "fast-g128");
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-sym/g64"), Memory::kHost)), "any-layout-fast");
  // Another recipe whose name starts the same is not a row of this one.
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-asym/g64"), Memory::kHost)), "none");
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-sym/row"), Memory::kDevice)), "device");
  EXPECT_EQ(Chosen(ChooseRecipeRow(reg, Call("int8:ao-sym/row", RecipeOperation::kDequantizeRecipe),
                                   Memory::kHost)),
            "none");
}

TEST(RecipeRowName, ScaledRecipesCarryTheirLayout) {
  EXPECT_EQ(RecipeRowName(Call("int4:ao-sym/g128").target), "int4:ao-sym/g128");
  EXPECT_EQ(RecipeRowName(Call("mxfp4:ocp").target), "mxfp4:ocp");
}

// The registered backends: the host choice is the SIMD target that Highway's
// own dispatch picks on this CPU (kBestTarget), else the scalar model; a
// given scale goes to the scalar row; a layout no row is registered under
// goes to the scalar row that reads it from the target.
const Registry& All() {
  static const Registry registry = [] {
    Registry r;
    check::RegisterAllBackends(r);
    return r;
  }();
  return registry;
}

TEST(ChooseRegisteredRows, HostChoiceIsHighwaysBestTarget) {
#if defined(LOWBIT_HAVE_SIMD)
  const std::string best = std::string("simd:") + simd::TargetName(simd::TargetThatRuns(simd::kBestTarget));
#else
  const std::string best = "scalar";
#endif
  EXPECT_EQ(Chosen(ChooseConvertRow(All(), EncodeE4m3(RoundingMode::kNearestEven), Memory::kHost)), best);
  EXPECT_EQ(Chosen(ChooseRecipeRow(All(), Call("mxfp4:ocp"), Memory::kHost)), best);
  RecipeArgs given = Call("e4m3:vllm/tensor");
  const float scale = 0.25f;
  given.given_scale = &scale;
  EXPECT_EQ(Chosen(ChooseRecipeRow(All(), given, Memory::kHost)), "scalar");
  EXPECT_EQ(Chosen(ChooseRecipeRow(All(), Call("int8:ao-sym/g64"), Memory::kHost)), "scalar");
}

TEST(ChooseRegisteredRows, EveryApplicableConversionHasAHostRow) {
  int checked = 0;
  for (Operation op : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(op, format)) continue;
      ConvertArgs a;
      a.operation = op;
      a.format = format;
      const KernelEntry* e = ChooseConvertRow(All(), a, Memory::kHost);
      ASSERT_NE(e, nullptr) << OperationName(op) << " " << Spec(format).name;
      EXPECT_TRUE(e->available() && e->supports(a) && e->memory == Memory::kHost);
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(ChooseRegisteredRows, MatmulHostChoiceIsTheModel) {
  const MatmulEntry* e = ChooseMatmulRow(All(), MatmulOperation::kGemv, "nvfp4", matmul::ActivationType::kBf16,
                                         matmul::OutputType::kFp32, Memory::kHost);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->backend, "scalar");
  EXPECT_FALSE(static_cast<bool>(e->run_on_device));
}

}  // namespace
}  // namespace lowbit::registry
