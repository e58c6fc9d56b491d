// lowbit's scratch pool (cuda/src/stream_scratch.h, as convert.h states
// it): a pool of its own per device that keeps up to 64 MiB mapped between
// calls, and the application's default pool left as it was.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/convert.h"
#include "stream_scratch.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;
using testing::Upload;

unsigned long long PoolAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  unsigned long long value = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(pool, attr, &value), cudaSuccess);
  return value;
}

TEST(CudaScratch, OwnPoolKeepsItsMemoryAndTheDefaultPoolIsUntouched) {
  LOWBIT_REQUIRE_GPU();
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPool_t default_pool;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&default_pool, device), cudaSuccess);
  const unsigned long long default_threshold = PoolAttribute(default_pool, cudaMemPoolAttrReleaseThreshold);

  // BF16 -> E4M3 of 2^16 elements takes the staged table, whose 2^16 entries
  // live in scratch (table_map.cuh).
  const std::size_t n = std::size_t{1} << 16;
  std::vector<std::uint16_t> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint16_t>(i);
  DeviceBuffer din(n * 2), dout(n);
  Upload(din, in);
  ConvertRequest r;
  r.op = ElementOp::kEncodeBf16;
  r.format = FormatId::kE4m3;
  r.backend = Backend::kSoftware;
  r.input = din.get();
  r.output = dout.get();
  r.count = n;
  const Status s = Convert(r);
  ASSERT_TRUE(s.ok) << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  cudaMemPool_t pool;
  ASSERT_EQ(detail::ScratchPool(&pool), cudaSuccess);
  EXPECT_NE(pool, default_pool);
  EXPECT_EQ(PoolAttribute(pool, cudaMemPoolAttrReleaseThreshold), 64ull << 20);
  // Freed in stream order and synchronized, yet still mapped for the next call.
  EXPECT_GT(PoolAttribute(pool, cudaMemPoolAttrReservedMemCurrent), 0u);
  EXPECT_EQ(PoolAttribute(pool, cudaMemPoolAttrUsedMemCurrent), 0u);
  EXPECT_EQ(PoolAttribute(default_pool, cudaMemPoolAttrReleaseThreshold), default_threshold);
}

}  // namespace
}  // namespace lowbit::cuda
