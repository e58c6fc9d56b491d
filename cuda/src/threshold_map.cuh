// FP32 encodes into formats of at most 8 bits (cuda-sw) as a table of the
// model's own thresholds.
//
// Why: a 2^32-entry table is out of reach (table_map.cuh covers sources of
// at most 16 bits), and the model's Convert per element is ~100 instructions
// (bench/RESULTS-archive-2026.md "GPU roofline": FP32 -> E4M3 at 3.6 warp instructions per
// element, ALU-bound at 0.23x copy). Under round to nearest even or toward
// zero, the code of a finite FP32 input of one sign is a step function of its
// magnitude bits: constant below about a quarter of the format's smallest
// positive value, constant beyond four times its largest magnitude, and
// changing only where the magnitude crosses a rounding boundary. The
// magnitudes between those ends are split into buckets of 2^kShift
// consecutive bit patterns, kBucketBits leading mantissa bits per FP32
// binade, one more than the format has values per binade, so that a
// bucket holds at most one boundary; every magnitude below them is one more
// bucket, whose one boundary may be right after zero (-0 into an unsigned
// format is 0, any other negative input its negative rule). For each sign
// and bucket the table holds the model's codes at the bucket's two ends and
// the first magnitude that takes the upper code, found by bisection with the
// model. An element is then one shared-memory lookup and a comparison; Inf
// and NaN inputs (their payload can reach the code) take the model itself.
//
// Every part of that argument is an assumption about the model that the
// table does not check, so the table is used only where it is proven: the
// functors of ThresholdShapeApplies and the option sets of
// ThresholdProvenOptions, each compared with the model on all 2^32 FP32
// inputs by cuda/tests/threshold_map_test.cu.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "element_ops.cuh"
#include "hardware_rule.h"
#include "launch.cuh"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/formats/recipe/catalog.h"
#include "options_match.h"
#include "stream_scratch.h"
#include "table_map.cuh"

namespace lowbit::cuda::detail {

// The option sets the tables are proven for (cuda/tests/threshold_map_test.cu
// sweeps each): the format defaults (EncodeOptions{}, what `lowbit convert`
// and the benchmark pass), the nvidia profile's cvt.rn.satfinite rule, round
// toward zero with other NaN and zero policies, and the element options of
// the recipes model_recipe.cu runs (recipe/catalog.h SatfiniteElements for
// vLLM FP8 and NVFP4, SaturatingElements(RNE, keep the NaN sign) for MX).
// Other options take the model per element.
constexpr std::array<EncodeOptions, 5> ThresholdProvenOptions() {
  const EncodeOptions satfinite = HardwareEncodeRule(FormatId::kE4m3, RoundingMode::kNearestEven, true).options;
  EncodeOptions toward_zero;
  toward_zero.rounding = RoundingMode::kTowardZero;
  toward_zero.nan_payload = NanPayload::kQuietOnly;
  toward_zero.keep_negative_zero = false;
  return {EncodeOptions{}, satfinite, toward_zero, recipe::SatfiniteElements(),
          recipe::SaturatingElements(RoundingMode::kNearestEven, NanSign::kKeep)};
}

constexpr bool ThresholdOptionsProven(const FormatSpec& dst, const EncodeOptions& options) {
  if (options.rounding != RoundingMode::kNearestEven && options.rounding != RoundingMode::kTowardZero) return false;
  for (const EncodeOptions& proven : ThresholdProvenOptions()) {
    if (SameEncodeSemantics(dst, options, proven)) return true;
  }
  return false;
}

// The bucket geometry of destination kDst, from its values (every code
// decoded by the model).
template <FormatId kDst>
struct ThresholdGeometry {
  static constexpr FormatSpec kSpec = SpecValue<kDst>();
  struct Range {
    float smallest = 0;  // smallest positive finite magnitude
    float largest = 0;   // largest finite magnitude
  };
  static constexpr Range Values() {
    Range r;
    r.smallest = F32FromBits(0x7F7FFFFFu);
    for (std::uint64_t c = 0; c < (std::uint64_t{1} << kSpec.total_bits); ++c) {
      const float v = F32Abs(DecodeToF32(kSpec, c));
      if (!F32IsFinite(F32Bits(v)) || v == 0.0f) continue;
      if (v < r.smallest) r.smallest = v;
      if (v > r.largest) r.largest = v;
    }
    return r;
  }
  static constexpr int Field(float v) { return static_cast<int>(F32Bits(v) >> 23); }
  static constexpr int kFieldLo = Field(Values().smallest) - 2 > 0 ? Field(Values().smallest) - 2 : 0;
  static constexpr int kFieldHi = Field(Values().largest) + 2 < 254 ? Field(Values().largest) + 2 : 254;
  // log2 of the values per FP32 binade: mantissa_bits for floats; for integers
  // that of the top binade below the largest magnitude, [2^(b-2), 2^(b-1)) signed
  // and [2^(b-1), 2^b) unsigned.
  static constexpr int kValueBits = kSpec.IsFloat() ? kSpec.mantissa_bits : kSpec.total_bits - (kSpec.has_sign ? 2 : 1);
  static constexpr int kBucketBits = kValueBits + 1;
  static constexpr int kShift = 23 - kBucketBits;
  // Per sign: bucket 0 holds the magnitudes below kFieldLo's binade, bucket
  // 1 + b the b-th of 2^kShift patterns from there on.
  static constexpr int kBuckets = ((kFieldHi - kFieldLo + 1) << kBucketBits) + 1;
  static constexpr std::size_t kTableBytes = 2 * kBuckets * sizeof(uint2);
};

// Which functors take the threshold table: the model's FP32 encode into a
// format of at most 8 bits whose table fits the static shared memory of a
// block (48 KB).
template <typename F>
constexpr bool ThresholdShapeApplies() {
  if constexpr (requires { F::kSource; F::kDestination; }) {
    if constexpr (F::kSource == FormatId::kFp32 && SpecValue<F::kDestination>().total_bits <= 8) {
      return ThresholdGeometry<F::kDestination>::kTableBytes <= (std::size_t{48} << 10);
    }
  }
  return false;
}

// One thread per (sign, bucket): the codes at the bucket's ends, and the
// first magnitude with the upper code (0x80000000, above every magnitude,
// when the two agree).
template <typename F>
__global__ void BuildThresholdTableKernel(uint2* __restrict__ table, F f) {
  using G = ThresholdGeometry<F::kDestination>;
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= 2 * G::kBuckets) return;
  const std::uint32_t sign = j >= G::kBuckets ? 0x80000000u : 0u;
  const std::uint32_t b = static_cast<std::uint32_t>(j % G::kBuckets);
  const std::uint32_t window = static_cast<std::uint32_t>(G::kFieldLo) << 23;
  // Bucket 0 is [0, window) (never looked up when the window starts at 0).
  const std::uint32_t start = b == 0 ? 0u : window + ((b - 1) << G::kShift);
  const std::uint32_t end = b == 0 ? (window > 0 ? window - 1 : 0u)
                                   : start + (1u << G::kShift) - 1;  // at most 0x7F7FFFFF: kFieldHi <= 254
  const std::uint32_t lo = f.One(sign | start, 0);
  const std::uint32_t hi = f.One(sign | end, 0);
  std::uint32_t threshold = 0x80000000u;
  if (lo != hi) {
    std::uint32_t below = start, at = end;  // f(below) = lo, f(at) = hi
    while (at - below > 1) {
      const std::uint32_t mid = below + (at - below) / 2;
      if (f.One(sign | mid, 0) == hi) at = mid;
      else below = mid;
    }
    threshold = at;
  }
  table[j] = make_uint2(threshold, lo | (hi << 8));
}

// Builds F's table (ThresholdGeometry<F::kDestination>::kTableBytes) on `stream`.
template <typename F>
cudaError_t LaunchBuildThresholdTable(uint2* table, const F& f, cudaStream_t stream) {
  using G = ThresholdGeometry<F::kDestination>;
  BuildThresholdTableKernel<F><<<(2 * G::kBuckets + 127) / 128, 128, 0, stream>>>(table, f);
  return cudaGetLastError();
}

// Inf and NaN inputs: the model (out of line: rare, and the model's code is
// large).
template <typename F>
__device__ __noinline__ std::uint32_t ThresholdSpecial(const F& f, std::uint32_t bits) {
  return f.One(bits, 0);
}

template <typename F>
__device__ __forceinline__ std::uint32_t ThresholdCode(const uint2* t, const F& f, std::uint32_t bits) {
  using G = ThresholdGeometry<F::kDestination>;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) return ThresholdSpecial(f, bits);
  int bucket = static_cast<int>(magnitude >> G::kShift) - (G::kFieldLo << G::kBucketBits) + 1;
  bucket = bucket < 0 ? 0 : (bucket >= G::kBuckets ? G::kBuckets - 1 : bucket);
  const uint2 e = t[bucket + (bits >> 31) * G::kBuckets];
  return magnitude >= e.x ? (e.y >> 8) : (e.y & 0xFFu);
}

inline constexpr int kThresholdThreads = 512;

// The array through the table staged in shared memory, by table_map.cuh's
// MapThroughTable (16-byte input units, four codes a 4-byte store).
template <typename F>
__global__ void __launch_bounds__(kThresholdThreads)
    ThresholdMapKernel(const std::uint32_t* __restrict__ in, std::uint8_t* __restrict__ out, std::size_t units,
                       std::size_t count, const uint2* __restrict__ table, F f) {
  using G = ThresholdGeometry<F::kDestination>;
  __shared__ uint2 t[2 * G::kBuckets];
  for (int j = threadIdx.x; j < 2 * G::kBuckets; j += blockDim.x) t[j] = table[j];
  __syncthreads();
  MapThroughTable([&](std::uint32_t bits) { return ThresholdCode(t, f, bits); }, in, out, units, count);
}

// Builds F's table into stream-ordered scratch and maps the array through
// it; returns the first CUDA error. The caller checks ThresholdShapeApplies
// and ThresholdOptionsProven.
template <typename F>
cudaError_t LaunchThresholdMap(const void* in, void* out, std::size_t count, const F& f, cudaStream_t stream) {
  using G = ThresholdGeometry<F::kDestination>;
  static_assert(ThresholdShapeApplies<F>());
  const std::size_t units = TableUnits<std::uint32_t, std::uint8_t>(in, out, count);
  StreamScratch scratch(stream);
  if (cudaError_t e = scratch.Allocate(G::kTableBytes); e != cudaSuccess) return e;
  auto* table = static_cast<uint2*>(scratch.get());
  if (cudaError_t e = LaunchBuildThresholdTable(table, f, stream); e != cudaSuccess) return e;
  const std::size_t work = units > 0 ? (units + kTableUnroll - 1) / kTableUnroll + (count - units * 4) : count;
  ThresholdMapKernel<F><<<GridFor(work, kThresholdThreads), kThresholdThreads, 0, stream>>>(
      static_cast<const std::uint32_t*>(in), static_cast<std::uint8_t*>(out), units, count, table, f);
  return cudaGetLastError();
}

}  // namespace lowbit::cuda::detail
