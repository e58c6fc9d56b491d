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
#include <tuple>
#include <utility>

#if __has_include("lowbit/cuda/convert.h")
#define LOWBIT_TEST_HAVE_CUDA 1
#include "lowbit/cuda/convert.h"
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
  // The one call per direction, every tuned kernel family and the model
  // recipe kernels: [2^32, 2^32] wraps to 0 elements.
  lowbit::recipe::QuantizedTensor q;
  q.codes = bytes;
  q.scale_codes = bytes;
  q.scales = host;
  q.tensor_scale = reinterpret_cast<lowbit::recipe::TensorScale*>(host);
  const lowbit::recipe::Layout per_tensor{lowbit::recipe::Geometry::kPerTensor, 0, 0};
  const lowbit::recipe::Layout per_row{lowbit::recipe::Geometry::kPerRow, 0, 0};
  for (const auto& [name, profile, per] : {std::tuple{"e4m3", "te", per_tensor}, std::tuple{"e4m3", "te", per_row},
                                           std::tuple{"int8", "ao-sym", per_row}, std::tuple{"mxfp4", "te", per_tensor},
                                           std::tuple{"nvfp4", "te", per_tensor}}) {
    const lowbit::recipe::Recipe& r = *lowbit::recipe::FindRecipe(name, profile);
    const lowbit::recipe::Layout layout = r.family() == lowbit::recipe::Family::kScaled ? per : r.layout;
    SCOPED_TRACE(std::string(name) + ":" + profile);
    EXPECT_CUDA_ERROR(lowbit::cuda::Quantize(r, layout, host, k2p32, k2p32, q, nullptr), "overflow");
    if (lowbit::cuda::RunsDequantize(r, layout)) {
      EXPECT_CUDA_ERROR(lowbit::cuda::Dequantize(r, layout, lowbit::recipe::AsConst(q), 4, k2p62 + 1, host, nullptr),
                        "overflow");
    }
  }
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
  // Every tuned kernel family through the one call: rows or cols 0, with a
  // width that would overflow, is ok (never a product that wraps to 0).
  float host[4] = {};
  const lowbit::recipe::QuantizedTensor none;
  const lowbit::recipe::Layout per_row{lowbit::recipe::Geometry::kPerRow, 0, 0};
  for (const auto& [name, profile] : {std::pair{"e4m3", "te"}, std::pair{"int8", "ao-sym"}, std::pair{"mxfp4", "te"},
                                      std::pair{"nvfp4", "te"}}) {
    const lowbit::recipe::Recipe& r = *lowbit::recipe::FindRecipe(name, profile);
    const lowbit::recipe::Layout layout = r.family() == lowbit::recipe::Family::kScaled ? per_row : r.layout;
    const Status s = lowbit::cuda::Quantize(r, layout, host, 0, kSizeMax, none, nullptr);
    EXPECT_TRUE(s.ok) << name << ":" << profile << ": " << s.message;
    if (lowbit::cuda::RunsDequantize(r, layout)) {
      EXPECT_TRUE(lowbit::cuda::Dequantize(r, layout, lowbit::recipe::AsConst(none), 4, 0, host, nullptr).ok)
          << name << ":" << profile;
    }
  }
}
#else
TEST(CudaHostChecks, NotBuilt) { GTEST_SKIP() << "lowbit::cuda is not built here"; }
#endif

}  // namespace
