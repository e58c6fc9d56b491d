// GPU benchmark of lowbit's CUDA kernels against a device-to-device copy of
// the same bytes (METHOD.md: the copy is the memory-bound ceiling). Every
// kernel is timed with CUDA events, median of 20 runs after warm-up, on
// random data of >= 256 MB. Prints one "RESULT name ms bytes GB/s ratio" line
// per hand-listed case (scripts/run_gpu.sh collects them into the final
// table), then one "ROW ..." line per CUDA row of the registry on 256 MB
// tensors (BenchRegistryRows; `lowbit_cuda_bench --rows` runs those alone).
#include <cuda_fp16.h>
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
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/register.h"
#include "lowbit/cuda/verify.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"
#include "spec_value.h"  // cuda/src: FormatIdOf
#include "tensor_call.h"  // cuda/src: the tuned quantize kernels' one tensor description

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

float MedianMs(const std::function<void()>& body, int reps = 20, int warmups = 3) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < warmups; ++i) body();
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
// The catalog recipe "format:profile" (recipe/names.h FindRecipe); a
// benchmark that names one the catalog lacks stops.
const recipe::Recipe& CatalogRecipeNamed(const char* format, const char* profile) {
  const recipe::Recipe* r = recipe::FindRecipe(format, profile);
  if (r == nullptr) {
    std::fprintf(stderr, "bench: no recipe %s:%s in the catalog\n", format, profile);
    std::exit(1);
  }
  return *r;
}

// One tensor of n elements (one row) through the tuned kernels in the pass's
// layouts; the launchers are called per family, as the registry rows call
// them (tensor_call.h LaunchRecipeKernel).
cuda::detail::TensorCall RowCall(const recipe::Recipe& r, std::size_t n, LayoutVariant variant) {
  cuda::detail::TensorCall t;
  t.recipe = &r;
  t.layout = r.layout;
  t.rows = 1;
  t.cols = n;
  t.variant = variant;
  return t;
}

void BenchQuantize(const Pass& pass, float* f32, std::uint16_t* bf16, void* out, void* out2, std::size_t n) {
  const LayoutVariant variant = pass.variant;
  float* small = nullptr;
  CHECK_CUDA(cudaMalloc(&small, 64));
  std::uint8_t* scales = nullptr;
  CHECK_CUDA(cudaMalloc(&scales, n / 16 + 64));
  using cuda::detail::RecipeKernel;
  {  // dynamic per-tensor FP8 of FP32: floor is 2 reads + 1 write
    cuda::detail::TensorCall a = RowCall(CatalogRecipeNamed("e4m3", "te"), n, variant);
    a.layout = recipe::Layout{recipe::Geometry::kPerTensor, 0, 0};
    a.input = f32; a.q.codes = static_cast<std::uint8_t*>(out);
    a.workspace = small; a.q.scales = small + 2;  // workspace: scale, amax
    const auto run = [&] { CHECK_OK(cuda::detail::LaunchFp8Scaled(RecipeKernel::kFp8PerTensor, a)); };
    const float ms = MedianMs(run);
    Report(pass, "fp8 per-tensor dynamic f32 (vs 2 reads+1 write)", ms, static_cast<double>(n) * (4 + 4 + 1), 0.85);
    a.input_type = InputType::kBf16; a.input = bf16;
    const float ms2 = MedianMs(run);
    Report(pass, "fp8 per-tensor dynamic bf16 (vs 2 reads+1 write)", ms2, static_cast<double>(n) * (2 + 2 + 1), 0.85);
    a.given_scale = small;  // static: the scale the dynamic runs wrote
    const float ms3 = MedianMs(run);
    Report(pass, "fp8 per-tensor static bf16", ms3, static_cast<double>(n) * (2 + 1), 0.95);
  }
  {  // per-token FP8 of BF16, rows of 4096
    cuda::detail::TensorCall a = RowCall(CatalogRecipeNamed("e4m3", "te"), n, variant);
    a.layout = recipe::Layout{recipe::Geometry::kPerRow, 0, 0};
    a.input_type = InputType::kBf16;
    a.input = bf16; a.cols = 4096; a.rows = n / 4096; a.q.codes = static_cast<std::uint8_t*>(out);
    a.q.scales = static_cast<float*>(out2);
    const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchFp8Scaled(RecipeKernel::kFp8PerRow, a)); });
    Report(pass, "fp8 per-token bf16 [n/4096, 4096]", ms, static_cast<double>(n) * 3 + a.rows * 4.0, 0.9);
  }
  {  // NVFP4 (TE) with the tensor amax given, and with the amax pass
    const recipe::Recipe& nvfp4 = CatalogRecipeNamed("nvfp4", "te");
    auto* tensor_scale = reinterpret_cast<recipe::TensorScale*>(small + 6);  // S_enc, S_dec
    for (int input = 0; input < 2; ++input) {
      cuda::detail::TensorCall a = RowCall(nvfp4, n, variant);
      a.input_type = input == 0 ? InputType::kF32 : InputType::kBf16;
      a.input = input == 0 ? static_cast<const void*>(f32) : bf16;
      a.workspace = small + 4; a.q.codes = static_cast<std::uint8_t*>(out);
      a.q.scale_codes = scales; a.q.tensor_scale = tensor_scale;
      CHECK_OK(cuda::detail::LaunchNvfp4(true, a));
      a.tensor_amax = small + 4;
      const double in_bytes = input == 0 ? 4.0 : 2.0;
      const double bytes = static_cast<double>(n) * (in_bytes + 0.5 + 1.0 / 16);
      const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchNvfp4(true, a)); });
      Report(pass, input == 0 ? "nvfp4 quantize f32 (amax given)" : "nvfp4 quantize bf16 (amax given)", ms, bytes, 0.85);
      a.tensor_amax = nullptr;
      const float ms2 = MedianMs([&] { CHECK_OK(cuda::detail::LaunchNvfp4(true, a)); });
      Report(pass, input == 0 ? "nvfp4 quantize f32 (+amax pass)" : "nvfp4 quantize bf16 (+amax pass)", ms2,
             bytes + static_cast<double>(n) * in_bytes, 0.85);
    }
    cuda::detail::TensorCall d = RowCall(nvfp4, n, variant);
    d.q.codes = static_cast<std::uint8_t*>(out); d.q.scale_codes = scales; d.q.tensor_scale = tensor_scale;
    d.output_type = OutputType::kBf16; d.output = out2;
    const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchNvfp4(false, d)); });
    Report(pass, "nvfp4 -> bf16 dequantize", ms, static_cast<double>(n) * (0.5 + 1.0 / 16 + 2), 0.9);
  }
  // MXINT8 under OCP's rule: the catalog has no TE MXINT8.
  for (auto [name, format, profile, input] :
       {std::tuple{"mxfp4 te(rceil) f32", "mxfp4", "te", 0},
        std::tuple{"mxfp4 te(rceil) bf16", "mxfp4", "te", 1},
        std::tuple{"mxfp4 ocp(floor) bf16", "mxfp4", "ocp", 1},
        std::tuple{"mxfp8 e4m3 te bf16", "mxfp8_e4m3", "te", 1},
        std::tuple{"mxfp6 e2m3 te bf16 (model elements)", "mxfp6_e2m3", "te", 1},
        std::tuple{"mxint8 ocp bf16 (model elements)", "mxint8", "ocp", 1}}) {
    const recipe::Recipe& r = CatalogRecipeNamed(format, profile);
    const FormatId elem = cuda::detail::FormatIdOf(r.element);
    cuda::detail::TensorCall a = RowCall(r, n, variant);
    a.input_type = input == 0 ? InputType::kF32 : InputType::kBf16;
    a.input = input == 0 ? static_cast<const void*>(f32) : bf16;
    a.q.codes = static_cast<std::uint8_t*>(out); a.q.scale_codes = scales;
    const double code_bytes = elem == FormatId::kE2m1 ? 0.5 : 1.0;
    const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchMx(true, a)); });
    Report(pass, name, ms, static_cast<double>(n) * ((input == 0 ? 4.0 : 2.0) + code_bytes + 1.0 / 32),
           elem == FormatId::kE2m1 ? 0.85 : 0);
  }
  if (variant == LayoutVariant::kCurrent) {  // newer recipes, one layout: no before/after
    {  // MX dequantize: codes and scales from the quantizers above
      for (auto [name, format] : {std::tuple{"mxfp4 -> bf16 dequantize", "mxfp4"},
                                  std::tuple{"mxfp8 e4m3 -> bf16 dequantize", "mxfp8_e4m3"}}) {
        const recipe::Recipe& r = CatalogRecipeNamed(format, "te");
        const FormatId elem = cuda::detail::FormatIdOf(r.element);
        cuda::detail::TensorCall q = RowCall(r, n, variant);
        q.input_type = InputType::kBf16; q.input = bf16;
        q.q.codes = static_cast<std::uint8_t*>(out); q.q.scale_codes = scales;
        CHECK_OK(cuda::detail::LaunchMx(true, q));
        cuda::detail::TensorCall d = q;
        d.output_type = OutputType::kBf16; d.output = out2;
        const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchMx(false, d)); });
        Report(pass, name, ms, static_cast<double>(n) * ((elem == FormatId::kE2m1 ? 0.5 : 1.0) + 1.0 / 32 + 2), 0);
      }
    }
    {  // INT8 per-channel (ao-sym) of FP32 [n/4096, 4096]; INT4 g128 (ao-asym uint4), low-first
      std::int32_t* zps = nullptr;
      CHECK_CUDA(cudaMalloc(&zps, n / 32 * 4));
      float* qscales = nullptr;
      CHECK_CUDA(cudaMalloc(&qscales, n / 32 * 4));
      for (int c = 0; c < 2; ++c) {
        const recipe::Recipe& r = c == 0 ? CatalogRecipeNamed("int8", "ao-sym") : CatalogRecipeNamed("uint4", "ao-asym");
        cuda::detail::TensorCall a = RowCall(r, n, variant);
        a.layout = c == 0 ? recipe::Layout{recipe::Geometry::kPerRow, 0, 0}
                          : recipe::Layout{recipe::Geometry::kGroup, 128, 0};
        a.input = f32; a.rows = n / 4096; a.cols = 4096;
        a.int_packing = c == 0 ? cuda::detail::IntPacking::kBytes : cuda::detail::IntPacking::kLowFirst;
        a.q.codes = static_cast<std::uint8_t*>(out2); a.q.scales = qscales; a.q.zero_points = zps;
        const float ms = MedianMs([&] { CHECK_OK(cuda::detail::LaunchInt(true, a)); });
        const double code_bytes = c == 0 ? 1.0 : 0.5;
        Report(pass, c == 0 ? "int8 per-channel ao-sym f32 [n/4096, 4096]" : "uint4 g128 ao-asym f32, low-first", ms,
               static_cast<double>(n) * (4 + code_bytes), 0);
        cuda::detail::TensorCall d = a;
        d.output_type = OutputType::kBf16; d.output = out;
        const float ms2 = MedianMs([&] { CHECK_OK(cuda::detail::LaunchInt(false, d)); });
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

// ---- every CUDA row of the registry, on 256 MB tensors ----
//
// The rows come from the registry (registry::RegisterCudaBackends), so a new
// cuda-hw / cuda-sw conversion or a new "cuda" recipe row is measured here
// without an edit. Each runs on device buffers through the entry points the
// rows call (cuda::Convert for element rows, cuda::RunRecipeOnDevice for
// recipe rows: no host copies, no synchronization inside the timing).
// "x copy" = (bytes read + written) / time against a device-to-device copy
// of 256 MB timed in the same run, bytes read + written. A quantize whose
// recipe needs the tensor's statistics before its elements (a per-tensor
// group, or NVFP4's tensor scale) must read its input twice: its floor, and
// so its byte count, has the input twice.

constexpr std::size_t kRowBytes = std::size_t{256} << 20;

__global__ void FillF16(const float* in, std::uint16_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = __half_as_ushort(__float2half_rn(in[i]));
  }
}

ElementOp ElementOpOf(registry::Operation op) {
  switch (op) {
    case registry::Operation::kEncodeF32: return ElementOp::kEncodeF32;
    case registry::Operation::kEncodeBf16: return ElementOp::kEncodeBf16;
    case registry::Operation::kEncodeF16: return ElementOp::kEncodeF16;
    case registry::Operation::kDecodeToF32: return ElementOp::kDecodeToF32;
    case registry::Operation::kDecodeToBf16: return ElementOp::kDecodeToBf16;
  }
  return ElementOp::kEncodeF32;
}

// Timing repetitions for a row whose one run took `first_ms`: 20 for the
// fast rows, fewer for the slow model rows (a run stays under ~2 s a row).
int RepsFor(float first_ms) { return first_ms < 20 ? 20 : first_ms < 100 ? 7 : 3; }

void RowReport(const char* kind, const std::string& name, float ms, double bytes, double copy_gbs, double goal) {
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  const double ratio = gbs / copy_gbs;
  std::printf("ROW %-7s %-58s %9.3f ms %8.1f MB %8.1f GB/s %6.3fx copy  goal %.2fx  %s\n", kind, name.c_str(), ms,
              bytes / 1e6, gbs, ratio, goal, ratio >= goal ? "MET" : "NOT-MET");
}

// LOWBIT_BENCH_ROWS=text: only the rows whose name holds `text` (to profile
// one row's kernels with ncu).
bool RowSelected(const std::string& name) {
  const char* only = std::getenv("LOWBIT_BENCH_ROWS");
  return only == nullptr || name.find(only) != std::string::npos;
}

void BenchRegistryRows() {
  registry::Registry reg;
  registry::RegisterCudaBackends(reg);
  // Inputs: 256 MB of each input type, and codes (random bytes: every code,
  // NaN and Inf codes included, as the decodes meet them).
  float* f32 = nullptr;
  std::uint16_t* b16 = nullptr;
  std::uint16_t* f16 = nullptr;
  std::uint32_t* codes_in = nullptr;
  void* out = nullptr;
  CHECK_CUDA(cudaMalloc(&f32, kRowBytes));
  CHECK_CUDA(cudaMalloc(&b16, kRowBytes));
  CHECK_CUDA(cudaMalloc(&f16, kRowBytes));
  CHECK_CUDA(cudaMalloc(&codes_in, kRowBytes));
  CHECK_CUDA(cudaMalloc(&out, kRowBytes));
  {
    float* g = nullptr;
    CHECK_CUDA(cudaMalloc(&g, kRowBytes * 2));
    FillGaussian<<<1024, 256>>>(g, kRowBytes / 2, 7);
    CHECK_CUDA(cudaMemcpy(f32, g, kRowBytes, cudaMemcpyDeviceToDevice));
    ToBf16<<<1024, 256>>>(g, b16, kRowBytes / 2);
    FillF16<<<1024, 256>>>(g, f16, kRowBytes / 2);
    FillRandom<<<1024, 256>>>(codes_in, kRowBytes / 4, 11);
    CHECK_CUDA(cudaDeviceSynchronize());
    cudaFree(g);
  }
  const float copy_ms = MedianMs([&] { CHECK_CUDA(cudaMemcpyAsync(out, f32, kRowBytes, cudaMemcpyDeviceToDevice)); });
  const double copy_gbs = 2.0 * kRowBytes / (copy_ms * 1e-3) / 1e9;
  std::printf("ROW copy    %-58s %9.3f ms %8.1f MB %8.1f GB/s %6.3fx copy  goal -  -\n", "copy d2d (256 MB)", copy_ms,
              2.0 * kRowBytes / 1e6, copy_gbs, 1.0);

  // Element rows: cuda-hw under its round-to-nearest-even instruction
  // (satfinite where the cvt has it), cuda-sw under the model's default
  // options (what `lowbit convert` passes).
  for (const registry::KernelEntry& e : reg.Entries()) {
    if (e.backend != "cuda-hw" && e.backend != "cuda-sw") continue;
    const ElementOp op = ElementOpOf(e.operation);
    const bool hw = e.backend == "cuda-hw";
    const std::size_t in_b = registry::InputBytes(e.operation, e.format);
    const std::size_t out_b = registry::OutputBytes(e.operation, e.format);
    const std::size_t n = kRowBytes / (in_b > out_b ? in_b : out_b);
    ConvertRequest r;
    r.op = op;
    r.format = e.format;
    r.backend = hw ? Backend::kHardware : Backend::kSoftware;
    r.count = n;
    r.output = out;
    switch (e.operation) {
      case registry::Operation::kEncodeF32: r.input = f32; break;
      case registry::Operation::kEncodeBf16: r.input = b16; break;
      case registry::Operation::kEncodeF16: r.input = f16; break;
      default: r.input = codes_in; break;
    }
    std::string options = "default";
    if (IsEncode(op)) {
      if (hw) {
        bool found = false;
        for (bool sat : {true, false}) {
          for (RoundingMode m : {RoundingMode::kNearestEven, RoundingMode::kTowardZero}) {
            if (!found && HardwareEncodeOptions(op, e.format, m, sat, &r.encode)) {
              found = true;
              options = std::string(m == RoundingMode::kNearestEven ? "rn" : "rz") + (sat ? ".satfinite" : "");
            }
          }
        }
        if (!found) continue;
      }
    } else if (hw) {
      r.decode = HardwareDecodeOptions(e.format);
      options = "nvidia";
    }
    const std::string name = e.backend + " " + registry::OperationName(e.operation) + " " + Spec(e.format).name +
                             " (" + options + ")";
    if (!RowSelected(name)) continue;
    if (!Supports(r.backend, op, e.format, r.encode, r.decode)) {
      std::printf("ROW-SKIP %s: options not supported\n", name.c_str());
      continue;
    }
    const Status first = Convert(r);
    if (!first.ok) {
      std::printf("ROW-SKIP %s: %s\n", name.c_str(), first.message.c_str());
      continue;
    }
    const float one = MedianMs([&] { CHECK_OK(Convert(r)); }, 1, 1);
    const float ms = MedianMs([&] { CHECK_OK(Convert(r)); }, RepsFor(one), 2);
    RowReport("element", name, ms, static_cast<double>(n) * (in_b + out_b), copy_gbs, hw ? 0.85 : 0.5);
  }

  // Recipe rows: FP32 x of [2^26 / 4096, 4096] (256 MB). A dequantize
  // decodes what the same recipe's quantize wrote.
  const std::size_t cols = 4096, rows = kRowBytes / 4 / cols, count = rows * cols;
  float* workspace = nullptr;
  recipe::TensorScale* tensor_scale = nullptr;
  CHECK_CUDA(cudaMalloc(&workspace, sizeof(float) * kRecipeWorkspaceFloats));
  CHECK_CUDA(cudaMalloc(&tensor_scale, sizeof(recipe::TensorScale)));
  for (const registry::RecipeEntry& e : reg.RecipeEntries()) {
    if (e.backend != "cuda" || e.operation != registry::RecipeOperation::kQuantizeRecipe) continue;
    recipe::Target target;
    if (!registry::ParseRecipe(e.recipe, &target)) continue;
    if (!RowSelected(e.recipe)) continue;
    const registry::RecipeBuffers sizes = registry::RecipeBufferSizes(target, rows, cols);
    if (!sizes.ok) {
      std::printf("ROW-SKIP recipe %s: %s\n", e.recipe.c_str(), sizes.error.c_str());
      continue;
    }
    const recipe::BufferSizes& s = sizes.sizes;
    void* codes = nullptr;
    void* scale_codes = nullptr;
    void* scales = nullptr;
    void* zero_points = nullptr;
    CHECK_CUDA(cudaMalloc(&codes, s.code_bytes + 16));
    CHECK_CUDA(cudaMalloc(&scale_codes, s.scale_codes + 16));
    CHECK_CUDA(cudaMalloc(&scales, 4 * s.scales + 16));
    CHECK_CUDA(cudaMalloc(&zero_points, 4 * s.zero_points + 16));
    registry::RecipeArgs a;
    a.operation = registry::RecipeOperation::kQuantizeRecipe;
    a.target = target;
    a.rows = rows;
    a.cols = cols;
    a.x = f32;
    a.q = {s.code_bytes ? static_cast<std::uint8_t*>(codes) : nullptr,
           s.scale_codes ? static_cast<std::uint8_t*>(scale_codes) : nullptr,
           s.scales ? static_cast<float*>(scales) : nullptr,
           s.zero_points ? static_cast<std::int32_t*>(zero_points) : nullptr,
           s.tensor_scales ? tensor_scale : nullptr};
    const double side_bytes = static_cast<double>(s.code_bytes) + s.scale_codes + 4.0 * s.scales +
                              4.0 * s.zero_points + 8.0 * s.tensor_scales;
    const bool two_reads = target.layout.geometry == recipe::Geometry::kPerTensor ||
                           target.recipe->tensor_scale != recipe::TensorScaleRule::kNone;
    const Status first = RunRecipeOnDevice(a, workspace, nullptr);
    if (!first.ok) {
      std::printf("ROW-SKIP recipe quantize %s: %s\n", e.recipe.c_str(), first.message.c_str());
    } else {
      const float one = MedianMs([&] { CHECK_OK(RunRecipeOnDevice(a, workspace, nullptr)); }, 1, 1);
      const float ms = MedianMs([&] { CHECK_OK(RunRecipeOnDevice(a, workspace, nullptr)); }, RepsFor(one), 1);
      RowReport("recipe", std::string("quantize ") + e.recipe + (two_reads ? " (2 reads)" : ""), ms,
                (two_reads ? 8.0 : 4.0) * count + side_bytes, copy_gbs, 0.85);
      if (reg.FindRecipe(registry::RecipeOperation::kDequantizeRecipe, e.recipe, "cuda") != nullptr) {
        registry::RecipeArgs d = a;
        d.operation = registry::RecipeOperation::kDequantizeRecipe;
        d.x = nullptr;
        d.out = static_cast<float*>(out);
        const Status f2 = RunRecipeOnDevice(d, workspace, nullptr);
        if (!f2.ok) {
          std::printf("ROW-SKIP recipe dequantize %s: %s\n", e.recipe.c_str(), f2.message.c_str());
        } else {
          const float one2 = MedianMs([&] { CHECK_OK(RunRecipeOnDevice(d, workspace, nullptr)); }, 1, 1);
          const float ms2 = MedianMs([&] { CHECK_OK(RunRecipeOnDevice(d, workspace, nullptr)); }, RepsFor(one2), 1);
          RowReport("recipe", std::string("dequantize ") + e.recipe, ms2, 4.0 * count + side_bytes, copy_gbs, 0.85);
        }
      }
    }
    cudaFree(codes);
    cudaFree(scale_codes);
    cudaFree(scales);
    cudaFree(zero_points);
  }
  cudaFree(workspace);
  cudaFree(tensor_scale);
  cudaFree(f32);
  cudaFree(b16);
  cudaFree(f16);
  cudaFree(codes_in);
  cudaFree(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (!GpuAvailable()) {
    std::printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  std::printf("device: %s\n", DeviceDescription().c_str());
  // --rows: the registry's rows alone (BenchRegistryRows).
  const bool rows_only = argc > 1 && std::string(argv[1]) == "--rows";
  if (rows_only) {
    BenchRegistryRows();
    return 0;
  }
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
  BenchRegistryRows();
  return 0;
}
