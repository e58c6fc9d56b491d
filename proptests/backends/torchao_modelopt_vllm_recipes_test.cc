// The recipes of the newer library versions (torchao 0.18's NVFP4
// reciprocal order, torchao's eager RCEIL, ModelOpt 0.47's block-scale clamp,
// vLLM FP8 per tensor, per token, KV cache and its calibration, INT8
// amax.clamp(1e-10) / 127): literal
// values worked out from each source (and, for the torchao and ModelOpt
// ones, seen from the live library, tests/peers/), for the model and the
// oracle alike, and model == oracle on inputs biased toward each rule's own
// boundaries. The catalog-wide properties (block_ and quant_model_vs_oracle)
// also cover these recipes with their generic generators.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catalog_recipe.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/reference/block/recipe_oracle.h"
#include "lowbit/registry/recipe_contract.h"
#include "lowbit/registry/registry.h"
#include "generators_at_level.h"
#include "recipe_vs_oracle.h"
#include "test_level.h"

namespace lowbit::testing {
namespace {

namespace ref = lowbit::reference::block;

using ::lowbit::testing::CatalogRecipe;

// The model's whole-tensor result under a layout, unpacked.
struct ModelResult {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scale_codes;
  std::vector<float> scales;
};

ModelResult Model(const recipe::Recipe& r, const recipe::Layout& layout, const std::vector<float>& x, long rows,
                  long cols) {
  recipe::GroupGrid g;
  EXPECT_EQ(recipe::MakeGroupGrid(r, layout, rows, cols, &g), recipe::TensorStatus::kOk);
  const recipe::BufferSizes b = recipe::SizesOf(r, g);
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(b.code_bytes));
  ModelResult m;
  m.scale_codes.resize(static_cast<std::size_t>(b.scale_codes));
  m.scales.resize(static_cast<std::size_t>(b.scales));
  std::vector<std::int32_t> zero_points(static_cast<std::size_t>(b.zero_points));
  recipe::TensorScale t;
  recipe::QuantizedTensor q{packed.data(), m.scale_codes.data(), m.scales.data(), zero_points.data(), &t};
  EXPECT_EQ(recipe::QuantizeTensor(r, layout, x.data(), rows, cols, q), recipe::TensorStatus::kOk);
  for (long k = 0; k < rows * cols; ++k) m.codes.push_back(recipe::LoadCode(r.packing, packed.data(), k));
  return m;
}

ModelResult Model(const recipe::Recipe& r, const std::vector<float>& x) {
  return Model(r, r.layout, x, 1, static_cast<long>(x.size()));
}

ref::OracleQuantized Oracle(const recipe::Recipe& r, const recipe::Layout& layout, const std::vector<float>& x,
                            long rows, long cols) {
  return ref::OracleQuantizeTensor(r, layout, x, rows, cols);
}

// ---- torchao 0.18 NVFP4: x * ((1 / pts) / s) ----------------------------------

// Tensor amax 7: pts = fp32(7 / 2688) = 0x3B2AAAAB; block amax 7 gives the
// scale 448 (0x7E). x = 0x40BAAAAC: x / (pts * 448) is 5.0 exactly, a tie
// that goes to 4 (code 6) under nvfp4:ao; torchao 0.18.0's x * ((1 / pts) /
// 448) is just above 5 and goes to 6 (code 7), as to_nvfp4 returns
// (tests/peers/test_torchao.py).
TEST(Nvfp4LibraryVersions, TorchaoReciprocalOrderChangesATie) {
  const std::vector<float> x = {7.0f, F32FromBits(0x40BAAAACu)};
  for (const char* profile : {"ao", "ao-0.18"}) {
    const recipe::Recipe& r = CatalogRecipe("nvfp4", profile);
    const ModelResult m = Model(r, x);
    const ref::OracleQuantized o = Oracle(r, r.layout, x, 1, 2);
    EXPECT_EQ(o.tensor_scale.decode_bits, 0x3B2AAAABu) << profile;
    EXPECT_EQ(m.scale_codes.at(0), 0x7E) << profile;
    EXPECT_EQ(o.scales.at(0).code, 0x7E) << profile;
    const std::uint8_t want = std::string(profile) == "ao" ? 0x6 : 0x7;
    EXPECT_EQ(m.codes.at(1), want) << profile;
    EXPECT_EQ(o.codes.at(1), want) << profile;
  }
}

// A per-tensor scale below 2^-128 has an infinite reciprocal: every
// element's factor is Inf, so finite elements become +-Inf (clamped to +-6,
// code 7 / 0xF) and zeros NaN (0 * Inf, which the E2M1 cast makes +6).
TEST(Nvfp4LibraryVersions, TinyPerTensorScaleMakesTheFactorInfinite) {
  const recipe::Recipe& r = CatalogRecipe("nvfp4", "ao-0.18");
  recipe::TensorScale t;
  t.decode = F32FromBits(0x00000001u);  // 2^-149
  t.encode = 0.0f;
  recipe::GroupStats st = recipe::EmptyStats();
  st = recipe::Accumulate(r, st, 1e-40f);
  const recipe::BlockScale s = recipe::ChooseScale(r, st, t);
  EXPECT_TRUE(std::isinf(s.factor));
  EXPECT_EQ(recipe::EncodeElement(r, s, -1e-40f), 0xF);  // -Inf -> -6
}

// ---- ModelOpt 0.47: block scale clamped to [2^-9, 448] -------------------------

// Tensor amax calibrated at 1 (wsf2 = 1 / 2688); a block of amax 100 asks for
// the block scale 100 * 448 / 6... = 44800 / 6 > 448: 0.47.0 clamps it to 448
// (0x7E), the older rule gives the NaN code 0x7F (as NVFP4QTensor does live,
// tests/peers/test_modelopt.py).
TEST(Nvfp4LibraryVersions, ModelOpt047ClampsTheBlockScaleAt448) {
  recipe::TensorScale t;
  const recipe::Recipe& old_rule = CatalogRecipe("nvfp4", "modelopt");
  const recipe::Recipe& clamped = CatalogRecipe("nvfp4", "modelopt-0.47");
  t = recipe::ChooseTensorScale(clamped, 1.0f);
  recipe::GroupStats st = recipe::EmptyStats();
  st = recipe::Accumulate(clamped, st, 100.0f);
  EXPECT_EQ(recipe::ChooseScale(old_rule, st, t).code, 0x7F);
  EXPECT_EQ(recipe::ChooseScale(clamped, st, t).code, 0x7E);
  // Within range both agree (amax 1: 1 / (6 / 2688) = 448 exactly).
  recipe::GroupStats one = recipe::Accumulate(clamped, recipe::EmptyStats(), 1.0f);
  EXPECT_EQ(recipe::ChooseScale(old_rule, one, t).code, 0x7E);
  EXPECT_EQ(recipe::ChooseScale(clamped, one, t).code, 0x7E);
}

// ---- torchao eager RCEIL ----------------------------------------------------------

// MXFP8 E4M3, amax 7168 + 2^-10: descale = fp32(amax / 448) = 16 * (1 +
// 2^-23) (0x41800001). The exact RCEIL rounds up to 2^5 (code 132); FP32
// log2 of it is 4 + 1.7e-7, which rounds to 4.0 (the spacing at 4 is
// 4.8e-7), so the eager path's ceiling is 4 (code 131), as to_mx returns on
// the CPU. Element 0: 7168.0009765625 * 2^-4 clamps to 448 (0x7E); 1.0 *
// 2^-4 = 0x18.
TEST(TorchaoRceilEager, OneUlpAboveAPowerOfTwoKeepsTheSmallerScale) {
  const std::vector<float> x = {7168.0009765625f, 1.0f};
  EXPECT_EQ(F32Bits(7168.0009765625f / 448.0f), 0x41800001u);
  const recipe::Recipe& eager = CatalogRecipe("mxfp8_e4m3", "ao-rceil-eager");
  const recipe::Recipe& exact = CatalogRecipe("mxfp8_e4m3", "ao-rceil");
  EXPECT_EQ(Model(exact, x).scale_codes.at(0), 132);
  const ModelResult m = Model(eager, x);
  const ref::OracleQuantized o = Oracle(eager, eager.layout, x, 1, 2);
  EXPECT_EQ(m.scale_codes.at(0), 131);
  EXPECT_EQ(o.scales.at(0).code, 131);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x7E, 0x18}));
  EXPECT_EQ(o.codes, (std::vector<std::uint8_t>{0x7E, 0x18}));
}

// The thresholds of FP32 log2 (correctly rounded) per k, worked out by hand:
// descale = 2^k * (1 + m * 2^-23) keeps 2^k for m <= 1 at k = 4..7, m <= 2
// at 8..15, m <= 5 at 16..31, m <= 11 at 32..63, m <= 22 at 64..127 (m <
// 2^j * ln 2 with half the spacing at k = 2^-(23 - j)); never at k = 1..3.
// Negative k: the spacing below |k|, so -4 (|k| a power of two, spacing
// 2^-22 below 4) keeps none, -5..-8 keep m <= 1.
TEST(TorchaoRceilEager, ThresholdsOfFp32Log2) {
  const struct {
    int k;
    int last_kept;  // the largest m that keeps 2^k; 0: none
  } rows[] = {{1, 0},  {2, 0},   {3, 0},   {4, 1},   {7, 1},   {8, 2},   {15, 2},  {16, 5},   {31, 5},
              {32, 11}, {63, 11}, {64, 22}, {126, 22}, {-2, 0}, {-3, 0},  {-4, 0},  {-5, 1},   {-8, 1},
              {-9, 2},  {-16, 2}, {-17, 5}, {-64, 11}, {-65, 22}, {-126, 22}};
  for (const auto& row : rows) {
    for (int m = 1; m <= row.last_kept + 1; ++m) {
      const float d = std::ldexp(1.0f + static_cast<float>(m) * 0x1p-23f, row.k);
      const int want = m <= row.last_kept ? row.k : row.k + 1;
      EXPECT_EQ(recipe::detail::RceilEagerExponent(d), want) << "k " << row.k << " m " << m;
      // The same from a float log2 (glibc's log2f is correctly rounded here).
      EXPECT_EQ(static_cast<int>(std::ceil(std::log2(d))), want) << "k " << row.k << " m " << m;
    }
  }
}

// Code 0 multiplies by 1.0 (torch.where(exponent == 0, 1.0, ...)): a block
// of amax 2^-135 keeps its elements as they are, which round to 0 in E4M3;
// the exact profile multiplies by 2^127 and gets 2^-8 (code 0x02). Inf gives
// 0xFE, NaN 0xFF.
TEST(TorchaoRceilEager, CodeZeroInfAndNan) {
  const recipe::Recipe& eager = CatalogRecipe("mxfp8_e4m3", "ao-rceil-eager");
  const std::vector<float> tiny = {std::ldexp(1.0f, -135)};
  EXPECT_EQ(Model(eager, tiny).scale_codes.at(0), 0);
  EXPECT_EQ(Model(eager, tiny).codes.at(0), 0x00);
  EXPECT_EQ(Oracle(eager, eager.layout, tiny, 1, 1).codes.at(0), 0x00);
  EXPECT_EQ(Model(CatalogRecipe("mxfp8_e4m3", "ao-rceil"), tiny).codes.at(0), 0x02);
  EXPECT_EQ(Model(eager, {INFINITY, 1.0f}).scale_codes.at(0), 0xFE);
  EXPECT_EQ(Oracle(eager, eager.layout, {INFINITY, 1.0f}, 1, 2).scales.at(0).code, 0xFE);
  EXPECT_EQ(Model(eager, {NAN, 1.0f}).scale_codes.at(0), 0xFF);
}

// Model == oracle on blocks whose descale sits a few ulps either side of a
// power of two (the only place the eager rule differs from the exact one),
// for every MX float format.
TEST(TorchaoRceilEager, ModelMatchesOracleNearPowersOfTwo) {
  for (const char* format : {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4"}) {
    const recipe::Recipe& r = CatalogRecipe(format, "ao-rceil-eager");
    const float max_elem = recipe::MaxFiniteF32(r.element);
    CheckAtLevel(LevelCounts{20, 300, 5000}, [&] {
      const int k = *rc::gen::inRange(-149, 128);
      const int m = *rc::gen::inRange(-3, 70);
      const float d = std::ldexp(1.0f + static_cast<float>(m) * 0x1p-23f, k);
      // An amax whose quotient by max_elem is d, or next to it.
      float amax = d * max_elem;
      amax = std::nextafter(amax, *rc::gen::element(0.0f, INFINITY));
      if (*rc::gen::inRange(0, 2) == 0) amax = std::nextafter(amax, 0.0f);
      std::vector<float> x(32, 0.0f);
      x[0] = *rc::gen::element(amax, -amax);
      for (int i = 1; i < 32; ++i) x[static_cast<std::size_t>(i)] = amax * static_cast<float>(*rc::gen::inRange(-64, 65)) / 64.0f;
      CheckTensorAgainstOracle(r, r.layout, x, 1, 32);
    });
  }
}

// ---- vLLM FP8 ----------------------------------------------------------------------

// Per tensor: amax 896 -> scale 2, factor 1 / 2; 896 * 0.5 = 448 (0x7E);
// -3 * 0.5 = -1.5 (0xBC); a NaN passes fminf as +448 (0x7E). The stored
// scale is 2 (the dequant scale).
TEST(VllmFp8, PerTensorScaleClampAndNan) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm");
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const std::vector<float> x = {896.0f, -3.0f, NAN, -INFINITY};
  const ModelResult m = Model(r, tensor, x, 1, 4);
  const ref::OracleQuantized o = Oracle(r, tensor, x, 1, 4);
  // -Inf raises the amax to Inf (fabsf, fmaxf): scale Inf, factor 0; then
  // 896 * 0 = 0, -3 * 0 = -0 (0x80), NaN -> 448, -Inf * 0 = NaN -> +448.
  EXPECT_EQ(m.scales.at(0), INFINITY);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x00, 0x80, 0x7E, 0x7E}));
  EXPECT_EQ(o.codes, m.codes);
  const std::vector<float> y = {896.0f, -3.0f, NAN};
  const ModelResult my = Model(r, tensor, y, 1, 3);
  EXPECT_EQ(my.scales.at(0), 2.0f);
  EXPECT_EQ(my.codes, (std::vector<std::uint8_t>{0x7E, 0xBC, 0x7E}));
  EXPECT_EQ(Oracle(r, tensor, y, 1, 3).codes, my.codes);
}

// An all-zero tensor: scale 0 (no floor per tensor), factor 1 / 0 = +Inf,
// 0 * Inf = NaN, which the clamp makes +448: every code 0x7E, dequantized to
// 448 * 0 = 0. vLLM's dynamic_scaled_fp8_quant does exactly this.
TEST(VllmFp8, PerTensorAllZeroGivesMaxCodes) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm");
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const ModelResult m = Model(r, tensor, {0.0f, -0.0f}, 1, 2);
  EXPECT_EQ(m.scales.at(0), 0.0f);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x7E, 0x7E}));
  EXPECT_EQ(Oracle(r, tensor, {0.0f, -0.0f}, 1, 2).codes, m.codes);
}

// Per token: the floor 1 / (448 * 512) = fp32(1 / 229376) for a zero row;
// amax 896 -> 2, x / 2: 1 -> 0.5 (0x30).
TEST(VllmFp8, PerTokenFloorAndDivision) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm-token");
  const recipe::Layout row{recipe::Geometry::kPerRow, 0, 0};
  const std::vector<float> x = {0.0f, 0.0f, 896.0f, 1.0f};
  const ModelResult m = Model(r, row, x, 2, 2);
  EXPECT_EQ(m.scales.at(0), static_cast<float>(1.0 / 229376.0));
  EXPECT_EQ(m.scales.at(1), 2.0f);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x00, 0x00, 0x7E, 0x30}));
  const ref::OracleQuantized o = Oracle(r, row, x, 2, 2);
  EXPECT_EQ(o.codes, m.codes);
  EXPECT_EQ(o.scales.at(0).decode_bits, F32Bits(static_cast<float>(1.0 / 229376.0)));
}

// A given (static) scale, vLLM static_scaled_fp8_quant: 0.5 stored, x *
// (1.0f / 0.5): 1 -> 2 (0x40), 300 -> 600 clamped to 448 (0x7E), NaN -> +448.
// The same through the registry's scalar row (RecipeArgs::given_scale), and
// refused for a recipe that derives its scale, and for dequantize.
TEST(VllmFp8, StaticGivenScale) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm");
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const std::vector<float> x = {1.0f, 300.0f, NAN};
  std::vector<std::uint8_t> codes(3);
  float scale = 0.0f;
  recipe::QuantizedTensor q;
  q.codes = codes.data();
  q.scales = &scale;
  ASSERT_EQ(recipe::QuantizeTensorWithGivenScale(r, tensor, x.data(), 1, 3, 0.5f, q), recipe::TensorStatus::kOk);
  EXPECT_EQ(scale, 0.5f);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x40, 0x7E, 0x7E}));
  // The oracle with the same stored scale: vLLM's factor is 1 / scale.
  ref::OracleScale given;
  given.decode_bits = F32Bits(0.5f);
  given.factor_bits = F32Bits(2.0f);
  EXPECT_EQ(ref::OracleQuantizeWithScales(r, tensor, x, 1, 3, {given}).codes, codes);
  EXPECT_EQ(recipe::QuantizeTensorWithGivenScale(CatalogRecipe("int8", "ao-sym"), tensor, x.data(), 1, 3, 0.5f, q),
            recipe::TensorStatus::kLayoutNotForRecipe);

  registry::RecipeArgs a;
  std::string error;
  ASSERT_TRUE(registry::ParseRecipe("e4m3:vllm/tensor", &a.target, &error)) << error;
  a.rows = 1;
  a.cols = 3;
  a.x = x.data();
  std::vector<std::uint8_t> row_codes(3);
  float row_scale = 0.0f;
  a.q.codes = row_codes.data();
  a.q.scales = &row_scale;
  const float given_scale = 0.5f;
  a.given_scale = &given_scale;
  registry::Registry reg;
  registry::RegisterScalarRecipes(reg);
  const registry::RecipeEntry* scalar =
      reg.FindRecipe(registry::RecipeOperation::kQuantizeRecipe, "e4m3:vllm/tensor", "scalar");
  ASSERT_NE(scalar, nullptr);
  ASSERT_TRUE(scalar->run(a).ok);
  EXPECT_EQ(row_codes, codes);
  EXPECT_EQ(row_scale, 0.5f);
  ASSERT_TRUE(registry::ParseRecipe("int8:ao-sym/tensor", &a.target, &error)) << error;
  const registry::Status refused = registry::ValidateRecipeArgs(a);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.message.find("takes no given scale"), std::string::npos) << refused.message;
  // Two given scales for one group: refused with the counts named.
  ASSERT_TRUE(registry::ParseRecipe("e4m3:vllm/tensor", &a.target, &error)) << error;
  const float two[2] = {0.5f, 0.5f};
  a.given_scale = two;
  a.given_scale_count = 2;
  const registry::Status counted = registry::ValidateRecipeArgs(a);
  EXPECT_FALSE(counted.ok);
  EXPECT_NE(counted.message.find("2 given scales for 1 groups"), std::string::npos) << counted.message;
}

// The FP8 KV cache: scale 1.0 unless given; x / scale; satfinite: 500 ->
// 448 (0x7E), -Inf -> -448 (0xFE), NaN -> 0x7F. Per head (g2 over rows of 4):
// scales {1, 2, 4, 0.5}: 1 -> 0x38, 2 -> 0x40 | 4 / 2 -> 0x40, 8 / 2 -> 0x48 |
// 1 / 4 -> 0x28 twice | 3 / 0.5 = 6 -> 0x4C, 0.25 / 0.5 -> 0x30.
TEST(VllmFp8, KvCacheDefaultAndPerHeadScales) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm-kv");
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const std::vector<float> x = {1.0f, 500.0f, -INFINITY, NAN};
  const ModelResult m = Model(r, tensor, x, 1, 4);
  EXPECT_EQ(m.scales.at(0), 1.0f);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x38, 0x7E, 0xFE, 0x7F}));
  EXPECT_EQ(Oracle(r, tensor, x, 1, 4).codes, m.codes);

  const recipe::Layout head{recipe::Geometry::kGroup, 2, 0};
  const std::vector<float> kv = {1.0f, 2.0f, 4.0f, 8.0f, 1.0f, 1.0f, 3.0f, 0.25f};
  const std::vector<float> head_scales = {1.0f, 2.0f, 4.0f, 0.5f};
  std::vector<std::uint8_t> codes(8);
  std::vector<float> stored(4);
  recipe::QuantizedTensor q;
  q.codes = codes.data();
  q.scales = stored.data();
  ASSERT_EQ(recipe::QuantizeTensorWithGivenScales(r, head, kv.data(), 2, 4, head_scales.data(), 4, q),
            recipe::TensorStatus::kOk);
  EXPECT_EQ(codes, (std::vector<std::uint8_t>{0x38, 0x40, 0x40, 0x48, 0x28, 0x28, 0x4C, 0x30}));
  EXPECT_EQ(stored, head_scales);
  std::vector<ref::OracleScale> given(4);
  for (std::size_t i = 0; i < 4; ++i) given[i].decode_bits = given[i].factor_bits = F32Bits(head_scales[i]);
  EXPECT_EQ(ref::OracleQuantizeWithScales(r, head, kv, 2, 4, given).codes, codes);
  // Three scales for four heads: refused, nothing written.
  EXPECT_EQ(recipe::QuantizeTensorWithGivenScales(r, head, kv.data(), 2, 4, head_scales.data(), 3, q),
            recipe::TensorStatus::kBadGroup);
}

// vLLM's KV-scale calibration (calc_kv_scales) on CUDA: k_scale = amax *
// fp32(1 / 200). fp32(1 / 200) = 0x3BA3D70A; amax 5 gives 0x3CCCCCCC, one
// ulp below fp32(5 / 200) = 0x3CCCCCCD (what a CPU division would store).
// Then x / scale: 5 / 0x3CCCCCCC = 200.0000153 (in FP32), just above E4M3's
// tie between 192 and 208, so 208 (0x75) where the CPU scale's exact 200
// would go to 192 (0x74); -5 -> 0xF5; 2.5 -> 100.0000076, above the tie 100
// between 96 and 104 -> 104 (0x6D); 1 -> 40.0000038 -> 40 (0x62).
TEST(VllmFp8, KvCalibratedKeyScaleIsAmaxTimesTheReciprocal) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm-kv-calc-k");
  EXPECT_EQ(r.amax_divisor, 200);
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const std::vector<float> x = {5.0f, -5.0f, 2.5f, 1.0f};
  const ModelResult m = Model(r, tensor, x, 1, 4);
  EXPECT_EQ(F32Bits(m.scales.at(0)), 0x3CCCCCCCu);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x75, 0xF5, 0x6D, 0x62}));
  const ref::OracleQuantized o = Oracle(r, tensor, x, 1, 4);
  EXPECT_EQ(o.codes, m.codes);
  EXPECT_EQ(o.scales.at(0).decode_bits, 0x3CCCCCCCu);
}

// The value rule divides by 100: fp32(1 / 100) = 0x3C23D70A, amax 5 ->
// 0x3D4CCCCC; 5 / scale = 100.0000076 -> 104 (0x6D); 2.5 / scale =
// 50.0000038, above the tie 50 between 48 and 52 -> 52 (0x65).
TEST(VllmFp8, KvCalibratedValueScaleDividesBy100) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm-kv-calc-v");
  EXPECT_EQ(r.amax_divisor, 100);
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const ModelResult m = Model(r, tensor, {5.0f, 2.5f}, 1, 2);
  EXPECT_EQ(F32Bits(m.scales.at(0)), 0x3D4CCCCCu);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0x6D, 0x65}));
  EXPECT_EQ(Oracle(r, tensor, {5.0f, 2.5f}, 1, 2).codes, m.codes);
}

// No floor and torch.max's NaN: an all-zero tensor stores scale 0 and x / 0
// is NaN for every element (0x7F under __NV_SATFINITE); a NaN anywhere makes
// the scale NaN and every code 0x7F; an infinite amax makes the scale Inf,
// so 1 / Inf = 0 (0x00) and -Inf / Inf = NaN (0x7F).
TEST(VllmFp8, KvCalibratedZeroNanAndInfTensors) {
  const recipe::Recipe& r = CatalogRecipe("e4m3", "vllm-kv-calc-k");
  const recipe::Layout tensor{recipe::Geometry::kPerTensor, 0, 0};
  const struct {
    std::vector<float> x;
    std::vector<std::uint8_t> codes;
  } cases[] = {
      {{0.0f, -0.0f}, {0x7F, 0x7F}},
      {{1.0f, NAN}, {0x7F, 0x7F}},
      {{1.0f, -INFINITY}, {0x00, 0x7F}},
  };
  for (const auto& c : cases) {
    const ModelResult m = Model(r, tensor, c.x, 1, 2);
    EXPECT_EQ(m.codes, c.codes) << c.x[0] << ", " << c.x[1];
    EXPECT_EQ(Oracle(r, tensor, c.x, 1, 2).codes, m.codes);
  }
  EXPECT_EQ(Model(r, tensor, {0.0f, -0.0f}, 1, 2).scales.at(0), 0.0f);
  EXPECT_TRUE(std::isnan(Model(r, tensor, {1.0f, NAN}, 1, 2).scales.at(0)));
  EXPECT_EQ(Model(r, tensor, {1.0f, -INFINITY}, 1, 2).scales.at(0), INFINITY);
  // The scale comes from the data: a given one is refused.
  EXPECT_FALSE(recipe::TakesGivenScale(r));
}

// ---- INT8 amax.clamp(min=1e-10) / 127 --------------------------------------------

// Row 0 all zero: scale fp32(1e-10) / 127, codes 0. Row 1: amax 254 -> 2;
// 127 / 2 = 63.5 -> 64 (half-even); -254 / 2 = -127 (0x81); 1 / 2 -> 0.
TEST(Int8AmaxClamp, AmaxClampRows) {
  const recipe::Recipe& r = CatalogRecipe("int8", "amax-clamp");
  const recipe::Layout row{recipe::Geometry::kPerRow, 0, 0};
  const std::vector<float> x = {0.0f, 0.0f, 0.0f, 127.0f, -254.0f, 1.0f};
  const ModelResult m = Model(r, row, x, 2, 3);
  EXPECT_EQ(m.scales.at(0), 1e-10f / 127.0f);
  EXPECT_EQ(m.scales.at(1), 2.0f);
  EXPECT_EQ(m.codes, (std::vector<std::uint8_t>{0, 0, 0, 64, 0x81, 0}));
  EXPECT_EQ(Oracle(r, row, x, 2, 3).codes, m.codes);
  EXPECT_EQ(r.qmin, -128);
  EXPECT_EQ(r.qmax, 127);
}

// ---- the contract's list of recipes awaiting kernels ------------------------------

TEST(RecipesAwaitingKernels, EveryRecipeAwaitingKernelsIsACatalogRecipe) {
  for (const char* name : registry::kRecipesAwaitingKernels) {
    recipe::Target t;
    std::string error;
    ASSERT_TRUE(recipe::ParseTarget(name, &t, &error)) << name << ": " << error;
    EXPECT_EQ(recipe::RecipeName(*t.recipe), name);
  }
}

}  // namespace
}  // namespace lowbit::testing
