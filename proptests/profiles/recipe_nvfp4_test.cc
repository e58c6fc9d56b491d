// NVFP4 recipes in the model: worked examples from the TE / torchao /
// ModelOpt formulas (docs/formats-reference.md §6, §9 row 11), one named test per
// profile difference. Expected values are derived by hand from the formulas
// (FP32 roundings of the stated operations), never by running the model. The
// recipes are the catalog's nvfp4:te, nvfp4:ao and nvfp4:modelopt; a block
// goes through the model's steps (recipe/steps.h), a tensor through
// recipe/tensor.h.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::recipe {
namespace {

const Recipe& Nvfp4(std::string_view profile) {
  const Recipe* r = FindRecipe("nvfp4", profile);
  if (r == nullptr) {
    std::fprintf(stderr, "no recipe nvfp4:%.*s in the catalog\n", static_cast<int>(profile.size()), profile.data());
    std::abort();
  }
  return *r;
}

const Recipe& kTe = Nvfp4("te");
const Recipe& kTorchao = Nvfp4("ao");
const Recipe& kModelOpt = Nvfp4("modelopt");
const Recipe* const kAll[] = {&kTe, &kTorchao, &kModelOpt};

struct Result {
  std::uint8_t scale;
  std::vector<std::uint8_t> codes;
};

// One block (x.size() <= 16) under the tensor scale of `tensor_amax`.
Result QuantizeWithTensorAmax(const Recipe& r, float tensor_amax, std::vector<float> x) {
  const TensorScale t = ChooseTensorScale(r, tensor_amax);
  const BlockScale s = ChooseScale(r, StatsOf(r, x.data(), static_cast<long>(x.size())), t);
  Result out{s.code, {}};
  for (float v : x) out.codes.push_back(EncodeElement(r, s, v));
  return out;
}

// One element from a stored UE4M3 scale byte and tensor scale.
float DequantizeElement(const Recipe& r, const TensorScale& t, std::uint8_t scale_code, std::uint8_t code) {
  return DecodeElement(r, StoredScale(r, scale_code, 0.0f, 0), t, code);
}

TEST(Nvfp4TensorScaleTest, Amax2688GivesUnitScalesInEveryRecipe) {
  for (const Recipe* r : kAll) EXPECT_EQ(ChooseTensorScale(*r, 2688.0f).decode, 1.0f) << r->profile;
  EXPECT_EQ(ChooseTensorScale(kTe, 2688.0f).encode, 1.0f);
}

TEST(Row11Nvfp4ArithmeticTest, TeDecodeScaleIsOneOverEncodeNotAmaxOver2688) {
  // amax 5: TE S_enc = fp32(2688/5) = 0x44066666, S_dec = fp32(1/S_enc) =
  // 0x3AF3CF3E; torchao / ModelOpt amax/2688 = 0x3AF3CF3D (docs/formats-reference.md §6.2: the
  // two differ for 39% of amax values).
  const TensorScale te = ChooseTensorScale(kTe, 5.0f);
  EXPECT_EQ(F32Bits(te.encode), 0x44066666u);
  EXPECT_EQ(F32Bits(te.decode), 0x3AF3CF3Eu);
  EXPECT_EQ(F32Bits(ChooseTensorScale(kTorchao, 5.0f).decode), 0x3AF3CF3Du);
  EXPECT_EQ(F32Bits(ChooseTensorScale(kModelOpt, 5.0f).decode), 0x3AF3CF3Du);
}

TEST(Row11Nvfp4ArithmeticTest, TeGlobalScaleGuards) {
  // "If global amax is 0 or infinity, return 1" [TE]; a tiny amax gives
  // 2688/amax = Inf -> FLT_MAX, and S_dec = fp32(1/FLT_MAX) = 0x00200000.
  EXPECT_EQ(ChooseTensorScale(kTe, 0.0f).encode, 1.0f);
  EXPECT_EQ(ChooseTensorScale(kTe, 0.0f).decode, 1.0f);
  EXPECT_EQ(ChooseTensorScale(kTe, std::numeric_limits<float>::infinity()).encode, 1.0f);
  const TensorScale tiny = ChooseTensorScale(kTe, F32FromBits(1));
  EXPECT_EQ(F32Bits(tiny.encode), 0x7F7FFFFFu);
  EXPECT_EQ(F32Bits(tiny.decode), 0x00200000u);
}

TEST(Nvfp4WorkedExampleTest, UnitScaleBlockEncodesTheE2m1TieTable) {
  // Tensor amax 2688 -> tensor scale 1; block amax 6 -> block scale
  // 6 * fp32(1/6) = 1.0000000298 -> FP32 1.0 -> E4M3 0x38. Elements
  // (docs/formats-reference.md §4.5): 6 -> 0x7, -3 -> 0xD, 0.75 -> 0x2, 0.25 -> 0x0, 5 -> 0x6.
  for (const Recipe* r : kAll) {
    const Result q = QuantizeWithTensorAmax(*r, 2688.0f, {6.0f, -3.0f, 0.75f, 0.25f, 5.0f, 1.75f});
    EXPECT_EQ(q.scale, 0x38) << r->profile;
    EXPECT_EQ(q.codes, (std::vector<std::uint8_t>{0x7, 0xD, 0x2, 0x0, 0x6, 0x4})) << r->profile;
  }
}

TEST(Nvfp4WorkedExampleTest, NegativeZeroIsPlusZeroOnlyInModelOpt) {
  // docs/formats-reference.md §4.5: -0.0 -> 0x8 in the hardware cvt (TE kernels) and torchao's
  // bit arithmetic; ModelOpt's sign is (x < 0), so -0.0 -> 0x0 while a
  // negative value that rounds to zero keeps 0x8.
  EXPECT_EQ(QuantizeWithTensorAmax(kTe, 2688.0f, {6.0f, -0.0f}).codes[1], 0x8);
  EXPECT_EQ(QuantizeWithTensorAmax(kTorchao, 2688.0f, {6.0f, -0.0f}).codes[1], 0x8);
  EXPECT_EQ(QuantizeWithTensorAmax(kModelOpt, 2688.0f, {6.0f, -0.0f}).codes[1], 0x0);
  EXPECT_EQ(QuantizeWithTensorAmax(kModelOpt, 2688.0f, {6.0f, -0.1f}).codes[1], 0x8);
}

TEST(Row11Nvfp4ArithmeticTest, ZeroBlockScaleFloors) {
  // docs/formats-reference.md §6.2: TE lets the block scale be 0x00; torchao clamps to 2^-6
  // (E4M3 0x08); ModelOpt replaces 0 by 1.0 (0x38).
  const std::vector<float> zeros(16, 0.0f);
  EXPECT_EQ(QuantizeWithTensorAmax(kTe, 2688.0f, zeros).scale, 0x00);
  EXPECT_EQ(QuantizeWithTensorAmax(kTorchao, 2688.0f, zeros).scale, 0x08);
  EXPECT_EQ(QuantizeWithTensorAmax(kModelOpt, 2688.0f, zeros).scale, 0x38);
  for (const Recipe* r : kAll) {
    for (std::uint8_t c : QuantizeWithTensorAmax(*r, 2688.0f, zeros).codes) EXPECT_EQ(c, 0) << r->profile;
  }
}

TEST(Row11Nvfp4ArithmeticTest, TinyBlockTeSaturatesTorchaoAndModelOptFloor) {
  // Block amax 2^-12 with tensor scale 1: 2^-12/6 < 2^-10 (half the E4M3
  // min subnormal). TE: scale 0x00, enc_b = fminf(1/0, FLT_MAX) = FLT_MAX,
  // so 2^-12 -> +6 (0x7) and -2^-12 -> -6 (0xF) (docs/formats-reference.md §6.1 corner); they
  // decode to 0. torchao: floor 2^-6 (0x08), 2^-12/2^-6 = 2^-6 -> 0.
  // ModelOpt: floor 2^-9 (0x01), 2^-12/2^-9 = 0.125 -> 0, and -0.125 -> 0x8.
  const float t = std::ldexp(1.0f, -12);
  const Result te = QuantizeWithTensorAmax(kTe, 2688.0f, {t, -t});
  EXPECT_EQ(te.scale, 0x00);
  EXPECT_EQ(te.codes, (std::vector<std::uint8_t>{0x7, 0xF}));
  const TensorScale unit = ChooseTensorScale(kTe, 2688.0f);
  EXPECT_EQ(DequantizeElement(kTe, unit, te.scale, te.codes[0]), 0.0f);
  const Result ao = QuantizeWithTensorAmax(kTorchao, 2688.0f, {t, -t});
  EXPECT_EQ(ao.scale, 0x08);
  EXPECT_EQ(ao.codes, (std::vector<std::uint8_t>{0x0, 0x8}));
  const Result mo = QuantizeWithTensorAmax(kModelOpt, 2688.0f, {t, -t});
  EXPECT_EQ(mo.scale, 0x01);
  EXPECT_EQ(mo.codes, (std::vector<std::uint8_t>{0x0, 0x8}));
}

TEST(Row11Nvfp4ArithmeticTest, ZeroTensorTeUsesUnitScaleOthersGetNanScales) {
  // docs/formats-reference.md §6.2 "amax=0 tensor": TE kernel S_enc = 1; torchao and ModelOpt
  // divide 0 by 0 -> NaN block scale (E4M3 NaN 0x7F).
  const std::vector<float> zeros(16, 0.0f);
  EXPECT_EQ(QuantizeWithTensorAmax(kTe, 0.0f, zeros).scale, 0x00);
  EXPECT_EQ(QuantizeWithTensorAmax(kTorchao, 0.0f, zeros).scale, 0x7F);
  EXPECT_EQ(QuantizeWithTensorAmax(kModelOpt, 0.0f, zeros).scale, 0x7F);
}

TEST(Row11Nvfp4ArithmeticTest, TeReciprocalMultiplyVersusModelOptDivisionOnATie) {
  // Block scale s = 1.875 * 2^-6 = 0.029296875 (E4M3 0x0F; block amax 6s).
  // x = 2.5 s = 0x3D960000: ModelOpt x / s = 2.5 exactly, a tie -> 2 (0x4);
  // TE x * fp32(1/s) = 0x40200001 (just above 2.5) -> 3 (0x5). torchao
  // divides like ModelOpt. (docs/formats-reference.md §6.2: 8.1e-4 of BF16 elements differ.)
  const std::vector<float> x = {0.17578125f, F32FromBits(0x3D960000u)};
  const Result te = QuantizeWithTensorAmax(kTe, 2688.0f, x);
  const Result mo = QuantizeWithTensorAmax(kModelOpt, 2688.0f, x);
  const Result ao = QuantizeWithTensorAmax(kTorchao, 2688.0f, x);
  for (const Result* r : {&te, &mo, &ao}) {
    EXPECT_EQ(r->scale, 0x0F);
    EXPECT_EQ(r->codes[0], 0x7);
  }
  EXPECT_EQ(te.codes[1], 0x5);
  EXPECT_EQ(mo.codes[1], 0x4);
  EXPECT_EQ(ao.codes[1], 0x4);
}

TEST(Row10NanInBlockTest, Nvfp4TeIgnoresNanTorchaoPropagates) {
  // TE: amax over {NaN, 6} is 6 (fmaxf), scale 0x38, NaN -> +6 (0x7).
  // torchao / ModelOpt: torch.amax is NaN -> NaN block scale 0x7F.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Result te = QuantizeWithTensorAmax(kTe, 2688.0f, {nan, 6.0f});
  EXPECT_EQ(te.scale, 0x38);
  EXPECT_EQ(te.codes, (std::vector<std::uint8_t>{0x7, 0x7}));
  EXPECT_EQ(QuantizeWithTensorAmax(kTorchao, 2688.0f, {nan, 6.0f}).scale, 0x7F);
  EXPECT_EQ(QuantizeWithTensorAmax(kModelOpt, 2688.0f, {nan, 6.0f}).scale, 0x7F);
}

TEST(Nvfp4TensorTest, WholeTensorWithAShortLastBlock) {
  // 17 elements, tensor amax 2688 (tensor scale 1). Block 0: amax 2688 ->
  // block scale 448 (0x7E), 2688 -> 6 (0x7), 448 -> 1 (0x2). Block 1 = {6}:
  // scale 1 (0x38), 6 -> 0x7. Dequantized: 6*448 = 2688, 1*448 = 448, 6.
  std::vector<float> x(17, 448.0f);
  x[0] = 2688.0f;
  x[16] = 6.0f;
  for (const Recipe* r : kAll) {
    GroupGrid grid;
    ASSERT_EQ(MakeGroupGrid(*r, r->layout, 1, 17, &grid), TensorStatus::kOk);
    const BufferSizes sizes = SizesOf(*r, grid);
    EXPECT_EQ(sizes.scale_codes, 2);
    EXPECT_EQ(sizes.tensor_scales, 1);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes));
    std::uint8_t scales[2];
    TensorScale t;
    QuantizedTensor q;
    q.codes = codes.data();
    q.scale_codes = scales;
    q.tensor_scale = &t;
    ASSERT_EQ(QuantizeTensor(*r, r->layout, x.data(), 1, 17, q), TensorStatus::kOk);
    EXPECT_EQ(t.decode, 1.0f) << r->profile;
    EXPECT_EQ(scales[0], 0x7E) << r->profile;
    EXPECT_EQ(scales[1], 0x38) << r->profile;
    EXPECT_EQ(LoadCode(r->packing, codes.data(), 0), 0x7) << r->profile;
    EXPECT_EQ(LoadCode(r->packing, codes.data(), 1), 0x2) << r->profile;
    EXPECT_EQ(LoadCode(r->packing, codes.data(), 16), 0x7) << r->profile;
    std::vector<float> back(17);
    ASSERT_EQ(DequantizeTensor(*r, r->layout, AsConst(q), 1, 17, back.data()), TensorStatus::kOk);
    EXPECT_EQ(back[0], 2688.0f) << r->profile;
    EXPECT_EQ(back[1], 448.0f) << r->profile;
    EXPECT_EQ(back[16], 6.0f) << r->profile;
  }
}

// Dequantizing a NaN block scale (UE4M3 0x7F decodes to 0x7FF00000: the
// payload 111 widened, quiet) against a NaN tensor scale 0x7FC00001: the first
// NaN operand wins, so the block scale's NaN comes out in every recipe's
// operation order (F32MulAsX86), not whichever the compiler commutes.
TEST(Nvfp4DequantizeNanTest, BlockScaleNanWinsOverTensorScaleNan) {
  TensorScale t;
  t.decode = F32FromBits(0x7FC00001u);
  for (const Recipe* r : kAll) {
    EXPECT_EQ(F32Bits(DequantizeElement(*r, t, 0x7F, 0x2)), 0x7FF00000u) << r->profile;
  }
  // A finite block scale lets the tensor scale's NaN through, quieted.
  t.decode = F32FromBits(0x7F800001u);
  EXPECT_EQ(F32Bits(DequantizeElement(kTorchao, t, 0x38, 0x2)), 0x7FC00001u);
}

// A tensor holding Inf gives torchao's and ModelOpt's rules an infinite
// tensor scale (per_tensor_scale = amax / (6 * 448)); a zero element times it
// is an invalid product, pinned to x86's default NaN 0xFFC00000
// (F32MulAsX86), so that a GPU, whose FP32 multiply returns 0x7FFFFFFF,
// dequantizes to the same bits (cuda/tests/model_recipe_test.cc runs the
// kernels on such inputs).
TEST(Nvfp4DequantizeNanTest, ZeroTimesAnInfiniteTensorScaleIsX86sDefaultNan) {
  for (const Recipe* r : {&kTorchao, &kModelOpt}) {
    const TensorScale t = ChooseTensorScale(*r, std::numeric_limits<float>::infinity());
    ASSERT_TRUE(std::isinf(t.decode)) << r->profile;
    EXPECT_EQ(F32Bits(DequantizeElement(*r, t, 0x38, 0x0)), 0xFFC00000u) << r->profile;  // +0
    EXPECT_EQ(F32Bits(DequantizeElement(*r, t, 0x38, 0x8)), 0xFFC00000u) << r->profile;  // -0
    EXPECT_EQ(F32Bits(DequantizeElement(*r, t, 0x00, 0x2)), 0xFFC00000u) << r->profile;  // zero block scale
  }
}

}  // namespace
}  // namespace lowbit::recipe
