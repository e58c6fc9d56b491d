// GPU benchmark of lowbit's CUDA kernels against a device-to-device copy of
// the same bytes (METHOD.md: the copy is the memory-bound ceiling). Every
// kernel is timed with CUDA events, median of 20 runs after warm-up, on
// random data of >= 256 MB. Prints one "RESULT name ms bytes GB/s ratio" line
// per case; scripts/run_gpu.sh collects them into the final table.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "layout_variants.h"  // cuda/src: the entry points that name a layout
#include "lowbit/cuda/quantize.h"
#include "lowbit/cuda/verify.h"

namespace {

using namespace lowbit;
using namespace lowbit::cuda;

#define CHECK_CUDA(x)                                                                \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)
#define CHECK_OK(x)                                                       \
  do {                                                                    \
    const Status s_ = (x);                                                \
    if (!s_.ok) {                                                         \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, s_.message.c_str()); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

// Random 32-bit words (a hash of the index), so no case runs on zeros.
__global__ void FillRandom(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B9u ^ seed;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    p[i] = x;
  }
}
// Normal-ish FP32 values (sum of uniforms), as activations look.
__global__ void FillGaussian(float* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B9u ^ seed;
    float s = 0;
    for (int k = 0; k < 4; ++k) {
      x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
      s += (x >> 8) * (1.0f / 16777216.0f);
    }
    p[i] = (s - 2.0f) * 1.7f;
  }
}
__global__ void ToBf16(const float* in, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = static_cast<std::uint16_t>(__float_as_uint(in[i]) >> 16);
  }
}

float MedianMs(const std::function<void()>& body, int reps = 20) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) body();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CHECK_CUDA(cudaEventRecord(a));
    body();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK_CUDA(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One pass of the cases: the layout every kernel takes, the prefix of its
// RESULT names ("before: " for the replaced layouts, "hints: " for the
// streaming hints, none for the current ones), and the copy ceiling.
struct Pass {
  LayoutVariant variant;
  std::string prefix;
  double copy_gbs;  // device-to-device copy, bytes read + written per second
};

void Report(const Pass& pass, const std::string& label, float ms, double bytes, double goal) {
  const std::string name = pass.prefix + label;
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  const double ratio = gbs / pass.copy_gbs;
  std::printf("RESULT %-44s %9.3f ms %8.1f MB %8.1f GB/s %6.3fx copy  goal %.2fx  %s\n",
              name.c_str(), ms, bytes / 1e6, gbs, ratio, goal,
              goal <= 0 ? "-" : (ratio >= goal ? "MET" : "NOT-MET"));
}


// Quantization recipes: bytes = input read once + codes + scales written.
void BenchQuantize(const Pass& pass, float* f32, std::uint16_t* bf16, void* out, void* out2, std::size_t n) {
  const LayoutVariant variant = pass.variant;
  float* small = nullptr;
  CHECK_CUDA(cudaMalloc(&small, 64));
  std::uint8_t* scales = nullptr;
  CHECK_CUDA(cudaMalloc(&scales, n / 16 + 64));
  {  // dynamic per-tensor FP8 of FP32: floor is 2 reads + 1 write
    Fp8PerTensorArgs a;
    a.input = f32; a.count = n; a.codes = static_cast<std::uint8_t*>(out);
    a.scale = small; a.scale_inv = small + 1; a.amax = small + 2;
    const float ms = MedianMs([&] { CHECK_OK(QuantizeFp8PerTensorDynamic(a, variant)); });
    Report(pass, "fp8 per-tensor dynamic f32 (vs 2 reads+1 write)", ms, static_cast<double>(n) * (4 + 4 + 1), 0.85);
    a.input_type = InputType::kBf16; a.input = bf16;
    const float ms2 = MedianMs([&] { CHECK_OK(QuantizeFp8PerTensorDynamic(a, variant)); });
    Report(pass, "fp8 per-tensor dynamic bf16 (vs 2 reads+1 write)", ms2, static_cast<double>(n) * (2 + 2 + 1), 0.85);
    const float ms3 = MedianMs([&] { CHECK_OK(QuantizeFp8PerTensorStatic(a, variant)); });
    Report(pass, "fp8 per-tensor static bf16", ms3, static_cast<double>(n) * (2 + 1), 0.95);
  }
  {  // per-token FP8 of BF16, rows of 4096
    Fp8PerTokenArgs a;
    a.input = bf16; a.cols = 4096; a.rows = n / 4096; a.codes = static_cast<std::uint8_t*>(out);
    a.scale_inv = static_cast<float*>(out2);
    const float ms = MedianMs([&] { CHECK_OK(QuantizeFp8PerToken(a, variant)); });
    Report(pass, "fp8 per-token bf16 [n/4096, 4096]", ms, static_cast<double>(n) * 3 + a.rows * 4.0, 0.9);
  }
  {  // NVFP4 (TE) with the tensor amax given, and with the amax pass
    for (int input = 0; input < 2; ++input) {
      Nvfp4Args a;
      a.input_type = input == 0 ? InputType::kF32 : InputType::kBf16;
      a.input = input == 0 ? static_cast<const void*>(f32) : bf16;
      a.count = n; a.amax_out = small + 4; a.packed_codes = static_cast<std::uint8_t*>(out);
      a.scales = scales; a.decode_scale = small + 5;
      CHECK_OK(QuantizeNvfp4(a, variant));
      a.global_amax = small + 4;
      const double in_bytes = input == 0 ? 4.0 : 2.0;
      const double bytes = static_cast<double>(n) * (in_bytes + 0.5 + 1.0 / 16);
      const float ms = MedianMs([&] { CHECK_OK(QuantizeNvfp4(a, variant)); });
      Report(pass, input == 0 ? "nvfp4 quantize f32 (amax given)" : "nvfp4 quantize bf16 (amax given)", ms, bytes, 0.85);
      a.global_amax = nullptr;
      const float ms2 = MedianMs([&] { CHECK_OK(QuantizeNvfp4(a, variant)); });
      Report(pass, input == 0 ? "nvfp4 quantize f32 (+amax pass)" : "nvfp4 quantize bf16 (+amax pass)", ms2,
             bytes + static_cast<double>(n) * in_bytes, 0.85);
    }
    std::uint16_t* deq = static_cast<std::uint16_t*>(out2);
    const float ms = MedianMs([&] {
      CHECK_OK(DequantizeNvfp4ToBf16(static_cast<std::uint8_t*>(out), scales, small + 5, n, deq, nullptr, variant));
    });
    Report(pass, "nvfp4 -> bf16 dequantize", ms, static_cast<double>(n) * (0.5 + 1.0 / 16 + 2), 0.9);
  }
  for (auto [name, elem, rid, input] :
       {std::tuple{"mxfp4 te(rceil) f32", FormatId::kE2m1, MxRecipeId::kTe, 0},
        std::tuple{"mxfp4 te(rceil) bf16", FormatId::kE2m1, MxRecipeId::kTe, 1},
        std::tuple{"mxfp4 ocp(floor) bf16", FormatId::kE2m1, MxRecipeId::kOcp, 1},
        std::tuple{"mxfp8 e4m3 te bf16", FormatId::kE4m3, MxRecipeId::kTe, 1},
        std::tuple{"mxfp6 e2m3 te bf16 (model elements)", FormatId::kE2m3, MxRecipeId::kTe, 1},
        std::tuple{"mxint8 te bf16 (model elements)", FormatId::kInt8, MxRecipeId::kTe, 1}}) {
    MxArgs a;
    a.element = elem; a.recipe = rid;
    a.input_type = input == 0 ? InputType::kF32 : InputType::kBf16;
    a.input = input == 0 ? static_cast<const void*>(f32) : bf16;
    a.count = n; a.codes = static_cast<std::uint8_t*>(out); a.scales = scales;
    const double code_bytes = elem == FormatId::kE2m1 ? 0.5 : 1.0;
    const float ms = MedianMs([&] { CHECK_OK(QuantizeMx(a, variant)); });
    Report(pass, name, ms, static_cast<double>(n) * ((input == 0 ? 4.0 : 2.0) + code_bytes + 1.0 / 32),
           elem == FormatId::kE2m1 ? 0.85 : 0);
  }
  if (variant == LayoutVariant::kCurrent) {  // new recipes (issue 5), one layout: no before/after
    {  // MX dequantize: codes and scales from the quantizers above
      for (auto [name, elem] : {std::tuple{"mxfp4 -> bf16 dequantize", FormatId::kE2m1},
                                std::tuple{"mxfp8 e4m3 -> bf16 dequantize", FormatId::kE4m3}}) {
        MxArgs q;
        q.element = elem; q.input_type = InputType::kBf16; q.input = bf16; q.count = n;
        q.codes = static_cast<std::uint8_t*>(out); q.scales = scales;
        CHECK_OK(QuantizeMx(q));
        MxDequantArgs d;
        d.element = elem; d.codes = static_cast<std::uint8_t*>(out); d.scales = scales; d.count = n;
        d.output_type = OutputType::kBf16; d.output = out2;
        const float ms = MedianMs([&] { CHECK_OK(DequantizeMx(d)); });
        Report(pass, name, ms, static_cast<double>(n) * ((elem == FormatId::kE2m1 ? 0.5 : 1.0) + 1.0 / 32 + 2), 0);
      }
    }
    {  // INT8 per-channel (ao-sym) of FP32 [n/4096, 4096]; INT4 g128 (ao-asym uint4), low-first
      std::int32_t* zps = nullptr;
      CHECK_CUDA(cudaMalloc(&zps, n / 32 * 4));
      float* qscales = nullptr;
      CHECK_CUDA(cudaMalloc(&qscales, n / 32 * 4));
      for (int c = 0; c < 2; ++c) {
        IntQuantArgs a;
        a.recipe = c == 0 ? &block::kAoSymInt8 : &block::kAoAsymUint4;
        a.layout = c == 0 ? block::QuantLayout{block::Granularity::kPerRow}
                          : block::QuantLayout{block::Granularity::kPerGroup, 128};
        a.input = f32; a.rows = n / 4096; a.cols = 4096;
        a.packing = c == 0 ? IntPacking::kBytes : IntPacking::kLowFirst;
        a.codes = out2; a.scales = qscales; a.zero_points = zps;
        const float ms = MedianMs([&] { CHECK_OK(QuantizeInt(a)); });
        const double code_bytes = c == 0 ? 1.0 : 0.5;
        Report(pass, c == 0 ? "int8 per-channel ao-sym f32 [n/4096, 4096]" : "uint4 g128 ao-asym f32, low-first", ms,
               static_cast<double>(n) * (4 + code_bytes), 0);
        IntDequantArgs d;
        d.recipe = a.recipe; d.layout = a.layout; d.packing = a.packing; d.codes = out2;
        d.rows = a.rows; d.cols = a.cols; d.scales = qscales; d.zero_points = zps;
        d.output_type = OutputType::kBf16; d.output = out;
        const float ms2 = MedianMs([&] { CHECK_OK(DequantizeInt(d)); });
        Report(pass, c == 0 ? "int8 per-channel -> bf16 dequantize" : "uint4 g128 low-first -> bf16 dequantize", ms2,
               static_cast<double>(n) * (code_bytes + 2), 0);
      }
      cudaFree(zps);
      cudaFree(qscales);
    }
  }
  cudaFree(small);
  cudaFree(scales);
}

}  // namespace

int main(int argc, char** argv) {
  if (!GpuAvailable()) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  std::printf("device: %s\n", DeviceDescription().c_str());
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 28);
  // Buffers: FP32 input (n*4 bytes = 1 GiB at the default), BF16 copy, outputs.
  float* f32 = nullptr;
  std::uint16_t* bf16 = nullptr;
  void* out = nullptr;
  void* out2 = nullptr;
  CHECK_CUDA(cudaMalloc(&f32, n * 4));
  CHECK_CUDA(cudaMalloc(&bf16, n * 2));
  CHECK_CUDA(cudaMalloc(&out, n * 4));
  CHECK_CUDA(cudaMalloc(&out2, n * 4));
  FillGaussian<<<1024, 256>>>(f32, n, 1);
  ToBf16<<<1024, 256>>>(f32, bf16, n);
  CHECK_CUDA(cudaDeviceSynchronize());

  // Copy ceiling: 1 GiB device-to-device; bytes counted read + written.
  double copy_gbs = 0;
  {
    const float ms = MedianMs([&] { CHECK_CUDA(cudaMemcpyAsync(out, f32, n * 4, cudaMemcpyDeviceToDevice)); });
    copy_gbs = 2.0 * n * 4 / (ms * 1e-3) / 1e9;
    std::printf("RESULT %-44s %9.3f ms %8.1f MB %8.1f GB/s %6.3fx copy  goal -  -\n",
                "copy d2d (1 GiB)", ms, 2.0 * n * 4 / 1e6, copy_gbs, 1.0);
  }

  // The layouts this run replaced ("before: "), the current layouts with the
  // streaming load/store hints ("hints: ") and the current ones, measured in
  // the same process on the same data; each call names its layout
  // (cuda/src/layout_variants.h), nothing process-wide is switched.
  for (const Pass& pass : {Pass{LayoutVariant::kReplaced, "before: ", copy_gbs},
                           Pass{LayoutVariant::kStreamingHints, "hints: ", copy_gbs},
                           Pass{LayoutVariant::kCurrent, "", copy_gbs}}) {
    auto conv = [&](const char* name, ElementOp op, FormatId f, Backend b, const void* in,
                    std::size_t in_bytes, std::size_t out_bytes, const EncodeOptions& enc,
                    double goal) {
      ConvertRequest r;
      r.op = op;
      r.format = f;
      r.backend = b;
      r.input = in;
      r.output = out;
      r.count = n;
      r.encode = enc;
      r.decode = HardwareDecodeOptions(f);
      CHECK_OK(Convert(r, pass.variant));
      const float ms = MedianMs([&] { CHECK_OK(Convert(r, pass.variant)); });
      Report(pass, name, ms, static_cast<double>(n) * (in_bytes + out_bytes), goal);
    };
    EncodeOptions e4, e5, bfo, f16o;
    HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3, RoundingMode::kNearestEven, true, &e4);
    HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE5m2, RoundingMode::kNearestEven, true, &e5);
    HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kBf16, RoundingMode::kNearestEven, false, &bfo);
    HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kFp16, RoundingMode::kNearestEven, false, &f16o);
    conv("cuda-hw f32->e4m3", ElementOp::kEncodeF32, FormatId::kE4m3, Backend::kHardware, f32, 4, 1, e4, 0.95);
    conv("cuda-hw f32->e5m2", ElementOp::kEncodeF32, FormatId::kE5m2, Backend::kHardware, f32, 4, 1, e5, 0.95);
    conv("cuda-hw f32->bf16", ElementOp::kEncodeF32, FormatId::kBf16, Backend::kHardware, f32, 4, 2, bfo, 0.95);
    conv("cuda-hw f32->fp16", ElementOp::kEncodeF32, FormatId::kFp16, Backend::kHardware, f32, 4, 2, f16o, 0.95);
    conv("cuda-hw bf16->e4m3", ElementOp::kEncodeBf16, FormatId::kE4m3, Backend::kHardware, bf16, 2, 1, e4, 0.95);
    conv("cuda-sw f32->e4m3 (model)", ElementOp::kEncodeF32, FormatId::kE4m3, Backend::kSoftware, f32, 4, 1, e4, 0);
    conv("cuda-sw f32->e2m1 (model, 1 code/byte)", ElementOp::kEncodeF32, FormatId::kE2m1, Backend::kSoftware, f32,
         4, 1, EncodeOptions{}, 0);
    // Decodes: codes from the encodes above (E4M3 of Gaussian data).
    {
      ConvertRequest r;
      r.op = ElementOp::kEncodeF32; r.format = FormatId::kE4m3; r.backend = Backend::kHardware;
      r.input = f32; r.output = out2; r.count = n; r.encode = e4;
      CHECK_OK(Convert(r));
      conv("cuda-hw e4m3->bf16", ElementOp::kDecodeToBf16, FormatId::kE4m3, Backend::kHardware, out2, 1, 2, {}, 0.9);
      conv("cuda-sw e4m3->bf16 (model)", ElementOp::kDecodeToBf16, FormatId::kE4m3, Backend::kSoftware, out2, 1, 2,
           {}, 0);
      r.format = FormatId::kE2m1; r.backend = Backend::kSoftware; r.encode = {};
      CHECK_OK(Convert(r));
      conv("cuda-sw e2m1->bf16 (model, 1 code/byte)", ElementOp::kDecodeToBf16, FormatId::kE2m1,
           Backend::kSoftware, out2, 1, 2, {}, 0);
    }
    BenchQuantize(pass, f32, bf16, out, out2, n);
  }

  // Exhaustive verification time (2^32 inputs, one conversion).
  EncodeOptions e4, bfo;
  HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3, RoundingMode::kNearestEven, true, &e4);
  HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kBf16, RoundingMode::kNearestEven, false, &bfo);
  for (auto [name, f, o] : {std::tuple{"verify 2^32 cuda-hw f32->e4m3", FormatId::kE4m3, e4},
                            std::tuple{"verify 2^32 cuda-hw f32->bf16", FormatId::kBf16, bfo}}) {
    VerifyReport rep;
    CHECK_OK(VerifyAllInputs(Backend::kHardware, ElementOp::kEncodeF32, f, o, HardwareDecodeOptions(), &rep));
    VerifyReport rep2;
    CHECK_OK(VerifyAllInputs(Backend::kHardware, ElementOp::kEncodeF32, f, o, HardwareDecodeOptions(), &rep2));
    const float ms = std::min(rep.milliseconds, rep2.milliseconds);
    std::printf("RESULT %-44s %9.3f ms  mismatches %llu  goal < 50 ms  %s\n", name, ms,
                static_cast<unsigned long long>(rep.mismatches), ms < 50 ? "MET" : "NOT-MET");
  }
  cudaFree(f32);
  cudaFree(bf16);
  cudaFree(out);
  cudaFree(out2);
  return 0;
}
