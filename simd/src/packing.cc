// Run-time dispatch and argument checks of the packing kernels
// (packing-inl.h): formats/block/packing.h's nibble orders, GPTQ qweight and
// AWQ words, on any compiled target.
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

namespace lowbit::simd {
HWY_EXPORT(PackNibblesHighFirst);
HWY_EXPORT(UnpackNibbles);
HWY_EXPORT(PackGptqQweight);
HWY_EXPORT(UnpackGptqQweight);
HWY_EXPORT(PackAwq);
HWY_EXPORT(UnpackAwq);

namespace {

struct PackingKernels {
  std::int64_t target;
  void (*pack_high_first)(const NibbleJob&);
  void (*unpack_nibbles)(const NibbleJob&);
  void (*pack_gptq)(const WordJob&);
  void (*unpack_gptq)(const WordJob&);
  void (*pack_awq)(const WordJob&);
  void (*unpack_awq)(const WordJob&);
};

#define LOWBIT_SIMD_PACKING_ROW(ns, bit)                                                       \
  {bit, &ns::PackNibblesHighFirst, &ns::UnpackNibbles, &ns::PackGptqQweight,                   \
   &ns::UnpackGptqQweight, &ns::PackAwq, &ns::UnpackAwq},
constexpr PackingKernels kPackingTargets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    LOWBIT_SIMD_PACKING_ROW(N_AVX3_DL, HWY_AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    LOWBIT_SIMD_PACKING_ROW(N_AVX3, HWY_AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    LOWBIT_SIMD_PACKING_ROW(N_AVX2, HWY_AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    LOWBIT_SIMD_PACKING_ROW(N_SSE4, HWY_SSE4)
#endif
};
#undef LOWBIT_SIMD_PACKING_ROW

void DynamicPackHighFirst(const NibbleJob& job) { HWY_DYNAMIC_DISPATCH(PackNibblesHighFirst)(job); }
void DynamicUnpackNibbles(const NibbleJob& job) { HWY_DYNAMIC_DISPATCH(UnpackNibbles)(job); }
void DynamicPackGptq(const WordJob& job) { HWY_DYNAMIC_DISPATCH(PackGptqQweight)(job); }
void DynamicUnpackGptq(const WordJob& job) { HWY_DYNAMIC_DISPATCH(UnpackGptqQweight)(job); }
void DynamicPackAwq(const WordJob& job) { HWY_DYNAMIC_DISPATCH(PackAwq)(job); }
void DynamicUnpackAwq(const WordJob& job) { HWY_DYNAMIC_DISPATCH(UnpackAwq)(job); }
constexpr PackingKernels kDynamic{0,
                                  &DynamicPackHighFirst,
                                  &DynamicUnpackNibbles,
                                  &DynamicPackGptq,
                                  &DynamicUnpackGptq,
                                  &DynamicPackAwq,
                                  &DynamicUnpackAwq};

const PackingKernels* FindTarget(std::int64_t target) {
  if (target == 0) return &kDynamic;
  for (const PackingKernels& row : kPackingTargets) {
    if (row.target == target && TargetAvailable(target)) return &row;
  }
  return nullptr;
}

registry::Status Check(std::int64_t target, const void* in, const void* out, std::size_t count) {
  if (FindTarget(target) == nullptr) {
    return registry::Status::Error(std::string("simd: target ") + TargetName(target) +
                                   " is not compiled in or not supported here");
  }
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
  const registry::Status s = Check(target, codes, packed, count);
  if (!s.ok || count == 0) return s;
  FindTarget(target)->pack_high_first(NibbleJob{true, codes, nullptr, nullptr, packed, count});
  return registry::Status::Ok();
}

registry::Status UnpackNibbles(std::int64_t target, block::NibbleOrder order,
                               const std::uint8_t* packed, std::size_t count, std::uint8_t* codes) {
  const registry::Status s = Check(target, packed, codes, count);
  if (!s.ok || count == 0) return s;
  FindTarget(target)->unpack_nibbles(
      NibbleJob{order == block::NibbleOrder::kHighFirst, nullptr, codes, packed, nullptr, count});
  return registry::Status::Ok();
}

registry::Status PackGptqQweight(std::int64_t target, const std::uint8_t* q, std::size_t k_rows,
                                 std::size_t n_cols, std::uint32_t* words) {
  registry::Status s = Check(target, q, words, k_rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (!s.ok || k_rows * n_cols == 0) return s;
  FindTarget(target)->pack_gptq(WordJob{q, nullptr, nullptr, words, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackGptqQweight(std::int64_t target, const std::uint32_t* words, std::size_t k_rows,
                                   std::size_t n_cols, std::uint8_t* q) {
  registry::Status s = Check(target, words, q, k_rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(k_rows, "GPTQ qweight K");
  if (!s.ok || k_rows * n_cols == 0) return s;
  FindTarget(target)->unpack_gptq(WordJob{nullptr, q, words, nullptr, k_rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackAwq(std::int64_t target, const std::uint8_t* q, std::size_t rows, std::size_t n_cols,
                         std::uint32_t* words) {
  registry::Status s = Check(target, q, words, rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (!s.ok || rows * n_cols == 0) return s;
  FindTarget(target)->pack_awq(WordJob{q, nullptr, nullptr, words, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status UnpackAwq(std::int64_t target, const std::uint32_t* words, std::size_t rows,
                           std::size_t n_cols, std::uint8_t* q) {
  registry::Status s = Check(target, words, q, rows * n_cols);
  if (s.ok) s = CheckMultipleOf8(n_cols, "AWQ N");
  if (!s.ok || rows * n_cols == 0) return s;
  FindTarget(target)->unpack_awq(WordJob{nullptr, q, words, nullptr, rows, n_cols});
  return registry::Status::Ok();
}

registry::Status PackGptqQzeros(std::int64_t target, const std::uint8_t* zeros, std::size_t groups,
                                std::size_t n_cols, std::uint32_t* words) {
  static_assert(std::endian::native == std::endian::little, "qzeros words as a nibble stream");
  const std::size_t count = groups * n_cols;
  registry::Status s = Check(target, zeros, words, count);
  if (s.ok) s = CheckMultipleOf8(n_cols, "GPTQ qzeros N");
  if (!s.ok || count == 0) return s;
  std::vector<std::uint8_t> stored(count);  // [GPTQ] pack: zeros -= 1
  for (std::size_t i = 0; i < count; ++i) stored[i] = static_cast<std::uint8_t>((zeros[i] - 1) & 0xF);
  return PackNibbles(target, stored.data(), count, reinterpret_cast<std::uint8_t*>(words));
}

registry::Status UnpackGptqQzeros(std::int64_t target, const std::uint32_t* words, std::size_t groups,
                                  std::size_t n_cols, std::uint8_t* zeros) {
  const std::size_t count = groups * n_cols;
  registry::Status s = Check(target, words, zeros, count);
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
