// The tensor-core GEMV on the GPU (cuda/src/tc_matmul/tc_gemv.cu): every
// output bit for bit against matmul::QuantizedMatmulModel under the schedule
// the kernel declares, on the cases the host warp simulation draws
// (tc_gemv_cases.h) plus larger shapes; and the device's decode of every code
// x scale against the model's weight operand. Without a GPU these report
// SKIPPED (the bad-input test runs everywhere: it launches nothing).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <thread>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/formats/matmul/quantized_matmul.h"
#include "tc_gemv_cases.h"
#include "tc_matmul/tc_gemv.h"
#include "tc_matmul/tc_gemv_lanes.h"
#include "tc_matmul/tc_gemv_pack.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using ::lowbit::cuda::testing::DeviceVector;
using matmul::WeightFormat;

int HostThreads() {
  return static_cast<int>(std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1);
}

// The model's outputs for case `c` under `schedule` (x: `x`, default the case's).
std::vector<std::uint32_t> ModelOutputs(const testing::GemvCase& c, const matmul::AccumulationSchedule& schedule,
                                        const std::vector<std::uint16_t>* x = nullptr) {
  const matmul::QuantizedMatmulResult model = matmul::QuantizedMatmulModel(
      c.View(), (x ? *x : c.x).data(), c.Activation(), c.m, schedule, HostThreads());
  EXPECT_EQ(model.error, "") << c.Describe();
  return model.y;
}

// A case's weights packed by the host packer and copied to the device.
struct UploadedWeights {
  explicit UploadedWeights(const PackedWeights& packed)
      : codes(packed.codes), scales(packed.scales), column_scales(packed.column_scales), plain_tiles(packed.plain_tiles) {
    static_cast<PackedShape&>(view) = packed;
    view.codes = codes.p;
    view.scales = scales.p;
    view.column_scales = column_scales.p;
    view.plain_tiles = plain_tiles.p;
  }
  DeviceVector<std::uint8_t> codes, scales;
  DeviceVector<float> column_scales;
  DeviceVector<std::uint8_t> plain_tiles;
  DeviceWeights view;
};

// Runs the kernel on one case with split `split` (0: ScheduleOf's) and
// checks every output; returns the kernel's outputs (empty when it failed to run).
std::vector<std::uint32_t> RunAndExpectModel(const testing::GemvCase& c, int split, matmul::OutputType output,
                                             const LaunchOptions& options = {}) {
  const matmul::WeightView w = c.View();
  matmul::AccumulationSchedule schedule = ScheduleOf(c.format, c.View().scale_type, c.n, c.k, c.batch, output);
  if (split > 0) schedule.split_k = split;
  const matmul::QuantizedMatmulResult model =
      matmul::QuantizedMatmulModel(w, c.x.data(), c.Activation(), c.m, schedule, HostThreads());
  EXPECT_EQ(model.error, "") << c.Describe();
  const PackedWeights packed = PackForTcGemv(w);
  EXPECT_EQ(packed.error, "") << c.Describe();
  if (!model.error.empty() || !packed.error.empty()) return {};

  const UploadedWeights uploaded(packed);
  const DeviceWeights& dw = uploaded.view;
  DeviceVector<std::uint16_t> x(c.x);
  const std::int64_t outputs = c.batch * c.m * c.n;
  DeviceVector<std::uint32_t> y32(static_cast<std::size_t>(outputs));
  const std::int64_t workspace_floats = WorkspaceFloats(dw, c.m, schedule.split_k);
  DeviceVector<float> workspace(static_cast<std::size_t>(workspace_floats > 0 ? workspace_floats : 1));
  const char* error = RunTcGemv(dw, x.p, c.m, schedule, y32.p, workspace.p, workspace_floats, nullptr, options);
  EXPECT_EQ(error, nullptr) << c.Describe() << ": " << (error ? error : "");
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.Describe();
  if (error != nullptr) return {};
  // The split-K counters (the workspace's head, before the parts) are zero again.
  if (workspace_floats > 0) {
    const std::vector<float> after = workspace.Get(static_cast<std::size_t>(workspace_floats));
    const std::int64_t counters = workspace_floats - c.batch * schedule.split_k * c.m * c.n;
    EXPECT_EQ(counters, c.batch * matmul::CeilDiv(dw.row_tiles, kWarpsPerBlock)) << c.Describe();
    for (std::int64_t i = 0; i < counters; ++i) {
      std::uint32_t word;
      std::memcpy(&word, &after[static_cast<std::size_t>(i)], sizeof(word));
      EXPECT_EQ(word, 0u) << c.Describe() << " counter " << i;
    }
  }
  std::vector<std::uint32_t> y(static_cast<std::size_t>(outputs));
  if (output == matmul::OutputType::kFp32) {
    y = y32.Get(static_cast<std::size_t>(outputs));
  } else {
    std::vector<std::uint16_t> y16(static_cast<std::size_t>(outputs));
    EXPECT_EQ(cudaMemcpy(y16.data(), y32.p, y16.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::size_t i = 0; i < y16.size(); ++i) y[i] = y16[i];
  }
  int shown = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (y[i] != model.y[i] && shown++ < 5) {
      ADD_FAILURE() << c.Describe() << " split " << schedule.split_k << " part sums "
                    << static_cast<int>(options.part_sums) << ": output " << i << " (l, m, n = "
                    << i / (c.m * c.n) << ", " << (i / c.n) % c.m << ", " << i % c.n << ") GPU 0x" << std::hex << y[i]
                    << ", model 0x" << model.y[i];
    }
  }
  return y;
}

std::int64_t ExpectKernelEqualsModel(const testing::GemvCase& c, int split, matmul::OutputType output) {
  return static_cast<std::int64_t>(RunAndExpectModel(c, split, output).size());
}

// Batch invariance: row r of the M = 16 product `c16` (FP32 outputs, each
// against the model) has the bits of the M = 1 product of x's row r.
void ExpectRowsDoNotDependOnM(const testing::GemvCase& c16, std::initializer_list<std::int64_t> rows) {
  ASSERT_EQ(c16.m, 16);
  const std::vector<std::uint32_t> y16 = RunAndExpectModel(c16, 0, matmul::OutputType::kFp32);
  ASSERT_EQ(y16.size(), static_cast<std::size_t>(16 * c16.n));
  for (const std::int64_t row : rows) {
    testing::GemvCase c1 = c16;
    c1.m = 1;
    c1.x.assign(c16.x.begin() + row * c16.k, c16.x.begin() + (row + 1) * c16.k);
    const std::vector<std::uint32_t> y1 = RunAndExpectModel(c1, 0, matmul::OutputType::kFp32);
    ASSERT_EQ(y1.size(), static_cast<std::size_t>(c16.n));
    for (std::size_t n = 0; n < y1.size(); ++n) {
      ASSERT_EQ(y1[n], y16[static_cast<std::size_t>(row * c16.n) + n]) << c16.Describe() << " row " << row << " n " << n;
    }
  }
}

struct Shape {
  std::int64_t n, k, m, batch;
};

// The run-th case of a test that varies the launch: split 0 (ScheduleOf's),
// 1, 2 (part sums in a cluster and in the workspace, alternately), 3, 5 in
// turn, and the output types in turn; returns the outputs compared.
std::int64_t RunVaried(const testing::GemvCase& c, int run) {
  using PartSums = LaunchOptions::PartSums;
  static constexpr int kSplits[] = {0, 1, 2, 3, 5};
  const int split = kSplits[run % 5];
  LaunchOptions options;
  options.part_sums = split == 2 && run % 2 ? PartSums::kCluster : split == 2 ? PartSums::kWorkspace : PartSums::kAuto;
  return static_cast<std::int64_t>(RunAndExpectModel(c, split, testing::OutputOfRun(run), options).size());
}

TEST(TcGemvGpu, EveryOutputEqualsTheModel) {
  LOWBIT_REQUIRE_GPU();
  static constexpr Shape kShapes[] = {
      {1, 16, 1, 1},    {7, 20, 3, 1},      {17, 128, 16, 1},  {33, 136, 1, 2},   {16, 300, 9, 1},
      {5, 520, 8, 1},   {70, 96, 3, 1},     {3, 1000, 16, 1},  {40, 256, 1, 1},   {9, 33, 16, 2},
      {257, 2100, 1, 1}, {1000, 3000, 16, 1}, {4100, 2064, 1, 1}, {129, 5000, 3, 2}, {2048, 1024, 16, 1},
  };
  std::mt19937 rng(20261206);
  std::int64_t compared = 0;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    for (const Shape& s : kShapes) {
      for (const bool specials : {false, true}) {
        const testing::GemvCase c = testing::DrawCase(rng, format, s.n, s.k, s.m, s.batch, specials);
        compared += ExpectKernelEqualsModel(c, 0, matmul::OutputType::kFp32);
      }
    }
  }
  EXPECT_GT(compared, 0);
}

// UINT4 (GPTQ and AWQ words, FP16 scales with FP16 x, BF16 with BF16 x):
// every output against the model, N multiples of 8 from 8 to 4104, K of 128
// up to 4992, groups of 128 and 256, M 1 / 3 / 9 / 16, L = 2, every output
// type, splits 1, 2 (both part sums), 3, 5 and ScheduleOf's.
TEST(TcGemvGpu, Uint4EveryOutputEqualsTheModel) {
  LOWBIT_REQUIRE_GPU();
  struct Uint4Shape {
    std::int64_t n, k, group, m, batch;
  };
  static constexpr Uint4Shape kShapes[] = {{8, 128, 128, 1, 1},    {24, 256, 128, 3, 2},   {40, 512, 256, 16, 1},
                                           {136, 384, 128, 9, 1},  {1000, 4992, 128, 1, 1}, {4104, 2048, 256, 16, 1},
                                           {512, 1280, 128, 1, 2}};
  std::mt19937 rng(20261207);
  std::int64_t compared = 0;
  int runs = 0;
  for (const matmul::WeightPacking packing : {matmul::WeightPacking::kGptq, matmul::WeightPacking::kAwq}) {
    for (const matmul::ScaleType type : {matmul::ScaleType::kFp16, matmul::ScaleType::kBf16}) {
      for (const Uint4Shape& s : kShapes) {
        for (const bool specials : {false, true}) {
          const testing::GemvCase c = testing::DrawUint4Case(rng, packing, type, s.n, s.k, s.group, s.m, s.batch, specials);
          compared += RunVaried(c, runs);
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 56);
  EXPECT_GT(compared, 0);
}

// MXFP8 and FP8 per channel: every output against the model on the 4-bit
// shapes, NaN codes in some blocks (their tiles take the table path),
// extreme scales, every output type, splits 1, 2 (both part sums), 3, 5
// and ScheduleOf's.
TEST(TcGemvGpu, E4m3EveryOutputEqualsTheModel) {
  LOWBIT_REQUIRE_GPU();
  static constexpr Shape kShapes[] = {
      {1, 16, 1, 1},    {7, 20, 3, 1},      {17, 128, 16, 1},  {33, 136, 1, 2},   {16, 300, 9, 1},
      {5, 520, 8, 1},   {70, 96, 3, 1},     {3, 1000, 16, 1},  {40, 256, 1, 1},   {9, 33, 16, 2},
      {257, 2100, 1, 1}, {1000, 3000, 16, 1}, {4100, 2064, 1, 1}, {129, 5000, 3, 2}, {2048, 1024, 16, 1},
  };
  std::mt19937 rng(20261208);
  std::int64_t compared = 0;
  int runs = 0;
  for (const WeightFormat format : {WeightFormat::kMxfp8E4m3, WeightFormat::kFp8E4m3PerChannel}) {
    for (const Shape& s : kShapes) {
      for (const bool specials : {false, true}) {
        const testing::GemvCase c = testing::DrawE4m3Case(rng, format, s.n, s.k, s.m, s.batch, specials);
        compared += RunVaried(c, runs);
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 60);
  EXPECT_GT(compared, 0);
}

TEST(TcGemvGpu, E4m3RowsDoNotDependOnM) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(9);
  for (const WeightFormat format : {WeightFormat::kMxfp8E4m3, WeightFormat::kFp8E4m3PerChannel}) {
    ExpectRowsDoNotDependOnM(testing::DrawE4m3Case(rng, format, 500, 3000, 16, 1, false), {0, 9, 15});
  }
}

// UINT4 rows of y do not depend on M (the schedule is a function of N, K
// and L): row r of an M = 16 product equals the M = 1 product of x's row r.
TEST(TcGemvGpu, Uint4RowsDoNotDependOnM) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(8);
  for (const matmul::ScaleType type : {matmul::ScaleType::kFp16, matmul::ScaleType::kBf16}) {
    ExpectRowsDoNotDependOnM(testing::DrawUint4Case(rng, matmul::WeightPacking::kGptq, type, 504, 3072, 128, 16, 1, false),
                             {0, 7, 15});
  }
}

TEST(TcGemvGpu, EverySplitAndOutputType) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(11);
  using PartSums = LaunchOptions::PartSums;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    // 2..kMaxClusterParts: the parts meet in a thread-block cluster or in
    // the workspace (both forced, and the automatic choice); more: in the
    // workspace. Splits 8 and 64 run at M = 16 (16-warp blocks), 9 at M = 3.
    for (const int split : {1, 2, 3, 4, 5, 8, 9, 64}) {
      for (const matmul::OutputType out :
           {matmul::OutputType::kFp32, matmul::OutputType::kBf16, matmul::OutputType::kFp16}) {
        const testing::GemvCase c = testing::DrawCase(rng, format, 300, 2600, split % 2 ? 3 : 16, 1, split == 3);
        for (const PartSums sums : {PartSums::kAuto, PartSums::kCluster, PartSums::kWorkspace}) {
          if (sums != PartSums::kAuto && (split < 2 || split > kMaxClusterParts)) continue;
          LaunchOptions options;
          options.part_sums = sums;
          EXPECT_GT(static_cast<std::int64_t>(RunAndExpectModel(c, split, out, options).size()), 0);
        }
      }
    }
  }
}

// Overlapped calls (LaunchOptions::overlap_previous_kernel) read x and use
// the workspace only after the previous kernel on the stream has finished.
// One layer's BF16 output is the next layer's x, its buffer first filled
// with NaN codes that a read before the first layer's stores would carry
// into the outputs; the first layer is long and narrow (16 blocks, no
// split), so the second layer's blocks find free SMs while it runs. Then
// two more overlapped calls: one sharing the second's workspace, one whose
// parts add in a cluster.
TEST(TcGemvGpu, OverlappedCallsWaitForThePreviousKernel) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(7);
  const testing::GemvCase first = testing::DrawCase(rng, WeightFormat::kNvfp4, 2048, 32768, 1, 1, false);
  testing::GemvCase second = testing::DrawCase(rng, WeightFormat::kMxfp4, 1000, 2048, 1, 1, false);
  matmul::AccumulationSchedule first_schedule = ScheduleOf(first.format, first.View().scale_type, first.n, first.k, 1, matmul::OutputType::kBf16);
  first_schedule.split_k = 1;
  const std::vector<std::uint32_t> first_model = ModelOutputs(first, first_schedule);
  ASSERT_EQ(first_model.size(), 2048u);
  second.x.assign(first_model.begin(), first_model.end());  // BF16 codes
  matmul::AccumulationSchedule workspace_schedule = ScheduleOf(second.format, second.View().scale_type, second.n, second.k, 1, matmul::OutputType::kFp32);
  workspace_schedule.split_k = 9;
  matmul::AccumulationSchedule cluster_schedule = workspace_schedule;
  cluster_schedule.split_k = 3;
  // One part: the grid whose dependent-launch trigger comes after its main
  // loop (tc_gemv.cu KernelParams::trigger_after_loop).
  matmul::AccumulationSchedule one_part_schedule = workspace_schedule;
  one_part_schedule.split_k = 1;
  const std::vector<std::uint32_t> workspace_model = ModelOutputs(second, workspace_schedule);
  const std::vector<std::uint32_t> cluster_model = ModelOutputs(second, cluster_schedule);
  const std::vector<std::uint32_t> one_part_model = ModelOutputs(second, one_part_schedule);

  const UploadedWeights first_weights(PackForTcGemv(first.View()));
  const UploadedWeights second_weights(PackForTcGemv(second.View()));
  DeviceVector<std::uint16_t> x(first.x);
  DeviceVector<std::uint16_t> hidden(2048);  // the first layer's y, the second's x
  DeviceVector<std::uint32_t> y0(1000), y1(1000), y2(1000), y3(1000);
  const std::int64_t workspace_floats = WorkspaceFloats(second_weights.view, 1, 9);
  DeviceVector<float> workspace(static_cast<std::size_t>(workspace_floats));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(hidden.p, 0xFF, 2048 * sizeof(std::uint16_t), stream), cudaSuccess);  // NaN codes
  LaunchOptions overlap;
  overlap.overlap_previous_kernel = true;
  LaunchOptions cluster = overlap;
  cluster.part_sums = LaunchOptions::PartSums::kCluster;
  EXPECT_EQ(RunTcGemv(first_weights.view, x.p, 1, first_schedule, hidden.p, nullptr, 0, stream), nullptr);
  EXPECT_EQ(RunTcGemv(second_weights.view, hidden.p, 1, one_part_schedule, y3.p, nullptr, 0, stream, overlap), nullptr);
  EXPECT_EQ(RunTcGemv(second_weights.view, hidden.p, 1, workspace_schedule, y0.p, workspace.p, workspace_floats, stream,
                      overlap),
            nullptr);
  EXPECT_EQ(RunTcGemv(second_weights.view, hidden.p, 1, workspace_schedule, y1.p, workspace.p, workspace_floats, stream,
                      overlap),
            nullptr);
  EXPECT_EQ(RunTcGemv(second_weights.view, hidden.p, 1, cluster_schedule, y2.p, workspace.p, workspace_floats, stream,
                      cluster),
            nullptr);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  std::vector<std::uint16_t> hidden_got = hidden.Get(2048);
  for (std::size_t i = 0; i < hidden_got.size(); ++i) ASSERT_EQ(hidden_got[i], first_model[i]) << "first layer, n " << i;
  const std::vector<std::uint32_t> got[4] = {y0.Get(1000), y1.Get(1000), y2.Get(1000), y3.Get(1000)};
  const std::vector<std::uint32_t>* want[4] = {&workspace_model, &workspace_model, &cluster_model, &one_part_model};
  for (int call = 0; call < 4; ++call) {
    ASSERT_EQ(want[call]->size(), 1000u);
    for (std::size_t n = 0; n < 1000; ++n) ASSERT_EQ(got[call][n], (*want[call])[n]) << "overlapped call " << call << ", n " << n;
  }
}

// Batch invariance: a row of y has the same bits at M = 1 as inside M = 16
// (the GPU's own outputs compared, beside each against the model).
TEST(TcGemvGpu, RowsDoNotDependOnM) {
  LOWBIT_REQUIRE_GPU();
  std::mt19937 rng(5);
  ExpectRowsDoNotDependOnM(testing::DrawCase(rng, WeightFormat::kNvfp4, 500, 3000, 16, 1, false), {0, 5, 15});
}

// The device's decode (the BF16 multiplies) for every code in every pair
// and half of a word times every scale code, against the model's weight
// operand: through the table, and through the plain path for plain codes.
TEST(TcGemvGpu, DecodeOfEveryCodeAndScaleIsTheModelsOperand) {
  LOWBIT_REQUIRE_GPU();
  constexpr FormatSpec kBfloat = kBf16;
  int plain_checked = 0;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    const ScaleType type = format == WeightFormat::kNvfp4 ? ScaleType::kUe4m3 : ScaleType::kE8m0;
    for (const bool plain : {false, true}) {
      DeviceVector<std::uint32_t> out(256 * 128);
      ASSERT_EQ(DecodeEveryPairOnDevice(type, plain, out.p), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const std::vector<std::uint32_t> got = out.Get(256 * 128);
      for (int s = 0; s < 256; ++s) {
        if (plain && !ScaleIsPlain(format == WeightFormat::kNvfp4 ? TileCodec::kNvfp4 : TileCodec::kMxfp4, static_cast<std::uint32_t>(s))) {
          continue;  // the table's bytes
        }
        plain_checked += plain ? 1 : 0;
        const double scale = DecodeToF64(matmul::ScaleFormatOf(type), static_cast<std::uint64_t>(s));
        for (int i = 0; i < 128; ++i) {
          // Entry i: code i % 16 in pair (i / 16) % 4, half i / 64 (tc_gemv.h).
          const double exact = DecodeToF64(matmul::ElementFormatOf(format), static_cast<std::uint64_t>(i % 16)) * scale;
          const std::uint32_t g = got[static_cast<std::size_t>(s * 128 + i)];
          if (exact != exact) {
            const double v = DecodeToF64(kBfloat, g);
            EXPECT_NE(v, v) << "code " << i % 16 << " scale " << s;
          } else {
            EXPECT_EQ(g, matmul::RoundIntoOperand(kBfloat, exact).code)
                << WeightFormatName(format) << (plain ? " plain" : " table") << " code " << i % 16 << " scale " << s;
          }
        }
      }
    }
  }
  EXPECT_EQ(plain_checked, 0x77 + 129);
}

// The device's UINT4 decode (sub and mul .f16x2 / .bf16x2) for every code
// against zero points 0, 6 and 15 and every FP16 / BF16 scale code: (q - z)
// * s rounded once into the scale's type (the model's operand; NaN = NaN).
TEST(TcGemvGpu, DecodeOfEveryUint4CodeIsTheModelsOperand) {
  LOWBIT_REQUIRE_GPU();
  std::int64_t checked = 0;
  for (const bool fp16 : {false, true}) {
    const FormatSpec type = OperandFormat(fp16);
    const std::size_t count = std::size_t{0x10000} * kUint4DecodeZeros * 16;
    DeviceVector<std::uint32_t> out(count);
    ASSERT_EQ(DecodeEveryUint4OnDevice(fp16, out.p), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<std::uint32_t> got = out.Get(count);
    int failures = 0;
    for (std::uint32_t scale = 0; scale < 0x10000u; ++scale) {
      const double scale_value = DecodeToF64(type, scale);
      for (int zi = 0; zi < kUint4DecodeZeros; ++zi) {
        for (int q = 0; q < 16; ++q) {
          const double exact = static_cast<double>(q - Uint4DecodeZero(zi)) * scale_value;
          const std::uint32_t g = got[(static_cast<std::size_t>(scale) * kUint4DecodeZeros + zi) * 16 + q];
          const bool nan_both = exact != exact && DecodeToF64(type, g) != DecodeToF64(type, g);
          if (!nan_both && g != matmul::RoundIntoOperand(type, exact).code && failures++ < 5) {
            ADD_FAILURE() << (fp16 ? "fp16" : "bf16") << " q " << q << " z " << Uint4DecodeZero(zi) << " scale 0x"
                          << std::hex << scale << ": 0x" << g << ", the model 0x" << matmul::RoundIntoOperand(type, exact).code;
          }
          ++checked;
        }
      }
    }
    EXPECT_EQ(failures, 0);
  }
  EXPECT_EQ(checked, std::int64_t{2} * 0x10000 * kUint4DecodeZeros * 16);
}

// The device's E4M3 decode (the byte permute with sign replication, the
// BF16 multiplies) for every code times every E8M0 scale, each in its own
// chunk, row half, slot and element (E4m3DecodePlaceOf): through the table,
// and through the plain path for plain scales and finite codes.
TEST(TcGemvGpu, DecodeOfEveryE4m3CodeAndScaleIsTheModelsOperand) {
  LOWBIT_REQUIRE_GPU();
  constexpr FormatSpec kBfloat = kBf16;
  std::int64_t checked = 0;
  for (const bool plain : {false, true}) {
    DeviceVector<std::uint32_t> out(256 * 256);
    ASSERT_EQ(DecodeEveryE4m3OnDevice(plain, out.p), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<std::uint32_t> got = out.Get(256 * 256);
    int failures = 0;
    for (int s = 0; s < 256; ++s) {
      if (plain && !ScaleIsPlain(TileCodec::kMxfp8, static_cast<std::uint32_t>(s))) continue;
      const double scale = DecodeToF64(matmul::ScaleFormatOf(ScaleType::kE8m0), static_cast<std::uint64_t>(s));
      for (int code = 0; code < 256; ++code) {
        if (plain && IsE4m3Nan(static_cast<std::uint32_t>(code))) continue;
        const double exact = DecodeToF64(matmul::ElementFormatOf(WeightFormat::kMxfp8E4m3), static_cast<std::uint64_t>(code)) * scale;
        const std::uint32_t g = got[static_cast<std::size_t>(s * 256 + code)];
        const bool nan_both = exact != exact && DecodeToF64(kBfloat, g) != DecodeToF64(kBfloat, g);
        if (!nan_both && g != matmul::RoundIntoOperand(kBfloat, exact).code && failures++ < 5) {
          ADD_FAILURE() << (plain ? "plain" : "table") << " code 0x" << std::hex << code << " scale 0x" << s << ": 0x" << g
                        << ", the model 0x" << matmul::RoundIntoOperand(kBfloat, exact).code;
        }
        ++checked;
      }
    }
    EXPECT_EQ(failures, 0);
  }
  EXPECT_EQ(checked, std::int64_t{256} * 256 + std::int64_t{135} * 254);
}

// Bad input: one line each, nothing launched (runs without a GPU).
TEST(TcGemvGpu, RefusesBadInputWithOneLine) {
  DeviceWeights w;
  w.n = 16;
  w.k = 128;
  w.row_tiles = 1;
  w.k_tiles = 1;
  alignas(16) static std::uint8_t fake[16];
  static float fake_scale = 1.0f;
  static std::uint16_t fake_x[16];
  static std::uint32_t fake_y[16];
  w.codes = fake;
  w.scales = fake;
  w.column_scales = &fake_scale;
  w.plain_tiles = fake;
  const matmul::AccumulationSchedule s = ScheduleOf(w.format, w.scale_type, w.n, w.k, w.batch, matmul::OutputType::kFp32);
  EXPECT_STREQ(RunTcGemv(w, fake_x, 17, s, fake_y, nullptr, 0, nullptr), "the tensor-core GEMV takes M = 1..16");
  EXPECT_STREQ(RunTcGemv(w, nullptr, 1, s, fake_y, nullptr, 0, nullptr), "a buffer is null");
  DeviceWeights e8m0 = w;
  e8m0.scale_type = matmul::ScaleType::kE8m0;
  EXPECT_STREQ(RunTcGemv(e8m0, fake_x, 1, s, fake_y, nullptr, 0, nullptr),
               "the tensor-core GEMV takes nvfp4 (ue4m3 scales), mxfp4 or mxfp8_e4m3 (e8m0), e4m3/row (fp32) or "
               "uint4 (fp16 or bf16 scales) weights");
  DeviceWeights uint4_block = w;  // UINT4 weights packed with a block that is not the codec's
  uint4_block.format = WeightFormat::kUint4;
  uint4_block.scale_type = matmul::ScaleType::kFp16;
  EXPECT_STREQ(RunTcGemv(uint4_block, fake_x, 1, s, fake_y, nullptr, 0, nullptr),
               "the packed block is not the codec's (pack with PackForTcGemv)");
  uint4_block.block = kUint4RecordBlock;  // then the NVFP4 schedule is not its own
  EXPECT_STREQ(RunTcGemv(uint4_block, fake_x, 1, s, fake_y, nullptr, 0, nullptr),
               "the schedule is not the tensor-core GEMV's (ScheduleOf; only split_k may differ)");
  DeviceWeights no_flags = w;
  no_flags.plain_tiles = nullptr;
  EXPECT_STREQ(RunTcGemv(no_flags, fake_x, 1, s, fake_y, nullptr, 0, nullptr), "a buffer is null");
  DeviceWeights long_k = w;
  long_k.k = (std::int64_t{1} << 26) + 1;
  long_k.k_tiles = matmul::CeilDiv(long_k.k, kKTile);
  EXPECT_STREQ(RunTcGemv(long_k, fake_x, 1, s, fake_y, nullptr, 0, nullptr),
               "K is too large for the tensor-core GEMV (at most 2^26)");
  matmul::AccumulationSchedule other = s;
  other.alpha = 2.0f;
  EXPECT_STREQ(RunTcGemv(w, fake_x, 1, other, fake_y, nullptr, 0, nullptr),
               "the schedule is not the tensor-core GEMV's (ScheduleOf; only split_k may differ)");
  other = s;
  other.split_k = 2;
  EXPECT_STREQ(RunTcGemv(w, fake_x, 1, other, fake_y, nullptr, 0, nullptr),
               "split-K needs a workspace of WorkspaceFloats floats");
  // Every split needs its workspace, whether or not its parts add in a
  // cluster on the device at hand (tc_gemv.h).
  EXPECT_EQ(WorkspaceFloats(w, 1, 1), 0);
  EXPECT_EQ(WorkspaceFloats(w, 1, 2), 2 * 16 + 1);
  EXPECT_EQ(WorkspaceFloats(w, 3, 9), 9 * 3 * 16 + 1);
  DeviceWeights many = w;
  many.batch = 70000;
  EXPECT_STREQ(RunTcGemv(many, fake_x, 1, s, fake_y, nullptr, 0, nullptr), "the batch L must be at most 65535");
  DeviceWeights wrong = w;
  wrong.k_tiles = 2;
  EXPECT_STREQ(RunTcGemv(wrong, fake_x, 1, s, fake_y, nullptr, 0, nullptr),
               "the packed tiles do not match N and K (pack with PackForTcGemv)");
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemv
