// GEMM benchmark (issue 12): lowbit's tensor-core GEMM for each weight
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
#include <random>
#include <vector>

#include "gemm/gemm.h"

using lowbit::cuda::gemm::GemmWeights;
using lowbit::cuda::gemm::OutputType;
using lowbit::cuda::gemm::ScaleType;
using lowbit::cuda::gemm::WeightFormat;

#define CHECK_CUDA(e)                                                              \
  do {                                                                             \
    cudaError_t err_ = (e);                                                        \
    if (err_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

template <typename T>
T* Upload(const std::vector<T>& h) {
  T* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

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

GemmWeights MakeWeights(WeightFormat f, std::int64_t n, std::int64_t k, std::mt19937_64& rng, Owned& own) {
  GemmWeights w;
  w.format = f;
  w.n = n;
  w.k = k;
  const bool four = f != WeightFormat::kMxfp8E4m3 && f != WeightFormat::kFp8E4m3PerChannel;
  auto* codes = Upload(RandomBytes(rng, four ? n * k / 2 : n * k, 0xFF, four ? 0 : 0x7F));
  own.ptrs.push_back(codes);
  w.codes = codes;
  const std::int64_t blocks = n * (k / lowbit::cuda::gemm::BlockSizeOf(f, k));
  switch (f) {
    case WeightFormat::kNvfp4: {
      std::vector<std::uint8_t> s = RandomBytes(rng, blocks, 0x0F, 0);
      for (auto& b : s) b = static_cast<std::uint8_t>(0x30 + b);  // UE4M3 0.5 .. 1.9
      auto* d = Upload(s);
      own.ptrs.push_back(d);
      w.scales = d;
      w.scale_type = ScaleType::kUe4m3;
      w.tensor_scale = 0.01f;
      break;
    }
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8E4m3: {
      std::vector<std::uint8_t> s = RandomBytes(rng, blocks, 0x07, 0);
      for (auto& b : s) b = static_cast<std::uint8_t>(120 + b);  // 2^-7 .. 2^0
      auto* d = Upload(s);
      own.ptrs.push_back(d);
      w.scales = d;
      w.scale_type = ScaleType::kE8m0;
      break;
    }
    case WeightFormat::kInt4G128:
    case WeightFormat::kUint4G128: {
      std::vector<std::uint16_t> s(blocks);
      for (auto& v : s) v = static_cast<std::uint16_t>(0x2000 | (rng() & 0x3FF));  // FP16 ~ 2^-7
      auto* d = Upload(s);
      own.ptrs.push_back(d);
      w.scales = d;
      w.scale_type = ScaleType::kF16;
      if (f == WeightFormat::kUint4G128) {
        auto* z = Upload(RandomBytes(rng, blocks, 0x0F, 0));
        own.ptrs.push_back(z);
        w.zeros = z;
      }
      break;
    }
    case WeightFormat::kFp8E4m3PerChannel: {
      std::vector<float> s(n, 0.01f);
      auto* d = Upload(s);
      own.ptrs.push_back(d);
      w.scales = d;
      w.scale_type = ScaleType::kF32;
      break;
    }
  }
  return w;
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
  const WeightFormat formats[] = {WeightFormat::kNvfp4,     WeightFormat::kMxfp4,     WeightFormat::kMxfp8E4m3,
                                  WeightFormat::kInt4G128,  WeightFormat::kUint4G128, WeightFormat::kFp8E4m3PerChannel};
  std::mt19937_64 rng(2026);
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (const Shape& s : shapes) {
    // Activations: random BF16 in [-2, 2) (never zeros).
    std::vector<std::uint16_t> xh(s.m * s.k);
    for (auto& v : xh) v = static_cast<std::uint16_t>(0x3F00 ^ (rng() & 0x80FF));
    auto* x = Upload(xh);
    void* y = nullptr;
    CHECK_CUDA(cudaMalloc(&y, s.m * s.n * sizeof(float)));
    void* ws = nullptr;
    CHECK_CUDA(cudaMalloc(&ws, lowbit::cuda::gemm::GemmW4A4WorkspaceBytes(s.m, s.k)));
    for (int fi = 0; fi <= (one ? 0 : 6); ++fi) {
      const bool w4a4 = fi == 6;
      const WeightFormat f = w4a4 ? WeightFormat::kNvfp4 : formats[fi];
      Owned own;
      const GemmWeights w = MakeWeights(f, s.n, s.k, rng, own);
      auto run = [&] {
        const auto* xp = reinterpret_cast<const __nv_bfloat16*>(x);
        const lowbit::cuda::Status st =
            w4a4 ? lowbit::cuda::gemm::GemmW4A4Nvfp4(xp, s.m, w, lowbit::block::Nvfp4Recipe::kTe, ws, y, OutputType::kBf16)
                 : lowbit::cuda::gemm::Gemm(xp, s.m, w, y, OutputType::kBf16);
        if (!st.ok) {
          std::fprintf(stderr, "gemm failed: %s\n", st.message.c_str());
          std::exit(1);
        }
      };
      for (int i = 0; i < 3; ++i) run();
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<float> ms;
      for (int i = 0; i < reps; ++i) {
        CHECK_CUDA(cudaEventRecord(start));
        run();
        CHECK_CUDA(cudaEventRecord(stop));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float t = 0;
        CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      const double tflops = 2.0 * s.m * s.n * s.k / (med * 1e-3) / 1e12;
      std::printf("gemm %-22s %6lld %6lld %6lld %10.1f us %8.1f TFLOP/s\n",
                  w4a4 ? "w4a4_nvfp4" : lowbit::cuda::gemm::NameOf(f), static_cast<long long>(s.m),
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
