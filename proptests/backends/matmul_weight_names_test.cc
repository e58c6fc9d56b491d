// The matmul rows speak the model's one vocabulary of weight kinds
// (formats/matmul/weight_kind.h kWeightKinds; docs/matmul.md "Weight kinds:
// a recipe target plus a packing"): every row that RegisterAllBackends
// registers on this build (scalar, SIMD, CUDA where built) names its weight
// by a kind's canonical name, and every older name of a kind
// (kWeightKindAliases) still finds the kind and the same rows
// (registry/matmul_entry.h FindMatmulWeightKind, Registry::FindMatmul,
// choose.h ChooseMatmulRow), so users' scripts keep working.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/registry.h"
#include "all_backends.h"
#include "matmul_support.h"

namespace lowbit::matmul_test {
namespace {

using registry::MatmulEntry;
using registry::MatmulOperation;

TEST(MatmulWeightNames, EveryRegisteredRowNamesItsWeightByACanonicalKindName) {
  ASSERT_FALSE(testing::AllBackends().MatmulEntries().empty());
  for (const MatmulEntry& e : testing::AllBackends().MatmulEntries()) {
    const std::string row = registry::MatmulRowName(e) + " (" + e.backend + ")";
    const matmul::WeightKind* kind = matmul::FindWeightKind(e.weight);
    ASSERT_NE(kind, nullptr) << row << " names no weight kind";
    EXPECT_EQ(e.weight, kind->name) << row << " names its weight by an alias, not the kind's name";
  }
}

// The expectation above holds for today's rows however they spell their
// weights, since AddMatmul stores the canonical name: this is what proves
// that storing, with every alias of the literal alias table given directly.
TEST(MatmulWeightNames, AddMatmulStoresAnAliasUnderItsKindsName) {
  ASSERT_GT(std::size(matmul::kWeightKindAliases), 0u);
  for (const matmul::WeightKindAlias& a : matmul::kWeightKindAliases) {
    registry::Registry rows;
    MatmulEntry e;
    e.weight = a.alias;
    e.backend = "test";
    rows.AddMatmul(e);
    ASSERT_EQ(rows.MatmulEntries().size(), 1u) << a.alias;
    EXPECT_EQ(rows.MatmulEntries()[0].weight, a.name) << a.alias;
    EXPECT_NE(std::string_view(a.alias), std::string_view(a.name)) << "an alias that is its own name proves nothing";
  }
}

TEST(MatmulWeightNames, EveryNameAndAliasFindsItsKind) {
  for (const matmul::WeightKind& kind : matmul::kWeightKinds) {
    const registry::MatmulWeightKind* found = registry::FindMatmulWeightKind(kind.name);
    ASSERT_NE(found, nullptr) << kind.name;
    EXPECT_EQ(found->kind, &kind) << kind.name;
    EXPECT_STREQ(found->name, kind.name);
  }
  for (const matmul::WeightKindAlias& a : matmul::kWeightKindAliases) {
    const registry::MatmulWeightKind* found = registry::FindMatmulWeightKind(a.alias);
    ASSERT_NE(found, nullptr) << a.alias;
    EXPECT_STREQ(found->name, a.name) << a.alias;
    EXPECT_EQ(registry::CanonicalMatmulWeightName(a.alias), a.name);
  }
  EXPECT_EQ(registry::FindMatmulWeightKind("int4-g64"), nullptr);
  EXPECT_EQ(registry::FindMatmulWeightKind("int4/g64"), nullptr);
  EXPECT_EQ(registry::CanonicalMatmulWeightName("int4-g64"), "int4-g64");
}

TEST(MatmulWeightNames, EveryAliasFindsTheRowsOfItsKind) {
  const registry::Registry& rows = testing::AllBackends();
  std::size_t found = 0;
  for (const matmul::WeightKindAlias& a : matmul::kWeightKindAliases) {
    for (const MatmulEntry& e : rows.MatmulEntries()) {
      if (e.weight != a.name) continue;
      const std::string row = registry::MatmulRowName(e) + " (" + e.backend + ") as " + a.alias;
      EXPECT_EQ(rows.FindMatmul(e.operation, a.alias, e.activation, e.output, e.backend), &e) << row;
      for (const registry::Memory memory : {registry::Memory::kHost, registry::Memory::kDevice}) {
        EXPECT_EQ(registry::ChooseMatmulRow(rows, e.operation, a.alias, e.activation, e.output, memory),
                  registry::ChooseMatmulRow(rows, e.operation, a.name, e.activation, e.output, memory))
            << row;
      }
      ++found;
    }
  }
  // Every alias names a kind that has scalar rows (GEMV and GEMM, 2
  // activations x 3 outputs each).
  EXPECT_GE(found, std::size(matmul::kWeightKindAliases) * 2u * 2u * 3u);
}

// A backend that still registers under an older name gets the kind's row:
// stored under the canonical name, replacing the row of that name, and its
// own copy of the columns passes the argument check for that kind only.
TEST(MatmulWeightNames, ARowRegisteredUnderAnAliasIsTheKindsRow) {
  registry::Registry reg;
  registry::RegisterScalarMatmul(reg);
  const std::size_t rows = reg.MatmulEntries().size();
  const MatmulEntry* scalar = reg.FindMatmul(MatmulOperation::kGemv, "int4/g128", matmul::ActivationType::kBf16,
                                             matmul::OutputType::kFp32, "scalar");
  ASSERT_NE(scalar, nullptr);
  MatmulEntry old = *scalar;
  old.backend = "old-names";
  old.weight = "int4-g128";
  MatmulEntry columns = old;  // what the backend's closures copy
  reg.AddMatmul(old);
  ASSERT_EQ(reg.MatmulEntries().size(), rows + 1);
  const MatmulEntry* added = reg.FindMatmul(MatmulOperation::kGemv, "int4/g128", matmul::ActivationType::kBf16,
                                            matmul::OutputType::kFp32, "old-names");
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->weight, "int4/g128");
  old.weight = "int4/g128";
  reg.AddMatmul(old);
  EXPECT_EQ(reg.MatmulEntries().size(), rows + 1) << "the canonical name is the same row";

  Random r(5);
  Problem p = RandomProblem(r, *registry::FindMatmulWeightKind("int4/g128"), 0.0, 1);
  columns.activation = p.act;
  columns.output = p.out;
  EXPECT_TRUE(registry::ValidateMatmulArgs(columns, p.View()).ok);
  MatmulEntry other = columns;
  other.weight = "uint4-g128";
  const registry::Status s = registry::ValidateMatmulArgs(other, p.View());
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("(int4/g128), this row takes uint4-g128"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace lowbit::matmul_test
