// GPU kernels of the GEMM weight layouts and the swizzled block scales
// (weight_layouts.h): each thread owns one packed unit (a word, a byte, a
// swizzled scale byte) and finds the codes it holds with the model's
// host+device index functions, so the device and the model share one
// statement of each layout (docs/layouts.md).
#include <cstdint>

#include "checks.h"
#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"
#include "weight_layouts.h"

namespace lowbit::cuda {
namespace {

constexpr int kThreads = 256;

// The code (row, col) that nibble `nibble` of packed unit `unit` holds.
__device__ block::CodePosition NibbleSource(const WeightLayoutJob& job, std::int64_t unit, int nibble) {
  switch (job.layout) {
    case WeightLayout::kTinygemm: return block::TinygemmInt4packSource(unit, nibble, job.cols, job.param);
    case WeightLayout::kTorchCpu:
      return block::TorchCpuInt4packSource(unit, nibble, job.rows, job.cols,
                                           static_cast<block::TorchCpuInt4packIsa>(job.param));
    default: return block::MarlinSource(unit, nibble, job.cols);
  }
}

// Word and byte layouts of 4-bit codes: nibbles_per_unit 8 (uint32) or 2
// (uint8). Padding codes (row >= rows) pack as 0 and are dropped on unpack.
__device__ void NibbleLayoutUnit(const WeightLayoutJob& job, int nibbles_per_unit, std::int64_t unit) {
  if (job.pack) {
    std::uint32_t value = 0;
    for (int i = 0; i < nibbles_per_unit; ++i) {
      const block::CodePosition p = NibbleSource(job, unit, i);
      const std::uint32_t code = p.row < job.rows ? (job.codes[p.row * job.cols + p.col] & 0xFu) : 0u;
      value |= code << (4 * i);
    }
    if (nibbles_per_unit == 8) {
      static_cast<std::uint32_t*>(job.packed_out)[unit] = value;
    } else {
      static_cast<std::uint8_t*>(job.packed_out)[unit] = static_cast<std::uint8_t>(value);
    }
    return;
  }
  const std::uint32_t value = nibbles_per_unit == 8 ? static_cast<const std::uint32_t*>(job.packed)[unit]
                                                    : static_cast<const std::uint8_t*>(job.packed)[unit];
  for (int i = 0; i < nibbles_per_unit; ++i) {
    const block::CodePosition p = NibbleSource(job, unit, i);
    if (p.row < job.rows) job.codes_out[p.row * job.cols + p.col] = static_cast<std::uint8_t>((value >> (4 * i)) & 0xF);
  }
}

// Grid-stride loops: a packed size past the grid's 2^31 - 1 blocks still
// runs whole.
__global__ void NibbleLayoutKernel(WeightLayoutJob job, int nibbles_per_unit) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t unit = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; unit < job.packed_units;
       unit += stride) {
    NibbleLayoutUnit(job, nibbles_per_unit, unit);
  }
}

// swizzled_scales.h: one thread per swizzled byte.
__device__ void SwizzleByte(const WeightLayoutJob& job, std::int64_t offset) {
  const block::ScalePosition p = block::SwizzledScaleSource(offset, job.cols);
  const bool real = p.row < job.rows && p.col < job.cols;
  if (job.pack) {
    static_cast<std::uint8_t*>(job.packed_out)[offset] = real ? job.codes[p.row * job.cols + p.col] : std::uint8_t{0};
  } else if (real) {
    job.codes_out[p.row * job.cols + p.col] = static_cast<const std::uint8_t*>(job.packed)[offset];
  }
}

__global__ void SwizzleKernel(WeightLayoutJob job) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       offset < job.packed_units; offset += stride) {
    SwizzleByte(job, offset);
  }
}

}  // namespace

Status LaunchWeightLayout(const WeightLayoutJob& job, cudaStream_t stream) {
  if (job.packed_units == 0) return Status::Ok();
  constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
  const std::int64_t wanted = (job.packed_units + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(wanted < kMaxBlocks ? wanted : kMaxBlocks);
  if (job.layout == WeightLayout::kSwizzledScales) {
    SwizzleKernel<<<blocks, kThreads, 0, stream>>>(job);
  } else {
    NibbleLayoutKernel<<<blocks, kThreads, 0, stream>>>(job, job.layout == WeightLayout::kTorchCpu ? 2 : 8);
  }
  return detail::LastLaunchStatus("weight layout");
}

}  // namespace lowbit::cuda
