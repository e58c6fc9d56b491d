// MX on the GPU (MXFP4, MXFP6, MXFP8, MXINT8): blocks of 32 elements sharing
// an E8M0 scale, quantized with a recipe that has the semantics of the
// catalog's "<format>:te" (RCEIL, NaN-skipping amax; float elements) or
// "<format>:ocp" (FLOOR, NaN-propagating amax; MXINT8 too)
// (formats/spec/include/lowbit/formats/recipe/catalog.h,
// docs/formats-reference.md §5.3; recipe_plan.h MxKernelProfile), whatever
// its name, and dequantized as the model does: x_i = element_i * X as one
// FP32 multiply, X = 2^(code - 127) (code 0 is the FP32 subnormal 2^-127), a
// NaN scale (0xFF) making every element NaN. Codes: E2M1 packed two per
// byte, element 0 in the low nibble (§4.5); every other element one code per
// byte. NaN results carry the bits the host model gives, x86's rule for a
// NaN operand of a multiply: the element's NaN (quieted) when the element is
// NaN (FP8 NaN codes), else the decoded NaN scale; BF16 output rounds that
// FP32 value to nearest even with cvt.rn.bf16x2.f32 (every NaN -> 0x7FFF).
// Equal bit for bit to the model's steps (cuda/tests/quantize_test.cc,
// mx_dequantize_test.cc). Entry point: tensor_call.h LaunchMx.
//
// The kernels are templates over the recipe (recipes.cuh) and its
// functor MxSteps, which calls the model's steps (recipe/steps.h) or a named
// alternative proven equal to one (formats/include/lowbit/formats/
// alternatives/): the amax step, the block scale (alternatives::ChooseMxScale:
// RCEIL from the bits, the other rules the model's), the scaled element
// (alternatives::ScaledMxElementByReciprocal), and the element conversion:
// the E2M1 alternatives, the cuda-hw FP8 instruction (its rule
// static_asserted to be the recipe's), the FP6 alternatives (alternatives/
// fp6.h: one FP32 addition, 12 instructions an element on sm_90 against the
// model's ~130) and the MXINT8 one (alternatives/mxint8.h: clamp and one
// FP32 addition, 3 instructions), each for the element rules it is proven
// for (a recipe with another rule takes the model's own encode).
// Dequantization multiplies the model's decoded element by the model's
// decoded scale.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "block_common.cuh"
#include "block_skeleton.cuh"
#include "checks.h"
#include "fp4_lanes.cuh"
#include "launch.cuh"
#include "layout.cuh"
#include "layout_variants.h"
#include "lowbit/formats/alternatives/fp6.h"
#include "lowbit/formats/alternatives/mx_block.h"
#include "lowbit/formats/alternatives/mxint8.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/steps.h"
#include "recipes.cuh"
#include "tensor_call.h"
#include "unit_store.cuh"

namespace lowbit::cuda {
namespace detail {
namespace {

// The recipe functor of an MX recipe R. kOneAddition picks the E2M1 encoder
// (layout.cuh kOneAdditionE2m1); it changes nothing for other elements.
template <typename R, bool kOneAddition>
struct MxSteps {
  static_assert(R::Get().family() == recipe::Family::kMx && R::Get().layout.size % 8 == 0);
  static constexpr FormatId kElement = FormatIdOf(R::Get().element);
  static constexpr int kBlock = R::Get().layout.size;  // 32
  static constexpr bool kPacked = R::Get().packing == recipe::Packing::kNibblesLowFirst;
  static constexpr AmaxNan kAmaxNan = R::Get().amax_nan;
  static constexpr bool kFp8Element = kElement == FormatId::kE4m3 || kElement == FormatId::kE5m2;
  static_assert(kElement != FormatId::kE2m1 || E2m1AlternativeApplies(R::Get()),
                "the E2M1 alternatives do not compute this element rule");
  static_assert(!kFp8Element || HardwareEncodesElements<kElement>(R::Get()),
                "the recipe's element rule is not cvt.rn.satfinite's (hardware_rule.h)");
  static_assert(!kPacked || kElement == FormatId::kE2m1, "only E2M1 codes are packed here");

  __device__ __forceinline__ void Init() const {}
  __device__ __forceinline__ float Amax(float m, float a) const { return CombineAmax<kAmaxNan>(m, a); }
  // The block's E8M0 code and 2^-e, once per block.
  __device__ __forceinline__ recipe::BlockScale Scale(float amax) const {
    constexpr recipe::Recipe kR = R::Get();
    return alternatives::MxScaleByReciprocal(alternatives::ChooseMxScaleCode(kR, amax));
  }
  __device__ __forceinline__ std::uint32_t Element(const recipe::BlockScale& s, float x) const {
    constexpr recipe::Recipe kR = R::Get();
    if constexpr (kElement == FormatId::kE2m1) {
      return EncodeE2m1<kOneAddition>(alternatives::ScaledMxElementAnyNan(s, x));  // every NaN -> +6
    } else if constexpr (kFp8Element) {
      static_assert(HardwareEncodeRule(kElement, RoundingMode::kNearestEven, true).options.nan_sign ==
                        NanSign::kPositive,
                    "ScaledMxElementAnyNan needs an instruction that gives every NaN one code");
      return Fp8Pair<kElement>(alternatives::ScaledMxElementAnyNan(s, x), 0.0f) & 0xFFu;
    } else if constexpr (alternatives::Fp6AlternativeApplies(kR)) {
      // MXFP6 with an element rule the FP6 alternatives are proven for (every
      // MX profile of recipe/catalog.h, te and ocp among them:
      // proptests/backends/alternatives_test.cc): round to nearest (ties to
      // even for te and ocp), saturate, NaN -> +max (0x1F), -0 -> 0x20,
      // recipe::EncodeScaled's FP6 conversion (alternatives/fp6.h).
      static_assert(kR.element_encode.nan_into_no_nan == NanIntoNoNan::kPositiveMax &&
                    kR.element_encode.keep_negative_zero);
      constexpr RoundingMode kRounding = kR.element_encode.rounding;
      const float y = alternatives::ScaledMxElementByReciprocal(kR, s, x);
      if constexpr (kElement == FormatId::kE2m3) return alternatives::EncodeE2m3<kRounding>(y);
      else return alternatives::EncodeE3m2<kRounding>(y);
    } else if constexpr (alternatives::MxInt8AlternativeApplies(kR)) {
      // MXINT8 likewise (alternatives/mxint8.h): round to nearest (ties to
      // even for te and ocp), clamp to [-127, 127], NaN -> +127,
      // recipe::EncodeScaled's MX-integer branch.
      static_assert(kR.qmin == -127 && kR.qmax == 127 &&
                    kR.element_encode.nan_into_no_nan == NanIntoNoNan::kPositiveMax);
      constexpr RoundingMode kRounding = kR.element_encode.rounding;
      return alternatives::EncodeMxInt8<kRounding>(alternatives::ScaledMxElementByReciprocal(kR, s, x));
    } else {
      // MXFP6 or MXINT8 with another element rule: the model's scaled element
      // and conversion.
      return recipe::EncodeScaled(kR, s, alternatives::ScaledMxElementByReciprocal(kR, s, x));
    }
  }
};

// One thread per block of 32 (block_skeleton.cuh BlockQuantizeKernel): every
// element but BF16 E2M1 in the current layouts, and the partial last block
// after the lane groups. `count` elements of `input` (t.input or past its
// lane groups) into `codes` and `scales`.
template <typename Steps>
void LaunchMxKernel(const TensorCall& t, const void* input, std::size_t count, std::uint8_t* codes,
                    std::uint8_t* scales) {
  const std::size_t blocks = (count + Steps::kBlock - 1) / Steps::kBlock;
  const unsigned grid = GridFor(blocks, 256);
  const bool vector = reinterpret_cast<std::uintptr_t>(input) % 16 == 0;
  if (t.input_type == InputType::kF32) {
    BlockQuantizeKernel<Steps, std::uint32_t, CodeArrayStore><<<grid, 256, 0, t.stream>>>(
        static_cast<const std::uint32_t*>(input), count, Steps{}, codes, scales, vector);
  } else {
    BlockQuantizeKernel<Steps, std::uint16_t, CodeArrayStore><<<grid, 256, 0, t.stream>>>(
        static_cast<const std::uint16_t*>(input), count, Steps{}, codes, scales, vector);
  }
}

template <typename Layout, typename R>
void LaunchMxOf(const TensorCall& t, std::size_t count) {
  // The E2M1 encoder is the only layout choice of non-packed elements' one
  // kernel, so every layout shares one instantiation for them.
  constexpr bool kOneAddition = FormatIdOf(R::Get().element) != FormatId::kE2m1 || Layout::kOneAdditionE2m1;
  using Steps = MxSteps<R, kOneAddition>;
  if constexpr (Steps::kPacked) {
    if (t.input_type == InputType::kBf16) {
      const std::size_t done =
          LaunchFp4Bf16Lanes<Layout>(t.input, count, Steps{}, t.q.codes, t.q.scale_codes, t.stream);
      if (done > 0) {
        if (done == count) return;
        // The partial last block: the one-thread-per-block kernel.
        return LaunchMxKernel<Steps>(t, static_cast<const std::uint16_t*>(t.input) + done, count - done,
                                     t.q.codes + done / 2, t.q.scale_codes + done / Steps::kBlock);
      }
    }
  }
  LaunchMxKernel<Steps>(t, t.input, count, t.q.codes, t.q.scale_codes);
}

// The copy compiled for the profile that runs the recipe (recipe_plan.h
// MxKernelProfile, checked by LaunchMx before any launch).
template <typename Layout, FormatId kElement>
void LaunchMxRecipe(const TensorCall& t, std::size_t count) {
  if constexpr (kMxKernelCompiled<kElement, kMxTeProfile>) {
    if (MxKernelProfile(*t.recipe) == kMxTeProfile) {
      return LaunchMxOf<Layout, MxRecipeOf<kElement, kMxTeProfile>>(t, count);
    }
  }
  LaunchMxOf<Layout, MxRecipeOf<kElement, kMxOcpProfile>>(t, count);
}

template <typename Layout>
Status Quantize(const TensorCall& t, std::size_t count) {
  switch (FormatIdOf(t.recipe->element)) {
    case FormatId::kE2m1: LaunchMxRecipe<Layout, FormatId::kE2m1>(t, count); break;
    case FormatId::kE2m3: LaunchMxRecipe<Layout, FormatId::kE2m3>(t, count); break;
    case FormatId::kE3m2: LaunchMxRecipe<Layout, FormatId::kE3m2>(t, count); break;
    case FormatId::kE4m3: LaunchMxRecipe<Layout, FormatId::kE4m3>(t, count); break;
    case FormatId::kE5m2: LaunchMxRecipe<Layout, FormatId::kE5m2>(t, count); break;
    case FormatId::kInt8: LaunchMxRecipe<Layout, FormatId::kInt8>(t, count); break;
    default: return Status::Error(std::string("mx: no MX format has element ") + t.recipe->element.name);
  }
  return LastLaunchStatus("mx");
}

// ---------------- dequantization ----------------

// The model's two decoded factors of x_i = element_i * X (recipe::
// DecodeElement): every element code's value (MXINT8 with its 2^-6) and every
// scale byte's X, both computed on the host by the model and passed as
// kernel parameters (2 KB).
struct DecodeTables {
  std::uint32_t element[256];  // FP32 bits
  std::uint32_t scale[256];    // FP32 bits of X (0xFF: NaN)
};

constexpr int kDequantThreads = 256;
// Every MX format's block (recipe/catalog.h), which the kernel is built for.
constexpr int kMxBlock = recipe::kMxBlockSize;

// Grid-stride over pairs of elements (one E2M1 byte, or two code bytes). The
// product is F32MulAsX86: a NaN element (FP8 NaN codes) wins
// over a NaN scale, quieted, which is what the host model's FP32 multiply
// returns on x86 and NVIDIA's FMUL would not (it returns 0x7FFFFFFF;
// docs/formats-reference.md §3.3).
template <int kBlock, bool kPacked, typename Out>
__global__ void __launch_bounds__(kDequantThreads)
    MxDequantKernel(const std::uint8_t* __restrict__ codes, const std::uint8_t* __restrict__ scales,
                    std::size_t n, DecodeTables tables, Out* __restrict__ out) {
  __shared__ float element[256];
  __shared__ float scale[256];
  element[threadIdx.x] = __uint_as_float(tables.element[threadIdx.x]);
  scale[threadIdx.x] = __uint_as_float(tables.scale[threadIdx.x]);
  __syncthreads();
  const std::size_t pairs = (n + 1) / 2;
  for (std::size_t p = static_cast<std::size_t>(blockIdx.x) * kDequantThreads + threadIdx.x; p < pairs;
       p += static_cast<std::size_t>(gridDim.x) * kDequantThreads) {
    const std::size_t i = 2 * p;
    std::uint32_t c0, c1;
    if constexpr (kPacked) {
      const std::uint32_t b = __ldg(codes + p);
      c0 = b & 0xFu;
      c1 = b >> 4;
    } else {
      c0 = __ldg(codes + i);
      c1 = i + 1 < n ? __ldg(codes + i + 1) : 0u;
    }
    const float x = scale[__ldg(scales + i / kBlock)];  // i even: i and i + 1 share a block
    const float v0 = F32MulAsX86(element[c0], x);
    const float v1 = F32MulAsX86(element[c1], x);
    if constexpr (sizeof(Out) == 4) {
      out[i] = v0;
      if (i + 1 < n) out[i + 1] = v1;
    } else {
      const std::uint32_t pair = ptx::CvtRnBf16x2F32(v0, v1);
      out[i] = static_cast<std::uint16_t>(pair);
      if (i + 1 < n) out[i + 1] = static_cast<std::uint16_t>(pair >> 16);
    }
  }
}

// The same products a unit of elements at a time, in the flat layout of the
// element maps (map_kernel.cuh FlatMapKernel): block b owns kUnitsPerThread *
// kDequantUnitThreads consecutive units, thread t the units
// b * kDequantUnitThreads * kUnitsPerThread + t + k * kDequantUnitThreads,
// every load issued before the first use. A unit is four elements for FP32
// output (a 2-byte E2M1 pair or 4 code bytes in, one 16-byte store out, so
// that a warp's stores are one contiguous run) and eight for BF16 (a 4-byte
// E2M1 word or 8 code bytes in, one 16-byte store out). A unit lies in one
// scale block (kMxBlock = 32). The elements after the last whole unit go
// one by one through the first block. Used when codes and output are
// aligned for those accesses; MxDequantKernel otherwise.
constexpr int kDequantUnitThreads = 128;

template <typename Out>
constexpr int UnitOf() {
  return sizeof(Out) == 4 ? 4 : 8;
}
// Eight units a thread for either output (32 elements for FP32, 64 for
// BF16): with four BF16 units a thread the MXFP4 -> BF16 kernel ran at 33%
// of DRAM bandwidth with 97% of warps active and 37% issue on the H200
// (ncu, bench/RESULTS-archive-2026.md "GPU roofline"): too few loads in flight.
template <typename Out>
constexpr int ElementsPerThreadOf() {
  return 8 * UnitOf<Out>();
}

template <bool kPacked>
__device__ __forceinline__ std::uint32_t CodeOf(const std::uint8_t* codes, std::size_t i) {
  if constexpr (kPacked) return LowFirstNibbleCode(codes, i);
  else return __ldg(codes + i);
}

template <bool kPacked, typename Out>
__global__ void __launch_bounds__(kDequantUnitThreads)
    MxDequantUnitsKernel(const std::uint8_t* __restrict__ codes, const std::uint8_t* __restrict__ scales,
                         std::size_t n, DecodeTables tables, Out* __restrict__ out) {
  constexpr int kUnit = UnitOf<Out>();
  constexpr int kUnitsPerThread = ElementsPerThreadOf<Out>() / kUnit;
  static_assert(kMxBlock % kUnit == 0);
  // A unit's codes: kUnit bytes, or kUnit nibbles.
  using Word = std::conditional_t<(kPacked ? kUnit / 2 : kUnit) == 2, std::uint16_t,
                                  std::conditional_t<(kPacked ? kUnit / 2 : kUnit) == 4, std::uint32_t, uint2>>;
  __shared__ float element[256];
  __shared__ float scale[256];
  for (int i = threadIdx.x; i < 256; i += kDequantUnitThreads) {
    element[i] = __uint_as_float(tables.element[i]);
    scale[i] = __uint_as_float(tables.scale[i]);
  }
  __syncthreads();
  const std::size_t units = n / kUnit;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * (kDequantUnitThreads * kUnitsPerThread) + threadIdx.x;
  Word word[kUnitsPerThread];
  std::uint32_t scale_code[kUnitsPerThread];
#pragma unroll
  for (int k = 0; k < kUnitsPerThread; ++k) {
    const std::size_t u = base + k * kDequantUnitThreads;
    if (u < units) {
      word[k] = __ldg(reinterpret_cast<const Word*>(codes) + u);
      scale_code[k] = __ldg(scales + u * kUnit / kMxBlock);
    }
  }
#pragma unroll
  for (int k = 0; k < kUnitsPerThread; ++k) {
    const std::size_t u = base + k * kDequantUnitThreads;
    if (u >= units) break;
    const float x = scale[scale_code[k]];
    std::uint32_t lo, hi = 0;  // the unit's code bits, low word first
    if constexpr (std::is_same_v<Word, uint2>) {
      lo = word[k].x;
      hi = word[k].y;
    } else {
      lo = word[k];
    }
    float v[kUnit];
#pragma unroll
    for (int j = 0; j < kUnit; ++j) {
      const std::uint32_t c = kPacked ? (lo >> (4 * j)) & 0xFu : ((j < 4 ? lo : hi) >> (8 * (j % 4))) & 0xFFu;
      v[j] = F32MulAsX86(element[c], x);
    }
    if constexpr (kUnit == 4) {
      reinterpret_cast<float4*>(out)[u] = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      StoreUnit8(out + u * kUnit, v);
    }
  }
  if (blockIdx.x == 0) {
    for (std::size_t i = units * kUnit + threadIdx.x; i < n; i += kDequantUnitThreads) {
      const float v = F32MulAsX86(element[CodeOf<kPacked>(codes, i)], scale[__ldg(scales + i / kMxBlock)]);
      if constexpr (sizeof(Out) == 4) out[i] = v;
      else out[i] = static_cast<std::uint16_t>(ptx::CvtRnBf16x2F32(v, 0.0f));
    }
  }
}

// The tables of one MX format, from the model (host code). Every recipe of a
// format decodes alike; the OCP one stands for them.
template <FormatId kElement>
DecodeTables MakeDecodeTables() {
  constexpr recipe::Recipe r = MxRecipeOf<kElement, kMxOcpProfile>::Get();
  static_assert(r.layout.size == kMxBlock && r.layout.size % 2 == 0, "pairs of elements share a block");
  DecodeTables t{};
  const std::uint32_t codes = static_cast<std::uint32_t>(r.element.CodeMask()) + 1;
  recipe::BlockScale unit;
  unit.decode = 1.0f;  // element * 1: the element's own value (exact)
  for (std::uint32_t c = 0; c < 256; ++c) {
    const std::uint8_t code = static_cast<std::uint8_t>(c < codes ? c : 0);
    t.element[c] = F32Bits(recipe::DecodeElement(r, unit, recipe::TensorScale{}, code));
    t.scale[c] = F32Bits(recipe::StoredScale(r, static_cast<std::uint8_t>(c), 0.0f, 0).decode);
  }
  return t;
}

// Each format's tables, built once (512 model decodes, about as long as the
// kernel on a small tensor) and kept; a function-local static, so the first
// calls from several threads build it once.
template <FormatId kElement>
const DecodeTables& CachedDecodeTables() {
  static const DecodeTables tables = MakeDecodeTables<kElement>();
  return tables;
}

// codes and scale bytes of `count` elements -> t.output.
Status Dequantize(const TensorCall& t, std::size_t count) {
  const FormatId element = FormatIdOf(t.recipe->element);
  const std::uint8_t* codes = t.q.codes;
  const std::uint8_t* scales = t.q.scale_codes;
  DecodeTables tables;
  switch (element) {
    case FormatId::kE2m1: tables = CachedDecodeTables<FormatId::kE2m1>(); break;
    case FormatId::kE2m3: tables = CachedDecodeTables<FormatId::kE2m3>(); break;
    case FormatId::kE3m2: tables = CachedDecodeTables<FormatId::kE3m2>(); break;
    case FormatId::kE4m3: tables = CachedDecodeTables<FormatId::kE4m3>(); break;
    case FormatId::kE5m2: tables = CachedDecodeTables<FormatId::kE5m2>(); break;
    case FormatId::kInt8: tables = CachedDecodeTables<FormatId::kInt8>(); break;
    default: return Status::Error(std::string("mx dequantize: no MX format has element ") + Spec(element).name);
  }
  Status s = CheckDeviceBuffers("mx dequantize", {codes, scales, t.output});
  if (!s.ok) return s;
  const std::size_t pairs = (count + 1) / 2;
  const unsigned grid = GridFor(pairs, kDequantThreads);
  const bool packed = element == FormatId::kE2m1;
  auto launch = [&](auto* out) {
    using Out = std::remove_pointer_t<decltype(out)>;
    // The unit kernel's accesses: a unit's code word (kUnit bytes or nibbles),
    // 16-byte stores.
    constexpr int kUnit = UnitOf<Out>();
    const bool aligned = reinterpret_cast<std::uintptr_t>(codes) % (packed ? kUnit / 2 : kUnit) == 0 &&
                         reinterpret_cast<std::uintptr_t>(t.output) % 16 == 0;
    // 0 blocks: the unit grid would reach gridDim.x's limit (unit_store.cuh UnitBlocks).
    const unsigned blocks =
        aligned ? UnitBlocks(count / kUnit, kDequantUnitThreads * (ElementsPerThreadOf<Out>() / kUnit)) : 0;
    if (blocks > 0) {
      if (packed) {
        MxDequantUnitsKernel<true, Out><<<blocks, kDequantUnitThreads, 0, t.stream>>>(codes, scales, count,
                                                                                      tables, out);
      } else {
        MxDequantUnitsKernel<false, Out><<<blocks, kDequantUnitThreads, 0, t.stream>>>(codes, scales, count,
                                                                                       tables, out);
      }
      return;
    }
    if (packed) {
      MxDequantKernel<kMxBlock, true, Out><<<grid, kDequantThreads, 0, t.stream>>>(codes, scales, count,
                                                                                   tables, out);
    } else {
      MxDequantKernel<kMxBlock, false, Out><<<grid, kDequantThreads, 0, t.stream>>>(codes, scales, count,
                                                                                    tables, out);
    }
  };
  if (t.output_type == OutputType::kF32) launch(static_cast<float*>(t.output));
  else launch(static_cast<std::uint16_t*>(t.output));
  return LastLaunchStatus("mx dequantize");
}

}  // namespace
}  // namespace detail

namespace detail {

Status LaunchMx(bool quantize, const TensorCall& t) {
  const char* what = quantize ? "mx" : "mx dequantize";
  if (t.recipe == nullptr) return Status::Error(std::string(what) + ": null recipe");
  if (MxKernelProfile(*t.recipe) < 0) {
    return Status::Error(std::string(what) + ": no GPU kernel for the recipe '" + RecipeLabel(*t.recipe) +
                         "' (the MX kernels take the semantics of \"<format>:te\" and \"<format>:ocp\")");
  }
  if (quantize && t.input_type != InputType::kF32 && t.input_type != InputType::kBf16) {
    return Status::Error("mx: input type " + std::to_string(static_cast<int>(t.input_type)) +
                         " is not an InputType (0 f32, 1 bf16)");
  }
  if (t.rows == 0 || t.cols == 0) return Status::Ok();
  if (Status c = CheckSize(what, t.rows, t.cols, 4); !c.ok) return c;
  const std::size_t count = t.rows * t.cols;  // the flattened tensor's 1-D blocks
  if (!quantize) return Dequantize(t, count);
  Status s = CheckDeviceBuffers("mx", {t.input, t.q.codes, t.q.scale_codes});
  if (!s.ok) return s;
  return WithLayout(t.variant, [&](auto layout) { return Quantize<decltype(layout)>(t, count); });
}

}  // namespace detail
}  // namespace lowbit::cuda
