// The tensor-core GEMV's weight packing on the device: lowbit-packed NVFP4 /
// MXFP4 weights already in device memory (a torch CUDA tensor, a registry
// row's run_on_device) packed into the tiles tc_gemv.h's DeviceWeights points
// at, by a kernel that calls the same per-piece functions as the host packer
// (tc_gemv_pack.h PackedLaneCodes, PackedGroupScales, PlainTileByte,
// PackedColumnScale), so both write the same bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "../stream_scratch.h"
#include "lowbit/formats/matmul/weights.h"
#include "tc_gemv.h"
#include "tc_gemv_pack.h"

namespace lowbit::cuda::tc_gemv {

// The four device buffers the packer fills, each with the elements it holds
// (bytes, or floats for the column scales), so that a short buffer is
// refused rather than overrun. The sizes the packer needs are
// PackedSizesOf(w.n, w.k, w.batch, PackedCodecOf(w)) (tc_gemv_pack.h); longer
// buffers are accepted and their tails left alone. codes and scales must be
// 16-byte aligned (the GEMV's 16-byte loads).
struct DevicePackTarget {
  std::uint8_t* codes = nullptr;
  std::int64_t code_bytes = 0;
  std::uint8_t* scales = nullptr;
  std::int64_t scale_bytes = 0;
  float* column_scales = nullptr;
  std::int64_t column_scale_count = 0;
  std::uint8_t* plain_tiles = nullptr;
  std::int64_t plain_tile_count = 0;
};

// Packs W (its codes, scales and NVFP4 tensor scale in device memory) into
// `out` on `stream`, asynchronously: every byte of PackedSizesOf's extent of
// the four buffers is written (padding included), the same bytes as
// PackForTcGemv(w) writes on the host. Returns nullptr when the kernel was
// queued, else one line naming the problem (nothing is launched then),
// valid until the next call on the same thread.
//
// The checks are the host packer's (tc_gemv_pack.h PackError:
// ValidateWeights, then PackProblem) with the same lines: neither reads a
// buffer, so none is host-only. Added here, because the device reads the
// buffers: the output buffers' sizes and alignment, the packed size fitting
// 64 bits, and each pointer being memory the device can read (a plain host
// pointer is refused; cudaPointerGetAttributes). What neither packer checks
// is the content (every byte of codes and scales is a valid code, NaN scales
// included).
const char* PackForTcGemvOnDevice(const matmul::WeightView& w_on_device, const DevicePackTarget& out,
                                  cudaStream_t stream);

// Whether the device can read `p` (device, managed or page-locked host
// memory); false for plain host memory and on a runtime error.
bool DeviceCanRead(const void* p);

// The packed weights of one W on the device, in lowbit's stream-ordered
// scratch pool (stream_scratch.h): allocated and packed on `stream`, freed
// in stream order when the owner goes out of scope, so kernels queued on
// `stream` before then may read them.
class DeviceTcGemvWeights {
 public:
  explicit DeviceTcGemvWeights(cudaStream_t stream)
      : stream_(stream), codes_(stream), scales_(stream), column_scales_(stream), plain_tiles_(stream) {}
  // Checks W as PackForTcGemvOnDevice does, allocates the buffers and
  // queues the same kernel; once per object. nullptr, or one line as
  // PackForTcGemvOnDevice gives.
  const char* Pack(const matmul::WeightView& w_on_device);
  // The view RunTcGemv takes; valid after Pack returned nullptr.
  const DeviceWeights& weights() const { return weights_; }

 private:
  cudaStream_t stream_;
  detail::StreamScratch codes_, scales_, column_scales_, plain_tiles_;
  DeviceWeights weights_;
};

}  // namespace lowbit::cuda::tc_gemv
