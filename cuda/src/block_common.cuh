// Device pieces shared by the recipe families (fp8_scaled.cu, nvfp4.cu,
// mx.cu): the amax step, the tensor amax kernel, and
// the cuda-hw FP8 instructions used as the element or scale conversion of a
// recipe, each with the compile-time check that the recipe's conversion rule
// is the instruction's (hardware_rule.h, the `nvidia` profile).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "block_stages.cuh"
#include "checks.h"
#include "hardware_rule.h"
#include "launch.cuh"
#include "lowbit/cuda/status.h"
#include "lowbit/cuda/tensor_types.h"
#include "lowbit/formats/alternatives/amax.h"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/steps.h"
#include "options_match.h"
#include "ptx.cuh"
#include "spec_value.h"

namespace lowbit::cuda::detail {

// The amax step, recipe::CombineAmax, for |x| values (+0 and up, or NaN):
// the named alternative of alternatives/amax.h (fmaxf for the NaN-skipping
// rule, a one-instruction NaN test for the NaN-propagating one).
template <AmaxNan kRule>
__device__ __forceinline__ float CombineAmax(float m, float a) {
  return alternatives::CombineAmaxOfMagnitudes(kRule, m, a);
}

// The maximum over a thread block of one non-negative value per thread under
// the NaN rule; valid in warp 0.
template <AmaxNan kRule>
__device__ __forceinline__ float BlockAmax(float v) {
  __shared__ float warp_max[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = CombineAmax<kRule>(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? warp_max[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = CombineAmax<kRule>(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
  }
  __syncthreads();  // warp_max may be reused by the caller's next reduction
  return v;
}

// Tensor amax with NaN skipped (TE's, the only rule whose tensor amax a
// kernel here computes): |x| maxima are non-negative floats, which order like
// their bit patterns, so blocks combine with atomicMax on the bits.
template <typename In>
__global__ void __launch_bounds__(256) TensorAmaxKernel(const In* __restrict__ x, std::size_t n,
                                                        unsigned* __restrict__ amax_bits) {
  constexpr int kE = 16 / sizeof(In);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool aligned = reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  const std::size_t chunks = aligned ? n / kE : 0;
  float m = 0.0f;
  for (std::size_t c = tid; c < chunks; c += stride) {
    const uint4 v = __ldcs(reinterpret_cast<const uint4*>(x) + c);
    In e[kE];
    __builtin_memcpy(e, &v, 16);
#pragma unroll
    for (int j = 0; j < kE; ++j) m = CombineAmax<AmaxNan::kIgnore>(m, fabsf(ToF32(e[j])));
  }
  for (std::size_t i = chunks * kE + tid; i < n; i += stride) {
    m = CombineAmax<AmaxNan::kIgnore>(m, fabsf(ToF32(x[i])));
  }
  m = BlockAmax<AmaxNan::kIgnore>(m);
  if (threadIdx.x == 0) atomicMax(amax_bits, __float_as_uint(m));
}

// Writes the NaN-skipping amax of `n` inputs to `amax` (device), on `stream`.
inline Status LaunchTensorAmax(InputType input_type, const void* x, std::size_t n, float* amax,
                               cudaStream_t stream) {
  Status s = CudaStatus("amax", cudaMemsetAsync(amax, 0, sizeof(float), stream));
  if (!s.ok) return s;
  auto launch = [&](auto in) {
    using In = decltype(in);
    const std::size_t work = n / (16 / sizeof(In)) + 1;
    TensorAmaxKernel<In><<<GridFor(work, 256), 256, 0, stream>>>(static_cast<const In*>(x), n,
                                                                 reinterpret_cast<unsigned*>(amax));
  };
  if (input_type == InputType::kF32) launch(std::uint32_t{});
  else launch(std::uint16_t{});
  return LastLaunchStatus("amax");
}

// ---- cuda-hw instructions as recipe steps ----

// Two FP32 values -> two FP8 codes with cvt.rn.satfinite (element 0 in the low
// byte), the cuda-hw instruction swept against the model on all 2^32 inputs.
template <FormatId kFp8>
__device__ __forceinline__ std::uint16_t Fp8Pair(float lo, float hi) {
  static_assert(kFp8 == FormatId::kE4m3 || kFp8 == FormatId::kE5m2,
                "cvt.rn.satfinite exists for E4M3 and E5M2 only (PTX ISA 9.0 §9.7.9.21)");
  if constexpr (kFp8 == FormatId::kE4m3) return ptx::CvtE4m3x2F32(lo, hi);
  else return ptx::CvtE5m2x2F32(lo, hi);
}

// Whether Fp8Pair<kFp8> computes recipe::EncodeScaled(r, ...) on every value
// the recipe hands it: the recipe's element rule and the instruction's
// (hardware_rule.h) agree on every field that matters for the format, or
// they differ only in the NaN sign while the recipe's amax propagates NaN:
// then a NaN or Inf element makes the block's scale NaN and every scaled
// element the positive NaN (recipe::ScaledElement), whose code the
// instruction gives too (the OCP MX recipes: nan_sign kKeep).
template <FormatId kFp8>
constexpr bool HardwareEncodesElements(const recipe::Recipe& r) {
  constexpr FormatSpec kSpec = SpecValue<kFp8>();
  constexpr HardwareRule kHw = HardwareEncodeRule(kFp8, RoundingMode::kNearestEven, true);
  static_assert(kHw.exists);
  if (!IsFormat<kFp8>(r.element)) return false;
  if (SameEncodeSemantics(kSpec, r.element_encode, kHw.options)) return true;
  EncodeOptions positive_nan = r.element_encode;
  positive_nan.nan_sign = kHw.options.nan_sign;
  return r.family() == recipe::Family::kMx && r.amax_nan == AmaxNan::kPropagate &&
         SameEncodeSemantics(kSpec, positive_nan, kHw.options);
}

// ---- named alternatives (formats/include/lowbit/formats/alternatives/) ----

// Whether the E2M1 encoders of alternatives/e2m1.h compute the recipe's
// element conversion: they equal EncodeF32(kE2m1, x, o) for the options o
// of recipe::SatfiniteElements() (proptests/backends/alternatives_test.cc), so for
// every option set with the same meaning for E2M1 (E2M1 has no Inf or NaN
// code, so the NaN sign and payload policies do not matter).
constexpr bool E2m1AlternativeApplies(const recipe::Recipe& r) {
  constexpr FormatSpec kSpec = SpecValue<FormatId::kE2m1>();
  return IsFormat<FormatId::kE2m1>(r.element) &&
         SameEncodeSemantics(kSpec, r.element_encode, recipe::SatfiniteElements());
}

// The E2M1 code of y: the one-addition encoder, or (ReplacedLayout) the
// two-path one it replaced.
template <bool kOneAddition>
__device__ __forceinline__ std::uint32_t EncodeE2m1(float y) {
  if constexpr (kOneAddition) return alternatives::EncodeE2m1OneAddition(y);
  else return alternatives::EncodeE2m1TwoPath(y);
}

// E4M3 code -> FP32 through cvt.rn.f16x2.e4m3x2 and cvt.f32.f16 (exact; NaN
// -> 0x7FFFFFFF), the cuda-hw decode swept against the model on every code.
__device__ __forceinline__ float E4m3ToF32(std::uint32_t code) {
  return ptx::CvtF32F16(static_cast<std::uint16_t>(ptx::CvtF16x2E4m3x2(static_cast<std::uint16_t>(code))));
}

}  // namespace lowbit::cuda::detail
