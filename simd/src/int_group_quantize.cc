// Run-time dispatch and argument checks of the INT4 / UINT4 group kernels
// (int_group_quantize-inl.h).
#include <cstdint>
#include <string>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "int_group_quantize-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "int_group_quantize-inl.h"

#if HWY_ONCE
#include <vector>

#include "int_group_job.h"
#include "lowbit/formats/block/int_quant.h"
#include "lowbit/simd/simd.h"

namespace lowbit::simd {
HWY_EXPORT(QuantizeInt4);
HWY_EXPORT(DequantizeInt4);

namespace {

struct Int4TargetKernels {
  std::int64_t target;
  void (*quantize)(const Int4GroupJob&);
  void (*dequantize)(const Int4GroupDequantizeJob&);
};

#define LOWBIT_SIMD_INT4_ROW(ns, bit) {bit, &ns::QuantizeInt4, &ns::DequantizeInt4},
constexpr Int4TargetKernels kInt4Targets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    LOWBIT_SIMD_INT4_ROW(N_AVX3_DL, HWY_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    LOWBIT_SIMD_INT4_ROW(N_AVX3, HWY_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    LOWBIT_SIMD_INT4_ROW(N_AVX2, HWY_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    LOWBIT_SIMD_INT4_ROW(N_SSE4, HWY_SSE4)
#endif
};
#undef LOWBIT_SIMD_INT4_ROW

void DynamicQuantize(const Int4GroupJob& job) { HWY_DYNAMIC_DISPATCH(QuantizeInt4)(job); }
void DynamicDequantize(const Int4GroupDequantizeJob& job) {
  HWY_DYNAMIC_DISPATCH(DequantizeInt4)(job);
}
constexpr Int4TargetKernels kDynamic{0, &DynamicQuantize, &DynamicDequantize};

const Int4TargetKernels* FindTarget(std::int64_t target) {
  if (target == 0) return &kDynamic;
  for (const Int4TargetKernels& row : kInt4Targets) {
    if (row.target == target && TargetAvailable(target)) return &row;
  }
  return nullptr;
}

// Checks shared by both directions; on success *group is the number of
// consecutive elements of the flattened matrix that share one parameter set.
registry::Status CheckInt4(std::int64_t target, const block::IntQuantRecipe& recipe,
                           const block::QuantLayout& layout, std::size_t rows, std::size_t cols,
                           std::size_t* group) {
  if (FindTarget(target) == nullptr) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in or not supported here");
  }
  if (!SupportsInt4Groups(recipe, layout)) {
    return registry::Status::Error(std::string("simd: ") + recipe.element->name + ":" +
                                   recipe.name + " with this layout has no INT4 group kernel");
  }
  block::GroupGrid grid;
  const block::QuantStatus st = block::MakeGroupGrid(layout, static_cast<long>(rows),
                                                     static_cast<long>(cols), &grid);
  if (st != block::QuantStatus::kOk) {
    return registry::Status::Error(std::string("simd: ") + block::QuantStatusText(st));
  }
  *group = static_cast<std::size_t>(grid.group_rows * grid.group_cols);
  return registry::Status::Ok();
}

}  // namespace

bool SupportsInt4Groups(const block::IntQuantRecipe& recipe, const block::QuantLayout& layout) {
  const bool int4 = recipe.element->total_bits == 4 && recipe.element->kind == FormatKind::kInteger;
  const bool rounding = recipe.rounding == RoundingMode::kNearestEven ||
                        recipe.rounding == RoundingMode::kNearestAway;
  // A 2-D block taller than one row is not contiguous in the flattened array.
  const bool contiguous = layout.granularity != block::Granularity::kBlock2d ||
                          layout.block_rows == 1;
  return int4 && rounding && contiguous && recipe.scheme != block::QuantScheme::kTeFp8;
}

registry::Status QuantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                    const block::QuantLayout& layout, const float* x,
                                    std::size_t rows, std::size_t cols, std::uint8_t* packed,
                                    block::QuantParams* params) {
  std::size_t group = 0;
  const registry::Status s = CheckInt4(target, recipe, layout, rows, cols, &group);
  if (!s.ok) return s;
  if (x == nullptr || packed == nullptr || params == nullptr) {
    return registry::Status::Error("simd: null input, packed codes or parameters");
  }
  std::vector<std::uint8_t> scratch(kInt4ScratchCodes);
  FindTarget(target)->quantize(
      Int4GroupJob{&recipe, x, rows * cols, group, packed, params, scratch.data()});
  return registry::Status::Ok();
}

registry::Status DequantizeInt4Groups(std::int64_t target, const block::IntQuantRecipe& recipe,
                                      const block::QuantLayout& layout,
                                      const std::uint8_t* packed, std::size_t rows,
                                      std::size_t cols, const block::QuantParams* params,
                                      float* out) {
  std::size_t group = 0;
  const registry::Status s = CheckInt4(target, recipe, layout, rows, cols, &group);
  if (!s.ok) return s;
  if (packed == nullptr || params == nullptr || out == nullptr) {
    return registry::Status::Error("simd: null packed codes, parameters or output");
  }
  FindTarget(target)->dequantize(
      Int4GroupDequantizeJob{&recipe, packed, rows * cols, group, params, out});
  return registry::Status::Ok();
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
