// Element functors: one per (backend, conversion). The array kernels
// (map_kernel.cuh) and the verification kernel (verify.cu) are written once
// over this interface:
//   using In, Out;                                  storage types of one element
//   Out One(In x, size_t i) const;                  element i
//   void Two(In a, In b, size_t i, Out& oa, Out& ob) const;  elements i, i+1
// cuda-sw functors are the formats/ model compiled for the device (every step
// of round_pack.h); cuda-hw functors are the PTX cvt wrappers of ptx.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "lowbit/formats/alternatives/f32_f16_bf16.h"
#include "lowbit/formats/convert.h"
#include "hardware_rule.h"
#include "spec_value.h"
#include "lowbit/formats/format_list.h"
#include "ptx.cuh"

namespace lowbit::cuda::detail {

// Storage of one code, as the registry stores it (registry.h CodeBytes).
template <FormatId kId>
using CodeT = std::conditional_t<
    SpecValue<kId>().total_bits <= 8, std::uint8_t,
    std::conditional_t<SpecValue<kId>().total_bits <= 16, std::uint16_t,
                       std::conditional_t<SpecValue<kId>().total_bits <= 32, std::uint32_t,
                                          std::uint64_t>>>;

// Options known only at run time (the array API).
struct RuntimeOptions {
  EncodeOptions options;
  __device__ __forceinline__ EncodeOptions Get() const { return options; }
};

// The option set each hardware instruction implements, as compile-time values
// so that the model it is verified against folds them in: the `nvidia`
// profile's rule for the destination (hardware_rule.h). A functor for an
// instruction the profile does not define does not compile.
template <FormatId kDst, RoundingMode kRounding, bool kSatfinite>
struct HwEncodeOpts {
  LOWBIT_HD_CONSTEXPR EncodeOptions Get() const {
    constexpr HardwareRule kRule = HardwareEncodeRule(kDst, kRounding, kSatfinite);
    static_assert(kRule.exists, "the nvidia profile has no such conversion");
    return kRule.options;
  }
};
// Decodes: the profile's NvidiaDecodeOptions of the source format.
template <FormatId kSrc>
struct HwDecodeOpts {
  LOWBIT_HD_CONSTEXPR EncodeOptions Get() const {
    constexpr EncodeOptions kOptions = ToDecodeEncodeOptions(HardwareDecodeRule(kSrc));
    return kOptions;
  }
};

// ---- cuda-sw: the model ----
// Converts codes of kSrc to kDst through Convert = Unpack + RoundPack. With
// kSrc = Fp32 it is an FP32 encode, with kDst = Fp32 / Bf16 a decode (the
// decode options folded in by ToDecodeEncodeOptions).
template <FormatId kSrc, FormatId kDst, typename Opt = RuntimeOptions>
struct ModelConvert {
  using In = CodeT<kSrc>;
  using Out = CodeT<kDst>;
  using Model = ModelConvert;  // verified against itself (verify.h)
  static constexpr FormatId kSource = kSrc;
  static constexpr FormatId kDestination = kDst;
  Opt opt;
  const std::uint32_t* random_bits = nullptr;  // kStochastic: one word per element
  __device__ __forceinline__ Out One(In x, std::size_t i) const {
    EncodeOptions o = opt.Get();
    if (random_bits != nullptr) o.random_bits = random_bits[i];
    return static_cast<Out>(Convert(SpecValue<kSrc>(), x, SpecValue<kDst>(), o).code);
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t i, Out& oa, Out& ob) const {
    oa = One(a, i);
    ob = One(b, i + 1);
  }
};

// ---- cuda-sw: named alternatives of the model ----
// FP32 <-> BF16 / FP16 in 32-bit integer arithmetic
// (formats/include/lowbit/formats/alternatives/f32_f16_bf16.h), in place of
// ModelConvert<kSrc, kDst> (RuntimeOptions) where the options are among
// those the alternative is proven for (HalfFloatAlternativeApplies). The
// model's generic RoundPack with run-time options took about 100 SASS
// instructions an element and left these maps ALU-bound on the H200
// (0.31x-0.45x of a device copy); these take a few. Proven equal to the
// model on every input by proptests/backends/alternatives_test.cc (host)
// and cuda/tests/half_float_alternatives_test.cu (this device compilation,
// through convert.cu against LayoutVariant::kReplaced).
template <FormatId kSrc, FormatId kDst>
struct HalfFloatAlternative {
  static constexpr bool kNarrowing = kSrc == FormatId::kFp32;
  static_assert(kNarrowing ? (kDst == FormatId::kBf16 || kDst == FormatId::kFp16)
                           : ((kSrc == FormatId::kBf16 || kSrc == FormatId::kFp16) && kDst == FormatId::kFp32),
                "FP32 -> BF16 / FP16 or BF16 / FP16 -> FP32");
  using In = CodeT<kSrc>;
  using Out = CodeT<kDst>;
  static constexpr FormatId kSource = kSrc;
  static constexpr FormatId kDestination = kDst;
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    if constexpr (kDst == FormatId::kBf16) return alternatives::EncodeF32BitsToBf16(x);
    else if constexpr (kDst == FormatId::kFp16) return alternatives::EncodeF32BitsToF16(x);
    else if constexpr (kSrc == FormatId::kBf16) return alternatives::DecodeBf16ToF32Bits(x);
    else return alternatives::DecodeF16ToF32Bits(x);
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t i, Out& oa, Out& ob) const {
    oa = One(a, i);
    ob = One(b, i + 1);
  }
};

// Whether F is a model functor that HalfFloatAlternative can stand in for.
template <typename F>
constexpr bool HasHalfFloatAlternative() {
  if constexpr (requires { F::kSource; F::kDestination; }) {
    constexpr FormatId s = F::kSource, d = F::kDestination;
    constexpr bool pair = (s == FormatId::kFp32 && (d == FormatId::kBf16 || d == FormatId::kFp16)) ||
                          ((s == FormatId::kBf16 || s == FormatId::kFp16) && d == FormatId::kFp32);
    if constexpr (pair) return std::is_same_v<F, ModelConvert<s, d>>;
  }
  return false;
}

// Whether the model functor f (its options: the encode options, or the
// decode options as ToDecodeEncodeOptions gives them) is among those its
// alternative is proven for. The widening ignores f.random_bits: it is exact,
// so stochastic rounding never reads them.
template <typename F>
bool HalfFloatAlternativeApplies(const F& f) {
  static_assert(HasHalfFloatAlternative<F>());
  if constexpr (F::kSource == FormatId::kFp32) return alternatives::EncodeF32ToHalfAlternativeApplies(f.opt.options);
  else return alternatives::WidenToF32AlternativeApplies(f.opt.options);
}

// Whether a cuda-sw map with layout policy Layout (layout.cuh
// kHalfFloatAlternatives) runs f's HalfFloatAlternative instead of f; the
// one decision convert.cu takes and the GPU test asserts.
template <typename Layout, typename F>
bool TakesHalfFloatAlternative(const F& f) {
  if constexpr (Layout::kHalfFloatAlternatives && HasHalfFloatAlternative<F>()) return HalfFloatAlternativeApplies(f);
  else return false;
}

// ---- cuda-hw ----
__device__ __forceinline__ float AsFloat(std::uint32_t bits) { return __uint_as_float(bits); }
__device__ __forceinline__ float Bf16ToFloat(std::uint16_t bits) {
  return __uint_as_float(static_cast<std::uint32_t>(bits) << 16);  // exact widening
}

// Rounding of an instruction, and the model options that equal it.
enum class HwRound : std::uint8_t { kRn, kRz, kRm, kRp, kRnSatfinite };
template <FormatId kDst, HwRound kRound>
using HwOptsFor = HwEncodeOpts<kDst,
                               kRound == HwRound::kRz   ? RoundingMode::kTowardZero
                               : kRound == HwRound::kRm ? RoundingMode::kDown
                               : kRound == HwRound::kRp ? RoundingMode::kUp
                                                        : RoundingMode::kNearestEven,
                               kRound == HwRound::kRnSatfinite>;

// FP32 -> E4M3 / E5M2: cvt.rn.satfinite (docs/formats-reference.md §4.1, §4.2).
template <FormatId kDst>
struct HwEncodeF32Fp8 {
  static_assert(kDst == FormatId::kE4m3 || kDst == FormatId::kE5m2);
  using In = std::uint32_t;
  using Out = std::uint8_t;
  using Model = ModelConvert<FormatId::kFp32, kDst, HwEncodeOpts<kDst, RoundingMode::kNearestEven, true>>;
  __device__ __forceinline__ static std::uint16_t Pair(float lo, float hi) {
    if constexpr (kDst == FormatId::kE4m3) return ptx::CvtE4m3x2F32(lo, hi);
    else return ptx::CvtE5m2x2F32(lo, hi);
  }
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    return static_cast<Out>(Pair(AsFloat(x), 0.0f));
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint16_t d = Pair(AsFloat(a), AsFloat(b));
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 8);
  }
};

// BF16 -> FP8: widen exactly, then the FP32 instruction (what cuda_fp8.h does
// on sm_90, docs/formats-reference.md §4.1 "From BF16").
template <FormatId kDst>
struct HwEncodeBf16Fp8 {
  using In = std::uint16_t;
  using Out = std::uint8_t;
  using Model = ModelConvert<FormatId::kBf16, kDst, HwEncodeOpts<kDst, RoundingMode::kNearestEven, true>>;
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    return static_cast<Out>(HwEncodeF32Fp8<kDst>::Pair(Bf16ToFloat(x), 0.0f));
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint16_t d = HwEncodeF32Fp8<kDst>::Pair(Bf16ToFloat(a), Bf16ToFloat(b));
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 8);
  }
};

// FP16 -> FP8: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2; the low half is element 0.
template <FormatId kDst>
struct HwEncodeF16Fp8 {
  using In = std::uint16_t;
  using Out = std::uint8_t;
  using Model = ModelConvert<FormatId::kFp16, kDst, HwEncodeOpts<kDst, RoundingMode::kNearestEven, true>>;
  __device__ __forceinline__ static std::uint16_t Pair(std::uint16_t lo, std::uint16_t hi) {
    const std::uint32_t v = lo | (static_cast<std::uint32_t>(hi) << 16);
    if constexpr (kDst == FormatId::kE4m3) return ptx::CvtE4m3x2F16x2(v);
    else return ptx::CvtE5m2x2F16x2(v);
  }
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    return static_cast<Out>(Pair(x, 0));
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint16_t d = Pair(a, b);
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 8);
  }
};

// FP32 -> BF16 / FP16 with the rounding the instruction names.
template <FormatId kDst, HwRound kRound>
struct HwEncodeF32Half {
  static_assert(kDst == FormatId::kBf16 || kDst == FormatId::kFp16);
  static_assert(kDst == FormatId::kBf16 || (kRound != HwRound::kRm && kRound != HwRound::kRp));
  using In = std::uint32_t;
  using Out = std::uint16_t;
  using Model = ModelConvert<FormatId::kFp32, kDst, HwOptsFor<kDst, kRound>>;
  __device__ __forceinline__ static std::uint32_t Pair(float lo, float hi) {
    if constexpr (kDst == FormatId::kBf16) {
      if constexpr (kRound == HwRound::kRn) return ptx::CvtRnBf16x2F32(lo, hi);
      else if constexpr (kRound == HwRound::kRz) return ptx::CvtRzBf16x2F32(lo, hi);
      else if constexpr (kRound == HwRound::kRnSatfinite) return ptx::CvtRnSatBf16x2F32(lo, hi);
      else if constexpr (kRound == HwRound::kRm)
        return ptx::CvtRmBf16F32(lo) | (static_cast<std::uint32_t>(ptx::CvtRmBf16F32(hi)) << 16);
      else
        return ptx::CvtRpBf16F32(lo) | (static_cast<std::uint32_t>(ptx::CvtRpBf16F32(hi)) << 16);
    } else {
      if constexpr (kRound == HwRound::kRn) return ptx::CvtRnF16x2F32(lo, hi);
      else if constexpr (kRound == HwRound::kRz) return ptx::CvtRzF16x2F32(lo, hi);
      else return ptx::CvtRnSatF16x2F32(lo, hi);
    }
  }
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    return static_cast<Out>(Pair(AsFloat(x), 0.0f));
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint32_t d = Pair(AsFloat(a), AsFloat(b));
    oa = static_cast<Out>(d);
    ob = static_cast<Out>(d >> 16);
  }
};

// FP8 -> FP32 / BF16 through cvt.rn.f16x2.{e4m3x2,e5m2x2} (exact; every NaN
// becomes 0x7FFF) and cvt.f32.f16 (NaN -> 0x7FFFFFFF), docs/formats-reference.md §4.1, §3.3.
template <FormatId kSrc, bool kToBf16>
struct HwDecodeFp8 {
  using In = std::uint8_t;
  using Out = std::conditional_t<kToBf16, std::uint16_t, std::uint32_t>;
  using Model = ModelConvert<kSrc, kToBf16 ? FormatId::kBf16 : FormatId::kFp32, HwDecodeOpts<kSrc>>;
  __device__ __forceinline__ static std::uint32_t Halves(std::uint8_t lo, std::uint8_t hi) {
    const std::uint16_t v = static_cast<std::uint16_t>(lo | (hi << 8));
    if constexpr (kSrc == FormatId::kE4m3) return ptx::CvtF16x2E4m3x2(v);
    else return ptx::CvtF16x2E5m2x2(v);
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
    const std::uint32_t h = Halves(a, b);
    const float fa = ptx::CvtF32F16(static_cast<std::uint16_t>(h));
    const float fb = ptx::CvtF32F16(static_cast<std::uint16_t>(h >> 16));
    if constexpr (kToBf16) {
      const std::uint32_t d = ptx::CvtRnBf16x2F32(fa, fb);  // exact: FP8 values are BF16 values
      oa = static_cast<Out>(d);
      ob = static_cast<Out>(d >> 16);
    } else {
      oa = __float_as_uint(fa);
      ob = __float_as_uint(fb);
    }
  }
  __device__ __forceinline__ Out One(In x, std::size_t i) const {
    Out oa, ob;
    Two(x, 0, i, oa, ob);
    return oa;
  }
};

// FP16 -> FP32: cvt.f32.f16.
struct HwDecodeF16ToF32 {
  using In = std::uint16_t;
  using Out = std::uint32_t;
  using Model = ModelConvert<FormatId::kFp16, FormatId::kFp32, HwDecodeOpts<FormatId::kFp16>>;
  __device__ __forceinline__ Out One(In x, std::size_t) const {
    return __float_as_uint(ptx::CvtF32F16(x));
  }
  __device__ __forceinline__ void Two(In a, In b, std::size_t i, Out& oa, Out& ob) const {
    oa = One(a, i);
    ob = One(b, i);
  }
};

// sm_100a-class instructions (docs/formats-reference.md §2): FP32 -> E2M1/E2M3/E3M2 (RN satfinite)
// and E8M0 (RZ/RP satfinite); decodes from them. Compiled for every target so
// that the dispatch exists everywhere; the host side launches them only when
// the device and the build have such a target (HardwareHasBlackwellCvt()).
template <FormatId kDst, HwRound kRound = HwRound::kRn>
struct HwEncodeF32Narrow {
  using In = std::uint32_t;
  using Out = std::uint8_t;
  // FP4/FP6 have no specials (overflow saturates either way); E8M0 is .satfinite.
  using Model = ModelConvert<FormatId::kFp32, kDst,
                             HwEncodeOpts<kDst,
                                          kRound == HwRound::kRz   ? RoundingMode::kTowardZero
                                          : kRound == HwRound::kRp ? RoundingMode::kUp
                                                                   : RoundingMode::kNearestEven,
                                          true>>;
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
#if defined(LOWBIT_PTX_HAS_BLACKWELL_CVT)
    const float lo = AsFloat(a), hi = AsFloat(b);
    if constexpr (kDst == FormatId::kE2m1) {
      const std::uint8_t d = ptx::CvtE2m1x2F32(lo, hi);
      oa = d & 0xF;
      ob = d >> 4;
      return;
    } else {
      std::uint16_t d;
      if constexpr (kDst == FormatId::kE2m3) d = ptx::CvtE2m3x2F32(lo, hi);
      else if constexpr (kDst == FormatId::kE3m2) d = ptx::CvtE3m2x2F32(lo, hi);
      else if constexpr (kRound == HwRound::kRz) d = ptx::CvtRzUe8m0x2F32(lo, hi);
      else d = ptx::CvtRpUe8m0x2F32(lo, hi);
      oa = static_cast<Out>(d);
      ob = static_cast<Out>(d >> 8);
    }
#else
    (void)a;
    (void)b;
    oa = ob = 0;
    __trap();  // never launched: the host checks the target first
#endif
  }
  __device__ __forceinline__ Out One(In x, std::size_t i) const {
    Out oa, ob;
    Two(x, 0, i, oa, ob);
    return oa;
  }
};

template <FormatId kSrc, bool kToBf16>
struct HwDecodeNarrow {
  using In = std::uint8_t;
  using Out = std::conditional_t<kToBf16, std::uint16_t, std::uint32_t>;
  using Model = ModelConvert<kSrc, kToBf16 ? FormatId::kBf16 : FormatId::kFp32, HwDecodeOpts<kSrc>>;
  __device__ __forceinline__ void Two(In a, In b, std::size_t, Out& oa, Out& ob) const {
#if defined(LOWBIT_PTX_HAS_BLACKWELL_CVT)
    if constexpr (kSrc == FormatId::kE8m0) {
      const std::uint32_t d = ptx::CvtBf16x2Ue8m0x2(static_cast<std::uint16_t>(a | (b << 8)));
      if constexpr (kToBf16) {
        oa = static_cast<Out>(d);
        ob = static_cast<Out>(d >> 16);
      } else {
        // BF16 -> FP32 is a shift; NaN 0x7FFF -> 0x7FFF0000 would keep a payload
        // the hardware decode to FP32 does not define, so only BF16 is offered.
        oa = (d & 0xFFFF) << 16;
        ob = d & 0xFFFF0000u;
      }
    } else {
      std::uint32_t h;
      if constexpr (kSrc == FormatId::kE2m1) h = ptx::CvtF16x2E2m1x2(static_cast<std::uint8_t>(a | (b << 4)));
      else if constexpr (kSrc == FormatId::kE2m3) h = ptx::CvtF16x2E2m3x2(static_cast<std::uint16_t>(a | (b << 8)));
      else h = ptx::CvtF16x2E3m2x2(static_cast<std::uint16_t>(a | (b << 8)));
      const float fa = ptx::CvtF32F16(static_cast<std::uint16_t>(h));
      const float fb = ptx::CvtF32F16(static_cast<std::uint16_t>(h >> 16));
      if constexpr (kToBf16) {
        const std::uint32_t d = ptx::CvtRnBf16x2F32(fa, fb);
        oa = static_cast<Out>(d);
        ob = static_cast<Out>(d >> 16);
      } else {
        oa = __float_as_uint(fa);
        ob = __float_as_uint(fb);
      }
    }
#else
    (void)a;
    (void)b;
    oa = ob = 0;
    __trap();
#endif
  }
  __device__ __forceinline__ Out One(In x, std::size_t i) const {
    Out oa, ob;
    Two(x, 0, i, oa, ob);
    return oa;
  }
};

}  // namespace lowbit::cuda::detail
