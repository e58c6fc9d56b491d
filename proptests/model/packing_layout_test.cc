// Packing orders (docs/formats-reference.md §8.3, §9 row 13): one literal test per
// convention, and pack-then-unpack is the identity for each.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lowbit/formats/block/packing.h"

namespace lowbit::block {
namespace {

TEST(Row13NibbleOrderTest, OnnxAndMxPutElementZeroInTheLowNibble) {
  // ONNX: "the first element is stored in the 4 LSB".
  const std::uint8_t codes[] = {0x1, 0xA, 0x7};
  std::uint8_t out[2] = {0xEE, 0xEE};
  PackNibbles(codes, 3, NibbleOrder::kLowFirst, out);
  EXPECT_EQ(out[0], 0xA1);
  EXPECT_EQ(out[1], 0x07);  // odd count: the high nibble is 0
}

TEST(Row13NibbleOrderTest, TinygemmInputPutsElementZeroInTheHighNibble) {
  // torchao: (q[::2] << 4 | q[1::2]).
  const std::uint8_t codes[] = {0x1, 0xA};
  std::uint8_t out[1] = {};
  PackNibbles(codes, 2, NibbleOrder::kHighFirst, out);
  EXPECT_EQ(out[0], 0x1A);
}

TEST(Row13NibbleOrderTest, GptqPacksEightRowsOfKPerWordLsbFirst) {
  // K = 8, N = 1, q[k] = k + 1: row j in bits 4j.. -> 0x87654321.
  const std::uint8_t q[] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::uint32_t word = 0;
  PackGptqQweight(q, 8, 1, &word);
  EXPECT_EQ(word, 0x87654321u);
}

TEST(Row13NibbleOrderTest, GptqStoresZeroMinusOne) {
  // Symmetric 4-bit GPTQ zero point 8 is stored as 7 (docs/formats-reference.md §8.3).
  const std::vector<std::uint8_t> zeros(8, 8);
  std::uint32_t word = 0;
  PackGptqQzeros(zeros.data(), 1, 8, &word);
  EXPECT_EQ(word, 0x77777777u);
  std::uint8_t back[8] = {};
  UnpackGptqQzeros(&word, 1, 8, back);
  EXPECT_EQ(std::vector<std::uint8_t>(back, back + 8), zeros);
}

TEST(Row13NibbleOrderTest, AwqInterleavesColumns02461357) {
  // Column n holds code n: nibble i holds column order_map[i] ->
  // nibbles 0,2,4,6,1,3,5,7 from the LSB = 0x75316420.
  const std::uint8_t q[] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::uint32_t word = 0;
  PackAwq(q, 1, 8, &word);
  EXPECT_EQ(word, 0x75316420u);
}

TEST(BitStreamTest, Fp6FourCodesInThreeBytesLsbFirst) {
  // Code 1 = 0x3F occupies bits 6..11: byte 0 bits 6,7 and byte 1 bits 0..3.
  const std::uint8_t codes[] = {0x00, 0x3F, 0x00, 0x21};
  std::uint8_t out[3] = {};
  PackBitStreamLsbFirst(codes, 4, 6, out);
  EXPECT_EQ(PackedBitStreamBytes(4, 6), 3);
  EXPECT_EQ(out[0], 0xC0);
  EXPECT_EQ(out[1], 0x0F);
  EXPECT_EQ(out[2], 0x84);  // 0x21 << 2
}

RC_GTEST_PROP(PackingRoundTrip, UnpackOfPackIsTheIdentity, ()) {
  const int n = *rc::gen::inRange(1, 65);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
  for (auto& c : codes) c = *rc::gen::inRange<std::uint8_t>(0, 16);
  for (NibbleOrder order : {NibbleOrder::kLowFirst, NibbleOrder::kHighFirst}) {
    std::vector<std::uint8_t> packed(static_cast<std::size_t>((n + 1) / 2));
    std::vector<std::uint8_t> back(codes.size());
    PackNibbles(codes.data(), n, order, packed.data());
    UnpackNibbles(packed.data(), n, order, back.data());
    RC_ASSERT(back == codes);
  }
  std::vector<std::uint8_t> fp6(codes.size());
  for (auto& c : fp6) c = *rc::gen::inRange<std::uint8_t>(0, 64);
  std::vector<std::uint8_t> stream(static_cast<std::size_t>(PackedBitStreamBytes(n, 6)));
  std::vector<std::uint8_t> fp6_back(fp6.size());
  PackBitStreamLsbFirst(fp6.data(), n, 6, stream.data());
  UnpackBitStreamLsbFirst(stream.data(), n, 6, fp6_back.data());
  RC_ASSERT(fp6_back == fp6);

  // Matrices: K = 8 * a rows, N = 8 * b columns.
  const int k = 8 * *rc::gen::inRange(1, 4);
  const int cols = 8 * *rc::gen::inRange(1, 4);
  std::vector<std::uint8_t> q(static_cast<std::size_t>(k * cols));
  for (auto& c : q) c = *rc::gen::inRange<std::uint8_t>(0, 16);
  std::vector<std::uint32_t> words(q.size() / 8);
  std::vector<std::uint8_t> q_back(q.size());
  PackGptqQweight(q.data(), k, cols, words.data());
  UnpackGptqQweight(words.data(), k, cols, q_back.data());
  RC_ASSERT(q_back == q);
  PackAwq(q.data(), k, cols, words.data());
  UnpackAwq(words.data(), k, cols, q_back.data());
  RC_ASSERT(q_back == q);
  PackGptqQzeros(q.data(), k, cols, words.data());
  UnpackGptqQzeros(words.data(), k, cols, q_back.data());
  RC_ASSERT(q_back == q);
}

}  // namespace
}  // namespace lowbit::block
