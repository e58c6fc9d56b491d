// Argument checks at the entry of the SIMD calls of simd.h that take raw
// pointers and sizes (the registry rows go through registry.h's Validate*
// first): a size whose bytes overflow, an enum outside its values, an output
// that overlaps an input. Once per call, before any kernel runs
// (docs/bad-input.md lists what each call does with bad input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "lowbit/formats/block/block_spec.h"
#include "lowbit/formats/checked_size.h"
#include "lowbit/registry/registry.h"

namespace lowbit::simd::detail {

// "simd: count N x B bytes overflows" when count elements of `bytes` bytes
// (the widest buffer of the call) do not fit; else Ok with *total.
inline registry::Status CheckedBytes(std::size_t count, std::size_t bytes, std::size_t* total) {
  if (count <= kMaxModelElements && CheckedMul(count, bytes, total)) return registry::Status::Ok();
  return registry::Status::Error("simd: count " + std::to_string(count) + " overflows the buffer size");
}

// rows x cols elements, each of at most `bytes` bytes in the widest buffer.
inline registry::Status CheckedMatrix(std::size_t rows, std::size_t cols, std::size_t bytes,
                                      std::size_t* elements) {
  std::size_t n = 0, total = 0;
  if (CheckedElementCount(rows, cols, &n) && CheckedMul(n, bytes, &total)) {
    *elements = n;
    return registry::Status::Ok();
  }
  return registry::Status::Error("simd: " + std::to_string(rows) + " x " + std::to_string(cols) +
                                 " overflows the buffer size");
}

inline registry::Status CheckNibbleOrder(block::NibbleOrder order) {
  if (order == block::NibbleOrder::kLowFirst || order == block::NibbleOrder::kHighFirst) {
    return registry::Status::Ok();
  }
  return registry::Status::Error("simd: nibble order " + std::to_string(static_cast<int>(order)) +
                                 " is not a NibbleOrder (0 low first, 1 high first)");
}

}  // namespace lowbit::simd::detail
