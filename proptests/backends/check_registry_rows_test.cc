// Backends vs the model, through the harness library (lowbit::check) instead
// of the CLI: one gtest per registry row, i.e. per (operation, format,
// backend) kernel row and per (operation, recipe, backend) recipe row that
// RegisterAllBackends gives on this build (docs/design.md: "Highway's tests
// take the SIMD target as a gtest parameter; do the same with the
// registry"). A row whose backend cannot run here is GTEST_SKIP'ed with the
// reason, never counted as passed. LOWBIT_TEST_LEVEL picks the check level
// (smoke / ci / full: lowbit/check/check.h).
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#include "lowbit/check/text.h"
#include "lowbit/registry/registry.h"
#include "test_level.h"

namespace lowbit::check {
namespace {

using registry::KernelEntry;
using registry::RecipeEntry;

using ::lowbit::testing::AllBackends;

Level CheckLevel() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return Level::kSmoke;
    case testing::TestLevel::kCi: return Level::kCi;
    case testing::TestLevel::kFull: return Level::kFull;
  }
  return Level::kCi;
}

// gtest names take letters, digits and '_' only: "simd:AVX2" -> "simd_AVX2".
std::string TestName(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

// Fails with the first mismatches decoded, one per line.
std::string Report(const Row& row) {
  std::string text = std::to_string(row.mismatches) + " of " + std::to_string(row.checked) +
                     " outputs differ from the model:";
  for (const Mismatch& m : row.first_mismatches) text += "\n  " + DescribeMismatch(row, m);
  return text;
}

void ExpectRowPassed(const Row& row) {
  if (!row.skipped.empty()) GTEST_SKIP() << row.skipped;
  if (row.outcome() == Row::Outcome::kSkipped) {
    GTEST_SKIP() << "the kernel supports none of the option sets it is checked with";
  }
  EXPECT_EQ(row.mismatches, 0u) << Report(row);
  EXPECT_GT(row.checked, 0u);
}

// ---- Kernel rows ----------------------------------------------------------

// Parameters: a row of the registry, printed by its key (gtest shows the
// parameter in test listings and ctest's names).
struct KernelParam {
  const KernelEntry* entry;
};
void PrintTo(const KernelParam& p, std::ostream* os) {
  *os << registry::OperationName(p.entry->operation) << " " << Spec(p.entry->format).name << " "
      << p.entry->backend;
}

std::vector<KernelParam> KernelRows() {
  std::vector<KernelParam> rows;
  for (const KernelEntry& entry : AllBackends().Entries()) rows.push_back({&entry});
  return rows;
}

class KernelRow : public ::testing::TestWithParam<KernelParam> {};

TEST_P(KernelRow, MatchesTheModel) {
  const KernelEntry& kernel = *GetParam().entry;
  if (!kernel.available()) GTEST_SKIP() << kernel.backend << " is not available on this machine";
  ExpectRowPassed(CheckKernel(kernel, CheckLevel(), /*threads=*/2));
}

INSTANTIATE_TEST_SUITE_P(
    Registry, KernelRow, ::testing::ValuesIn(KernelRows()),
    [](const ::testing::TestParamInfo<KernelParam>& info) {
      const KernelEntry& e = *info.param.entry;
      return TestName(std::string(registry::OperationName(e.operation)) + "_" +
                      Spec(e.format).name + "_" + e.backend);
    });

// ---- Recipe rows ----------------------------------------------------------

// Every recipe row but the scalar ones (the model itself, the reference the
// others are compared with).
struct RecipeParam {
  const RecipeEntry* entry;
};
void PrintTo(const RecipeParam& p, std::ostream* os) {
  *os << registry::RecipeOperationName(p.entry->operation) << " " << p.entry->recipe << " "
      << p.entry->backend;
}

std::vector<RecipeParam> RecipeRows() {
  std::vector<RecipeParam> rows;
  for (const RecipeEntry& entry : AllBackends().RecipeEntries()) {
    if (entry.backend != "scalar") rows.push_back({&entry});
  }
  return rows;
}

class RecipeRow : public ::testing::TestWithParam<RecipeParam> {};

TEST_P(RecipeRow, MatchesTheScalarRecipe) {
  const RecipeEntry& entry = *GetParam().entry;
  if (!entry.available()) GTEST_SKIP() << entry.backend << " is not available on this machine";
  const RecipeEntry* scalar = AllBackends().FindRecipe(entry.operation, entry.recipe, "scalar");
  ASSERT_NE(scalar, nullptr) << "no scalar row for " << entry.recipe;
  ExpectRowPassed(CheckRecipe(entry, scalar, CheckLevel()));
}

// A build without SIMD or CUDA has no non-scalar recipe row.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RecipeRow);
INSTANTIATE_TEST_SUITE_P(
    Registry, RecipeRow, ::testing::ValuesIn(RecipeRows()),
    [](const ::testing::TestParamInfo<RecipeParam>& info) {
      const RecipeEntry& e = *info.param.entry;
      return TestName(std::string(registry::RecipeOperationName(e.operation)) + "_" + e.recipe +
                      "_" + e.backend);
    });

// Every recipe with a scalar quantize row also has a non-scalar row on a
// build with SIMD: otherwise the parameterised suite above would silently
// lose it.
TEST(RecipeRows, EveryScalarRecipeHasARowToCheck) {
  bool simd_built = false;
  for (const std::string& name : BuiltBackendLibraries()) simd_built |= name == "simd";
  if (!simd_built) GTEST_SKIP() << "no SIMD backend in this build";
  for (const RecipeEntry& scalar : AllBackends().RecipeEntries()) {
    if (scalar.backend != "scalar") continue;
    bool checked = false;
    for (const RecipeParam& row : RecipeRows()) {
      checked |= row.entry->operation == scalar.operation && row.entry->recipe == scalar.recipe;
    }
    EXPECT_TRUE(checked) << registry::RecipeOperationName(scalar.operation) << " "
                         << scalar.recipe << " has only its scalar row";
  }
}

}  // namespace
}  // namespace lowbit::check
