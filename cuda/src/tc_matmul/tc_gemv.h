// The tensor-core GEMV for NVFP4 / MXFP4 / MXFP8 / FP8 per-channel weights times BF16 activations and
// UINT4 weights (GPTQ / AWQ, FP16 or BF16 scales) times activations of the
// scale's type, M = 1..16 (tc_gemv.cu; the per-lane steps and the schedule it declares are
// in tc_gemv_lanes.h). Registered as the "cuda-tc" GEMV rows
// (register_tc_gemv.cc), host or device memory; the weights are packed
// by tc_gemv_pack.h (host) or tc_gemv_pack_device.h (device).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/weights.h"

namespace lowbit::registry {
class Registry;
}

namespace lowbit::cuda::tc_gemv {

// The registry rows (register_tc_gemv.cc): backend "cuda-tc", GEMV, the
// weights of every codec (tc_gemv_lanes.h TileCodec), each declaring ScheduleOf.
void RegisterCudaTcGemv(registry::Registry& registry);

// What packed weights are, apart from their bytes: the host packer, the
// device packer and the kernel's view share it (tc_gemv_pack.h
// PackedShapeOf computes it from W).
struct PackedShape {
  matmul::WeightFormat format = matmul::WeightFormat::kNvfp4;
  matmul::ScaleType scale_type = matmul::ScaleType::kUe4m3;
  int block = 16;
  std::int64_t n = 0, k = 0, batch = 1;
  std::int64_t row_tiles = 0, k_tiles = 0;
  bool operator==(const PackedShape&) const = default;
};

// Device copies of PackedWeights' buffers (tc_gemv_pack.h) and their shape.
struct DeviceWeights : PackedShape {
  const std::uint8_t* codes = nullptr;   // 16-byte aligned
  const std::uint8_t* scales = nullptr;  // 16-byte aligned
  const float* column_scales = nullptr;
  const std::uint8_t* plain_tiles = nullptr;  // PackedWeights::plain_tiles
};

// Split-K parts up to this many may run as one thread-block cluster and add
// their parts through distributed shared memory (tc_gemv.cu
// FinishPartsInCluster). Eight is the portable cluster size (CUDA C++
// Programming Guide, "Thread Block Clusters"), but on an H100 clusters of 7
// and 8 made 8192 x 8192 and 7168 x 16384 (M = 1) 2-4 us slower than the
// workspace (fewer clusters of 8 fit at once than 8192 x 8192 has), while
// clusters of 2 made the M = 16 shapes split in two 14-26 % faster
// (bench/RESULTS.md, "Tensor-core GEMV"). More parts go through the workspace.
// A build allowing clusters of up to 9 parts (past 8 with the non-portable
// cluster size an H100 allows) measured no faster at any shape, the M = 16
// shapes split in 8 and 9 among them
// (bench/RESULTS.md, "Measuring builds of the tensor-core GEMV").
inline constexpr int kMaxClusterParts = 4;
static_assert(kMaxClusterParts >= 2 && kMaxClusterParts <= 8, "a portable cluster holds at most 8 blocks");

// FP32-sized workspace elements RunTcGemv needs for `split_k` parts: 0 for
// one part; for more, one counter per batch entry and 128 output channels,
// then the parts. The counters must be zero before the first call
// (cudaMemset once after allocating); every call leaves them zero, so a
// workspace sized for the largest M serves calls of any M. Calls that
// share a workspace must not run at the same time. (Up to kMaxClusterParts parts
// add in a thread-block cluster when the clusters fit the GPU at once, and
// the workspace is then not touched; it is required all the same, so that
// a call's needs do not depend on the device.)
std::int64_t WorkspaceFloats(const DeviceWeights& w, std::int64_t m, int split_k);

// How RunTcGemv launches; neither choice changes an output bit.
struct LaunchOptions {
  // True only when no kernel that may still be running on `stream` when
  // RunTcGemv is called writes the weights (codes, scales, column scales,
  // plain-tile flags). The kernel may then start before the previous
  // kernel on the stream has finished (programmatic dependent launch) and
  // read its weights early; it reads x and writes y and the workspace only
  // after that kernel has finished and its memory is visible. Weights
  // packed by a kernel on the same stream just before need false.
  bool overlap_previous_kernel = false;
  // Where 2..kMaxClusterParts split-K parts add. kAuto: in a thread-block
  // cluster when every cluster of the grid can be resident at once
  // (cudaOccupancyMaxActiveClusters), else through the workspace, which
  // a second wave of clusters would be slower than. The others force a path
  // (the GPU tests check both).
  enum class PartSums { kAuto, kCluster, kWorkspace };
  PartSums part_sums = PartSums::kAuto;
};

// y = x * W^T on `stream`: x BF16 codes [batch][m][k] on the device, y
// [batch][m][n] of the schedule's output type (FP32, BF16 or FP16 codes).
// `schedule` must be ScheduleOf(w.format, w.scale_type, w.n, w.k, w.batch, output) with any split_k
// in 1..64 (each split is its own declared order). Returns nullptr, or one
// line naming what is wrong (nothing is launched then).
const char* RunTcGemv(const DeviceWeights& w, const std::uint16_t* x, std::int64_t m,
                      const matmul::AccumulationSchedule& schedule, void* y, float* workspace,
                      std::int64_t workspace_floats, cudaStream_t stream, const LaunchOptions& options = {});

// For the GPU test of the decode: out[s * 128 + i] = the BF16 operand code
// the kernel's decode (the device's BF16 multiplies) gives for E2M1 code
// i % 16 placed (CodeBitsInWord) in pair (i / 16) % 4, half i / 64 of a
// word, times scale code s of `type`, for s < 256; out holds 256 * 128 words
// on the device. `plain`: the plain-scale path (PlainScaleOperands, and
// DecodePairFolded for E8M0), whose entries for bytes that are not plain
// (ScaleIsPlain) are meaningless; else the table path (DecodePair).
// Launches on the default stream.
cudaError_t DecodeEveryPairOnDevice(matmul::ScaleType type, bool plain, std::uint32_t* out);

// For the GPU test of the E4M3 decode: out[s * 256 + c] = the BF16 operand
// code the kernel's E4M3 fragment (MXFP8's, on the plain path when `plain`,
// else the table's) gives for E4M3 code c with E8M0 scale code s, the code
// placed at E4m3DecodePlaceOf(c, s); out holds 2^16 words on the device.
// Entries of the plain path for scales that are not plain
// (tc_gemv_lanes.h ScaleIsPlain) are meaningless.
struct E4m3DecodePlace {
  int chunk, row_half, slot, element;
};
constexpr E4m3DecodePlace E4m3DecodePlaceOf(int code, int scale) {
  return {(code / 8 + scale) % 8, (code + scale) % 2, (code / 2 + scale) % 2, (code / 4 + scale) % 2};
}
cudaError_t DecodeEveryE4m3OnDevice(bool plain, std::uint32_t* out);

// For the GPU test of the UINT4 decode: out[(s * kUint4DecodeZeros + i) *
// 16 + q] = the operand code the kernel's DecodeUint4Pair gives for code q
// against zero point Uint4DecodeZero(i) and scale code s (FP16 when
// `fp16`, else BF16), for every s < 2^16 (out holds 2^16 * 3 * 16 words on
// the device); code q sits in pair (q + z) % 4, half (q / 4 + z) % 2.
inline constexpr int kUint4DecodeZeros = 3;
constexpr int Uint4DecodeZero(int i) { return i == 0 ? 0 : i == 1 ? 6 : 15; }  // every offset -15..15
cudaError_t DecodeEveryUint4OnDevice(bool fp16, std::uint32_t* out);

}  // namespace lowbit::cuda::tc_gemv
