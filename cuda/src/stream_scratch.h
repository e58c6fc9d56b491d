// Temporary device memory from the stream-ordered allocator
// (cudaMallocAsync), freed in stream order when the owner goes out of scope,
// on every return path: the kernels queued before the free still see it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace lowbit::cuda::detail {

class StreamScratch {
 public:
  explicit StreamScratch(cudaStream_t stream) : stream_(stream) {}
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  ~StreamScratch() {
    if (p_ != nullptr) cudaFreeAsync(p_, stream_);
  }
  // Allocates `bytes` (once per object); the allocator's error otherwise.
  cudaError_t Allocate(std::size_t bytes) { return cudaMallocAsync(&p_, bytes, stream_); }
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace lowbit::cuda::detail
