// The tensor-core GEMM (cuda/src/tc_matmul/tc_gemm.h) against cuBLAS BF16
// in the same run: y = x * W^T for 4-bit, MXFP8 and FP8 weights at the
// matmul goal shapes (8192^3; M = 4096, N = 28672, K = 8192), BF16 x and y.
// Per case: the whole call (dequantizing pass + CUTLASS GEMM), the pass
// alone (and its bytes read + written per second against a 1 GiB device
// copy's), TFLOP/s, and the ratio to cuBLAS's BF16 GEMM (cublasGemmEx,
// CUBLAS_COMPUTE_32F, the default algorithm) on BF16 weights of the same
// shape (torch's BF16 GEMM and FP8 _scaled_mm: gemm_torch_baselines.py).
// Median of 5 rounds of 5 calls.
// `lowbit_tc_gemm_bench M N K` runs one shape.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench_timing.cuh"
#include "lowbit/formats/matmul/weights.h"
#include "tc_matmul/operand_dequantize.h"
#include "tc_matmul/tc_gemm.h"
#include "tc_matmul/tc_gemm_plan.h"

namespace {

using lowbit::bench::MedianMsPerCall;
using lowbit::bench::Upload;
using lowbit::matmul::ScaleGeometry;
using lowbit::matmul::ScaleType;
using lowbit::matmul::WeightFormat;
using lowbit::matmul::WeightPacking;
namespace tcg = lowbit::cuda::tc_gemm;

#define CHECK_CUBLAS(e)                                                       \
  do {                                                                        \
    if ((e) != CUBLAS_STATUS_SUCCESS) {                                       \
      std::fprintf(stderr, "%s:%d cuBLAS error %d\n", __FILE__, __LINE__, e); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// The weight kinds timed; `name` is the kind's canonical name, as the matmul
// rows name it (formats/matmul/weight_kind.h kWeightKinds).
struct Kind {
  const char* name;
  WeightFormat format;
  WeightPacking packing;
  ScaleType scale;
  int block;
  bool zeros;
};
const Kind kKinds[] = {
    {"nvfp4", WeightFormat::kNvfp4, WeightPacking::kLowbit, ScaleType::kUe4m3, 16, false},
    {"mxfp4", WeightFormat::kMxfp4, WeightPacking::kLowbit, ScaleType::kE8m0, 32, false},
    {"uint4/g128+gptq-fp16", WeightFormat::kUint4, WeightPacking::kGptq, ScaleType::kFp16, 128, true},
    {"int4/g128", WeightFormat::kInt4, WeightPacking::kLowbit, ScaleType::kFp32, 128, false},
    {"mxfp8_e4m3", WeightFormat::kMxfp8E4m3, WeightPacking::kLowbit, ScaleType::kE8m0, 32, false},
    {"e4m3/row", WeightFormat::kFp8E4m3PerChannel, WeightPacking::kLowbit, ScaleType::kFp32, 128, false},
};

std::uint16_t Bf16Near1(std::mt19937_64& rng) {
  return static_cast<std::uint16_t>(((rng() & 1) << 15) | ((124 + rng() % 4) << 7) | (rng() & 0x7F));
}

double CublasMs(cublasHandle_t h, int m, int n, int k, const std::uint16_t* x, const std::uint16_t* w, std::uint16_t* y,
                cudaStream_t stream) {
  CHECK_CUBLAS(cublasSetStream(h, stream));
  const float one = 1.0f, zero = 0.0f;
  // Column-major view: y^T [N][M] = W [N x K as K x N col-major]^T * x^T.
  auto call = [&](int) {
    CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k, x, CUDA_R_16BF, k, &zero, y,
                              CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  call(0);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return MedianMsPerCall(5, 5, call, stream);
}

void RunShape(cublasHandle_t handle, int m, int n, int k, std::mt19937_64& rng) {
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<std::uint16_t> hx(static_cast<std::size_t>(m) * k), hw(static_cast<std::size_t>(n) * k);
  for (auto& v : hx) v = Bf16Near1(rng);
  for (auto& v : hw) v = Bf16Near1(rng);
  std::uint16_t* x = Upload(hx);
  std::uint16_t* wbf = Upload(hw);
  std::uint16_t* y = nullptr;
  CHECK_CUDA(cudaMalloc(&y, static_cast<std::size_t>(m) * n * 4));
  const double flop = 2.0 * m * n * static_cast<double>(k);
  const double cublas_ms = CublasMs(handle, m, n, k, x, wbf, y, stream);
  const double copy_tbps = lowbit::bench::CopyTbps();
  std::printf("tc_gemm shape M=%d N=%d K=%d | cublas bf16 %.3f ms %.0f TFLOP/s\n", m, n, k, cublas_ms,
              flop / (cublas_ms * 1e-3) / 1e12);
  cudaFree(wbf);
  for (const Kind& kind : kKinds) {
    lowbit::matmul::WeightView shape = lowbit::matmul::DenseWeights(
        kind.format, kind.packing, kind.format == WeightFormat::kFp8E4m3PerChannel ? ScaleGeometry::kPerRow : ScaleGeometry::kRowGroups,
        kind.scale, n, k, kind.block, 1, nullptr, nullptr, kind.zeros ? &kind : nullptr, nullptr);  // sizes only: zeros non-null
    const lowbit::matmul::WeightBufferSizes sizes = lowbit::matmul::PerBatchSizes(shape);
    const std::size_t code_bytes = static_cast<std::size_t>(sizes.codes) * (kind.packing == WeightPacking::kLowbit ? 1 : 4);
    std::vector<std::uint8_t> codes(code_bytes), scales(static_cast<std::size_t>(sizes.scales) * lowbit::matmul::ScaleBytes(kind.scale));
    for (auto& c : codes) c = static_cast<std::uint8_t>(rng());
    for (std::size_t i = 0; i < scales.size(); i += lowbit::matmul::ScaleBytes(kind.scale)) {
      switch (kind.scale) {
        case ScaleType::kUe4m3: scales[i] = static_cast<std::uint8_t>(0x30 + rng() % 16); break;
        case ScaleType::kE8m0: scales[i] = static_cast<std::uint8_t>(119 + rng() % 9); break;
        case ScaleType::kFp16: { const std::uint16_t s = static_cast<std::uint16_t>((8 << 10) | (rng() & 0x3FF)); std::memcpy(&scales[i], &s, 2); break; }
        case ScaleType::kBf16: { const std::uint16_t s = static_cast<std::uint16_t>((120 << 7) | (rng() & 0x7F)); std::memcpy(&scales[i], &s, 2); break; }
        case ScaleType::kFp32: { const float s = 0.01f + (rng() % 1000) * 1e-5f; std::memcpy(&scales[i], &s, 4); break; }
      }
    }
    std::vector<std::uint8_t> zeros(static_cast<std::size_t>(sizes.zeros) * 4);
    for (auto& z : zeros) z = static_cast<std::uint8_t>(rng());
    std::vector<lowbit::recipe::TensorScale> ts(1);
    ts[0].decode = 0.5f;
    std::uint8_t* dcodes = Upload(codes);
    std::uint8_t* dscales = Upload(scales);
    std::uint8_t* dzeros = kind.zeros ? Upload(zeros) : nullptr;
    lowbit::recipe::TensorScale* dts = Upload(ts);
    lowbit::matmul::MatmulProblem p;
    p.w = lowbit::matmul::DenseWeights(shape.format, shape.packing, shape.geometry, shape.scale_type, n, k, kind.block,
                                       1, dcodes, dscales, dzeros, kind.format == WeightFormat::kNvfp4 ? dts : nullptr);
    p.m = m;
    p.x = {lowbit::matmul::ActivationType::kBf16, x, static_cast<std::int64_t>(m) * k, k, static_cast<std::int64_t>(m) * k};
    p.y = {lowbit::matmul::OutputType::kBf16, y, static_cast<std::int64_t>(m) * n, n, static_cast<std::int64_t>(m) * n};
    const std::size_t ws_bytes = tcg::TcGemmWorkspaceBytes(p);
    void* ws = nullptr;
    CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
    auto call = [&](int) {
      const lowbit::cuda::Status st = tcg::RunTcGemm(p, ws, ws_bytes, stream);
      if (!st.ok) {
        std::fprintf(stderr, "tc_gemm %s: %s\n", kind.name, st.message.c_str());
        std::exit(1);
      }
    };
    call(0);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double ms = MedianMsPerCall(5, 5, call, stream);
    const tcg::TcGemmPlan plan = tcg::PlanOf(p);
    auto* operand = reinterpret_cast<std::uint16_t*>(static_cast<unsigned char*>(ws) + plan.operand);
    auto* outer = reinterpret_cast<float*>(static_cast<unsigned char*>(ws) + plan.outer_scales);
    const double pass_ms = MedianMsPerCall(5, 5, [&](int) { CHECK_CUDA(tcg::DequantizeIntoOperand(p.w, plan.operand_rows, operand, outer, stream)); }, stream);
    // The pass's own traffic: packed weights read once, the operand and the
    // outer scales written once.
    const double pass_bytes = static_cast<double>(code_bytes + scales.size() + (kind.zeros ? zeros.size() : 0)) +
                              static_cast<double>(plan.operand_rows) * (2.0 * tcg::PaddedK(k) + 4.0);
    const double pass_tbps = pass_bytes / (pass_ms * 1e-3) / 1e12;
    std::printf("tc_gemm %s M=%d N=%d K=%d | %.3f ms %.0f TFLOP/s %.2f x_cublas | dequantizing pass %.3f ms %.2f TB/s %.2f x_copy\n",
                kind.name, m, n, k, ms, flop / (ms * 1e-3) / 1e12, cublas_ms / ms, pass_ms, pass_tbps, pass_tbps / copy_tbps);
    cudaFree(ws);
    cudaFree(dcodes);
    cudaFree(dscales);
    if (dzeros) cudaFree(dzeros);
    cudaFree(dts);
  }
  cudaFree(x);
  cudaFree(y);
  CHECK_CUDA(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  cublasHandle_t handle = nullptr;
  CHECK_CUBLAS(cublasCreate(&handle));
  std::mt19937_64 rng(42);
  if (argc == 4) {
    RunShape(handle, std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), rng);
  } else {
    RunShape(handle, 8192, 8192, 8192, rng);
    RunShape(handle, 4096, 28672, 8192, rng);
  }
  cublasDestroy(handle);
  return 0;
}
