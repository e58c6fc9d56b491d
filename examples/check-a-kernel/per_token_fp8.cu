// The user's kernel (per_token_fp8.h): one thread block per row, a
// shared-memory max reduction of |x| (a NaN element is skipped, as
// TransformerEngine's fmaxf amax does), then every thread scales and
// converts its elements with cuda_fp8.h's __nv_cvt_float_to_fp8.
#include <cfloat>
#include <cmath>
#include <cstdint>

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "per_token_fp8.h"

namespace user_kernel {
namespace {

constexpr float kE4m3Max = 448.0f;  // the user's constant: OCP E4M3's largest finite value

__host__ __device__ inline float Bf16ToFloat(std::uint16_t bits) {
  return __builtin_bit_cast(float, static_cast<std::uint32_t>(bits) << 16);
}

// max(amax, v) skipping a NaN v. Written as a comparison, not fmaxf: on the
// host, glibc's fmaxf follows IEEE 754-2008 maxNum and returns NaN when an
// operand is a signalling NaN (a BF16 NaN such as 0x7F81 widens to the
// signalling 0x7F810000), where CUDA's device fmaxf returns the other
// operand; lowbit's check of the host build caught it (a row holding Inf
// and a signalling NaN got the wrong scale).
__host__ __device__ inline float MaxSkippingNan(float amax, float v) { return v > amax ? v : amax; }

// TransformerEngine's compute_scale_from_amax: 1 for a zero or non-finite
// amax, FLT_MAX when 448 / amax overflows.
__host__ __device__ inline float ScaleFromAmax(float amax) {
  if (amax == 0.0f || !isfinite(amax)) return 1.0f;
  const float scale = kE4m3Max / amax;
  return isfinite(scale) ? scale : FLT_MAX;
}

__host__ __device__ inline std::uint8_t ToE4m3(float x, Variant variant) {
  std::uint8_t code = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  if (variant == Variant::kTowardZero && (code & 0x7F) != 0x7F && (code & 0x7F) != 0) {
    // Step one code toward zero when round-to-nearest went away from zero.
    const float back = __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3)));
    if (fabsf(back) > fabsf(x)) --code;
  }
  return code;
}

// The row's multiplier and the stored dequantization scale.
struct RowScale {
  float scale;      // the correct kernel multiplies by it
  float scale_inv;  // stored; the division variant divides by it
};

__host__ __device__ inline RowScale RowScaleOf(float amax) {
  const float scale = ScaleFromAmax(amax);
  return {scale, 1.0f / scale};
}

__host__ __device__ inline std::uint8_t QuantizeElement(float x, RowScale s, Variant variant) {
  return ToE4m3(variant == Variant::kDivideByScaleInv ? x / s.scale_inv : x * s.scale, variant);
}

constexpr int kThreads = 256;

__global__ void QuantizeRowsKernel(const std::uint16_t* x, long cols, std::uint8_t* codes, float* scale_inv,
                                   Variant variant) {
  __shared__ float partial[kThreads];
  const long row = blockIdx.x;
  const std::uint16_t* in = x + row * cols;
  float amax = 0.0f;
  for (long j = threadIdx.x; j < cols; j += kThreads) amax = MaxSkippingNan(amax, fabsf(Bf16ToFloat(in[j])));
  partial[threadIdx.x] = amax;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = MaxSkippingNan(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  const RowScale s = RowScaleOf(partial[0]);
  for (long j = threadIdx.x; j < cols; j += kThreads) {
    codes[row * cols + j] = QuantizeElement(Bf16ToFloat(in[j]), s, variant);
  }
  if (threadIdx.x == 0) scale_inv[row] = s.scale_inv;
}

}  // namespace

void QuantizeRowsOnHost(const std::uint16_t* bf16, long rows, long cols, std::uint8_t* codes, float* scale_inv,
                        Variant variant) {
  for (long i = 0; i < rows; ++i) {
    float amax = 0.0f;
    for (long j = 0; j < cols; ++j) amax = MaxSkippingNan(amax, fabsf(Bf16ToFloat(bf16[i * cols + j])));
    const RowScale s = RowScaleOf(amax);
    for (long j = 0; j < cols; ++j) codes[i * cols + j] = QuantizeElement(Bf16ToFloat(bf16[i * cols + j]), s, variant);
    scale_inv[i] = s.scale_inv;
  }
}

bool CudaDeviceAvailable() {
  int count = 0;
  // Without a GPU the call fails and leaves count unwritten (docs/design.md
  // "Known traps"): count starts at 0.
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

const char* QuantizeRowsOnGpu(const std::uint16_t* bf16, long rows, long cols, std::uint8_t* codes, float* scale_inv,
                              Variant variant) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  std::uint16_t* d_x = nullptr;
  std::uint8_t* d_codes = nullptr;
  float* d_scales = nullptr;
  cudaError_t err = cudaMalloc(&d_x, n * sizeof(std::uint16_t) + 1);
  if (err == cudaSuccess) err = cudaMalloc(&d_codes, n + 1);
  if (err == cudaSuccess) err = cudaMalloc(&d_scales, static_cast<std::size_t>(rows) * sizeof(float) + 4);
  if (err == cudaSuccess) err = cudaMemcpy(d_x, bf16, n * sizeof(std::uint16_t), cudaMemcpyHostToDevice);
  if (err == cudaSuccess && rows > 0) {
    QuantizeRowsKernel<<<static_cast<unsigned>(rows), kThreads>>>(d_x, cols, d_codes, d_scales, variant);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpy(codes, d_codes, n, cudaMemcpyDeviceToHost);
  if (err == cudaSuccess) {
    err = cudaMemcpy(scale_inv, d_scales, static_cast<std::size_t>(rows) * sizeof(float), cudaMemcpyDeviceToHost);
  }
  cudaFree(d_x);
  cudaFree(d_codes);
  cudaFree(d_scales);
  return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

}  // namespace user_kernel
