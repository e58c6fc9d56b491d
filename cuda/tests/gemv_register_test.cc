// The CUDA GEMV's registry rows (cuda/src/gemv/register_gemv.cc), reached the
// way `lowbit verify` reaches them: through RegisterCudaBackends. The listing
// test is host code and runs in CI (it fails if the hook in
// cuda/src/register_backends.cc is lost); on a GPU every registered row runs
// random problems and must equal the scalar GEMV row (the defined-order
// reference, formats/include/lowbit/formats/matmul/gemv_order.h) bit for bit,
// a NaN equal to any NaN (payloads are not part of the contract), with the
// guard elements after each y row untouched.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_util.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/register.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/matmul/gemv_order.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/registry/matmul_entry.h"
#include "lowbit/registry/registry.h"
#include "registered_rows.h"

namespace lowbit::cuda {
namespace {

using registry::MatmulEntry;
using registry::MatmulOperation;
using registry::MatmulWeightKind;

registry::Registry& Registered() { return ::lowbit::cuda::testing::ScalarAndCudaRows(); }

// The kinds the GEMV takes (GemvViewOf): every kind but lowbit-packed
// integers (those go to the GEMM / scalar rows only).
bool GemvTakes(const MatmulWeightKind& kind) {
  return !(matmul::IsIntegerFormat(kind.format) && kind.packing == matmul::WeightPacking::kLowbit);
}

using RowKey = std::tuple<std::string, int, int>;  // weight, activation, output
std::set<RowKey> GemvRows(const std::string& backend) {
  std::set<RowKey> rows;
  for (const MatmulEntry& e : Registered().MatmulEntries()) {
    if (e.operation == MatmulOperation::kGemv && e.backend == backend) {
      rows.insert({e.weight, static_cast<int>(e.activation), static_cast<int>(e.output)});
    }
  }
  return rows;
}

TEST(CudaGemvRegister, EveryGemvKindHasACudaRowThroughRegisterCudaBackends) {
  std::set<RowKey> want;
  for (const MatmulWeightKind& kind : registry::kMatmulWeightKinds) {
    if (!GemvTakes(kind)) continue;
    for (int act : {static_cast<int>(matmul::ActivationType::kBf16), static_cast<int>(matmul::ActivationType::kFp16)}) {
      for (int out : {static_cast<int>(matmul::OutputType::kBf16), static_cast<int>(matmul::OutputType::kFp16),
                      static_cast<int>(matmul::OutputType::kFp32)}) {
        want.insert({kind.name, act, out});
      }
    }
  }
  EXPECT_EQ(want.size(), 8u * 2u * 3u);  // nvfp4, mxfp4, mxfp8_e4m3, 4 GPTQ/AWQ kinds, e4m3/row
  EXPECT_EQ(GemvRows("cuda"), want);
  // Each has the scalar row it is checked against.
  const std::set<RowKey> scalar = GemvRows("scalar");
  for (const RowKey& k : want) EXPECT_TRUE(scalar.count(k)) << std::get<0>(k);
}

// Scale bits that keep most products finite, with a few specials.
std::uint32_t ScaleBits(std::mt19937_64& r, matmul::ScaleType t) {
  const int roll = static_cast<int>(r() % 64);
  switch (t) {
    case matmul::ScaleType::kUe4m3: return roll == 0 ? 0x7Fu : roll == 1 ? 0u : 0x20u + r() % 0x40u;
    case matmul::ScaleType::kE8m0: return roll == 0 ? 0xFFu : roll == 1 ? 0u : 0x70u + r() % 0x20u;
    case matmul::ScaleType::kFp16: return roll == 0 ? 0x7C00u : 0x2000u + r() % 0x1C00u;
    case matmul::ScaleType::kBf16: return roll == 0 ? 0x7F80u : 0x3A00u + r() % 0x0580u;
    default: {
      const float v = std::ldexp(static_cast<float>(r() % 4096 + 1), static_cast<int>(r() % 16) - 20);
      return BitCast<std::uint32_t>(roll == 0 ? -v : v);
    }
  }
}

struct Problem {
  std::vector<std::uint8_t> code_bytes, scale_bytes;
  std::vector<std::uint32_t> code_words, scale_words, zero_words;
  std::vector<std::uint16_t> scale_halves, x;
  std::vector<recipe::TensorScale> tensor_scales;
  matmul::MatmulProblem p;
};

void MakeProblem(const MatmulEntry& e, const MatmulWeightKind& kind, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::int64_t batch, std::uint64_t seed, Problem* b) {
  std::mt19937_64 r(seed);
  const bool words = kind.packing != matmul::WeightPacking::kLowbit;
  const bool per_row = kind.format == matmul::WeightFormat::kFp8E4m3PerChannel;
  const matmul::ScaleGeometry geometry = per_row ? matmul::ScaleGeometry::kPerRow : matmul::ScaleGeometry::kRowGroups;
  const bool zeros = words && seed % 2 == 0;
  std::uint32_t zero_marker = 0;
  matmul::WeightView w = matmul::DenseWeights(kind.format, kind.packing, geometry, kind.scale_type, n, k, kind.block,
                                              batch, nullptr, nullptr, zeros ? &zero_marker : nullptr, nullptr);
  const matmul::WeightBufferSizes per = matmul::PerBatchSizes(w);
  if (words) {
    b->code_words.resize(static_cast<std::size_t>(per.codes * batch));
    for (auto& v : b->code_words) v = static_cast<std::uint32_t>(r());
  } else {
    b->code_bytes.resize(static_cast<std::size_t>(per.codes * batch));
    for (auto& v : b->code_bytes) v = static_cast<std::uint8_t>(r());
  }
  for (std::int64_t i = 0; i < per.scales * batch; ++i) {
    const std::uint32_t bits = ScaleBits(r, kind.scale_type);
    switch (matmul::ScaleBytes(kind.scale_type)) {
      case 1: b->scale_bytes.push_back(static_cast<std::uint8_t>(bits)); break;
      case 2: b->scale_halves.push_back(static_cast<std::uint16_t>(bits)); break;
      default: b->scale_words.push_back(bits); break;
    }
  }
  if (zeros) {
    for (std::int64_t i = 0; i < per.zeros * batch; ++i) b->zero_words.push_back(static_cast<std::uint32_t>(r()));
  }
  if (kind.format == matmul::WeightFormat::kNvfp4) {
    for (std::int64_t l = 0; l < batch; ++l) {
      const float t = std::ldexp(static_cast<float>(r() % (1 << 20) + 1), static_cast<int>(r() % 9) - 26);
      b->tensor_scales.push_back({1.0f / t, t});
    }
  }
  // Finite activations of moderate size, some zeros and one NaN in 512.
  b->x.resize(static_cast<std::size_t>(batch * m * k));
  const bool bf16 = e.activation == matmul::ActivationType::kBf16;
  for (auto& v : b->x) {
    const int roll = static_cast<int>(r() % 512);
    const std::uint16_t sign = static_cast<std::uint16_t>((r() & 1) << 15);
    if (roll == 0) {
      v = bf16 ? 0x7FC0u : 0x7E00u;
    } else if (roll < 8) {
      v = sign;
    } else {
      v = static_cast<std::uint16_t>(sign | (bf16 ? 0x3C00u + r() % 0x0600u : 0x3000u + r() % 0x1400u));
    }
  }
  const void* codes = words ? static_cast<const void*>(b->code_words.data()) : b->code_bytes.data();
  const void* scales = !b->scale_bytes.empty()    ? static_cast<const void*>(b->scale_bytes.data())
                       : !b->scale_halves.empty() ? static_cast<const void*>(b->scale_halves.data())
                                                  : static_cast<const void*>(b->scale_words.data());
  b->p.w = matmul::DenseWeights(kind.format, kind.packing, geometry, kind.scale_type, n, k, kind.block, batch, codes,
                                scales, zeros ? b->zero_words.data() : nullptr,
                                b->tensor_scales.empty() ? nullptr : b->tensor_scales.data());
  b->p.m = m;
  b->p.x.type = e.activation;
  b->p.x.data = b->x.data();
  b->p.x.count = static_cast<std::int64_t>(b->x.size());
  b->p.x.row_stride = k;
  b->p.x.batch_stride = m * k;
}

constexpr std::int64_t kGuard = 3;  // guard elements after each y row
constexpr std::uint32_t kGuardBits = 0xA5A5A5A5u;

// y as 32-bit words (the low half for BF16 / FP16 is read back from halves).
struct Output {
  std::vector<std::uint32_t> words;
  std::vector<std::uint16_t> halves;
  void Attach(matmul::MatmulProblem* p, matmul::OutputType t) {
    const std::int64_t stride = p->w.n + kGuard;
    // The buffer has guards after every row, the last included; y.count is
    // what the shape needs (matmul::Validate asks for exactly that).
    const std::int64_t size = p->w.batch * p->m * stride;
    p->y.type = t;
    p->y.row_stride = stride;
    p->y.batch_stride = p->m * stride;
    p->y.count = (p->w.batch - 1) * p->y.batch_stride + (p->m - 1) * stride + p->w.n;
    if (t == matmul::OutputType::kFp32) {
      words.assign(static_cast<std::size_t>(size), kGuardBits);
      p->y.data = words.data();
    } else {
      halves.assign(static_cast<std::size_t>(size), static_cast<std::uint16_t>(kGuardBits));
      p->y.data = halves.data();
    }
  }
  std::int64_t Size() const { return static_cast<std::int64_t>(words.empty() ? halves.size() : words.size()); }
  std::uint32_t At(std::int64_t i) const {
    return words.empty() ? halves[static_cast<std::size_t>(i)] : words[static_cast<std::size_t>(i)];
  }
};

TEST(CudaGemvRegister, RegisteredRowsEqualTheScalarRowsBitForBit) {
  LOWBIT_REQUIRE_GPU();
  // K not a multiple of 16, 32 or 128 (even and a multiple of 8, as the 4-bit
  // rows and GPTQ need), N a multiple of 8 for GPTQ / AWQ, M = 1, 3, 16, L = 2.
  struct Shape {
    std::int64_t m, n, k, batch;
  };
  constexpr Shape kShapes[] = {{1, 24, 200, 2}, {3, 40, 456, 1}, {16, 16, 136, 1}};
  int rows = 0;
  for (const MatmulEntry& e : Registered().MatmulEntries()) {
    if (e.operation != MatmulOperation::kGemv || e.backend != "cuda") continue;
    ++rows;
    ASSERT_TRUE(e.available()) << "a GPU is present";
    const MatmulEntry* scalar = Registered().FindMatmul(MatmulOperation::kGemv, e.weight, e.activation, e.output, "scalar");
    ASSERT_NE(scalar, nullptr) << registry::MatmulRowName(e);
    const MatmulWeightKind* kind = registry::FindMatmulWeightKind(e.weight);
    ASSERT_NE(kind, nullptr) << e.weight;
    std::uint64_t seed = 1;
    for (const Shape& s : kShapes) {
      Problem b;
      MakeProblem(e, *kind, s.m, s.n, s.k, s.batch, seed++, &b);
      Output want, have;
      matmul::MatmulProblem pw = b.p, ph = b.p;
      want.Attach(&pw, e.output);
      have.Attach(&ph, e.output);
      const std::string label = registry::MatmulRowName(e) + " M=" + std::to_string(s.m) + " N=" +
                                std::to_string(s.n) + " K=" + std::to_string(s.k) + " L=" + std::to_string(s.batch);
      const registry::Status sw = scalar->run(pw);
      ASSERT_TRUE(sw.ok) << label << ": scalar: " << sw.message;
      const registry::Status sh = e.run(ph);
      ASSERT_TRUE(sh.ok) << label << ": cuda: " << sh.message;
      const FormatSpec out = matmul::OutputFormatOf(e.output);
      int bad = 0;
      for (std::int64_t i = 0; i < want.Size(); ++i) {
        const std::uint32_t a = want.At(i), g = have.At(i);
        const bool nan = std::isnan(DecodeToF64(out, a)) && std::isnan(DecodeToF64(out, g));
        if (a != g && !(nan && i % pw.y.row_stride < s.n)) {
          if (++bad <= 3) ADD_FAILURE() << label << " element " << i << ": scalar 0x" << std::hex << a << " cuda 0x" << g;
        }
      }
      EXPECT_EQ(bad, 0) << label;
    }
  }
  EXPECT_EQ(rows, 8 * 2 * 3);
}

// A copy of a host buffer in device memory, freed at scope exit.
struct DeviceCopy {
  void* p = nullptr;
  DeviceCopy(const void* host, std::size_t bytes) {
    if (host == nullptr || bytes == 0) return;
    EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceCopy() {
    if (p != nullptr) cudaFree(p);
  }
};

// run_on_device (what the Python package calls for torch CUDA tensors: the
// buffers already on the GPU, the launch on a stream) writes what the row's
// host-memory run writes, bit for bit, NVFP4's per-batch tensor scale read
// on the device included.
TEST(CudaGemvRegister, RunOnDeviceMemoryEqualsTheHostMemoryRun) {
  LOWBIT_REQUIRE_GPU();
  constexpr std::int64_t kM = 3, kN = 40, kK = 456, kBatch = 2;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  int rows = 0;
  for (const MatmulEntry& e : Registered().MatmulEntries()) {
    if (e.operation != MatmulOperation::kGemv || e.backend != "cuda") continue;
    ++rows;
    ASSERT_TRUE(e.run_on_device) << registry::MatmulRowName(e) << " has no device entry point";
    const MatmulWeightKind* kind = registry::FindMatmulWeightKind(e.weight);
    ASSERT_NE(kind, nullptr) << e.weight;
    Problem b;
    MakeProblem(e, *kind, kM, kN, kK, kBatch, 7, &b);
    const std::string label = registry::MatmulRowName(e);
    const std::int64_t y_count = kBatch * kM * kN;
    const std::size_t y_bytes = static_cast<std::size_t>(y_count) * matmul::OutputBytes(e.output);
    matmul::MatmulProblem host = b.p;
    std::vector<std::uint8_t> y_host(y_bytes, 0xA5), y_device(y_bytes, 0x5A);
    host.y.type = e.output;
    host.y.data = y_host.data();
    host.y.count = y_count;
    host.y.row_stride = kN;
    host.y.batch_stride = kM * kN;
    const registry::Status sh = e.run(host);
    ASSERT_TRUE(sh.ok) << label << ": host memory: " << sh.message;

    const matmul::WeightBufferSizes per = matmul::PerBatchSizes(b.p.w);
    const bool words = !b.code_words.empty();
    DeviceCopy codes(words ? static_cast<const void*>(b.code_words.data()) : b.code_bytes.data(),
                     static_cast<std::size_t>(per.codes * kBatch) * (words ? 4 : 1));
    const void* scale_host = !b.scale_bytes.empty()    ? static_cast<const void*>(b.scale_bytes.data())
                             : !b.scale_halves.empty() ? static_cast<const void*>(b.scale_halves.data())
                                                       : static_cast<const void*>(b.scale_words.data());
    DeviceCopy scales(scale_host, static_cast<std::size_t>(per.scales * kBatch) * matmul::ScaleBytes(kind->scale_type));
    DeviceCopy zeros(b.zero_words.empty() ? nullptr : b.zero_words.data(), 4 * b.zero_words.size());
    DeviceCopy tensor_scales(b.tensor_scales.empty() ? nullptr : b.tensor_scales.data(),
                             sizeof(recipe::TensorScale) * b.tensor_scales.size());
    DeviceCopy x(b.x.data(), 2 * b.x.size());
    DeviceCopy y(y_device.data(), y_bytes);
    matmul::MatmulProblem dev = host;
    dev.w.codes = codes.p;
    dev.w.scales = scales.p;
    dev.w.zeros = b.zero_words.empty() ? nullptr : zeros.p;
    dev.w.tensor_scale = static_cast<const recipe::TensorScale*>(tensor_scales.p);
    dev.x.data = x.p;
    dev.y.data = y.p;
    const registry::Status sd = e.run_on_device(dev, stream);
    ASSERT_TRUE(sd.ok) << label << ": device memory: " << sd.message;
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << label;
    ASSERT_EQ(cudaMemcpy(y_device.data(), y.p, y_bytes, cudaMemcpyDeviceToHost), cudaSuccess) << label;
    EXPECT_EQ(y_device, y_host) << label;
  }
  EXPECT_EQ(rows, 8 * 2 * 3);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace lowbit::cuda
