// Overflow-checked size arithmetic: every element count, buffer length or
// byte size that an entry point computes from caller-supplied dimensions
// (rows x cols, count x bytes per element, count + block - 1) goes through
// these, so a product that does not fit is refused before any memory is
// touched instead of wrapping to a small (or zero) size
// (docs/bad-input.md "Overflowing size computations").
//
// Header-only, constexpr, host and device (no builtins, so nvcc's device
// pass and constant evaluation take it), used by lowbit::registry, the SIMD
// and CUDA entry points and the model's size helpers. The checks run once
// per call, at the entry, never inside a kernel's loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "lowbit/formats/config.h"

namespace lowbit {

// a * b into *out; false (and *out untouched) when it does not fit size_t.
LOWBIT_HD_CONSTEXPR bool CheckedMul(std::size_t a, std::size_t b, std::size_t* out) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return false;
  *out = a * b;
  return true;
}

// a + b into *out; false (and *out untouched) when it does not fit size_t.
LOWBIT_HD_CONSTEXPR bool CheckedAdd(std::size_t a, std::size_t b, std::size_t* out) {
  if (b > std::numeric_limits<std::size_t>::max() - a) return false;
  *out = a + b;
  return true;
}

// ceil(a / b) for b > 0, without forming a + b - 1 (which wraps for a near
// SIZE_MAX): the number of blocks of b that cover a elements.
LOWBIT_HD_CONSTEXPR std::size_t CeilDiv(std::size_t a, std::size_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// The model indexes tensors with `long` (recipe/tensor.h, packing.h) and
// std::int64_t; both must be 64 bits so a tensor of 2^31 or more elements is
// indexed without overflow (LP64: Linux, macOS, CUDA device code).
static_assert(sizeof(long) == 8, "lowbit's model indexes tensors with 64-bit long (an LP64 target)");

// The largest element count the model's signed 64-bit indices take.
inline constexpr std::size_t kMaxModelElements =
    static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());

// rows * cols into *out when the product fits the model's signed 64-bit
// indices (kMaxModelElements), so the model can index every element and form
// every buffer size from it; false otherwise.
LOWBIT_HD_CONSTEXPR bool CheckedElementCount(std::size_t rows, std::size_t cols, std::size_t* out) {
  std::size_t n = 0;
  if (!CheckedMul(rows, cols, &n) || n > kMaxModelElements) return false;
  *out = n;
  return true;
}

static_assert([] {
  std::size_t r = 0;
  return CheckedMul(std::size_t{1} << 31, 2, &r) && r == std::size_t{1} << 32 &&
         !CheckedMul(4, (std::size_t{1} << 62) + 1, &r) &&        // 2^64 + 4 wraps to 4
         !CheckedMul(std::size_t{1} << 32, std::size_t{1} << 32, &r) &&  // wraps to 0
         CheckedMul(0, std::numeric_limits<std::size_t>::max(), &r) && r == 0 &&
         !CheckedAdd(std::numeric_limits<std::size_t>::max(), 1, &r) &&
         CeilDiv(std::numeric_limits<std::size_t>::max(), 32) ==
             std::numeric_limits<std::size_t>::max() / 32 + 1 &&
         !CheckedElementCount(std::size_t{1} << 32, std::size_t{1} << 31, &r) &&
         CheckedElementCount(std::size_t{1} << 31, std::size_t{1} << 31, &r);
}());

}  // namespace lowbit
