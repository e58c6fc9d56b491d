// The model recipe kernels of model_recipe.h: the model's whole-tensor
// steps (formats/include/lowbit/formats/recipe/tensor.h, steps.h) compiled
// for the device over a recipe passed by value.
//
// Order of the statistics. recipe::Combine keeps the left operand unless the
// right one is strictly past it and lets the first NaN win, so it is
// associative but not commutative in its bits (steps.h, the comment above
// Combine: "only a reduction that keeps element order gives the NaN of
// Accumulate"; model_recipe.h: "associative, so the result is Accumulate's
// bit for bit"). recipe::EmptyStats is the identity of Accumulate (steps.h),
// and Accumulate(s, x) == Combine(s, Accumulate(EmptyStats(), x)) field by
// field (TorchMin(+Inf, x), TorchMax(-Inf, x) and CombineAmax(+0, |x|) hand
// back x, x and |x| bit for bit, or +0 under AmaxNan::kIgnore for a NaN,
// which Combine then ignores as Accumulate ignores the NaN). So every lane
// accumulates a run of consecutive elements from EmptyStats, and runs,
// lanes, warps and blocks are combined as any parenthesisation of the
// element sequence, never reordered: the result is the in-order Accumulate
// of QuantizeTensor bit for bit. A compiled recipe whose scale reads the
// amax alone keeps only that field, combined in the same order (KeptStats).
//
// Compile-time recipes. Over a run-time Recipe the model's steps test every
// field per element (14.8 warp instructions an element in the element pass,
// bench/RESULTS-archive-2026.md "GPU roofline"). So each catalog recipe that
// RunsOnModelRecipeKernels takes has its own copy of the kernels
// (CatalogRecipe<kIndex>), where the recipe is a constant the compiler folds
// into the same model steps; a recipe equal to none of them
// (recipe::SameSemantics) runs the run-time copy. Two element conversions reach
// the model's steps as tables (recipe::EncodeElementWith, DecodeElementWith):
// dequantize looks an element's FP32 value up in a table of the model's
// DecodeToF32 for all 256 code bytes, filled per block; quantize, for a
// catalog recipe with E4M3 / E5M2 elements under cvt.rn.satfinite's options,
// converts the scaled value with that instruction (proven on every input by
// `lowbit verify`'s cuda-hw sweeps), also where only the NaN rule differs
// (the model's NaN code by a select), for E2M1 and FP6 elements under the
// options they are proven for takes the one-addition encoders
// (alternatives/e2m1.h, fp6.h), and for one whose
// element options the threshold tables are proven for (threshold_map.cuh),
// looks its code up in the model's threshold table. Scaled recipes with
// integer elements take the integer step with the rounding their clamp
// bounds allow (element_arithmetic.cuh ClampedElementArithmetic), and GPTQ /
// AWQ with FP16 scales the packer's code from a table of the group's 16
// codes (RepackTableElements). The scale step takes torchao's eager RCEIL
// exponent from the bits (alternatives/rceil_eager.h) and NVFP4's UE4M3
// conversions from the hardware (HardwareNvfp4ScaleCodec), through
// recipe::ChooseScaleWith.
#include "model_recipe.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "block_stages.cuh"
#include "checks.h"
#include "element_arithmetic.cuh"
#include "element_ops.cuh"
#include "fast_divide.h"
#include "hardware_rule.h"
#include "options_match.h"
#include "ptx.cuh"
#include "launch.cuh"
#include "recipes.cuh"
#include "spec_value.h"
#include "stream_scratch.h"
#include "threshold_map.cuh"
#include "lowbit/formats/alternatives/e2m1.h"
#include "lowbit/formats/alternatives/fp6.h"
#include "lowbit/formats/alternatives/rceil_eager.h"
#include "lowbit/formats/profiles/format_match.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/same_semantics.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::cuda::detail {
namespace {

constexpr int kModelThreads = 256;
constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = kModelThreads / kWarpSize;
constexpr unsigned kFullWarp = 0xFFFFFFFFu;

// Statistics: each lane accumulates a run of kStatsRun consecutive
// elements per step (eight 16-byte loads, four 32-byte sectors), so a warp
// step reads kWarpStep consecutive elements. The in-order combination across
// lanes after each step (five shuffle-and-Combine levels for a warp) is the
// per-step cost; runs of 32 spread it over four times the elements that
// runs of 8 did.
constexpr int kStatsRun = 32;
constexpr long kWarpStep = static_cast<long>(kWarpSize) * kStatsRun;
constexpr long kBlockStep = kWarpsPerBlock * kWarpStep;
// Blocks per SM of the per-tensor reduction: the whole grid is resident at
// once (its launch bounds ask for it), one partial per block. Four, so that
// a thread has the registers for its run's eight loads in flight (at eight
// they spilled); a resident SM then has 128 KB of loads in flight.
constexpr int kStatsBlocksPerSm = 4;

// Element and dequantize passes: each thread takes a run of kElementRun
// consecutive elements (16 code bytes, or 8 packed), looks its group up once
// per stretch of one group, and moves codes in one 16- or 8-byte access.
constexpr int kElementRun = 16;
// Resident blocks per SM the element passes ask of ptxas (64 and 40
// registers, no spills, with nvcc 13 for sm_90a; unbounded the element pass
// took 112 and the model's EncodeElement had 124 when one thread took one
// byte, 24.5% of warps active in ncu).
constexpr int kElementBlocksPerSm = 4;
constexpr int kDequantizeBlocksPerSm = 6;

// ---- the recipe a kernel runs ---------------------------------------------------

// A recipe passed at run time, as a kernel parameter.
struct RunTimeRecipe {
  static constexpr bool kFolded = false;
  static constexpr bool kScaleReadsOnlyAmax = false;  // KeptStats: all of GroupStats
  recipe::Recipe value;
  __device__ recipe::Recipe Get() const { return value; }
};

// A catalog recipe, recipes.cuh CatalogRecipe<kIndex>: a compile-time value
// (steps.h: "Device code passes a recipe by value"), kFolded, and
// kScaleReadsOnlyAmax for KeptStats.

// The catalog recipes with their own kernels: those RunsOnModelRecipeKernels takes.
constexpr int CountCompiledRecipes() {
  int n = 0;
  for (const recipe::Recipe& r : recipe::kAllRecipes) n += RunsOnModelRecipeKernels(r) ? 1 : 0;
  return n;
}
constexpr std::array<int, CountCompiledRecipes()> CompiledRecipeIndices() {
  std::array<int, CountCompiledRecipes()> indices{};
  int n = 0;
  for (int i = 0; i < static_cast<int>(recipe::kAllRecipes.size()); ++i) {
    if (RunsOnModelRecipeKernels(recipe::kAllRecipes[i])) indices[n++] = i;
  }
  return indices;
}
inline constexpr std::array<int, CountCompiledRecipes()> kCompiledRecipes = CompiledRecipeIndices();

// ---- the element conversion of the element pass ---------------------------------

// The model's EncodeF32 per element.
struct ModelElementCodes {
  static constexpr int kTableEntries = 1;
  __device__ void Stage(uint2*) const {}
  __device__ recipe::ElementEncodeOfModel Encoder(const recipe::Recipe& r, const uint2*) const { return {r}; }
};

// The model's threshold table of FP32 into element format kElement under the
// recipe's element options (threshold_map.cuh), staged in shared memory.
// Taken only where ThresholdCodesApply.
template <FormatId kElement>
struct ThresholdElementCodes {
  using Encode = ModelConvert<FormatId::kFp32, kElement>;
  static constexpr int kTableEntries = 2 * ThresholdGeometry<kElement>::kBuckets;
  const uint2* table;  // built by LaunchBuildThresholdTable(table, encode)
  Encode encode;
  __device__ void Stage(uint2* shared) const {
    for (int j = threadIdx.x; j < kTableEntries; j += blockDim.x) shared[j] = table[j];
  }
  __device__ auto Encoder(const recipe::Recipe&, const uint2* shared) const {
    return [shared, this](float y) -> std::uint64_t { return ThresholdCode(shared, encode, F32Bits(y)); };
  }
};

// The hardware's cvt.rn.satfinite FP32 -> E4M3 / E5M2 (element_ops.cuh
// HwEncodeF32Fp8, the cuda-hw backend's conversion), for a compiled recipe
// whose element options are the ones that instruction implements
// (HardwareCodesApply). `lowbit verify` sweeps the instruction against the
// model under those options on all 2^32 FP32 inputs (its cuda-hw-sweep rows).
template <FormatId kElement>
struct HardwareElementCodes {
  static constexpr int kTableEntries = 1;
  __device__ void Stage(uint2*) const {}
  __device__ auto Encoder(const recipe::Recipe&, const uint2*) const {
    return [](float y) -> std::uint64_t { return HwEncodeF32Fp8<kElement>{}.One(F32Bits(y), 0); };
  }
};

// The hardware's cvt.rn.satfinite as HardwareElementCodes for every value
// but NaN, and the model's code of a NaN (EncodeF32 under the recipe's
// element options, which reads only the NaN's sign there:
// HardwareCodesButNanApply) for a NaN, by a select. On non-NaN inputs the
// options are the instruction's (the same `lowbit verify` sweeps); the
// model recipe tests feed NaNs of both signs and many payloads.
template <FormatId kElement>
struct HardwareElementCodesModelNan {
  static constexpr int kTableEntries = 1;
  std::uint8_t positive_nan;  // EncodeF32(element, +NaN, options).code
  std::uint8_t negative_nan;
  __device__ void Stage(uint2*) const {}
  __device__ auto Encoder(const recipe::Recipe&, const uint2*) const {
    return [p = positive_nan, n = negative_nan](float y) -> std::uint64_t {
      const std::uint32_t bits = F32Bits(y);
      const std::uint64_t hardware = HwEncodeF32Fp8<kElement>{}.One(bits, 0);
      const std::uint64_t nan = (bits & kF32SignMask) != 0 ? n : p;
      return F32IsNan(bits) ? nan : hardware;
    };
  }
};

// E2M1 through alternatives/e2m1.h EncodeE2m1OneAddition (one FP32
// addition where the threshold table took a bucket computation, a shared
// load and a test for non-finite values), for a compiled recipe whose E2M1
// options are the ones it equals the model under (E2m1CodesApply; as
// block_common.cuh E2m1AlternativeApplies for the tuned kernels). Proven on
// every FP32 input by cuda/tests/fast_e2m1_test.cu (device) and
// proptests/backends/alternatives_test.cc (host).
struct E2m1ElementCodes {
  static constexpr int kTableEntries = 1;
  __device__ void Stage(uint2*) const {}
  __device__ auto Encoder(const recipe::Recipe&, const uint2*) const {
    return [](float y) -> std::uint64_t { return alternatives::EncodeE2m1OneAddition(y); };
  }
};

// FP6 (E2M3, E3M2) through alternatives/fp6.h EncodeE2m3 / EncodeE3m2 (one
// FP32 addition for ties to even), for a compiled recipe they are proven
// for (alternatives::Fp6AlternativeApplies, as mx.cu takes them): every
// FP32 input by proptests/backends/alternatives_test.cc (host) and
// cuda/tests/fast_mx_elements_test.cu (device).
template <FormatId kElement, RoundingMode kRounding>
struct Fp6ElementCodes {
  static constexpr int kTableEntries = 1;
  __device__ void Stage(uint2*) const {}
  __device__ auto Encoder(const recipe::Recipe&, const uint2*) const {
    return [](float y) -> std::uint64_t {
      if constexpr (kElement == FormatId::kE2m3) return alternatives::EncodeE2m3<kRounding>(y);
      else return alternatives::EncodeE3m2<kRounding>(y);
    };
  }
};

template <int kIndex>
constexpr bool Fp6CodesApply() {
  constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
  return alternatives::Fp6AlternativeApplies(r);
}

template <int kIndex>
constexpr bool E2m1CodesApply() {
  constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
  constexpr FormatSpec kE2m1Spec = SpecValue<FormatId::kE2m1>();
  return IsFormat<FormatId::kE2m1>(r.element) &&
         SameEncodeSemantics(kE2m1Spec, r.element_encode, recipe::SatfiniteElements());
}

// Whether catalog recipe kIndex takes the hardware conversion: an E4M3 or
// E5M2 element under the options of cvt.rn.satfinite.
template <int kIndex>
constexpr bool HardwareCodesApply() {
  constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
  constexpr FormatId id = FormatIdOf(r.element);
  if constexpr (id == FormatId::kE4m3 || id == FormatId::kE5m2) {
    return SameEncodeSemantics(r.element, r.element_encode,
                               HardwareEncodeRule(id, RoundingMode::kNearestEven, true).options);
  }
  return false;
}

// Whether catalog recipe kIndex takes the hardware conversion for every
// value but NaN (HardwareElementCodesModelNan): an E4M3 or E5M2 element
// whose options are cvt.rn.satfinite's once the NaN fields are the
// hardware's (torchao's MX profiles: a NaN keeps its sign, where the
// instruction gives +NaN), and whose NaN code does not depend on the
// payload (one NaN per sign, or NanPayload::kAllOnes).
template <int kIndex>
constexpr bool HardwareCodesButNanApply() {
  constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
  constexpr FormatId id = FormatIdOf(r.element);
  if constexpr ((id == FormatId::kE4m3 || id == FormatId::kE5m2) && !HardwareCodesApply<kIndex>()) {
    constexpr EncodeOptions hardware = HardwareEncodeRule(id, RoundingMode::kNearestEven, true).options;
    EncodeOptions options = r.element_encode;
    options.nan_sign = hardware.nan_sign;
    options.nan_payload = hardware.nan_payload;
    options.nan_into_no_nan = hardware.nan_into_no_nan;
    return SameEncodeSemantics(r.element, options, hardware) &&
           (r.element.specials == SpecialCodes::kAllOnesIsNan ||
            r.element_encode.nan_payload == NanPayload::kAllOnes);
  }
  return false;
}

// Whether catalog recipe kIndex takes the threshold table: a float element
// whose table fits and whose options are proven (AWQ's integer elements and
// MXINT8 run the model's EncodeF32).
template <int kIndex>
constexpr bool ThresholdCodesApply() {
  constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
  if constexpr (r.element.IsFloat()) {
    using Encode = ModelConvert<FormatId::kFp32, FormatIdOf(r.element)>;
    return ThresholdShapeApplies<Encode>() && ThresholdOptionsProven(r.element, r.element_encode);
  }
  return false;
}

// ---- the scale step's alternatives -------------------------------------------

// E4M3 code -> FP32 through cvt.rn.f16x2.e4m3x2 and cvt.f32.f16 (exact for
// every finite code), the cuda-hw decode swept against the model.
__device__ __forceinline__ float HardwareE4m3ToF32(std::uint32_t code) {
  return ptx::CvtF32F16(static_cast<std::uint16_t>(ptx::CvtF16x2E4m3x2(static_cast<std::uint16_t>(code))));
}

// The model's conversions kept out of line for the values the hardware's do
// not cover (never reached by the catalog rules; a call, not inline code in
// every copy). The recipe is the catalog's constant, never a reference: a
// recipe whose address reached a call would be kept in memory, and every
// step reading it would lose its constants.
template <int kIndex>
__device__ __noinline__ std::uint8_t ModelNvfp4ScaleEncodeOutOfLine(float v) {
  constexpr recipe::Recipe kRecipe = CatalogRecipe<kIndex>::Get();
  return recipe::detail::Nvfp4ScaleCodecOfModel{}.Encode(kRecipe, v);
}
template <int kIndex>
__device__ __noinline__ float ModelNvfp4ScaleDecodeOutOfLine(std::uint8_t code) {
  constexpr recipe::Recipe kRecipe = CatalogRecipe<kIndex>::Get();
  return recipe::detail::Nvfp4ScaleCodecOfModel{}.Decode(kRecipe, code);
}

// NVFP4's UE4M3 block-scale conversion and decode (recipe::ChooseScaleWith's
// nvfp4_scale) through the hardware, for a compiled NVFP4 recipe: UE4M3 is
// E4M3 without the sign bit (static_assert below, as nvfp4.cu's HwUe4m3Codec
// for TE), so the E4M3 code of a value from +0 to 448 is its UE4M3 code.
// cvt.rn.satfinite.e4m3x2.f32 rounds as the recipe's UE4M3 options but for
// overflow (the torchao and ModelOpt rules do not saturate), which no value
// up to 448, the largest finite, reaches; a NaN gives 0x7F under both. So
// +0 .. 448 and NaN (every block scale value of torchao 0.18's and ModelOpt
// 0.47's rules, whose clamps end at 448) take the instruction and any other
// value the model, out of line. Decode: every finite code through the
// instructions; the NaN code 0x7F the model's NaN. Proofs: the static_asserts
// below and the cuda-hw rows of E4M3 that `lowbit verify` sweeps;
// proptests/backends/nvfp4_scale_codec_test.cc checks that the model's UE4M3
// and E4M3 conversions agree on that domain.
template <int kIndex>
struct HardwareNvfp4ScaleCodec {
  static constexpr recipe::Recipe kRecipe = CatalogRecipe<kIndex>::Get();
  static constexpr FormatSpec kScale = kRecipe.scale_format;
  static constexpr FormatSpec kE4m3Spec = SpecValue<FormatId::kE4m3>();
  static_assert(!kScale.has_sign && kScale.exponent_bits == kE4m3Spec.exponent_bits &&
                    kScale.mantissa_bits == kE4m3Spec.mantissa_bits && kScale.bias == kE4m3Spec.bias &&
                    kScale.specials == kE4m3Spec.specials && kScale.total_bits + 1 == kE4m3Spec.total_bits,
                "the NVFP4 scale format is E4M3 without the sign");
  static constexpr EncodeOptions kHardware =
      HardwareEncodeRule(FormatId::kE4m3, RoundingMode::kNearestEven, true).options;
  static constexpr EncodeOptions ButForOverflow() {
    EncodeOptions o = recipe::detail::Nvfp4ScaleOptions(kRecipe);
    o.overflow = kHardware.overflow;
    o.inf_input = kHardware.inf_input;
    return o;
  }
  static_assert(SameEncodeSemantics(kE4m3Spec, ButForOverflow(), kHardware),
                "the recipe's UE4M3 rule differs from cvt.rn.satfinite's in more than overflow");
  static constexpr std::uint32_t kMaxBits = F32Bits(recipe::MaxFiniteF32(kScale));  // 448
  static constexpr std::uint8_t kNanCode = static_cast<std::uint8_t>(kScale.CodeMask());       // 0x7F
  static_assert(F32IsNan(F32Bits(DecodeToF32(kScale, kNanCode))) &&
                kScale.MaxFiniteCode() + 1 == kNanCode);
  __device__ __forceinline__ std::uint8_t Encode(const recipe::Recipe&, float v) const {
    const std::uint32_t bits = F32Bits(v);
    if (bits > kMaxBits && !F32IsNan(bits)) return ModelNvfp4ScaleEncodeOutOfLine<kIndex>(v);
    return static_cast<std::uint8_t>(ptx::CvtE4m3x2F32(v, 0.0f) & 0xFFu);
  }
  __device__ __forceinline__ float Decode(const recipe::Recipe&, std::uint8_t code) const {
    if (code >= kNanCode) return ModelNvfp4ScaleDecodeOutOfLine<kIndex>(code);
    return HardwareE4m3ToF32(code);
  }
};

// The scale steps the kernels pass to recipe::ChooseScaleWith: torchao's
// eager RCEIL exponent from the bits (alternatives/rceil_eager.h), the
// scaled rules' roundings through HardwareF16Arithmetic (element_arithmetic
// .cuh: AutoAWQ's scale rounds to FP16 six times a group, GPTQ's once), and
// for a compiled NVFP4 recipe the hardware's UE4M3 conversions above.
template <class Src>
struct KernelScaleSteps {
  alternatives::RceilEagerExponentAlternative eager_exponent;
  recipe::detail::Nvfp4ScaleCodecOfModel nvfp4_scale;
  HardwareF16Arithmetic arithmetic;
};
template <int kIndex>
  requires(CatalogRecipe<kIndex>::Get().family() == recipe::Family::kNvfp4)
struct KernelScaleSteps<CatalogRecipe<kIndex>> {
  alternatives::RceilEagerExponentAlternative eager_exponent;
  HardwareNvfp4ScaleCodec<kIndex> nvfp4_scale;
  HardwareF16Arithmetic arithmetic;
};

// Whether recipe source Src's elements take ClampedElementArithmetic
// (element_arithmetic.cuh) in groups where ClampedIntegerApplies: a
// compiled scaled recipe with integer elements rounded to nearest even
// (INT8 amax-clamp, GPTQ and AWQ with FP16 scales).
template <class Src>
constexpr bool ClampedIntegerElements() {
  if constexpr (Src::kFolded) {
    constexpr recipe::Recipe r = Src::Get();
    static_assert(r.element.IsFloat() || r.element.total_bits <= 8,
                  "ClampedElementArithmetic rounds values clamped to within 255 of 0");
    return r.family() == recipe::Family::kScaled && !r.element.IsFloat() &&
           r.element_encode.rounding == RoundingMode::kNearestEven;
  }
  return false;
}

// Whether Src's codes come from a table of the group's codes by the
// quantizer's integer (recipe::RepackedCodeWith of q0 = qmin .. qmax, the
// model's, for GPTQ and AWQ with FP16 scales): the packer's integer reads
// nothing of x but q0, so each group's 16 codes are computed once, spread
// over the group's threads, in place of its FP16 repack per element (3.5
// warp instructions an element for GPTQ, most of AWQ's 11.3, on the H200:
// bench/RESULTS.md "GPU roofline").
template <class Src>
constexpr bool RepackTableElements() {
  if constexpr (ClampedIntegerElements<Src>()) {
    constexpr recipe::Recipe r = Src::Get();
    return r.element_quirk == recipe::ElementQuirk::kRepackWithFp16Scale;
  }
  return false;
}
inline constexpr int kRepackCodes = 16;  // qmax - qmin + 1 of a 4-bit element

__host__ __device__ bool Aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

__host__ __device__ long MinLong(long a, long b) { return a < b ? a : b; }

// a / b for a >= 0, b > 0: a 32-bit division when both fit (every tensor
// below 2^32 elements), the 64-bit one otherwise.
__device__ long DivideNonNegative(long a, long b) {
  if (((a | b) >> 32) == 0) return static_cast<long>(static_cast<unsigned>(a) / static_cast<unsigned>(b));
  return a / b;
}

// ---- statistics ---------------------------------------------------------------

// The statistics the kernels of a recipe source keep (Src::kScaleReadsOnlyAmax):
// all of GroupStats by recipe::Accumulate / Combine, or, for a compiled recipe
// whose ChooseScale reads stats.amax alone (recipe::ScaleReadsOnlyAmax,
// steps.h), the amax alone by recipe::AccumulateAmaxOnly / CombineAmaxOnly:
// min and max stay EmptyStats' +Inf / -Inf and are never computed, shuffled
// or stored (a shuffle or a shared store of a dead field is not removed by
// the compiler), and ChooseScale gives the same scale bit for bit
// (proptests/model/scale_reads_only_amax_test.cc). The amax is combined in
// the same order by the same CombineAmax, so its NaN is Accumulate's (this
// file's header). Nothing outside this file sees the statistics: the
// partials and the tensor's statistics live in RunModelRecipeOn's scratch
// and reach only ChooseScale and ChooseTensorScale (which reads the amax).
template <bool kAmaxOnly>
struct KeptStats {
  __device__ __forceinline__ static recipe::GroupStats Accumulate(const recipe::Recipe& r, recipe::GroupStats s,
                                                                  float x) {
    if constexpr (kAmaxOnly) {
      return recipe::AccumulateAmaxOnly(r, s, x);
    } else {
      return recipe::Accumulate(r, s, x);
    }
  }
  __device__ __forceinline__ static recipe::GroupStats Combine(const recipe::Recipe& r, recipe::GroupStats a,
                                                               const recipe::GroupStats& b) {
    if constexpr (kAmaxOnly) {
      return recipe::CombineAmaxOnly(r, a, b);
    } else {
      return recipe::Combine(r, a, b);
    }
  }
  // The kept fields of another lane's statistics, each field moved by
  // `from_lane` (a warp shuffle: __shfl_down_sync or __shfl_xor_sync).
  template <class FromLane>
  __device__ __forceinline__ static recipe::GroupStats OfLane(const recipe::GroupStats& s, FromLane from_lane) {
    recipe::GroupStats other = recipe::EmptyStats();
    if constexpr (!kAmaxOnly) {
      other.min = from_lane(s.min);
      other.max = from_lane(s.max);
    }
    other.amax = from_lane(s.amax);
    return other;
  }
  // Shared memory between warps: the kept fields only.
  __device__ __forceinline__ static void Store(recipe::GroupStats* to, const recipe::GroupStats& s) {
    if constexpr (kAmaxOnly) {
      to->amax = s.amax;
    } else {
      *to = s;
    }
  }
  __device__ __forceinline__ static recipe::GroupStats Load(const recipe::GroupStats* from) {
    if constexpr (kAmaxOnly) {
      recipe::GroupStats s = recipe::EmptyStats();
      s.amax = from->amax;
      return s;
    } else {
      return *from;
    }
  }
};

template <class Src>
using KeptStatsOf = KeptStats<Src::kScaleReadsOnlyAmax>;

// The statistics stage's step (block_stages.cuh AccumulateInOrder) of the
// kept statistics: Stats::Accumulate under recipe r.
template <class Stats>
struct StatsStep {
  const recipe::Recipe& r;
  __device__ __forceinline__ recipe::GroupStats operator()(recipe::GroupStats s, float x) const {
    return Stats::Accumulate(r, s, x);
  }
};

// Stats::Accumulate over x[k, k + count) in order, from EmptyStats
// (count <= kStatsRun; 0 gives EmptyStats, the identity of Combine). A whole
// run at a 16-byte boundary is read by the load stage (block_stages.cuh
// LoadF32s), all loads issued before the first Accumulate.
template <class Stats>
__device__ recipe::GroupStats AccumulateRun(const recipe::Recipe& r, const float* __restrict__ x, long k, long count,
                                            bool x_aligned) {
  recipe::GroupStats s = recipe::EmptyStats();
  if (count == kStatsRun && x_aligned && k % 4 == 0) {
    float v[kStatsRun];
    LoadF32s<kStatsRun>(x + k, v);
    return AccumulateInOrder<kStatsRun>(s, v, StatsStep<Stats>{r});
  }
  for (long e = 0; e < count; ++e) s = Stats::Accumulate(r, s, x[k + e]);
  return s;
}

// The in-order Combine of each aligned set of `lanes` consecutive lanes'
// statistics (lanes a power of two <= 32), left in the set's first lane: at
// offset o, lane i holds lanes [i, i + o) and takes lane i + o's
// [i + o, i + 2o) on its right. Other lanes end with values nobody reads.
// Every lane of the warp calls it (full-warp shuffles).
template <class Stats>
__device__ recipe::GroupStats CombineAcrossLanes(const recipe::Recipe& r, recipe::GroupStats s, int lanes) {
  for (int o = 1; o < lanes; o *= 2) {
    s = Stats::Combine(r, s, Stats::OfLane(s, [o](float v) { return __shfl_down_sync(kFullWarp, v, o); }));
  }
  return s;
}

// The in-order Combine of each aligned set of `lanes` consecutive lanes'
// statistics (lanes a power of two <= 32), left in every lane of the set:
// at offset o, a lane holding the o lanes of its aligned half combines them
// with its partner's (lane ^ o), the lower half on the left. The same tree
// as CombineAcrossLanes, so the same bits (Combine is associative). Every
// lane of the warp calls it (full-warp shuffles).
template <class Stats>
__device__ recipe::GroupStats CombineAcrossLanesToAll(const recipe::Recipe& r, recipe::GroupStats s, int lanes) {
  const int lane = threadIdx.x % kWarpSize;
  for (int o = 1; o < lanes; o *= 2) {
    const recipe::GroupStats other = Stats::OfLane(s, [o](float v) { return __shfl_xor_sync(kFullWarp, v, o); });
    s = (lane & o) == 0 ? Stats::Combine(r, s, other) : Stats::Combine(r, other, s);
  }
  return s;
}

// The in-order Combine of a block's per-warp statistics (warp w covers the
// w-th stretch of the block's elements), in thread 0.
template <class Stats>
__device__ recipe::GroupStats CombineAcrossWarps(const recipe::Recipe& r, recipe::GroupStats warp_stats,
                                                 recipe::GroupStats* shared) {
  if (threadIdx.x % kWarpSize == 0) Stats::Store(&shared[threadIdx.x / kWarpSize], warp_stats);
  __syncthreads();
  recipe::GroupStats s = Stats::Load(&shared[0]);
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarpsPerBlock; ++w) s = Stats::Combine(r, s, Stats::Load(&shared[w]));
  }
  return s;
}

// Per-tensor statistics, first level: block b takes elements
// [b * block_elems, (b + 1) * block_elems) (block_elems a multiple of
// kBlockStep), its warp w the w-th eighth of that, walked in warp steps of
// kWarpStep coalesced elements; partial[b] is their in-order Combine.
template <class Src>
__global__ __launch_bounds__(kModelThreads, kStatsBlocksPerSm) void ModelTensorPartialsKernel(
    Src src, const float* __restrict__ x, long n, long block_elems, recipe::GroupStats* __restrict__ partial) {
  using Stats = KeptStatsOf<Src>;
  const recipe::Recipe r = src.Get();
  __shared__ recipe::GroupStats warp_stats[kWarpsPerBlock];
  const int lane = threadIdx.x % kWarpSize;
  const long warp_elems = block_elems / kWarpsPerBlock;
  const long begin = static_cast<long>(blockIdx.x) * block_elems + (threadIdx.x / kWarpSize) * warp_elems;
  const long end = MinLong(begin + warp_elems, n);
  const bool x_aligned = Aligned(x, 16);
  recipe::GroupStats s = recipe::EmptyStats();
  for (long step = begin; step < end; step += kWarpStep) {  // warp-uniform
    const long k = step + static_cast<long>(lane) * kStatsRun;
    const long count = k < end ? MinLong(kStatsRun, end - k) : 0;
    s = Stats::Combine(r, s, CombineAcrossLanes<Stats>(r, AccumulateRun<Stats>(r, x, k, count, x_aligned), kWarpSize));
  }
  s = CombineAcrossWarps<Stats>(r, s, warp_stats);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Second level, one block: thread t combines its consecutive share of the
// partials in order, then lanes and warps in order. The tensor's statistics
// go to *stats and, for a recipe with a tensor-level scale, that scale
// (recipe::ChooseTensorScale of the amax, as TensorScaleOf) to *tensor_scale.
template <class Src>
__global__ __launch_bounds__(kModelThreads) void ModelTensorStatsKernel(
    Src src, const recipe::GroupStats* __restrict__ partial, long count,
    recipe::GroupStats* __restrict__ stats, recipe::TensorScale* tensor_scale) {
  using Stats = KeptStatsOf<Src>;
  const recipe::Recipe r = src.Get();
  __shared__ recipe::GroupStats warp_stats[kWarpsPerBlock];
  const long share = count / kModelThreads + (count % kModelThreads != 0 ? 1 : 0);
  const long begin = static_cast<long>(threadIdx.x) * share;
  const long end = MinLong(begin + share, count);
  recipe::GroupStats s = recipe::EmptyStats();
  for (long c = begin; c < end; ++c) s = Stats::Combine(r, s, Stats::Load(&partial[c]));
  s = CombineAcrossWarps<Stats>(r, CombineAcrossLanes<Stats>(r, s, kWarpSize), warp_stats);
  if (threadIdx.x == 0) {
    *stats = s;
    if (tensor_scale != nullptr) *tensor_scale = recipe::ChooseTensorScale(r, s.amax);
  }
}

// Lanes that share one group in ModelScalesKernel: enough that each takes
// about kStatsRun elements of a group row per step, at most a warp.
int StatsLanesPerGroup(long group_cols) {
  int lanes = 1;
  while (lanes < kWarpSize && 2L * lanes * kStatsRun <= group_cols) lanes *= 2;
  return lanes;
}

// Each group's statistics (or the tensor's), the model's scale choice,
// stored as the recipe stores it and kept for the element pass. `lanes`
// consecutive lanes (a power of two) share a group: they walk its rows of
// group_cols consecutive elements in ForEachInGroup's order (row-major in
// the group; a flat block is one row, the last one short), each step lane p
// accumulating the p-th run of kStatsRun, and the step's in-order
// combination is combined on the right of the group's running statistics.
// The set's first lane chooses and stores the scale. A warp moves on by
// groups_per_turn, the groups the whole grid takes in one turn (gridDim.x *
// kWarpsPerBlock * (kWarpSize / lanes)), a kernel parameter and so read from
// the constant bank: computed in the kernel it took two registers through the
// group loop, and ptxas spilled it to a stack frame in the INT8 amax-clamp
// copy once that copy kept only the amax (KeptStats).
template <class Src>
__global__ __launch_bounds__(kModelThreads) void ModelScalesKernel(Src src, recipe::GroupGrid g,
                                                                  const float* __restrict__ x, int lanes,
                                                                  long groups_per_turn,
                                                                  const recipe::GroupStats* tensor_stats,
                                                                  const recipe::TensorScale* tensor_scale,
                                                                  recipe::QuantizedTensor q,
                                                                  recipe::BlockScale* __restrict__ scales) {
  using Stats = KeptStatsOf<Src>;
  const recipe::Recipe r = src.Get();
  const int lane = threadIdx.x % kWarpSize;
  const int part = lane % lanes;
  const long groups_per_warp = kWarpSize / lanes;
  const long warp = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
  const long n = g.rows * g.cols;
  const long count = g.Count();
  const long step_elems = static_cast<long>(lanes) * kStatsRun;
  const bool x_aligned = Aligned(x, 16);
  const recipe::TensorScale t = tensor_scale != nullptr ? *tensor_scale : recipe::TensorScale{};
  for (long first = warp * groups_per_warp; first < count; first += groups_per_turn) {  // warp-uniform
    const long group = first + lane / lanes;
    const bool valid = group < count;
    recipe::GroupStats stats = recipe::EmptyStats();
    if (tensor_stats != nullptr) {
      stats = Stats::Load(tensor_stats);
    } else {
      // The group's first element and row length, as ForEachInGroup.
      long start = 0;
      long row_len = 0;
      if (g.flat) {
        start = group * g.group_cols;
        row_len = MinLong(g.group_cols, n - start);
      } else {
        const long grid_row = DivideNonNegative(group, g.grid_cols);
        start = grid_row * g.group_rows * g.cols + (group - grid_row * g.grid_cols) * g.group_cols;
        row_len = g.group_cols;
      }
      for (long row = 0; row < g.group_rows; ++row, start += g.cols) {        // warp-uniform (flat: one row)
        for (long step = 0; step < g.group_cols; step += step_elems) {         // warp-uniform
          const long offset = step + static_cast<long>(part) * kStatsRun;
          const long run = valid && offset < row_len ? MinLong(kStatsRun, row_len - offset) : 0;
          const recipe::GroupStats run_stats = AccumulateRun<Stats>(r, x, start + offset, run, x_aligned);
          stats = Stats::Combine(r, stats, CombineAcrossLanes<Stats>(r, run_stats, lanes));
        }
      }
    }
    if (valid && part == 0) {
      const recipe::BlockScale s = recipe::ChooseScaleWith(r, stats, t, KernelScaleSteps<Src>{});
      recipe::StoreScale(r, q, group, s);
      scales[group] = s;
    }
  }
}

// ---- elements -----------------------------------------------------------------

// One element's code under its group's scale: recipe::EncodeElementWith
// with AlternativeElementArithmetic, or (kClamped, for a group where
// ClampedIntegerApplies) the same steps with ClampedElementArithmetic, and
// for a repacked recipe (kTable) the group's code at the quantizer's
// integer, which lies in [qmin, qmax] there (RepackTableElements).
template <bool kClamped, bool kTable, class Encode>
__device__ __forceinline__ std::uint8_t GroupElementCode(const recipe::Recipe& r, const recipe::BlockScale& s, float x,
                                                         const Encode& encode_element,
                                                         const std::uint8_t* group_codes) {
  if constexpr (kClamped && kTable) {
    return group_codes[recipe::QuantizerIntegerWith(r, s, x, ClampedElementArithmetic{}) - r.qmin];
  } else if constexpr (kClamped) {
    return recipe::EncodeElementWith(r, s, x, encode_element, ClampedElementArithmetic{});
  } else {
    return recipe::EncodeElementWith(r, s, x, encode_element, AlternativeElementArithmetic{});
  }
}


// The end of the stretch [k, end) of elements that share element k's group
// (k = i * cols + j in group `group`, recipe::GroupOf): a flat block ends at
// the next multiple of its size (or at n); a grid group's columns end at the
// next multiple of group_cols, never past the row's end (cols is a multiple
// of group_cols, recipe::MakeGroupGrid).
__device__ long GroupStretchEnd(const recipe::GroupGrid& g, long k, long j, long group) {
  if (g.flat) return MinLong((group + 1) * g.group_cols, g.rows * g.cols);
  const long in_group = j - DivideNonNegative(j, g.group_cols) * g.group_cols;
  return k + MinLong(g.group_cols - in_group, g.cols - j);
}

// The divisions of GroupOf and GroupStretchEnd as multiply-and-shift
// (fast_divide.h) for tensors of fewer than 2^32 elements (`apply`), set
// once on the host: the three run-time divisions of a run's group took
// about 75 instructions, a sixth of a 16-element run's dequantize.
struct GroupDivisors {
  bool apply = false;
  FastDivider cols, group_cols, group_rows;
};

GroupDivisors DivisorsOf(const recipe::GroupGrid& g) {
  GroupDivisors d;
  d.apply = g.rows * g.cols <= 0xFFFFFFFFL;
  if (d.apply) {
    d.cols = FastDivider::For(static_cast<std::uint32_t>(g.cols));
    d.group_cols = FastDivider::For(static_cast<std::uint32_t>(g.group_cols));
    d.group_rows = FastDivider::For(static_cast<std::uint32_t>(g.group_rows));
  }
  return d;
}

// Whether the kElementRun elements from k0 (< n) share one group, and that
// group: recipe::GroupOf of k0 and GroupStretchEnd, with d's divisions where
// they apply.
__device__ bool RunInOneGroup(const recipe::GroupGrid& g, const GroupDivisors& d, long k0, long* group) {
  long stretch_end = 0;
  if (!d.apply) {
    const long i = DivideNonNegative(k0, g.cols);
    const long j = k0 - i * g.cols;
    *group = recipe::GroupOf(g, i, j);
    stretch_end = GroupStretchEnd(g, k0, j, *group);
  } else if (g.flat) {
    *group = d.group_cols.Quotient(static_cast<std::uint32_t>(k0));
    stretch_end = MinLong((*group + 1) * g.group_cols, g.rows * g.cols);
  } else {
    const std::uint32_t i = d.cols.Quotient(static_cast<std::uint32_t>(k0));
    const std::uint32_t j = static_cast<std::uint32_t>(k0) - i * static_cast<std::uint32_t>(g.cols);
    const std::uint32_t group_col = d.group_cols.Quotient(j);
    *group = static_cast<long>(d.group_rows.Quotient(i)) * g.grid_cols + group_col;
    const long in_group = static_cast<long>(j) - static_cast<long>(group_col) * g.group_cols;
    stretch_end = k0 + MinLong(g.group_cols - in_group, g.cols - static_cast<long>(j));
  }
  return stretch_end >= k0 + kElementRun;
}

// Four consecutive elements from k: one 16-byte load when aligned and in
// range, else each one in range (0 past n, never encoded).
__device__ float4 LoadQuad(const float* __restrict__ x, long k, long n, bool x_aligned) {
  if (x_aligned && k + 4 <= n) return __ldg(reinterpret_cast<const float4*>(x + k));
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (k < n) v.x = x[k];
  if (k + 1 < n) v.y = x[k + 1];
  if (k + 2 < n) v.z = x[k + 2];
  if (k + 3 < n) v.w = x[k + 3];
  return v;
}

__device__ float4 QuadAt(float4 a, float4 b, float4 c, float4 d, int index) {
  return index < 2 ? (index == 0 ? a : b) : (index == 2 ? c : d);
}

// Byte b (0..15) of a run's code bytes, kept in two 64-bit registers
// (little-endian, as a 16- or 8-byte access moves them).
__device__ void PutByte(std::uint64_t& lo, std::uint64_t& hi, int b, std::uint8_t v) {
  if (b < 8) {
    lo |= static_cast<std::uint64_t>(v) << (8 * b);
  } else {
    hi |= static_cast<std::uint64_t>(v) << (8 * (b - 8));
  }
}
__device__ std::uint8_t GetByte(std::uint64_t lo, std::uint64_t hi, int b) {
  return static_cast<std::uint8_t>((b < 8 ? lo >> (8 * b) : hi >> (8 * (b - 8))) & 0xFFu);
}

// The shared-memory slot of float4 p (0..3) of a warp's thread `lane` in
// ModelDequantizeKernel's staging: rotated by lane / 2, so that the eight
// lanes of one 16-byte store phase (64 bytes apart) cover all 32 banks.
__device__ __forceinline__ int StagedSlot(int lane, int p) { return lane * 4 + ((p + lane / 2) & 3); }

__host__ __device__ long ElementRuns(long n) { return n / kElementRun + (n % kElementRun != 0 ? 1 : 0); }

// A run of kElementRun elements of one group encoded into lo / hi, in
// element order (GroupElementCode for each). Not the element stage's
// EncodeEach (block_stages.cuh), nor any functor holding GroupElementCode's
// arguments: either way this and EncodeGroupRun compiled to other SASS
// (scheduling and registers) in 10 to 30 of this file's kernels.
template <bool kClamped, bool kTable, class Encode>
__device__ __forceinline__ void EncodeElementRun(const recipe::Recipe& r, const recipe::BlockScale& s,
                                                 const float (&v)[kElementRun], const Encode& encode_element,
                                                 const std::uint8_t* group_codes, std::uint64_t& lo,
                                                 std::uint64_t& hi) {
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
#pragma unroll
  for (int e = 0; e < kElementRun; e += 2) {
    std::uint8_t pair[2] = {0, 0};
    recipe::StoreCode(r.packing, pair, 0, GroupElementCode<kClamped, kTable>(r, s, v[e], encode_element, group_codes));
    recipe::StoreCode(r.packing, pair, 1,
                      GroupElementCode<kClamped, kTable>(r, s, v[e + 1], encode_element, group_codes));
    if (packed) {
      PutByte(lo, hi, e / 2, pair[0]);
    } else {
      PutByte(lo, hi, e, pair[0]);
      PutByte(lo, hi, e + 1, pair[1]);
    }
  }
}

// One thread per run of kElementRun consecutive elements: the model's
// element step under each element's group scale (looked up once per
// stretch of one group), stored as the model stores it: recipe::StoreCode
// into a one-byte buffer at position k % 2 (a run starts at an even k), so
// the nibble is the one StoreCode picks for k; an odd last nibble keeps a 0
// partner, as QuantizeTensor leaves it. The run's bytes go out in one 16-
// or 8-byte store when whole and aligned, else byte by byte. The element
// conversion is `element_codes`' (the model's, or its threshold table).
template <class Src, class ElementCodes>
__global__ __launch_bounds__(kModelThreads, kElementBlocksPerSm) void ModelElementsKernel(
    Src src, ElementCodes element_codes, recipe::GroupGrid g, GroupDivisors divisors, const float* __restrict__ x,
    const recipe::BlockScale* __restrict__ scales, std::uint8_t* __restrict__ codes) {
  const recipe::Recipe r = src.Get();
  __shared__ uint2 table[ElementCodes::kTableEntries];
  element_codes.Stage(table);
  if (ElementCodes::kTableEntries > 1) __syncthreads();
  const auto encode_element = element_codes.Encoder(r, table);
  constexpr bool kTable = RepackTableElements<Src>();
  __shared__ std::uint8_t repack_codes[kTable ? kModelThreads * kRepackCodes : 1];
  std::uint8_t* const thread_codes = kTable ? repack_codes + threadIdx.x * kRepackCodes : nullptr;
  long table_group = -1;
  const long n = g.rows * g.cols;
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  const long run_bytes = packed ? kElementRun / 2 : kElementRun;
  const bool x_aligned = Aligned(x, 16);
  const bool codes_aligned = Aligned(codes, static_cast<std::uintptr_t>(run_bytes));
  const long runs = ElementRuns(n);
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  for (long run = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; run < runs; run += stride) {
    const long k0 = run * kElementRun;
    const int count = n - k0 < kElementRun ? static_cast<int>(n - k0) : kElementRun;
    const float4 in0 = LoadQuad(x, k0, n, x_aligned);
    const float4 in1 = LoadQuad(x, k0 + 4, n, x_aligned);
    const float4 in2 = LoadQuad(x, k0 + 8, n, x_aligned);
    const float4 in3 = LoadQuad(x, k0 + 12, n, x_aligned);
    std::uint64_t lo = 0, hi = 0;
    long group0 = 0;
    if (Src::kFolded && count == kElementRun && RunInOneGroup(g, divisors, k0, &group0)) {
      // The whole run in one group: its scale once, the elements unrolled
      // (for a compiled recipe: unrolled over a run-time one, the model's
      // steps take more registers than a thread has).
      const recipe::BlockScale s0 = scales[group0];
      const float v[kElementRun] = {in0.x, in0.y, in0.z, in0.w, in1.x, in1.y, in1.z, in1.w,
                                    in2.x, in2.y, in2.z, in2.w, in3.x, in3.y, in3.z, in3.w};
      if (ClampedIntegerElements<Src>() && ClampedIntegerApplies(r, s0.zero_point)) {
        if constexpr (kTable) {
          // This thread's table of the group's codes (RepackTableElements),
          // built again only when the group changes (a per-tensor group:
          // once a thread).
          if (group0 != table_group) {
            for (int c = 0; c < kRepackCodes; ++c) {
              thread_codes[c] = recipe::RepackedCodeWith(r, s0, r.qmin + c, HardwareF16Arithmetic{});
            }
            table_group = group0;
          }
        }
        EncodeElementRun<ClampedIntegerElements<Src>(), kTable>(r, s0, v, encode_element, thread_codes, lo, hi);
      } else {
        EncodeElementRun<false, false>(r, s0, v, encode_element, thread_codes, lo, hi);
      }
    } else {
      long i = DivideNonNegative(k0, g.cols);
      long j = k0 - i * g.cols;
      long stretch_end = k0;
      recipe::BlockScale s;
      float4 quad = in0;
      std::uint8_t byte[1] = {0};
      for (int e = 0; e < count; ++e) {
        const long k = k0 + e;
        if (k == stretch_end) {
          const long group = recipe::GroupOf(g, i, j);
          s = scales[group];
          stretch_end = GroupStretchEnd(g, k, j, group);
        }
        if (e % 4 == 0) quad = QuadAt(in0, in1, in2, in3, e / 4);
        const float v = quad.x;
        quad = make_float4(quad.y, quad.z, quad.w, quad.x);
        const std::uint8_t code = recipe::EncodeElementWith(r, s, v, encode_element, AlternativeElementArithmetic{});
        recipe::StoreCode(r.packing, byte, packed ? (e & 1) : 0, code);
        if (!packed || (e & 1) == 1 || e == count - 1) {
          PutByte(lo, hi, packed ? e / 2 : e, byte[0]);
          byte[0] = 0;
        }
        if (++j == g.cols) {
          j = 0;
          ++i;
        }
      }
    }
    const long b0 = run * run_bytes;
    if (count == kElementRun && codes_aligned) {
      // A constant word count in each branch: with `packed ? 1 : 2` the
      // run-time recipe's copy compiled to other SASS (nvcc 13.0, sm_90a).
      const std::uint64_t words[2] = {lo, hi};
      if (packed) {
        StoreCodeWords(codes + b0, words, 1);
      } else {
        StoreCodeWords(codes + b0, words, 2);
      }
    } else {
      const int valid = packed ? (count + 1) / 2 : count;
      for (int b = 0; b < valid; ++b) codes[b0 + b] = GetByte(lo, hi, b);
    }
  }
}

// One thread per run of kElementRun consecutive elements: the model's
// dequantize step (recipe::LoadScale once per stretch of one group, LoadCode
// from a one-byte buffer at position k % 2, DecodeElement, as
// DequantizeTensor). Codes come in one 16- or 8-byte load when whole and
// aligned; outputs leave four at a time (one 16-byte store when aligned). An
// element's FP32 value is looked up in the block's table of the model's
// DecodeToF32 of every code byte (a code byte is what LoadCode hands over).
//
// When every run of a warp is whole and in one group (the warp's 32 runs
// are consecutive), each thread decodes its run unrolled under one scale
// and the warp's 512 outputs go out through shared memory as four 16-byte
// stores a thread, each store instruction of the warp one contiguous 512
// bytes: a thread's own four stores of its run would leave 48-byte holes
// between lanes (bench/RESULTS-archive-2026.md "GPU roofline": such stores were what held
// the FP32 dequantize kernels back).
template <class Src>
__global__ __launch_bounds__(kModelThreads, kDequantizeBlocksPerSm) void ModelDequantizeKernel(
    Src src, recipe::GroupGrid g, GroupDivisors divisors, recipe::ConstQuantizedTensor q, float* __restrict__ out) {
  const recipe::Recipe r = src.Get();
  __shared__ float element_values[256];
  for (int c = threadIdx.x; c < 256; c += blockDim.x) {
    element_values[c] = recipe::ElementValueOfModel{r}(static_cast<std::uint8_t>(c));
  }
  // A warp's outputs, staged: float4 slot p of thread `lane` (p = 0..3) at
  // StagedSlot(lane, p), so that a 16-byte shared store of 8 lanes touches
  // 32 different banks.
  __shared__ float4 staged[kModelThreads * kElementRun / 4];
  __syncthreads();
  const auto element_value = [&](std::uint8_t code) { return element_values[code]; };
  const int lane = threadIdx.x % kWarpSize;
  float4* const warp_staged = staged + (threadIdx.x / kWarpSize) * (kWarpSize * kElementRun / 4);
  const long n = g.rows * g.cols;
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  const long run_bytes = packed ? kElementRun / 2 : kElementRun;
  const bool codes_aligned = Aligned(q.codes, static_cast<std::uintptr_t>(run_bytes));
  const bool out_aligned = Aligned(out, 16);
  const recipe::TensorScale t = q.tensor_scale != nullptr ? *q.tensor_scale : recipe::TensorScale{};
  const long runs = ElementRuns(n);
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  // Warp-uniform: the warp's first run steps by `stride`, a multiple of 32.
  for (long warp_run = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x - lane; warp_run < runs;
       warp_run += stride) {
    const long run = warp_run + lane;
    const bool active = run < runs;
    const long k0 = run * kElementRun;
    const int count = !active ? 0 : (n - k0 < kElementRun ? static_cast<int>(n - k0) : kElementRun);
    const long b0 = run * run_bytes;
    std::uint64_t lo = 0, hi = 0;
    if (count == kElementRun && codes_aligned) {
      if (packed) {
        const uint2 w = __ldg(reinterpret_cast<const uint2*>(q.codes + b0));
        lo = w.x | (static_cast<std::uint64_t>(w.y) << 32);
      } else {
        const uint4 w = __ldg(reinterpret_cast<const uint4*>(q.codes + b0));
        lo = w.x | (static_cast<std::uint64_t>(w.y) << 32);
        hi = w.z | (static_cast<std::uint64_t>(w.w) << 32);
      }
    } else {
      const int valid = packed ? (count + 1) / 2 : count;
      for (int b = 0; b < valid; ++b) PutByte(lo, hi, b, q.codes[b0 + b]);
    }
    long group0 = 0;
    const bool one_group =
        count == kElementRun && codes_aligned && out_aligned && RunInOneGroup(g, divisors, k0, &group0);
    if (__all_sync(kFullWarp, one_group)) {
      const recipe::BlockScale s0 = recipe::LoadScale(r, q, group0);
      float v[kElementRun];
      const auto decode_run = [&] {
#pragma unroll
        for (int e = 0; e < kElementRun; ++e) {
          const std::uint8_t byte[1] = {GetByte(lo, hi, packed ? e / 2 : e)};
          v[e] = recipe::DecodeElementWith(r, s0, t, recipe::LoadCode(r.packing, byte, packed ? (e & 1) : 0),
                                           element_value);
        }
      };
      // The same steps twice, so that in each copy the compiler knows
      // whether the scale is NaN (a test DecodeElementWith makes per
      // element) and drops that test from the unrolled elements.
      if (F32IsNan(F32Bits(s0.decode))) {
        decode_run();
      } else {
        decode_run();
      }
#pragma unroll
      for (int p = 0; p < kElementRun / 4; ++p) {
        warp_staged[StagedSlot(lane, p)] = make_float4(v[4 * p], v[4 * p + 1], v[4 * p + 2], v[4 * p + 3]);
      }
      __syncwarp();
      float4* const warp_out = reinterpret_cast<float4*>(out + warp_run * kElementRun);
#pragma unroll
      for (int p = 0; p < kElementRun / 4; ++p) {
        const int quad_index = p * kWarpSize + lane;  // the warp's quad, in element order
        warp_out[quad_index] = warp_staged[StagedSlot(quad_index / 4, quad_index % 4)];
      }
      __syncwarp();  // the slots are written again in the next turn
      continue;
    }
    if (!active) continue;
    long i = DivideNonNegative(k0, g.cols);
    long j = k0 - i * g.cols;
    long stretch_end = k0;
    recipe::BlockScale s;
    float4 quad = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int e = 0; e < count; ++e) {
      const long k = k0 + e;
      if (k == stretch_end) {
        const long group = recipe::GroupOf(g, i, j);
        s = recipe::LoadScale(r, q, group);
        stretch_end = GroupStretchEnd(g, k, j, group);
      }
      const std::uint8_t byte[1] = {GetByte(lo, hi, packed ? e / 2 : e)};
      const float v =
          recipe::DecodeElementWith(r, s, t, recipe::LoadCode(r.packing, byte, packed ? (e & 1) : 0), element_value);
      // Shifted in from the right: after element 4m + 3 the quad holds
      // elements 4m .. 4m + 3 in order.
      quad = make_float4(quad.y, quad.z, quad.w, v);
      const long kq = k0 + (e & ~3);
      if ((e & 3) == 3) {
        if (out_aligned) {
          *reinterpret_cast<float4*>(out + kq) = quad;
        } else {
          out[kq] = quad.x;
          out[kq + 1] = quad.y;
          out[kq + 2] = quad.z;
          out[kq + 3] = quad.w;
        }
      } else if (e == count - 1) {  // a last quad of 1 to 3 elements, at the right of `quad`
        if ((e & 3) == 0) {
          out[kq] = quad.w;
        } else if ((e & 3) == 1) {
          out[kq] = quad.z;
          out[kq + 1] = quad.w;
        } else {
          out[kq] = quad.y;
          out[kq + 1] = quad.z;
          out[kq + 2] = quad.w;
        }
      }
      if (++j == g.cols) {
        j = 0;
        ++i;
      }
    }
  }
}

unsigned ModelGrid(long work) { return GridFor(static_cast<std::size_t>(work), kModelThreads); }

// ---- groups held in registers ---------------------------------------------------

// Groups of kGroupRegisterRun * T consecutive elements (T a power of two up
// to a block) for a compiled recipe: one pass over x instead of the
// statistics pass and the element pass (a tensor-scaled recipe, NVFP4, runs
// the tensor statistics kernels first and reads their tensor scale). Each of a group's T
// threads holds kGroupRegisterRun consecutive elements in registers (four
// 16-byte loads), accumulates them in order from EmptyStats, and the T
// runs are combined in element order (lanes, then warps: the argument of
// this file's header); the group's first thread chooses and stores the
// scale, and every thread encodes its elements under it.
//
// Runs of 16 and four blocks an SM: with runs of 32 the kernel took 66-84
// registers, three blocks an SM (36% of warps active), and ncu found it
// latency-bound, DRAM at 27-42% with issue at 47-59% (bench/RESULTS-archive-2026.md, "GPU
// roofline", 2026-11-29); with 16 it takes 47-60 registers, no stack.
// kGroupRegisterRun: model_recipe.h.
constexpr int kGroupBlocksPerSm = 4;

// Threads per group for these kernels, or 0 where they do not apply: the
// group a contiguous run of elements (a 1-D block, or a grid group of one
// row), every group whole, group_cols = kGroupRegisterRun * T.
int GroupRegisterThreads(const recipe::Recipe& r, const recipe::GroupGrid& g, const float* x,
                         const std::uint8_t* codes) {
  if (g.Count() < 2) return 0;
  if (!g.flat && g.group_rows != 1) return 0;
  if (g.flat && (g.rows * g.cols) % g.group_cols != 0) return 0;
  if (!Aligned(x, 16) || !Aligned(codes, 16)) return 0;
  for (int t = 1; t <= kModelThreads; t *= 2) {
    if (g.group_cols == static_cast<long>(t) * kGroupRegisterRun) return t;
  }
  return 0;
}

// A thread's kGroupRegisterRun elements v encoded into `words`, in element
// order, one byte or nibble each as recipe::StoreCode places it.
template <bool kClamped, bool kTable, class Encode>
__device__ __forceinline__ void EncodeGroupRun(const recipe::Recipe& r, const recipe::BlockScale& scale,
                                               const float (&v)[kGroupRegisterRun], const Encode& encode_element,
                                               const std::uint8_t* group_codes,
                                               std::uint64_t (&words)[kGroupRegisterRun / 8]) {
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
#pragma unroll
  for (int p = 0; p < kGroupRegisterRun / 4; ++p) {
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int element = 4 * p + e;  // even: the pair's first element in the run
      std::uint8_t pair[2] = {0, 0};
      recipe::StoreCode(r.packing, pair, 0,
                        GroupElementCode<kClamped, kTable>(r, scale, v[element], encode_element, group_codes));
      recipe::StoreCode(r.packing, pair, 1,
                        GroupElementCode<kClamped, kTable>(r, scale, v[element + 1], encode_element, group_codes));
      if (packed) {
        words[element / 16] |= static_cast<std::uint64_t>(pair[0]) << (8 * ((element / 2) % 8));
      } else {
        words[element / 8] |= static_cast<std::uint64_t>(pair[0]) << (8 * (element % 8));
        words[element / 8] |= static_cast<std::uint64_t>(pair[1]) << (8 * (element % 8 + 1));
      }
    }
  }
}

template <class Src, class ElementCodes>
__global__ __launch_bounds__(kModelThreads, kGroupBlocksPerSm) void ModelGroupsInRegistersKernel(
    Src src, ElementCodes element_codes, recipe::GroupGrid g, int threads_per_group, const float* __restrict__ x,
    const recipe::TensorScale* __restrict__ tensor_scale, recipe::QuantizedTensor q) {
  using Stats = KeptStatsOf<Src>;
  const recipe::Recipe r = src.Get();
  // The tensor scale of a tensor-scaled recipe (NVFP4), which the tensor
  // statistics kernels wrote before this launch on the same stream.
  const recipe::TensorScale t = tensor_scale != nullptr ? *tensor_scale : recipe::TensorScale{};
  __shared__ uint2 table[ElementCodes::kTableEntries];
  __shared__ recipe::GroupStats warp_stats[kWarpsPerBlock];
  __shared__ recipe::BlockScale group_scales[kModelThreads];
  constexpr bool kTable = RepackTableElements<Src>();
  __shared__ std::uint8_t repack_codes[kTable ? kModelThreads * kRepackCodes : 1];
  element_codes.Stage(table);
  if (ElementCodes::kTableEntries > 1) __syncthreads();
  const auto encode_element = element_codes.Encoder(r, table);
  const bool packed = r.packing != recipe::Packing::kOnePerByte;
  const int part = threadIdx.x % threads_per_group;      // this thread's run in its group
  const int local_group = threadIdx.x / threads_per_group;
  const int groups_per_block = kModelThreads / threads_per_group;
  const int warp = threadIdx.x / kWarpSize;
  const int warps_per_group = threads_per_group / kWarpSize;  // 0 below a warp
  const long count = g.Count();
  // Block-uniform: every thread takes the barriers of every turn.
  for (long first = static_cast<long>(blockIdx.x) * groups_per_block; first < count;
       first += static_cast<long>(gridDim.x) * groups_per_block) {
    const long group = first + local_group;
    const bool valid = group < count;
    const long k0 = group * g.group_cols + static_cast<long>(part) * kGroupRegisterRun;
    float v[kGroupRegisterRun];
    recipe::GroupStats s = recipe::EmptyStats();
    if (valid) {
      LoadF32s<kGroupRegisterRun>(x + k0, v);
      s = AccumulateInOrder<kGroupRegisterRun>(s, v, StatsStep<Stats>{r});
    }
    // A group within a warp (threads_per_group <= 32): every lane of the
    // group ends with the group's statistics and chooses its scale itself,
    // in parallel (where one lane did while the others waited), with no
    // block barrier, and a field of the scale the elements do not read (an
    // MX block's decoded scale) is never computed. A group over several
    // warps: the first thread combines the warps' statistics and chooses the
    // scale, and the block's threads read it from shared memory.
    const bool in_warp = warps_per_group <= 1;
    if (in_warp) {
      s = CombineAcrossLanesToAll<Stats>(r, s, threads_per_group);
    } else {
      s = CombineAcrossLanes<Stats>(r, s, kWarpSize);
      if (threadIdx.x % kWarpSize == 0) Stats::Store(&warp_stats[warp], s);
      __syncthreads();
      if (part == 0) {
        for (int w = 1; w < warps_per_group; ++w) s = Stats::Combine(r, s, Stats::Load(&warp_stats[warp + w]));
      }
    }
    recipe::BlockScale scale;
    if (in_warp || part == 0) scale = recipe::ChooseScaleWith(r, s, t, KernelScaleSteps<Src>{});
    if (valid && part == 0) recipe::StoreScale(r, q, group, scale);
    if (!in_warp) {
      if (valid && part == 0) group_scales[local_group] = scale;
      __syncthreads();
      scale = group_scales[local_group];
    }
    const std::uint8_t* const group_codes = kTable ? repack_codes + local_group * kRepackCodes : nullptr;
    if constexpr (kTable) {
      // The group's codes by quantizer integer, q0 = qmin + c at c, each
      // thread of the group computing every threads_per_group-th.
      if (valid) {
        for (int c = part; c < kRepackCodes; c += threads_per_group) {
          repack_codes[local_group * kRepackCodes + c] =
              recipe::RepackedCodeWith(r, scale, r.qmin + c, HardwareF16Arithmetic{});
        }
      }
      if (in_warp) {
        __syncwarp();
      } else {
        __syncthreads();
      }
    }
    if (valid) {
      std::uint64_t words[kGroupRegisterRun / 8] = {};
      if (ClampedIntegerElements<Src>() && ClampedIntegerApplies(r, scale.zero_point)) {
        EncodeGroupRun<ClampedIntegerElements<Src>(), kTable>(r, scale, v, encode_element, group_codes, words);
      } else {
        EncodeGroupRun<false, false>(r, scale, v, encode_element, group_codes, words);
      }
      // A run's codes: kGroupRegisterRun bytes, or half as many packed, at
      // a boundary of their own size (the buffer is 16-byte aligned and a
      // run starts at a multiple of kGroupRegisterRun elements).
      constexpr int kWords = kGroupRegisterRun / 8;
      StoreCodeWords(q.codes + (packed ? k0 / 2 : k0), words, packed ? kWords / 2 : kWords);
    }
    // warp_stats, group_scales and repack_codes are written again next turn.
    if (!in_warp) {
      __syncthreads();
    } else if (kTable) {
      __syncwarp();
    }
  }
}


// The element pass's conversion for recipe source Src: the model's, or, for
// a catalog recipe, the hardware conversion where HardwareCodesApply, else
// the threshold table where ThresholdCodesApply.
template <class Src>
struct ElementCodesOf {
  using Type = ModelElementCodes;
  static Type Make(const recipe::Recipe&, const uint2*) { return {}; }
};
template <int kIndex>
  requires(HardwareCodesApply<kIndex>())
struct ElementCodesOf<CatalogRecipe<kIndex>> {
  using Type = HardwareElementCodes<FormatIdOf(CatalogRecipe<kIndex>::Get().element)>;
  static Type Make(const recipe::Recipe&, const uint2*) { return {}; }
};
template <int kIndex>
  requires(HardwareCodesButNanApply<kIndex>())
struct ElementCodesOf<CatalogRecipe<kIndex>> {
  using Type = HardwareElementCodesModelNan<FormatIdOf(CatalogRecipe<kIndex>::Get().element)>;
  static Type Make(const recipe::Recipe&, const uint2*) {
    constexpr recipe::Recipe r = CatalogRecipe<kIndex>::Get();
    constexpr std::uint8_t kPositive = static_cast<std::uint8_t>(
        EncodeF32(r.element, F32FromBits(kF32CanonicalNan), r.element_encode).code);
    constexpr std::uint8_t kNegative = static_cast<std::uint8_t>(
        EncodeF32(r.element, F32FromBits(kF32CanonicalNan | kF32SignMask), r.element_encode)
            .code);
    // The NaN's payload changes nothing (HardwareCodesButNanApply): a
    // signalling one with other payload bits gives the same codes.
    static_assert(kPositive == EncodeF32(r.element, F32FromBits(0x7F800001u), r.element_encode).code &&
                  kNegative == EncodeF32(r.element, F32FromBits(0xFFA5A5A5u), r.element_encode).code);
    return {kPositive, kNegative};
  }
};
template <int kIndex>
  requires(E2m1CodesApply<kIndex>())
struct ElementCodesOf<CatalogRecipe<kIndex>> {
  using Type = E2m1ElementCodes;
  static Type Make(const recipe::Recipe&, const uint2*) { return {}; }
};
template <int kIndex>
  requires(Fp6CodesApply<kIndex>())
struct ElementCodesOf<CatalogRecipe<kIndex>> {
  using Type = Fp6ElementCodes<FormatIdOf(CatalogRecipe<kIndex>::Get().element),
                               CatalogRecipe<kIndex>::Get().element_encode.rounding>;
  static Type Make(const recipe::Recipe&, const uint2*) { return {}; }
};
template <int kIndex>
  requires(!HardwareCodesApply<kIndex>() && !HardwareCodesButNanApply<kIndex>() && !E2m1CodesApply<kIndex>() &&
           !Fp6CodesApply<kIndex>() && ThresholdCodesApply<kIndex>())
struct ElementCodesOf<CatalogRecipe<kIndex>> {
  using Type = ThresholdElementCodes<FormatIdOf(CatalogRecipe<kIndex>::Get().element)>;
  static Type Make(const recipe::Recipe& r, const uint2* table) {
    Type codes{table, {}};
    codes.encode.opt.options = r.element_encode;
    return codes;
  }
};

// The per-tensor reduction over n elements: `count` blocks of block_elems
// elements (whole block steps), one partial each, then their combination.
struct TensorPartials {
  long block_elems = 0;
  long count = 0;
};
TensorPartials TensorPartialsOf(long n) {
  const long max_blocks = static_cast<long>(SmCount()) * kStatsBlocksPerSm;
  const long per_block = n / max_blocks + (n % max_blocks != 0 ? 1 : 0);
  TensorPartials p;
  p.block_elems = (per_block / kBlockStep + (per_block % kBlockStep != 0 ? 1 : 0)) * kBlockStep;
  p.count = n / p.block_elems + (n % p.block_elems != 0 ? 1 : 0);
  return p;
}

// The tensor's statistics into partial[p.count] (partial holds p.count + 1),
// and for a tensor-scaled recipe its tensor scale into *tensor_scale
// (nullptr for the others).
template <class Src>
Status LaunchTensorStats(const Src& src, const float* x, long n, const TensorPartials& p,
                         recipe::GroupStats* partial, recipe::TensorScale* tensor_scale, cudaStream_t stream) {
  ModelTensorPartialsKernel<Src><<<static_cast<unsigned>(p.count), kModelThreads, 0, stream>>>(
      src, x, n, p.block_elems, partial);
  if (Status s = LastLaunchStatus("cuda model recipe"); !s.ok) return s;
  ModelTensorStatsKernel<Src><<<1, kModelThreads, 0, stream>>>(src, partial, p.count, partial + p.count,
                                                               tensor_scale);
  return LastLaunchStatus("cuda model recipe");
}

// RunModelRecipe on the kernels of recipe source Src (r is Src's recipe).
template <class Src>
Status RunModelRecipeOn(const Src& src, const recipe::Recipe& r, const recipe::GroupGrid& g, bool quantize,
                        const float* x, const recipe::QuantizedTensor& q, float* out, cudaStream_t stream) {
  const long n = g.rows * g.cols;
  if (!quantize) {
    ModelDequantizeKernel<Src><<<ModelGrid(ElementRuns(n)), kModelThreads, 0, stream>>>(
        src, g, DivisorsOf(g), recipe::AsConst(q), out);
    return LastLaunchStatus("cuda model recipe");
  }
  using Codes = typename ElementCodesOf<Src>::Type;
  constexpr bool kCodeTable = Codes::kTableEntries > 1;
  const bool scaled_tensor = r.tensor_scale != recipe::TensorScaleRule::kNone;
  recipe::TensorScale* const tensor_scale = scaled_tensor ? q.tensor_scale : nullptr;
  const auto round16 = [](std::size_t bytes) { return (bytes + 15) / 16 * 16; };
  if constexpr (Src::kFolded) {
    if (const int threads = GroupRegisterThreads(r, g, x, q.codes); threads > 0) {
      // Scratch: for a tensor-scaled recipe (NVFP4) the per-tensor partials
      // and statistics, then the threshold table where the codes take one.
      const TensorPartials partials = scaled_tensor ? TensorPartialsOf(n) : TensorPartials{};
      const std::size_t stats_bytes = scaled_tensor ? round16((partials.count + 1) * sizeof(recipe::GroupStats)) : 0;
      const std::size_t table_bytes = kCodeTable ? Codes::kTableEntries * sizeof(uint2) : 16;
      StreamScratch scratch(stream);
      if (cudaError_t e = scratch.Allocate(stats_bytes + table_bytes); e != cudaSuccess) {
        return CudaStatus("cuda model recipe", e);
      }
      char* base = static_cast<char*>(scratch.get());
      auto* partial = reinterpret_cast<recipe::GroupStats*>(base);
      auto* table = reinterpret_cast<uint2*>(base + stats_bytes);
      if (scaled_tensor) {
        // The tensor scale first; the one-pass kernel reads it.
        if (Status s = LaunchTensorStats(src, x, n, partials, partial, tensor_scale, stream); !s.ok) return s;
      }
      const Codes codes = ElementCodesOf<Src>::Make(r, table);
      if constexpr (kCodeTable) {
        if (cudaError_t e = LaunchBuildThresholdTable(table, codes.encode, stream); e != cudaSuccess) {
          return CudaStatus("cuda model recipe", e);
        }
      }
      const long blocks = g.Count() / (kModelThreads / threads) + 1;
      const unsigned grid = static_cast<unsigned>(
          MinLong(blocks, static_cast<long>(SmCount()) * kGroupBlocksPerSm * 8));
      ModelGroupsInRegistersKernel<Src, Codes><<<grid, kModelThreads, 0, stream>>>(
          src, codes, g, threads, x, tensor_scale, q);
      return LastLaunchStatus("cuda model recipe");
    }
  }
  // Scratch: the per-tensor partials and the tensor's statistics (per-tensor
  // groups and tensor scales only), one BlockScale per group, then the
  // threshold table where the element pass takes one.
  const bool tensor_stats = g.Count() == 1 || scaled_tensor;
  const TensorPartials partials = tensor_stats ? TensorPartialsOf(n) : TensorPartials{};
  const std::size_t stats_bytes = tensor_stats ? (partials.count + 1) * sizeof(recipe::GroupStats) : 0;
  const std::size_t scale_offset = round16(stats_bytes);
  const std::size_t table_offset = round16(scale_offset + g.Count() * sizeof(recipe::BlockScale));
  const std::size_t table_bytes = kCodeTable ? Codes::kTableEntries * sizeof(uint2) : 0;
  StreamScratch scratch(stream);
  if (cudaError_t e = scratch.Allocate(table_offset + table_bytes); e != cudaSuccess) {
    return CudaStatus("cuda model recipe", e);
  }
  char* base = static_cast<char*>(scratch.get());
  auto* partial = reinterpret_cast<recipe::GroupStats*>(base);
  auto* scales = reinterpret_cast<recipe::BlockScale*>(base + scale_offset);
  auto* table = reinterpret_cast<uint2*>(base + table_offset);
  const recipe::GroupStats* stats = nullptr;
  if (tensor_stats) {
    if (Status s = LaunchTensorStats(src, x, n, partials, partial, tensor_scale, stream); !s.ok) return s;
    // A per-tensor group takes the tensor's statistics; NVFP4's blocks
    // their own.
    if (g.Count() == 1) stats = partial + partials.count;
  }
  const recipe::TensorScale* t = tensor_scale;
  const int lanes = stats != nullptr ? 1 : StatsLanesPerGroup(g.group_cols);
  const long groups_per_warp = kWarpSize / lanes;
  const long scale_warps = g.Count() / groups_per_warp + (g.Count() % groups_per_warp != 0 ? 1 : 0);
  const unsigned scale_grid = ModelGrid(scale_warps * kWarpSize);
  const long groups_per_turn = static_cast<long>(scale_grid) * kWarpsPerBlock * groups_per_warp;
  ModelScalesKernel<Src><<<scale_grid, kModelThreads, 0, stream>>>(src, g, x, lanes, groups_per_turn, stats, t, q,
                                                                   scales);
  if (Status s = LastLaunchStatus("cuda model recipe"); !s.ok) return s;
  const Codes codes = ElementCodesOf<Src>::Make(r, table);
  if constexpr (kCodeTable) {
    if (cudaError_t e = LaunchBuildThresholdTable(table, codes.encode, stream); e != cudaSuccess) {
      return CudaStatus("cuda model recipe", e);
    }
  }
  ModelElementsKernel<Src, Codes><<<ModelGrid(ElementRuns(n)), kModelThreads, 0, stream>>>(
      src, codes, g, DivisorsOf(g), x, scales, q.codes);
  return LastLaunchStatus("cuda model recipe");
}

// The compiled copy of the first catalog recipe r equals, else the run-time one.
template <std::size_t... kI>
Status RunCompiledOrRunTime(std::index_sequence<kI...>, const recipe::Recipe& r, const recipe::GroupGrid& g,
                            bool quantize, const float* x, const recipe::QuantizedTensor& q, float* out,
                            cudaStream_t stream) {
  Status status;
  const bool compiled =
      ((recipe::SameSemantics(r, recipe::kAllRecipes[kCompiledRecipes[kI]]) &&
        (status = RunModelRecipeOn(CatalogRecipe<kCompiledRecipes[kI]>{}, r, g, quantize, x, q, out, stream), true)) ||
       ...);
  if (!compiled) status = RunModelRecipeOn(RunTimeRecipe{r}, r, g, quantize, x, q, out, stream);
  return status;
}

}  // namespace

bool QuantizesGroupsInRegisters(const recipe::Recipe& r, const recipe::Layout& layout, std::size_t rows,
                                std::size_t cols, const float* x, const std::uint8_t* codes) {
  recipe::GroupGrid g;
  if (recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &g) !=
      recipe::TensorStatus::kOk) {
    return false;
  }
  return RunsOnCompiledRecipeKernels(r) && GroupRegisterThreads(r, g, x, codes) > 0;
}

bool RunsOnCompiledRecipeKernels(const recipe::Recipe& r) {
  for (const int index : kCompiledRecipes) {
    if (recipe::SameSemantics(r, recipe::kAllRecipes[index])) return true;
  }
  return false;
}

Status RunModelRecipe(const recipe::Recipe& r, const recipe::Layout& layout, bool quantize, const float* x,
                      std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q, float* out,
                      cudaStream_t stream) {
  recipe::GroupGrid g;
  const recipe::TensorStatus st =
      recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &g);
  if (st != recipe::TensorStatus::kOk) return Status::Error(std::string("cuda: ") + recipe::TensorStatusText(st));
  return RunCompiledOrRunTime(std::make_index_sequence<kCompiledRecipes.size()>{}, r, g, quantize, x, q, out, stream);
}

}  // namespace lowbit::cuda::detail
