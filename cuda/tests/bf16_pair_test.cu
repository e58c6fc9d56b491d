// tc_matmul/bf16_pair.cuh RoundPairToBf16 (the hardware's cvt.rn.bf16x2.f32)
// against the model's FP32 -> BF16 rounding (alternatives/f32_f16_bf16.h
// EncodeF32BitsToBf16, itself proved against convert.h) on every FP32
// input but the NaNs, in the low half and, with a second input drawn from a
// bit mix of the first, in the high half. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>

#include "gpu_test_util.h"
#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "tc_matmul/bf16_pair.cuh"

namespace lowbit::cuda::tc_gemm {
namespace {

struct Tally {
  unsigned long long checked;
  unsigned long long mismatches;
  std::uint32_t first_input;
};

__device__ bool IsNan(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }

__global__ void CompareEveryInput(Tally* tally) {
  unsigned long long checked = 0, mismatches = 0;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (std::uint64_t{1} << 32);
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const auto low = static_cast<std::uint32_t>(i);
    // An odd multiplier and an offset: a bijection of the 32-bit inputs, so
    // the high half also sees every input once, next to a different low one.
    const std::uint32_t high = low * 2654435761u + 0x9E3779B9u;
    const std::uint32_t got = RoundPairToBf16(__uint_as_float(low), __uint_as_float(high));
    if (!IsNan(low)) {
      ++checked;
      if ((got & 0xFFFF) != alternatives::EncodeF32BitsToBf16(low)) {
        ++mismatches;
        atomicCAS(&tally->first_input, 0xFFFFFFFFu, low);
      }
    }
    if (!IsNan(high)) {
      ++checked;
      if ((got >> 16) != alternatives::EncodeF32BitsToBf16(high)) {
        ++mismatches;
        atomicCAS(&tally->first_input, 0xFFFFFFFFu, high);
      }
    }
  }
  atomicAdd(&tally->checked, checked);
  atomicAdd(&tally->mismatches, mismatches);
}

TEST(TcGemmOperand, HardwareBf16PairRoundingIsTheModelsOnEveryFp32) {
  LOWBIT_REQUIRE_GPU();
  Tally* tally = nullptr;
  ASSERT_EQ(cudaMallocManaged(&tally, sizeof(Tally)), cudaSuccess);
  *tally = Tally{0, 0, 0xFFFFFFFFu};
  CompareEveryInput<<<4096, 256>>>(tally);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // Every input in each half, less the 2 x (2^23 - 1) NaNs.
  const unsigned long long non_nan = (1ull << 32) - 2 * ((1ull << 23) - 1);
  EXPECT_EQ(tally->checked, 2 * non_nan);
  EXPECT_EQ(tally->mismatches, 0u) << "first mismatching FP32 input 0x" << std::hex << tally->first_input;
  cudaFree(tally);
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemm
