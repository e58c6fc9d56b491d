// The device proof behind element_arithmetic.cuh AlternativeElementArithmetic
// (what model_recipe.cu passes to the model's steps): on every FP32 pattern,
// its device compilation, and that of each alternative's own function,
// equals the device compilation of the model's step, compared as bits
// (RoundToInteger and alternatives/round_to_integer.h against
// recipe::RoundToIntegerF32 under round to nearest even; F16Rounded and
// alternatives/f16_rounded.h against recipe::F16RoundedF32), and
// ClampedElementArithmetic's F16Rounded (the hardware's cvt.rn.f16x2.f32
// and cvt.f32.f16, the model's NaNs) and in-grid RoundToInteger (on the
// patterns of magnitude up to 32767, its domain) likewise. The host compilations are compared by
// proptests/backends/round_to_integer_test.cc and f16_rounded_test.cc; this
// test covers what nvcc makes of them (the build's --fmad=false and
// -ftz=false are what keep (y + 1.5 * 2^23) - 1.5 * 2^23 two rounded FP32
// operations on normals and subnormals alike).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "element_arithmetic.cuh"
#include "gpu_test_util.h"
#include "lowbit/formats/alternatives/f16_rounded.h"
#include "lowbit/formats/alternatives/round_to_integer.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;

struct Mismatches {
  unsigned long long count;
  unsigned long long first;  // the smallest differing pattern
};

enum class Step { kRoundToInteger, kF16Rounded, kClampedRoundToInteger, kClampedF16Rounded };

template <Step kStep>
__global__ void CompareEveryPattern(Mismatches* m) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t p = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < (std::uint64_t{1} << 32); p += stride) {
    const float v = F32FromBits(static_cast<std::uint32_t>(p));
    const detail::AlternativeElementArithmetic kernels_arithmetic;
    std::uint32_t alternative, kernels, model;
    if constexpr (kStep == Step::kRoundToInteger) {
      alternative = F32Bits(alternatives::RoundToIntegerNearestEvenF32(v));
      kernels = F32Bits(kernels_arithmetic.RoundToInteger(v, RoundingMode::kNearestEven));
      model = F32Bits(recipe::RoundToIntegerF32(v, RoundingMode::kNearestEven));
    } else if constexpr (kStep == Step::kF16Rounded) {
      alternative = F32Bits(alternatives::F16RoundedF32Alternative(v));
      kernels = F32Bits(kernels_arithmetic.F16Rounded(v));
      model = F32Bits(recipe::F16RoundedF32(v));
    } else if constexpr (kStep == Step::kClampedRoundToInteger) {
      if (!(F32Abs(v) <= alternatives::kInGridLimit)) continue;  // outside its domain
      model = F32Bits(recipe::RoundToIntegerF32(v, RoundingMode::kNearestEven));
      alternative = F32Bits(alternatives::RoundToIntegerNearestEvenInGrid(v));
      kernels = F32Bits(detail::ClampedElementArithmetic{}.RoundToInteger(v, RoundingMode::kNearestEven));
    } else {
      model = F32Bits(recipe::F16RoundedF32(v));
      alternative = F32Bits(detail::HardwareF16Rounded(v));
      kernels = F32Bits(detail::ClampedElementArithmetic{}.F16Rounded(v));
    }
    if (alternative != model || kernels != model) {
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

TEST(CudaElementArithmeticAlternatives, ClampedRoundToIntegerEqualsTheDeviceModelUpTo32767) {
  LOWBIT_REQUIRE_GPU();
  const Mismatches m = Sweep<Step::kClampedRoundToInteger>();
  EXPECT_EQ(m.count, 0ull) << "first differing pattern 0x" << std::hex << m.first;
}

TEST(CudaElementArithmeticAlternatives, HardwareF16RoundedEqualsTheDeviceModelOnEveryFp32Pattern) {
  LOWBIT_REQUIRE_GPU();
  const Mismatches m = Sweep<Step::kClampedF16Rounded>();
  EXPECT_EQ(m.count, 0ull) << "first differing pattern 0x" << std::hex << m.first;
}

}  // namespace
}  // namespace lowbit::cuda
