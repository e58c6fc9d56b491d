// The tensor-core GEMV's registry rows (cuda/src/tc_matmul/register_tc_gemv.cc),
// reached the way `lowbit verify` reaches them: RegisterCudaBackends, then
// the harness (check::CheckMatmul), which checks a row that declares its
// schedule bit for bit against QuantizedMatmulModel under it; and the way
// Python's lowbit.gemv reaches them on torch CUDA tensors (run_on_device),
// each output bit for bit against the same model. The listing tests are
// host code and run in CI; without a GPU every row must come out SKIPPED,
// never passed; on the GPU every row must pass.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "matmul_rows_on_gpu.h"
#include "lowbit/check/check.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "lowbit/cuda/register.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "tc_gemv_cases.h"
#include "tc_matmul/tc_gemv_lanes.h"
#include "registered_rows.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using registry::MatmulEntry;

registry::Registry& Registered() { return ::lowbit::cuda::testing::ScalarAndCudaRows(); }

std::vector<const MatmulEntry*> TcRows() {
  std::vector<const MatmulEntry*> rows;
  for (const MatmulEntry& e : Registered().MatmulEntries()) {
    if (e.backend == "cuda-tc" && e.operation == registry::MatmulOperation::kGemv) rows.push_back(&e);
  }
  return rows;
}

// The rows: NVFP4, MXFP4, MXFP8 and FP8 per channel in lowbit's packing (BF16
// x), UINT4 in GPTQ's and AWQ's with FP16 scales (FP16 x) and BF16 scales
// (BF16 x), each to three output types.
inline constexpr std::size_t kTcRows = (4 + 4) * 3;

TEST(TcGemvRegister, GemvRowsForEveryCodecAndOutputDeclareTheKernelsSchedule) {
  std::set<std::string> names;
  for (const MatmulEntry* e : TcRows()) {
    names.insert(registry::MatmulRowName(*e));
    EXPECT_EQ(e->operation, registry::MatmulOperation::kGemv);
    const registry::MatmulWeightKind* row_kind = registry::FindMatmulWeightKind(e->weight);
    ASSERT_NE(row_kind, nullptr) << e->weight;
    EXPECT_EQ(e->activation, row_kind->scale_type == matmul::ScaleType::kFp16 ? matmul::ActivationType::kFp16
                                                                              : matmul::ActivationType::kBf16)
        << registry::MatmulRowName(*e);
    ASSERT_TRUE(static_cast<bool>(e->schedule)) << registry::MatmulRowName(*e);
    ASSERT_TRUE(static_cast<bool>(e->refuses));
    const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(e->weight);
    ASSERT_NE(kind, nullptr) << e->weight;
    // A weight shape's schedule is the kernel's, for any M.
    registry::MatmulArgs args;
    args.w.format = kind->format;
    args.w.scale_type = kind->scale_type;
    args.w.n = 4096;
    args.w.k = 7168;
    args.w.batch = 8;
    args.y.type = e->output;
    for (const std::int64_t m : {1, 16}) {
      args.m = m;
      const matmul::AccumulationSchedule s = e->schedule(args);
      const matmul::AccumulationSchedule want = ScheduleOf(kind->format, kind->scale_type, 4096, 7168, 8, e->output);
      EXPECT_EQ(s.split_k, want.split_k);
      EXPECT_EQ(s.output, want.output);
      EXPECT_EQ(s.scale_per_column, want.scale_per_column);
      EXPECT_EQ(s.instruction, want.instruction);
    }
  }
  EXPECT_EQ(names.size(), kTcRows) << "nvfp4, mxfp4, mxfp8_e4m3, e4m3/row and four uint4 kinds, each to bf16, fp16 and fp32";
  const std::vector<const MatmulEntry*> rows = TcRows();
  for (const char* weight : {"nvfp4", "mxfp4", "mxfp8_e4m3", "e4m3/row", "uint4/g128+gptq-fp16", "uint4/g128+gptq-bf16",
                             "uint4/g128+awq-fp16", "uint4/g128+awq-bf16"}) {
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [&](const MatmulEntry* e) { return e->weight == weight; }), 3)
        << weight;
  }
}

TEST(TcGemvRegister, EveryRowPassesOnTheGpuAndIsSkippedWithout) {
  ::lowbit::cuda::testing::ExpectRowsPassOnTheGpuAndAreSkippedWithout(TcRows());
}

TEST(TcGemvRegister, EveryRowTakesDeviceMemory) {
  const std::vector<const MatmulEntry*> rows = TcRows();
  ASSERT_EQ(rows.size(), kTcRows);
  for (const MatmulEntry* e : rows) EXPECT_TRUE(static_cast<bool>(e->run_on_device)) << registry::MatmulRowName(*e);
}

// `count` elements of T in device memory, a copy of `host`.
template <typename T>
struct OnDevice {
  T* p = nullptr;
  explicit OnDevice(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), (host.empty() ? 1 : host.size()) * sizeof(T)), cudaSuccess);
    if (!host.empty()) EXPECT_EQ(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  ~OnDevice() { cudaFree(p); }
};

struct DeviceShape {
  std::int64_t n, k, m, batch;
  std::int64_t x_pad, y_pad;  // extra elements after each row (and after each batch entry): 0 is dense
};

// run_on_device, as Python's lowbit.gemv calls it on torch CUDA tensors: W,
// x and y in device memory, the call queued on a stream of the caller's.
// Every output bit for bit against QuantizedMatmulModel under the row's
// schedule, on dense and on strided x and y; the gaps of a strided y keep
// their bytes, and the gaps of a strided x hold NaN, which would reach y if
// the GEMV read them.
TEST(TcGemvRegister, DeviceMemoryCallsEqualTheModelBitForBit) {
  LOWBIT_REQUIRE_GPU();
  static constexpr DeviceShape kShapes[] = {
      {33, 300, 3, 2, 0, 0}, {70, 1056, 16, 3, 5, 3}, {17, 128, 1, 1, 8, 1}, {300, 2600, 9, 2, 0, 2},
      {129, 40, 8, 2, 3, 0},
  };
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::mt19937 rng(1206);
  const int threads = static_cast<int>(std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1);
  std::int64_t compared = 0;
  int calls = 0;
  for (const MatmulEntry* e : TcRows()) {
    const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(e->weight);
    ASSERT_NE(kind, nullptr);
    const std::size_t y_bytes = matmul::OutputBytes(e->output);
    const bool uint4 = kind->format == matmul::WeightFormat::kUint4;
    const bool e4m3 = kind->format == matmul::WeightFormat::kMxfp8E4m3 || kind->format == matmul::WeightFormat::kFp8E4m3PerChannel;
    for (const DeviceShape& shape : kShapes) {
      // UINT4: N a multiple of 8 and K of 128 (the packing and the kernel).
      const testing::GemvCase c =
          uint4 ? testing::DrawUint4Case(rng, kind->packing, kind->scale_type, (shape.n + 7) / 8 * 8,
                                         (shape.k + 127) / 128 * 128, 128, shape.m, shape.batch, calls % 2 == 1)
          : e4m3 ? testing::DrawE4m3Case(rng, kind->format, shape.n, shape.k, shape.m, shape.batch, calls % 2 == 1)
                 : testing::DrawCase(rng, kind->format, shape.n, shape.k, shape.m, shape.batch, calls % 2 == 1);
      const std::string label = registry::MatmulRowName(*e) + " " + c.Describe() + (shape.x_pad > 0 ? " strided x" : "") +
                                (shape.y_pad > 0 ? " strided y" : "");
      registry::MatmulArgs host;
      host.w = c.View();
      host.m = c.m;
      host.y.type = e->output;
      ASSERT_EQ(e->refuses(host), "") << label;
      const matmul::AccumulationSchedule schedule = e->schedule(host);
      const matmul::QuantizedMatmulResult model =
          matmul::QuantizedMatmulModel(host.w, c.x.data(), c.Activation(), c.m, schedule, threads);
      ASSERT_EQ(model.error, "") << label;

      // x with its gaps NaN, y with its gaps 0xA5.
      const std::int64_t x_row = c.k + shape.x_pad, x_batch = c.m * x_row + shape.x_pad;
      const std::int64_t y_row = c.n + shape.y_pad, y_batch = c.m * y_row + shape.y_pad;
      const std::int64_t x_count = (c.batch - 1) * x_batch + (c.m - 1) * x_row + c.k;
      const std::int64_t y_count = (c.batch - 1) * y_batch + (c.m - 1) * y_row + c.n;
      std::vector<std::uint16_t> x(static_cast<std::size_t>(x_count), 0x7FC1);
      for (std::int64_t l = 0; l < c.batch; ++l) {
        for (std::int64_t r = 0; r < c.m; ++r) {
          for (std::int64_t i = 0; i < c.k; ++i) {
            x[static_cast<std::size_t>(l * x_batch + r * x_row + i)] = c.x[static_cast<std::size_t>((l * c.m + r) * c.k + i)];
          }
        }
      }
      const std::vector<std::uint8_t> y_fill(static_cast<std::size_t>(y_count) * y_bytes, 0xA5);
      OnDevice<std::uint8_t> codes(c.codes), scales(c.scales), zeros(c.zeros), y(y_fill);
      OnDevice<recipe::TensorScale> tensor_scales(c.tensor_scales);
      OnDevice<std::uint16_t> d_x(x);
      registry::MatmulArgs dev = host;
      dev.w.codes = codes.p;
      dev.w.scales = scales.p;
      dev.w.tensor_scale = c.tensor_scales.empty() ? nullptr : tensor_scales.p;
      dev.w.zeros = c.zeros.empty() ? nullptr : zeros.p;
      dev.x.type = c.Activation();
      dev.x.data = d_x.p;
      dev.x.count = x_count;
      dev.x.row_stride = x_row;
      dev.x.batch_stride = x_batch;
      dev.y.data = y.p;
      dev.y.count = y_count;
      dev.y.row_stride = y_row;
      dev.y.batch_stride = y_batch;
      const registry::Status status = e->run_on_device(dev, stream);
      ASSERT_TRUE(status.ok) << label << ": " << status.message;
      ++calls;
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << label;
      std::vector<std::uint8_t> got(y_fill.size());
      ASSERT_EQ(cudaMemcpy(got.data(), y.p, got.size(), cudaMemcpyDeviceToHost), cudaSuccess) << label;
      std::vector<bool> output(static_cast<std::size_t>(y_count), false);
      int shown = 0;
      for (std::int64_t l = 0; l < c.batch; ++l) {
        for (std::int64_t r = 0; r < c.m; ++r) {
          for (std::int64_t col = 0; col < c.n; ++col) {
            const std::size_t at = static_cast<std::size_t>(l * y_batch + r * y_row + col);
            output[at] = true;
            std::uint32_t code = 0;
            std::memcpy(&code, got.data() + at * y_bytes, y_bytes);  // little-endian, as the host reads it
            const std::uint32_t want = model.y[static_cast<std::size_t>((l * c.m + r) * c.n + col)];
            ++compared;
            if (code != want && shown++ < 5) {
              ADD_FAILURE() << label << ": y[" << l << "][" << r << "][" << col << "] device 0x" << std::hex << code
                            << ", model 0x" << want;
            }
          }
        }
      }
      for (std::size_t at = 0; at < output.size(); ++at) {
        if (output[at]) continue;
        for (std::size_t b = 0; b < y_bytes; ++b) {
          ASSERT_EQ(got[at * y_bytes + b], 0xA5) << label << ": the gap at element " << at << " was written";
        }
      }
    }
  }
  EXPECT_EQ(calls, static_cast<int>(kTcRows) * 5);
  EXPECT_GT(compared, 0);
  cudaStreamDestroy(stream);
}

// Host memory handed to the device entry point is refused with one line,
// before anything is launched.
TEST(TcGemvRegister, DeviceEntryRefusesHostMemory) {
  LOWBIT_REQUIRE_GPU();
  const MatmulEntry* e = TcRows().front();
  const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(e->weight);
  ASSERT_NE(kind, nullptr);
  std::mt19937 rng(2);
  const testing::GemvCase c = testing::DrawCase(rng, kind->format, 20, 64, 1, 1, false);
  std::vector<std::uint8_t> y_host(static_cast<std::size_t>(c.n) * matmul::OutputBytes(e->output));
  registry::MatmulArgs args;
  args.w = c.View();
  args.m = 1;
  args.x.type = matmul::ActivationType::kBf16;
  args.x.data = c.x.data();
  args.x.count = c.k;
  args.x.row_stride = c.k;
  args.x.batch_stride = c.k;
  args.y.type = e->output;
  args.y.data = y_host.data();
  args.y.count = c.n;
  args.y.row_stride = c.n;
  args.y.batch_stride = c.n;
  const registry::Status s = e->run_on_device(args, nullptr);
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.message, registry::MatmulRowName(*e) + " (cuda-tc, device memory): x is not device memory");
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemv
