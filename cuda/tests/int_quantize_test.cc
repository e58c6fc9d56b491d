// The GPU integer recipes (int_quantize.cu through tensor_call.h) equal the model
// (formats/.../recipe/tensor.h QuantizeTensor, DequantizeTensor) bit for bit: every integer recipe, per row
// (odd and wide shapes) and per group of 32 / 64 / 128, FP32 and BF16
// input, every packing of packing.h that the GPU writes, on rows that hold
// NaN, +-Inf, all zeros, an outlier, subnormal-range and huge values. The
// one stated difference (int_quantize.cu): a NaN scale is the canonical
// 0x7FFFFFFF on the GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "block_model.h"
#include "gpu_test_util.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/recipe/tensor.h"
#include "tensor_call.h"

namespace lowbit::cuda {
namespace {

using detail::IntPackedBytes;
using detail::IntPacking;
using detail::TensorCall;
using testing::DeviceVector;

// Row r cycles through the cases where recipes differ; a few single
// elements elsewhere land NaN or Inf inside otherwise normal groups.
std::vector<float> Generate(std::size_t rows, std::size_t cols, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_int_distribution<int> mag(-30, 30);
  std::vector<float> x(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    const int kind = static_cast<int>(r % 8);
    const float scale = std::ldexp(1.0f, mag(rng));
    for (std::size_t c = 0; c < cols; ++c) {
      float v = g(rng) * scale;
      switch (kind) {
        case 1: v = 0.0f; break;                                    // all-zero row
        case 2:  // two NaNs of other signs and payloads: the model's statistics keep the first
          if (c == cols / 2) v = std::numeric_limits<float>::quiet_NaN();
          if (c == cols / 4 && cols / 4 != cols / 2) v = F32FromBits(0xFFC00123u);
          break;
        case 3: if (c == 1 % cols) v = -std::numeric_limits<float>::infinity(); break;
        case 4: v = std::fabs(v); break;                            // no negative value (GPTQ)
        case 5: v = g(rng) * 1e-40f; break;                         // subnormal range
        case 6: if (c % 37 == 0) v = 5000.0f * scale; break;        // outliers
        case 7: v = std::nearbyint(g(rng) * 8.0f) / 2.0f; break;    // halves: rounding ties
        default: break;
      }
      x[r * cols + c] = v;
    }
  }
  return x;
}

std::vector<std::uint16_t> ToBf16(std::vector<float>& x) {  // rounds x to BF16 in place
  std::vector<std::uint16_t> b(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint16_t h = std::isnan(x[i]) ? static_cast<std::uint16_t>(F32Bits(x[i]) >> 16)
                                       : static_cast<std::uint16_t>(EncodeF32(kBf16, x[i]).code);
    b[i] = h;
    x[i] = F32FromBits(static_cast<std::uint32_t>(h) << 16);
  }
  return b;
}

std::vector<std::uint8_t> Pack(IntPacking packing, const std::vector<std::uint8_t>& codes, std::size_t rows,
                               std::size_t cols) {
  std::vector<std::uint8_t> out(IntPackedBytes(packing, rows, cols));
  const long n = static_cast<long>(codes.size());
  switch (packing) {
    case IntPacking::kBytes: out = codes; break;
    case IntPacking::kLowFirst: block::PackNibbles(codes.data(), n, block::NibbleOrder::kLowFirst, out.data()); break;
    case IntPacking::kHighFirst: block::PackNibbles(codes.data(), n, block::NibbleOrder::kHighFirst, out.data()); break;
    case IntPacking::kAwq: {
      std::vector<std::uint32_t> words(rows * cols / 8);
      block::PackAwq(codes.data(), static_cast<int>(rows), static_cast<int>(cols), words.data());
      std::memcpy(out.data(), words.data(), out.size());
      break;
    }
  }
  return out;
}

const char* PackingName(IntPacking p) {
  switch (p) {
    case IntPacking::kBytes: return "bytes";
    case IntPacking::kLowFirst: return "low-first";
    case IntPacking::kHighFirst: return "high-first";
    case IntPacking::kAwq: return "awq";
  }
  return "?";
}

struct Shape {
  std::size_t rows, cols;
};

// Quantizes on the GPU and with the model, compares codes / scales / zero
// points, then dequantizes the GPU's codes with the GPU's parameters both
// ways (FP32 and BF16 out).
// `shift`: the input and the codes start `shift` elements / bytes past an
// allocation's start (misaligned for 16-byte loads and 4-byte stores).
void CheckCase(const recipe::Recipe& r, const block::QuantLayout& layout, Shape sh, IntPacking packing,
               bool bf16, std::uint32_t seed, std::size_t shift = 0) {
  const std::string what = recipe::RecipeName(r) + " " + PackingName(packing) +
                           (bf16 ? " bf16 " : " f32 ") + std::to_string(sh.rows) + "x" + std::to_string(sh.cols) +
                           " group " + std::to_string(layout.group) + " shift " + std::to_string(shift);
  std::vector<float> x = Generate(sh.rows, sh.cols, seed);
  const std::vector<std::uint16_t> xb = ToBf16(x);
  if (!bf16) x = Generate(sh.rows, sh.cols, seed);
  const std::size_t n = sh.rows * sh.cols;
  // The model: the whole-tensor steps in the recipe's own packing, read
  // back one code per element.
  const recipe::Layout model_layout = layout.granularity == block::Granularity::kPerGroup
                                          ? recipe::Layout{recipe::Geometry::kGroup, layout.group, 0}
                                          : recipe::Layout{recipe::Geometry::kPerRow, 0, 0};
  recipe::GroupGrid grid;
  ASSERT_EQ(recipe::MakeGroupGrid(r, model_layout, static_cast<long>(sh.rows), static_cast<long>(sh.cols), &grid),
            recipe::TensorStatus::kOk);
  const std::size_t groups = static_cast<std::size_t>(grid.Count());
  const recipe::BufferSizes sizes = recipe::SizesOf(r, grid);
  std::vector<std::uint8_t> model_codes(static_cast<std::size_t>(sizes.code_bytes));
  std::vector<float> want_scales(groups);
  std::vector<std::int32_t> want_zps(groups, 0);  // 0 where the recipe stores none
  recipe::QuantizedTensor model;
  model.codes = model_codes.data();
  model.scales = want_scales.data();
  model.zero_points = sizes.zero_points > 0 ? want_zps.data() : nullptr;
  ASSERT_EQ(recipe::QuantizeTensor(r, model_layout, x.data(), static_cast<long>(sh.rows), static_cast<long>(sh.cols),
                                   model),
            recipe::TensorStatus::kOk);
  std::vector<std::uint8_t> want_codes(n);
  for (std::size_t i = 0; i < n; ++i) want_codes[i] = recipe::LoadCode(r.packing, model_codes.data(), static_cast<long>(i));
  const std::vector<std::uint8_t> want_packed = Pack(packing, want_codes, sh.rows, sh.cols);

  std::vector<float> x_shifted(shift, 0.0f);
  x_shifted.insert(x_shifted.end(), x.begin(), x.end());
  std::vector<std::uint16_t> xb_shifted(shift, 0);
  xb_shifted.insert(xb_shifted.end(), xb.begin(), xb.end());
  DeviceVector<float> dx(x_shifted);
  DeviceVector<std::uint16_t> dxb(xb_shifted);
  const std::size_t bytes = IntPackedBytes(packing, sh.rows, sh.cols);
  DeviceVector<std::uint8_t> codes_buffer(bytes + shift);
  std::uint8_t* const codes_at = codes_buffer.p + shift;
  DeviceVector<float> scales(groups);
  DeviceVector<std::int32_t> zps(groups);
  TensorCall a;
  a.recipe = &r;
  a.layout = model_layout;
  a.input_type = bf16 ? InputType::kBf16 : InputType::kF32;
  a.input = bf16 ? static_cast<const void*>(dxb.p + shift) : dx.p + shift;
  a.rows = sh.rows;
  a.cols = sh.cols;
  a.int_packing = packing;
  a.q.codes = codes_at;
  a.q.scales = scales.p;
  a.q.zero_points = zps.p;
  const Status s = detail::RunTensorCall(true, a);
  ASSERT_TRUE(s.ok) << what << ": " << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  const auto got_all = codes_buffer.Get(bytes + shift);
  for (std::size_t i = 0; i < shift; ++i) ASSERT_EQ(got_all[i], 0) << what << ": wrote before the codes";
  const std::vector<std::uint8_t> got_packed(got_all.begin() + static_cast<std::ptrdiff_t>(shift), got_all.end());
  const auto got_scales = scales.Get(groups);
  const auto got_zps = zps.Get(groups);
  int bad = 0;
  for (std::size_t g = 0; g < groups && bad < 5; ++g) {
    const bool nan_both = std::isnan(want_scales[g]) && F32Bits(got_scales[g]) == 0x7FFFFFFFu;
    if (!(F32Bits(got_scales[g]) == F32Bits(want_scales[g]) || nan_both) || got_zps[g] != want_zps[g]) {
      ++bad;
      ADD_FAILURE() << what << " group " << g << " scale " << std::hex << F32Bits(got_scales[g]) << " want "
                    << F32Bits(want_scales[g]) << std::dec << " zp " << got_zps[g] << " want " << want_zps[g];
    }
  }
  for (std::size_t i = 0; i < bytes && bad < 10; ++i) {
    if (got_packed[i] != want_packed[i]) {
      ++bad;
      ADD_FAILURE() << what << " packed byte " << i << " got " << int(got_packed[i]) << " want "
                    << int(want_packed[i]);
    }
  }
  ASSERT_EQ(bad, 0) << what;

  // Dequantize: the model with the GPU's parameters (the same NaN scale bits).
  recipe::ConstQuantizedTensor used;
  used.codes = model_codes.data();
  used.scales = got_scales.data();
  used.zero_points = got_zps.data();
  std::vector<float> want_x(n);
  ASSERT_EQ(recipe::DequantizeTensor(r, model_layout, used, static_cast<long>(sh.rows), static_cast<long>(sh.cols),
                                     want_x.data()),
            recipe::TensorStatus::kOk);
  EncodeOptions bo;
  bo.nan_sign = NanSign::kPositive;
  bo.nan_payload = NanPayload::kAllOnes;
  for (OutputType ot : {OutputType::kF32, OutputType::kBf16}) {
    DeviceVector<std::uint32_t> out(n);
    TensorCall d = a;
    d.input = nullptr;
    d.output_type = ot;
    d.output = out.p;
    const Status ds = detail::RunTensorCall(false, d);
    ASSERT_TRUE(ds.ok) << what << ": " << ds.message;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (ot == OutputType::kF32) {
      const auto got = out.Get(n);
      for (std::size_t i = 0; i < n && bad < 15; ++i) {
        if (got[i] != F32Bits(want_x[i])) {
          ++bad;
          ADD_FAILURE() << what << " dequant f32 i=" << i << " got " << std::hex << got[i] << " want " << F32Bits(want_x[i]);
        }
      }
    } else {
      std::vector<std::uint16_t> got(n);
      cudaMemcpy(got.data(), out.p, n * 2, cudaMemcpyDeviceToHost);
      for (std::size_t i = 0; i < n && bad < 15; ++i) {
        const auto w = static_cast<std::uint16_t>(EncodeF32(kBf16, want_x[i], bo).code);
        if (got[i] != w) {
          ++bad;
          ADD_FAILURE() << what << " dequant bf16 i=" << i << " got " << std::hex << got[i] << " want " << w;
        }
      }
    }
  }
}

// The catalog's integer recipes the tuned integer kernels are written for:
// scaled, an integer element, and not given to the model recipe kernels
// (their rule's row in scale_rule_kernels.h, or GPTQ's FP16 scales). 14:
// [AO] symmetric and asymmetric (and their CUDA-division twins) on INT8 and
// INT4 / UINT4, [GPTQ] both ways on UINT4, the common kernel both roundings
// on INT8 and INT4 (recipe/catalog.h kScaledPairs).
std::vector<const recipe::Recipe*> IntegerRecipes() {
  std::vector<const recipe::Recipe*> all;
  for (const recipe::Recipe& r : recipe::kAllRecipes) {
    if (r.family() == recipe::Family::kScaled && !r.element.IsFloat() && !detail::RunsOnModelRecipeKernels(r)) {
      all.push_back(&r);
    }
  }
  EXPECT_EQ(all.size(), 14u);
  return all;
}

TEST(CudaIntQuantize, PerChannelEveryInt8RecipeEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  const block::QuantLayout per_row{block::Granularity::kPerRow};
  std::uint32_t seed = 1;
  for (const recipe::Recipe* r : IntegerRecipes()) {
    if (r->element.total_bits != 8) continue;
    for (Shape sh : {Shape{16, 1000}, Shape{9, 3}, Shape{3, 4097}}) {
      for (bool bf16 : {false, true}) CheckCase(*r, per_row, sh, IntPacking::kBytes, bf16, seed++);
    }
  }
}

TEST(CudaIntQuantize, PerGroupEveryInt4RecipeAndPackingEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  std::uint32_t seed = 100;
  for (const recipe::Recipe* r : IntegerRecipes()) {
    if (r->element.total_bits != 4) continue;
    for (int group : {32, 64, 128}) {
      const block::QuantLayout layout{block::Granularity::kPerGroup, group};
      for (IntPacking p : {IntPacking::kLowFirst, IntPacking::kHighFirst, IntPacking::kAwq, IntPacking::kBytes}) {
        for (bool bf16 : {false, true}) CheckCase(*r, layout, Shape{17, 384}, p, bf16, seed++);
      }
    }
  }
}

// Groups of 32 T elements, T a power of two up to 1024, take the kernel that
// holds a group in registers (int_quantize.cu QuantizeIntChunksKernel): T of
// 1, 4, 8 and 32 (shuffles within a warp, several groups a warp), 64 (two
// warps a group, a block of four groups with one past the last), 128 and
// 1024 (one group a block), per row and per group, byte and nibble
// packings. Groups of 16 elements, and every shape with the input and codes
// one element / byte off their alignment, take the warp-per-group kernel
// and must give the same bits.
TEST(CudaIntQuantize, GroupsHeldInRegistersEveryThreadCountEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  const block::QuantLayout per_row{block::Granularity::kPerRow};
  struct Case {
    block::QuantLayout layout;
    Shape shape;
  };
  const Case cases[] = {
      {per_row, {9, 32}},
      {per_row, {5, 256}},
      {per_row, {3, 1024}},
      {per_row, {3, 2048}},
      {per_row, {4, 4096}},
      {per_row, {1, 32768}},
      {block::QuantLayout{block::Granularity::kPerGroup, 16}, {3, 96}},
      {block::QuantLayout{block::Granularity::kPerGroup, 128}, {9, 1024}},
      {block::QuantLayout{block::Granularity::kPerGroup, 2048}, {2, 4096}},
  };
  std::uint32_t seed = 500;
  for (const recipe::Recipe* r : IntegerRecipes()) {
    const bool four_bit = r->element.total_bits == 4;
    for (const Case& c : cases) {
      for (bool bf16 : {false, true}) {
        for (std::size_t shift : {std::size_t{0}, std::size_t{1}}) {
          CheckCase(*r, c.layout, c.shape, IntPacking::kBytes, bf16, seed++, shift);
          if (four_bit) {
            CheckCase(*r, c.layout, c.shape, IntPacking::kLowFirst, bf16, seed++, shift);
            CheckCase(*r, c.layout, c.shape, IntPacking::kHighFirst, bf16, seed++, shift);
          }
        }
      }
    }
  }
}

TEST(CudaIntQuantize, PerRowInt4PackedEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  const block::QuantLayout per_row{block::Granularity::kPerRow};
  CheckCase(testing::CatalogRecipeNamed("uint4", "ao-asym"), per_row, Shape{11, 1000}, IntPacking::kLowFirst, false, 7);
  CheckCase(testing::CatalogRecipeNamed("uint4", "gptq-sym"), per_row, Shape{8, 256}, IntPacking::kAwq, true, 8);
}

TEST(CudaIntQuantize, BadArgumentsReturnErrors) {
  LOWBIT_REQUIRE_GPU();
  DeviceVector<float> x(64);
  DeviceVector<std::uint8_t> q(64);
  DeviceVector<float> s(8);
  TensorCall a;
  a.input = x.p;
  a.rows = 2;
  a.cols = 32;
  a.layout = {recipe::Geometry::kPerRow, 0, 0};
  a.q.codes = q.p;
  a.q.scales = s.p;
  a.recipe = &testing::CatalogRecipeNamed("e4m3", "te");
  EXPECT_FALSE(detail::LaunchInt(true, a).ok);  // float element
  a.recipe = &testing::CatalogRecipeNamed("int8", "ao-sym");
  a.int_packing = IntPacking::kLowFirst;
  EXPECT_FALSE(detail::RunTensorCall(true, a).ok);  // nibbles of an 8-bit element
  a.recipe = &testing::CatalogRecipeNamed("int4", "ao-sym");
  a.layout = {recipe::Geometry::kGroup, 48, 0};
  EXPECT_FALSE(detail::RunTensorCall(true, a).ok);  // 32 columns are not a multiple of 48
  a.layout = {recipe::Geometry::kGroup, 32, 0};
  std::vector<float> host(64);
  a.input = host.data();
  EXPECT_FALSE(detail::RunTensorCall(true, a).ok);  // host memory
  a.input = x.p;
  EXPECT_TRUE(detail::RunTensorCall(true, a).ok);
}

}  // namespace
}  // namespace lowbit::cuda
