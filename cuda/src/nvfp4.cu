// NVFP4 on the GPU, TransformerEngine's recipe "nvfp4:te" and any recipe
// with its semantics (formats/spec/include/lowbit/formats/recipe/catalog.h;
// docs/formats-reference.md §6.1; recipe_plan.h RunsOnNvfp4Kernels): E2M1
// elements in blocks of 16 (a partial last block acts as zero-padded), a
// UE4M3 block scale, an FP32 tensor scale (S_enc, S_dec) from the tensor
// amax, computed first (NaN ignored) unless given; E2M1 in software on
// Hopper, which has no FP4 cvt (§2); codes packed two per byte, element 0 in
// the low nibble. Dequantization is x = (e2m1 * scale_b) * S_dec, rounded to
// BF16 (RN), or in FP32 with the model's NaN bits. Equal bit for bit to the
// model's steps (cuda/tests/quantize_test.cc). Entry point: tensor_call.h
// LaunchNvfp4.
//
// The kernels are templates over
// the recipe (recipes.cuh) and its functor Nvfp4Steps, which calls the
// model's steps (recipe/steps.h) or a named alternative proven equal to one
// (formats/include/lowbit/formats/alternatives/): the tensor scale
// (recipe::ChooseTensorScale), the block scale (alternatives::
// ChooseNvfp4TeScale with the cuda-hw E4M3 instructions as its UE4M3
// conversion), the scaled element (recipe::ScaledElement) and the E2M1
// encode (alternatives::EncodeE2m1OneAddition). Layout policies (layout.cuh)
// pick between the lane-group and one-thread-per-block kernels.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "block_common.cuh"
#include "block_skeleton.cuh"
#include "checks.h"
#include "fp4_lanes.cuh"
#include "launch.cuh"
#include "layout.cuh"
#include "layout_variants.h"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/alternatives/nvfp4_te_scale.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"
#include "map_kernel.cuh"
#include "recipes.cuh"
#include "tensor_call.h"
#include "unit_store.cuh"

namespace lowbit::cuda {
namespace detail {
namespace {

// The UE4M3 block-scale conversion as the cuda-hw instructions: encode with
// cvt.rn.satfinite.e4m3x2.f32, decode with cvt.rn.f16x2.e4m3x2 + cvt.f32.f16.
// UE4M3 is E4M3 without the sign bit (same exponent, mantissa, bias and NaN
// code), and a TE block scale is never negative (amax >= 0 times S_enc > 0,
// clamped to FLT_MAX), so the E4M3 code of it is its UE4M3 code; the
// instruction's rule is the recipe's scale rule (static_assert below). A
// stored byte is decoded as the model does, through the UE4M3 spec: its top
// bit is not part of the code.
template <typename R>
struct HwUe4m3Codec {
  static constexpr FormatSpec kScale = R::Get().scale_format;
  static constexpr FormatSpec kE4m3Spec = SpecValue<FormatId::kE4m3>();
  static_assert(!kScale.has_sign && kScale.exponent_bits == kE4m3Spec.exponent_bits &&
                    kScale.mantissa_bits == kE4m3Spec.mantissa_bits && kScale.bias == kE4m3Spec.bias &&
                    kScale.specials == kE4m3Spec.specials && kScale.total_bits + 1 == kE4m3Spec.total_bits,
                "the NVFP4 scale format is E4M3 without the sign");
  static_assert(SameEncodeSemantics(kE4m3Spec, recipe::detail::Nvfp4ScaleOptions(R::Get()),
                                    HardwareEncodeRule(FormatId::kE4m3, RoundingMode::kNearestEven, true).options),
                "the recipe's UE4M3 rule is not cvt.rn.satfinite's (hardware_rule.h)");
  __device__ __forceinline__ std::uint8_t Encode(float v) const {
    return static_cast<std::uint8_t>(ptx::CvtE4m3x2F32(v, 0.0f) & 0xFFu);
  }
  static constexpr std::uint32_t kCodeMask = static_cast<std::uint32_t>(kScale.CodeMask());
  __device__ __forceinline__ float Decode(std::uint32_t code) const { return E4m3ToF32(code & kCodeMask); }
};

// The recipe functor of an NVFP4 recipe R (the TE rule): what every kernel
// below computes per tensor, block and element.
template <typename R, bool kOneAddition>
struct Nvfp4Steps {
  static_assert(R::Get().scale_rule == recipe::ScaleRule::kNvfp4Te, "the TE NVFP4 rule");
  static_assert(E2m1AlternativeApplies(R::Get()), "the E2M1 alternatives do not compute this element rule");
  static_assert(R::Get().element_step == recipe::ElementStep::kMultiply && R::Get().layout.size % 8 == 0);
  static constexpr int kBlock = R::Get().layout.size;  // 16
  static constexpr AmaxNan kAmaxNan = R::Get().amax_nan;

  const float* global_amax;
  recipe::TensorScale tensor{};

  __device__ __forceinline__ static recipe::TensorScale TensorScaleOf(float amax) {
    constexpr recipe::Recipe kR = R::Get();
    return recipe::ChooseTensorScale(kR, amax);
  }
  __device__ __forceinline__ void Init() { tensor = TensorScaleOf(__ldg(global_amax)); }
  __device__ __forceinline__ float Amax(float m, float a) const { return CombineAmax<kAmaxNan>(m, a); }
  __device__ __forceinline__ recipe::BlockScale Scale(float amax) const {
    constexpr recipe::Recipe kR = R::Get();
    return alternatives::ChooseNvfp4TeScale(kR, amax, tensor, HwUe4m3Codec<R>{});
  }
  __device__ __forceinline__ std::uint32_t Element(const recipe::BlockScale& s, float x) const {
    constexpr recipe::Recipe kR = R::Get();
    return EncodeE2m1<kOneAddition>(recipe::ScaledElement(kR, s, x));
  }
};

// The element and store stages of NVFP4 in the one-thread-per-block
// skeleton (block_skeleton.cuh BlockQuantizeKernel), which runs every layout
// for FP32 input, ReplacedLayout for BF16, and the partial last block after
// the lane groups. It writes the bytes block_skeleton.cuh CodeArrayStore
// writes for MX's 32-element blocks, but the loop is written as it was
// before the skeleton: as CodeArrayStore's (codes kept in an array, the
// tail bounded per byte) the kernel compiles to other SASS (704
// instructions against 768 for the FP32-input copy, nvcc 13.0, sm_90a),
// whose speed no GPU run has measured yet.
struct Nvfp4Store {
  template <typename Steps, int kB>
  __device__ __forceinline__ static void Run(const Steps& steps, const recipe::BlockScale& s, const float (&v)[kB],
                                             bool full, std::size_t b, std::size_t n,
                                             std::uint8_t* __restrict__ packed, std::uint8_t* __restrict__ scales) {
    std::uint32_t w[kB / 8] = {};
#pragma unroll
    for (int j = 0; j < kB; ++j) w[j / 8] += steps.Element(s, v[j]) << (4 * (j % 8));
    scales[b] = s.code;
    if (full && reinterpret_cast<std::uintptr_t>(packed) % 8 == 0) {
      __stcs(reinterpret_cast<uint2*>(packed) + b, make_uint2(w[0], w[1]));
    } else {
      const std::size_t bytes = (n - b * kB + 1) / 2 < kB / 2 ? (n - b * kB + 1) / 2 : kB / 2;
      for (std::size_t k = 0; k < bytes; ++k) {
        std::uint8_t byte = static_cast<std::uint8_t>((Word(w, k / 4) >> (8 * (k % 4))) & 0xFF);
        // The unused high nibble of a last byte is 0, as the model writes it
        // (the zeros past the end count for the scale only; as in
        // block_stages.cuh StoreNibbleCodes).
        if (b * kB + 2 * k + 1 >= n) byte &= 0x0F;
        packed[b * (kB / 2) + k] = byte;
      }
    }
  }
};

// The tensor scale of a call: recipe::TensorScale's two floats, S_enc then
// S_dec (recipe/tensor.h QuantizedTensor::tensor_scale).
float* TensorScaleFloats(const TensorCall& t) { return reinterpret_cast<float*>(t.q.tensor_scale); }
static_assert(sizeof(recipe::TensorScale) == 2 * sizeof(float) && offsetof(recipe::TensorScale, encode) == 0 &&
                  offsetof(recipe::TensorScale, decode) == sizeof(float),
              "the kernels write the tensor scale as two floats: encode, decode");

template <typename Layout, typename R>
Status Quantize(const TensorCall& t, std::size_t count) {
  using Steps = Nvfp4Steps<R, Layout::kOneAdditionE2m1>;
  float* const tensor_scale = TensorScaleFloats(t);
  Status s = CheckDeviceBuffers("nvfp4", {t.input, t.q.codes, t.q.scale_codes, tensor_scale});
  if (!s.ok) return s;
  const float* amax = t.tensor_amax;
  if (amax == nullptr) {
    if (t.workspace == nullptr) return Status::Error("nvfp4: a tensor amax or a workspace required");
    s = CheckDeviceBuffers("nvfp4", {t.workspace});
    if (!s.ok) return s;
    static_assert(Steps::kAmaxNan == AmaxNan::kIgnore, "LaunchTensorAmax skips NaN");
    s = LaunchTensorAmax(t.input_type, t.input, count, t.workspace, t.stream);
    if (!s.ok) return s;
    amax = t.workspace;
  } else {
    s = CheckDeviceBuffers("nvfp4", {amax});
    if (!s.ok) return s;
  }
  TensorScaleKernel<Nvfp4Steps<R, true>, KeptScale::kDecode><<<1, 1, 0, t.stream>>>(amax, tensor_scale + 1,
                                                                                tensor_scale);
  const Steps steps{amax};
  constexpr std::size_t kB = Steps::kBlock;
  const std::size_t blocks = (count + kB - 1) / kB;
  const bool vector = reinterpret_cast<std::uintptr_t>(t.input) % 16 == 0;
  if (t.input_type == InputType::kF32) {
    BlockQuantizeKernel<Steps, std::uint32_t, Nvfp4Store><<<GridFor(blocks, 256), 256, 0, t.stream>>>(
        static_cast<const std::uint32_t*>(t.input), count, steps, t.q.codes, t.q.scale_codes, vector);
    return LastLaunchStatus("nvfp4");
  }
  std::size_t done = 0;
  if (count / kB * 2 < 0x3FFFFFFF00ull) {
    done = LaunchFp4Bf16Lanes<Layout>(t.input, count, steps, t.q.codes, t.q.scale_codes, t.stream);
  }
  if (done < count) {
    // The rest: everything (no lane groups) or the partial last block.
    const auto* x = static_cast<const std::uint16_t*>(t.input) + done;
    const std::size_t rest = count - done;
    BlockQuantizeKernel<Steps, std::uint16_t, Nvfp4Store><<<done == 0 ? GridFor(blocks, 256) : 1u, 256, 0, t.stream>>>(
        x, rest, steps, t.q.codes + done / 2, t.q.scale_codes + done / kB, done == 0 && vector);
  }
  return LastLaunchStatus("nvfp4");
}

// ---------------- dequantization ----------------

// The recipe's dequantize step for one element, (q * s_block) * S_dec
// (recipe::DecodeElement, DequantizeOrder::kElementTimesScaleThenTensor),
// with q from the bits (alternatives::DecodeE2m1FromBits) and s_block from
// the cuda-hw decode. The model pins which NaN a NaN product returns
// (F32MulAsX86); the BF16 output makes every NaN 0x7FFF
// (cvt.rn.bf16x2.f32), so plain multiplies give the same bits.
template <typename R>
struct Nvfp4DequantSteps {
  static_assert(R::Get().dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor);
  static_assert(IsFormat<FormatId::kE2m1>(R::Get().element));
  __device__ __forceinline__ static float Scale(std::uint32_t code) { return HwUe4m3Codec<R>{}.Decode(code); }
  __device__ __forceinline__ static float Value(std::uint32_t code, float s, float s_dec) {
    return __fmul_rn(__fmul_rn(alternatives::DecodeE2m1FromBits(code), s), s_dec);
  }
};

// (q * s) * S_dec, then BF16 RN. One thread per block of 16 (ReplacedLayout,
// and any misaligned buffer).
template <typename R>
__global__ void __launch_bounds__(256, 4)
    Nvfp4DequantKernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                       const float* __restrict__ decode_scale, std::size_t n, std::uint16_t* __restrict__ out,
                       bool vector) {
  using D = Nvfp4DequantSteps<R>;
  const float s_dec = __ldg(decode_scale);
  const std::size_t blocks = (n + 15) / 16;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t b = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks; b += stride) {
    const float s = D::Scale(__ldg(scales + b));
    const bool full = vector && (b + 1) * 16 <= n;
    std::uint32_t w[2];
    if (full) {
      const uint2 p = __ldg(reinterpret_cast<const uint2*>(packed) + b);
      w[0] = p.x;
      w[1] = p.y;
    } else {
      w[0] = w[1] = 0;
      for (std::size_t k = 0; k < 8 && b * 16 + 2 * k < n; ++k) {
        w[k / 4] |= static_cast<std::uint32_t>(packed[b * 8 + k]) << (8 * (k % 4));
      }
    }
    std::uint32_t o[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const std::uint32_t word = w[j / 4];
      const int shift = 8 * (j % 4);
      o[j] = ptx::CvtRnBf16x2F32(D::Value(word >> shift, s, s_dec), D::Value(word >> (shift + 4), s, s_dec));
    }
    if (full && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
      uint4* dst = reinterpret_cast<uint4*>(out + b * 16);
      __stcs(dst, make_uint4(o[0], o[1], o[2], o[3]));
      __stcs(dst + 1, make_uint4(o[4], o[5], o[6], o[7]));
    } else {
      for (int j = 0; j < 16 && b * 16 + j < n; ++j) {
        out[b * 16 + j] = static_cast<std::uint16_t>(o[j / 2] >> (16 * (j % 2)));
      }
    }
  }
}

// The flat layout of map_kernel.cuh for the dequantization (layout.cuh
// kFlat): a unit is 8 elements, 4 packed bytes in and one 16-byte BF16 store
// out, so a warp's loads and stores are contiguous spans; each thread issues
// its 4 units' loads (and their block scales) before decoding. The
// one-thread-per-block layout stored 2 x 16 bytes per lane 32 bytes apart and
// moved 0.65x copy on the H200 (bench/RESULTS-archive-2026.md "CUDA").
template <typename R>
__device__ __forceinline__ uint4 DecodeUnit(std::uint32_t word, float s, float s_dec) {
  using D = Nvfp4DequantSteps<R>;
  std::uint32_t o[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    o[j] = ptx::CvtRnBf16x2F32(D::Value(word >> (8 * j), s, s_dec), D::Value(word >> (8 * j + 4), s, s_dec));
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

template <typename R, bool kPlain>
__global__ void __launch_bounds__(kFlatThreads)
    Nvfp4DequantFlatKernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                           const float* __restrict__ decode_scale, std::size_t n, std::uint16_t* __restrict__ out) {
  using D = Nvfp4DequantSteps<R>;
  constexpr int kT = kFlatThreads, kU = kFlatUnroll;
  const std::size_t units = n / 8;
  const float s_dec = __ldg(decode_scale);
  const auto* words = reinterpret_cast<const unsigned*>(packed);
  auto* out4 = reinterpret_cast<uint4*>(out);
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kT * kU) + threadIdx.x;
  if (base + (kU - 1) * kT < units) {
    unsigned w[kU];
    std::uint8_t sc[kU];
#pragma unroll
    for (int k = 0; k < kU; ++k) {
      w[k] = LoadStreaming<kPlain>(words + base + k * kT);
      sc[k] = __ldg(scales + (base + k * kT) / 2);
    }
#pragma unroll
    for (int k = 0; k < kU; ++k) {
      StoreStreaming<kPlain>(out4 + base + k * kT, DecodeUnit<R>(w[k], D::Scale(sc[k]), s_dec));
    }
  } else {
    for (int k = 0; k < kU; ++k) {
      const std::size_t u = base + k * kT;
      if (u >= units) break;
      StoreStreaming<kPlain>(out4 + u, DecodeUnit<R>(words[u], D::Scale(scales[u / 2]), s_dec));
    }
  }
  if (blockIdx.x == 0) {  // the last n % 8 elements
    for (std::size_t i = units * 8 + threadIdx.x; i < n; i += kT) {
      const std::uint32_t code = (packed[i / 2] >> (4 * (i % 2))) & 0xFu;
      out[i] = static_cast<std::uint16_t>(ptx::CvtRnBf16x2F32(D::Value(code, D::Scale(scales[i / 16]), s_dec), 0.0f));
    }
  }
}

template <typename Layout, typename R>
Status Dequantize(const std::uint8_t* packed, const std::uint8_t* scales, const float* decode_scale,
                  std::size_t count, std::uint16_t* out, cudaStream_t stream) {
  Status s = CheckDeviceBuffers("nvfp4 dequantize", {packed, scales, decode_scale, out});
  if (!s.ok) return s;
  if constexpr (Layout::kFlat) {
    if (reinterpret_cast<std::uintptr_t>(packed) % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
      const std::size_t per_block = static_cast<std::size_t>(kFlatThreads) * kFlatUnroll;
      const std::size_t grid = (count / 8 + per_block - 1) / per_block;
      if (grid < 0x7FFFFFFFu) {
        const unsigned g = static_cast<unsigned>(grid > 0 ? grid : 1);
        Nvfp4DequantFlatKernel<R, Layout::kPlainAccess><<<g, kFlatThreads, 0, stream>>>(packed, scales,
                                                                                      decode_scale, count, out);
        return LastLaunchStatus("nvfp4 dequantize");
      }
    }
  }
  const bool vector = reinterpret_cast<std::uintptr_t>(packed) % 8 == 0;
  Nvfp4DequantKernel<R><<<GridFor((count + 15) / 16, 256), 256, 0, stream>>>(packed, scales, decode_scale, count,
                                                                            out, vector);
  return LastLaunchStatus("nvfp4 dequantize");
}

// FP32 output with the model's bits: the element and scale values are the
// model's decodes (tables built on the host), the products the model's
// (F32MulAsX86 in the recipe's order), so a NaN scale byte
// gives the model's NaN. One thread per element pair: the path for buffers
// that Nvfp4DequantF32UnitsKernel (below) cannot take, unaligned ones.
struct Nvfp4DecodeTables {
  float element[16];
  float scale[256];
};

template <typename R>
Nvfp4DecodeTables MakeNvfp4DecodeTables() {
  constexpr recipe::Recipe r = R::Get();
  Nvfp4DecodeTables t{};
  recipe::TensorScale unit;  // decode 1: the element times its scale alone
  unit.decode = 1.0f;
  for (std::uint32_t c = 0; c < 16; ++c) {
    recipe::BlockScale one;
    one.decode = 1.0f;
    t.element[c] = recipe::DecodeElement(r, one, unit, static_cast<std::uint8_t>(c));  // q * 1 * 1 = q (never NaN)
  }
  for (std::uint32_t c = 0; c < 256; ++c) t.scale[c] = recipe::StoredScale(r, static_cast<std::uint8_t>(c), 0.0f, 0).decode;
  return t;
}

// The tables, built once (272 model decodes) and kept, as mx.cu
// CachedDecodeTables keeps MX's; a function-local static, so the first calls
// from several threads build it once.
template <typename R>
const Nvfp4DecodeTables& CachedNvfp4DecodeTables() {
  static const Nvfp4DecodeTables tables = MakeNvfp4DecodeTables<R>();
  return tables;
}

template <typename R>
__global__ void __launch_bounds__(256)
    Nvfp4DequantF32Kernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                          const float* __restrict__ decode_scale, std::size_t n, Nvfp4DecodeTables tables,
                          float* __restrict__ out) {
  static_assert(R::Get().dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor);
  const float s_dec = __ldg(decode_scale);
  const std::size_t pairs = (n + 1) / 2;
  for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs;
       p += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t byte = __ldg(packed + p);
    const float s = tables.scale[__ldg(scales + (2 * p) / 16)];
    for (int k = 0; k < 2 && 2 * p + k < n; ++k) {
      const float q = tables.element[(byte >> (4 * k)) & 0xFu];
      out[2 * p + k] = F32MulAsX86(F32MulAsX86(q, s), s_dec);
    }
  }
}

// The same products, four elements a thread step: one 2-byte load of codes
// (a unit of 4 never straddles a 16-element scale block), the unit's scale
// byte, one 16-byte store (lane i of a warp takes unit base + i, so a warp's
// stores are one contiguous run), and the tables in shared memory (indexed
// at run time, the kernel-parameter tables above live in local memory). For
// the registry's FP32 rows at the memory roofline (bench/RESULTS-archive-2026.md, "GPU
// roofline": the one-pair kernel above was latency-bound at 0.30x copy).
// Needs 2-byte aligned codes and 16-byte aligned output; the elements after
// the last whole unit are done by block 0, one per thread.
constexpr int kNvfp4Unit = 4;
constexpr int kNvfp4UnitThreads = 128;
constexpr int kNvfp4UnitsPerThread = 8;
static_assert(16 % kNvfp4Unit == 0, "a unit lies inside one scale block");

template <typename R>
__global__ void __launch_bounds__(kNvfp4UnitThreads)
    Nvfp4DequantF32UnitsKernel(const std::uint8_t* __restrict__ packed, const std::uint8_t* __restrict__ scales,
                               const float* __restrict__ decode_scale, std::size_t n, Nvfp4DecodeTables tables,
                               float* __restrict__ out) {
  static_assert(R::Get().dequantize_order == recipe::DequantizeOrder::kElementTimesScaleThenTensor);
  __shared__ float element[16];
  __shared__ float scale[256];
  for (int i = threadIdx.x; i < 256; i += kNvfp4UnitThreads) {
    scale[i] = tables.scale[i];
    if (i < 16) element[i] = tables.element[i];
  }
  __syncthreads();
  const float s_dec = __ldg(decode_scale);
  const std::size_t units = n / kNvfp4Unit;
  const std::size_t base =
      static_cast<std::size_t>(blockIdx.x) * (kNvfp4UnitThreads * kNvfp4UnitsPerThread) + threadIdx.x;
  std::uint32_t word[kNvfp4UnitsPerThread];
  std::uint32_t scale_code[kNvfp4UnitsPerThread];
#pragma unroll
  for (int k = 0; k < kNvfp4UnitsPerThread; ++k) {
    const std::size_t u = base + static_cast<std::size_t>(k) * kNvfp4UnitThreads;
    if (u < units) {
      word[k] = __ldg(reinterpret_cast<const std::uint16_t*>(packed) + u);
      scale_code[k] = __ldg(scales + u * kNvfp4Unit / 16);
    }
  }
#pragma unroll
  for (int k = 0; k < kNvfp4UnitsPerThread; ++k) {
    const std::size_t u = base + static_cast<std::size_t>(k) * kNvfp4UnitThreads;
    if (u >= units) break;
    const float s = scale[scale_code[k]];
    float v[kNvfp4Unit];
#pragma unroll
    for (int j = 0; j < kNvfp4Unit; ++j) {
      v[j] = F32MulAsX86(F32MulAsX86(element[(word[k] >> (4 * j)) & 0xFu], s), s_dec);
    }
    reinterpret_cast<float4*>(out)[u] = make_float4(v[0], v[1], v[2], v[3]);
  }
  if (blockIdx.x == 0) {
    for (std::size_t i = units * kNvfp4Unit + threadIdx.x; i < n; i += kNvfp4UnitThreads) {
      const float q = element[LowFirstNibbleCode(packed, i)];
      out[i] = F32MulAsX86(F32MulAsX86(q, scale[__ldg(scales + i / 16)]), s_dec);
    }
  }
}

}  // namespace
}  // namespace detail

namespace detail {
namespace {

Status DequantizeToF32(const std::uint8_t* packed_codes, const std::uint8_t* scales, const float* decode_scale,
                       std::size_t count, float* out, cudaStream_t stream) {
  using R = Nvfp4TeRecipe;
  Status s = CheckDeviceBuffers("nvfp4 dequantize", {packed_codes, scales, decode_scale, out});
  if (!s.ok) return s;
  const Nvfp4DecodeTables& tables = CachedNvfp4DecodeTables<R>();
  const bool aligned = reinterpret_cast<std::uintptr_t>(packed_codes) % (kNvfp4Unit / 2) == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  // 0 blocks: the unit grid would reach gridDim.x's limit (unit_store.cuh UnitBlocks).
  const unsigned unit_blocks =
      aligned ? UnitBlocks(count / kNvfp4Unit, kNvfp4UnitThreads * kNvfp4UnitsPerThread) : 0;
  if (unit_blocks > 0) {
    Nvfp4DequantF32UnitsKernel<R><<<unit_blocks, kNvfp4UnitThreads, 0, stream>>>(packed_codes, scales, decode_scale,
                                                                                count, tables, out);
  } else {
    Nvfp4DequantF32Kernel<R><<<GridFor((count + 1) / 2, 256), 256, 0, stream>>>(packed_codes, scales, decode_scale,
                                                                               count, tables, out);
  }
  return LastLaunchStatus("nvfp4 dequantize");
}

}  // namespace

// TE's recipe, the one these kernels fold in (recipe_plan.h
// RunsOnNvfp4Kernels: a recipe with its semantics).
Status LaunchNvfp4(bool quantize, const TensorCall& t) {
  const char* what = quantize ? "nvfp4" : "nvfp4 dequantize";
  if (t.recipe == nullptr) return Status::Error(std::string(what) + ": null recipe");
  if (!RunsOnNvfp4Kernels(*t.recipe)) {
    return Status::Error(std::string(what) + ": no GPU kernel for the recipe '" + RecipeLabel(*t.recipe) +
                         "' (the NVFP4 kernels take the semantics of \"nvfp4:te\")");
  }
  if (t.rows == 0 || t.cols == 0) return Status::Ok();
  if (Status s = CheckSize(what, t.rows, t.cols, 4); !s.ok) return s;
  const std::size_t count = t.rows * t.cols;  // the flattened tensor's 1-D blocks
  if (quantize) {
    return WithLayout(t.variant, [&](auto layout) { return Quantize<decltype(layout), Nvfp4TeRecipe>(t, count); });
  }
  const float* decode_scale = t.q.tensor_scale != nullptr ? TensorScaleFloats(t) + 1 : nullptr;
  if (t.output_type == OutputType::kF32) {
    return DequantizeToF32(t.q.codes, t.q.scale_codes, decode_scale, count, static_cast<float*>(t.output), t.stream);
  }
  return WithLayout(t.variant, [&](auto layout) {
    return Dequantize<decltype(layout), Nvfp4TeRecipe>(t.q.codes, t.q.scale_codes, decode_scale, count,
                                                       static_cast<std::uint16_t*>(t.output), t.stream);
  });
}

}  // namespace detail

}  // namespace lowbit::cuda
