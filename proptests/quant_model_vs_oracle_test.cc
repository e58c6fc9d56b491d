// Model == oracle for every scaled quantization recipe (int_quant_recipe.h)
// over every layout, on RapidCheck matrices biased to where these recipes
// differ (docs/design.md "Tests"): all-zero rows, one outlier, ties after scaling
// (x = (k + 1/2) * scale with the scale a power of two for the recipe's
// divisor), amax just below a power of two, NaN and Inf, subnormals, odd
// shapes and shapes that do not tile (the error must agree too).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "generators_at_level.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/formats/block/int_quant_recipe.h"
#include "lowbit/reference/block/int_quant_oracle.h"

namespace lowbit::block {
namespace {

namespace ref = lowbit::reference::block;
using testing::CheckAtLevel;
using testing::LevelCounts;

bool SameF32(std::uint32_t a, std::uint32_t b) {
  const bool a_nan = F32IsNan(a);
  const bool b_nan = F32IsNan(b);
  return a_nan || b_nan ? a_nan == b_nan : a == b;
}

// The amax that makes each recipe's scale 2^e exactly, so that multiples of
// 2^(e-1) are ties after scaling: 127.5 (AO int8), 7.5 (AO int4 and GPTQ
// sym: 2 * 7.5 / 15), 127 / 7 (common), 448 / 57344 (TE), 255 / 15 (asym
// range over qmax - qmin).
rc::Gen<float> TieAmax(int e) {
  return rc::gen::map(rc::gen::element(127.5f, 7.5f, 127.0f, 7.0f, 448.0f, 57344.0f, 255.0f, 15.0f),
                      [e](float m) { return std::ldexp(m, e); });
}

rc::Gen<float> HalfGrid(int e) {  // (k + 1/2) 2^e and k 2^e
  return rc::gen::map(rc::gen::inRange(-260, 261), [e](int k) { return std::ldexp(static_cast<float>(k), e - 1); });
}

rc::Gen<float> NearPowerOfTwo(int e) {
  return rc::gen::element(std::ldexp(1.0f - std::ldexp(1.0f, -24), e), std::ldexp(1.0f, e),
                          std::ldexp(1.0f + std::ldexp(1.0f, -23), e), -std::ldexp(1.0f - std::ldexp(1.0f, -24), e));
}

rc::Gen<float> AnyNear(int e) {
  return rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::uint32_t>(), rc::gen::inRange(-8, 2)),
                      [e](std::pair<std::uint32_t, int> p) {
                        int field = e + p.second + 127;
                        field = field < 1 ? 1 : (field > 254 ? 254 : field);
                        return F32FromBits((p.first & 0x807FFFFFu) | (static_cast<std::uint32_t>(field) << 23));
                      });
}

rc::Gen<float> Special() {
  const float inf = std::numeric_limits<float>::infinity();
  return rc::gen::element(0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                          inf, -inf, F32FromBits(1), F32FromBits(0x807FFFFFu), F32FromBits(0x7F7FFFFFu),
                          F32FromBits(0xFF7FFFFFu));
}

// One group's values, in one of the biased shapes.
void FillGroup(std::vector<float>* x, const std::vector<long>& where) {
  const int e = *rc::gen::weightedOneOf<int>({{6, rc::gen::inRange(-10, 12)}, {1, rc::gen::inRange(-140, 128)}});
  const int shape = *rc::gen::inRange(0, 7);
  for (long i : where) {
    float& v = (*x)[static_cast<std::size_t>(i)];
    switch (shape) {
      case 0: v = 0.0f; break;                                              // all-zero row / group
      case 1: v = *HalfGrid(e); break;                                      // ties after scaling
      case 2: v = *AnyNear(e); break;                                       // random
      case 3: v = *rc::gen::oneOf(HalfGrid(e), NearPowerOfTwo(e)); break;   // amax near 2^e
      case 4: v = *rc::gen::oneOf(AnyNear(e), Special()); break;            // NaN / Inf inside
      case 5: v = F32FromBits(*rc::gen::arbitrary<std::uint32_t>() & 0x807FFFFFu); break;  // subnormal
      default: v = *HalfGrid(e - 8); break;                                 // small body ...
    }
  }
  if (shape == 1 || shape == 6 || *rc::gen::inRange(0, 3) == 0) {
    // ... with one outlier or the tie-making amax.
    const long at = where[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, where.size()))];
    (*x)[static_cast<std::size_t>(at)] = *rc::gen::oneOf(TieAmax(e), rc::gen::map(TieAmax(e), [](float a) { return -a; }),
                                                         NearPowerOfTwo(e + 7));
  }
}

struct Case {
  QuantLayout layout;
  long rows = 1;
  long cols = 1;
};

rc::Gen<Case> Shape() {
  return rc::gen::exec([] {
    Case c;
    const int kind = *rc::gen::inRange(0, 9);
    if (kind <= 1) {
      c.layout.granularity = Granularity::kPerTensor;
      c.rows = *rc::gen::inRange(1, 5);
      c.cols = *rc::gen::inRange(1, 24);
    } else if (kind <= 3) {
      c.layout.granularity = Granularity::kPerRow;
      c.rows = *rc::gen::inRange(1, 6);
      c.cols = *rc::gen::inRange(1, 24);
    } else if (kind <= 6) {
      c.layout.granularity = Granularity::kPerGroup;
      c.layout.group = *rc::gen::element(2, 4, 8, 32, 64, 128);
      c.rows = *rc::gen::inRange(1, c.layout.group >= 64 ? 2 : 4);
      c.cols = c.layout.group * *rc::gen::inRange(1, 3);
    } else {
      c.layout.granularity = Granularity::kBlock2d;
      c.layout.group = *rc::gen::element(2, 4, 8);
      c.layout.block_rows = *rc::gen::element(1, 2, 3);
      c.rows = c.layout.block_rows * *rc::gen::inRange(1, 3);
      c.cols = c.layout.group * *rc::gen::inRange(1, 3);
    }
    // Sometimes a shape that does not tile: both sides must refuse it alike.
    if (*rc::gen::inRange(0, 12) == 0) {
      c.cols += *rc::gen::inRange(-1, 2);
      c.rows += *rc::gen::inRange(-1, 2);
    }
    return c;
  });
}

std::vector<float> Matrix(const Case& c) {
  std::vector<float> x(static_cast<std::size_t>(c.rows > 0 && c.cols > 0 ? c.rows * c.cols : 0), 0.0f);
  if (x.empty()) return x;
  GroupGrid grid;
  if (MakeGroupGrid(c.layout, c.rows, c.cols, &grid) != QuantStatus::kOk) {
    std::vector<long> all;
    for (long i = 0; i < c.rows * c.cols; ++i) all.push_back(i);
    FillGroup(&x, all);
    return x;
  }
  std::vector<std::vector<long>> members(static_cast<std::size_t>(grid.Count()));
  for (long i = 0; i < c.rows; ++i) {
    for (long j = 0; j < c.cols; ++j) members[static_cast<std::size_t>(GroupOf(grid, i, j))].push_back(i * c.cols + j);
  }
  for (const auto& m : members) FillGroup(&x, m);
  return x;
}

const IntQuantRecipe& AnyRecipe() {
  return **rc::gen::elementOf(std::vector<const IntQuantRecipe*>(std::begin(kAllIntQuantRecipes),
                                                                 std::end(kAllIntQuantRecipes)));
}

TEST(QuantModelVsOracle, DynamicQuantizeAndDequantizeMatch) {
  CheckAtLevel(LevelCounts{30, 300, 20000}, [] {
    const IntQuantRecipe& r = AnyRecipe();
    const Case c = *Shape();
    const std::vector<float> x = Matrix(c);
    RC_LOG() << r.element->name << ":" << r.name << " rows " << c.rows << " cols " << c.cols << " group "
             << c.layout.group << " x " << c.layout.block_rows << "\n";

    const ref::OracleQuantResult want = ref::OracleQuantizeMatrix(r, c.layout, x, c.rows, c.cols);
    GroupGrid grid;
    const QuantStatus shape_status = MakeGroupGrid(c.layout, c.rows, c.cols, &grid);
    RC_ASSERT(shape_status == want.status);
    if (shape_status != QuantStatus::kOk) {
      std::vector<std::uint8_t> codes(x.size() + 1);
      std::vector<QuantParams> params(1);
      RC_ASSERT(QuantizeMatrix(r, c.layout, x.data(), c.rows, c.cols, codes.data(), params.data()) == want.status);
      return;
    }
    std::vector<std::uint8_t> codes(x.size());
    std::vector<QuantParams> params(static_cast<std::size_t>(grid.Count()));
    RC_ASSERT(QuantizeMatrix(r, c.layout, x.data(), c.rows, c.cols, codes.data(), params.data()) == QuantStatus::kOk);
    RC_ASSERT(params.size() == want.params.size());
    for (std::size_t g = 0; g < params.size(); ++g) {
      RC_ASSERT(SameF32(F32Bits(params[g].encode), want.params[g].encode_bits));
      RC_ASSERT(SameF32(F32Bits(params[g].decode), want.params[g].decode_bits));
      RC_ASSERT(params[g].zero_point == want.params[g].zero_point);
    }
    RC_ASSERT(codes == want.codes);

    std::vector<float> back(x.size());
    RC_ASSERT(DequantizeMatrix(r, c.layout, codes.data(), c.rows, c.cols, params.data(), back.data()) ==
              QuantStatus::kOk);
    const std::vector<std::uint32_t> want_back =
        ref::OracleDequantizeMatrix(r, c.layout, want.codes, c.rows, c.cols, want.params);
    for (std::size_t i = 0; i < x.size(); ++i) RC_ASSERT(SameF32(F32Bits(back[i]), want_back[i]));
  });
}

TEST(QuantModelVsOracle, StaticRangeParamsAndCodesMatch) {
  CheckAtLevel(LevelCounts{30, 300, 20000}, [] {
    const IntQuantRecipe& r = AnyRecipe();
    const int e = *rc::gen::inRange(-20, 20);
    float lo = *rc::gen::oneOf(HalfGrid(e), AnyNear(e), Special());
    float hi = *rc::gen::oneOf(TieAmax(e), AnyNear(e), Special());
    if (*rc::gen::arbitrary<bool>()) lo = -F32Abs(lo);
    const QuantParams p = QuantParamsFromStats(r, StatsOfRange(lo, hi));
    const ref::OracleQuantParams want = ref::OracleQuantParamsFromRange(r, lo, hi);
    RC_ASSERT(SameF32(F32Bits(p.encode), want.encode_bits));
    RC_ASSERT(SameF32(F32Bits(p.decode), want.decode_bits));
    RC_ASSERT(p.zero_point == want.zero_point);
    // Values beyond the calibrated range: clamped (integers) or saturated (FP8).
    std::vector<float> x(8);
    std::vector<long> all{0, 1, 2, 3, 4, 5, 6, 7};
    FillGroup(&x, all);
    x[0] = hi * 4.0f;
    std::vector<std::uint8_t> codes(x.size());
    RC_ASSERT(QuantizeWithParams(r, QuantLayout{}, x.data(), 1, 8, &p, codes.data()) == QuantStatus::kOk);
    const ref::OracleQuantResult got = ref::OracleQuantizeWithParams(r, QuantLayout{}, x, 1, 8, {want});
    RC_ASSERT(codes == got.codes);
  });
}

}  // namespace
}  // namespace lowbit::block
