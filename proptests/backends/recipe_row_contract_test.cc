// Recipe row coverage (registry recipe_contract.h): the registry holds
// exactly the recipe rows that kRecipeRowContract requires of the backends
// this build has, for every recipe of the catalog (recipe/catalog.h
// kAllRecipes) in every listed layout: a missing row fails naming it, and so
// does a row whose recipe is not in the catalog or that the contract does
// not list. The problem finder is shown to fail on registries that lack a row
// or hold a foreign one, and the contract's size is counted by hand here.
//
// CUDA rows are checked only when lowbit::cuda is built (BuiltBackendLibraries
// lists "cuda": lowbit::backends is then compiled with the CUDA
// registration). A CPU-only build does not check them; its CudaRows test is
// SKIPPED, not passed. The rule data for CUDA is still counted by hand below.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/recipe_contract.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

using ::lowbit::testing::AllBackends;

bool Built(const char* library) {
  const std::vector<std::string> built = check::BuiltBackendLibraries();
  return std::find(built.begin(), built.end(), library) != built.end();
}

std::string Lines(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& p : problems) text += "\n  " + p;
  return text;
}

TEST(RecipeRowContract, TheRegistryHoldsExactlyTheContractsRows) {
  std::vector<std::string> problems;
  const std::vector<std::string> backends =
      ContractBackends(AllBackends(), check::BuiltBackendLibraries(), &problems);
  ASSERT_FALSE(backends.empty());
  EXPECT_EQ(backends.front(), "scalar");
  const std::vector<std::string> rows = RecipeRowProblems(RecipeRowKeys(AllBackends()), backends);
  problems.insert(problems.end(), rows.begin(), rows.end());
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems:" << Lines(problems);
}

TEST(RecipeRowContract, EveryCatalogRecipeHasScalarRowsBothWays) {
  const std::vector<RecipeRowKey> required = RequiredRecipeRows({"scalar"});
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    const std::string name = recipe::RecipeName(r);
    int quantize = 0, dequantize = 0;
    for (const RecipeRowKey& k : required) {
      if (k.recipe != name && k.recipe.rfind(name + "/", 0) != 0) continue;
      (k.operation == RecipeOperation::kQuantizeRecipe ? quantize : dequantize) += 1;
    }
    const int layouts = r.family() == recipe::Family::kScaled ? 3 : 1;
    EXPECT_EQ(quantize, layouts) << name;
    EXPECT_EQ(dequantize, layouts) << name;
  }
}

// Counted by hand from the catalog (10 MX profiles over 5 float formats, 3
// over MXINT8; 5 NVFP4; 27 scaled, 9 of them FP8) and the rules.
TEST(RecipeRowContract, TheContractHasTheCountedRows) {
  // Every recipe, each listed layout, both ways: (53 + 5 + 27 * 3) * 2.
  EXPECT_EQ(RequiredRecipeRows({"scalar"}).size(), 278u);
  // SIMD: every recipe, as the model: (53 + 5 + 27 * 3) * 2.
  EXPECT_EQ(RequiredRecipeRows({"simd:AVX2"}).size(), 278u);
  // CUDA: MX te (5 formats) and ocp (6) both ways = 22; nvfp4:te both ways
  // = 2; e4m3:te and e5m2:te quantize per tensor and per row = 4; the 18
  // integer recipes per group and per row both ways = 72; the newer profiles' model
  // recipe kernels: ao-rceil-eager (5 formats) both ways = 10, nvfp4:ao-0.18
  // and nvfp4:modelopt-0.47 both ways = 4, e4m3:vllm / vllm-token / vllm-kv
  // / vllm-kv-calc-k / vllm-kv-calc-v in 3 layouts both ways = 30,
  // int8:amax-clamp per tensor both ways = 2, uint4:gptq-sym-fp16 /
  // gptq-asym-fp16 / awq-fp16 per tensor both ways = 6.
  EXPECT_EQ(RequiredRecipeRows({"cuda"}).size(), 152u);
  EXPECT_TRUE(RequiredRecipeRows({"test:other"}).empty());
  // Examples of each CUDA rule and of a deliberate gap.
  const std::vector<RecipeRowKey> cuda = RequiredRecipeRows({"cuda"});
  const auto has = [&cuda](RecipeOperation op, const char* recipe) {
    for (const RecipeRowKey& k : cuda) {
      if (k.operation == op && k.recipe == recipe) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(RecipeOperation::kDequantizeRecipe, "mxint8:ocp"));
  EXPECT_TRUE(has(RecipeOperation::kQuantizeRecipe, "mxfp4:te"));
  EXPECT_FALSE(has(RecipeOperation::kQuantizeRecipe, "mxfp4:msx"));
  EXPECT_TRUE(has(RecipeOperation::kDequantizeRecipe, "nvfp4:te"));
  EXPECT_FALSE(has(RecipeOperation::kQuantizeRecipe, "nvfp4:ao"));
  EXPECT_TRUE(has(RecipeOperation::kQuantizeRecipe, "e5m2:te/row"));
  EXPECT_FALSE(has(RecipeOperation::kDequantizeRecipe, "e5m2:te/row"));
  EXPECT_FALSE(has(RecipeOperation::kQuantizeRecipe, "e4m3:te/g128"));
  EXPECT_FALSE(has(RecipeOperation::kQuantizeRecipe, "e4m3:te-pow2/tensor"));
  EXPECT_TRUE(has(RecipeOperation::kDequantizeRecipe, "uint4:gptq-asym/g128"));
  EXPECT_FALSE(has(RecipeOperation::kQuantizeRecipe, "int8:ao-sym/tensor"));
}

// The listed names are the ones the scalar backend registers
// (AllRecipeNames): the contract and the registry name rows alike.
TEST(RecipeRowContract, ListedNamesAreAllRecipeNames) {
  std::set<std::string> required;
  for (const RecipeRowKey& k : RequiredRecipeRows({"scalar"})) required.insert(k.recipe);
  const std::vector<std::string> names = AllRecipeNames();
  EXPECT_EQ(required, std::set<std::string>(names.begin(), names.end()));
}

// ---- the problem finder can fail ----------------------------------------------

std::vector<RecipeRowKey> ExactlyTheContract(const std::vector<std::string>& backends) {
  return RequiredRecipeRows(backends);
}

TEST(RecipeRowProblems, AMissingRowIsNamed) {
  const std::vector<std::string> backends = {"scalar", "simd:AVX2", "cuda"};
  std::vector<RecipeRowKey> rows = ExactlyTheContract(backends);
  ASSERT_TRUE(RecipeRowProblems(rows, backends).empty()) << Lines(RecipeRowProblems(rows, backends));
  for (const char* backend : {"scalar", "simd:AVX2", "cuda"}) {
    std::vector<RecipeRowKey> without = rows;
    const auto it = std::find_if(without.begin(), without.end(), [backend](const RecipeRowKey& k) {
      return k.backend == backend && k.operation == RecipeOperation::kDequantizeRecipe &&
             k.recipe == "int4:ao-sym/g128";
    });
    ASSERT_NE(it, without.end()) << backend;
    without.erase(it);
    const std::vector<std::string> problems = RecipeRowProblems(without, backends);
    ASSERT_EQ(problems.size(), 1u) << Lines(problems);
    EXPECT_EQ(problems[0], std::string("missing: ") + backend + " dequantize-recipe int4:ao-sym/g128");
  }
  // A backend the contract applies to with no rows at all: every row missing.
  EXPECT_EQ(RecipeRowProblems(RequiredRecipeRows({"scalar"}), {"scalar", "simd:SSE4"}).size(), 278u);
}

TEST(RecipeRowProblems, AForeignRowIsNamed) {
  const std::vector<std::string> backends = {"scalar", "cuda"};
  const std::vector<RecipeRowKey> rows = ExactlyTheContract(backends);
  const auto problems_with = [&](RecipeRowKey extra) {
    std::vector<RecipeRowKey> more = rows;
    more.push_back(std::move(extra));
    return RecipeRowProblems(more, backends);
  };
  std::vector<std::string> p = problems_with({RecipeOperation::kQuantizeRecipe, "mxfp4:nope", "scalar"});
  ASSERT_EQ(p.size(), 1u) << Lines(p);
  EXPECT_EQ(p[0].rfind("scalar quantize-recipe mxfp4:nope: not a catalog recipe", 0), 0u) << p[0];
  p = problems_with({RecipeOperation::kQuantizeRecipe, "int4:ao-sym/g64", "scalar"});
  ASSERT_EQ(p.size(), 1u) << Lines(p);
  EXPECT_NE(p[0].find("not a listed name"), std::string::npos) << p[0];
  // A row a backend has that the contract does not list (a new GPU kernel
  // without its rule), also on a backend outside the contract's names.
  p = problems_with({RecipeOperation::kQuantizeRecipe, "e4m3:te-pow2/row", "cuda"});
  ASSERT_EQ(p.size(), 1u) << Lines(p);
  EXPECT_EQ(p[0], "cuda quantize-recipe e4m3:te-pow2/row: registered but not in kRecipeRowContract (add a rule)");
  EXPECT_TRUE(problems_with({RecipeOperation::kQuantizeRecipe, "e4m3:te-pow2/row", "user:mine"}).empty());
  EXPECT_EQ(problems_with({RecipeOperation::kQuantizeRecipe, "nope", "user:mine"}).size(), 1u);
}

TEST(RecipeRowProblems, ARegistryWithoutARowFails) {
  // A real registry view: the scalar backend with one row replaced by
  // nothing (a fresh registry without RegisterScalarRecipes' last row).
  Registry registry;
  RegisterScalarBackend(registry);
  std::vector<RecipeRowKey> keys = RecipeRowKeys(registry);
  ASSERT_FALSE(keys.empty());
  EXPECT_TRUE(RecipeRowProblems(keys, {"scalar"}).empty());
  const RecipeRowKey dropped = keys.back();
  keys.pop_back();
  const std::vector<std::string> problems = RecipeRowProblems(keys, {"scalar"});
  ASSERT_EQ(problems.size(), 1u) << Lines(problems);
  EXPECT_NE(problems[0].find(dropped.recipe), std::string::npos) << problems[0];
  // A SIMD library that is said to be built but registered nothing.
  std::vector<std::string> built_problems;
  const std::vector<std::string> backends = ContractBackends(registry, {"scalar", "simd"}, &built_problems);
  EXPECT_EQ(backends, std::vector<std::string>{"scalar"});
  ASSERT_EQ(built_problems.size(), 1u);
  EXPECT_NE(built_problems[0].find("simd is built but registered no element rows"), std::string::npos);
}

// The CUDA rows, only where lowbit::cuda is built (a GPU is not needed: the
// rows are registered as unavailable without one).
TEST(RecipeRowContract, CudaRows) {
  if (!Built("cuda")) GTEST_SKIP() << "lowbit::cuda is not built here: the CUDA recipe rows are not checked";
  const std::vector<std::string> problems = RecipeRowProblems(RecipeRowKeys(AllBackends()), {"cuda"});
  EXPECT_TRUE(problems.empty()) << Lines(problems);
  int cuda_rows = 0;
  for (const RecipeEntry& e : AllBackends().RecipeEntries()) cuda_rows += e.backend == "cuda";
  EXPECT_EQ(cuda_rows, 152);
}

}  // namespace
}  // namespace lowbit::registry
