// The model recipe kernels of model_recipe.h: the model's whole-tensor
// steps (formats/include/lowbit/formats/recipe/tensor.h, steps.h) compiled
// for the device over a recipe passed by value.
#include "model_recipe.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "checks.h"
#include "launch.cuh"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::cuda::detail {
namespace {

constexpr int kModelThreads = 256;
// Chunks of a per-tensor reduction: each accumulated by one thread in
// element order, then combined in order by one thread.
constexpr long kStatsChunks = 4096;

__global__ void ModelChunkStatsKernel(recipe::Recipe r, const float* __restrict__ x, long n, long chunk,
                                      recipe::GroupStats* __restrict__ partial) {
  const long c = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= kStatsChunks) return;
  recipe::GroupStats s = recipe::EmptyStats();
  const long end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
  for (long k = c * chunk; k < end; ++k) s = recipe::Accumulate(r, s, x[k]);
  partial[c] = s;
}

// The tensor's statistics (left-to-right Combine of the chunks) and, for a
// recipe with a tensor-level scale, that scale (recipe::ChooseTensorScale of
// the amax, as TensorScaleOf) into *tensor_scale.
__global__ void ModelTensorStatsKernel(recipe::Recipe r, const recipe::GroupStats* __restrict__ partial,
                                       recipe::GroupStats* __restrict__ stats, recipe::TensorScale* tensor_scale) {
  recipe::GroupStats s = partial[0];
  for (long c = 1; c < kStatsChunks; ++c) s = recipe::Combine(r, s, partial[c]);
  *stats = s;
  if (tensor_scale != nullptr) *tensor_scale = recipe::ChooseTensorScale(r, s.amax);
}

// One thread per group: its statistics (or the tensor's), the model's scale
// choice, stored as the recipe stores it, and kept for the element pass.
__global__ void ModelScalesKernel(recipe::Recipe r, recipe::GroupGrid g, const float* __restrict__ x,
                                  const recipe::GroupStats* tensor_stats, const recipe::TensorScale* tensor_scale,
                                  recipe::QuantizedTensor q, recipe::BlockScale* __restrict__ scales) {
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  const recipe::TensorScale t = tensor_scale != nullptr ? *tensor_scale : recipe::TensorScale{};
  for (long group = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; group < g.Count(); group += stride) {
    recipe::GroupStats stats = recipe::EmptyStats();
    if (tensor_stats != nullptr) {
      stats = *tensor_stats;
    } else {
      recipe::ForEachInGroup(g, group, [&](long k) { stats = recipe::Accumulate(r, stats, x[k]); });
    }
    const recipe::BlockScale s = recipe::ChooseScale(r, stats, t);
    recipe::StoreScale(r, q, group, s);
    scales[group] = s;
  }
}

// One thread per code byte (two elements when packed): the model's element
// step under its group's scale, stored as the model stores it
// (recipe::StoreCode into this thread's byte: element k sits at k - first,
// and first is even, so the nibble is the one StoreCode picks for k); an
// odd last nibble keeps a 0 partner, as QuantizeTensor leaves it.
__global__ void ModelElementsKernel(recipe::Recipe r, recipe::GroupGrid g, const float* __restrict__ x,
                                    const recipe::BlockScale* __restrict__ scales, std::uint8_t* __restrict__ codes) {
  const long n = g.rows * g.cols;
  const long per_byte = r.packing == recipe::Packing::kOnePerByte ? 1 : 2;
  const long bytes = recipe::PackedBytes(r.packing, n);
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  for (long b = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; b < bytes; b += stride) {
    std::uint8_t byte[1] = {0};
    const long first = b * per_byte;
    for (long k = first; k < first + per_byte && k < n; ++k) {
      const long group = recipe::GroupOf(g, k / g.cols, k % g.cols);
      recipe::StoreCode(r.packing, byte, k - first, recipe::EncodeElement(r, scales[group], x[k]));
    }
    codes[b] = byte[0];
  }
}

// One thread per element: the model's dequantize step (recipe::LoadScale,
// LoadCode, DecodeElement, as DequantizeTensor).
__global__ void ModelDequantizeKernel(recipe::Recipe r, recipe::GroupGrid g, recipe::ConstQuantizedTensor q,
                                      float* __restrict__ out) {
  const long n = g.rows * g.cols;
  const recipe::TensorScale t = q.tensor_scale != nullptr ? *q.tensor_scale : recipe::TensorScale{};
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  for (long k = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const recipe::BlockScale s = recipe::LoadScale(r, q, recipe::GroupOf(g, k / g.cols, k % g.cols));
    out[k] = recipe::DecodeElement(r, s, t, recipe::LoadCode(r.packing, q.codes, k));
  }
}

unsigned ModelGrid(long work) { return GridFor(static_cast<std::size_t>(work), kModelThreads); }

// Stream-ordered device scratch, freed on every path (in stream order).
struct StreamScratch {
  void* p = nullptr;
  cudaStream_t stream;
  ~StreamScratch() {
    if (p != nullptr) cudaFreeAsync(p, stream);
  }
};

}  // namespace

Status RunModelRecipe(const recipe::Recipe& r, const recipe::Layout& layout, bool quantize, const float* x,
                      std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q, float* out,
                      cudaStream_t stream) {
  recipe::GroupGrid g;
  const recipe::TensorStatus st =
      recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &g);
  if (st != recipe::TensorStatus::kOk) return Status::Error(std::string("cuda: ") + recipe::TensorStatusText(st));
  if (!quantize) {
    ModelDequantizeKernel<<<ModelGrid(g.rows * g.cols), kModelThreads, 0, stream>>>(r, g, recipe::AsConst(q), out);
    return LastLaunchStatus("cuda model recipe");
  }
  // Scratch: the chunk statistics and the tensor's (per-tensor groups and
  // tensor scales only), then one BlockScale per group.
  const bool tensor_stats = g.Count() == 1 || r.tensor_scale != recipe::TensorScaleRule::kNone;
  const std::size_t stats_bytes = tensor_stats ? (kStatsChunks + 1) * sizeof(recipe::GroupStats) : 0;
  const std::size_t scale_offset = (stats_bytes + 15) / 16 * 16;
  StreamScratch scratch{nullptr, stream};
  if (cudaError_t e = cudaMallocAsync(&scratch.p, scale_offset + g.Count() * sizeof(recipe::BlockScale), stream);
      e != cudaSuccess) {
    return CudaStatus("cuda model recipe", e);
  }
  auto* partial = static_cast<recipe::GroupStats*>(scratch.p);
  auto* scales = reinterpret_cast<recipe::BlockScale*>(static_cast<char*>(scratch.p) + scale_offset);
  const recipe::GroupStats* stats = nullptr;
  if (tensor_stats) {
    const long n = g.rows * g.cols;
    const long chunk = n / kStatsChunks + (n % kStatsChunks != 0 ? 1 : 0);
    ModelChunkStatsKernel<<<(kStatsChunks + kModelThreads - 1) / kModelThreads, kModelThreads, 0, stream>>>(
        r, x, n, chunk, partial);
    ModelTensorStatsKernel<<<1, 1, 0, stream>>>(r, partial, partial + kStatsChunks,
                                                r.tensor_scale != recipe::TensorScaleRule::kNone ? q.tensor_scale
                                                                                                  : nullptr);
    // A per-tensor group takes the tensor's statistics; NVFP4's blocks
    // their own.
    if (g.Count() == 1) stats = partial + kStatsChunks;
  }
  const recipe::TensorScale* t = r.tensor_scale != recipe::TensorScaleRule::kNone ? q.tensor_scale : nullptr;
  ModelScalesKernel<<<ModelGrid(g.Count()), kModelThreads, 0, stream>>>(r, g, x, stats, t, q, scales);
  ModelElementsKernel<<<ModelGrid(recipe::PackedBytes(r.packing, g.rows * g.cols)), kModelThreads, 0, stream>>>(
      r, g, x, scales, q.codes);
  return LastLaunchStatus("cuda model recipe");
}

}  // namespace lowbit::cuda::detail
