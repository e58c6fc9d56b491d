// The device compilation of the E2M1 alternatives
// (formats/include/lowbit/formats/alternatives/e2m1.h: the one-addition
// encoder, the two-path one it replaced, the decode from bits) equals the
// model with the recipes' element options on all 2^32 FP32 inputs and all 16
// codes. proptests/backends/alternatives_test.cc checks the host compilation; the
// device one differs in the FP32 addition (__fadd_rn, whose NaN is NVIDIA's
// canonical one), so it is swept here on every GPU run.
#include <gtest/gtest.h>

#include "element_ops.cuh"
#include "gpu_test_util.h"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/recipe/catalog.h"

namespace lowbit::cuda {
namespace {

// The options the alternatives equal (alternatives/e2m1.h).
struct RecipeElementOptions {
  __device__ EncodeOptions Get() const {
    constexpr EncodeOptions kOptions = recipe::SatfiniteElements();
    return kOptions;
  }
};

template <bool kTwoPath>
__global__ void SweepE2m1(unsigned long long* mismatches, unsigned* first) {
  const detail::ModelConvert<FormatId::kFp32, FormatId::kE2m1, RecipeElementOptions> model{};
  unsigned long long local = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < (1ull << 32); i += 256ull * gridDim.x) {
    const std::uint32_t x = static_cast<std::uint32_t>(i);
    const float f = __uint_as_float(x);
    const std::uint32_t got =
        kTwoPath ? alternatives::EncodeE2m1TwoPath(f) : alternatives::EncodeE2m1OneAddition(f);
    if (got != model.One(x, 0)) {
      if (local++ == 0) atomicCAS(first, 0u, x);
    }
  }
  if (local) atomicAdd(mismatches, local);
}

__global__ void DecodeE2m1(float* out) { out[threadIdx.x] = alternatives::DecodeE2m1FromBits(threadIdx.x); }

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
