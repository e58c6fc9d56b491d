// Helpers shared by the CUDA tests: skip without a GPU (reported as SKIPPED,
// never as passed), device buffers, and host-model reference conversions.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "lowbit/cuda/device.h"
#include "lowbit/formats/fp32_bits.h"

#define LOWBIT_REQUIRE_GPU()                                             \
  do {                                                                   \
    if (!::lowbit::cuda::GpuAvailable()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

#define LOWBIT_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

namespace lowbit::cuda::testing {

// Owns `bytes` of device memory.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&ptr_, bytes > 0 ? bytes : 1) != cudaSuccess) {
      ptr_ = nullptr;
    } else {
      // Zeroed, so a test that only checks arguments still launches on
      // defined bytes (compute-sanitizer initcheck reports reads of
      // never-written device memory).
      cudaMemset(ptr_, 0, bytes > 0 ? bytes : 1);
    }
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// A typed device array: `n` elements, or a copy of a host vector; Get(n)
// copies the first n back.
template <typename T>
struct DeviceVector {
  T* p = nullptr;
  // Zeroed like DeviceBuffer (initcheck).
  explicit DeviceVector(std::size_t n) {
    if (cudaMalloc(reinterpret_cast<void**>(&p), (n ? n : 1) * sizeof(T)) == cudaSuccess) {
      cudaMemset(p, 0, (n ? n : 1) * sizeof(T));
    }
  }
  DeviceVector(const std::vector<T>& h) : DeviceVector(h.size()) {  // NOLINT: implicit by design
    cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { cudaFree(p); }
  std::vector<T> Get(std::size_t n) const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

template <typename T>
void Upload(const DeviceBuffer& d, const std::vector<T>& h, std::size_t byte_offset = 0) {
  ASSERT_EQ(cudaMemcpy(static_cast<char*>(d.get()) + byte_offset, h.data(), h.size() * sizeof(T),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
}

template <typename T>
void Download(std::vector<T>& h, const DeviceBuffer& d, std::size_t byte_offset = 0) {
  ASSERT_EQ(cudaMemcpy(h.data(), static_cast<const char*>(d.get()) + byte_offset,
                       h.size() * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
}

// FP32 inputs where conversions go wrong (docs/formats-reference.md §9 boundary vectors), then a
// strided walk over all 2^32 patterns that hits every exponent and, through
// the odd stride, every low-bit rounding class.
inline std::vector<std::uint32_t> F32TestInputs(std::size_t strided) {
  std::vector<std::uint32_t> v = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00400000,
      0x00400001, 0x3A800000, 0x3A800001, 0x37000000, 0x37000001, 0x43E00000, 0x43E7FFFF,
      0x43E80000, 0x43E80001, 0x43F00000, 0x47600000, 0x476FFFFF, 0x47700000, 0x477FE000,
      0x477FEFFF, 0x477FF000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
      0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x3E800000, 0x3F400000, 0x3FA00000,
      0x3FE00000, 0x40200000, 0x40600000, 0x40A00000, 0x40C00000, 0x40C00001, 0x7F000000,
      0x7F000001, 0x7F400000, 0x42FF0000, 0xC3008000, 0x40200000, 0xC0200000, 0x40F00000,
      0xC1080000, 0x3F7FFFFF, 0x33000000, 0x33000001, 0x7F7F8000, 0x7F7F7FFF};
  const std::uint64_t step = (std::uint64_t{1} << 32) / strided | 1;
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += step) {
    v.push_back(static_cast<std::uint32_t>(x));
    v.push_back(static_cast<std::uint32_t>(x) ^ 0x80000000u);
  }
  return v;
}

}  // namespace lowbit::cuda::testing
