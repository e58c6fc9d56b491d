// The device proof behind model_recipe.cu AlternativeElementArithmetic: on
// every FP32 pattern, the device compilation of each named alternative
// equals the device compilation of the model's own step, compared as bits
// (alternatives/round_to_integer.h against recipe::RoundToIntegerF32 under
// round to nearest even; alternatives/f16_rounded.h against
// recipe::F16RoundedF32). The host compilations are compared by
// proptests/backends/round_to_integer_test.cc and f16_rounded_test.cc; this
// test covers what nvcc makes of them (the build's --fmad=false and
// -ftz=false are what keep (y + 1.5 * 2^23) - 1.5 * 2^23 two rounded FP32
// operations on normals and subnormals alike).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "gpu_test_util.h"
#include "lowbit/formats/alternatives/f16_rounded.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/block/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;

struct Mismatches {
  unsigned long long count;
  unsigned long long first;  // the smallest differing pattern
};

enum class Step { kRoundToInteger, kF16Rounded };

template <Step kStep>
__global__ void CompareEveryPattern(Mismatches* m) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t p = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < (std::uint64_t{1} << 32); p += stride) {
    const float v = block::F32FromBits(static_cast<std::uint32_t>(p));
    std::uint32_t alternative, model;
    if constexpr (kStep == Step::kRoundToInteger) {
      alternative = block::F32Bits(alternatives::RoundToIntegerNearestEvenF32(v));
      model = block::F32Bits(recipe::RoundToIntegerF32(v, RoundingMode::kNearestEven));
    } else {
      alternative = block::F32Bits(alternatives::F16RoundedF32Alternative(v));
      model = block::F32Bits(recipe::F16RoundedF32(v));
    }
    if (alternative != model) {
      atomicAdd(&m->count, 1ull);
      atomicMin(&m->first, static_cast<unsigned long long>(p));
    }
  }
}

template <Step kStep>
Mismatches Sweep() {
  DeviceBuffer m(sizeof(Mismatches));
  const Mismatches start{0, ~0ull};
  EXPECT_EQ(cudaMemcpy(m.get<Mismatches>(), &start, sizeof start, cudaMemcpyHostToDevice), cudaSuccess);
  CompareEveryPattern<kStep><<<132 * 16, 256>>>(m.get<Mismatches>());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  Mismatches out{};
  EXPECT_EQ(cudaMemcpy(&out, m.get<Mismatches>(), sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

TEST(CudaElementArithmeticAlternatives, RoundToIntegerEqualsTheDeviceModelOnEveryFp32Pattern) {
  LOWBIT_REQUIRE_GPU();
  const Mismatches m = Sweep<Step::kRoundToInteger>();
  EXPECT_EQ(m.count, 0ull) << "first differing pattern 0x" << std::hex << m.first;
}

TEST(CudaElementArithmeticAlternatives, F16RoundedEqualsTheDeviceModelOnEveryFp32Pattern) {
  LOWBIT_REQUIRE_GPU();
  const Mismatches m = Sweep<Step::kF16Rounded>();
  EXPECT_EQ(m.count, 0ull) << "first differing pattern 0x" << std::hex << m.first;
}

}  // namespace
}  // namespace lowbit::cuda
