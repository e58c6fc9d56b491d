// Benchmark-only entry points: the public array and recipe calls with an
// explicit kernel layout, so that bench/cuda/bench_cuda.cu can time the
// layout a change replaced beside the current one in the same run
// (bench/RESULTS-archive-2026.md "CUDA", "How these numbers were taken": before and after in the same run), and the GPU tests can
// check every variant against the model. Nothing process-wide picks a layout:
// each call names its own (docs/design.md "Inline PTX lives in one file":
// layout policies that the benchmark chooses). Internal to lowbit::cuda (not
// installed); the public calls are these with LayoutVariant::kCurrent.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/fp8_scaled.h"
#include "lowbit/cuda/mx.h"
#include "lowbit/cuda/nvfp4.h"
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
Status QuantizeFp8PerTensorStatic(const Fp8PerTensorArgs& args, LayoutVariant variant);
Status QuantizeFp8PerTensorDynamic(const Fp8PerTensorArgs& args, LayoutVariant variant);
Status QuantizeFp8PerToken(const Fp8PerTokenArgs& args, LayoutVariant variant);
Status QuantizeNvfp4(const Nvfp4Args& args, LayoutVariant variant);
Status DequantizeNvfp4ToBf16(const std::uint8_t* packed_codes, const std::uint8_t* scales,
                             const float* decode_scale, std::size_t count, std::uint16_t* out,
                             cudaStream_t stream, LayoutVariant variant);
Status QuantizeMx(const MxArgs& args, LayoutVariant variant);

}  // namespace lowbit::cuda
