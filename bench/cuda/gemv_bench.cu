// GEMV benchmark (docs/matmul.md): every weight format on the decode shapes at
// M = 1 and M = 16, each against a device-to-device copy measured in the same
// run (bytes read plus written). Weights are random codes with moderate
// scales (never zeros), rotated among enough copies that one pass does not
// fit in L2. Time = median over 7 rounds of (events around 40 back-to-back
// launches) / 40.
//
//   gemv_bench                      every shape and format
//   gemv_bench FORMAT N K L M       one case, 3 launches (for ncu)
//   LOWBIT_GEMV_BENCH_FORMATS=S     only the formats whose name contains S
//   LOWBIT_GEMV_ROWS_PER_WARP=1|2|4, LOWBIT_GEMV_UNROLL=2|4
//                                   the K-major kernels' M = 1 tuning (gemv.cu)
// Output lines: "gemv FORMAT N K L M us MB TB/s x_copy".
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "gemv/gemv.h"

using lowbit::cuda::gemv::GemvEntryElementCounts;
using lowbit::cuda::gemv::GemvEntrySizes;
using lowbit::cuda::gemv::GemvLaunch;
using lowbit::cuda::gemv::LaunchGemv;
using lowbit::matmul::WeightFormat;
using lowbit::matmul::WeightPacking;

using lowbit::bench::MedianMsPerCall;
using lowbit::bench::Upload;

namespace {

struct Fmt {
  const char* name;
  WeightFormat f;
  WeightPacking packing = WeightPacking::kLowbit;
};
// The "int4" rows read unsigned codes (uint4, as GPTQ and AWQ checkpoints store them).
const Fmt kFormats[] = {{"nvfp4", WeightFormat::kNvfp4},
                        {"mxfp4", WeightFormat::kMxfp4},
                        {"mxfp8", WeightFormat::kMxfp8E4m3},
                        {"fp8-channel", WeightFormat::kFp8E4m3PerChannel},
                        {"int4-gptq", WeightFormat::kUint4, WeightPacking::kGptq},
                        {"int4-awq", WeightFormat::kUint4, WeightPacking::kAwq}};

template <typename T>
T* DeviceRandom(std::size_t count, std::mt19937_64& rng, std::uint32_t mask = 0xFFFFFFFFu, std::uint32_t base = 0) {
  std::vector<T> h(count ? count : 1);
  for (auto& v : h) v = static_cast<T>(base + (static_cast<std::uint32_t>(rng()) & mask));
  return Upload(h);
}

struct Result {
  double us, mb;
};

Result Bench(const Fmt& fmt, long n, long k, long batch, long m, int rounds, int launches, std::mt19937_64& rng) {
  lowbit::matmul::GemvWeightView w;
  w.format = fmt.f;
  w.packing = fmt.packing;
  w.n = n;
  w.k = k;
  w.group = 128;
  w.tensor_scale = 0.25f;
  w.scale_type = lowbit::matmul::ScaleType::kFp16;
  const GemvEntrySizes s = GemvEntryElementCounts(w);
  const bool int4 = lowbit::matmul::IsIntegerFormat(fmt.f);
  const double weight_bytes =
      static_cast<double>(batch) * (s.codes + s.block_scales + 4.0 * s.channel_scales + 4.0 * s.words +
                                    2.0 * s.group_scales + (int4 ? 4.0 * s.zeros : 0.0));
  // Copies so that a rotation covers >= 256 MB (L2 is 50 MB on the H100).
  const int copies = std::max(2, static_cast<int>(256e6 / weight_bytes + 1));
  std::vector<GemvLaunch> launch(copies);
  std::vector<void*> owned;
  const std::size_t xs = static_cast<std::size_t>(batch * m * k);
  const std::size_t outs = static_cast<std::size_t>(batch * m * n);
  // Activations: BF16 with exponents near 1 (0x3E00..0x40FF), never zero.
  std::uint16_t* x = DeviceRandom<std::uint16_t>(xs, rng, 0x2FF, 0x3E00);
  void* out = nullptr;
  CHECK_CUDA(cudaMalloc(&out, outs * 2));
  owned.push_back(x);
  owned.push_back(out);
  for (int c = 0; c < copies; ++c) {
    GemvLaunch& g = launch[c];
    g.w = w;
    auto* codes = DeviceRandom<std::uint8_t>(s.codes * batch, rng, fmt.f == WeightFormat::kMxfp8E4m3 || fmt.f == WeightFormat::kFp8E4m3PerChannel ? 0x77 : 0xFF);
    auto* bs = DeviceRandom<std::uint8_t>(s.block_scales * batch, rng, 0x7, fmt.f == WeightFormat::kNvfp4 ? 0x30 : 124);
    auto* cs = DeviceRandom<float>(s.channel_scales * batch, rng, 0x3, 1);
    auto* words = DeviceRandom<std::uint32_t>(s.words * batch, rng);
    auto* gs = DeviceRandom<std::uint16_t>(s.group_scales * batch, rng, 0x3FF, 0x2000);
    auto* zs = DeviceRandom<std::uint32_t>(s.zeros * batch, rng);
    owned.insert(owned.end(), {codes, bs, cs, words, gs, zs});
    g.w.codes = codes;
    g.w.block_scales = bs;
    g.w.channel_scales = cs;
    g.w.words = words;
    g.w.group_scales = gs;
    g.w.zeros = int4 ? zs : nullptr;
    g.batch = batch;
    g.m = m;
    g.x = x;
    g.out = out;
  }
  for (int i = 0; i < 3; ++i) {  // warm-up, and the argument check
    const auto st = LaunchGemv(launch[i % copies]);
    if (!st.ok) {
      std::fprintf(stderr, "%s\n", st.error.c_str());
      std::exit(1);
    }
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  const float ms = MedianMsPerCall(rounds, launches, [&](int i) { LaunchGemv(launch[i % copies]); });
  for (void* p : owned) cudaFree(p);
  const double bytes = weight_bytes + 2.0 * xs + 2.0 * outs;
  return {ms * 1e3, bytes / 1e6};
}

}  // namespace

int main(int argc, char** argv) {
  std::mt19937_64 rng(12);
  if (argc == 6) {  // one case, for the profiler
    for (const Fmt& f : kFormats) {
      if (f.name == std::string(argv[1])) {
        const Result r = Bench(f, std::atol(argv[2]), std::atol(argv[3]), std::atol(argv[4]), std::atol(argv[5]), 1, 3, rng);
        std::printf("gemv %s %s %s %s %s %.2f us (profiled run)\n", argv[1], argv[2], argv[3], argv[4], argv[5], r.us);
        return 0;
      }
    }
    std::fprintf(stderr, "unknown format %s\n", argv[1]);
    return 2;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const double copy = lowbit::bench::CopyTbps();
  std::printf("device %s, %d SMs, L2 %d MB; device copy %.3f TB/s (read + write)\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, copy);
  const long shapes[][3] = {{8192, 8192, 1}, {28672, 8192, 1}, {7168, 16384, 1},
                            {7168, 16384, 1}, {4096, 7168, 8}, {7168, 2048, 4}};
  std::printf("%-5s %-12s %6s %6s %2s %3s %9s %8s %7s %7s\n", "", "format", "N", "K", "L", "M", "us", "MB", "TB/s",
              "x_copy");
  for (int si = 0; si < 6; ++si) {
    if (si == 3) continue;  // (7168, 16384, 1) is both an issue shape and a competition shape: once
    const auto& sh = shapes[si];
    for (const Fmt& f : kFormats) {
      // LOWBIT_GEMV_BENCH_FORMATS=int4: only formats whose name contains it.
      const char* only = std::getenv("LOWBIT_GEMV_BENCH_FORMATS");
      if (only != nullptr && std::strstr(f.name, only) == nullptr) continue;
      for (long m : {1L, 16L}) {
        const Result r = Bench(f, sh[0], sh[1], sh[2], m, 7, 40, rng);
        const double tbps = r.mb * 1e6 / (r.us * 1e-6) / 1e12;
        std::printf("gemv  %-12s %6ld %6ld %2ld %3ld %9.2f %8.2f %7.3f %7.3f\n", f.name, sh[0], sh[1], sh[2], m, r.us,
                    r.mb, tbps, tbps / copy);
      }
    }
  }
  return 0;
}
