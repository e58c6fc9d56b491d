// Temporary device memory from a stream-ordered memory pool of lowbit's own
// (one per device, stream_scratch.cu), freed in stream order when the owner
// goes out of scope, on every return path: the kernels queued before the
// free still see it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace lowbit::cuda::detail {

// The pool of the current device: created on first use with a release
// threshold (kScratchPoolKeepBytes), so that memory freed by one call is
// still mapped for the next one after a synchronization. The default pool
// releases everything at each synchronization (release threshold 0, CUDA
// Runtime API, cudaMemPoolAttrReleaseThreshold), and re-mapping it cost the
// table maps of table_map.cuh tens of microseconds a call on the H200
// (bench/RESULTS-archive-2026.md "GPU roofline"). lowbit's own pool leaves the
// application's default pool as it set it.
cudaError_t ScratchPool(cudaMemPool_t* pool);

// Bytes the pool keeps mapped between calls: more than any table (256 KB)
// and the scales of a 256 MB tensor in groups of 32 (model_recipe.cu).
inline constexpr unsigned long long kScratchPoolKeepBytes = 64ull << 20;

class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  ~StreamScratch() {
    if (p_ != nullptr) cudaFreeAsync(p_, stream_);
  }
  // Allocates `bytes` (once per object); the runtime's error otherwise.
  cudaError_t Allocate(std::size_t bytes) {
    cudaMemPool_t pool;
    if (cudaError_t e = ScratchPool(&pool); e != cudaSuccess) return e;
    return cudaMallocFromPoolAsync(&p_, bytes, pool, stream_);
  }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace lowbit::cuda::detail
