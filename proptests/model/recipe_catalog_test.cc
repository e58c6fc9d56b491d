// The one recipe shape (formats/.../recipe/): the catalog holds every named
// recipe exactly once, with the constants it derives equal to the spec
// values; the one name grammar round-trips every name and answers the
// spellings users type; and the whole-tensor model (recipe/tensor.h: groups,
// typed buffers, packing) equals the matrix functions of
// block/int_quant.h, which take the layout in the older QuantLayout shape,
// on boundary-biased tensors of every shape class, so a kernel compared with
// either is compared with the same thing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "test_level.h"

namespace lowbit::recipe {
namespace {

TEST(RecipeCatalogTest, EveryNameIsListedOnce) {
  std::set<std::string> names;
  for (const Recipe& r : kAllRecipes) EXPECT_TRUE(names.insert(RecipeName(r)).second) << RecipeName(r);
  // 10 MX profiles x 5 float MX formats + 3 (ocp, msx, msx-even) x MXINT8, 5
  // NVFP4, 18 scaled + 9 (vLLM FP8 five ways, INT8 amax-clamp, GPTQ / AWQ
  // with FP16 scales three ways; docs/profiles.md).
  EXPECT_EQ(names.size(), 10u * 5 + 3 + 5 + 18 + 9);
}

TEST(RecipeCatalogTest, DerivedConstantsAreTheSpecValues) {
  // Typed from the specifications, not from the code: E4M3 max 448, E5M2
  // 57344, E2M1 6 (OCP 8-bit FP spec Table 1; OCP MX §5.3.3), NVFP4 tensor
  // range 448 * 6 = 2688 (docs/formats-reference.md §6.1), MXINT8 max 127/64.
  EXPECT_EQ(MaxFiniteF32(kE4m3), 448.0f);
  EXPECT_EQ(MaxFiniteF32(kE5m2), 57344.0f);
  EXPECT_EQ(MaxFiniteF32(kE2m1), 6.0f);
  EXPECT_EQ(MaxFiniteF32(kUe4m3), 448.0f);
  EXPECT_EQ(TensorRange(*FindRecipe("nvfp4", "te")), 2688.0f);
  EXPECT_EQ(ElementMaxF32(*FindRecipe("mxint8", "ocp")), 127.0f / 64.0f);
  // fp32(1/448) = 0x3B124925, fp32(1/6) = 0x3E2AAAAB (§5.3).
  EXPECT_EQ(block::F32Bits(MaxNormReciprocal(*FindRecipe("mxfp8_e4m3", "te"))), 0x3B124925u);
  EXPECT_EQ(block::F32Bits(MaxNormReciprocal(*FindRecipe("mxfp4", "te"))), 0x3E2AAAABu);
  // emax_elem, OCP MX §6.3: E4M3 8, E5M2 15, E3M2 4, E2M3 2, E2M1 2, INT8 0.
  EXPECT_EQ(FindRecipe("mxfp8_e4m3", "ocp")->element_emax, 8);
  EXPECT_EQ(FindRecipe("mxfp8_e5m2", "ocp")->element_emax, 15);
  EXPECT_EQ(FindRecipe("mxfp6_e3m2", "ocp")->element_emax, 4);
  EXPECT_EQ(FindRecipe("mxfp6_e2m3", "ocp")->element_emax, 2);
  EXPECT_EQ(FindRecipe("mxfp4", "ocp")->element_emax, 2);
  EXPECT_EQ(FindRecipe("mxint8", "ocp")->element_emax, 0);
}

// The UE4M3 block scale of NVFP4 is encoded as UE4M3 (7 bits, unsigned), and
// the implementations encode an E4M3 byte; for the non-negative and NaN
// values a block-scale rule hands over the two are the same byte. Swept over
// every FP32 bit pattern with the sign clear, strided at the ci level.
TEST(RecipeCatalogTest, Ue4m3ScaleEncodingEqualsE4m3OnNonNegativeInputs) {
  EncodeOptions te;  // the two scale policies of steps.h
  te.overflow = Overflow::kSaturate;
  te.nan_sign = NanSign::kPositive;
  te.nan_payload = NanPayload::kAllOnes;
  EncodeOptions torch = te;
  torch.overflow = Overflow::kFormatDefault;
  const std::uint32_t stride =
      lowbit::testing::CurrentTestLevel() == lowbit::testing::TestLevel::kFull ? 1 : 97;
  std::uint64_t checked = 0;
  for (std::uint64_t b = 0; b <= 0x7FFFFFFFu; b += stride) {
    const float x = block::F32FromBits(static_cast<std::uint32_t>(b));
    for (const EncodeOptions& o : {te, torch}) {
      const std::uint64_t e4m3 = EncodeF32(kE4m3, x, o).code;
      const std::uint64_t ue4m3 = EncodeF32(kUe4m3, x, o).code;
      if (e4m3 != ue4m3) {
        FAIL() << std::hex << "input 0x" << b << ": E4M3 0x" << e4m3 << ", UE4M3 0x" << ue4m3;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0x7FFFFFFFu / 97);
}

// ---- the name grammar ------------------------------------------------------

std::string Canonical(const std::string& text) {
  Target t;
  std::string error;
  if (!ParseTarget(text, &t, &error)) return "error: " + error;
  return CanonicalName(t);
}

TEST(RecipeNamesTest, EveryCatalogNameRoundTrips) {
  for (const Recipe& r : kAllRecipes) {
    Target t;
    std::string error;
    ASSERT_TRUE(ParseTarget(RecipeName(r), &t, &error)) << RecipeName(r) << ": " << error;
    EXPECT_EQ(t.recipe, &r);
    EXPECT_EQ(CanonicalName(t), RecipeName(r));
  }
  for (FormatId id : kAllFormats) EXPECT_EQ(Canonical(Spec(id).name), Spec(id).name);
}

TEST(RecipeNamesTest, SpellingsUsersType) {
  EXPECT_EQ(Canonical("mxfp8"), "mxfp8_e4m3:ocp");
  EXPECT_EQ(Canonical("mxfp8:te"), "mxfp8_e4m3:te");
  EXPECT_EQ(Canonical("mxfp4:ao"), "mxfp4:ao-floor");
  EXPECT_EQ(Canonical("mxfp4:torchao"), "mxfp4:ao-floor");
  EXPECT_EQ(Canonical("nvfp4"), "nvfp4:te");
  EXPECT_EQ(Canonical("nvfp4:torchao"), "nvfp4:ao");
  EXPECT_EQ(Canonical("e4m3:cuda"), "e4m3:nvidia");
  EXPECT_EQ(Canonical("e4m3:torch"), "e4m3:pytorch-cpu");
  EXPECT_EQ(Canonical("float8_e4m3fn:ml_dtypes"), "e4m3:ml_dtypes");
  EXPECT_EQ(Canonical("int4:ao-sym/g128"), "int4:ao-sym/g128");
  EXPECT_EQ(Canonical("int4:ao-sym/group:128"), "int4:ao-sym/g128");
  EXPECT_EQ(Canonical("int8:ao-sym/channel"), "int8:ao-sym/row");
  EXPECT_EQ(Canonical("int8:ao-sym/token"), "int8:ao-sym/row");
  EXPECT_EQ(Canonical("int8:ao-sym/tensor"), "int8:ao-sym");
  EXPECT_EQ(Canonical("e4m3:te/block:128x128"), "e4m3:te/tile:128x128");
}

TEST(RecipeNamesTest, MistakesGetAMessageThatNamesThem) {
  EXPECT_EQ(Canonical("nvfp5"), "error: unknown format 'nvfp5'; did you mean 'nvfp4'?");
  EXPECT_NE(Canonical("int4:ao-sm").find("did you mean 'ao-sym'?"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4:ao-flor").find("did you mean 'ao-floor'?"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4/g64").find("fixed block of 32"), std::string::npos);
  EXPECT_NE(Canonical("e4m3/g128").find("a layout applies to recipes"), std::string::npos);
  // A group size that does not fit is an error, never a wrapped number.
  EXPECT_NE(Canonical("int4:ao-sym/group:4294967297").find("not a whole number"), std::string::npos);
  EXPECT_NE(Canonical("int4:ao-sym/g0").find("not a whole number"), std::string::npos);
  EXPECT_NE(Canonical("int4:ao-sym/diagonal").find("unknown layout"), std::string::npos);
  EXPECT_NE(Canonical("mxfp4:").find("empty profile"), std::string::npos);
}

// ---- whole tensors: recipe/tensor.h against the per-family functions ---------

// Values where the scale rules and roundings disagree: ties on the element
// grid, amax just below / at powers of two, zeros of both signs, NaN, Inf,
// subnormals, huge and tiny magnitudes.
rc::Gen<float> BoundaryValue() {
  return rc::gen::exec([] {
    const int e = *rc::gen::weightedOneOf<int>({{8, rc::gen::inRange(-12, 12)}, {1, rc::gen::inRange(-149, 128)}});
    switch (*rc::gen::inRange(0, 8)) {
      case 0: return std::ldexp(static_cast<float>(*rc::gen::inRange(-64, 65)) / 2.0f, e);  // half-grid ties
      case 1: return std::ldexp(1.0f - std::ldexp(1.0f, -24), e);                        // just below 2^e
      case 2: return *rc::gen::element(0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                                       -std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity());
      case 3: return block::F32FromBits(*rc::gen::arbitrary<std::uint32_t>() & 0x807FFFFFu);  // subnormal
      case 4: return block::F32FromBits(*rc::gen::arbitrary<std::uint32_t>());                // any bits
      default: return std::ldexp(*rc::gen::inRange(-1000, 1001) / 100.0f, e);
    }
  });
}

struct Shape {
  long rows, cols;
  Layout layout;
};

rc::Gen<Shape> ShapeFor(const Recipe& r) {
  return rc::gen::exec([&r] {
    Shape s{*rc::gen::inRange(1, 4), *rc::gen::inRange(1, 70), r.layout};
    if (r.family() == Family::kScaled) {
      switch (*rc::gen::inRange(0, 4)) {
        case 0: s.layout = {Geometry::kPerTensor, 0, 0}; break;
        case 1: s.layout = {Geometry::kPerRow, 0, 0}; break;
        case 2:
          s.layout = {Geometry::kGroup, *rc::gen::element(2, 8, 32), 0};
          s.cols = s.layout.size * *rc::gen::inRange(1, 3);
          break;
        default:
          s.layout = {Geometry::kTile2d, *rc::gen::element(2, 4), *rc::gen::element(1, 2)};
          s.cols = s.layout.size * *rc::gen::inRange(1, 3);
          s.rows = s.layout.tile_rows * *rc::gen::inRange(1, 3);
          break;
      }
    }
    return s;
  });
}

std::vector<std::uint32_t> Bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

void CheckTensorAgainstMatrixFunctions(const Recipe& r, const Shape& shape, const std::vector<float>& x) {
  const long count = shape.rows * shape.cols;
  GroupGrid grid;
  RC_ASSERT(MakeGroupGrid(r, shape.layout, shape.rows, shape.cols, &grid) == TensorStatus::kOk);
  const BufferSizes sizes = SizesOf(r, grid);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<float> scales(static_cast<std::size_t>(sizes.scales));
  std::vector<std::int32_t> zero_points(static_cast<std::size_t>(sizes.zero_points));
  TensorScale tensor_scale;
  const QuantizedTensor q{codes.data(), nullptr, scales.data(), zero_points.data(), &tensor_scale};
  RC_ASSERT(QuantizeTensor(r, shape.layout, x.data(), shape.rows, shape.cols, q) == TensorStatus::kOk);
  std::vector<float> back(static_cast<std::size_t>(count));
  RC_ASSERT(DequantizeTensor(r, shape.layout, AsConst(q), shape.rows, shape.cols, back.data()) == TensorStatus::kOk);

  std::vector<std::uint8_t> matrix_codes(static_cast<std::size_t>(count));
  std::vector<float> matrix_back(static_cast<std::size_t>(count));
  block::QuantLayout layout;
  layout.granularity = shape.layout.geometry == Geometry::kPerTensor ? block::Granularity::kPerTensor
                       : shape.layout.geometry == Geometry::kPerRow  ? block::Granularity::kPerRow
                       : shape.layout.geometry == Geometry::kGroup   ? block::Granularity::kPerGroup
                                                                     : block::Granularity::kBlock2d;
  layout.group = shape.layout.size;
  layout.block_rows = shape.layout.tile_rows;
  std::vector<block::QuantParams> params(static_cast<std::size_t>(grid.Count()));
  RC_ASSERT(block::QuantizeMatrix(r, layout, x.data(), shape.rows, shape.cols, matrix_codes.data(), params.data()) ==
            block::QuantStatus::kOk);
  RC_ASSERT(block::DequantizeMatrix(r, layout, matrix_codes.data(), shape.rows, shape.cols, params.data(),
                                    matrix_back.data()) == block::QuantStatus::kOk);
  for (long g = 0; g < grid.Count(); ++g) {
    RC_ASSERT(block::F32Bits(scales[static_cast<std::size_t>(g)]) ==
              block::F32Bits(params[static_cast<std::size_t>(g)].decode));
    if (r.zero_point == ZeroPoint::kInteger) {
      RC_ASSERT(zero_points[static_cast<std::size_t>(g)] == params[static_cast<std::size_t>(g)].zero_point);
    }
  }
  // Codes in the recipe's packing.
  std::vector<std::uint8_t> matrix_packed = matrix_codes;
  if (r.packing != Packing::kOnePerByte) {
    matrix_packed.assign(static_cast<std::size_t>(PackedBytes(r.packing, count)), 0);
    block::PackNibbles(matrix_codes.data(), count,
                       r.packing == Packing::kNibblesLowFirst ? block::NibbleOrder::kLowFirst
                                                              : block::NibbleOrder::kHighFirst,
                       matrix_packed.data());
  }
  RC_ASSERT(codes == matrix_packed);
  RC_ASSERT(Bits(back) == Bits(matrix_back));
}

TEST(RecipeTensorTest, WholeTensorModelEqualsTheMatrixFunctionsForEveryScaledRecipe) {
  int checked = 0;
  for (const Recipe& r : kAllRecipes) {
    if (r.family() != Family::kScaled) continue;
    // The recipes of kServingScaledPairs (FP16 scales, given scales) store
    // what QuantParams does not hold; model vs oracle covers them.
    bool serving = false;
    for (const ScaledPair& p : kServingScaledPairs) {
      serving |= std::string(p.element.name) == r.name && std::string(p.profile.name) == r.profile;
    }
    if (serving) continue;
    ++checked;
    const bool ok = rc::check(RecipeName(r), [&r] {
      const Shape shape = *ShapeFor(r);
      const std::vector<float> x =
          *rc::gen::container<std::vector<float>>(static_cast<std::size_t>(shape.rows * shape.cols), BoundaryValue());
      CheckTensorAgainstMatrixFunctions(r, shape, x);
    });
    EXPECT_TRUE(ok) << RecipeName(r);
  }
  EXPECT_EQ(checked, 18);  // kScaledPairs
}

TEST(RecipeTensorTest, ShapesThatDoNotTileAreErrorsNotPadding) {
  const Recipe& int4 = *FindRecipe("int4", "ao-sym");
  GroupGrid g;
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kGroup, 128, 0}, 2, 100, &g), TensorStatus::kColsNotMultipleOfGroup);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kTile2d, 4, 3}, 4, 8, &g), TensorStatus::kRowsNotMultipleOfTile);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kGroup, 0, 0}, 4, 8, &g), TensorStatus::kBadGroup);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kPerRow, 0, 0}, 0, 8, &g), TensorStatus::kEmpty);
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kBlock1d, 16, 0}, 4, 8, &g), TensorStatus::kLayoutNotForRecipe);
  const Recipe& mxfp4 = *FindRecipe("mxfp4", "ocp");
  EXPECT_EQ(MakeGroupGrid(mxfp4, {Geometry::kPerRow, 0, 0}, 4, 8, &g), TensorStatus::kLayoutNotForRecipe);
  EXPECT_EQ(MakeGroupGrid(mxfp4, {Geometry::kBlock1d, 32, 0}, 3, 7, &g), TensorStatus::kOk);
  EXPECT_EQ(g.Count(), 1);  // 21 elements, one short block
  const long huge = 1L << 40;
  EXPECT_EQ(MakeGroupGrid(int4, {Geometry::kPerRow, 0, 0}, huge, huge, &g), TensorStatus::kSizeOverflow);
}

}  // namespace
}  // namespace lowbit::recipe
