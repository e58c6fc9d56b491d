// The GPU weight-layout kernels (src/weight_layouts.h) against the model
// (formats/block/tinygemm_int4pack.h, marlin_layout.h, swizzled_scales.h):
// every layout, pack and unpack, on shapes with padding rows, whole and short
// torch CPU blocks and partial 128 x 4 scale tiles, random codes with stray
// high bits (the model masks them). Without a GPU every test is SKIPPED.
// scripts/gpu/int4pack_check.py compares the tinygemm layout with torch's
// own CUDA op on the GPU machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"
#include "weight_layouts.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceVector;

std::vector<std::uint8_t> RandomCodes(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::uint32_t x = seed * 2654435761u + 7;
  for (auto& c : v) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<std::uint8_t>(x >> 24);
  }
  return v;
}

struct Case {
  WeightLayout layout;
  int param;
  std::int64_t rows, cols;
};

std::string Name(const Case& c) {
  return std::to_string(static_cast<int>(c.layout)) + "/" + std::to_string(c.param) + " " + std::to_string(c.rows) +
         "x" + std::to_string(c.cols);
}

// The model's packing of `codes` as bytes (words as their little-endian bytes).
std::vector<std::uint8_t> ModelPack(const Case& c, const std::vector<std::uint8_t>& codes, std::int64_t* units,
                                    int* unit_bytes) {
  std::vector<std::uint8_t> out;
  if (c.layout == WeightLayout::kTinygemm || c.layout == WeightLayout::kMarlin) {
    *units = c.layout == WeightLayout::kTinygemm ? block::TinygemmInt4packWords(c.rows, c.cols)
                                                 : block::MarlinWords(c.rows, c.cols);
    *unit_bytes = 4;
    std::vector<std::uint32_t> words(static_cast<std::size_t>(*units));
    if (c.layout == WeightLayout::kTinygemm) {
      block::PackTinygemmInt4(codes.data(), c.rows, c.cols, c.param, words.data());
    } else {
      block::PackMarlin(codes.data(), c.rows, c.cols, words.data());
    }
    out.resize(words.size() * 4);
    std::memcpy(out.data(), words.data(), out.size());
    return out;
  }
  *unit_bytes = 1;
  if (c.layout == WeightLayout::kTorchCpu) {
    *units = c.rows * c.cols / 2;
    out.resize(static_cast<std::size_t>(*units));
    block::PackTorchCpuInt4(codes.data(), c.rows, c.cols, static_cast<block::TorchCpuInt4packIsa>(c.param), out.data());
    return out;
  }
  *units = block::SwizzledScaleBytes(c.rows, c.cols);
  out.resize(static_cast<std::size_t>(*units));
  block::SwizzleScales(codes.data(), c.rows, c.cols, out.data());
  return out;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (int tiles : {2, 4, 8}) {
    for (std::int64_t n : {1, 8, 13, 64, 200}) cases.push_back({WeightLayout::kTinygemm, tiles, n, tiles * 16 * 3});
  }
  for (int isa : {0, 1, 2}) {
    for (std::int64_t n : {16, 32, 48, 64, 80, 160}) cases.push_back({WeightLayout::kTorchCpu, isa, n, 34});
  }
  for (std::int64_t k : {16, 48, 128}) {
    for (std::int64_t n : {64, 192, 256}) cases.push_back({WeightLayout::kMarlin, 0, k, n});
  }
  for (std::int64_t rows : {1, 127, 128, 129, 384}) {
    for (std::int64_t cols : {1, 4, 7}) cases.push_back({WeightLayout::kSwizzledScales, 0, rows, cols});
  }
  return cases;
}

TEST(WeightLayoutsGpuTest, PackAndUnpackMatchTheModel) {
  LOWBIT_REQUIRE_GPU();
  std::uint32_t seed = 1;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Name(c));
    const std::vector<std::uint8_t> codes = RandomCodes(static_cast<std::size_t>(c.rows * c.cols), seed++);
    std::int64_t units = 0;
    int unit_bytes = 0;
    const std::vector<std::uint8_t> want = ModelPack(c, codes, &units, &unit_bytes);
    DeviceVector<std::uint8_t> codes_dev(codes);
    DeviceVector<std::uint8_t> packed_dev(want.size() + 64);  // slack past the end stays 0
    WeightLayoutJob job;
    job.layout = c.layout;
    job.param = c.param;
    job.rows = c.rows;
    job.cols = c.cols;
    job.packed_units = units;
    job.codes = codes_dev.p;
    job.packed_out = packed_dev.p;
    ASSERT_TRUE(LaunchWeightLayout(job, 0).ok);
    LOWBIT_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<std::uint8_t> got = packed_dev.Get(want.size() + 64);
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "packed byte " << i;
    for (std::size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0) << "wrote past the end, byte " << i;

    DeviceVector<std::uint8_t> back_dev(codes.size() + 64);
    DeviceVector<std::uint8_t> in_dev(want);
    job.pack = false;
    job.codes = nullptr;
    job.packed_out = nullptr;
    job.packed = in_dev.p;
    job.codes_out = back_dev.p;
    ASSERT_TRUE(LaunchWeightLayout(job, 0).ok);
    LOWBIT_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<std::uint8_t> back = back_dev.Get(codes.size() + 64);
    const std::uint8_t mask = c.layout == WeightLayout::kSwizzledScales ? 0xFF : 0x0F;
    for (std::size_t i = 0; i < codes.size(); ++i) ASSERT_EQ(back[i], codes[i] & mask) << "code " << i;
    for (std::size_t i = codes.size(); i < back.size(); ++i) ASSERT_EQ(back[i], 0) << "wrote past the end, code " << i;
  }
}

// Literal: tinygemm k2, N = 8, K = 32, q[n][k] = (n + k) & 15; lane 0 is
// 0x91918080, lane 4 (row 1) 0xA2A29191 (int4mm.cu's m16n8k16 B fragment).
TEST(WeightLayoutsGpuTest, TinygemmLiteralWords) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint8_t> q(8 * 32);
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 32; ++k) q[static_cast<std::size_t>(n * 32 + k)] = static_cast<std::uint8_t>((n + k) & 15);
  }
  DeviceVector<std::uint8_t> q_dev(q);
  DeviceVector<std::uint32_t> words_dev(32);
  WeightLayoutJob job;
  job.layout = WeightLayout::kTinygemm;
  job.param = 2;
  job.rows = 8;
  job.cols = 32;
  job.packed_units = 32;
  job.codes = q_dev.p;
  job.packed_out = words_dev.p;
  ASSERT_TRUE(LaunchWeightLayout(job, 0).ok);
  const std::vector<std::uint32_t> words = words_dev.Get(32);
  EXPECT_EQ(words[0], 0x91918080u);
  EXPECT_EQ(words[4], 0xA2A29191u);
}

}  // namespace
}  // namespace lowbit::cuda
