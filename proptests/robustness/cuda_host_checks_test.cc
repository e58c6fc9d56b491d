// The CUDA entry points' host-side checks (cuda/src/checks.h), which run
// before the device is asked anything, so they are tested here on any
// machine where lowbit::cuda is built, GPU or not (docs/bad-input.md "CUDA"):
// sizes whose byte counts overflow, overlapping buffers, enum values that do
// not exist, empty input. The pointers are a few host bytes, never read:
// each refusal comes first. Where lowbit::cuda is not built the file holds
// one test that says so (skipped, not passed).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#if __has_include("lowbit/cuda/convert.h")
#define LOWBIT_TEST_HAVE_CUDA 1
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/fp8_scaled.h"
#include "lowbit/cuda/int_quantize.h"
#include "lowbit/cuda/mx.h"
#include "lowbit/cuda/nvfp4.h"
#include "lowbit/cuda/recipe_quantize.h"
#include "lowbit/formats/recipe/names.h"
#endif

namespace {

#if defined(LOWBIT_TEST_HAVE_CUDA)
using lowbit::cuda::Status;
constexpr std::size_t kSizeMax = std::numeric_limits<std::size_t>::max();
constexpr std::size_t k2p32 = std::size_t{1} << 32;
constexpr std::size_t k2p62 = std::size_t{1} << 62;

#define EXPECT_CUDA_ERROR(call, part)                                                \
  do {                                                                               \
    const Status s_ = (call);                                                        \
    EXPECT_FALSE(s_.ok) << "accepted; wanted an error naming '" << (part) << "'";     \
    EXPECT_NE(s_.message.find(part), std::string::npos) << "message: " << s_.message; \
  } while (0)

TEST(CudaHostChecks, SizeOverflowBeforeAnyDeviceCall) {
  float host[8] = {};
  std::uint8_t bytes[8] = {};
  lowbit::cuda::ConvertRequest c;
  c.input = host;
  c.output = bytes;
  c.count = k2p62 + 1;  // x 8 bytes wraps
  EXPECT_CUDA_ERROR(lowbit::cuda::Convert(c), "overflow");
  lowbit::cuda::Fp8PerTensorArgs t;
  t.input = host;
  t.codes = bytes;
  t.scale = host;
  t.count = k2p62 + 1;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeFp8PerTensorStatic(t), "overflow");
  lowbit::cuda::Fp8PerTokenArgs p;
  p.input = host;
  p.codes = bytes;
  p.scale_inv = host;
  p.rows = k2p32;
  p.cols = k2p32;  // wraps to 0
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeFp8PerToken(p), "overflow");
  lowbit::cuda::IntQuantArgs q;
  q.recipe = lowbit::recipe::FindRecipe("int8", "ao-sym");
  q.input = host;
  q.codes = bytes;
  q.scales = host;
  q.rows = k2p32;
  q.cols = k2p32;
  q.layout = {lowbit::block::Granularity::kPerRow, 0, 0};
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeInt(q), "overflow");
  lowbit::cuda::IntDequantArgs d;
  d.recipe = q.recipe;
  d.codes = bytes;
  d.scales = host;
  d.output = host;
  d.rows = 4;
  d.cols = k2p62 + 1;
  d.layout = {lowbit::block::Granularity::kPerRow, 0, 0};
  EXPECT_CUDA_ERROR(lowbit::cuda::DequantizeInt(d), "overflow");
  lowbit::cuda::MxArgs m;
  m.input = host;
  m.codes = bytes;
  m.scales = bytes;
  m.recipe = lowbit::recipe::FindRecipe("mxfp4", "te");
  m.count = kSizeMax;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeMx(m), "overflow");
  lowbit::cuda::MxDequantArgs md;
  md.codes = bytes;
  md.scales = bytes;
  md.output = host;
  md.count = k2p62 + 1;
  EXPECT_CUDA_ERROR(lowbit::cuda::DequantizeMx(md), "overflow");
  lowbit::cuda::Nvfp4Args n;
  n.input = host;
  n.packed_codes = bytes;
  n.scales = bytes;
  n.decode_scale = host;
  n.count = k2p62 + 1;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeNvfp4(n), "overflow");
  EXPECT_CUDA_ERROR(lowbit::cuda::DequantizeNvfp4ToF32(bytes, bytes, host, k2p62 + 1, host, nullptr), "overflow");
  EXPECT_CUDA_ERROR(lowbit::cuda::DequantizeNvfp4ToBf16(bytes, bytes, host, k2p62 + 1,
                                                        reinterpret_cast<std::uint16_t*>(host), nullptr),
                    "overflow");
}

TEST(CudaHostChecks, AliasedConvertRefused) {
  float host[8] = {};
  lowbit::cuda::ConvertRequest c;
  c.op = lowbit::cuda::ElementOp::kDecodeToF32;
  c.input = host;
  c.output = host;
  c.count = 8;
  EXPECT_CUDA_ERROR(lowbit::cuda::Convert(c), "overlaps");
}

TEST(CudaHostChecks, EnumsOutOfRange) {
  float host[8] = {};
  std::uint8_t bytes[8] = {};
  lowbit::cuda::ConvertRequest c;
  c.input = host;
  c.output = bytes;
  c.count = 4;
  c.encode.rounding = static_cast<lowbit::RoundingMode>(99);
  EXPECT_CUDA_ERROR(lowbit::cuda::Convert(c), "rounding 99");
  c.encode = {};
  c.encode.overflow = static_cast<lowbit::Overflow>(9);
  EXPECT_CUDA_ERROR(lowbit::cuda::Convert(c), "overflow 9");
  c.encode = {};
  c.format = static_cast<lowbit::FormatId>(250);
  EXPECT_CUDA_ERROR(lowbit::cuda::Convert(c), "unknown format");
  lowbit::cuda::MxArgs m;
  m.input = host;
  m.codes = bytes;
  m.scales = bytes;
  m.count = 4;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeMx(m), "null recipe");
  // torchao's ceil rule: an MX recipe, but not the semantics of the TE or
  // OCP recipe the kernels compile.
  m.recipe = lowbit::recipe::FindRecipe("mxfp4", "ao-ceil");
  ASSERT_NE(m.recipe, nullptr);
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeMx(m), "no GPU kernel for the recipe 'mxfp4:ao-ceil'");
  m.recipe = lowbit::recipe::FindRecipe("mxfp4", "ocp");
  m.input_type = static_cast<lowbit::cuda::InputType>(5);
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeMx(m), "input type 5");
  lowbit::cuda::Fp8PerTensorArgs t;
  t.format = lowbit::FormatId::kE2m1;
  t.count = 4;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeFp8PerTensorStatic(t), "format must be e4m3 or e5m2");
  lowbit::cuda::IntQuantArgs q;
  q.recipe = nullptr;
  q.rows = q.cols = 4;
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeInt(q), "null recipe");
}

// The one call per direction (recipe_quantize.h) checks its arguments as
// the registry's rows do, and refuses a recipe no kernel runs by its name,
// before asking for a device.
TEST(CudaHostChecks, RecipeQuantizeRefusesBeforeTheDevice) {
  float host[64] = {};
  std::uint8_t bytes[64] = {};
  const lowbit::recipe::Recipe& ceil = *lowbit::recipe::FindRecipe("mxfp4", "ao-ceil");
  lowbit::recipe::QuantizedTensor q;
  q.codes = bytes;
  q.scale_codes = bytes + 32;
  EXPECT_CUDA_ERROR(lowbit::cuda::Quantize(ceil, ceil.layout, host, 2, 32, q, nullptr),
                    "no GPU kernel for quantize-recipe mxfp4:ao-ceil");
  EXPECT_CUDA_ERROR(lowbit::cuda::Dequantize(ceil, ceil.layout, lowbit::recipe::AsConst(q), 2, 32, host, nullptr),
                    "no GPU kernel for dequantize-recipe mxfp4:ao-ceil");
  const lowbit::recipe::Recipe& te = *lowbit::recipe::FindRecipe("e4m3", "te");
  const lowbit::recipe::Layout per_row{lowbit::recipe::Geometry::kPerRow, 0, 0};
  lowbit::recipe::QuantizedTensor fp8;
  fp8.codes = bytes;
  fp8.scales = host + 32;
  EXPECT_CUDA_ERROR(lowbit::cuda::Dequantize(te, per_row, lowbit::recipe::AsConst(fp8), 2, 8, host, nullptr),
                    "no GPU kernel for dequantize-recipe");  // TE's FP8 kernels quantize only
  fp8.codes = nullptr;
  EXPECT_FALSE(lowbit::cuda::Quantize(te, per_row, host, 2, 8, fp8, nullptr).ok);  // null codes
  lowbit::recipe::Recipe unnamed = te;
  unnamed.name = nullptr;
  EXPECT_CUDA_ERROR(lowbit::cuda::Quantize(unnamed, per_row, host, 2, 8, fp8, nullptr), "without a name");
  EXPECT_TRUE(lowbit::cuda::Quantize(te, per_row, host, 0, 8, fp8, nullptr).ok);  // empty
}

TEST(CudaHostChecks, EmptyIsOk) {
  lowbit::cuda::ConvertRequest c;
  EXPECT_TRUE(lowbit::cuda::Convert(c).ok);
  lowbit::cuda::Fp8PerTokenArgs p;
  p.rows = 0;
  p.cols = kSizeMax;
  EXPECT_TRUE(lowbit::cuda::QuantizeFp8PerToken(p).ok);
  lowbit::cuda::IntQuantArgs q;
  q.recipe = lowbit::recipe::FindRecipe("int8", "ao-sym");
  q.rows = 0;
  q.cols = 128;
  q.layout = {lowbit::block::Granularity::kPerRow, 0, 0};
  const Status s = lowbit::cuda::QuantizeInt(q);
  EXPECT_TRUE(s.ok) << s.message << " (rows = 0 was 'empty shape' before; empty is ok everywhere)";
  lowbit::cuda::IntDequantArgs d;
  d.recipe = q.recipe;
  d.rows = 4;
  d.cols = 0;
  EXPECT_TRUE(lowbit::cuda::DequantizeInt(d).ok);
  lowbit::cuda::MxArgs m;
  m.recipe = lowbit::recipe::FindRecipe("mxfp4", "te");
  EXPECT_TRUE(lowbit::cuda::QuantizeMx(m).ok);
  EXPECT_TRUE(lowbit::cuda::QuantizeNvfp4(lowbit::cuda::Nvfp4Args{}).ok);
}
#else
TEST(CudaHostChecks, NotBuilt) { GTEST_SKIP() << "lowbit::cuda is not built here"; }
#endif

}  // namespace
