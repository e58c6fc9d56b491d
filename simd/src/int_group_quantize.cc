// Run-time dispatch and argument checks of the scaled-group kernels
// (int_group_quantize-inl.h): every recipe of int_quant_recipe.h, one code
// per byte, and INT4 / UINT4 also packed two per byte.
#include <cstdint>
#include <string>

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
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
HWY_EXPORT(QuantizeGroups);
HWY_EXPORT(DequantizeGroups);

namespace {

struct GroupTargetKernels {
  std::int64_t target;
  void (*quantize)(const IntGroupJob&);
  void (*dequantize)(const IntGroupDequantizeJob&);
};

#define LOWBIT_SIMD_GROUP_ROW(ns, bit) {bit, &ns::QuantizeGroups, &ns::DequantizeGroups},
constexpr GroupTargetKernels kGroupTargets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    LOWBIT_SIMD_GROUP_ROW(N_AVX3_DL, HWY_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    LOWBIT_SIMD_GROUP_ROW(N_AVX3, HWY_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    LOWBIT_SIMD_GROUP_ROW(N_AVX2, HWY_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    LOWBIT_SIMD_GROUP_ROW(N_SSE4, HWY_SSE4)
#endif
};
#undef LOWBIT_SIMD_GROUP_ROW

void DynamicQuantize(const IntGroupJob& job) { HWY_DYNAMIC_DISPATCH(QuantizeGroups)(job); }
void DynamicDequantize(const IntGroupDequantizeJob& job) {
  HWY_DYNAMIC_DISPATCH(DequantizeGroups)(job);
}
constexpr GroupTargetKernels kDynamic{0, &DynamicQuantize, &DynamicDequantize};

const GroupTargetKernels* FindTarget(std::int64_t target) {
  if (target == 0) return &kDynamic;
  for (const GroupTargetKernels& row : kGroupTargets) {
    if (row.target == target && TargetAvailable(target)) return &row;
  }
  return nullptr;
}

bool IsTeFp8(const block::IntQuantRecipe& recipe) {
  return recipe.scheme == block::QuantScheme::kTeFp8;
}

// FP32 bits of the model's DecodeToF32 of every E4M3 / E5M2 byte, built once
// (int_quant.h DequantizeElement decodes with default options).
const std::int32_t* Fp8Table(const FormatSpec& element) {
  struct Tables {
    std::int32_t e4m3[kDecodeTableSize];
    std::int32_t e5m2[kDecodeTableSize];
    Tables() {
      for (int c = 0; c < kDecodeTableSize; ++c) {
        e4m3[c] = static_cast<std::int32_t>(block::F32Bits(DecodeToF32(kE4m3, static_cast<std::uint64_t>(c))));
        e5m2[c] = static_cast<std::int32_t>(block::F32Bits(DecodeToF32(kE5m2, static_cast<std::uint64_t>(c))));
      }
    }
  };
  static const Tables* const kTables = new Tables();
  return element.exponent_bits == 5 ? kTables->e5m2 : kTables->e4m3;
}

// Checks shared by both directions; on success *grid is the layout's grid.
registry::Status CheckGroups(std::int64_t target, const block::IntQuantRecipe& recipe,
                             const block::QuantLayout& layout, std::size_t rows, std::size_t cols,
                             bool packed, block::GroupGrid* grid) {
  if (FindTarget(target) == nullptr) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in or not supported here");
  }
  const bool supported = packed ? SupportsInt4Groups(recipe, layout) : SupportsScaledGroups(recipe, layout);
  if (!supported) {
    return registry::Status::Error(std::string("simd: ") + recipe.element->name + ":" +
                                   recipe.name + " with this layout has no " +
                                   (packed ? "packed INT4 " : "") + "group kernel");
  }
  const block::QuantStatus st = block::MakeGroupGrid(layout, static_cast<long>(rows),
                                                     static_cast<long>(cols), grid);
  if (st != block::QuantStatus::kOk) {
    return registry::Status::Error(std::string("simd: ") + block::QuantStatusText(st));
  }
  return registry::Status::Ok();
}

registry::Status Quantize(std::int64_t target, const block::IntQuantRecipe& recipe,
                          const block::QuantLayout& layout, const float* x, std::size_t rows,
                          std::size_t cols, bool packed, std::uint8_t* codes,
                          block::QuantParams* params) {
  block::GroupGrid grid;
  const registry::Status s = CheckGroups(target, recipe, layout, rows, cols, packed, &grid);
  if (!s.ok) return s;
  if (x == nullptr || codes == nullptr || params == nullptr) {
    return registry::Status::Error("simd: null input, codes or parameters");
  }
  std::vector<std::uint8_t> scratch(packed ? kIntGroupScratchCodes : 0);
  EncodePlan plan;
  if (IsTeFp8(recipe)) {
    plan = MakeEncodePlan(*recipe.element, block::TeFp8ElementOptions());
    // E4M3 / E5M2 have more than kMaxThresholds magnitudes: a float plan.
    if (plan.kind != PlanKind::kFloat) return registry::Status::Error("simd: unexpected FP8 plan");
  }
  FindTarget(target)->quantize(IntGroupJob{&recipe, &plan, x, cols, grid, packed, codes, params,
                                           scratch.data()});
  return registry::Status::Ok();
}

registry::Status Dequantize(std::int64_t target, const block::IntQuantRecipe& recipe,
                            const block::QuantLayout& layout, const std::uint8_t* codes,
                            std::size_t rows, std::size_t cols, bool packed,
                            const block::QuantParams* params, float* out) {
  block::GroupGrid grid;
  const registry::Status s = CheckGroups(target, recipe, layout, rows, cols, packed, &grid);
  if (!s.ok) return s;
  if (codes == nullptr || params == nullptr || out == nullptr) {
    return registry::Status::Error("simd: null codes, parameters or output");
  }
  const std::int32_t* table = IsTeFp8(recipe) ? Fp8Table(*recipe.element) : nullptr;
  FindTarget(target)->dequantize(
      IntGroupDequantizeJob{&recipe, table, codes, cols, grid, packed, params, out});
  return registry::Status::Ok();
}

}  // namespace

bool SupportsScaledGroups(const block::IntQuantRecipe& recipe, const block::QuantLayout& layout) {
  (void)layout;  // every layout of int_quant_layout.h, 2-D blocks included
  const bool rounding = recipe.rounding == RoundingMode::kNearestEven ||
                        recipe.rounding == RoundingMode::kNearestAway;
  const bool element = IsTeFp8(recipe) ? recipe.element->kind == FormatKind::kFloat &&
                                             recipe.element->total_bits == 8
                                       : recipe.element->kind == FormatKind::kInteger &&
                                             recipe.element->total_bits <= 8;
  return rounding && element;
}

bool SupportsInt4Groups(const block::IntQuantRecipe& recipe, const block::QuantLayout& layout) {
  return recipe.element->kind == FormatKind::kInteger && recipe.element->total_bits == 4 &&
         SupportsScaledGroups(recipe, layout);
}

registry::Status QuantizeGroups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                const block::QuantLayout& layout, const float* x,
                                std::size_t rows, std::size_t cols, std::uint8_t* codes,
                                block::QuantParams* params) {
  return Quantize(target, recipe, layout, x, rows, cols, false, codes, params);
}

registry::Status DequantizeGroups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                  const block::QuantLayout& layout, const std::uint8_t* codes,
                                  std::size_t rows, std::size_t cols,
                                  const block::QuantParams* params, float* out) {
  return Dequantize(target, recipe, layout, codes, rows, cols, false, params, out);
}

registry::Status QuantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                    const block::QuantLayout& layout, const float* x,
                                    std::size_t rows, std::size_t cols, std::uint8_t* packed,
                                    block::QuantParams* params) {
  return Quantize(target, recipe, layout, x, rows, cols, true, packed, params);
}

registry::Status DequantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                      const block::QuantLayout& layout,
                                      const std::uint8_t* packed, std::size_t rows,
                                      std::size_t cols, const block::QuantParams* params,
                                      float* out) {
  return Dequantize(target, recipe, layout, packed, rows, cols, true, params, out);
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
