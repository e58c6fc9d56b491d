// The proof behind cuda/src/threshold_map.cuh: for every format the
// threshold tables take and every option set they are taken for
// (ThresholdProvenOptions), all 2^32 FP32 inputs through cuda::Convert
// (CurrentLayout: the table) equal the same inputs through the model per
// element (LayoutVariant::kReplaced, whose policy has no tables), compared on
// the GPU. The device model equals the host model by
// CudaSoftware.DeviceModelEqualsHostModelForEveryFormat.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "dispatch.cuh"
#include "gpu_test_util.h"
#include "layout_variants.h"
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "threshold_map.cuh"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;

constexpr std::size_t kChunk = std::size_t{1} << 28;

__global__ void FillBits(std::uint32_t* x, std::uint32_t first, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] = first + static_cast<std::uint32_t>(i);
  }
}

struct Mismatches {
  unsigned long long count;
  unsigned long long first;  // the smallest differing index
};

__global__ void Compare(const std::uint8_t* a, const std::uint8_t* b, std::size_t n, Mismatches* m) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (a[i] != b[i]) {
      atomicAdd(&m->count, 1ull);
      atomicMin(&m->first, static_cast<unsigned long long>(i));
    }
  }
}

// Whether convert.cu takes the threshold table for this request: the same
// two predicates, on the functor dispatch.cuh picks.
bool TakesThresholdTable(FormatId format, const EncodeOptions& options) {
  bool applies = false;
  detail::VisitSoftware(ElementOp::kEncodeF32, format, options, DecodeOptions{}, nullptr,
                        [&](auto f) { applies = detail::ThresholdShapeApplies<decltype(f)>(); });
  return applies && detail::ThresholdOptionsProven(Spec(format), options);
}

TEST(CudaThresholdMap, EveryFp32InputEqualsTheModelForEveryFormatAndProvenOptions) {
  LOWBIT_REQUIRE_GPU();
  DeviceBuffer in(kChunk * 4), table_out(kChunk), model_out(kChunk), mismatches(sizeof(Mismatches));
  int formats = 0;
  for (int id = 0; id < kFormatCount; ++id) {
    const FormatId format = static_cast<FormatId>(id);
    if (Spec(format).total_bits > 8) continue;
    ++formats;
    int option_set = 0;
    for (const EncodeOptions& options : detail::ThresholdProvenOptions()) {
      const std::string what = std::string(Spec(format).name) + " option set " + std::to_string(option_set++);
      // Every format of at most 8 bits takes the table under every proven set.
      ASSERT_TRUE(TakesThresholdTable(format, options)) << what;
      Mismatches host{0, ~0ull};
      for (std::uint64_t first = 0; first < (std::uint64_t{1} << 32); first += kChunk) {
        FillBits<<<1024, 256>>>(in.get<std::uint32_t>(), static_cast<std::uint32_t>(first), kChunk);
        ConvertRequest r;
        r.op = ElementOp::kEncodeF32;
        r.format = format;
        r.backend = Backend::kSoftware;
        r.encode = options;
        r.input = in.get<void>();
        r.count = kChunk;
        r.output = table_out.get<void>();
        Status s = Convert(r, LayoutVariant::kCurrent);
        ASSERT_TRUE(s.ok) << what << ": " << s.message;
        r.output = model_out.get<void>();
        s = Convert(r, LayoutVariant::kReplaced);
        ASSERT_TRUE(s.ok) << what << ": " << s.message;
        Mismatches zero{0, ~0ull};
        ASSERT_EQ(cudaMemcpy(mismatches.get<void>(), &zero, sizeof(zero), cudaMemcpyHostToDevice), cudaSuccess);
        Compare<<<1024, 256>>>(table_out.get<std::uint8_t>(), model_out.get<std::uint8_t>(), kChunk,
                               mismatches.get<Mismatches>());
        Mismatches m{};
        ASSERT_EQ(cudaMemcpy(&m, mismatches.get<void>(), sizeof(m), cudaMemcpyDeviceToHost), cudaSuccess);
        if (m.count != 0 && host.count == 0) host.first = first + m.first;
        host.count += m.count;
      }
      EXPECT_EQ(host.count, 0u) << what << ": first differing FP32 input 0x" << std::hex << host.first;
    }
  }
  EXPECT_EQ(formats, 14);  // every format of at most 8 bits in format_list.h
}

// Options outside the proven sets take the model per element (and so stay
// exact without a proof of the table for them).
TEST(CudaThresholdMap, UnprovenOptionsTakeTheModel) {
  EncodeOptions up;
  up.rounding = RoundingMode::kUp;
  EXPECT_FALSE(TakesThresholdTable(FormatId::kE4m3, up));
  EncodeOptions stochastic;
  stochastic.rounding = RoundingMode::kStochastic;
  EXPECT_FALSE(TakesThresholdTable(FormatId::kE4m3, stochastic));
  EncodeOptions no_negative_zero;  // round to nearest even, but a policy no proven set has
  no_negative_zero.keep_negative_zero = false;
  EXPECT_FALSE(TakesThresholdTable(FormatId::kE4m3, no_negative_zero));
  EXPECT_TRUE(TakesThresholdTable(FormatId::kE4m3, EncodeOptions{}));
}

}  // namespace
}  // namespace lowbit::cuda
