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
  q.input = host;
  q.codes = bytes;
  q.scales = host;
  q.rows = k2p32;
  q.cols = k2p32;
  q.layout = {lowbit::block::Granularity::kPerRow, 0, 0};
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeInt(q), "overflow");
  lowbit::cuda::IntDequantArgs d;
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
  m.recipe = static_cast<lowbit::cuda::MxRecipeId>(7);
  EXPECT_CUDA_ERROR(lowbit::cuda::QuantizeMx(m), "recipe id 7");
  m.recipe = lowbit::cuda::MxRecipeId::kOcp;
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

TEST(CudaHostChecks, EmptyIsOk) {
  lowbit::cuda::ConvertRequest c;
  EXPECT_TRUE(lowbit::cuda::Convert(c).ok);
  lowbit::cuda::Fp8PerTokenArgs p;
  p.rows = 0;
  p.cols = kSizeMax;
  EXPECT_TRUE(lowbit::cuda::QuantizeFp8PerToken(p).ok);
  lowbit::cuda::IntQuantArgs q;
  q.rows = 0;
  q.cols = 128;
  q.layout = {lowbit::block::Granularity::kPerRow, 0, 0};
  const Status s = lowbit::cuda::QuantizeInt(q);
  EXPECT_TRUE(s.ok) << s.message << " (rows = 0 was 'empty shape' before; empty is ok everywhere)";
  lowbit::cuda::IntDequantArgs d;
  d.rows = 4;
  d.cols = 0;
  EXPECT_TRUE(lowbit::cuda::DequantizeInt(d).ok);
  EXPECT_TRUE(lowbit::cuda::QuantizeMx(lowbit::cuda::MxArgs{}).ok);
  EXPECT_TRUE(lowbit::cuda::QuantizeNvfp4(lowbit::cuda::Nvfp4Args{}).ok);
}
#else
TEST(CudaHostChecks, NotBuilt) { GTEST_SKIP() << "lowbit::cuda is not built here"; }
#endif

}  // namespace
