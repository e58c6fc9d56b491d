// The device proof behind element_ops.cuh HalfFloatAlternative: for each
// cuda-sw conversion it stands in for (FP32 -> BF16 / FP16, BF16 / FP16 ->
// FP32, as encodes and as decodes) under the default options and a few more
// that its predicate accepts, every input (all 2^32 FP32 inputs, all 2^16
// codes) through cuda::Convert with CurrentLayout (the alternative) equals
// the same inputs through the model per element (LayoutVariant::kReplaced,
// whose policy has no kHalfFloatAlternatives), compared on the GPU; and the
// current layout does take the alternative (the same predicate convert.cu
// asks). The host compilation is compared with the host model by
// proptests/backends/alternatives_test.cc (AlternativeHalfFloats.*); the
// device model equals the host model by
// CudaSoftware.DeviceModelEqualsHostModelForEveryFormat.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dispatch.cuh"
#include "gpu_test_util.h"
#include "layout.cuh"
#include "layout_variants.h"
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;

constexpr std::size_t kChunk = std::size_t{1} << 28;
constexpr std::size_t kCodes = std::size_t{1} << 16;

template <typename T>
__global__ void FillCodes(T* x, std::uint32_t first, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] = static_cast<T>(first + static_cast<std::uint32_t>(i));
  }
}

struct Mismatches {
  unsigned long long count;
  unsigned long long first;  // the smallest differing index
};

template <typename T>
__global__ void Compare(const T* a, const T* b, std::size_t n, Mismatches* m) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (a[i] != b[i]) {
      atomicAdd(&m->count, 1ull);
      atomicMin(&m->first, static_cast<unsigned long long>(i));
    }
  }
}

// Whether convert.cu's cuda-sw path takes HalfFloatAlternative for this
// request under `Layout`: the same predicate on the functor dispatch.cuh picks.
template <typename Layout>
bool TakesAlternative(ElementOp op, FormatId format, const EncodeOptions& encode, const DecodeOptions& decode) {
  bool takes = false;
  const bool visited = detail::VisitSoftware(op, format, encode, decode, nullptr, [&](auto f) {
    takes = detail::TakesHalfFloatAlternative<Layout>(f);
  });
  return visited && takes;
}

struct Case {
  ElementOp op;
  FormatId format;
  EncodeOptions encode;
  DecodeOptions decode;
  std::string what;
};

// The six rows of the benchmark (default options), then option sets the
// predicates also accept: for the widenings, other rounding, overflow and
// Inf policies (the widening is exact; saturation keeps Inf only with
// InfInput::kAlwaysNonFinite).
std::vector<Case> Cases() {
  std::vector<Case> cases = {
      {ElementOp::kEncodeF32, FormatId::kBf16, {}, {}, "encode-f32 bf16 (default)"},
      {ElementOp::kEncodeF32, FormatId::kFp16, {}, {}, "encode-f32 fp16 (default)"},
      {ElementOp::kEncodeBf16, FormatId::kFp32, {}, {}, "encode-bf16 fp32 (default)"},
      {ElementOp::kEncodeF16, FormatId::kFp32, {}, {}, "encode-f16 fp32 (default)"},
      {ElementOp::kDecodeToF32, FormatId::kBf16, {}, {}, "decode-to-f32 bf16 (default)"},
      {ElementOp::kDecodeToF32, FormatId::kFp16, {}, {}, "decode-to-f32 fp16 (default)"},
  };
  EncodeOptions toward_zero;
  toward_zero.rounding = RoundingMode::kTowardZero;
  EncodeOptions saturate_keep_inf;
  saturate_keep_inf.overflow = Overflow::kSaturate;
  saturate_keep_inf.inf_input = InfInput::kAlwaysNonFinite;
  for (ElementOp op : {ElementOp::kEncodeBf16, ElementOp::kEncodeF16}) {
    const std::string source = op == ElementOp::kEncodeBf16 ? "bf16" : "f16";
    cases.push_back({op, FormatId::kFp32, toward_zero, {}, "encode-" + source + " fp32 (toward zero)"});
    cases.push_back({op, FormatId::kFp32, saturate_keep_inf, {}, "encode-" + source + " fp32 (saturate, Inf kept)"});
  }
  return cases;
}

// The source codes of a case are 4 bytes (FP32 encodes) or 2.
bool Fp32Source(const Case& c) { return c.op == ElementOp::kEncodeF32; }

TEST(CudaHalfFloatAlternatives, TheCurrentLayoutTakesTheAlternativeAndTheReplacedOneTheModel) {
  for (const Case& c : Cases()) {
    EXPECT_TRUE(TakesAlternative<detail::CurrentLayout>(c.op, c.format, c.encode, c.decode)) << c.what;
    EXPECT_TRUE(TakesAlternative<detail::StreamingHintsLayout>(c.op, c.format, c.encode, c.decode)) << c.what;
    EXPECT_FALSE(TakesAlternative<detail::ReplacedLayout>(c.op, c.format, c.encode, c.decode)) << c.what;
  }
}

// Options outside the proven ones take the model per element.
TEST(CudaHalfFloatAlternatives, UnprovenOptionsTakeTheModel) {
  using Current = detail::CurrentLayout;
  EncodeOptions saturate;
  saturate.overflow = Overflow::kSaturate;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF32, FormatId::kFp16, saturate, {}));
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeBf16, FormatId::kFp32, saturate, {}));
  EncodeOptions toward_zero;
  toward_zero.rounding = RoundingMode::kTowardZero;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF32, FormatId::kBf16, toward_zero, {}));
  EncodeOptions stochastic;
  stochastic.rounding = RoundingMode::kStochastic;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF32, FormatId::kBf16, stochastic, {}));
  EncodeOptions quiet_only;
  quiet_only.nan_payload = NanPayload::kQuietOnly;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF32, FormatId::kFp16, quiet_only, {}));
  EncodeOptions positive_zero;
  positive_zero.keep_negative_zero = false;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF16, FormatId::kFp32, positive_zero, {}));
  DecodeOptions hardware_nan = HardwareDecodeOptions(FormatId::kFp16);  // +0x7FFFFFFF
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kDecodeToF32, FormatId::kFp16, {}, hardware_nan));
  DecodeOptions preserve;
  preserve.nan_payload = NanPayload::kPreserve;
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kDecodeToF32, FormatId::kBf16, {}, preserve));
  // Other destinations and sources keep their own paths.
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeF32, FormatId::kE4m3, {}, {}));
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kEncodeBf16, FormatId::kFp16, {}, {}));
  EXPECT_FALSE(TakesAlternative<Current>(ElementOp::kDecodeToBf16, FormatId::kFp16, {}, {}));
}

// `count` codes at `input` (offset `in_offset` bytes, `out_offset` bytes on
// the outputs) through the current and the replaced layout; adds the
// mismatches to *total (its `first` the smallest differing index + base).
template <typename Out>
void CompareLayouts(const Case& c, const DeviceBuffer& input, std::size_t in_offset, std::size_t count,
                    const DeviceBuffer& current_out, const DeviceBuffer& replaced_out, std::size_t out_offset,
                    const DeviceBuffer& mismatches, std::uint64_t base, Mismatches* total) {
  ConvertRequest r;
  r.op = c.op;
  r.format = c.format;
  r.backend = Backend::kSoftware;
  r.encode = c.encode;
  r.decode = c.decode;
  r.input = static_cast<const char*>(input.get()) + in_offset;
  r.count = count;
  Out* current = reinterpret_cast<Out*>(static_cast<char*>(current_out.get()) + out_offset);
  Out* replaced = reinterpret_cast<Out*>(static_cast<char*>(replaced_out.get()) + out_offset);
  r.output = current;
  Status s = Convert(r, LayoutVariant::kCurrent);
  ASSERT_TRUE(s.ok) << c.what << ": " << s.message;
  r.output = replaced;
  s = Convert(r, LayoutVariant::kReplaced);
  ASSERT_TRUE(s.ok) << c.what << ": " << s.message;
  Mismatches zero{0, ~0ull};
  LOWBIT_CUDA_OK(cudaMemcpy(mismatches.get<void>(), &zero, sizeof(zero), cudaMemcpyHostToDevice));
  Compare<Out><<<1024, 256>>>(current, replaced, count, mismatches.get<Mismatches>());
  Mismatches m{};
  LOWBIT_CUDA_OK(cudaMemcpy(&m, mismatches.get<void>(), sizeof(m), cudaMemcpyDeviceToHost));
  if (m.count != 0 && total->count == 0) total->first = base + m.first;
  total->count += m.count;
}

TEST(CudaHalfFloatAlternatives, EveryInputEqualsTheModelPerElement) {
  LOWBIT_REQUIRE_GPU();
  DeviceBuffer in(kChunk * 4), current_out(kChunk * 4), replaced_out(kChunk * 4), mismatches(sizeof(Mismatches));
  int fp32_sweeps = 0, code_sweeps = 0;
  for (const Case& c : Cases()) {
    ASSERT_TRUE(TakesAlternative<detail::CurrentLayout>(c.op, c.format, c.encode, c.decode)) << c.what;
    Mismatches total{0, ~0ull};
    if (Fp32Source(c)) {
      // Every FP32 bit pattern, 2^28 at a time (16-byte aligned: the vector
      // units of FlatMapKernel with the functor's Two).
      for (std::uint64_t first = 0; first < (std::uint64_t{1} << 32); first += kChunk) {
        FillCodes<std::uint32_t><<<1024, 256>>>(in.get<std::uint32_t>(), static_cast<std::uint32_t>(first), kChunk);
        CompareLayouts<std::uint16_t>(c, in, 0, kChunk, current_out, replaced_out, 0, mismatches, first, &total);
      }
      ++fp32_sweeps;
      EXPECT_EQ(total.count, 0u) << c.what << ": first differing FP32 input 0x" << std::hex << total.first;
    } else {
      // Every 16-bit code, aligned (vector units), and again one element
      // off 16-byte alignment (MapKernel's scalar loop, the functor's One).
      FillCodes<std::uint16_t><<<256, 256>>>(in.get<std::uint16_t>(), 0, kCodes + 1);
      CompareLayouts<std::uint32_t>(c, in, 0, kCodes, current_out, replaced_out, 0, mismatches, 0, &total);
      CompareLayouts<std::uint32_t>(c, in, 2, kCodes, current_out, replaced_out, 4, mismatches, 1, &total);
      ++code_sweeps;
      EXPECT_EQ(total.count, 0u) << c.what << ": first differing code 0x" << std::hex << total.first;
    }
  }
  EXPECT_EQ(fp32_sweeps, 2);  // FP32 -> BF16, FP32 -> FP16
  EXPECT_EQ(code_sweeps, 8);  // BF16 / FP16 -> FP32: encodes and decodes, defaults and two more sets
}

}  // namespace
}  // namespace lowbit::cuda
