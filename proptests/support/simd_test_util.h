// What the SIMD kernel tests (proptests/backends/simd_*_test.cc) share: the compiled
// Highway targets as a gtest parameter, input generators biased to where bugs
// live (docs/design.md "Tests"), buffers with guard elements and unaligned
// starts, and bit helpers.
//
// Targets as a parameter follow Highway's own tests (hwy/tests/
// test_util-inl.h TestWithParamTarget): every compiled target is one
// instance of each test, named after the target ("simd/SimdMxQuantize.
// EveryRecipeMatchesModel/AVX2"), and a target the CPU lacks is SKIPPED in
// SetUp, never counted as passed. A test calls the kernels with target(), so
// the kernel runs that target's code (simd.h; the simd_dispatch test checks
// that it does).
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/simd/simd.h"

namespace lowbit::testing {

// ---- targets as a test parameter ------------------------------------------

class SimdTargetTest : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override {
    if (!simd::TargetAvailable(target())) {
      GTEST_SKIP() << "this CPU does not run " << target_name();
    }
  }
  std::int64_t target() const { return GetParam(); }
  const char* target_name() const { return simd::TargetName(GetParam()); }
};

// The same with a second parameter: (target, case) pairs, for suites that
// are also parameterised over something else (INSTANTIATE_TEST_SUITE_P with
// ::testing::Combine(::testing::ValuesIn(simd::CompiledTargets()), ...)).
template <typename Case>
class SimdTargetCaseTest : public ::testing::TestWithParam<std::tuple<std::int64_t, Case>> {
 protected:
  void SetUp() override {
    if (!simd::TargetAvailable(target())) {
      GTEST_SKIP() << "this CPU does not run " << simd::TargetName(target());
    }
  }
  std::int64_t target() const { return std::get<0>(this->GetParam()); }
  const Case& test_case() const { return std::get<1>(this->GetParam()); }
};

inline std::string SimdTargetParamName(const ::testing::TestParamInfo<std::int64_t>& info) {
  return simd::TargetName(info.param);
}

// Declares the test suite `Suite` (use it with TEST_P) and instantiates it
// once per compiled target. The instantiation prefix is "simd", so
// `ctest -R simd` selects every SIMD test.
#define LOWBIT_SIMD_TARGET_SUITE(Suite)                                               \
  class Suite : public ::lowbit::testing::SimdTargetTest {};                          \
  INSTANTIATE_TEST_SUITE_P(simd, Suite,                                               \
                           ::testing::ValuesIn(::lowbit::simd::CompiledTargets()), \
                           ::lowbit::testing::SimdTargetParamName)

// ---- bits -------------------------------------------------------------------

inline std::string Hex(std::uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

// FP32 bits of a value, for messages and bit-exact comparisons.
inline std::string F32Hex(float v) { return Hex(F32Bits(v)); }

// Largest finite value of a float format, from the model (never retyped).
inline float MaxFinite(const FormatSpec& f) { return DecodeToF32(f, f.MaxFiniteCode()); }

// The first value past a float format's max: the overflow tie, max + half a
// quantum of its top binade (E4M3 464, E2M1 7).
inline float OverflowTie(const FormatSpec& f) {
  const float max = MaxFinite(f);
  return max + std::ldexp(0.5f, std::ilogb(max) - f.mantissa_bits);
}

// ---- inputs -----------------------------------------------------------------

// Element formats of the block recipes (MX, NVFP4): their maxima and overflow
// ties are boundary inputs.
inline const FormatSpec* const kBlockElementFormats[] = {&kE4m3, &kE5m2, &kE2m3, &kE3m2, &kE2m1};

// One FP32 value of a biased kind: any bits; 2^k (1 - 2^-24) (an amax just
// below a power of two, where a float log2 rounds up); ties and grid points
// of small formats; zeros, infinities, NaNs of both signs, the smallest
// subnormals, the FP32 max; an element format's max or the first value past
// it; ordinary values.
inline rc::Gen<float> BiasedFloat() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<std::uint32_t>(),
                   [](std::uint32_t b) { return F32FromBits(b); }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-30, 30), rc::gen::arbitrary<bool>()),
                   [](std::pair<int, bool> p) {
                     const float v = std::ldexp(1.0f - 0x1p-24f, p.first);
                     return p.second ? -v : v;
                   }),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(-12, 12), rc::gen::inRange(0, 16)),
                   [](std::pair<int, int> p) {
                     return std::ldexp(static_cast<float>(2 * p.second + 1), p.first) / 4.0f;
                   }),
      rc::gen::element(0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-127f, 0x1p-149f,
                       F32FromBits(0x7F7FFFFFu)),
      rc::gen::map(rc::gen::pair(rc::gen::inRange<std::size_t>(0, std::size(kBlockElementFormats)),
                                 rc::gen::inRange(0, 4)),
                   [](std::pair<std::size_t, int> p) {
                     const FormatSpec& f = *kBlockElementFormats[p.first];
                     const float v = p.second & 1 ? OverflowTie(f) : MaxFinite(f);
                     return p.second & 2 ? -v : v;
                   }),
      rc::gen::map(rc::gen::inRange(-1000, 1000), [](int i) { return i / 64.0f; }));
}

// `count` biased values; sometimes the first 32 are all zero (a zero block).
inline std::vector<float> BiasedBlocks(std::size_t count) {
  std::vector<float> x(count);
  const bool zero_block = *rc::gen::inRange(0, 3) == 0;
  for (float& v : x) v = *BiasedFloat();
  if (zero_block) {
    for (std::size_t i = 0; i < count && i < 32; ++i) x[i] = 0.0f;
  }
  return x;
}

// `n` codes under `mask`; when `stray_bits`, sometimes any byte (kernels
// must mask what the model masks).
inline std::vector<std::uint8_t> Codes(std::size_t n, std::uint8_t mask, bool stray_bits = false) {
  const bool any_byte = stray_bits && *rc::gen::inRange(0, 4) == 0;
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) {
    const std::uint8_t byte = *rc::gen::arbitrary<std::uint8_t>();
    c = any_byte ? byte : static_cast<std::uint8_t>(byte & mask);
  }
  return v;
}

// Scale bytes: any byte, often an E8M0 edge (2^-127, 2^-126, 2^0, 2^127, NaN).
inline std::vector<std::uint8_t> ScaleBytes(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) {
    c = *rc::gen::oneOf(rc::gen::arbitrary<std::uint8_t>(),
                        rc::gen::element<std::uint8_t>(0, 1, 127, 254, 255));
  }
  return v;
}

// ---- buffers ----------------------------------------------------------------

// `values` placed `offset` elements past the start of a fresh buffer, so that
// a kernel reads them from an unaligned address; the copy starts at
// data() + offset.
template <typename T>
std::vector<T> Shifted(const std::vector<T>& values, std::size_t offset) {
  std::vector<T> v(values.size() + offset);
  if (!values.empty()) std::memcpy(v.data() + offset, values.data(), values.size() * sizeof(T));
  return v;
}

// Fill values of outputs: a kernel must overwrite exactly its elements.
inline constexpr std::uint8_t kGuardByte = 0xCD;
inline constexpr std::uint32_t kGuardWord = 0xCDCDCDCDu;
inline constexpr float kGuardFloat = -1.0f;

// An output of `n` elements followed by one guard element, all `fill`; a
// kernel must leave the guard alone (GuardIntact).
template <typename T>
std::vector<T> Guarded(std::size_t n, T fill) {
  return std::vector<T>(n + 1, fill);
}
template <typename T>
bool GuardIntact(const std::vector<T>& v, T fill) {
  return std::memcmp(&v.back(), &fill, sizeof(T)) == 0;
}

// ---- one quantized tensor (recipe/tensor.h) ---------------------------------

// The buffers of one quantized tensor (recipe::SizesOf), each followed by a
// guard element; a kernel must leave every guard alone (GuardsIntact).
struct GuardedTensor {
  std::vector<std::uint8_t> codes, scale_codes;
  std::vector<float> scales;
  std::vector<std::int32_t> zero_points;
  std::vector<recipe::TensorScale> tensor_scale;
  recipe::BufferSizes sizes;
  explicit GuardedTensor(const recipe::BufferSizes& s)
      : codes(Guarded(static_cast<std::size_t>(s.code_bytes), kGuardByte)),
        scale_codes(Guarded(static_cast<std::size_t>(s.scale_codes), kGuardByte)),
        scales(Guarded(static_cast<std::size_t>(s.scales), kGuardFloat)),
        zero_points(Guarded(static_cast<std::size_t>(s.zero_points), kGuardInt)),
        tensor_scale(Guarded(static_cast<std::size_t>(s.tensor_scales), kGuardTensorScale)),
        sizes(s) {}
  recipe::QuantizedTensor View() {
    return {sizes.code_bytes > 0 ? codes.data() : nullptr, sizes.scale_codes > 0 ? scale_codes.data() : nullptr,
            sizes.scales > 0 ? scales.data() : nullptr, sizes.zero_points > 0 ? zero_points.data() : nullptr,
            sizes.tensor_scales > 0 ? tensor_scale.data() : nullptr};
  }
  bool GuardsIntact() const {
    return GuardIntact(codes, kGuardByte) && GuardIntact(scale_codes, kGuardByte) &&
           GuardIntact(scales, kGuardFloat) && GuardIntact(zero_points, kGuardInt) &&
           GuardIntact(tensor_scale, kGuardTensorScale);
  }
  static constexpr std::int32_t kGuardInt = -12345;
  static constexpr recipe::TensorScale kGuardTensorScale{-1.0f, -1.0f};
};

inline std::string NameOf(const recipe::Recipe& r, const recipe::Layout& layout) {
  return recipe::RecipeName(r) + "/" + recipe::LayoutName(layout);
}

inline recipe::BufferSizes SizesFor(const recipe::Recipe& r, const recipe::Layout& layout, std::size_t rows,
                                    std::size_t cols) {
  recipe::GroupGrid grid;
  RC_ASSERT(recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &grid) ==
            recipe::TensorStatus::kOk);
  return recipe::SizesOf(r, grid);
}

// simd::Quantize on `target` of x (at an unaligned start `offset` floats in)
// gives the model's buffers (recipe::QuantizeTensor) bit for bit and leaves
// every guard alone.
inline void CheckQuantizeMatchesModel(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                      const std::vector<float>& x, std::size_t rows, std::size_t cols,
                                      std::size_t offset) {
  const recipe::BufferSizes sizes = SizesFor(r, layout, rows, cols);
  GuardedTensor model(sizes), simd(sizes);
  RC_ASSERT(recipe::QuantizeTensor(r, layout, x.data(), static_cast<long>(rows), static_cast<long>(cols),
                                   model.View()) == recipe::TensorStatus::kOk);
  const std::vector<float> shifted = Shifted(x, offset);
  const registry::Status s = simd::Quantize(target, r, layout, shifted.data() + offset, rows, cols, simd.View());
  if (!s.ok) RC_FAIL(NameOf(r, layout) + ": " + s.message);
  for (std::size_t g = 0; g < static_cast<std::size_t>(sizes.scale_codes); ++g) {
    RC_ASSERT(simd.scale_codes[g] == model.scale_codes[g]);
  }
  for (std::size_t g = 0; g < static_cast<std::size_t>(sizes.scales); ++g) {
    RC_ASSERT(F32Bits(simd.scales[g]) == F32Bits(model.scales[g]));
  }
  for (std::size_t g = 0; g < static_cast<std::size_t>(sizes.zero_points); ++g) {
    RC_ASSERT(simd.zero_points[g] == model.zero_points[g]);
  }
  if (sizes.tensor_scales > 0) {
    RC_ASSERT(F32Bits(simd.tensor_scale[0].decode) == F32Bits(model.tensor_scale[0].decode));
    RC_ASSERT(F32Bits(simd.tensor_scale[0].encode) == F32Bits(model.tensor_scale[0].encode));
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(sizes.code_bytes); ++i) {
    if (simd.codes[i] != model.codes[i]) {
      RC_FAIL(NameOf(r, layout) + " code byte " + std::to_string(i) + " model " + std::to_string(model.codes[i]) +
              " simd " + std::to_string(simd.codes[i]));
    }
  }
  RC_ASSERT(simd.GuardsIntact());
}

// simd::Dequantize on `target` of the buffers `q` gives the model's values
// (recipe::DequantizeTensor) bit for bit and leaves the guard alone.
inline void CheckDequantizeMatchesModel(std::int64_t target, const recipe::Recipe& r, const recipe::Layout& layout,
                                        const recipe::ConstQuantizedTensor& q, std::size_t rows, std::size_t cols) {
  const std::size_t count = rows * cols;
  std::vector<float> expected(count);
  RC_ASSERT(recipe::DequantizeTensor(r, layout, q, static_cast<long>(rows), static_cast<long>(cols),
                                     expected.data()) == recipe::TensorStatus::kOk);
  std::vector<float> out = Guarded(count, kGuardFloat);
  const registry::Status s = simd::Dequantize(target, r, layout, q, rows, cols, out.data());
  if (!s.ok) RC_FAIL(NameOf(r, layout) + ": " + s.message);
  for (std::size_t i = 0; i < count; ++i) {
    if (F32Bits(out[i]) != F32Bits(expected[i])) {
      RC_FAIL(NameOf(r, layout) + " element " + std::to_string(i) + " model " + F32Hex(expected[i]) + " simd " +
              F32Hex(out[i]));
    }
  }
  RC_ASSERT(GuardIntact(out, kGuardFloat));
}

// The catalog's recipes of one family.
inline std::vector<const recipe::Recipe*> CatalogRecipes(recipe::Family family) {
  std::vector<const recipe::Recipe*> v;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() == family) v.push_back(&r);
  }
  return v;
}

// ---- scaled groups ------------------------------------------------------------

// The largest |code value| a recipe scales a group's range to: the integer
// range, or the FP8 element's max (TE and vLLM scale amax to it), from the model.
inline float ScaledRange(const recipe::Recipe& r) {
  return r.element.IsFloat() ? MaxFinite(r.element) : static_cast<float>(r.qmax);
}

// One run of n values of a biased kind (a group, or a row of one): all zero
// (both signs); half-integer multiples of 2^k, which are the rounding ties
// once the range is pinned to a power-of-two scale; mostly ordinary values
// with some specials; or any biased value. The ties' run pins its range:
// amax qmax * 2^k (common: scale 2^k), (qmax + 0.5) * 2^k (AO sym: scale
// 2^k), the FP8 max (TE: scale 2^-k), or an outlier.
inline void FillBiasedRun(const recipe::Recipe& r, float* x, std::size_t n) {
  const int kind = *rc::gen::inRange(0, 5);
  const int k = *rc::gen::inRange(-20, 20);
  const float q = ScaledRange(r);
  const int range = static_cast<int>(q > 255.0f ? 255.0f : q);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:
        x[i] = *rc::gen::element(0.0f, -0.0f);
        break;
      case 1:
        x[i] = std::ldexp(static_cast<float>(*rc::gen::inRange(-2 * range - 1, 2 * range + 2)) / 2.0f, k);
        break;
      case 2:
        x[i] = *rc::gen::weightedOneOf<float>(
            {{9, rc::gen::map(rc::gen::inRange(-40000, 40000), [k](int v) { return std::ldexp(v / 512.0f, k); })},
             {1, BiasedFloat()}});
        break;
      default:
        x[i] = *BiasedFloat();
        break;
    }
  }
  if (n > 0 && kind == 1) {
    x[*rc::gen::inRange<std::size_t>(0, n)] =
        std::ldexp(*rc::gen::element(q, -q, q + 0.5f, -(q + 0.5f), 4096.0f), k);
  }
}

// The layouts the group tests draw: 0 per group along K, 1 per row, 2 per
// tensor, 3 2-D tiles of tile_rows x group.
inline recipe::Layout LayoutOfKind(int kind, int group, int tile_rows) {
  switch (kind) {
    case 0:
      return {recipe::Geometry::kGroup, group, 0};
    case 1:
      return {recipe::Geometry::kPerRow, 0, 0};
    case 2:
      return {recipe::Geometry::kPerTensor, 0, 0};
    default:
      return {recipe::Geometry::kTile2d, group, tile_rows};
  }
}

}  // namespace lowbit::testing
