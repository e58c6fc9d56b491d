// Model == oracle for every MX recipe on every MX block format, and for every
// NVFP4 recipe, on RapidCheck blocks biased to what breaks recipes (docs/design.md
// "Tests"): amax just below a power of two, one outlier, ties after scaling,
// all-zero blocks, subnormal amax, NaN and Inf inside a block, and lengths
// that are not a multiple of the block size.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/mx_profiles.h"
#include "lowbit/formats/block/mx_recipe.h"
#include "lowbit/formats/block/nvfp4_recipe.h"
#include "lowbit/reference/block/mx_oracle.h"
#include "lowbit/reference/block/nvfp4_oracle.h"
#include "test_level.h"

namespace lowbit::block {
namespace {

namespace ref = lowbit::reference::block;

// Blocks checked per RapidCheck case (RapidCheck runs 100 cases).
int BlocksPerCase() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return 1;
    case testing::TestLevel::kCi: return 4;
    case testing::TestLevel::kFull: return 40;
  }
  return 4;
}

float FromBits(std::uint32_t b) { return F32FromBits(b); }

// Multiples of 2^(k-4): every E2M1/FP6 value and midpoint at scale 2^k, and
// many FP8 ones, so that ties after scaling are common.
rc::Gen<float> GridValue(int k) {
  return rc::gen::map(rc::gen::pair(rc::gen::inRange(-128, 129), rc::gen::arbitrary<bool>()),
                      [k](std::pair<int, bool> p) { return std::ldexp(static_cast<float>(p.first), k - 4); });
}

rc::Gen<float> NearPowerOfTwo(int k) {
  // 2^k (1 - 2^-24) (0x..FFFFFF), 2^k, 2^k (1 + 2^-23), and 6 * 2^k * 1.01.
  return rc::gen::element(std::ldexp(1.0f - std::ldexp(1.0f, -24), k), std::ldexp(1.0f, k),
                          std::ldexp(1.0f + std::ldexp(1.0f, -23), k), std::ldexp(6.06f, k),
                          std::ldexp(-448.0f * 1.01f, k), std::ldexp(7.5f, k));
}

rc::Gen<float> AnyFloatNear(int k) {
  return rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::uint32_t>(), rc::gen::inRange(-3, 4)),
                      [k](std::pair<std::uint32_t, int> p) {
                        int e = k + p.second + 127;
                        e = e < 1 ? 1 : (e > 254 ? 254 : e);
                        return FromBits((p.first & 0x807FFFFFu) | (static_cast<std::uint32_t>(e) << 23));
                      });
}

rc::Gen<float> Special() {
  return rc::gen::element(0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), FromBits(0x00000001u),
                          FromBits(0x80400000u), FromBits(0x7F7FFFFFu));
}

rc::Gen<float> Subnormal() {
  return rc::gen::map(rc::gen::arbitrary<std::uint32_t>(),
                      [](std::uint32_t b) { return FromBits(b & 0x807FFFFFu); });
}

// One block of n values around 2^k in one of the biased shapes.
std::vector<float> BiasedBlock(int n) {
  const int k = *rc::gen::inRange(-135, 130);
  const int shape = *rc::gen::inRange(0, 7);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) {
    switch (shape) {
      case 0: v = *GridValue(k); break;                                     // ties after scaling
      case 1: v = *AnyFloatNear(k); break;                                  // random near 2^k
      case 2: v = *rc::gen::oneOf(GridValue(k), NearPowerOfTwo(k)); break;  // amax near 2^k
      case 3: v = 0.0f; break;                                              // all zero
      case 4: v = *Subnormal(); break;                                      // subnormal amax
      case 5: v = *rc::gen::oneOf(AnyFloatNear(k), Special()); break;       // NaN / Inf inside
      default: v = *GridValue(k - 10); break;                               // small body ...
    }
  }
  if (shape == 6 || *rc::gen::inRange(0, 4) == 0) {
    // ... and one outlier (also mixed into the other shapes).
    x[static_cast<std::size_t>(*rc::gen::inRange(0, n))] = *rc::gen::oneOf(NearPowerOfTwo(k), AnyFloatNear(k));
  }
  return x;
}

bool SameF32(std::uint32_t a, std::uint32_t b) {
  const bool a_nan = (a & 0x7F800000u) == 0x7F800000u && (a & 0x7FFFFFu) != 0;
  const bool b_nan = (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu) != 0;
  return a_nan || b_nan ? a_nan == b_nan : a == b;
}

// torchao has no MXINT8 and TE's MX kernels take float elements only.
bool RecipeApplies(const BlockSpec& spec, const MxRecipe& recipe) {
  if (spec.element->IsFloat()) return true;
  return &recipe == &kOcpMx || &recipe == &kMsxMx || &recipe == &kMsxMxEven;
}

RC_GTEST_PROP(BlockModelVsOracle, MxBlocksMatchForEveryRecipeAndFormat, ()) {
  for (int rep = 0; rep < BlocksPerCase(); ++rep) {
    const BlockSpec& spec = **rc::gen::elementOf(std::vector<const BlockSpec*>(
        {&kMxfp8E4m3, &kMxfp8E5m2, &kMxfp6E2m3, &kMxfp6E3m2, &kMxfp4, &kMxint8}));
    const MxRecipe& recipe = **rc::gen::elementOf(
        std::vector<const MxRecipe*>(std::begin(kAllMxRecipes), std::end(kAllMxRecipes)));
    if (!RecipeApplies(spec, recipe)) continue;
    const int n = *rc::gen::element(spec.block_size, spec.block_size, *rc::gen::inRange(1, spec.block_size + 1));
    const std::vector<float> x = BiasedBlock(n);

    std::vector<std::uint8_t> codes(x.size());
    const std::uint8_t scale = QuantizeMxBlock(spec, recipe, x.data(), n, codes.data());
    const ref::OracleBlock want = ref::OracleQuantizeMxBlock(spec, recipe, x);
    RC_LOG() << spec.name << " " << recipe.name << "\n";
    RC_ASSERT(static_cast<int>(scale) == static_cast<int>(want.scale));
    RC_ASSERT(codes == want.codes);

    std::vector<float> back(x.size());
    DequantizeMxBlock(spec, scale, codes.data(), n, back.data());
    const std::vector<std::uint32_t> want_back = ref::OracleDequantizeMxBlock(spec, scale, codes);
    for (int i = 0; i < n; ++i) RC_ASSERT(SameF32(F32Bits(back[i]), want_back[i]));
  }
}

RC_GTEST_PROP(BlockModelVsOracle, Nvfp4TensorsMatchForEveryRecipe, ()) {
  for (int rep = 0; rep < BlocksPerCase(); ++rep) {
    const Nvfp4Recipe recipe =
        *rc::gen::element(Nvfp4Recipe::kTe, Nvfp4Recipe::kTorchao, Nvfp4Recipe::kModelOpt);
    // 1..3 blocks, the last one possibly short; each block biased on its own.
    const int count = *rc::gen::inRange(1, 49);
    std::vector<float> x;
    while (static_cast<int>(x.size()) < count) {
      const std::vector<float> b = BiasedBlock(16);
      x.insert(x.end(), b.begin(), b.end());
    }
    x.resize(static_cast<std::size_t>(count));

    std::vector<std::uint8_t> codes(x.size());
    std::vector<std::uint8_t> scales(static_cast<std::size_t>((count + 15) / 16));
    const Nvfp4TensorScale t = QuantizeNvfp4(recipe, x.data(), count, codes.data(), scales.data());
    const ref::OracleTensorScale want_t =
        ref::OracleNvfp4TensorScale(recipe, ref::OracleNvfp4TensorAmax(recipe, x));
    RC_ASSERT(SameF32(F32Bits(t.decode), want_t.decode_bits));
    if (recipe == Nvfp4Recipe::kTe) RC_ASSERT(F32Bits(t.encode) == want_t.encode_bits);
    std::vector<float> back(x.size());
    DequantizeNvfp4(recipe, t, codes.data(), scales.data(), count, back.data());
    for (int start = 0, b = 0; start < count; start += 16, ++b) {
      const std::vector<float> block(x.begin() + start, x.begin() + std::min(count, start + 16));
      const ref::OracleBlock want = ref::OracleQuantizeNvfp4Block(recipe, want_t, block);
      RC_ASSERT(static_cast<int>(scales[static_cast<std::size_t>(b)]) == static_cast<int>(want.scale));
      const std::vector<std::uint8_t> got(codes.begin() + start, codes.begin() + start + static_cast<long>(block.size()));
      RC_ASSERT(got == want.codes);
      const std::vector<std::uint32_t> want_back = ref::OracleDequantizeNvfp4Block(recipe, want_t, want.scale, want.codes);
      for (std::size_t i = 0; i < block.size(); ++i) {
        RC_ASSERT(SameF32(F32Bits(back[static_cast<std::size_t>(start) + i]), want_back[i]));
      }
    }
  }
}

// The worked examples of block_mx_test.cc hold for the oracle too, so the
// oracle is pinned to the spec text independently of the model.
TEST(BlockOracleTest, IssueExampleFloorVersusRceilOnMxfp4) {
  const ref::OracleBlock floor = ref::OracleQuantizeMxBlock(kMxfp4, kOcpMx, {6.06f, 1.0f});
  EXPECT_EQ(floor.scale, 127);
  EXPECT_EQ(floor.codes, (std::vector<std::uint8_t>{0x7, 0x2}));
  const ref::OracleBlock rceil = ref::OracleQuantizeMxBlock(kMxfp4, kTeMx, {6.06f, 1.0f});
  EXPECT_EQ(rceil.scale, 128);
  EXPECT_EQ(rceil.codes, (std::vector<std::uint8_t>{0x5, 0x1}));
  // docs/formats-reference.md §5.3: the RCEIL product rounds into the FP32 subnormals.
  EXPECT_EQ(ref::OracleQuantizeMxBlock(kMxfp8E4m3, kTeMx, {F32FromBits(0x04600001u)}).scale, 0x00);
}

// The nearest rule's tie (block_mx_test.cc NearestScaleRuleTest): MXFP4 amax
// 9 gives the product 1.5 exactly, which goes up to 2^1; 8.9 stays at 2^0.
TEST(BlockOracleTest, NearestRuleTieGoesUp) {
  EXPECT_EQ(ref::OracleQuantizeMxBlock(kMxfp4, kNearestMx, {9.0f}).scale, 128);
  EXPECT_EQ(ref::OracleQuantizeMxBlock(kMxfp4, kNearestMx, {8.9f}).scale, 127);
  EXPECT_EQ(ref::OracleQuantizeMxBlock(kMxfp8E4m3, kNearestMx, {600.0f}).scale, 127);
  EXPECT_EQ(ref::OracleQuantizeMxBlock(kMxfp8E4m3, kNearestMx, {700.0f}).scale, 128);
}

TEST(BlockOracleTest, Nvfp4TeReciprocalTie) {
  const ref::OracleTensorScale t = ref::OracleNvfp4TensorScale(Nvfp4Recipe::kTe, 2688.0f);
  const ref::OracleBlock te = ref::OracleQuantizeNvfp4Block(Nvfp4Recipe::kTe, t, {0.17578125f, F32FromBits(0x3D960000u)});
  EXPECT_EQ(te.scale, 0x0F);
  EXPECT_EQ(te.codes, (std::vector<std::uint8_t>{0x7, 0x5}));
  EXPECT_EQ(ref::OracleNvfp4TensorScale(Nvfp4Recipe::kTe, 5.0f).decode_bits, 0x3AF3CF3Eu);
  EXPECT_EQ(ref::OracleNvfp4TensorScale(Nvfp4Recipe::kModelOpt, 5.0f).decode_bits, 0x3AF3CF3Du);
}

}  // namespace
}  // namespace lowbit::block
