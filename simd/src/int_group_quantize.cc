// Run-time dispatch (target_dispatch.h) and argument checks of the
// scaled-group kernels (int_group_quantize-inl.h): every scaled recipe
// simd.h Runs takes, one code per byte, and INT4 / UINT4 also packed two
// per byte.
#include <cstdint>
#include <string>

// No FMA contraction in this file: GPTQ / AWQ's recomputed integer
// (recipe/steps.h RepackedInteger) adds two separately rounded FP32
// products, and GCC contracts a product feeding an add into an FMA in the
// AVX2 / AVX-512 target code (-ffp-contract=fast is its C++ default; the
// model's scalar rows are built without FMA, the CUDA build with
// --fmad=false).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma clang fp contract(off)
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "int_group_quantize-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "int_group_quantize-inl.h"

#if HWY_ONCE
#include <vector>

#include "decode_tables.h"
#include "encode_plan.h"
#include "int_group_job.h"
#include "lowbit/formats/block/int_quant_layout.h"
#include "lowbit/formats/fp32_bits.h"
#include "lowbit/simd/block_scale.h"
#include "lowbit/simd/simd.h"
#include "entry_checks.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(QuantizeGroups);
HWY_EXPORT(DequantizeGroups);
HWY_EXPORT(IntGroupScalesArray);
HWY_EXPORT(MinMaxGroupScalesArray);

namespace {

// FP32 bits of the model's decode of every code of the recipe's FP8 element
// (recipe/steps.h DecodeElement decodes with default options): that
// format's shared decode table (decode_tables.h), so any 8-bit float the
// recipe names gets its own table; null for an element not in the format list.
const std::int32_t* Fp8Table(const FormatSpec& element) {
  FormatId id{};
  if (!FindFormat(element.name, &id)) return nullptr;
  return DecodeTable(id, /*to_bf16=*/false, DecodeOptions{});
}

// What the group kernels implement, read off the recipe: half-even or
// half-away rounding; an 8-bit float element (TE FP8, vLLM FP8) or an
// integer element of at most 8 bits; packed codes only for 4-bit integers,
// low nibble first.
bool KernelApplies(const recipe::Recipe& r, bool packed) {
  const bool rounding = r.element_encode.rounding == RoundingMode::kNearestEven ||
                        r.element_encode.rounding == RoundingMode::kNearestAway;
  const bool element = r.element.IsFloat() ? r.element.kind == FormatKind::kFloat && r.element.total_bits == 8
                                           : r.element.kind == FormatKind::kInteger && r.element.total_bits <= 8;
  if (r.family() != recipe::Family::kScaled || !rounding || !element) return false;
  return !packed || (!r.element.IsFloat() && r.element.total_bits == 4);
}

// Checks shared by both directions; on success *grid is the layout's grid.
registry::Status CheckGroups(const recipe::Recipe& recipe, const block::QuantLayout& layout,
                             std::size_t rows, std::size_t cols, bool packed,
                             block::GroupGrid* grid) {
  if (!KernelApplies(recipe, packed)) {
    return registry::Status::Error(std::string("simd: ") + recipe.name + ":" + recipe.profile +
                                   " with this layout has no " + (packed ? "packed INT4 " : "") + "group kernel");
  }
  // rows x cols FP32 values must fit the model's 64-bit indices and size_t.
  std::size_t elements = 0;
  if (registry::Status s = detail::CheckedMatrix(rows, cols, sizeof(float), &elements); !s.ok) return s;
  if (elements == 0) return registry::Status::Ok();  // empty: the callers write nothing
  const block::QuantStatus st = block::MakeGroupGrid(layout, static_cast<long>(rows),
                                                     static_cast<long>(cols), grid);
  if (st != block::QuantStatus::kOk) {
    return registry::Status::Error(std::string("simd: ") + block::QuantStatusText(st));
  }
  return registry::Status::Ok();
}

registry::Status Quantize(std::int64_t target, const recipe::Recipe& r, const block::QuantLayout& layout,
                          const float* x, std::size_t rows, std::size_t cols, bool packed, std::uint8_t* codes,
                          float* scales, std::int32_t* zero_points) {
  const auto kernel = LOWBIT_SIMD_KERNEL(QuantizeGroups, target);
  if (kernel == nullptr) return detail::TargetError(target);
  block::GroupGrid grid;
  const registry::Status s = CheckGroups(r, layout, rows, cols, packed, &grid);
  if (!s.ok || rows == 0 || cols == 0) return s;  // empty input is ok (docs/bad-input.md)
  if (x == nullptr || codes == nullptr || scales == nullptr) {
    return registry::Status::Error("simd: null input, codes or scales");
  }
  const std::size_t n = rows * cols;  // CheckGroups checked the product
  if (registry::Status o = registry::CheckNoOverlap(
          "simd: QuantizeGroups", {{x, n * sizeof(float), "x"}},
          {{codes, packed ? CeilDiv(n, 2) : n, "codes"},
           {scales, static_cast<std::size_t>(grid.Count()) * sizeof(float), "scales"},
           {zero_points, zero_points != nullptr ? static_cast<std::size_t>(grid.Count()) * sizeof(std::int32_t) : 0,
            "zero points"}});
      !o.ok) {
    return o;
  }
  // Packed codes keep the other nibble of a byte they share
  // (int_group_quantize-inl.h PackCodesAt); the high nibble of an odd
  // count's last byte belongs to no code and is 0, as the model stores it.
  if (packed && n % 2 != 0) codes[n / 2] = 0;
  std::vector<std::uint8_t> scratch(packed ? kIntGroupScratchCodes : 0);
  EncodePlan plan;
  if (r.element.IsFloat()) {
    plan = MakeEncodePlan(r.element, r.element_encode);
    // E4M3 / E5M2 have more than kMaxThresholds magnitudes: a float plan.
    if (plan.kind != PlanKind::kFloat) return registry::Status::Error("simd: unexpected FP8 plan");
  }
  kernel(IntGroupJob{&r, &plan, x, cols, grid, packed, codes, scales, zero_points, scratch.data()});
  return registry::Status::Ok();
}

registry::Status Dequantize(std::int64_t target, const recipe::Recipe& r, const block::QuantLayout& layout,
                            const std::uint8_t* codes, std::size_t rows, std::size_t cols, bool packed,
                            const float* scales, const std::int32_t* zero_points, float* out) {
  const auto kernel = LOWBIT_SIMD_KERNEL(DequantizeGroups, target);
  if (kernel == nullptr) return detail::TargetError(target);
  block::GroupGrid grid;
  const registry::Status s = CheckGroups(r, layout, rows, cols, packed, &grid);
  if (!s.ok || rows == 0 || cols == 0) return s;  // empty input is ok (docs/bad-input.md)
  if (codes == nullptr || scales == nullptr || out == nullptr) {
    return registry::Status::Error("simd: null codes, scales or output");
  }
  const std::size_t n = rows * cols;  // CheckGroups checked the product
  if (registry::Status o = registry::CheckNoOverlap(
          "simd: DequantizeGroups",
          {{codes, packed ? CeilDiv(n, 2) : n, "codes"},
           {scales, static_cast<std::size_t>(grid.Count()) * sizeof(float), "scales"},
           {zero_points, zero_points != nullptr ? static_cast<std::size_t>(grid.Count()) * sizeof(std::int32_t) : 0,
            "zero points"}},
          {{out, n * sizeof(float), "out"}});
      !o.ok) {
    return o;
  }
  const std::int32_t* table = r.element.IsFloat() ? Fp8Table(r.element) : nullptr;
  if (r.element.IsFloat() && table == nullptr) {
    return registry::Status::Error(std::string("simd: no decode table for ") + r.element.name);
  }
  kernel(IntGroupDequantizeJob{&r, table, codes, cols, grid, packed, scales, zero_points, out});
  return registry::Status::Ok();
}

// The recipe's packing as the kernels' flag: two codes per byte, low nibble
// first, or one per byte; false with an error for any other packing.
bool PackedFlag(const recipe::Recipe& r, registry::Status* error) {
  if (r.packing == recipe::Packing::kNibblesHighFirst) {
    *error = registry::Status::Error(std::string("simd: ") + r.name + ":" + r.profile +
                                     " packs high nibble first; the group kernels pack low first");
  }
  return r.packing != recipe::Packing::kOnePerByte;
}

}  // namespace

bool HasVectorIntGroupScale(const recipe::Recipe& r) { return VectorIntScaleRule(r); }

registry::Status IntGroupScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                        const std::uint32_t* amax_bits, std::size_t count,
                                        std::uint32_t* decode_bits, std::uint32_t* factor_bits,
                                        std::int32_t* zero_points) {
  const auto kernel = LOWBIT_SIMD_KERNEL(IntGroupScalesArray, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (!HasVectorIntGroupScale(r)) {
    return registry::Status::Error(std::string("simd: ") + r.name + ":" + r.profile +
                                   " has no vector group scale rule");
  }
  if (count == 0) return registry::Status::Ok();
  if (amax_bits == nullptr || decode_bits == nullptr || factor_bits == nullptr || zero_points == nullptr) {
    return registry::Status::Error("simd: null amax, scales, factors or zero points with count " +
                                   std::to_string(count));
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (amax_bits[i] > kF32ExponentMask) {  // above +Inf: a sign or NaN
      return registry::Status::Error("simd: amax " + std::to_string(i) + " is negative or NaN");
    }
  }
  kernel(IntGroupScaleArrayJob{&r, amax_bits, count, decode_bits, factor_bits, zero_points});
  return registry::Status::Ok();
}

bool HasVectorMinMaxGroupScale(const recipe::Recipe& r) { return VectorMinMaxScaleRule(r); }

registry::Status MinMaxGroupScalesOnTarget(std::int64_t target, const recipe::Recipe& r,
                                           const std::uint32_t* min_bits, const std::uint32_t* max_bits,
                                           std::size_t count, std::uint32_t* decode_bits,
                                           std::uint32_t* factor_bits, std::int32_t* zero_points) {
  const auto kernel = LOWBIT_SIMD_KERNEL(MinMaxGroupScalesArray, target);
  if (kernel == nullptr) return detail::TargetError(target);
  if (!HasVectorMinMaxGroupScale(r)) {
    return registry::Status::Error(std::string("simd: ") + r.name + ":" + r.profile +
                                   " has no vector min / max group scale rule");
  }
  if (count == 0) return registry::Status::Ok();
  if (min_bits == nullptr || max_bits == nullptr || decode_bits == nullptr || factor_bits == nullptr ||
      zero_points == nullptr) {
    return registry::Status::Error("simd: null minima, maxima, scales, factors or zero points with count " +
                                   std::to_string(count));
  }
  for (std::size_t i = 0; i < count; ++i) {
    const float lo = F32FromBits(min_bits[i]);
    const float hi = F32FromBits(max_bits[i]);
    if (!F32IsFinite(min_bits[i]) || !F32IsFinite(max_bits[i]) || hi < lo) {
      return registry::Status::Error("simd: group " + std::to_string(i) +
                                     " has a min or max that is not finite, or a min above its max");
    }
  }
  kernel(MinMaxGroupScaleArrayJob{&r, min_bits, max_bits, count, decode_bits, factor_bits, zero_points});
  return registry::Status::Ok();
}

registry::Status QuantizeRecipeGroups(std::int64_t target, const recipe::Recipe& recipe,
                                      const block::QuantLayout& layout, const float* x, std::size_t rows,
                                      std::size_t cols, std::uint8_t* codes, float* scales,
                                      std::int32_t* zero_points) {
  registry::Status error;
  const bool packed = PackedFlag(recipe, &error);
  if (!error.ok) return error;
  return Quantize(target, recipe, layout, x, rows, cols, packed, codes, scales, zero_points);
}

registry::Status DequantizeRecipeGroups(std::int64_t target, const recipe::Recipe& recipe,
                                        const block::QuantLayout& layout, const std::uint8_t* codes,
                                        std::size_t rows, std::size_t cols, const float* scales,
                                        const std::int32_t* zero_points, float* out) {
  registry::Status error;
  const bool packed = PackedFlag(recipe, &error);
  if (!error.ok) return error;
  return Dequantize(target, recipe, layout, codes, rows, cols, packed, scales, zero_points, out);
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
