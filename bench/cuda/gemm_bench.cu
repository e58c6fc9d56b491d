// GEMM benchmark (docs/matmul.md): lowbit's tensor-core GEMM for each weight
// format and W4A4 NVFP4 at M = N = K = 8192 and M = 4096, N = 28672,
// K = 8192, timed with CUDA events (median of 20 after 3 warm-up runs).
// Random codes and in-range scales, never all zeros (zeros can run faster
// than real data). Prints one line per (shape, format):
//   gemm <format> M N K  <median us>  <TFLOP/s>
// bench/cuda/gemm_torch_baselines.py times cuBLAS BF16 and FP8 _scaled_mm on
// the same shapes in the same run (scripts/gpu/gemm.sh).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench_timing.cuh"
#include "gemm/gemm.h"
#include "lowbit/formats/recipe/names.h"

namespace matmul = lowbit::matmul;
using matmul::OutputType;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;

using lowbit::bench::MedianMsPerCall;
using lowbit::bench::Upload;

namespace {

std::vector<std::uint8_t> RandomBytes(std::mt19937_64& rng, std::size_t n, std::uint8_t mask, std::uint8_t avoid) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint64_t r = rng();
    for (std::size_t j = i; j < i + 8 && j < n; ++j, r >>= 8) {
      std::uint8_t b = static_cast<std::uint8_t>(r) & mask;
      if (avoid != 0 && (b & 0x7F) == avoid) b ^= 1;  // no E4M3 NaN codes
      v[j] = b;
    }
  }
  return v;
}

struct Owned {
  std::vector<void*> ptrs;
  ~Owned() {
    for (void* p : ptrs) cudaFree(p);
  }
};

struct Kind {
  const char* name;
  WeightFormat f;
  WeightPacking packing;
  ScaleType st;
  bool zeros;
};

// Random codes and in-range scales for a weight kind, on the device.
matmul::WeightView MakeWeights(const Kind& kind, std::int64_t n, std::int64_t k, std::mt19937_64& rng, Owned& own) {
  const bool four = matmul::IsFourBit(kind.f);
  const std::int64_t block = kind.f == WeightFormat::kNvfp4 ? 16
                             : kind.f == WeightFormat::kMxfp4 || kind.f == WeightFormat::kMxfp8E4m3 ? 32
                             : kind.f == WeightFormat::kFp8E4m3PerChannel ? 0 : 128;
  const matmul::ScaleGeometry geometry = kind.f == WeightFormat::kFp8E4m3PerChannel ? matmul::ScaleGeometry::kPerRow
                                         : matmul::IsIntegerFormat(kind.f) ? matmul::ScaleGeometry::kRowGroups
                                                                           : matmul::ScaleGeometry::kFlatBlocks;
  // Sizes only: a non-null zeros pointer says the kind has zero points.
  static const int kHasZeros = 0;
  const matmul::WeightView probe = matmul::DenseWeights(kind.f, kind.packing, geometry, kind.st, n, k, block, 1,
                                                        nullptr, nullptr, kind.zeros ? &kHasZeros : nullptr, nullptr);
  const matmul::WeightBufferSizes sizes = matmul::PerBatchSizes(probe);
  const bool words = kind.packing != WeightPacking::kLowbit;
  auto* codes = Upload(RandomBytes(rng, sizes.codes * (words ? 4 : 1), 0xFF, four ? 0 : 0x7F));
  own.ptrs.push_back(codes);
  const std::size_t sb = matmul::ScaleBytes(kind.st);
  std::vector<std::uint8_t> scales(sizes.scales * sb);
  for (std::int64_t i = 0; i < sizes.scales; ++i) {
    std::uint32_t bits = 0;
    switch (kind.st) {
      case ScaleType::kUe4m3: bits = 0x30 + (rng() & 0x0F); break;   // 0.5 .. 1.9
      case ScaleType::kE8m0: bits = 120 + (rng() & 0x07); break;     // 2^-7 .. 2^0
      case ScaleType::kFp16: bits = 0x2000 | (rng() & 0x3FF); break;  // ~2^-7
      case ScaleType::kBf16: bits = 0x3C00 | (rng() & 0x7F); break;   // ~2^-7
      case ScaleType::kFp32: { const float v = 0.01f; std::memcpy(&bits, &v, 4); break; }
    }
    std::memcpy(scales.data() + i * sb, &bits, sb);
  }
  auto* d_scales = Upload(scales);
  own.ptrs.push_back(d_scales);
  void* d_zeros = nullptr;
  if (kind.zeros) {
    std::vector<std::uint8_t> z(sizes.zeros * 4);
    if (words) {
      z = RandomBytes(rng, z.size(), 0xFF, 0);
    } else {
      for (std::size_t i = 0; i < z.size(); i += 4) z[i] = static_cast<std::uint8_t>(rng() & 0xF);
    }
    d_zeros = Upload(z);
    own.ptrs.push_back(d_zeros);
  }
  lowbit::recipe::TensorScale* d_ts = nullptr;
  if (kind.f == WeightFormat::kNvfp4) {
    lowbit::recipe::TensorScale t;
    t.decode = 0.01f;
    d_ts = Upload(std::vector<lowbit::recipe::TensorScale>{t});
    own.ptrs.push_back(d_ts);
  }
  return matmul::DenseWeights(kind.f, kind.packing, geometry, kind.st, n, k, block, 1, codes, d_scales, d_zeros, d_ts);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  // A second argument: only the first shape and format (for a profiler run).
  const bool one = argc > 2;
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {{8192, 8192, 8192}, {4096, 28672, 8192}};
  const Kind kinds[] = {
      {"nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, false},
      {"mxfp4", WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, false},
      {"mxfp8-e4m3", WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, false},
      {"int4-g128", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, false},
      {"uint4-gptq-fp16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, true},
      {"uint4-awq-fp16", WeightFormat::kUint4, WeightPacking::kAwq, ScaleType::kFp16, true},
      {"e4m3-channel", WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, false},
      {"w4a4-nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, false},
  };
  const int kinds_count = static_cast<int>(sizeof(kinds) / sizeof(kinds[0]));
  std::mt19937_64 rng(2026);
  for (const Shape& s : shapes) {
    // Activations: random BF16 in [-2, 2) (never zeros).
    std::vector<std::uint16_t> xh(s.m * s.k);
    for (auto& v : xh) v = static_cast<std::uint16_t>(0x3F00 ^ (rng() & 0x80FF));
    std::uint16_t* x = Upload(xh);
    void* y = nullptr;
    CHECK_CUDA(cudaMalloc(&y, s.m * s.n * sizeof(std::uint16_t)));
    void* ws = nullptr;
    CHECK_CUDA(cudaMalloc(&ws, lowbit::cuda::gemm::GemmW4A4WorkspaceBytes(s.m, s.k)));
    for (int fi = 0; fi < (one ? 1 : kinds_count); ++fi) {
      const bool w4a4 = fi == kinds_count - 1;
      Owned own;
      matmul::MatmulProblem p;
      p.w = MakeWeights(kinds[fi], s.n, s.k, rng, own);
      p.m = s.m;
      p.x = {matmul::ActivationType::kBf16, x, s.m * s.k, s.k, 0};
      p.y = {OutputType::kBf16, y, s.m * s.n, s.n, 0};
      auto run = [&] {
        const lowbit::cuda::Status st = w4a4 ? lowbit::cuda::gemm::GemmW4A4Nvfp4(p, *lowbit::recipe::FindRecipe("nvfp4", "te"), ws)
                                             : lowbit::cuda::gemm::Gemm(p);
        if (!st.ok) {
          std::fprintf(stderr, "gemm failed: %s\n", st.message.c_str());
          std::exit(1);
        }
      };
      for (int i = 0; i < 3; ++i) run();
      CHECK_CUDA(cudaDeviceSynchronize());
      const double med = MedianMsPerCall(reps, 1, [&](int) { run(); });
      const double tflops = 2.0 * s.m * s.n * s.k / (med * 1e-3) / 1e12;
      std::printf("gemm %-22s %6lld %6lld %6lld %10.1f us %8.1f TFLOP/s\n", kinds[fi].name, static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), med * 1e3, tflops);
      std::fflush(stdout);
    }
    cudaFree(x);
    cudaFree(y);
    cudaFree(ws);
    if (one) break;
  }
  return 0;
}
