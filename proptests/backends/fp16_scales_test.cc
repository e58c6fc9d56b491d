// GPTQ and AWQ as their checkpoints store them: uint4:gptq-sym-fp16,
// uint4:gptq-asym-fp16 and uint4:awq-fp16. The scale is the quantizer's
// FP32 scale rounded to FP16 (`.half()`), the stored integer is the packer's
// round((W + z * s) / fp16(s)) (AutoGPTQ qlinear_cuda_old.py
// QuantLinear.pack, AutoAWQ gemm.py WQLinear_GEMM.from_linear), and the
// dequantized value (q - z) * fp16(s) rounded once to FP16.
//
// Literals worked by hand from those sources (the comments show the
// arithmetic), checked against the model and the oracle alike; model ==
// oracle on groups whose scales sit at FP16 ties, in FP16's subnormal range,
// at its overflow edge, and on NaN / Inf / all-zero groups; every other
// registry row (SIMD targets; CUDA where a GPU is present) equal to the
// scalar row on the same inputs; FP16 output refused by name where it is not
// defined.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "all_backends.h"
#include "catalog_recipe.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/reference/block/recipe_oracle.h"
#include "lowbit/registry/parallel.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"
#include "generators_at_level.h"
#include "recipe_vs_oracle.h"
#include "test_level.h"

namespace lowbit::testing {
namespace {

namespace ref = lowbit::reference::block;

using ::lowbit::testing::CatalogRecipe;

constexpr const char* kProfiles[] = {"gptq-sym-fp16", "gptq-asym-fp16", "awq-fp16"};

bool IsNan16(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }
// Equal FP16 bits, every NaN equal to every NaN (which NaN a product of a
// NaN or 0 * Inf gives is the hardware's: x86 0xFE00, NVIDIA 0x7FFF).
bool SameF16(std::uint16_t a, std::uint16_t b) { return a == b || (IsNan16(a) && IsNan16(b)); }

// One row [rows, cols] through the model: unpacked codes, scales, zero
// points, FP32 and FP16 dequantization.
struct Quantized {
  std::vector<std::uint8_t> packed;
  std::vector<std::uint8_t> codes;
  std::vector<float> scales;
  std::vector<std::int32_t> zero_points;
  std::vector<float> back;
  std::vector<std::uint16_t> back16;
};

Quantized Model(const recipe::Recipe& r, const recipe::Layout& layout, const std::vector<float>& x, long rows,
                long cols) {
  recipe::GroupGrid g;
  EXPECT_EQ(recipe::MakeGroupGrid(r, layout, rows, cols, &g), recipe::TensorStatus::kOk);
  const recipe::BufferSizes b = recipe::SizesOf(r, g);
  Quantized m;
  m.packed.assign(static_cast<std::size_t>(b.code_bytes), 0);
  m.scales.resize(static_cast<std::size_t>(b.scales));
  m.zero_points.resize(static_cast<std::size_t>(b.zero_points));
  const recipe::QuantizedTensor q{m.packed.data(), nullptr, m.scales.data(), m.zero_points.data(), nullptr};
  EXPECT_EQ(recipe::QuantizeTensor(r, layout, x.data(), rows, cols, q), recipe::TensorStatus::kOk);
  for (long k = 0; k < rows * cols; ++k) m.codes.push_back(recipe::LoadCode(r.packing, m.packed.data(), k));
  m.back.resize(x.size());
  m.back16.resize(x.size());
  EXPECT_EQ(recipe::DequantizeTensor(r, layout, recipe::AsConst(q), rows, cols, m.back.data()),
            recipe::TensorStatus::kOk);
  // Only the FP16-scale recipes define an FP16 result (the others refuse).
  EXPECT_EQ(recipe::DequantizeTensorToF16(r, layout, recipe::AsConst(q), rows, cols, m.back16.data()),
            recipe::DequantizesToF16(r) ? recipe::TensorStatus::kOk : recipe::TensorStatus::kLayoutNotForRecipe);
  return m;
}

// One group of four along a row (g4), model and oracle both checked against
// the literal codes, scale bits, zero point and FP16 results.
void ExpectGroup(const char* profile, const std::vector<float>& x, const std::vector<int>& codes,
                 std::uint32_t scale_bits, std::int32_t zero_point, const std::vector<std::uint16_t>& back16) {
  SCOPED_TRACE(profile);
  const recipe::Recipe& r = CatalogRecipe("uint4", profile);
  const recipe::Layout layout{recipe::Geometry::kGroup, 4, 0};
  const Quantized m = Model(r, layout, x, 1, 4);
  const ref::OracleQuantized o = ref::OracleQuantizeTensor(r, layout, x, 1, 4);
  ASSERT_EQ(o.status, ref::OracleStatus::kOk);
  const std::vector<std::uint16_t> o16 = ref::OracleDequantizeTensorToF16(r, layout, o.packed, o.scales, 1, 4);
  ASSERT_EQ(o16.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(m.codes[k], codes[k]) << "model element " << k;
    EXPECT_EQ(o.codes[k], codes[k]) << "oracle element " << k;
    EXPECT_TRUE(SameF16(m.back16[k], back16[k])) << "model fp16 " << k << ": " << std::hex << m.back16[k];
    EXPECT_TRUE(SameF16(o16[k], back16[k])) << "oracle fp16 " << k << ": " << std::hex << o16[k];
  }
  EXPECT_TRUE(SameF32(F32Bits(m.scales[0]), scale_bits)) << std::hex << F32Bits(m.scales[0]);
  EXPECT_TRUE(SameF32(o.scales[0].decode_bits, scale_bits)) << std::hex << o.scales[0].decode_bits;
  EXPECT_EQ(m.zero_points[0], zero_point);
  EXPECT_EQ(o.scales[0].zero_point, zero_point);
}

// ---- literals from the sources ------------------------------------------------------

// torch .half(): 65504 is the largest finite FP16; 65520 is the tie between
// 65504 and 2^16 and rounds to even, i.e. up, past the range: Inf. 2^-24 is
// the smallest subnormal; 2^-25 ties to 0; 1.5 * 2^-24 ties to 2^-23.
TEST(Fp16Scales, HalfRoundingOfAScale) {
  EXPECT_EQ(recipe::F16RoundedF32(65504.0f), 65504.0f);
  EXPECT_EQ(recipe::F16RoundedF32(std::nextafter(65520.0f, 0.0f)), 65504.0f);
  EXPECT_EQ(F32Bits(recipe::F16RoundedF32(65520.0f)), 0x7F800000u);
  EXPECT_EQ(recipe::F16RoundedF32(0x1p-25f), 0.0f);
  EXPECT_EQ(recipe::F16RoundedF32(std::nextafter(0x1p-25f, 1.0f)), 0x1p-24f);
  EXPECT_EQ(recipe::F16RoundedF32(0x1.8p-24f), 0x1p-23f);
  EXPECT_EQ(recipe::F16CodeOfScale(F32FromBits(0xFFC00001u)), 0xFE00u);  // NaN: sign kept, quiet
  // 0.2f = 0x3E4CCCCD -> 1.6 * 2^-3: mantissa 0.6 * 1024 = 614.4 -> 614:
  // 1.599609375 * 2^-3 = 0.199951171875 (0x3E4CC000).
  EXPECT_EQ(F32Bits(recipe::F16RoundedF32(0.2f)), 0x3E4CC000u);
}

// GPTQ asym on {-1, 0.1, 0.5, 2}: xmin -1, xmax 2, scale 3 / 15 = fp32(0.2)
// (0x3E4CCCCD), stored fp16 0.199951171875 (0x3E4CC000); zero round(1 /
// 0.2) = round(4.99999993 -> fp32 5.0) = 5. q0: -1 / 0.2 = -5 -> 0;
// 0.1f / 0.2f = 0.5 exactly (0.2f = 2 * 0.1f) -> round half even 0 -> 5;
// 0.5 / 0.2 -> fp32 2.5 -> 2 -> 7; 2 / 0.2 -> fp32 10 -> 15. The packer's
// (0.2 * (q0 - 5) + 5 * 0.2) / 0.199951171875 = q0 * 1.000244...: the same
// integers. FP16 dequant: -5 * 0.199951171875 = -(1 - 2^-12), the tie
// between 1 - 2^-11 and 1: even, -1.0 (0xBC00); 0; 2 * s = 0.39990234375
// (0x3666, exact); 10 * s = 2 - 2^-11, the tie between 2 - 2^-10 and 2:
// 2.0 (0x4000). The FP32 dequantization keeps -0.999755859375 and
// 1.99951171875.
TEST(Fp16Scales, GptqAsymLiteral) {
  const std::vector<float> x{-1.0f, 0.1f, 0.5f, 2.0f};
  ExpectGroup("gptq-asym-fp16", x, {0, 5, 7, 15}, 0x3E4CC000u, 5, {0xBC00, 0x0000, 0x3666, 0x4000});
  const Quantized m = Model(CatalogRecipe("uint4", "gptq-asym-fp16"), {recipe::Geometry::kGroup, 4, 0}, x, 1, 4);
  EXPECT_EQ(m.back[0], -0.999755859375f);
  EXPECT_EQ(m.back[3], 1.99951171875f);
}

// AWQ on {1, 2, 3, 4} (all positive: AWQ takes min 1, where GPTQ would
// take 0): scale (4 - 1) / 15 = fp32(0.2), fp16 0.199951171875; zero
// -round(1 / 0.2) = -5, clamped to 0. q0 = round(x / 0.2): 5, 10, 15, 20 ->
// 15. Repacked: the same. FP16: 5 * s = 1 - 2^-12 -> 1.0 (0x3C00); 10 * s
// -> 2.0 (0x4000); 15 * s = 2.999267578125 = 1535.625 * 2^-9 -> 3.0
// (0x4200) twice.
TEST(Fp16Scales, AwqPositiveGroupClampsTheZeroPoint) {
  ExpectGroup("awq-fp16", {1.0f, 2.0f, 3.0f, 4.0f}, {5, 10, 15, 15}, 0x3E4CC000u, 0,
              {0x3C00, 0x4000, 0x4200, 0x4200});
}

// AWQ's quotient is rounded to FP16 before round(): group {0, 1433 * 2^-11,
// 3, 3}: min 0, max 3, scale fp16(3 / 15) = 819 / 4096 (0x3E4CC000), zero 0;
// 1433 * 2^-11 / scale = 2866 / 819 = 3.49939, which FP16 (spacing 2^-9 at
// 3.5) rounds to 3.5, and round-half-even gives 4 (an FP32 quotient would
// give 3); W = 4 * scale exact, so the packer keeps 4. 3 / scale = 15.0037
// -> 15.0 -> 15. FP16 dequantized: 0; 4 * 819 / 4096 = 0.7998046875
// (0x3A66); 15 * scale = 2.999267578125 -> 3.0 (0x4200).
TEST(Fp16Scales, AwqQuotientRoundsToHalfFirst) {
  ExpectGroup("awq-fp16", {0.0f, 1433 * 0x1p-11f, 3.0f, 3.0f}, {0, 4, 15, 15}, 0x3E4CC000u, 0,
              {0x0000, 0x3A66, 0x4200, 0x4200});
}

// A subnormal FP16 scale moves the stored integer: GPTQ asym on {0, 0, 0,
// 21 * 2^-24}: scale = fp32(21 * 2^-24 / 15) = 1.39999998 * 2^-24, stored as
// fp16 2^-24 (1.4 rounds to 1); zero 0; q0(21 * 2^-24) = 15, and the packer
// computes (15 * 1.39999998 * 2^-24) / 2^-24 = 20.9999996 -> 21, whose low
// four bits (the nibble the shift-OR fills) are 5. The checkpoint dequantizes
// it as 5 * 2^-24 (FP16 subnormal 0x0005).
TEST(Fp16Scales, SubnormalHalfScaleMovesTheInteger) {
  ExpectGroup("gptq-asym-fp16", {0.0f, 0.0f, 0.0f, 21 * 0x1p-24f}, {0, 0, 0, 5}, 0x33800000u, 0,
              {0x0000, 0x0000, 0x0000, 0x0005});
}

// AWQ's floor, in FP16 (AutoAWQ quantizes the layer cast to FP16): an
// all-equal group {0.5 x4} has range 0 -> Half(1e-5) = 168 * 2^-24; scale
// 168 * 2^-24 / 15 = 11.2 * 2^-24 -> 11 * 2^-24 (0x35300000); 0.5 / scale =
// 762600 overflows FP16: zero -round(+Inf) = -Inf -> 0, and q0 = round(Inf)
// clamps to 15; packer: 15 * 11 * 2^-24 (exact) / (11 * 2^-24) = 15. FP16
// dequantized: 165 * 2^-24 (0x00A5).
TEST(Fp16Scales, AwqEpsFloorGivesASubnormalHalfScale) {
  ExpectGroup("awq-fp16", {0.5f, 0.5f, 0.5f, 0.5f}, {15, 15, 15, 15}, 0x35300000u, 0,
              {0x00A5, 0x00A5, 0x00A5, 0x00A5});
}

// Overflow: GPTQ asym on {0, 0, 0, 15 * 65520}: scale 65520 -> fp16 Inf;
// zero round(-0 / 65520) = 0; q0 = 15, the packer's (65520 * 15 + 0) / Inf
// = 0. Dequantized (0 - 0) * Inf = NaN in FP16 and FP32. One below
// (15 * 65519) keeps the finite 65504 and q = round(15 * 65519 / 65504) =
// round(15.0034) = 15.
TEST(Fp16Scales, ScaleBeyondHalfRangeIsInfinite) {
  ExpectGroup("gptq-asym-fp16", {0.0f, 0.0f, 0.0f, 15 * 65520.0f}, {0, 0, 0, 0}, 0x7F800000u, 0,
              {0x7E00, 0x7E00, 0x7E00, 0x7E00});
  // (15 - 0) * 65504 = 982560 overflows FP16 (> 65504): Inf (0x7C00).
  ExpectGroup("gptq-asym-fp16", {0.0f, 0.0f, 0.0f, 15 * 65519.0f}, {0, 0, 0, 15}, 0x477FE000u, 0,
              {0x0000, 0x0000, 0x0000, 0x7C00});
}

// A scale at most 2^-25 rounds to FP16 zero: GPTQ sym on {2^-22, 0, 0, 0}
// (xmax 2^-22, xmin 0, so no negative: scale 2^-22 / 15 < 2^-25 -> 0);
// zero 8; the packer divides by 0: NaN or Inf, .to(int) -> low bits 0.
// Dequantized (0 - 8) * 0 = -0 (0x8000).
TEST(Fp16Scales, ScaleBelowHalfSubnormalsIsZero) {
  ExpectGroup("gptq-sym-fp16", {0x1p-22f, 0.0f, 0.0f, 0.0f}, {0, 0, 0, 0}, 0x00000000u, 8,
              {0x8000, 0x8000, 0x8000, 0x8000});
}

// NaN groups: the scale is NaN (GPTQ carries it; AutoAWQ asserts there is
// none, the model carries it as torch would), every integer 0, every value
// NaN.
TEST(Fp16Scales, NanGroup) {
  const float nan = F32FromBits(0x7FC00000u);
  for (const char* profile : {"gptq-asym-fp16", "awq-fp16"}) {
    ExpectGroup(profile, {1.0f, nan, 2.0f, 3.0f}, {0, 0, 0, 0}, 0x7FC00000u, 0, {0x7E00, 0x7E00, 0x7E00, 0x7E00});
  }
}

// ---- model == oracle on biased groups -----------------------------------------------

// A scale drawn where FP16 rounding decides: a tie between two FP16 values
// (exact in FP32) or one FP32 ulp either side; the subnormal FP16 range;
// next to 65504 / 65520; any normal value.
float BiasedScale() {
  switch (*rc::gen::inRange(0, 4)) {
    case 0: {
      const int e = *rc::gen::inRange(-24, 16);
      const int m = *rc::gen::inRange(0, 1024);
      float s = std::ldexp(1.0f + (static_cast<float>(m) + 0.5f) / 1024.0f, e);
      const int step = *rc::gen::inRange(-1, 2);
      if (step != 0) s = std::nextafter(s, step < 0 ? 0.0f : INFINITY);
      return s;
    }
    case 1: return std::ldexp(static_cast<float>(*rc::gen::inRange(1, 1 << 20)), -44);  // [2^-44, 2^-24)
    case 2: return *rc::gen::element(65504.0f, 65519.0f, 65520.0f, std::nextafter(65520.0f, 0.0f), 65536.0f);
    default: return std::ldexp(1.0f + static_cast<float>(*rc::gen::inRange(0, 1 << 23)) * 0x1p-23f,
                               *rc::gen::inRange(-30, 20));
  }
}

// Fills a group whose range is about 15 * scale, with elements on the
// integer grid and at its half-way points, sometimes an all-zero, a NaN or
// an infinite element, all-equal values, or a group far from zero.
void FillGroup(std::vector<float>* x, const std::vector<long>& members) {
  const float s = BiasedScale();
  const int kind = *rc::gen::inRange(0, 12);
  const int offset = *rc::gen::inRange(0, 16);  // where zero sits in the grid
  for (long k : members) {
    float v = s * (static_cast<float>(*rc::gen::inRange(0, 31)) * 0.5f - static_cast<float>(offset));
    if (kind == 0) v = 0.0f;
    if (kind == 1) v = s;
    if (kind == 2) v = v + 1000.0f * s;  // all positive, far from 0 (AWQ's zero clamps)
    (*x)[static_cast<std::size_t>(k)] = v;
  }
  const long first = members.front();
  if (kind == 3) (*x)[static_cast<std::size_t>(first)] = F32FromBits(0x7FC00000u);
  if (kind == 4) (*x)[static_cast<std::size_t>(first)] = *rc::gen::element(INFINITY, -INFINITY);
  if (kind == 5) (*x)[static_cast<std::size_t>(first)] = -0.0f;
  (*x)[static_cast<std::size_t>(members.back())] = s * static_cast<float>(15 - offset);  // the range edge
}

TEST(Fp16Scales, ModelMatchesOracleOnBiasedGroups) {
  for (const char* profile : kProfiles) {
    const recipe::Recipe& r = CatalogRecipe("uint4", profile);
    CheckAtLevel(LevelCounts{20, 300, 5000}, [&] {
      const long rows = *rc::gen::inRange(1, 4);
      const recipe::Layout layout =
          *rc::gen::element(recipe::Layout{recipe::Geometry::kGroup, 8, 0}, recipe::Layout{recipe::Geometry::kPerRow, 0, 0},
                            recipe::Layout{recipe::Geometry::kPerTensor, 0, 0});
      const long cols = 8 * *rc::gen::inRange(1, 4);
      std::vector<float> x;
      FillByGroup(r, layout, rows, cols, &x, FillGroup);
      CheckTensorAgainstOracle(r, layout, x, rows, cols);
      // FP16 dequantization, model vs oracle.
      const ref::OracleQuantized o = ref::OracleQuantizeTensor(r, layout, x, rows, cols);
      const std::vector<std::uint16_t> o16 = ref::OracleDequantizeTensorToF16(r, layout, o.packed, o.scales, rows, cols);
      const Quantized m = Model(r, layout, x, rows, cols);
      RC_ASSERT(o16.size() == m.back16.size());
      for (std::size_t i = 0; i < o16.size(); ++i) RC_ASSERT(SameF16(m.back16[i], o16[i]));
    });
  }
}

// With a normal FP16 scale the packer gives back the quantizer's integer
// (|fp32 / fp16 - 1| <= 2^-11 and q0 <= 15): the FP16 recipe's codes equal
// the FP32 GPTQ recipe's wherever the FP16 scale is a normal number.
TEST(Fp16Scales, NormalHalfScaleKeepsTheQuantizerInteger) {
  const recipe::Recipe& fp16 = CatalogRecipe("uint4", "gptq-asym-fp16");
  const recipe::Recipe& fp32 = CatalogRecipe("uint4", "gptq-asym");
  const recipe::Layout layout{recipe::Geometry::kGroup, 8, 0};
  CheckAtLevel(LevelCounts{20, 300, 3000}, [&] {
    // A scale in FP16's normal range, at an FP16 tie or anywhere; finite
    // elements on the grid and half-way between its points.
    const int e = *rc::gen::inRange(-14, 15);
    const float tie = std::ldexp(1.0f + (static_cast<float>(*rc::gen::inRange(0, 1024)) + 0.5f) / 1024.0f, e);
    const float any = std::ldexp(1.0f + static_cast<float>(*rc::gen::inRange(0, 1 << 23)) * 0x1p-23f, e);
    const float s = *rc::gen::element(tie, std::nextafter(tie, 0.0f), std::nextafter(tie, INFINITY), any);
    const int offset = *rc::gen::inRange(0, 16);
    std::vector<float> x(8);
    for (float& v : x) v = s * (static_cast<float>(*rc::gen::inRange(0, 31)) * 0.5f - static_cast<float>(offset));
    x[7] = s * static_cast<float>(15 - offset);
    const Quantized a = Model(fp16, layout, x, 1, 8);
    const Quantized b = Model(fp32, layout, x, 1, 8);
    const float s16 = a.scales[0];
    RC_PRE(s16 >= 0x1p-14f && s16 <= 65504.0f);  // a normal FP16 number
    RC_ASSERT(a.codes == b.codes);
    RC_ASSERT(F32Bits(s16) == F32Bits(recipe::F16RoundedF32(b.scales[0])));
  });
}

// ---- registry rows ---------------------------------------------------------------------

using ::lowbit::testing::AllBackends;

// Every available row of the three recipes in every listed layout equals
// the scalar row (the model) on biased groups, quantize and dequantize (to
// FP32, and to FP16 on the SIMD rows).
TEST(Fp16Scales, EveryRowEqualsTheScalarRow) {
  int rows_checked = 0;
  for (const std::string& name : registry::AllRecipeNames()) {
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(name, &target));
    if (target.recipe->element_quirk != recipe::ElementQuirk::kRepackWithFp16Scale) continue;
    const registry::RecipeEntry* scalar_q =
        AllBackends().FindRecipe(registry::RecipeOperation::kQuantizeRecipe, name, "scalar");
    const registry::RecipeEntry* scalar_d =
        AllBackends().FindRecipe(registry::RecipeOperation::kDequantizeRecipe, name, "scalar");
    ASSERT_NE(scalar_q, nullptr) << name;
    ASSERT_NE(scalar_d, nullptr) << name;
    for (const registry::RecipeEntry& e : AllBackends().RecipeEntries()) {
      if (e.recipe != name || e.backend == "scalar" || e.operation != registry::RecipeOperation::kQuantizeRecipe ||
          !e.available()) {
        continue;
      }
      const registry::RecipeEntry* row_d =
          AllBackends().FindRecipe(registry::RecipeOperation::kDequantizeRecipe, name, e.backend);
      ASSERT_NE(row_d, nullptr) << e.backend << " " << name;
      ++rows_checked;
      CheckAtLevel(LevelCounts{10, 100, 1000}, [&] {
        const long rows = 2;
        const long cols = 128 * *rc::gen::inRange(1, 3);
        std::vector<float> x;
        FillByGroup(*target.recipe, target.layout, rows, cols, &x, FillGroup);
        const registry::RecipeBuffers b = registry::RecipeBufferSizes(target, rows, cols);
        RC_ASSERT(b.ok);
        registry::RecipeStorage want(b.sizes), got(b.sizes);
        registry::RecipeArgs a;
        a.operation = registry::RecipeOperation::kQuantizeRecipe;
        a.target = target;
        a.rows = rows;
        a.cols = cols;
        a.x = x.data();
        a.q = want.View();
        RC_ASSERT(scalar_q->run(a).ok);
        a.q = got.View();
        const registry::Status s = e.run(a);
        RC_ASSERT(s.ok);
        RC_ASSERT(got.codes == want.codes);
        RC_ASSERT(got.zero_points == want.zero_points);
        for (std::size_t g = 0; g < want.scales.size(); ++g) {
          RC_ASSERT(SameF32(F32Bits(got.scales[g]), F32Bits(want.scales[g])));
        }
        std::vector<float> back_want(x.size()), back_got(x.size());
        a.operation = registry::RecipeOperation::kDequantizeRecipe;
        a.q = want.View();
        a.out = back_want.data();
        RC_ASSERT(scalar_d->run(a).ok);
        a.out = back_got.data();
        RC_ASSERT(row_d->run(a).ok);
        for (std::size_t i = 0; i < x.size(); ++i) RC_ASSERT(SameF32(F32Bits(back_got[i]), F32Bits(back_want[i])));
        if (e.backend.rfind("simd:", 0) != 0) return;  // FP16 output: scalar and SIMD rows
        std::vector<std::uint16_t> h_want(x.size()), h_got(x.size());
        a.out = nullptr;
        a.output_format = FormatId::kFp16;
        a.out_f16 = h_want.data();
        RC_ASSERT(scalar_d->run(a).ok);
        a.out_f16 = h_got.data();
        RC_ASSERT(row_d->run(a).ok);
        for (std::size_t i = 0; i < x.size(); ++i) RC_ASSERT(SameF16(h_got[i], h_want[i]));
      });
    }
  }
  // Scalar only is a valid build (no SIMD library); with one, the rows of
  // every SIMD target this CPU runs were checked (at least the baseline's).
  bool simd_built = false;
  for (const registry::RecipeEntry& e : AllBackends().RecipeEntries()) simd_built |= e.backend.rfind("simd:", 0) == 0;
  if (simd_built) EXPECT_GE(rows_checked, 3 * 3) << "each recipe in each listed layout on one target at least";
}

// FP16 output through the registry: the scalar and SIMD rows write the
// model's FP16 bits; the CUDA rows and a recipe without an FP16 result refuse
// by name; quantize refuses an FP16 output type.
TEST(Fp16Scales, Fp16OutputThroughTheRegistry) {
  const std::string name = "uint4:gptq-asym-fp16/g128";
  recipe::Target target;
  ASSERT_TRUE(registry::ParseRecipe(name, &target));
  std::vector<float> x(256);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 37) - 11) * 0.173f;
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(target, 2, 128);
  ASSERT_TRUE(b.ok);
  registry::RecipeStorage q(b.sizes);
  registry::RecipeArgs a;
  a.target = target;
  a.rows = 2;
  a.cols = 128;
  a.x = x.data();
  a.q = q.View();
  const registry::RecipeEntry* scalar_q =
      AllBackends().FindRecipe(registry::RecipeOperation::kQuantizeRecipe, name, "scalar");
  ASSERT_NE(scalar_q, nullptr);
  ASSERT_TRUE(scalar_q->run(a).ok);

  std::vector<std::uint16_t> out16(x.size(), 0xAAAA);
  a.operation = registry::RecipeOperation::kDequantizeRecipe;
  a.output_format = FormatId::kFp16;
  a.out_f16 = out16.data();
  const registry::RecipeEntry* scalar_d =
      AllBackends().FindRecipe(registry::RecipeOperation::kDequantizeRecipe, name, "scalar");
  ASSERT_NE(scalar_d, nullptr);
  const registry::Status ok = scalar_d->run(a);
  ASSERT_TRUE(ok.ok) << ok.message;
  std::vector<std::uint16_t> model16(x.size());
  ASSERT_EQ(recipe::DequantizeTensorToF16(*target.recipe, target.layout, recipe::AsConst(q.View()), 2, 128,
                                          model16.data()),
            recipe::TensorStatus::kOk);
  EXPECT_EQ(out16, model16);
  // Each equals the FP32 dequantization rounded to FP16 (exact product).
  std::vector<float> out32(x.size());
  registry::RecipeArgs f = a;
  f.output_format = FormatId::kFp32;
  f.out_f16 = nullptr;
  f.out = out32.data();
  ASSERT_TRUE(scalar_d->run(f).ok);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out16[i], recipe::F16CodeOfScale(out32[i])) << i;

  // The SIMD rows give the same FP16 bits; the CUDA rows (whose kernels
  // write FP32) refuse an FP16 output by name.
  int simd_rows = 0;
  for (const registry::RecipeEntry& e : AllBackends().RecipeEntries()) {
    if (e.recipe != name || e.operation != registry::RecipeOperation::kDequantizeRecipe || e.backend == "scalar") {
      continue;
    }
    if (e.backend.rfind("simd:", 0) == 0) {
      if (!e.available()) continue;
      ++simd_rows;
      std::vector<std::uint16_t> row16(x.size(), 0x5555);
      registry::RecipeArgs r16 = a;
      r16.out_f16 = row16.data();
      const registry::Status s = e.run(r16);
      ASSERT_TRUE(s.ok) << e.backend << ": " << s.message;
      EXPECT_EQ(row16, model16) << e.backend;
      continue;
    }
    const registry::Status s = e.run(a);
    EXPECT_FALSE(s.ok) << e.backend;
    if (e.available()) EXPECT_NE(s.message.find("fp16 output runs on the scalar row"), std::string::npos) << s.message;
  }
  RecordProperty("simd_fp16_rows", simd_rows);
  // Split over threads (registry::RunParallel: each chunk of whole rows
  // writes its own slice of out_f16; 4 x kMinElementsPerChunk elements make 4
  // chunks), the same bits as the model in one piece.
  {
    const std::size_t rows = 4 * registry::kMinElementsPerChunk / 128;
    std::vector<float> big(rows * 128);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(static_cast<int>(i % 97) - 40) * 0.0137f;
    const registry::RecipeBuffers bb = registry::RecipeBufferSizes(target, rows, 128);
    ASSERT_TRUE(bb.ok);
    registry::RecipeStorage bq(bb.sizes);
    registry::RecipeArgs split;
    split.target = target;
    split.rows = rows;
    split.cols = 128;
    split.x = big.data();
    split.q = bq.View();
    ASSERT_TRUE(scalar_q->run(split).ok);
    std::vector<std::uint16_t> whole(big.size()), parts(big.size(), 0x5555);
    ASSERT_EQ(recipe::DequantizeTensorToF16(*target.recipe, target.layout, recipe::AsConst(bq.View()),
                                            static_cast<long>(rows), 128, whole.data()),
              recipe::TensorStatus::kOk);
    split.operation = registry::RecipeOperation::kDequantizeRecipe;
    split.output_format = FormatId::kFp16;
    split.out_f16 = parts.data();
    registry::ThreadPool pool(4);
    const registry::Status ps = registry::RunParallel(*scalar_d, split, 4, pool);
    ASSERT_TRUE(ps.ok) << ps.message;
    EXPECT_EQ(parts, whole);
  }
  // A null FP16 buffer, a recipe without an FP16 result, quantize.
  registry::RecipeArgs null_out = a;
  null_out.out_f16 = nullptr;
  EXPECT_NE(registry::ValidateRecipeArgs(null_out).message.find("null input or output"), std::string::npos);
  registry::RecipeArgs other = a;
  ASSERT_TRUE(registry::ParseRecipe("uint4:gptq-asym/g128", &other.target));
  const registry::Status no16 = registry::ValidateRecipeArgs(other);
  EXPECT_FALSE(no16.ok);
  EXPECT_NE(no16.message.find("no fp16 output"), std::string::npos) << no16.message;
  registry::RecipeArgs quantize = a;
  quantize.operation = registry::RecipeOperation::kQuantizeRecipe;
  EXPECT_NE(registry::ValidateRecipeArgs(quantize).message.find("dequantize only"), std::string::npos);
  registry::RecipeArgs bf16 = a;
  bf16.output_format = FormatId::kBf16;
  EXPECT_NE(registry::ValidateRecipeArgs(bf16).message.find("is not a dequantize output"), std::string::npos);
}

}  // namespace
}  // namespace lowbit::testing
