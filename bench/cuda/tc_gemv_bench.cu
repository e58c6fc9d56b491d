// The tensor-core GEMV's benchmark (cuda/src/tc_matmul/tc_gemv.cu): NVFP4,
// MXFP4, UINT4 (GPTQ / AWQ g128, FP16 scales and x), MXFP8 (E4M3) and FP8
// E4M3 per-channel weights at 8192 x 8192, 28672 x 8192 and 7168 x 16384 (N x K)
// and the two other NVFP4 GEMV competition shapes (4096 x 7168 with batch
// L = 8, 7168 x 2048 with L = 4), M = 1 and 16, against a device-to-device copy measured in the same run (bytes read plus
// written). The weights are random packed tiles with moderate scales, rotated
// among enough copies that one pass does not fit in L2; x is one BF16 matrix.
// Time = median over 7 rounds of (events around 40 back-to-back calls on one
// stream) / 40; a call with split-K is one launch (the parts are added in
// the kernel). Each case is timed twice: with the calls serialized, each
// kernel starting after the previous one has ended, and with each call
// overlapping the previous one (tc_gemv.h LaunchOptions::
// overlap_previous_kernel: it reads its weights while the previous call
// finishes; x, y and the workspace wait for it), as consecutive layers of a
// model whose weights no kernel writes would run.
//
//   tc_gemv_bench                   every case
//   tc_gemv_bench FORMAT N K M [L [SPLIT]]  one case (for ncu; FORMAT nvfp4,
//                                           mxfp4, uint4, mxfp8 or fp8), with
//                                           ScheduleOf's split or SPLIT
// Environment: LOWBIT_TC_GEMV_BENCH_CODECS=nvfp4,mxfp8_e4m3 (weight kinds by
// their canonical names) keeps those kinds of the every-case run;
// LOWBIT_TC_GEMV_BENCH_OUTPUT=bf16 writes BF16 y instead of FP32.
// Each is compared with two copies: the 1 GiB device copy's rate
// ("x_copy": this call's bytes per second over the copy's), and a copy of
// this call's own bytes timed the same way ("x_same": that copy's time over
// this call's), which pays the same launch and ramp; and with the floor of
// any kernel that must read this call's bytes (ReadOnlyKernel: the same
// loads and grid, nothing else, launched overlapped).
// Output lines: "tc_gemv FORMAT N K L= M= split= MB= | serialized US us
// X x_copy X x_same | overlapped US us X x_copy X x_same | same-bytes copy
// US us | read-only floor US us (overlapped X x_floor)", where MB counts the bytes the kernel must read (packed codes,
// scales, column scales, x) and write (y, FP32 or BF16).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.cuh"
#include "ptx.cuh"
#include "tc_matmul/tc_gemv.h"
#include "tc_matmul/tc_gemv_lanes.h"
#include "tc_matmul/tc_gemv_pack.h"

namespace {

using lowbit::bench::MedianMsPerCall;
using lowbit::bench::Upload;
namespace tc = lowbit::cuda::tc_gemv;

struct Result {
  double us, overlapped_us, copy_us, mb;
  int split;
  double read_floor_us;
};

// The floor of any kernel that must read these bytes: a grid of the GEMV's
// size (4 blocks of 256 threads per SM) that only reads them, with the
// GEMV's load (16 bytes, .nc, L1::no_allocate), XORs them and writes one
// word per block, launched as the overlapped GEMV is (it lets the next
// launch start at once and waits for the previous grid before its store).
__global__ void __launch_bounds__(256) ReadOnlyKernel(const uint4* data, std::size_t vectors, unsigned* sink) {
  lowbit::cuda::ptx::LaunchDependentGrids();
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = lowbit::cuda::ptx::LdNcNoAllocate(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  lowbit::cuda::ptx::WaitForPrerequisiteGrids();
  if (acc == 0x9E3779B9u) sink[blockIdx.x] = acc;  // practically never: keeps the loads
}

// Microseconds per call of ReadOnlyKernel over `bytes`, rotating among
// enough buffers that one round does not fit in L2, timed as the GEMV is.
double ReadFloorUs(double bytes, cudaStream_t stream, int rounds, int calls) {
  const std::size_t size = std::max<std::size_t>(16, static_cast<std::size_t>(bytes) / 16 * 16);
  const int buffers = std::max(2, static_cast<int>(256e6 / static_cast<double>(size) + 1));
  std::vector<void*> data(buffers);
  for (auto& d : data) {
    CHECK_CUDA(cudaMalloc(&d, size));
    CHECK_CUDA(cudaMemset(d, 0x5A, size));
  }
  unsigned* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(std::min(4 * sms, 4096)));
  config.blockDim = dim3(256);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  CHECK_CUDA(cudaDeviceSynchronize());
  const float ms = MedianMsPerCall(
      rounds, calls,
      [&](int i) {
        CHECK_CUDA(cudaLaunchKernelEx(&config, ReadOnlyKernel, static_cast<const uint4*>(data[i % buffers]), size / 16,
                                      sink));
      },
      stream);
  for (auto& d : data) cudaFree(d);
  cudaFree(sink);
  return ms * 1e3;
}

// Which path the scales send the tiles down: plain codes only (the fast
// path), or one zero scale per tile (the table path for every tile).
enum class Scales { kPlain, kTable };

Result Bench(tc::TileCodec codec, long n, long k, long batch, long m, std::mt19937_64& rng, int rounds, int calls,
             Scales kind = Scales::kPlain, int split = 0) {
  const bool nvfp4 = codec == tc::TileCodec::kNvfp4;
  const bool uint4 = codec == tc::TileCodec::kUint4Fp16;  // GPTQ / AWQ with FP16 scales, FP16 x
  const bool channel = codec == tc::TileCodec::kFp8Channel;
  const int block = tc::RecordBlockOf(codec);
  tc::DeviceWeights w;
  w.format = tc::FormatOf(codec);
  w.scale_type = channel ? lowbit::matmul::ScaleType::kFp32 : tc::RecordScaleTypeOf(codec);
  w.block = block;
  w.n = n;
  w.k = k;
  w.batch = batch;
  w.row_tiles = (n + tc::kTileRows - 1) / tc::kTileRows;
  w.k_tiles = (k + tc::kKTile - 1) / tc::kKTile;
  const std::size_t code_bytes = static_cast<std::size_t>(batch * w.row_tiles * w.k_tiles * tc::CodeBytesPerTile(codec));
  const std::size_t scale_bytes =
      static_cast<std::size_t>(batch * w.row_tiles * w.k_tiles * tc::ScaleBytesPerTile(block));
  std::vector<std::uint8_t> codes(code_bytes), scales(scale_bytes);
  for (auto& c : codes) {
    c = static_cast<std::uint8_t>(rng());
    if (tc::IsE4m3(codec) && tc::IsE4m3Nan(c)) c ^= 1;  // no NaN codes: every tile plain
  }
  // Moderate scales: UE4M3 around 1 (0x30..0x3F), E8M0 2^-8 .. 2^0, as
  // real weights have (all plain: tc_gemv_lanes.h ScaleIsPlain).
  for (auto& s : scales) s = static_cast<std::uint8_t>(nvfp4 ? 0x30 + rng() % 16 : channel ? 127 : 119 + rng() % 9);
  if (uint4) {  // per lane group: two FP16 scales near 2^-6, then two zero operands (zero points 0..15)
    for (std::size_t i = 0; i < scales.size(); i += 8) {
      for (int h = 0; h < 2; ++h) {
        const std::uint16_t scale = static_cast<std::uint16_t>((9 << 10) | (rng() & 0x3FF));
        const std::uint16_t zero = tc::Uint4ZeroOperand(static_cast<std::int32_t>(rng() % 16), true);
        scales[i + 2 * h] = static_cast<std::uint8_t>(scale), scales[i + 2 * h + 1] = static_cast<std::uint8_t>(scale >> 8);
        scales[i + 4 + 2 * h] = static_cast<std::uint8_t>(zero), scales[i + 5 + 2 * h] = static_cast<std::uint8_t>(zero >> 8);
      }
    }
  }
  const int record = tc::ScaleBytesPerTile(block);
  if (kind == Scales::kTable) {
    for (std::size_t t = 0; t < scales.size(); t += static_cast<std::size_t>(record)) scales[t + rng() % record] = 0;
  }
  std::vector<std::uint8_t> plain(scales.size() / static_cast<std::size_t>(record));
  for (std::size_t t = 0; t < plain.size(); ++t) {
    plain[t] = tc::PlainTileByte(codec, scales.data() + t * record, false);
  }
  std::vector<float> column_scales(static_cast<std::size_t>(batch * w.row_tiles * tc::kTileRows), 0.5f);
  std::vector<std::uint16_t> x(static_cast<std::size_t>(batch * m * k));
  for (auto& v : x) {
    v = uint4 ? static_cast<std::uint16_t>(((rng() & 1) << 15) | ((12 + rng() % 6) << 10) | (rng() & 0x3FF))
              : static_cast<std::uint16_t>(((rng() & 1) << 15) | ((124 + rng() % 6) << 7) | (rng() & 0x7F));
  }
  const double weight_bytes = static_cast<double>(code_bytes + scale_bytes);
  const int copies = std::max(2, static_cast<int>(256e6 / weight_bytes + 1));
  std::vector<std::uint8_t*> dcodes(copies), dscales(copies);
  for (int c = 0; c < copies; ++c) {
    dcodes[c] = Upload(codes);
    dscales[c] = Upload(scales);
  }
  float* dcolumn = Upload(column_scales);
  std::uint8_t* dplain = Upload(plain);
  std::uint16_t* dx = Upload(x);
  float* dy = nullptr;
  CHECK_CUDA(cudaMalloc(&dy, static_cast<std::size_t>(batch * m * n) * sizeof(float)));
  // LOWBIT_TC_GEMV_BENCH_OUTPUT=bf16: BF16 outputs instead of FP32.
  const char* output_env = std::getenv("LOWBIT_TC_GEMV_BENCH_OUTPUT");
  const bool bf16_out = output_env != nullptr && std::string(output_env) == "bf16";
  lowbit::matmul::AccumulationSchedule schedule =
      tc::ScheduleOf(codec, n, k, batch, bf16_out ? lowbit::matmul::OutputType::kBf16 : lowbit::matmul::OutputType::kFp32);
  if (split > 0) schedule.split_k = split;
  const std::int64_t ws_floats = tc::WorkspaceFloats(w, m, schedule.split_k);
  float* dws = nullptr;
  CHECK_CUDA(cudaMalloc(&dws, static_cast<std::size_t>(std::max<std::int64_t>(ws_floats, 1)) * sizeof(float)));
  CHECK_CUDA(cudaMemset(dws, 0, static_cast<std::size_t>(std::max<std::int64_t>(ws_floats, 1)) * sizeof(float)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tc::LaunchOptions options;
  auto call = [&](int i) {
    tc::DeviceWeights wi = w;
    wi.codes = dcodes[i % copies];
    wi.scales = dscales[i % copies];
    wi.column_scales = dcolumn;
    wi.plain_tiles = dplain;
    if (const char* e = tc::RunTcGemv(wi, dx, m, schedule, dy, dws, ws_floats, stream, options)) {
      std::fprintf(stderr, "tc_gemv: %s\n", e);
      std::exit(1);
    }
  };
  call(0);
  CHECK_CUDA(cudaDeviceSynchronize());
  const float ms = MedianMsPerCall(rounds, calls, call, stream);
  options.overlap_previous_kernel = true;
  const float overlapped_ms = MedianMsPerCall(rounds, calls, call, stream);
  for (int c = 0; c < copies; ++c) {
    cudaFree(dcodes[c]);
    cudaFree(dscales[c]);
  }
  cudaFree(dcolumn);
  cudaFree(dplain);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dws);
  const double bytes = weight_bytes + static_cast<double>(plain.size()) + column_scales.size() * 4.0 + x.size() * 2.0 + static_cast<double>(batch * m * n) * (bf16_out ? 2.0 : 4.0);
  const double copy_us = lowbit::bench::SameBytesCopyUs(bytes, stream, rounds, calls);
  const double floor_us = ReadFloorUs(bytes, stream, rounds, calls);
  CHECK_CUDA(cudaStreamDestroy(stream));
  return {ms * 1e3, overlapped_ms * 1e3, copy_us, bytes / 1e6, schedule.split_k, floor_us};
}

// The weight kind's canonical name, as the matmul rows name it
// (formats/matmul/weight_kind.h kWeightKinds).
const char* CodecName(tc::TileCodec c) {
  switch (c) {
    case tc::TileCodec::kNvfp4: return "nvfp4";
    case tc::TileCodec::kMxfp4: return "mxfp4";
    case tc::TileCodec::kUint4Fp16: return "uint4/g128+gptq-fp16";
    case tc::TileCodec::kUint4Bf16: return "uint4/g128+gptq-bf16";
    case tc::TileCodec::kMxfp8: return "mxfp8_e4m3";
    case tc::TileCodec::kFp8Channel: return "e4m3/row";
  }
  return "?";
}

// Whether the comma-separated `list` names `name`.
bool ListHas(const std::string& list, const std::string& name) {
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    if (list.compare(begin, end - begin, name) == 0) return true;
    begin = end + 1;
  }
  return false;
}

void Print(const char* name, long n, long k, long batch, long m, const Result& r, double copy) {
  const auto x_copy = [&](double us) { return r.mb * 1e6 / (us * 1e-6) / 1e12 / copy; };
  std::printf("tc_gemv %s %ld %ld L=%ld M=%ld split=%d MB=%.1f | serialized %.2f us %.2f x_copy %.2f x_same | overlapped "
              "%.2f us %.2f x_copy %.2f x_same | same-bytes copy %.2f us | read-only floor %.2f us (overlapped %.2f x_floor)\n",
              name, n, k, batch, m, r.split, r.mb, r.us, x_copy(r.us), r.copy_us / r.us, r.overlapped_us,
              x_copy(r.overlapped_us), r.copy_us / r.overlapped_us, r.copy_us, r.read_floor_us,
              r.read_floor_us / r.overlapped_us);
}

}  // namespace

int main(int argc, char** argv) {
  std::mt19937_64 rng(42);
  if (argc >= 5 && argc <= 7) {  // one case, 3 rounds of 10 calls
    const tc::TileCodec f = std::strcmp(argv[1], "mxfp4") == 0   ? tc::TileCodec::kMxfp4
                            : std::strcmp(argv[1], "uint4") == 0 ? tc::TileCodec::kUint4Fp16
                            : std::strcmp(argv[1], "mxfp8") == 0 ? tc::TileCodec::kMxfp8
                            : std::strcmp(argv[1], "fp8") == 0   ? tc::TileCodec::kFp8Channel
                                                                 : tc::TileCodec::kNvfp4;
    const long n = std::atol(argv[2]), k = std::atol(argv[3]), m = std::atol(argv[4]);
    const long batch = argc >= 6 ? std::atol(argv[5]) : 1;
    const int split = argc == 7 ? std::atoi(argv[6]) : 0;
    Print(argv[1], n, k, batch, m, Bench(f, n, k, batch, m, rng, 3, 10, Scales::kPlain, split), lowbit::bench::CopyTbps());
    return 0;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const double copy = lowbit::bench::CopyTbps();
  std::printf("device %s, %d SMs; device copy %.3f TB/s (read + write)\n", prop.name, prop.multiProcessorCount, copy);
  struct Shape {
    long n, k, batch;
    bool contest;  // a shape of the NVFP4 GEMV competition (M = 1)
  };
  double contest_log_us = 0.0, contest_log_overlapped_us = 0.0, contest_log_floor_us = 0.0;
  int contest_shapes = 0;
  for (const Shape s : {Shape{8192, 8192, 1, false}, Shape{28672, 8192, 1, false}, Shape{7168, 16384, 1, true},
                        Shape{4096, 7168, 8, true}, Shape{7168, 2048, 4, true}}) {
    for (const long m : {1L, 16L}) {
      for (const tc::TileCodec f : {tc::TileCodec::kNvfp4, tc::TileCodec::kMxfp4, tc::TileCodec::kUint4Fp16,
                                    tc::TileCodec::kMxfp8, tc::TileCodec::kFp8Channel}) {
        // LOWBIT_TC_GEMV_BENCH_CODECS=name,name: only those weight kinds.
        if (const char* only = std::getenv("LOWBIT_TC_GEMV_BENCH_CODECS");
            only != nullptr && !ListHas(only, CodecName(f))) {
          continue;
        }
        const Result r = Bench(f, s.n, s.k, s.batch, m, rng, 7, 40);
        Print(CodecName(f), s.n, s.k, s.batch, m, r, copy);
        if (s.contest && m == 1 && f == tc::TileCodec::kNvfp4) {
          contest_log_us += std::log(r.us);
          contest_log_overlapped_us += std::log(r.overlapped_us);
          contest_log_floor_us += std::log(r.read_floor_us);
          ++contest_shapes;
        }
      }
    }
  }
  std::printf("tc_gemv nvfp4 competition geomean (M = 1, %d shapes) %.2f us, overlapped %.2f us; read-only floor %.2f us\n",
              contest_shapes, std::exp(contest_log_us / contest_shapes),
              std::exp(contest_log_overlapped_us / contest_shapes), std::exp(contest_log_floor_us / contest_shapes));
  // Every tile with one zero scale: the table path's cost.
  for (const tc::TileCodec f : {tc::TileCodec::kNvfp4, tc::TileCodec::kMxfp4, tc::TileCodec::kMxfp8}) {
    const Result r = Bench(f, 8192, 8192, 1, 1, rng, 7, 40, Scales::kTable);
    Print((std::string(CodecName(f)) + "-table-path").c_str(), 8192, 8192, 1, 1, r, copy);
  }
  return 0;
}
