// What the matmul benchmarks (gemv_bench.cu, tc_gemv_bench.cu,
// tc_gemm_bench.cu) share: a CUDA error check that stops the run, host-to-device upload, the
// device copy rate they are compared with, and CUDA-event
// timing of back-to-back calls on one stream as a median over
// rounds (the median: one slow round, a clock change or another process,
// does not move it).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(e)                                                                   \
  do {                                                                                  \
    cudaError_t err_ = (e);                                                             \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

namespace lowbit::bench {

// A device copy of `h` (the caller frees it with cudaFree).
template <typename T>
T* Upload(const std::vector<T>& h) {
  T* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, h.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

inline float Median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds per call: for each of `rounds` rounds, events around
// `calls` back-to-back calls of call(i), i = 0 .. calls - 1, on `stream`
// (the calls must launch there), divided by `calls`; the median over the
// rounds. A launch error stops the run.
template <typename Call>
float MedianMsPerCall(int rounds, int calls, Call call, cudaStream_t stream = nullptr) {
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int r = 0; r < rounds; ++r) {
    CHECK_CUDA(cudaEventRecord(e0, stream));
    for (int i = 0; i < calls; ++i) call(i);
    CHECK_CUDA(cudaEventRecord(e1, stream));
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaGetLastError());
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t / calls);
  }
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return Median(ms);
}

// Device copy bandwidth (bytes read + written per second, TB/s) of a
// 1 GiB device-to-device copy, the roofline the matmul rows are compared with.
inline double CopyTbps() {
  const std::size_t bytes = std::size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMemset(a, 0x5A, bytes));
  const float ms = MedianMsPerCall(7, 5, [&](int) { CHECK_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); });
  cudaFree(a);
  cudaFree(b);
  return 2.0 * bytes / (ms * 1e-3) / 1e12;
}

// Microseconds of a device-to-device copy that moves `bytes` (half read,
// half written): the same bytes as the call it is compared with, timed the
// same way (median over `rounds` of `calls` back-to-back copies on
// `stream`), rotating among enough buffer pairs that one round does not
// fit in L2. A short copy pays the launch and ramp a short kernel pays,
// which the 1 GiB CopyTbps hides.
inline double SameBytesCopyUs(double bytes, cudaStream_t stream, int rounds, int calls) {
  const std::size_t half = std::max<std::size_t>(16, static_cast<std::size_t>(bytes / 2) / 16 * 16);
  const int pairs = std::max(2, static_cast<int>(256e6 / (2.0 * static_cast<double>(half)) + 1));
  std::vector<void*> from(pairs), to(pairs);
  for (int i = 0; i < pairs; ++i) {
    CHECK_CUDA(cudaMalloc(&from[i], half));
    CHECK_CUDA(cudaMalloc(&to[i], half));
    CHECK_CUDA(cudaMemset(from[i], 0x5A, half));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  const float ms = MedianMsPerCall(
      rounds, calls,
      [&](int i) { CHECK_CUDA(cudaMemcpyAsync(to[i % pairs], from[i % pairs], half, cudaMemcpyDeviceToDevice, stream)); },
      stream);
  for (int i = 0; i < pairs; ++i) {
    cudaFree(from[i]);
    cudaFree(to[i]);
  }
  return ms * 1e3;
}

}  // namespace lowbit::bench
