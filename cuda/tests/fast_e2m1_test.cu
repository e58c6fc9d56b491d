// The software E2M1 encoders of the FP4 recipes (fast_e2m1.cuh: the one-
// addition encoder and the two-path baseline it replaced) equal the
// model with the recipes' element options on all 2^32 FP32 inputs, and its
// decoder equals the model on all 16 codes.
#include <gtest/gtest.h>

#include "element_ops.cuh"
#include "fast_e2m1.cuh"
#include "gpu_test_util.h"

namespace lowbit::cuda {
namespace {

struct RecipeElementOptions {
  // block::detail::Nvfp4ElementOptions / SaturatingElements for E2M1.
  __device__ EncodeOptions Get() const {
    EncodeOptions o;
    o.overflow = Overflow::kSaturate;
    o.nan_into_no_nan = NanIntoNoNan::kPositiveMax;
    return o;
  }
};

template <bool kTwoPath>
__global__ void SweepE2m1(unsigned long long* mismatches, unsigned* first) {
  const detail::ModelConvert<FormatId::kFp32, FormatId::kE2m1, RecipeElementOptions> model{};
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < (1ull << 32);
       i += 256ull * gridDim.x) {
    const std::uint32_t x = static_cast<std::uint32_t>(i);
    const float f = __uint_as_float(x);
    const std::uint32_t got = kTwoPath ? detail::EncodeE2m1TwoPath(f) : detail::EncodeE2m1Fast(f);
    if (got != model.One(x, 0)) {
      if (local++ == 0) atomicCAS(first, 0u, x);
    }
  }
  if (local) atomicAdd(mismatches, local);
}

__global__ void DecodeE2m1(float* out) {
  out[threadIdx.x] = detail::DecodeE2m1Fast(threadIdx.x);
}

template <bool kTwoPath>
void SweepAll() {
  testing::DeviceBuffer counters(16);
  LOWBIT_CUDA_OK(cudaMemset(counters.get(), 0, 16));
  auto* mismatches = counters.get<unsigned long long>();
  auto* first = reinterpret_cast<unsigned*>(counters.get<char>() + 8);
  SweepE2m1<kTwoPath><<<132 * 8, 256>>>(mismatches, first);
  LOWBIT_CUDA_OK(cudaGetLastError());
  LOWBIT_CUDA_OK(cudaDeviceSynchronize());
  unsigned long long host[2] = {};
  LOWBIT_CUDA_OK(cudaMemcpy(host, counters.get(), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 0u) << "first mismatch near input 0x" << std::hex << (host[1] & 0xFFFFFFFFu);
}

TEST(CudaFastE2m1, EveryFp32InputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  SweepAll<false>();
}

TEST(CudaFastE2m1, TwoPathBaselineEveryFp32InputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  SweepAll<true>();
}

TEST(CudaFastE2m1, DecodeEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  testing::DeviceBuffer out(16 * 4);
  DecodeE2m1<<<1, 16>>>(out.get<float>());
  LOWBIT_CUDA_OK(cudaDeviceSynchronize());
  std::vector<std::uint32_t> got(16);
  testing::Download(got, out);
  for (std::uint32_t c = 0; c < 16; ++c) EXPECT_EQ(got[c], DecodeToF32Bits(kE2m1, c)) << c;
}

}  // namespace
}  // namespace lowbit::cuda
