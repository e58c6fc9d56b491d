// Weights packed once for the tensor-core GEMV (lowbit/cuda/tensor_core_gemv.h):
// every output of repeated calls, M = 1..16 in any order on one workspace,
// bit for bit against the matrix model under the schedule the object
// declares; the calls after the first overlap the previous kernel, and each
// call's x is written by a copy kernel just before it. Bad input gets one
// line. The comparisons need a GPU (SKIPPED without one); the refusals that
// come before any CUDA call run everywhere.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/tensor_core_gemv.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "tc_gemv_cases.h"

namespace lowbit::cuda {
namespace {

using ::lowbit::cuda::testing::DeviceVector;
using matmul::WeightFormat;

struct Shape {
  std::int64_t n, k, batch;
};

TEST(PackedTensorCoreWeights, RepeatedCallsOfAnyMEqualTheModel) {
  LOWBIT_REQUIRE_GPU();
  // Splits 1 (K of one tile), 2-4 and more than 4 (ScheduleOf), L > 1.
  static constexpr Shape kShapes[] = {{40, 100, 1}, {300, 2600, 1}, {129, 5000, 2}, {1000, 8192, 1}};
  const int threads = static_cast<int>(std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1);
  std::mt19937 rng(61206);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  int calls = 0;
  for (const WeightFormat format :
       {WeightFormat::kNvfp4, WeightFormat::kMxfp4, WeightFormat::kMxfp8E4m3, WeightFormat::kFp8E4m3PerChannel}) {
    const bool e4m3 = format == WeightFormat::kMxfp8E4m3 || format == WeightFormat::kFp8E4m3PerChannel;
    for (const Shape& s : kShapes) {
      // One W; x drawn for M = 16 and cut for the smaller M.
      const tc_gemv::testing::GemvCase c =
          e4m3 ? tc_gemv::testing::DrawE4m3Case(rng, format, s.n, s.k, 16, s.batch, calls % 3 == 1)
               : tc_gemv::testing::DrawCase(rng, format, s.n, s.k, 16, s.batch, calls % 3 == 1);
      DeviceVector<std::uint8_t> codes(c.codes), scales(c.scales);
      DeviceVector<recipe::TensorScale> tensor_scales(c.tensor_scales);
      matmul::WeightView w = c.View();
      w.codes = codes.p;
      w.scales = scales.p;
      w.tensor_scale = c.tensor_scales.empty() ? nullptr : tensor_scales.p;
      std::string error = "not run";
      const auto packed = PackedTensorCoreWeights::Pack(w, stream, &error);
      ASSERT_NE(packed, nullptr) << c.Describe() << ": " << error;
      EXPECT_EQ(error, "");
      EXPECT_EQ(packed->n(), s.n);
      EXPECT_EQ(packed->k(), s.k);
      EXPECT_EQ(packed->batch(), s.batch);
      EXPECT_EQ(packed->format(), format);
      for (const std::int64_t m : {16, 1, 3, 16, 9}) {
        for (const matmul::OutputType out : {matmul::OutputType::kFp32, matmul::OutputType::kBf16}) {
          std::vector<std::uint16_t> x(static_cast<std::size_t>(s.batch * m * s.k));
          for (std::int64_t l = 0; l < s.batch; ++l) {
            for (std::int64_t i = 0; i < m * s.k; ++i) {
              x[static_cast<std::size_t>(l * m * s.k + i)] = c.x[static_cast<std::size_t>(l * 16 * s.k + i)];
            }
          }
          const matmul::AccumulationSchedule schedule = packed->Schedule(out);
          const matmul::QuantizedMatmulResult model =
              matmul::QuantizedMatmulModel(c.View(), x.data(), matmul::ActivationType::kBf16, m, schedule, threads);
          ASSERT_EQ(model.error, "") << c.Describe();
          // x reaches the device by a copy on the same stream just before the call.
          DeviceVector<std::uint16_t> dx(x.size());
          DeviceVector<std::uint32_t> y(static_cast<std::size_t>(s.batch * m * s.n));
          ASSERT_EQ(cudaMemsetAsync(dx.p, 0xFF, x.size() * 2, stream), cudaSuccess);
          ASSERT_EQ(cudaMemcpyAsync(dx.p, x.data(), x.size() * 2, cudaMemcpyHostToDevice, stream), cudaSuccess);
          EXPECT_EQ(packed->Gemv(dx.p, m, out, y.p, stream), "") << c.Describe() << " M=" << m;
          ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
          ++calls;
          std::vector<std::uint32_t> got = y.Get(static_cast<std::size_t>(s.batch * m * s.n));
          if (out != matmul::OutputType::kFp32) {
            std::vector<std::uint16_t> half(got.size());
            ASSERT_EQ(cudaMemcpy(half.data(), y.p, half.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
            for (std::size_t i = 0; i < half.size(); ++i) got[i] = half[i];
          }
          ASSERT_EQ(got.size(), model.y.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i], model.y[i]) << c.Describe() << " M=" << m << " split " << schedule.split_k << " output " << i;
          }
        }
      }
    }
  }
  EXPECT_EQ(calls, 4 * 4 * 5 * 2);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// Bad input: one line each (no CUDA call is made before the refusal).
TEST(PackedTensorCoreWeights, RefusesBadWeightsWithOneLine) {
  std::mt19937 rng(3);
  const tc_gemv::testing::GemvCase c = tc_gemv::testing::DrawCase(rng, WeightFormat::kNvfp4, 16, 64, 1, 1, false);
  matmul::WeightView mxfp8_ue4m3 = c.View();  // MXFP8 codes with NVFP4's scale type: not a weight
  mxfp8_ue4m3.format = WeightFormat::kMxfp8E4m3;
  matmul::WeightView no_codes = c.View();
  no_codes.codes = nullptr;
  for (const matmul::WeightView& w : {mxfp8_ue4m3, no_codes}) {
    std::string error;
    EXPECT_EQ(PackedTensorCoreWeights::Pack(w, nullptr, &error), nullptr);
    EXPECT_NE(error, "");
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace lowbit::cuda
