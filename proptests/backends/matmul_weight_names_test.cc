// The registry's matmul weight kinds against the model's
// (formats/matmul/weight_kind.h): every row kind is a model kind of the same
// recipe target and packing, and the model's names and aliases find it.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/registry/matmul_entry.h"

namespace lowbit {
namespace {

TEST(MatmulWeightNames, EveryRowKindIsAModelKind) {
  EXPECT_EQ(std::size(registry::kMatmulWeightKinds), std::size(matmul::kWeightKinds));
  for (const registry::MatmulWeightKind& row : registry::kMatmulWeightKinds) {
    const matmul::WeightKind* kind = matmul::FindWeightKind(row.name);
    ASSERT_NE(kind, nullptr) << row.name << " is neither a model kind nor one of its aliases";
    EXPECT_EQ(matmul::FormatOf(*kind), row.format) << row.name;
    EXPECT_EQ(kind->packing, row.packing) << row.name;
    EXPECT_EQ(kind->scale_storage, row.scale_type) << row.name;
    EXPECT_EQ(matmul::BlockOf(*kind), row.block) << row.name;
    // The model's canonical name finds the same row.
    EXPECT_EQ(registry::FindMatmulWeightKind(kind->name), &row) << kind->name;
  }
  EXPECT_EQ(registry::FindMatmulWeightKind("int4-g64"), nullptr);
}

}  // namespace
}  // namespace lowbit
