// Packing rows (registry packing_entry.h), one gtest per row of the
// registry's packing table as RegisterAllBackends gives it on this build:
// pack then unpack is the identity on valid codes (0..15, or any byte for
// the swizzled scales) and unpack then pack on any words (on any valid
// packing for the layouts that pad), every non-scalar row equals the scalar row (the model,
// formats/block/packing.h) through the harness (lowbit::check CheckPacking),
// and every row rejects bad arguments with the registry's message before
// touching memory. The layout table and its size rules are typed out here,
// and literal words from the layouts' definitions pin the scalar rows
// themselves. LOWBIT_TEST_LEVEL picks how many sizes run.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#include "lowbit/check/text.h"
#include "lowbit/registry/registry.h"
#include "test_level.h"

namespace lowbit::registry {
namespace {

using ::lowbit::testing::AllBackends;

check::Level CheckLevel() {
  switch (testing::CurrentTestLevel()) {
    case testing::TestLevel::kSmoke: return check::Level::kSmoke;
    case testing::TestLevel::kCi: return check::Level::kCi;
    case testing::TestLevel::kFull: return check::Level::kFull;
  }
  return check::Level::kCi;
}

std::string TestName(std::string text) {
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return text;
}

struct Rng {
  std::uint64_t s;
  std::uint64_t Next() {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

const PackingLayoutInfo& InfoOf(PackingLayout layout) { return *FindPackingLayoutInfo(layout); }

// Shapes [rows][cols] the layout takes, odd and boundary ones included: the
// dimension the layout constrains runs over multiples of 8 (one word, two,
// past a 16-word vector), the other over odd counts.
std::vector<std::pair<std::size_t, std::size_t>> ValidShapes(PackingLayout layout) {
  const PackingLayoutInfo& info = InfoOf(layout);
  std::vector<std::size_t> small = {0, 1, 2, 3, 7, 8, 9, 17};
  if (testing::CurrentTestLevel() != testing::TestLevel::kSmoke) small.insert(small.end(), {15, 16, 31, 33, 65});
  if (testing::CurrentTestLevel() == testing::TestLevel::kFull) small.insert(small.end(), {129, 257, 1001});
  // Rows in units of rows_multiple; a padding layout also gets one whole
  // padded tile, one row past it and a partial third (tinygemm 8-row tiles,
  // 128-row scale tiles), and the torch CPU layouts whole 64-row blocks
  // (AVX512) and a short block after them.
  std::vector<std::size_t> row_units = {1, 2, 3};
  const std::size_t pad = static_cast<std::size_t>(info.rows_padded_to);
  if (pad > 1) row_units.insert(row_units.end(), {pad, pad + 1, 2 * pad + 3});
  if (TorchCpuInt4packIsaOf(layout) >= 0) row_units.insert(row_units.end(), {4, 6, 8, 10});
  std::vector<std::pair<std::size_t, std::size_t>> shapes;
  for (std::size_t r : row_units) {
    for (std::size_t c : small) {
      shapes.push_back({r * static_cast<std::size_t>(info.rows_multiple), c * static_cast<std::size_t>(info.cols_multiple)});
    }
  }
  return shapes;
}

// ---- the layout table --------------------------------------------------------

// Typed out from formats/block/packing.h's comments, so that a wrong row
// cannot size every caller's buffers wrongly in agreement.
TEST(PackingLayouts, TableMatchesPackingH) {
  struct Expected {
    PackingLayout layout;
    const char* name;
    PackedUnit unit;
    int per_unit, rows_multiple, cols_multiple;
    int code_bits = 4, rows_padded_to = 1, cols_padded_to = 1;
  };
  // The GEMM layouts and swizzled scales from their sources
  // (tinygemm_int4pack.h: K a multiple of inner_k_tiles * 16, N padded to
  // 8-row tiles; the CPU op's N % 16 and K % 2; marlin_layout.h: K % 16,
  // N % 64; swizzled_scales.h: 128 x 4 tiles of whole bytes).
  const Expected kExpected[] = {
      {PackingLayout::kNibblesLowFirst, "nibbles-low-first", PackedUnit::kByte, 2, 1, 1},
      {PackingLayout::kNibblesHighFirst, "nibbles-high-first", PackedUnit::kByte, 2, 1, 1},
      {PackingLayout::kGptqQweight, "gptq-qweight", PackedUnit::kWord32, 8, 8, 1},
      {PackingLayout::kGptqQzeros, "gptq-qzeros", PackedUnit::kWord32, 8, 1, 8},
      {PackingLayout::kAwq, "awq", PackedUnit::kWord32, 8, 1, 8},
      {PackingLayout::kTinygemmInt4packK2, "tinygemm-int4pack-k2", PackedUnit::kWord32, 8, 1, 32, 4, 8, 1},
      {PackingLayout::kTinygemmInt4packK4, "tinygemm-int4pack-k4", PackedUnit::kWord32, 8, 1, 64, 4, 8, 1},
      {PackingLayout::kTinygemmInt4packK8, "tinygemm-int4pack-k8", PackedUnit::kWord32, 8, 1, 128, 4, 8, 1},
      {PackingLayout::kTorchCpuInt4packAvx512, "torch-cpu-int4pack-avx512", PackedUnit::kByte, 2, 16, 2},
      {PackingLayout::kTorchCpuInt4packAvx2, "torch-cpu-int4pack-avx2", PackedUnit::kByte, 2, 16, 2},
      {PackingLayout::kTorchCpuInt4packDefault, "torch-cpu-int4pack-default", PackedUnit::kByte, 2, 16, 2},
      {PackingLayout::kMarlin, "marlin", PackedUnit::kWord32, 8, 16, 64},
      {PackingLayout::kSwizzledScales, "swizzled-scales", PackedUnit::kByte, 1, 1, 1, 8, 128, 4},
  };
  ASSERT_EQ(std::size(kExpected), std::size(kPackingLayoutInfo));
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    const PackingLayoutInfo& info = InfoOf(e.layout);
    EXPECT_STREQ(PackingLayoutName(e.layout), e.name);
    EXPECT_EQ(info.unit, e.unit);
    EXPECT_EQ(info.codes_per_unit, e.per_unit);
    EXPECT_EQ(info.rows_multiple, e.rows_multiple);
    EXPECT_EQ(info.cols_multiple, e.cols_multiple);
    EXPECT_EQ(info.code_bits, e.code_bits);
    EXPECT_EQ(info.rows_padded_to, e.rows_padded_to);
    EXPECT_EQ(info.cols_padded_to, e.cols_padded_to);
    PackingLayout parsed{};
    ASSERT_TRUE(ParsePackingLayout(e.name, &parsed));
    EXPECT_EQ(parsed, e.layout);
  }
  PackingLayout unused{};
  EXPECT_FALSE(ParsePackingLayout("nibbles", &unused));
  EXPECT_EQ(FindPackingLayoutInfo(static_cast<PackingLayout>(77)), nullptr);
  EXPECT_STREQ(PackingLayoutName(static_cast<PackingLayout>(77)), "unknown-packing");
  EXPECT_STREQ(PackDirectionName(PackDirection::kPack), "pack");
  EXPECT_STREQ(PackDirectionName(PackDirection::kUnpack), "unpack");
}

TEST(PackingLayouts, BufferSizesFollowTheShapeRules) {
  // (n + 1) / 2 bytes; K / 8 * N words; groups * N / 8 words; rows * N / 8.
  PackingSizes s = PackingBufferSizes(PackingLayout::kNibblesLowFirst, 1, 5);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.codes, 5u);
  EXPECT_EQ(s.packed_units, 3u);
  s = PackingBufferSizes(PackingLayout::kNibblesHighFirst, 3, 3);
  EXPECT_EQ(s.packed_units, 5u);
  s = PackingBufferSizes(PackingLayout::kGptqQweight, 16, 3);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.packed_units, 6u);
  s = PackingBufferSizes(PackingLayout::kGptqQzeros, 2, 16);
  EXPECT_EQ(s.packed_units, 4u);
  s = PackingBufferSizes(PackingLayout::kAwq, 3, 8);
  EXPECT_EQ(s.packed_units, 3u);
  s = PackingBufferSizes(PackingLayout::kAwq, 0, 8);
  ASSERT_TRUE(s.ok);
  EXPECT_EQ(s.packed_units, 0u);

  s = PackingBufferSizes(PackingLayout::kGptqQweight, 12, 8);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.error.find("K = 12 is not a multiple of 8"), std::string::npos) << s.error;
  s = PackingBufferSizes(PackingLayout::kGptqQzeros, 1, 12);
  EXPECT_NE(s.error.find("N = 12 is not a multiple of 8"), std::string::npos) << s.error;
  s = PackingBufferSizes(PackingLayout::kAwq, 8, 4);
  EXPECT_NE(s.error.find("N = 4 is not a multiple of 8"), std::string::npos) << s.error;
  s = PackingBufferSizes(PackingLayout::kNibblesLowFirst, SIZE_MAX / 2, 3);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.error.find("overflow"), std::string::npos) << s.error;
  s = PackingBufferSizes(static_cast<PackingLayout>(77), 1, 1);
  EXPECT_NE(s.error.find("unknown packing layout 77"), std::string::npos) << s.error;

  // tinygemm: int32 [ceil(N / 8)][K / (t * 16)][32][t / 2], so 9 x 64 with
  // t = 2 is 2 * 2 * 32 * 1 = 128 words; K must be a multiple of t * 16.
  s = PackingBufferSizes(PackingLayout::kTinygemmInt4packK2, 9, 64);
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.codes, 576u);
  EXPECT_EQ(s.packed_units, 128u);
  s = PackingBufferSizes(PackingLayout::kTinygemmInt4packK8, 8, 64);
  EXPECT_NE(s.error.find("K = 64 is not a multiple of 128"), std::string::npos) << s.error;
  // torch CPU: uint8 [N][K / 2]; N % 16.
  s = PackingBufferSizes(PackingLayout::kTorchCpuInt4packAvx512, 48, 6);
  EXPECT_EQ(s.packed_units, 144u);
  s = PackingBufferSizes(PackingLayout::kTorchCpuInt4packAvx2, 8, 6);
  EXPECT_NE(s.error.find("N = 8 is not a multiple of 16"), std::string::npos) << s.error;
  // Marlin: int32 [K / 16][N * 16 / 8].
  s = PackingBufferSizes(PackingLayout::kMarlin, 32, 128);
  EXPECT_EQ(s.packed_units, 2u * 256u);
  s = PackingBufferSizes(PackingLayout::kMarlin, 16, 96);
  EXPECT_NE(s.error.find("N = 96 is not a multiple of 64"), std::string::npos) << s.error;
  // Swizzled scales: 32 * ceil(rows / 128) * 16 * ceil(cols / 4) bytes.
  s = PackingBufferSizes(PackingLayout::kSwizzledScales, 129, 5);
  EXPECT_EQ(s.codes, 645u);
  EXPECT_EQ(s.packed_units, 2048u);
  s = PackingBufferSizes(PackingLayout::kSwizzledScales, SIZE_MAX - 3, 1);
  EXPECT_NE(s.error.find("overflow"), std::string::npos) << s.error;  // rounding up to 128 wraps
}

// Literal packed values from the layouts' definitions (packing.h comments:
// ONNX's "first element in the 4 LSB", torchao's q[::2] << 4 | q[1::2],
// AutoGPTQ's zeros - 1, AWQ's order_map), through the scalar rows.
TEST(PackingLayouts, ScalarRowsGiveTheLiteralWords) {
  const auto pack = [](PackingLayout layout, std::size_t rows, std::size_t cols, const std::uint8_t* codes,
                       std::uint8_t* bytes, std::uint32_t* words) {
    const PackingEntry* e = AllBackends().FindPacking(layout, PackDirection::kPack, "scalar");
    EXPECT_NE(e, nullptr);
    PackingArgs a;
    a.layout = layout;
    a.rows = rows;
    a.cols = cols;
    a.codes = codes;
    a.packed_bytes = bytes;
    a.packed_words = words;
    return e != nullptr && e->run(a).ok;
  };
  const std::uint8_t three[3] = {0x1, 0x2, 0x3};
  std::uint8_t bytes[2] = {0xEE, 0xEE};
  ASSERT_TRUE(pack(PackingLayout::kNibblesLowFirst, 1, 3, three, bytes, nullptr));
  EXPECT_EQ(bytes[0], 0x21);
  EXPECT_EQ(bytes[1], 0x03);  // an odd last code alone, the other nibble 0
  ASSERT_TRUE(pack(PackingLayout::kNibblesHighFirst, 1, 3, three, bytes, nullptr));
  EXPECT_EQ(bytes[0], 0x12);
  EXPECT_EQ(bytes[1], 0x30);
  const std::uint8_t eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::uint32_t word = 0;
  ASSERT_TRUE(pack(PackingLayout::kAwq, 1, 8, eight, nullptr, &word));
  EXPECT_EQ(word, 0x75316420u);
  ASSERT_TRUE(pack(PackingLayout::kGptqQweight, 8, 1, eight, nullptr, &word));  // a column of K
  EXPECT_EQ(word, 0x76543210u);
  ASSERT_TRUE(pack(PackingLayout::kGptqQzeros, 1, 8, eight, nullptr, &word));  // zero - 1; 0 -> 0xF
  EXPECT_EQ(word, 0x6543210Fu);

  // tinygemm k2, N = 1, K = 32, q[0][k] = k & 15: lane 0 holds k = 0, 8, 16,
  // 24 then 1, 9, 17, 25 (int4mm.cu's v[3]L .. v[0]H): 0x91918080; lanes 4..31
  // are padding rows (0).
  std::uint8_t row[32];
  for (int k = 0; k < 32; ++k) row[k] = static_cast<std::uint8_t>(k & 15);
  std::uint32_t tg[32];
  ASSERT_TRUE(pack(PackingLayout::kTinygemmInt4packK2, 1, 32, row, nullptr, tg));
  EXPECT_EQ(tg[0], 0x91918080u);
  EXPECT_EQ(tg[1], 0xB3B3A2A2u);
  EXPECT_EQ(tg[4], 0u);
  // torch CPU AVX512, 64 x 2 codes, code 5 at (32, 0) and 9 at (16, 1):
  // (32, 0) pairs with row 0 in byte 0's high nibble; (16, 1) is byte
  // 32 + 16's low nibble.
  std::vector<std::uint8_t> cpu_codes(128, 0), cpu(64, 0xEE);
  cpu_codes[32 * 2 + 0] = 5;
  cpu_codes[16 * 2 + 1] = 9;
  ASSERT_TRUE(pack(PackingLayout::kTorchCpuInt4packAvx512, 64, 2, cpu_codes.data(), cpu.data(), nullptr));
  EXPECT_EQ(cpu[0], 0x50);
  EXPECT_EQ(cpu[48], 0x09);
  // Marlin, K = 16, N = 64, q[k][n] = (k + n) & 15: word 0 is tile 0's
  // (0,0), (8,0), (0,8), (8,8), (1,0), (9,0), (1,8), (9,8) -> 0x19910880.
  std::vector<std::uint8_t> mq(16 * 64);
  for (int k = 0; k < 16; ++k) {
    for (int n = 0; n < 64; ++n) mq[static_cast<std::size_t>(k * 64 + n)] = static_cast<std::uint8_t>((k + n) & 15);
  }
  std::vector<std::uint32_t> mw(128);
  ASSERT_TRUE(pack(PackingLayout::kMarlin, 16, 64, mq.data(), nullptr, mw.data()));
  EXPECT_EQ(mw[0], 0x19910880u);
  // Swizzled scales, 33 x 1: scale (r, 0) = r + 0x80 (whole bytes) lands at
  // (r % 32) * 16 + (r / 32) * 4; everything else is padding 0.
  std::vector<std::uint8_t> sc(33), sw(512, 0xEE);
  for (int r = 0; r < 33; ++r) sc[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(r + 0x80);
  ASSERT_TRUE(pack(PackingLayout::kSwizzledScales, 33, 1, sc.data(), sw.data(), nullptr));
  EXPECT_EQ(sw[0], 0x80);
  EXPECT_EQ(sw[16], 0x81);
  EXPECT_EQ(sw[4], 0xA0);   // row 32
  EXPECT_EQ(sw[1], 0x00);   // column 1: padding
  EXPECT_EQ(sw[511], 0x00);
}

// ---- every row ---------------------------------------------------------------

struct PackingParam {
  const PackingEntry* entry;
};
void PrintTo(const PackingParam& p, std::ostream* os) {
  *os << PackDirectionName(p.entry->direction) << " " << PackingLayoutName(p.entry->layout) << " "
      << p.entry->backend;
}

std::vector<PackingParam> Rows(bool with_scalar) {
  std::vector<PackingParam> rows;
  for (const PackingEntry& entry : AllBackends().PackingEntries()) {
    if (with_scalar || entry.backend != "scalar") rows.push_back({&entry});
  }
  return rows;
}

std::string ParamName(const ::testing::TestParamInfo<PackingParam>& info) {
  const PackingEntry& e = *info.param.entry;
  return TestName(std::string(PackDirectionName(e.direction)) + "_" + PackingLayoutName(e.layout) + "_" + e.backend);
}

class PackingRow : public ::testing::TestWithParam<PackingParam> {
 protected:
  const PackingEntry& entry() const { return *GetParam().entry; }
  // The same backend's row for the other direction.
  const PackingEntry& Inverse() const {
    const PackDirection other =
        entry().direction == PackDirection::kPack ? PackDirection::kUnpack : PackDirection::kPack;
    const PackingEntry* e = AllBackends().FindPacking(entry().layout, other, entry().backend);
    EXPECT_NE(e, nullptr) << entry().backend << " has no " << PackDirectionName(other) << " row";
    return e != nullptr ? *e : entry();
  }
};

// Pack rows: unpack(pack(codes)) == codes for codes 0..15. Unpack rows:
// pack(unpack(packed)) == packed for any words, and for any bytes whose
// unused last nibble (odd counts) is 0.
TEST_P(PackingRow, RoundTripIsTheIdentity) {
  if (!entry().available()) GTEST_SKIP() << entry().backend << " is not available on this machine";
  const PackingEntry& inverse = Inverse();
  const PackingEntry& pack = entry().direction == PackDirection::kPack ? entry() : inverse;
  const PackingEntry& unpack = entry().direction == PackDirection::kPack ? inverse : entry();
  const PackingLayoutInfo& info = InfoOf(entry().layout);
  const bool bytes = info.unit == PackedUnit::kByte;
  Rng rng{static_cast<std::uint64_t>(entry().layout) * 7919 + 1};
  int shapes = 0;
  for (const auto& [rows, cols] : ValidShapes(entry().layout)) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    const PackingSizes sizes = PackingBufferSizes(entry().layout, rows, cols);
    ASSERT_TRUE(sizes.ok) << sizes.error;
    ++shapes;
    std::vector<std::uint8_t> codes(sizes.codes), codes_back(sizes.codes);
    std::vector<std::uint8_t> packed_bytes(bytes ? sizes.packed_units : 0);
    std::vector<std::uint32_t> packed_words(bytes ? 0 : sizes.packed_units);
    PackingArgs a;
    a.layout = entry().layout;
    a.rows = rows;
    a.cols = cols;
    const std::uint8_t code_mask = info.code_bits == 8 ? 0xFF : 0x0F;
    const bool pads = info.rows_padded_to > 1 || info.cols_padded_to > 1;
    if (entry().direction == PackDirection::kPack) {
      for (std::uint8_t& c : codes) c = static_cast<std::uint8_t>(rng.Next() & code_mask);
    } else if (pads) {
      // Padding unpacks to nothing and packs as 0: a valid packed input has
      // 0 there, so it is made by the scalar row from random codes.
      std::vector<std::uint8_t> random_codes(sizes.codes);
      for (std::uint8_t& c : random_codes) c = static_cast<std::uint8_t>(rng.Next() & code_mask);
      PackingArgs p;
      p.layout = entry().layout;
      p.rows = rows;
      p.cols = cols;
      p.codes = random_codes.data();
      p.packed_bytes = packed_bytes.data();
      p.packed_words = packed_words.data();
      ASSERT_TRUE(AllBackends().FindPacking(entry().layout, PackDirection::kPack, "scalar")->run(p).ok);
    } else {
      for (std::uint8_t& b : packed_bytes) b = static_cast<std::uint8_t>(rng.Next());
      if (bytes && sizes.codes % 2 == 1) packed_bytes.back() &= info.layout == PackingLayout::kNibblesLowFirst ? 0x0F : 0xF0;
      for (std::uint32_t& w : packed_words) w = static_cast<std::uint32_t>(rng.Next());
    }
    const std::vector<std::uint8_t> bytes_in = packed_bytes;
    const std::vector<std::uint32_t> words_in = packed_words;
    if (entry().direction == PackDirection::kPack) {
      a.direction = PackDirection::kPack;
      a.codes = codes.data();
      a.packed_bytes = packed_bytes.data();
      a.packed_words = packed_words.data();
      ASSERT_TRUE(pack.run(a).ok);
      a.direction = PackDirection::kUnpack;
      a.in_bytes = packed_bytes.data();
      a.in_words = packed_words.data();
      a.codes_out = codes_back.data();
      ASSERT_TRUE(unpack.run(a).ok);
      ASSERT_EQ(codes_back, codes);
    } else {
      a.direction = PackDirection::kUnpack;
      a.in_bytes = bytes_in.data();
      a.in_words = words_in.data();
      a.codes_out = codes.data();
      ASSERT_TRUE(unpack.run(a).ok);
      for (std::uint8_t c : codes) ASSERT_LE(c, code_mask);
      a.direction = PackDirection::kPack;
      a.codes = codes.data();
      a.packed_bytes = packed_bytes.data();
      a.packed_words = packed_words.data();
      ASSERT_TRUE(pack.run(a).ok);
      ASSERT_EQ(packed_bytes, bytes_in);
      ASSERT_EQ(packed_words, words_in);
    }
  }
  EXPECT_GT(shapes, 0);
}

// Bad arguments: the registry's message, nothing written.
TEST_P(PackingRow, BadArgumentsAreErrorsNamingTheProblem) {
  const PackingLayoutInfo& info = InfoOf(entry().layout);
  const bool pack = entry().direction == PackDirection::kPack;
  const bool bytes = info.unit == PackedUnit::kByte;
  const std::string prefix = std::string(info.name) + " " + PackDirectionName(entry().direction) + ": ";
  std::vector<std::uint8_t> codes(64 * 64, 0x5), out_codes(64 * 64, 0xEE), byte_buf(64 * 64, 0xEE);
  std::vector<std::uint32_t> word_buf(64 * 64, 0xEEEEEEEEu);
  const auto args = [&](std::size_t rows, std::size_t cols) {
    PackingArgs a;
    a.layout = entry().layout;
    a.direction = entry().direction;
    a.rows = rows;
    a.cols = cols;
    a.codes = codes.data();
    a.packed_bytes = byte_buf.data();
    a.packed_words = word_buf.data();
    a.in_bytes = byte_buf.data();
    a.in_words = word_buf.data();
    a.codes_out = out_codes.data();
    return a;
  };
  const auto expect_error = [&](const PackingArgs& a, const std::string& text) {
    const Status s = entry().run(a);
    EXPECT_FALSE(s.ok) << text;
    EXPECT_NE(s.message.find(text), std::string::npos) << s.message;
  };
  const std::size_t rows = 2 * static_cast<std::size_t>(info.rows_multiple);
  const std::size_t cols = 2 * static_cast<std::size_t>(info.cols_multiple);
  PackingArgs a = args(rows, cols);
  if (pack) {
    a.codes = nullptr;
    expect_error(a, prefix + "null codes input with " + std::to_string(rows * cols) + " codes");
    a = args(rows, cols);
    if (bytes) a.packed_bytes = nullptr;
    else a.packed_words = nullptr;
    expect_error(a, prefix + (bytes ? "null packed bytes output" : "null packed words output"));
  } else {
    if (bytes) a.in_bytes = nullptr;
    else a.in_words = nullptr;
    expect_error(a, prefix + (bytes ? "null packed bytes input" : "null packed words input"));
    a = args(rows, cols);
    a.codes_out = nullptr;
    expect_error(a, prefix + "null codes output");
  }
  // A dimension that is not a multiple of what the layout needs.
  if (info.rows_multiple > 1) {
    expect_error(args(rows + 1, cols), prefix + info.rows_name + " = " + std::to_string(rows + 1) +
                                           " is not a multiple of " + std::to_string(info.rows_multiple));
  }
  if (info.cols_multiple > 1) {
    expect_error(args(rows, cols + 1), prefix + info.cols_name + " = " + std::to_string(cols + 1) +
                                           " is not a multiple of " + std::to_string(info.cols_multiple));
  }
  PackingArgs unknown = args(rows, cols);
  unknown.layout = static_cast<PackingLayout>(77);
  expect_error(unknown, "unknown packing layout 77");
  PackingArgs direction = args(rows, cols);
  direction.direction = static_cast<PackDirection>(9);
  expect_error(direction, std::string(info.name) + ": unknown direction 9");
  // Nothing was written by any of the failed calls.
  for (std::uint8_t b : byte_buf) ASSERT_EQ(b, 0xEE);
  for (std::uint32_t w : word_buf) ASSERT_EQ(w, 0xEEEEEEEEu);
  for (std::uint8_t c : out_codes) ASSERT_EQ(c, 0xEE);
  // Zero codes with null buffers is a valid empty call.
  PackingArgs empty;
  empty.layout = entry().layout;
  empty.direction = entry().direction;
  empty.rows = 0;
  empty.cols = cols;
  EXPECT_TRUE(entry().run(empty).ok) << entry().run(empty).message;
}

INSTANTIATE_TEST_SUITE_P(Registry, PackingRow, ::testing::ValuesIn(Rows(/*with_scalar=*/true)), ParamName);

// Every non-scalar row against the scalar row through the harness.
class PackingBackendRow : public ::testing::TestWithParam<PackingParam> {};

TEST_P(PackingBackendRow, MatchesTheScalarRow) {
  const PackingEntry& entry = *GetParam().entry;
  if (!entry.available()) GTEST_SKIP() << entry.backend << " is not available on this machine";
  const PackingEntry* scalar = AllBackends().FindPacking(entry.layout, entry.direction, "scalar");
  ASSERT_NE(scalar, nullptr);
  const check::Row row = check::CheckPacking(entry, scalar, CheckLevel());
  ASSERT_TRUE(row.skipped.empty()) << row.skipped;
  EXPECT_GT(row.checked, 0u);
  std::string report;
  for (const check::Mismatch& m : row.first_mismatches) report += "\n  " + check::DescribeMismatch(row, m);
  EXPECT_EQ(row.mismatches, 0u) << report;
}

// A build without SIMD has only scalar packing rows.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PackingBackendRow);
INSTANTIATE_TEST_SUITE_P(Registry, PackingBackendRow, ::testing::ValuesIn(Rows(/*with_scalar=*/false)), ParamName);

// ---- coverage and the harness itself ----------------------------------------

// Every layout both ways on the scalar backend, and on every SIMD target
// that has element rows when SIMD is built; with CUDA built, the GPU
// weight-layout kernels (backend "cuda") have exactly the GEMM layouts and
// the swizzled scales both ways (cuda/src/register_layouts.cc).
TEST(PackingRows, EveryBackendHasEveryLayoutBothWays) {
  std::set<std::string> backends = {"scalar"};
  for (const KernelEntry& e : AllBackends().Entries()) {
    if (e.backend.rfind("simd:", 0) == 0) backends.insert(e.backend);
  }
  bool simd_built = false, cuda_built = false;
  for (const std::string& name : check::BuiltBackendLibraries()) {
    simd_built |= name == "simd";
    cuda_built |= name == "cuda";
  }
  EXPECT_EQ(backends.size() > 1, simd_built);
  const auto gpu_layout = [](PackingLayout layout) {
    return TinygemmInnerKTilesOf(layout) != 0 || TorchCpuInt4packIsaOf(layout) >= 0 ||
           layout == PackingLayout::kMarlin || layout == PackingLayout::kSwizzledScales;
  };
  for (PackingLayout layout : kAllPackingLayouts) {
    for (PackDirection direction : kAllPackDirections) {
      const bool has = AllBackends().FindPacking(layout, direction, "cuda") != nullptr;
      EXPECT_EQ(has, cuda_built && gpu_layout(layout))
          << "cuda " << PackDirectionName(direction) << " " << PackingLayoutName(layout);
    }
  }
  if (cuda_built) backends.insert("cuda");
  for (const std::string& backend : backends) {
    if (backend == "cuda") continue;  // checked above
    for (PackingLayout layout : kAllPackingLayouts) {
      for (PackDirection direction : kAllPackDirections) {
        EXPECT_NE(AllBackends().FindPacking(layout, direction, backend), nullptr)
            << backend << " has no " << PackDirectionName(direction) << " " << PackingLayoutName(layout) << " row";
      }
    }
  }
  for (const PackingEntry& e : AllBackends().PackingEntries()) {
    EXPECT_EQ(backends.count(e.backend), 1u) << "packing row of unknown backend " << e.backend;
  }
}

// The harness catches a row that differs in one bit, and one that writes
// one unit past its output, naming where.
TEST(PackingRows, TheHarnessCatchesAWrongRow) {
  for (PackingLayout layout : {PackingLayout::kNibblesLowFirst, PackingLayout::kAwq}) {
    SCOPED_TRACE(PackingLayoutName(layout));
    const PackingEntry* scalar = AllBackends().FindPacking(layout, PackDirection::kPack, "scalar");
    ASSERT_NE(scalar, nullptr);
    PackingEntry flipped = *scalar;
    flipped.backend = "test:flip";
    const auto model = scalar->run;
    flipped.run = [model](const PackingArgs& a) {
      const Status s = model(a);
      if (s.ok && a.rows * a.cols > 0) {
        if (a.packed_bytes != nullptr) a.packed_bytes[0] ^= 1;
        if (a.packed_words != nullptr) a.packed_words[0] ^= 1;
      }
      return s;
    };
    check::Row row = check::CheckPacking(flipped, scalar, check::Level::kSmoke);
    EXPECT_EQ(row.kind, check::RowKind::kPacking);
    EXPECT_EQ(row.format, PackingLayoutName(layout));
    EXPECT_EQ(row.operation, "pack");
    ASSERT_EQ(row.outcome(), check::Row::Outcome::kFailed);
    ASSERT_FALSE(row.first_mismatches.empty());
    EXPECT_EQ(row.first_mismatches[0].where,
              layout == PackingLayout::kAwq ? "packed word 0" : "packed byte 0");
    EXPECT_EQ(row.first_mismatches[0].expected ^ row.first_mismatches[0].actual, 1u);

    PackingEntry overrun = *scalar;
    overrun.backend = "test:overrun";
    overrun.run = [model](const PackingArgs& a) {
      const Status s = model(a);
      const PackingSizes sizes = PackingBufferSizes(a.layout, a.rows, a.cols);
      if (a.packed_bytes != nullptr) a.packed_bytes[sizes.packed_units] = 0;
      if (a.packed_words != nullptr) a.packed_words[sizes.packed_units] = 0;
      return s;
    };
    row = check::CheckPacking(overrun, scalar, check::Level::kSmoke);
    ASSERT_EQ(row.outcome(), check::Row::Outcome::kFailed);
    ASSERT_FALSE(row.first_mismatches.empty());
    EXPECT_NE(row.first_mismatches[0].where.find("past the end"), std::string::npos)
        << row.first_mismatches[0].where;

    // The scalar row against itself passes; without a scalar row it is skipped.
    EXPECT_EQ(check::CheckPacking(*scalar, scalar, check::Level::kSmoke).outcome(), check::Row::Outcome::kPassed);
    EXPECT_EQ(check::CheckPacking(flipped, nullptr, check::Level::kSmoke).outcome(), check::Row::Outcome::kSkipped);
  }
}

// lowbit verify's plan runs the packing rows: with SIMD, one row per SIMD
// packing row; a format filter keeps them only for 4-bit formats.
TEST(PackingRows, RunPlanListsThem) {
  check::Plan plan;
  plan.level = check::Level::kSmoke;
  plan.parts.kernels = plan.parts.recipes = plan.parts.gpu_sweeps = plan.parts.oracle = plan.parts.matmul = false;
  plan.parts.tensor_cores = false;
  check::Results results = check::RunPlan(AllBackends(), plan);
  ASSERT_TRUE(results.error.empty()) << results.error;
  EXPECT_EQ(results.rows.size(), Rows(/*with_scalar=*/false).size());
  for (const check::Row& row : results.rows) EXPECT_EQ(row.kind, check::RowKind::kPacking);
  EXPECT_TRUE(results.passed());
  plan.filter.format = "e4m3";
  EXPECT_TRUE(check::RunPlan(AllBackends(), plan).rows.empty());
  plan.filter.format = "int4";
  EXPECT_EQ(check::RunPlan(AllBackends(), plan).rows.size(), Rows(/*with_scalar=*/false).size());
}

}  // namespace
}  // namespace lowbit::registry
