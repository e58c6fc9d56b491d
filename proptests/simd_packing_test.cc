// SIMD packing (simd.h PackNibbles with an order, UnpackNibbles,
// Pack/UnpackGptqQweight, Pack/UnpackAwq) against formats/block/packing.h on
// every compiled target: random codes with stray high bits (the model masks
// them), random words, odd counts and column counts, unaligned buffers.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/simd/simd.h"

namespace lowbit {
namespace {

std::vector<std::int64_t> RunnableTargets() {
  std::vector<std::int64_t> v;
  for (std::int64_t t : simd::CompiledTargets()) {
    if (simd::TargetAvailable(t)) v.push_back(t);
  }
  return v;
}

// Mostly 4-bit codes, sometimes any byte.
std::vector<std::uint8_t> Codes(std::size_t n) {
  const bool any_byte = *rc::gen::inRange(0, 4) == 0;
  std::vector<std::uint8_t> v(n);
  for (auto& c : v) c = any_byte ? *rc::gen::arbitrary<std::uint8_t>() : *rc::gen::inRange<std::uint8_t>(0, 16);
  return v;
}

// Draws per property at smoke / ci / full.
constexpr testing::LevelCounts kDraws{100, 1000, 20000};

void NibblesMatchModel() {
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
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint8_t> packed(bytes + 1, 0xCD);
    RC_ASSERT(simd::PackNibbles(target, order, in, count, packed.data()).ok);
    for (std::size_t i = 0; i < bytes; ++i) {
      if (packed[i] != expected[i]) {
        RC_FAIL(std::string("pack on ") + simd::TargetName(target) + " byte " + std::to_string(i));
      }
    }
    RC_ASSERT(packed[bytes] == 0xCD);
    std::vector<std::uint8_t> codes_out(count + 1, 0xCD);
    RC_ASSERT(simd::UnpackNibbles(target, order, expected.data(), count, codes_out.data()).ok);
    for (std::size_t i = 0; i < count; ++i) RC_ASSERT(codes_out[i] == unpacked[i]);
    RC_ASSERT(codes_out[count] == 0xCD);
  }
}

void GptqMatchesModel() {
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
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint32_t> got(n_words + 1, 0xCDCDCDCDu);
    RC_ASSERT(simd::PackGptqQweight(target, q.data(), k_rows, n_cols, got.data()).ok);
    for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
    RC_ASSERT(got[n_words] == 0xCDCDCDCDu);
    std::vector<std::uint8_t> codes(k_rows * n_cols + 1, 0xCD);
    RC_ASSERT(simd::UnpackGptqQweight(target, words.data(), k_rows, n_cols, codes.data()).ok);
    for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(codes[i] == unpacked[i]);
    RC_ASSERT(codes[unpacked.size()] == 0xCD);
  }
}

void GptqQzerosMatchModel() {
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
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint32_t> got(n_words + 1, 0xCDCDCDCDu);
    RC_ASSERT(simd::PackGptqQzeros(target, zeros.data(), groups, n_cols, got.data()).ok);
    for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
    RC_ASSERT(got[n_words] == 0xCDCDCDCDu);
    std::vector<std::uint8_t> back(groups * n_cols + 1, 0xCD);
    RC_ASSERT(simd::UnpackGptqQzeros(target, words.data(), groups, n_cols, back.data()).ok);
    for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(back[i] == unpacked[i]);
    RC_ASSERT(back[unpacked.size()] == 0xCD);
  }
}

void AwqMatchesModel() {
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
  for (std::int64_t target : RunnableTargets()) {
    std::vector<std::uint32_t> got(n_words + 1, 0xCDCDCDCDu);
    RC_ASSERT(simd::PackAwq(target, q.data(), rows, n_cols, got.data()).ok);
    for (std::size_t i = 0; i < n_words; ++i) RC_ASSERT(got[i] == expected[i]);
    RC_ASSERT(got[n_words] == 0xCDCDCDCDu);
    std::vector<std::uint8_t> codes(rows * n_cols + 1, 0xCD);
    RC_ASSERT(simd::UnpackAwq(target, words.data(), rows, n_cols, codes.data()).ok);
    for (std::size_t i = 0; i < unpacked.size(); ++i) RC_ASSERT(codes[i] == unpacked[i]);
    RC_ASSERT(codes[unpacked.size()] == 0xCD);
  }
}

TEST(SimdPacking, NibblesEitherOrderMatchModel) { testing::CheckAtLevel(kDraws, NibblesMatchModel); }
TEST(SimdPacking, GptqQweightMatchesModel) { testing::CheckAtLevel(kDraws, GptqMatchesModel); }
TEST(SimdPacking, GptqQzerosMatchModel) { testing::CheckAtLevel(kDraws, GptqQzerosMatchModel); }
TEST(SimdPacking, AwqMatchesModel) { testing::CheckAtLevel(kDraws, AwqMatchesModel); }

// The AWQ interleave on a literal: columns 0..7 = codes 0..7 give nibbles
// 0, 2, 4, 6, 1, 3, 5, 7 from the low end (packing.h kAwqOrderMap).
TEST(SimdPacking, AwqLiteralWord) {
  const std::uint8_t q[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (std::int64_t target : RunnableTargets()) {
    std::uint32_t word = 0;
    ASSERT_TRUE(simd::PackAwq(target, q, 1, 8, &word).ok);
    EXPECT_EQ(word, 0x75316420u) << simd::TargetName(target);
  }
}

TEST(SimdPacking, ShapeErrorsAreReported) {
  std::vector<std::uint8_t> q(12 * 8);
  std::vector<std::uint32_t> words(12);
  EXPECT_FALSE(simd::PackGptqQweight(0, q.data(), 12, 8, words.data()).ok);
  EXPECT_FALSE(simd::PackAwq(0, q.data(), 8, 12, words.data()).ok);
  EXPECT_TRUE(simd::PackAwq(0, q.data(), 12, 8, words.data()).ok);
}

}  // namespace
}  // namespace lowbit
