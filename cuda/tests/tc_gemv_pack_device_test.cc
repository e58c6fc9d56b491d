// The tensor-core GEMV's device packer (cuda/src/tc_matmul/tc_gemv_pack_device.h)
// against the host packer (tc_gemv_pack.h PackForTcGemv), byte for byte in
// all four buffers: on random shapes (N not a multiple of 16, K not a
// multiple of 128, L > 1, a W shared across the batch), NVFP4, MXFP4 and UINT4,
// flat blocks and per-row blocks, scales plain and not (zero, subnormal,
// NaN, E8M0 above 2^1). The output buffers are filled with a pattern first,
// twice with two patterns, so that a byte the kernel leaves unwritten shows;
// their tails past the packed size must keep the pattern. Bad input gets the
// host packer's line. The comparisons need a GPU (SKIPPED without one); the
// refusals that come before any CUDA call run everywhere.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"
#include "tc_gemv_cases.h"
#include "tc_matmul/tc_gemv.h"
#include "tc_matmul/tc_gemv_pack.h"
#include "tc_matmul/tc_gemv_pack_device.h"

namespace lowbit::cuda::tc_gemv {
namespace {

using ::lowbit::cuda::testing::DeviceVector;
using matmul::WeightFormat;

// Bytes past the packed size in each output buffer: left alone.
constexpr std::int64_t kTail = 48;

// Case `c` in device memory: its view with device pointers.
struct DeviceCase {
  DeviceVector<std::uint8_t> codes, scales, zeros;
  DeviceVector<recipe::TensorScale> tensor_scales;
  matmul::WeightView w;
  explicit DeviceCase(const testing::GemvCase& c, const matmul::WeightView& host)
      : codes(c.codes), scales(c.scales), zeros(c.zeros), tensor_scales(c.tensor_scales), w(host) {
    w.codes = codes.p;
    w.scales = scales.p;
    w.zeros = c.zeros.empty() ? nullptr : zeros.p;
    w.tensor_scale = c.tensor_scales.empty() ? nullptr : tensor_scales.p;
  }
};

// What the two packers wrote, as bytes.
struct Packed {
  std::vector<std::uint8_t> codes, scales, column_scales, plain_tiles;
};

std::vector<std::uint8_t> Bytes(const void* device, std::int64_t bytes) {
  std::vector<std::uint8_t> h(static_cast<std::size_t>(bytes));
  EXPECT_EQ(cudaMemcpy(h.data(), device, h.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// Packs `w` on the device into buffers pre-filled with `fill` (kTail more
// bytes each than PackedSizesOf says), on a stream of its own; checks the
// tails kept `fill` and returns the packed extents.
Packed PackOnDevice(const matmul::WeightView& w, std::uint8_t fill, const std::string& label) {
  const PackedSizes sizes = PackedSizesOf(w.n, w.k, w.batch, PackedCodecOf(w));
  const std::int64_t bytes[4] = {sizes.code_bytes, sizes.scale_bytes, sizes.column_scales * 4, sizes.plain_tiles};
  DeviceVector<std::uint8_t> codes(static_cast<std::size_t>(bytes[0] + kTail)),
      scales(static_cast<std::size_t>(bytes[1] + kTail)), columns(static_cast<std::size_t>(bytes[2] + kTail)),
      plain(static_cast<std::size_t>(bytes[3] + kTail));
  std::uint8_t* buffers[4] = {codes.p, scales.p, columns.p, plain.p};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(cudaMemset(buffers[i], fill, static_cast<std::size_t>(bytes[i] + kTail)), cudaSuccess);
  DevicePackTarget out;
  out.codes = codes.p;
  out.code_bytes = bytes[0] + kTail;
  out.scales = scales.p;
  out.scale_bytes = bytes[1] + kTail;
  out.column_scales = reinterpret_cast<float*>(columns.p);
  out.column_scale_count = sizes.column_scales + kTail / 4;
  out.plain_tiles = plain.p;
  out.plain_tile_count = bytes[3] + kTail;
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const char* why = PackForTcGemvOnDevice(w, out, stream);
  EXPECT_EQ(why, nullptr) << label << ": " << (why != nullptr ? why : "");
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << label;
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  Packed p;
  std::vector<std::uint8_t>* parts[4] = {&p.codes, &p.scales, &p.column_scales, &p.plain_tiles};
  for (int i = 0; i < 4; ++i) {
    std::vector<std::uint8_t> all = Bytes(buffers[i], bytes[i] + kTail);
    for (std::int64_t t = bytes[i]; t < bytes[i] + kTail; ++t) {
      EXPECT_EQ(all[static_cast<std::size_t>(t)], fill) << label << ": buffer " << i << " written past its size at " << t;
    }
    all.resize(static_cast<std::size_t>(bytes[i]));
    *parts[i] = std::move(all);
  }
  return p;
}

Packed HostBytes(const PackedWeights& h) {
  Packed p{h.codes, h.scales, std::vector<std::uint8_t>(h.column_scales.size() * 4), h.plain_tiles};
  if (!h.column_scales.empty()) std::memcpy(p.column_scales.data(), h.column_scales.data(), p.column_scales.size());
  return p;
}

// The first differing byte of each buffer, as failures.
void ExpectSameBytes(const Packed& device, const Packed& host, const std::string& label) {
  const char* names[4] = {"codes", "scales", "column scales", "plain tiles"};
  const std::vector<std::uint8_t>* d[4] = {&device.codes, &device.scales, &device.column_scales, &device.plain_tiles};
  const std::vector<std::uint8_t>* h[4] = {&host.codes, &host.scales, &host.column_scales, &host.plain_tiles};
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(d[i]->size(), h[i]->size()) << label << " " << names[i];
    ASSERT_FALSE(h[i]->empty()) << label << " " << names[i];
    for (std::size_t b = 0; b < h[i]->size(); ++b) {
      if ((*d[i])[b] != (*h[i])[b]) {
        ADD_FAILURE() << label << ": " << names[i] << " byte " << b << " device 0x" << std::hex << int{(*d[i])[b]}
                      << ", host 0x" << int{(*h[i])[b]};
        break;
      }
    }
  }
}

// Scale bytes the kernel's plain path does not take, and the edges of the
// ones it does, written over some of a case's scales.
void SprinkleScaleSpecials(std::mt19937& rng, testing::GemvCase* c) {
  const bool nvfp4 = c->format == WeightFormat::kNvfp4;
  // UE4M3: zero, subnormals, NaN, smallest normal; E8M0: 2^-127, 2^1, above
  // 2^1 (not plain), NaN.
  static constexpr std::uint8_t kUe4m3[] = {0x00, 0x01, 0x07, 0x7F, 0x08, 0x7E};
  static constexpr std::uint8_t kE8m0[] = {0x00, 0x80, 0x81, 0xFE, 0xFF};
  for (std::uint8_t& s : c->scales) {
    if (rng() % 16 == 0) s = nvfp4 ? kUe4m3[rng() % 6] : kE8m0[rng() % 5];
  }
}

struct Shape {
  std::int64_t n, k, batch;
};

TEST(TcGemvPackDevice, EveryByteOfTheFourBuffersIsTheHostPackers) {
  LOWBIT_REQUIRE_GPU();
  static constexpr Shape kShapes[] = {
      {1, 1, 1},     {7, 20, 1},     {17, 128, 2},  {33, 136, 3},   {16, 300, 1},  {5, 520, 2},
      {70, 96, 1},   {3, 1000, 2},   {40, 256, 1},  {9, 33, 2},     {257, 2100, 1}, {129, 640, 3},
      {300, 1056, 2}, {1000, 3000, 1}, {48, 4096, 2}, {4100, 192, 1},
  };
  std::mt19937 rng(20261206);
  int compared = 0, plain_tiles = 0, table_tiles = 0, flat = 0, row_groups = 0, multi = 0, shared = 0;
  for (const WeightFormat format : {WeightFormat::kNvfp4, WeightFormat::kMxfp4}) {
    for (const Shape& s : kShapes) {
      for (const bool specials : {false, true}) {
        testing::GemvCase c = testing::DrawCase(rng, format, s.n, s.k, 1, s.batch, specials);
        if (specials) SprinkleScaleSpecials(rng, &c);
        matmul::WeightView host = c.View();
        // Every second multi-batch case shares batch 0's W across the batch
        // (batch strides 0), as an expert shared by all tokens.
        if (s.batch > 1 && multi++ % 2 == 1) {
          const matmul::WeightBufferSizes per = matmul::PerBatchSizes(host);
          host.codes_batch_stride = host.scales_batch_stride = host.tensor_scale_batch_stride = 0;
          host.codes_count = per.codes;
          host.scales_count = per.scales;
          host.tensor_scale_count = per.tensor_scales;
          ++shared;
        }
        (c.geometry == matmul::ScaleGeometry::kFlatBlocks ? flat : row_groups) += 1;
        const std::string label = c.Describe() + (host.codes_batch_stride == 0 && s.batch > 1 ? " shared" : "");
        const PackedWeights want = PackForTcGemv(host);
        ASSERT_EQ(want.error, "") << label;
        for (const std::uint8_t p : want.plain_tiles) (p != 0 ? plain_tiles : table_tiles) += 1;
        DeviceCase d(c, host);
        for (const std::uint8_t fill : {std::uint8_t{0xA5}, std::uint8_t{0x5A}}) {
          ExpectSameBytes(PackOnDevice(d.w, fill, label), HostBytes(want), label);
        }
        // The owner packs the same bytes and describes them as RunTcGemv wants.
        DeviceTcGemvWeights owner(nullptr);
        const char* why = owner.Pack(d.w);
        ASSERT_EQ(why, nullptr) << label << ": " << why;
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const DeviceWeights& dw = owner.weights();
        EXPECT_EQ(dw.format, want.format);
        EXPECT_EQ(dw.scale_type, want.scale_type);
        EXPECT_EQ(dw.block, want.block);
        EXPECT_EQ(dw.n, want.n);
        EXPECT_EQ(dw.k, want.k);
        EXPECT_EQ(dw.batch, want.batch);
        EXPECT_EQ(dw.row_tiles, want.row_tiles);
        EXPECT_EQ(dw.k_tiles, want.k_tiles);
        Packed owned{Bytes(dw.codes, static_cast<std::int64_t>(want.codes.size())),
                     Bytes(dw.scales, static_cast<std::int64_t>(want.scales.size())),
                     Bytes(dw.column_scales, static_cast<std::int64_t>(want.column_scales.size() * 4)),
                     Bytes(dw.plain_tiles, static_cast<std::int64_t>(want.plain_tiles.size()))};
        ExpectSameBytes(owned, HostBytes(want), label + " (DeviceTcGemvWeights)");
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 2 * 16 * 2);
  // UINT4 in the GPTQ and AWQ packings, FP16 and BF16 scales, with and
  // without zero points, N past a row tile, groups of 128 and 256, L = 2.
  int uint4 = 0;
  for (const matmul::WeightPacking packing : {matmul::WeightPacking::kGptq, matmul::WeightPacking::kAwq}) {
    for (const matmul::ScaleType type : {matmul::ScaleType::kFp16, matmul::ScaleType::kBf16}) {
      for (const Shape& s : {Shape{8, 128, 1}, Shape{24, 512, 2}, Shape{1000, 1280, 1}}) {
        const testing::GemvCase c =
            testing::DrawUint4Case(rng, packing, type, s.n, s.k, s.k % 256 == 0 ? 256 : 128, 1, s.batch, uint4 % 2 == 1);
        const PackedWeights want = PackForTcGemv(c.View());
        ASSERT_EQ(want.error, "") << c.Describe();
        DeviceCase d(c, c.View());
        ExpectSameBytes(PackOnDevice(d.w, 0xA5, c.Describe()), HostBytes(want), c.Describe());
        ++uint4;
      }
    }
  }
  EXPECT_EQ(uint4, 12);
  // MXFP8 and FP8 per channel: two parts of codes a tile, NaN codes (their
  // tiles' flags 0), N past a row tile, K tails, L = 2.
  int e4m3 = 0, e4m3_table_tiles = 0;
  for (const WeightFormat format : {WeightFormat::kMxfp8E4m3, WeightFormat::kFp8E4m3PerChannel}) {
    for (const Shape& s : {Shape{7, 20, 1}, Shape{33, 136, 2}, Shape{257, 2100, 1}, Shape{300, 1056, 2}}) {
      const testing::GemvCase c = testing::DrawE4m3Case(rng, format, s.n, s.k, 1, s.batch, e4m3 % 2 == 1);
      const PackedWeights want = PackForTcGemv(c.View());
      ASSERT_EQ(want.error, "") << c.Describe();
      for (const std::uint8_t p : want.plain_tiles) e4m3_table_tiles += p == 0;
      DeviceCase d(c, c.View());
      ExpectSameBytes(PackOnDevice(d.w, 0xA5, c.Describe()), HostBytes(want), c.Describe());
      ++e4m3;
    }
  }
  EXPECT_EQ(e4m3, 8);
  EXPECT_GT(e4m3_table_tiles, 0);
  // Both kinds of tile, both geometries and shared weights were compared.
  EXPECT_GT(plain_tiles, 0);
  EXPECT_GT(table_tiles, 0);
  EXPECT_GT(flat, 0);
  EXPECT_GT(row_groups, 0);
  EXPECT_GT(shared, 0);
}

// A valid view of host buffers that each test below breaks in one way.
struct HostCase {
  testing::GemvCase c;
  matmul::WeightView w;
  HostCase() {
    std::mt19937 rng(3);
    c = testing::DrawCase(rng, WeightFormat::kNvfp4, 20, 64, 1, 2, false);
    w = c.View();
  }
};

// Output buffers large enough for HostCase (host memory: the refusals below
// all come before anything reads or writes them).
struct HostTarget {
  alignas(16) std::uint8_t codes[4096];
  alignas(16) std::uint8_t scales[1024];
  std::uint8_t plain[64];
  float columns[128];
  DevicePackTarget out;
  HostTarget() {
    out = {codes, sizeof(codes), scales, sizeof(scales), columns, 128, plain, sizeof(plain)};
  }
};

// Every refusal of the host packer is the device packer's, line for line
// (both run PackError first); runs without a GPU.
TEST(TcGemvPackDevice, RefusesWhatTheHostRefusesWithTheSameLine) {
  std::vector<std::pair<std::string, matmul::WeightView>> bad;
  const HostCase base;
  auto add = [&](const char* what, auto change) {
    matmul::WeightView w = base.w;
    change(w);
    bad.emplace_back(what, w);
  };
  add("N = 0", [](matmul::WeightView& w) { w.n = 0; });
  add("K = -1", [](matmul::WeightView& w) { w.k = -1; });
  add("batch 0", [](matmul::WeightView& w) { w.batch = 0; });
  add("int4", [](matmul::WeightView& w) {  // valid weights, no codec for them
    w.format = WeightFormat::kInt4;
    w.scale_type = matmul::ScaleType::kFp32;
    w.block = 16;
    w.geometry = matmul::ScaleGeometry::kRowGroups;
    w.scales_batch_stride = 20 * 4;
    w.scales_count = 2 * 20 * 4;
    w.tensor_scale = nullptr;
    w.tensor_scale_count = 0;
    w.tensor_scale_batch_stride = 0;
  });
  add("nvfp4 blocks of 32", [](matmul::WeightView& w) { w.block = 32; });
  add("uint4 in lowbit's packing", [](matmul::WeightView& w) {  // valid weights, not the kernel's packing
    w.format = WeightFormat::kUint4;
    w.scale_type = matmul::ScaleType::kFp32;
    w.block = 16;
    w.geometry = matmul::ScaleGeometry::kRowGroups;
    w.scales_batch_stride = 20 * 4;
    w.scales_count = 2 * 20 * 4;
    w.tensor_scale = nullptr;
    w.tensor_scale_count = 0;
    w.tensor_scale_batch_stride = 0;
  });
  add("flat blocks across rows", [](matmul::WeightView& w) {
    w.geometry = matmul::ScaleGeometry::kFlatBlocks;
    w.k = 40;
    w.codes_count = w.batch * 20 * 40 / 2;
    w.codes_batch_stride = 20 * 40 / 2;
    w.scales_count = w.batch * 20 * 40 / 16;
    w.scales_batch_stride = 20 * 40 / 16;
  });
  add("scales one short", [](matmul::WeightView& w) { --w.scales_count; });
  add("codes null", [](matmul::WeightView& w) { w.codes = nullptr; });
  add("no tensor scale", [](matmul::WeightView& w) { w.tensor_scale = nullptr; });
  HostTarget target;
  std::set<std::string> lines;
  for (const auto& [what, w] : bad) {
    const PackedWeights host = PackForTcGemv(w);
    ASSERT_FALSE(host.error.empty()) << what << ": the host packer takes it";
    const char* device = PackForTcGemvOnDevice(w, target.out, nullptr);
    ASSERT_NE(device, nullptr) << what;
    EXPECT_EQ(std::string(device), host.error) << what;
    DeviceTcGemvWeights owner(nullptr);
    const char* owned = owner.Pack(w);
    ASSERT_NE(owned, nullptr) << what;
    EXPECT_EQ(std::string(owned), host.error) << what;
    lines.insert(host.error);
  }
  EXPECT_EQ(bad.size(), 10u);
  // ValidateWeights' lines and PackProblem's both among them.
  EXPECT_EQ(lines.count("the tensor-core GEMV takes nvfp4, mxfp4, mxfp8_e4m3, e4m3/row or uint4 weights"), 1u);
  EXPECT_EQ(lines.count("the tensor-core GEMV takes uint4 weights in the gptq or awq packing"), 1u);
  EXPECT_EQ(lines.count("flat blocks that run across rows (K not a multiple of the block) are not supported by the "
                        "tensor-core GEMV: quantize per row (/g layout)"),
            1u);
  EXPECT_EQ(lines.count("N = 0 is not positive"), 1u);
  EXPECT_EQ(lines.size(), bad.size()) << "each broken view refused for its own reason";
}

// The device packer's own checks of its outputs (the host packer sizes its
// own); runs without a GPU.
TEST(TcGemvPackDevice, RefusesShortNullOrMisalignedOutputs) {
  const HostCase base;
  ASSERT_EQ(PackForTcGemv(base.w).error, "");
  const PackedSizes sizes = PackedSizesOf(base.w.n, base.w.k, base.w.batch, PackedCodecOf(base.w));
  ASSERT_EQ(sizes.code_bytes, 2 * 2 * 1 * CodeBytesPerTile(TileCodec::kNvfp4));  // L = 2, 2 row tiles, 1 K tile
  HostTarget t;
  DevicePackTarget out = t.out;
  out.code_bytes = sizes.code_bytes - 1;
  EXPECT_STREQ(PackForTcGemvOnDevice(base.w, out, nullptr),
               ("the packed codes buffer holds " + std::to_string(sizes.code_bytes - 1) + " bytes, the weights need " +
                std::to_string(sizes.code_bytes))
                   .c_str());
  out = t.out;
  out.scales = t.scales + 8;
  EXPECT_STREQ(PackForTcGemvOnDevice(base.w, out, nullptr), "the packed scales buffer is not aligned to 16 bytes");
  out = t.out;
  out.column_scale_count = sizes.column_scales - 1;
  EXPECT_STREQ(PackForTcGemvOnDevice(base.w, out, nullptr),
               ("the packed column scales buffer holds " + std::to_string(sizes.column_scales - 1) +
                " floats, the weights need " + std::to_string(sizes.column_scales))
                   .c_str());
  out = t.out;
  out.plain_tiles = nullptr;
  EXPECT_STREQ(PackForTcGemvOnDevice(base.w, out, nullptr), "the packed plain tiles buffer is null");
  // A W shared across so many batch entries that its packed copy overflows.
  matmul::WeightView huge = base.w;
  huge.codes_batch_stride = huge.scales_batch_stride = huge.tensor_scale_batch_stride = 0;
  huge.batch = std::int64_t{1} << 60;
  huge.codes_count = matmul::PerBatchSizes(huge).codes;
  huge.scales_count = matmul::PerBatchSizes(huge).scales;
  huge.tensor_scale_count = 1;
  ASSERT_EQ(matmul::ValidateWeights(huge).error, "");
  EXPECT_STREQ(PackForTcGemvOnDevice(huge, t.out, nullptr), "the packed weights' size overflows 64 bits");
}

// Weights or outputs in plain host memory are refused before the kernel
// would touch them.
TEST(TcGemvPackDevice, RefusesWeightsInHostMemory) {
  LOWBIT_REQUIRE_GPU();
  const HostCase base;
  const PackedSizes sizes = PackedSizesOf(base.w.n, base.w.k, base.w.batch, PackedCodecOf(base.w));
  DeviceVector<std::uint8_t> codes(static_cast<std::size_t>(sizes.code_bytes)),
      scales(static_cast<std::size_t>(sizes.scale_bytes)), plain(static_cast<std::size_t>(sizes.plain_tiles));
  DeviceVector<float> columns(static_cast<std::size_t>(sizes.column_scales));
  DevicePackTarget out{codes.p,   sizes.code_bytes,      scales.p, sizes.scale_bytes,
                       columns.p, sizes.column_scales, plain.p,  sizes.plain_tiles};
  EXPECT_STREQ(PackForTcGemvOnDevice(base.w, out, nullptr), "the weight codes are not device memory");
  DeviceCase d(base.c, base.w);
  matmul::WeightView host_scales = d.w;
  host_scales.scales = base.w.scales;
  EXPECT_STREQ(PackForTcGemvOnDevice(host_scales, out, nullptr), "the weight scales are not device memory");
  matmul::WeightView host_tensor_scale = d.w;
  host_tensor_scale.tensor_scale = base.w.tensor_scale;
  EXPECT_STREQ(PackForTcGemvOnDevice(host_tensor_scale, out, nullptr), "the tensor scale is not device memory");
  HostTarget t;
  EXPECT_STREQ(PackForTcGemvOnDevice(d.w, t.out, nullptr), "a packed buffer is not device memory");
  EXPECT_EQ(PackForTcGemvOnDevice(d.w, out, nullptr), nullptr);
  // The owner checks the weights before it allocates, and packs once.
  DeviceTcGemvWeights host_owner(nullptr);
  EXPECT_STREQ(host_owner.Pack(base.w), "the weight codes are not device memory");
  DeviceTcGemvWeights owner(nullptr);
  EXPECT_EQ(owner.Pack(d.w), nullptr);
  EXPECT_STREQ(owner.Pack(d.w), "these packed weights are already packed (one Pack per object)");
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace lowbit::cuda::tc_gemv
