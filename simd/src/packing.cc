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
#include "entry_checks.h"
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

// "simd: `what`: out overlaps in" (registry.h CheckNoOverlap), else Ok.
registry::Status NoOverlap(const char* what, const void* in, std::size_t in_bytes, const void* out,
                           std::size_t out_bytes) {
  return registry::CheckNoOverlap(std::string("simd: ") + what, {{in, in_bytes, "input"}},
                                  {{out, out_bytes, "output"}});
}

}  // namespace

registry::Status PackNibbles(std::int64_t target, block::NibbleOrder order, const std::uint8_t* codes,
                             std::size_t count, std::uint8_t* packed) {
  if (registry::Status s = detail::CheckNibbleOrder(order); !s.ok) return s;
  if (order == block::NibbleOrder::kLowFirst) return PackNibbles(target, codes, count, packed);
  const auto kernel = LOWBIT_SIMD_KERNEL(PackNibblesHighFirst, target);
  registry::Status s = Check(kernel, target, codes, packed, count);
  if (s.ok) s = NoOverlap("PackNibbles", codes, count, packed, CeilDiv(count, 2));
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{true, codes, nullptr, nullptr, packed, count});
  return registry::Status::Ok();
}

registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes) {
  if (registry::Status s = detail::CheckNibbleOrder(order); !s.ok) return s;
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackNibbles, target);
  registry::Status s = Check(kernel, target, packed, codes, count);
  if (s.ok) s = NoOverlap("UnpackNibbles", packed, CeilDiv(count, 2), codes, count);
  if (!s.ok || count == 0) return s;
  kernel(NibbleJob{order == block::NibbleOrder::kHighFirst, nullptr, codes, packed, nullptr, count});
  return registry::Status::Ok();
}

registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackGptqQweight, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(k_rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, q, words, codes);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (s.ok) s = NoOverlap("PackGptqQweight", q, codes, words, codes / 2);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackGptqQweight, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(k_rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, words, q, codes);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (s.ok) s = NoOverlap("UnpackGptqQweight", words, codes / 2, q, codes);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words) {
  const auto kernel = LOWBIT_SIMD_KERNEL(PackAwq, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, q, words, codes);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (s.ok) s = NoOverlap("PackAwq", q, codes, words, codes / 2);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{q, nullptr, nullptr, words, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q) {
  const auto kernel = LOWBIT_SIMD_KERNEL(UnpackAwq, target);
  std::size_t codes = 0;
  registry::Status s = detail::CheckedMatrix(rows, n_cols, 1, &codes);
  if (s.ok) s = Check(kernel, target, words, q, codes);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (s.ok) s = NoOverlap("UnpackAwq", words, codes / 2, q, codes);
  if (!s.ok || codes == 0) return s;
  kernel(WordJob{nullptr, q, words, nullptr, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words) {
  static_assert(std::endian::native == std::endian::little, "qzeros words as a nibble stream");
  std::size_t count = 0;
  // Runs on the nibble kernels: their target and the pointers, then the shape.
  registry::Status s = detail::CheckedMatrix(groups, n_cols, 1, &count);
  if (s.ok) s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, zeros, words, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (s.ok) s = NoOverlap("PackGptqQzeros", zeros, count, words, count / 2);
  if (!s.ok || count == 0) return s;
  std::vector<std::uint8_t> stored(count);  // [GPTQ] pack: zeros -= 1
  for (std::size_t i = 0; i < count; ++i) stored[i] = static_cast<std::uint8_t>((zeros[i] - 1) & 0xF);
  return PackNibbles(target, stored.data(), count, reinterpret_cast<std::uint8_t*>(words));
}

registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros) {
  std::size_t count = 0;
  registry::Status s = detail::CheckedMatrix(groups, n_cols, 1, &count);
  if (s.ok) s = Check(LOWBIT_SIMD_KERNEL(UnpackNibbles, target), target, words, zeros, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (s.ok) s = NoOverlap("UnpackGptqQzeros", words, count / 2, zeros, count);
  if (!s.ok || count == 0) return s;
  s = UnpackNibbles(target, block::NibbleOrder::kLowFirst, reinterpret_cast<const std::uint8_t*>(words),
                    count, zeros);
  // [GPTQ] forward: zeros + 1 (stored values are 4-bit, so 0xF -> 0).
  for (std::size_t i = 0; s.ok && i < count; ++i) zeros[i] = static_cast<std::uint8_t>((zeros[i] + 1) & 0xF);
  return s;
}

}  // namespace lowbit::simd
#endif  // HWY_ONCE
