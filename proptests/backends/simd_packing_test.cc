// SIMD packing (simd.h PackNibbles with an order, UnpackNibbles,
// Pack/UnpackGptqQweight, Pack/UnpackGptqQzeros, Pack/UnpackAwq) against
// formats/block/packing.h on each compiled target (simd_test_util.h): random
// codes with stray high bits (the model masks them), random words, odd
// counts and column counts, unaligned buffers. The GEMM weight layouts and
// swizzled scales (docs/layouts.md), which have registry rows but no simd.h
// call, run through the target's registry rows against the model's
// functions (tinygemm_int4pack.h, marlin_layout.h, swizzled_scales.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "all_backends.h"
#include "generators_at_level.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/simd.h"
#include "simd_test_util.h"

namespace lowbit {
namespace {

using testing::Guarded;
using testing::GuardIntact;
using testing::kGuardByte;
using testing::kGuardFloat;
using testing::kGuardWord;

// Mostly 4-bit codes, sometimes any byte.
std::vector<std::uint8_t> Codes(std::size_t n) { return testing::Codes(n, 0xF, /*stray_bits=*/true); }

// Draws per property and target at smoke / ci / full.
constexpr testing::LevelCounts kDraws{50, 500, 20000};

void NibblesMatchModel(std::int64_t target) {
  const block::NibbleOrder order = *rc::gen::element(block::NibbleOrder::kLowFirst, block::NibbleOrder::kHighFirst);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 300);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 3);
  std::vector<std::uint8_t> codes = Codes(count + offset);
  const std::uint8_t* in = codes.data() + offset;
  const std::size_t bytes = (count + 1) / 2;
  std::vector<std::uint8_t> expected(bytes);
  block::PackNibbles(in, static_cast<long>(count), order, expected.data());
  std::vector<std::uint8_t> unpacked(count);
  block::UnpackNibbles(expected.data(), static_cast<long>(count), order, unpacked.data());
  std::vector<std::uint8_t> packed = Guarded(bytes, kGuardByte);
  RC_ASSERT(simd::PackNibbles(target, order, in, count, packed.data()).ok);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (packed[i] != expected[i]) RC_FAIL("pack byte " + std::to_string(i));
  }
  RC_ASSERT(GuardIntact(packed, kGuardByte));
  std::vector<std::uint8_t> codes_out = Guarded(count, kGuardByte);
  RC_ASSERT(simd::UnpackNibbles(target, order, expected.data(), count, codes_out.data()).ok);
  for (std::size_t i = 0; i < count; ++i) RC_ASSERT(codes_out[i] == unpacked[i]);
  RC_ASSERT(GuardIntact(codes_out, kGuardByte));
}

void GptqMatchesModel(std::int64_t target) {
  const std::size_t k_rows = 8 * *rc::gen::inRange<std::size_t>(0, 5);
  const std::size_t n_cols = *rc::gen::inRange<std::size_t>(1, 70);
  const std::vector<std::uint8_t> q = Codes(k_rows * n_cols);
  const std::size_t n_words = k_rows / 8 * n_cols;
  std::vector<std::uint32_t> expected(n_words);
  block::PackGptqQweight(q.data(), static_cast<int>(k_rows), static_cast<int>(n_cols), expected.data());
  std::vector<std::uint32_t> words(n_words);
  for (auto& w : words) w = *rc::gen::arbitrary<std::uint32_t>();
  std::vector<std::uint8_t> unpacked(k_rows * n_cols);
  block::UnpackGptqQweight(words.data(), static_cast<int>(k_rows), static_cast<int>(n_cols), unpacked.data());
  std::vector<std::uint32_t> got = Guarded(n_words, kGuardWord);
  RC_ASSERT(simd::PackGptqQweight(target, q.data(), k_rows, n_cols, got.data()).ok);
  for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
  RC_ASSERT(GuardIntact(got, kGuardWord));
  std::vector<std::uint8_t> codes = Guarded(k_rows * n_cols, kGuardByte);
  RC_ASSERT(simd::UnpackGptqQweight(target, words.data(), k_rows, n_cols, codes.data()).ok);
  for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(codes[i] == unpacked[i]);
  RC_ASSERT(GuardIntact(codes, kGuardByte));
}

void GptqQzerosMatchModel(std::int64_t target) {
  const std::size_t groups = *rc::gen::inRange<std::size_t>(0, 6);
  const std::size_t n_cols = 8 * *rc::gen::inRange<std::size_t>(1, 20);
  const std::vector<std::uint8_t> zeros = Codes(groups * n_cols);
  const std::size_t n_words = groups * n_cols / 8;
  std::vector<std::uint32_t> expected(n_words);
  block::PackGptqQzeros(zeros.data(), static_cast<int>(groups), static_cast<int>(n_cols), expected.data());
  std::vector<std::uint32_t> words(n_words);
  for (auto& w : words) w = *rc::gen::arbitrary<std::uint32_t>();
  std::vector<std::uint8_t> unpacked(groups * n_cols);
  block::UnpackGptqQzeros(words.data(), static_cast<int>(groups), static_cast<int>(n_cols), unpacked.data());
  std::vector<std::uint32_t> got = Guarded(n_words, kGuardWord);
  RC_ASSERT(simd::PackGptqQzeros(target, zeros.data(), groups, n_cols, got.data()).ok);
  for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
  RC_ASSERT(GuardIntact(got, kGuardWord));
  std::vector<std::uint8_t> back = Guarded(groups * n_cols, kGuardByte);
  RC_ASSERT(simd::UnpackGptqQzeros(target, words.data(), groups, n_cols, back.data()).ok);
  for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(back[i] == unpacked[i]);
  RC_ASSERT(GuardIntact(back, kGuardByte));
}

void AwqMatchesModel(std::int64_t target) {
  const std::size_t rows = *rc::gen::inRange<std::size_t>(0, 7);
  const std::size_t n_cols = 8 * *rc::gen::inRange<std::size_t>(1, 20);
  const std::vector<std::uint8_t> q = Codes(rows * n_cols);
  const std::size_t n_words = rows * n_cols / 8;
  std::vector<std::uint32_t> expected(n_words);
  block::PackAwq(q.data(), static_cast<int>(rows), static_cast<int>(n_cols), expected.data());
  std::vector<std::uint32_t> words(n_words);
  for (auto& w : words) w = *rc::gen::arbitrary<std::uint32_t>();
  std::vector<std::uint8_t> unpacked(rows * n_cols);
  block::UnpackAwq(words.data(), static_cast<int>(rows), static_cast<int>(n_cols), unpacked.data());
  std::vector<std::uint32_t> got = Guarded(n_words, kGuardWord);
  RC_ASSERT(simd::PackAwq(target, q.data(), rows, n_cols, got.data()).ok);
  for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
  RC_ASSERT(GuardIntact(got, kGuardWord));
  std::vector<std::uint8_t> codes = Guarded(rows * n_cols, kGuardByte);
  RC_ASSERT(simd::UnpackAwq(target, words.data(), rows, n_cols, codes.data()).ok);
  for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(codes[i] == unpacked[i]);
  RC_ASSERT(GuardIntact(codes, kGuardByte));
}

LOWBIT_SIMD_TARGET_SUITE(SimdPacking);
TEST_P(SimdPacking, NibblesEitherOrderMatchModel) {
  testing::CheckAtLevel(kDraws, [this] { NibblesMatchModel(target()); });
}
TEST_P(SimdPacking, GptqQweightMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { GptqMatchesModel(target()); });
}
TEST_P(SimdPacking, GptqQzerosMatchModel) {
  testing::CheckAtLevel(kDraws, [this] { GptqQzerosMatchModel(target()); });
}
TEST_P(SimdPacking, AwqMatchesModel) {
  testing::CheckAtLevel(kDraws, [this] { AwqMatchesModel(target()); });
}

// The AWQ interleave on a literal: columns 0..7 = codes 0..7 give nibbles
// 0, 2, 4, 6, 1, 3, 5, 7 from the low end (packing.h kAwqOrderMap).
TEST_P(SimdPacking, AwqLiteralWord) {
  const std::uint8_t q[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::uint32_t word = 0;
  ASSERT_TRUE(simd::PackAwq(target(), q, 1, 8, &word).ok);
  EXPECT_EQ(word, 0x75316420u);
}

using ::lowbit::testing::AllBackends;

// One layout and shape through the target's pack and unpack rows against
// the model's pack (and, for unpack, the model's unpack of that packing).
void GemmLayoutMatchesModel(std::int64_t target) {
  using registry::PackingLayout;
  const PackingLayout layout = *rc::gen::element(
      PackingLayout::kTinygemmInt4packK2, PackingLayout::kTinygemmInt4packK4, PackingLayout::kTinygemmInt4packK8,
      PackingLayout::kTorchCpuInt4packAvx512, PackingLayout::kTorchCpuInt4packAvx2,
      PackingLayout::kTorchCpuInt4packDefault, PackingLayout::kMarlin, PackingLayout::kSwizzledScales);
  const registry::PackingLayoutInfo& info = *registry::FindPackingLayoutInfo(layout);
  // Rows up to past three 64-row blocks / 128-row tiles; cols a few multiples.
  const std::size_t rows = static_cast<std::size_t>(info.rows_multiple) *
                           *rc::gen::inRange<std::size_t>(0, layout == PackingLayout::kSwizzledScales ? 300 : 12);
  const std::size_t cols = static_cast<std::size_t>(info.cols_multiple) * *rc::gen::inRange<std::size_t>(0, 6);
  const registry::PackingSizes sizes = registry::PackingBufferSizes(layout, rows, cols);
  RC_ASSERT(sizes.ok);
  const std::vector<std::uint8_t> codes = info.code_bits == 8 ? testing::Codes(sizes.codes, 0xFF, false) : Codes(sizes.codes);
  const auto r = static_cast<std::int64_t>(rows), c = static_cast<std::int64_t>(cols);
  const bool words = info.unit == registry::PackedUnit::kWord32;
  std::vector<std::uint32_t> want_words(words ? sizes.packed_units : 0);
  std::vector<std::uint8_t> want_bytes(words ? 0 : sizes.packed_units);
  if (const int tiles = registry::TinygemmInnerKTilesOf(layout); tiles != 0) {
    block::PackTinygemmInt4(codes.data(), r, c, tiles, want_words.data());
  } else if (const int isa = registry::TorchCpuInt4packIsaOf(layout); isa >= 0) {
    block::PackTorchCpuInt4(codes.data(), r, c, static_cast<block::TorchCpuInt4packIsa>(isa), want_bytes.data());
  } else if (layout == PackingLayout::kMarlin) {
    block::PackMarlin(codes.data(), r, c, want_words.data());
  } else {
    block::SwizzleScales(codes.data(), r, c, want_bytes.data());
  }
  const std::string backend = std::string("simd:") + simd::TargetName(target);
  const registry::PackingEntry* pack = AllBackends().FindPacking(layout, registry::PackDirection::kPack, backend);
  const registry::PackingEntry* unpack = AllBackends().FindPacking(layout, registry::PackDirection::kUnpack, backend);
  RC_ASSERT(pack != nullptr && unpack != nullptr);
  std::vector<std::uint32_t> got_words = Guarded(want_words.size(), kGuardWord);
  std::vector<std::uint8_t> got_bytes = Guarded(want_bytes.size(), kGuardByte);
  registry::PackingArgs a;
  a.layout = layout;
  a.rows = rows;
  a.cols = cols;
  a.codes = codes.data();
  a.packed_words = got_words.data();
  a.packed_bytes = got_bytes.data();
  const registry::Status s = pack->run(a);
  if (!s.ok) RC_FAIL(s.message);
  for (std::size_t i = 0; i < want_words.size(); ++i) {
    if (got_words[i] != want_words[i]) RC_FAIL(std::string(info.name) + " pack word " + std::to_string(i));
  }
  for (std::size_t i = 0; i < want_bytes.size(); ++i) {
    if (got_bytes[i] != want_bytes[i]) RC_FAIL(std::string(info.name) + " pack byte " + std::to_string(i));
  }
  RC_ASSERT(GuardIntact(got_words, kGuardWord));
  RC_ASSERT(GuardIntact(got_bytes, kGuardByte));
  std::vector<std::uint8_t> back = Guarded(sizes.codes, kGuardByte);
  a.direction = registry::PackDirection::kUnpack;
  a.in_words = want_words.data();
  a.in_bytes = want_bytes.data();
  a.codes_out = back.data();
  RC_ASSERT(unpack->run(a).ok);
  for (std::size_t i = 0; i < sizes.codes; ++i) {
    if (back[i] != (codes[i] & (info.code_bits == 8 ? 0xFF : 0xF))) RC_FAIL(std::string(info.name) + " unpack code " + std::to_string(i));
  }
  RC_ASSERT(GuardIntact(back, kGuardByte));
}

TEST_P(SimdPacking, GemmLayoutsAndSwizzledScalesMatchModel) {
  testing::CheckAtLevel(testing::LevelCounts{20, 150, 2000}, [this] { GemmLayoutMatchesModel(target()); });
}

TEST_P(SimdPacking, ShapeErrorsAreReported) {
  std::vector<std::uint8_t> q(12 * 8);
  std::vector<std::uint32_t> words(12);
  EXPECT_FALSE(simd::PackGptqQweight(target(), q.data(), 12, 8, words.data()).ok);
  EXPECT_FALSE(simd::PackAwq(target(), q.data(), 8, 12, words.data()).ok);
  EXPECT_FALSE(simd::PackGptqQzeros(target(), q.data(), 1, 12, words.data()).ok);
  EXPECT_TRUE(simd::PackAwq(target(), q.data(), 12, 8, words.data()).ok);
}

}  // namespace
}  // namespace lowbit
