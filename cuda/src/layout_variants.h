// Benchmark-only entry points: the public array calls with an explicit
// kernel layout (the recipe calls take theirs in tensor_call.h TensorCall),
// so that bench/cuda/bench_cuda.cu can time the layout a change replaced
// beside the current one in the same run (bench/RESULTS-archive-2026.md
// "CUDA", "How these numbers were taken": before and after in the same run),
// and the GPU tests can check every variant against the model. Nothing
// process-wide picks a layout: each call names its own (docs/design.md
// "Inline PTX lives in one file": layout policies that the benchmark
// chooses). Internal to lowbit::cuda (not installed); the public calls are
// these with LayoutVariant::kCurrent.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/status.h"

namespace lowbit::cuda {

// Which layout policy (layout.cuh) the kernels of one call take.
enum class LayoutVariant : std::uint8_t {
  kCurrent,         // the layouts the last measurement chose (bench/RESULTS-archive-2026.md "CUDA")
  kReplaced,        // the layouts those replaced: the "before: " rows
  kStreamingHints,  // the current layouts with ld.global.nc.L1::no_allocate / st.global.cs
};
inline constexpr LayoutVariant kAllLayoutVariants[] = {LayoutVariant::kCurrent, LayoutVariant::kReplaced,
                                                       LayoutVariant::kStreamingHints};
// "current", "replaced", "hints".
const char* LayoutVariantName(LayoutVariant variant);

Status Convert(const ConvertRequest& request, LayoutVariant variant);

}  // namespace lowbit::cuda
