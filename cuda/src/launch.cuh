// Grid sizing shared by the kernels: enough blocks to fill every SM several
// times over (grid-stride loops do the rest), read once per device.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace lowbit::cuda::detail {

inline constexpr int kMapThreads = 256;

// Multiprocessors of the current device (cached per device id, thread-safe;
// device.cu).
int SmCount();

// Blocks for `work` items of one thread each: at most 8 blocks per SM (2048 threads, a full SM).
inline unsigned GridFor(std::size_t work, int threads) {
  const std::size_t needed = (work + threads - 1) / threads;
  const std::size_t cap = static_cast<std::size_t>(SmCount()) * 8;
  const std::size_t g = needed < cap ? needed : cap;
  return static_cast<unsigned>(g > 0 ? g : 1);
}

}  // namespace lowbit::cuda::detail
