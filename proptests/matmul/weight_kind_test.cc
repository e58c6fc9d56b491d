// Weight kinds as a recipe target plus a packing
// (formats/matmul/weight_kind.h): each kind's format is read off a catalog
// recipe, agrees for every profile of that format, makes a valid view, and
// every name users have typed resolves through the one alias table.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <string_view>

#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"

namespace lowbit {
namespace {

using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

// What each kind must be, typed from docs/matmul.md "The packed weights".
struct Expected {
  const char* name;
  WeightFormat format;
  WeightPacking packing;
  ScaleType scale;
  int block;
};
const Expected kExpected[] = {
    {"nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, 16},
    {"mxfp4", WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, 32},
    {"mxfp8_e4m3", WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, 32},
    {"int4/g128", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, 128},
    {"uint4/g128", WeightFormat::kUint4, WeightPacking::kLowbit, ScaleType::kFp32, 128},
    {"uint4/g128+gptq-fp16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, 128},
    {"uint4/g128+gptq-bf16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kBf16, 128},
    {"uint4/g128+awq-fp16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kFp16, 128},
    {"uint4/g128+awq-bf16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kBf16, 128},
    {"e4m3/row", WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, 0},
};

TEST(WeightKind, EachKindIsARecipeTargetPlusAPacking) {
  ASSERT_EQ(std::size(matmul::kWeightKinds), std::size(kExpected));
  for (const Expected& e : kExpected) {
    const matmul::WeightKind* kind = matmul::FindWeightKind(e.name);
    ASSERT_NE(kind, nullptr) << e.name;
    EXPECT_EQ(matmul::FormatOf(*kind), e.format) << e.name;
    EXPECT_EQ(kind->packing, e.packing) << e.name;
    EXPECT_EQ(kind->scale_storage, e.scale) << e.name;
    EXPECT_EQ(matmul::BlockOf(*kind), e.block) << e.name;
    // The name is the recipe grammar's FORMAT[/LAYOUT], then +PACKING.
    const std::string name = kind->name;
    const std::string target = name.substr(0, name.find('+'));
    const std::string format = target.substr(0, target.find('/'));
    EXPECT_EQ(format, kind->format);
    if (kind->layout.geometry != recipe::Geometry::kBlock1d) {
      EXPECT_EQ(target.substr(target.find('/') + 1), recipe::LayoutName(kind->layout)) << e.name;
    }
    EXPECT_EQ(name.find('+') != std::string::npos, kind->packing != WeightPacking::kLowbit) << e.name;
  }
}

// Every profile of a kind's format gives the same weight format: the
// profile chooses scales, not what the weight is.
TEST(WeightKind, EveryProfileOfAFormatIsTheSameWeight) {
  for (const matmul::WeightKind& kind : matmul::kWeightKinds) {
    int profiles = 0;
    for (const recipe::Recipe& r : recipe::kAllRecipes) {
      if (std::string_view(r.name) != kind.format) continue;
      WeightFormat f = WeightFormat::kNvfp4;
      ASSERT_TRUE(matmul::WeightFormatOfRecipe(r, kind.layout, &f)) << kind.name << " " << r.profile;
      EXPECT_EQ(f, matmul::FormatOf(kind)) << kind.name << " " << r.profile;
      ++profiles;
    }
    EXPECT_GE(profiles, 2) << kind.name;
  }
}

// Recipes whose output no matrix-product weight reads.
TEST(WeightKind, RecipesWithoutAWeightKindSayNo) {
  WeightFormat f = WeightFormat::kNvfp4;
  EXPECT_FALSE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("mxfp6_e2m3", "ocp"),
                                            {recipe::Geometry::kBlock1d, 32, 0}, &f));
  EXPECT_FALSE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("mxfp8_e5m2", "ocp"),
                                            {recipe::Geometry::kBlock1d, 32, 0}, &f));
  EXPECT_FALSE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("int8", "ao-sym"),
                                            {recipe::Geometry::kGroup, 128, 0}, &f));
  EXPECT_FALSE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("e4m3", "te"),
                                            {recipe::Geometry::kPerTensor, 0, 0}, &f));
  EXPECT_FALSE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("int4", "ao-sym"),
                                            {recipe::Geometry::kPerRow, 0, 0}, &f));
  EXPECT_TRUE(matmul::WeightFormatOfRecipe(*recipe::FindRecipe("int4", "ao-sym"),
                                           {recipe::Geometry::kGroup, 64, 0}, &f));
  EXPECT_EQ(f, WeightFormat::kInt4);
}

// A lowbit.quantize result of any profile of a lowbit-packed kind's format,
// in the kind's layout, is that kind (what Python's PackedWeight reads).
TEST(WeightKind, EachLowbitKindIsFoundFromEveryProfileOfItsRecipe) {
  int kinds = 0;
  for (const matmul::WeightKind& kind : matmul::kWeightKinds) {
    if (kind.packing != WeightPacking::kLowbit) continue;
    ++kinds;
    for (const recipe::Recipe& r : recipe::kAllRecipes) {
      if (std::string_view(r.name) != kind.format) continue;
      const matmul::WeightKind* got = nullptr;
      EXPECT_EQ(matmul::LowbitWeightKindOf(r, kind.layout, &got), nullptr) << kind.name << " " << r.profile;
      EXPECT_EQ(got, &kind) << kind.name << " " << r.profile;
    }
  }
  EXPECT_EQ(kinds, 6);
  EXPECT_EQ(matmul::ScaleGeometryOf({recipe::Geometry::kBlock1d, 16, 0}), matmul::ScaleGeometry::kFlatBlocks);
  EXPECT_EQ(matmul::ScaleGeometryOf({recipe::Geometry::kGroup, 32, 0}), matmul::ScaleGeometry::kRowGroups);
  EXPECT_EQ(matmul::ScaleGeometryOf({recipe::Geometry::kPerRow, 0, 0}), matmul::ScaleGeometry::kPerRow);
}

// A recipe without a lowbit-packed kind gets one line saying why: no kind
// reads its format, or the kind of its format takes another layout.
TEST(WeightKind, RecipesWithoutALowbitKindSayWhy) {
  const matmul::WeightKind* got = nullptr;
  const auto why = [&got](const char* format, const char* profile, recipe::Layout layout) {
    return std::string(matmul::LowbitWeightKindOf(*recipe::FindRecipe(format, profile), layout, &got));
  };
  EXPECT_EQ(why("int8", "ao-sym", {recipe::Geometry::kGroup, 128, 0}), "no matmul weight kind reads its output");
  EXPECT_EQ(why("mxfp6_e2m3", "ocp", {recipe::Geometry::kBlock1d, 32, 0}), "no matmul weight kind reads its output");
  EXPECT_EQ(why("int4", "ao-sym", {recipe::Geometry::kPerRow, 0, 0}),
            "integer weights take groups along K (layout 'gN', as 'g128')");
  EXPECT_EQ(why("e4m3", "te", {recipe::Geometry::kPerTensor, 0, 0}),
            "its matmul weights take one scale per output channel (layout 'row')");
  EXPECT_EQ(why("nvfp4", "te", {recipe::Geometry::kPerRow, 0, 0}),
            "its matmul weights take 1-D blocks (its default layout) or groups along K ('gN')");
  EXPECT_EQ(got, nullptr);
}

// A kind's format, packing, scale storage and block make a view the model
// takes (weights.h FormatCombinationError).
TEST(WeightKind, EachKindMakesAValidView) {
  for (const matmul::WeightKind& kind : matmul::kWeightKinds) {
    const matmul::WeightView w = matmul::DenseWeights(matmul::FormatOf(kind), kind.packing,
                                                      matmul::ScaleGeometryOf(kind.layout),
                                                      kind.scale_storage, 8, 256, matmul::BlockOf(kind), 1, nullptr,
                                                      nullptr, nullptr, nullptr);
    EXPECT_EQ(matmul::FormatCombinationError(w), nullptr) << kind.name;
  }
}

// The one alias table: every alias names a kind, none shadows a canonical
// name, names are unique, unknown names are not found.
TEST(WeightKind, AliasesResolveToKinds) {
  std::set<std::string> names;
  for (const matmul::WeightKind& k : matmul::kWeightKinds) EXPECT_TRUE(names.insert(k.name).second) << k.name;
  for (const matmul::WeightKindAlias& a : matmul::kWeightKindAliases) {
    EXPECT_EQ(names.count(a.alias), 0u) << a.alias;
    const matmul::WeightKind* k = matmul::FindWeightKind(a.alias);
    ASSERT_NE(k, nullptr) << a.alias;
    EXPECT_EQ(std::string(k->name), a.name);
  }
  // The names the matmul rows had: each resolves to the kind of the same
  // format, packing and scale storage.
  EXPECT_EQ(matmul::FormatOf(*matmul::FindWeightKind("mxfp8-e4m3")), WeightFormat::kMxfp8E4m3);
  EXPECT_EQ(matmul::FindWeightKind("uint4-awq-bf16")->packing, WeightPacking::kAwq);
  EXPECT_EQ(matmul::FindWeightKind("uint4-awq-bf16")->scale_storage, ScaleType::kBf16);
  EXPECT_EQ(matmul::FormatOf(*matmul::FindWeightKind("e4m3-channel")), WeightFormat::kFp8E4m3PerChannel);
  EXPECT_EQ(matmul::FindWeightKind("int4-g64"), nullptr);
  EXPECT_EQ(matmul::FindWeightKind(""), nullptr);
}

}  // namespace
}  // namespace lowbit
