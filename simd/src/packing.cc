// Run-time dispatch (target_dispatch.h) and argument checks of the packing
// kernels (packing-inl.h): formats/block/packing.h's nibble orders, GPTQ
// qweight and AWQ words, on any compiled target.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "packing-inl.h"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "packing-inl.h"

#if HWY_ONCE
#include "lowbit/simd/simd.h"
#include "packing_job.h"
#include "target_dispatch.h"

namespace lowbit::simd {
HWY_EXPORT(PackNibblesHighFirst);
HWY_EXPORT(UnpackNibbles);
HWY_EXPORT(PackGptqQweight);
HWY_EXPORT(UnpackGptqQweight);
HWY_EXPORT(PackAwq);
HWY_EXPORT(UnpackAwq);

namespace {

// The kernel's target, then the pointers.
template <typename Kernel>
registry::Status Check(Kernel kernel, std::int64_t target, const void* in, const void* out,
                       std::size_t count) {
  if (kernel == nullptr) return detail::TargetError(target);
  if (count > 0 && (in == nullptr || out == nullptr)) {
    return registry::Status::Error("simd: null input or output");
  }
  return registry::Status::Ok();
}

// GPTQ qweight words hold eight rows of K; AWQ words eight columns of N
// (packing.h: the model's loops assume these, and its GPTQ unpack would read
// past the last word otherwise).
registry::Status CheckMultipleOf8(std::size_t n, const char* what) {
  if (n % 8 == 0) return registry::Status::Ok();
  return registry::Status::Error(std::string("simd: ") + what + " must be a multiple of 8");
}

}  // namespace

registry::Status PackNibbles(std::int64_t target, block::NibbleOrder order, const std::uint8_t* codes,
                             std::size_t count, std::uint8_t* packed) {
  if (order == block::NibbleOrder::kLowFirst) return PackNibbles(target, codes, count, packed);
  const auto kernel = LOWBIT_SIMD_KERNEL(PackNibblesHighFirst, target);
  const registry::Status s = Check(kernel, target, codes, packed, count);
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{true, codes, nullptr, nullptr, packed, count});
  return registry::Status::Ok();
}

registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackNibbles, target);
  const registry::Status s = Check(kernel, target, packed, codes, count);
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{order == block::NibbleOrder::kHighFirst, nullptr, codes, packed, nullptr, count});
  return registry::Status::Ok();
}

registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackGptqQweight, target);
  registry::Status s = Check(kernel, target, q, words, k_rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (!s.ok || k_rows * n_cols == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackGptqQweight, target);
  registry::Status s = Check(kernel, target, words, q, k_rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (!s.ok || k_rows * n_cols == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackAwq, target);
  registry::Status s = Check(kernel, target, q, words, rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (!s.ok || rows * n_cols == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackAwq, target);
  registry::Status s = Check(kernel, target, words, q, rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (!s.ok || rows * n_cols == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words) {
  static_assert(std::endian::native == std::endian::little, "qzeros words as a nibble stream");
  const std::size_t count = groups * n_cols;
  // Runs on the nibble kernels: their target and the pointers, then the shape.
  registry::Status s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, zeros, words, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (!s.ok || count == 0) return s;
  std::vector<std::uint8_t> stored(count);  // [GPTQ] pack: zeros -= 1
  for (std::size_t i = 0; i < count; ++i) stored[i] = static_cast<std::uint8_t>((zeros[i] - 1) & 0xF);
  return PackNibbles(target, stored.data(), count, reinterpret_cast<std::uint8_t*>(words));
}

registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros) {
  const std::size_t count = groups * n_cols;
  registry::Status s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, words, zeros, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (!s.ok || count == 0) return s;
  s = UnpackNibbles(target, block::NibbleOrder::kLowFirst, reinterpret_cast<const std::uint8_t*>(words),
                    count, zeros);
  // [GPTQ] forward: zeros + 1 (stored values are 4-bit, so 0xF -> 0).
  for (std::size_t i = 0; s.ok && i < count; ++i) zeros[i] = static_cast<std::uint8_t>((zeros[i] + 1) & 0xF);
  return s;
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
