// Packing orders (docs/formats-reference.md §8.3, §9 row 13): one literal test per
// convention, and pack-then-unpack is the identity for each.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lowbit/formats/block/marlin_layout.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/block/swizzled_scales.h"
#include "lowbit/formats/block/tinygemm_int4pack.h"

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

// ---- GEMM weight layouts and swizzled scales (docs/layouts.md) --------------
// Each layout is checked three ways: literal words worked out by hand from
// the source, the model against a second implementation written the way the
// source writes it (torch's kernel loop over bytes, Marlin's reshapes and
// `_perm` list, torchao's view/permute chain), and pack then unpack.

std::vector<std::uint8_t> Codes(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::vector<std::uint8_t> q(static_cast<std::size_t>(rows * cols));
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : q) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<std::uint8_t>(x >> 24);  // stray high bits: the packers mask them
  }
  return q;
}

// torch int4mm.cu matrix_to_m16n8k16_Bint4_layout, as written there: the
// uint8 [N][K / 2] input (high nibble first), lane t's four bytes ks[] and
// the `v[3]L | v[2]L | v[1]L | v[0]L | v[3]H | v[2]H | v[1]H | v[0]H` word.
std::vector<std::uint32_t> TorchCudaInt4pack(const std::vector<std::uint8_t>& q, int n, int k, int inner_k_tiles) {
  std::vector<std::uint8_t> in(static_cast<std::size_t>(n * k / 2));
  for (int r = 0; r < n; ++r) PackNibbles(q.data() + r * k, k, NibbleOrder::kHighFirst, in.data() + r * k / 2);
  const int n_tiles = (n + 7) / 8, k_super = k / (inner_k_tiles * 16);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(n_tiles * k_super * 32 * (inner_k_tiles / 2)));
  for (int n_tile = 0; n_tile < n_tiles; ++n_tile) {
    for (int k_outer = 0; k_outer < k_super; ++k_outer) {
      for (int t = 0; t < 32; ++t) {
        for (int inner = 0; inner < inner_k_tiles; inner += 2) {
          const int n0 = n_tile * 8 + t / 4;
          const int k_base0 = (k_outer * inner_k_tiles + inner) * 16 / 2;
          const int k_base1 = k_base0 + 16 / 2;
          const int ks[4] = {k_base0 + t % 4, k_base0 + t % 4 + 4, k_base1 + t % 4, k_base1 + t % 4 + 4};
          std::uint32_t v[4];
          for (int i = 0; i < 4; ++i) v[i] = n0 < n ? in[static_cast<std::size_t>(n0 * k / 2 + ks[i])] : 0;
          const std::uint32_t pack = ((v[3] & 0xF) << 28) | ((v[2] & 0xF) << 24) | ((v[1] & 0xF) << 20) |
                                     ((v[0] & 0xF) << 16) | ((v[3] & 0xF0) << 8) | ((v[2] & 0xF0) << 4) |
                                     (v[1] & 0xF0) | ((v[0] & 0xF0) >> 4);
          out[static_cast<std::size_t>(((n_tile * k_super + k_outer) * 32 + t) * (inner_k_tiles / 2) + inner / 2)] =
              pack;
        }
      }
    }
  }
  return out;
}

TEST(TinygemmInt4packTest, LiteralWordsOfTheM16n8k16Fragment) {
  // N = 8, K = 32, inner_k_tiles 2, q[n][k] = (n + k) & 15. Lane 0 (row 0)
  // holds k = 0, 8, 16, 24 in nibbles 0..3 and 1, 9, 17, 25 in 4..7:
  // codes 0,8,0,8,1,9,1,9 from the LSB; lane 1 starts at k = 2; lane 4 is
  // row 1.
  std::vector<std::uint8_t> q(8 * 32);
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 32; ++k) q[static_cast<std::size_t>(n * 32 + k)] = static_cast<std::uint8_t>((n + k) & 15);
  }
  std::vector<std::uint32_t> words(static_cast<std::size_t>(TinygemmInt4packWords(8, 32)));
  ASSERT_EQ(words.size(), 32u);  // [1][1][32][1]
  PackTinygemmInt4(q.data(), 8, 32, 2, words.data());
  EXPECT_EQ(words[0], 0x91918080u);
  EXPECT_EQ(words[1], 0xB3B3A2A2u);
  EXPECT_EQ(words[4], 0xA2A29191u);
  // inner_k_tiles 4, K = 64: word [0][0][0][1] starts at k = 32.
  std::vector<std::uint8_t> q4(8 * 64);
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 64; ++k) q4[static_cast<std::size_t>(n * 64 + k)] = static_cast<std::uint8_t>(k / 32 + 2 * (k % 2));
  }
  std::vector<std::uint32_t> w4(static_cast<std::size_t>(TinygemmInt4packWords(8, 64)));
  PackTinygemmInt4(q4.data(), 8, 64, 4, w4.data());
  EXPECT_EQ(w4[0], 0x22220000u);  // k even -> 0, odd -> 2
  EXPECT_EQ(w4[1], 0x33331111u);  // + 1 past k = 32
}

TEST(TinygemmInt4packTest, MatchesTorchsKernelLoopAndRoundTrips) {
  for (int tiles : {2, 4, 8}) {
    for (int n : {1, 7, 8, 9, 16, 24, 33}) {
      for (int k_mult : {1, 2, 3}) {
        const int k = tiles * 16 * k_mult;
        const std::vector<std::uint8_t> q = Codes(n, k, static_cast<unsigned>(n * 1000 + k + tiles));
        std::vector<std::uint32_t> words(static_cast<std::size_t>(TinygemmInt4packWords(n, k)), 0xDEADBEEFu);
        PackTinygemmInt4(q.data(), n, k, tiles, words.data());
        ASSERT_EQ(words, TorchCudaInt4pack(q, n, k, tiles)) << "N " << n << " K " << k << " tiles " << tiles;
        std::vector<std::uint8_t> back(q.size(), 0xEE);
        UnpackTinygemmInt4(words.data(), n, k, tiles, back.data());
        for (std::size_t i = 0; i < q.size(); ++i) ASSERT_EQ(back[i], q[i] & 0xF) << i;
      }
    }
  }
}

TEST(TinygemmInt4packTest, ScalesAndZerosInterleaveAndPadToTheTiles) {
  // [groups][N] scales and zeros -> [groups][padded N][2]: [g][n][0] the
  // scale, [g][n][1] the zero (int4mm.cu "size [k / qGroupSize][n][2]").
  const std::uint16_t scales[] = {0x3F80, 0x4000, 0x4040};  // 1, 2, 3 (BF16), groups 1, N 3
  const std::uint16_t zeros[] = {0xBF80, 0xC000, 0xC040};
  std::uint16_t out[16];
  PackTinygemmScalesAndZeros(scales, zeros, 1, 3, 8, out);
  EXPECT_EQ(out[0], 0x3F80);
  EXPECT_EQ(out[1], 0xBF80);
  EXPECT_EQ(out[4], 0x4040);
  EXPECT_EQ(out[5], 0xC040);
  EXPECT_EQ(out[6], 0);  // padding row 3
  std::uint16_t s_back[3], z_back[3];
  UnpackTinygemmScalesAndZeros(out, 1, 3, 8, s_back, z_back);
  EXPECT_EQ(std::vector<std::uint16_t>(s_back, s_back + 3), std::vector<std::uint16_t>(scales, scales + 3));
  EXPECT_EQ(std::vector<std::uint16_t>(z_back, z_back + 3), std::vector<std::uint16_t>(zeros, zeros + 3));
  EXPECT_EQ(kTinygemmCodeOffset, 8);  // convert_i4x8_to_bf16x2x4: 128 + q - 136
}

// torch int4mm_kernel.cpp weight_to_int4pack_kernel, its three #if branches
// as written there.
std::vector<std::uint8_t> TorchCpuInt4pack(const std::vector<std::uint8_t>& q, int n, int k, TorchCpuInt4packIsa isa) {
  const int block_n = isa == TorchCpuInt4packIsa::kAvx512 ? 64 : 32;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * k / 2));
  for (int i = 0; i < (n + block_n - 1) / block_n; ++i) {
    const int nb_size = std::min(block_n, n - i * block_n);
    const std::uint8_t* src = q.data() + i * block_n * k;
    std::uint8_t* dst = out.data() + i * k * block_n / 2;
    for (int kk = 0; kk < k; ++kk) {
      const auto v = [&](int row) { return static_cast<std::uint8_t>(src[row * k + kk] & 0xF); };
      if (isa == TorchCpuInt4packIsa::kAvx512 && nb_size == block_n) {
        for (int d = 0; d < 16; ++d) {
          dst[kk * 32 + d] = static_cast<std::uint8_t>((v(d + 32) << 4) | v(d));
          dst[kk * 32 + 16 + d] = static_cast<std::uint8_t>((v(d + 48) << 4) | v(d + 16));
        }
      } else if (isa == TorchCpuInt4packIsa::kAvx2 && nb_size == block_n) {
        for (int d = 0; d < 16; ++d) dst[kk * 16 + d] = static_cast<std::uint8_t>((v(d + 16) << 4) | v(d));
      } else {
        for (int r = 0; r < nb_size; r += 2) dst[kk * nb_size / 2 + r / 2] = static_cast<std::uint8_t>((v(r + 1) << 4) | v(r));
      }
    }
  }
  return out;
}

TEST(TorchCpuInt4packTest, LiteralBytesPerInstructionSet) {
  // One code 5 at (n, k) of an N x 4 matrix: where it lands (byte, nibble),
  // from the probes in tests/peers/test_int4pack.py's live runs.
  const auto where = [](int n_rows, int n, int k, TorchCpuInt4packIsa isa) {
    const NibblePosition p = TorchCpuInt4packPosition(n, k, n_rows, 4, isa);
    return std::pair<std::int64_t, int>(p.byte, p.nibble);
  };
  using P = std::pair<std::int64_t, int>;
  EXPECT_EQ(where(64, 32, 0, TorchCpuInt4packIsa::kAvx512), P(0, 1));   // packed02: row d + 32 high
  EXPECT_EQ(where(64, 16, 0, TorchCpuInt4packIsa::kAvx512), P(16, 0));  // packed13 at 16 + d
  EXPECT_EQ(where(64, 0, 1, TorchCpuInt4packIsa::kAvx512), P(32, 0));   // k * 32
  EXPECT_EQ(where(128, 64, 0, TorchCpuInt4packIsa::kAvx512), P(128, 0));  // block 1 at 64 * 4 / 2
  EXPECT_EQ(where(32, 1, 0, TorchCpuInt4packIsa::kAvx512), P(0, 1));    // short block: row pairs
  EXPECT_EQ(where(32, 0, 1, TorchCpuInt4packIsa::kAvx512), P(16, 0));   // k * nb_size / 2
  EXPECT_EQ(where(32, 16, 0, TorchCpuInt4packIsa::kAvx2), P(0, 1));     // packed01: row d + 16 high
  EXPECT_EQ(where(32, 1, 0, TorchCpuInt4packIsa::kAvx2), P(1, 0));
  EXPECT_EQ(where(32, 1, 0, TorchCpuInt4packIsa::kDefault), P(0, 1));
  EXPECT_EQ(where(96, 70, 1, TorchCpuInt4packIsa::kAvx512), P(128 + 16 + 3, 0));  // block 1 holds 32 rows
}

TEST(TorchCpuInt4packTest, MatchesTorchsKernelLoopAndRoundTrips) {
  for (TorchCpuInt4packIsa isa : {TorchCpuInt4packIsa::kAvx512, TorchCpuInt4packIsa::kAvx2, TorchCpuInt4packIsa::kDefault}) {
    for (int n : {16, 32, 48, 64, 80, 96, 128, 160}) {
      for (int k : {2, 4, 6, 32}) {
        const std::vector<std::uint8_t> q = Codes(n, k, static_cast<unsigned>(n * 100 + k));
        std::vector<std::uint8_t> packed(static_cast<std::size_t>(n * k / 2), 0xEE);
        PackTorchCpuInt4(q.data(), n, k, isa, packed.data());
        ASSERT_EQ(packed, TorchCpuInt4pack(q, n, k, isa)) << "N " << n << " K " << k << " isa " << static_cast<int>(isa);
        std::vector<std::uint8_t> back(q.size(), 0xEE);
        UnpackTorchCpuInt4(packed.data(), n, k, isa, back.data());
        for (std::size_t i = 0; i < q.size(); ++i) ASSERT_EQ(back[i], q[i] & 0xF) << i;
        for (std::int64_t b = 0; b < n * k / 2; ++b) {  // Source inverts Position
          for (int nib = 0; nib < 2; ++nib) {
            const CodePosition s = TorchCpuInt4packSource(b, nib, n, k, isa);
            const NibblePosition p = TorchCpuInt4packPosition(s.row, s.col, n, k, isa);
            ASSERT_EQ(p.byte, b);
            ASSERT_EQ(p.nibble, nib);
          }
        }
      }
    }
  }
}

// IST-DASLab/marlin marlin/__init__.py `_get_perms` and `Layer.pack`, as
// written there (lists, reshapes and `q |= res[:, i::8] << 4 * i`).
std::vector<int> MarlinPermAsWritten() {
  std::vector<int> perm;
  for (int i = 0; i < 32; ++i) {
    std::vector<int> perm1;
    const int col = i / 4;
    for (int block : {0, 1}) {
      for (int row : {2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1}) {
        perm1.push_back(16 * row + col + 8 * block);
      }
    }
    for (int j = 0; j < 4; ++j) {
      for (int p : perm1) perm.push_back(p + 256 * j);
    }
  }
  const int interleave[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  std::vector<int> out(perm.size());
  for (std::size_t g = 0; g < perm.size() / 8; ++g) {
    for (int m = 0; m < 8; ++m) out[g * 8 + static_cast<std::size_t>(m)] = perm[g * 8 + static_cast<std::size_t>(interleave[m])];
  }
  return out;
}

std::vector<std::uint32_t> MarlinPackAsWritten(const std::vector<std::uint8_t>& q, int k, int n) {
  const std::vector<int> perm = MarlinPermAsWritten();
  // w.reshape((k // 16, 16, n // 16, 16)).permute((0, 2, 1, 3)).reshape((k // 16, n * 16))
  std::vector<std::uint8_t> w(q.size());
  for (int a = 0; a < k / 16; ++a) {
    for (int b = 0; b < n / 16; ++b) {
      for (int r = 0; r < 16; ++r) {
        for (int c = 0; c < 16; ++c) {
          w[static_cast<std::size_t>(a * n * 16 + b * 256 + r * 16 + c)] =
              q[static_cast<std::size_t>((a * 16 + r) * n + b * 16 + c)] & 0xF;
        }
      }
    }
  }
  // res.reshape((-1, 1024))[:, _perm]
  std::vector<std::uint8_t> res(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) res[i] = w[i / 1024 * 1024 + static_cast<std::size_t>(perm[i % 1024])];
  std::vector<std::uint32_t> out(w.size() / 8, 0);
  const std::size_t row_len = static_cast<std::size_t>(n) * 16;
  for (std::size_t row = 0; row < static_cast<std::size_t>(k / 16); ++row) {
    for (int i = 0; i < 8; ++i) {
      for (std::size_t c = 0; c < row_len / 8; ++c) {
        out[row * row_len / 8 + c] |= static_cast<std::uint32_t>(res[row * row_len + 8 * c + static_cast<std::size_t>(i)]) << (4 * i);
      }
    }
  }
  return out;
}

TEST(MarlinLayoutTest, PermutationIsTheListMarlinBuilds) {
  const std::vector<int> perm = MarlinPermAsWritten();
  ASSERT_EQ(perm.size(), static_cast<std::size_t>(kMarlinPermSize));
  // First eight, by hand: perm1 of lane 0 is 0, 16, 128, 144, 8, 24, 136,
  // 152; interleaved 0,2,4,6,1,3,5,7 -> 0, 128, 8, 136, 16, 144, 24, 152.
  const int first[8] = {0, 128, 8, 136, 16, 144, 24, 152};
  for (int p = 0; p < 8; ++p) EXPECT_EQ(MarlinPerm(p), first[p]) << p;
  std::vector<bool> seen(kMarlinPermSize, false);
  for (int p = 0; p < kMarlinPermSize; ++p) {
    ASSERT_EQ(MarlinPerm(p), perm[static_cast<std::size_t>(p)]) << p;
    seen[static_cast<std::size_t>(MarlinPerm(p))] = true;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), kMarlinPermSize);  // a permutation
}

TEST(MarlinLayoutTest, LiteralFirstWord) {
  // K = 16, N = 64, q[k][n] = (k + n) & 15: word 0 nibbles are tile 0's
  // (row, col) (0,0), (8,0), (0,8), (8,8), (1,0), (9,0), (1,8), (9,8) ->
  // codes 0, 8, 8, 0, 1, 9, 9, 1 from the LSB.
  std::vector<std::uint8_t> q(16 * 64);
  for (int k = 0; k < 16; ++k) {
    for (int n = 0; n < 64; ++n) q[static_cast<std::size_t>(k * 64 + n)] = static_cast<std::uint8_t>((k + n) & 15);
  }
  std::vector<std::uint32_t> words(static_cast<std::size_t>(MarlinWords(16, 64)));
  ASSERT_EQ(words.size(), 128u);  // B is [K / 16][N * 16 / 8]
  PackMarlin(q.data(), 16, 64, words.data());
  EXPECT_EQ(words[0], 0x19910880u);
}

TEST(MarlinLayoutTest, MatchesMarlinsPackAndRoundTrips) {
  for (int k : {16, 32, 128}) {
    for (int n : {64, 128, 192, 256}) {
      const std::vector<std::uint8_t> q = Codes(k, n, static_cast<unsigned>(k * 1000 + n));
      std::vector<std::uint32_t> words(static_cast<std::size_t>(MarlinWords(k, n)));
      PackMarlin(q.data(), k, n, words.data());
      ASSERT_EQ(words, MarlinPackAsWritten(q, k, n)) << "K " << k << " N " << n;
      std::vector<std::uint8_t> back(q.size(), 0xEE);
      UnpackMarlin(words.data(), k, n, back.data());
      for (std::size_t i = 0; i < q.size(); ++i) ASSERT_EQ(back[i], q[i] & 0xF) << i;
    }
  }
}

TEST(MarlinLayoutTest, ScalePermutationsAsMarlinBuildsThem) {
  std::vector<int> scale_perm, single;
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) scale_perm.push_back(i + 8 * j);
  }
  for (int i = 0; i < 4; ++i) {
    for (int j : {0, 1, 8, 9, 16, 17, 24, 25}) single.push_back(2 * i + j);
  }
  for (int p = 0; p < kMarlinScalePermSize; ++p) ASSERT_EQ(MarlinScalePerm(p), scale_perm[static_cast<std::size_t>(p)]) << p;
  for (int p = 0; p < kMarlinScalePermSingleSize; ++p) {
    ASSERT_EQ(MarlinScalePermSingle(p), single[static_cast<std::size_t>(p)]) << p;
  }
  // Grouped: out[f] = s[f / 64 * 64 + scale_perm[f % 64]]; one group uses
  // the single permutation over runs of 32.
  for (int groups : {1, 2, 3}) {
    const int n = 128;
    std::vector<std::uint16_t> s(static_cast<std::size_t>(groups * n)), out(s.size()), back(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint16_t>(0x3C00 + i);
    PermuteMarlinScales(s.data(), groups, n, out.data());
    for (std::size_t f = 0; f < s.size(); ++f) {
      const std::size_t want = groups == 1 ? f / 32 * 32 + static_cast<std::size_t>(single[f % 32])
                                           : f / 64 * 64 + static_cast<std::size_t>(scale_perm[f % 64]);
      ASSERT_EQ(out[f], s[want]) << f;
    }
    UnpermuteMarlinScales(out.data(), groups, n, back.data());
    ASSERT_EQ(back, s);
  }
}

// torchao 0.18.0 mx_formats/utils.py to_blocked, as written there: pad,
// view(n_row_blocks, 128, n_col_blocks, 4).permute(0, 2, 1, 3),
// reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16), flatten.
std::vector<std::uint8_t> ToBlockedAsWritten(const std::vector<std::uint8_t>& s, int rows, int cols) {
  const int rb_count = (rows + 127) / 128, cb_count = (cols + 3) / 4;
  const int prow = rb_count * 128, pcol = cb_count * 4;
  std::vector<std::uint8_t> padded(static_cast<std::size_t>(prow * pcol), 0);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) padded[static_cast<std::size_t>(r * pcol + c)] = s[static_cast<std::size_t>(r * cols + c)];
  }
  std::vector<std::uint8_t> out(padded.size());
  std::size_t o = 0;
  for (int rb = 0; rb < rb_count; ++rb) {
    for (int cb = 0; cb < cb_count; ++cb) {     // blocks [rb][cb][128][4] -> (-1, 4, 32, 4)
      for (int m = 0; m < 32; ++m) {            // transpose(1, 2): [block][32][4][4]
        for (int qtr = 0; qtr < 4; ++qtr) {
          for (int c = 0; c < 4; ++c) {
            out[o++] = padded[static_cast<std::size_t>((rb * 128 + qtr * 32 + m) * pcol + cb * 4 + c)];
          }
        }
      }
    }
  }
  return out;
}

TEST(SwizzledScalesTest, LiteralOffsets) {
  // 129 x 5 scales: padded to 256 x 8, four 512-byte tiles, row-block major.
  EXPECT_EQ(SwizzledScaleBytes(129, 5), 2048);
  EXPECT_EQ(SwizzledScaleOffset(0, 0, 5), 0);
  EXPECT_EQ(SwizzledScaleOffset(1, 0, 5), 16);     // (r % 32) * 16
  EXPECT_EQ(SwizzledScaleOffset(32, 0, 5), 4);     // (r % 128 / 32) * 4
  EXPECT_EQ(SwizzledScaleOffset(0, 3, 5), 3);
  EXPECT_EQ(SwizzledScaleOffset(127, 3, 5), 511);  // 31 * 16 + 3 * 4 + 3
  EXPECT_EQ(SwizzledScaleOffset(0, 4, 5), 512);    // tile (0, 1)
  EXPECT_EQ(SwizzledScaleOffset(128, 0, 5), 1024); // tile (1, 0)
  EXPECT_EQ(SwizzledScaleBytes(1, 1), 512);
}

TEST(SwizzledScalesTest, MatchesToBlockedAndRoundTrips) {
  for (int rows : {1, 31, 32, 127, 128, 129, 256, 300}) {
    for (int cols : {1, 3, 4, 5, 8, 9}) {
      const std::vector<std::uint8_t> s = Codes(rows, cols, static_cast<unsigned>(rows * 10 + cols));
      std::vector<std::uint8_t> out(static_cast<std::size_t>(SwizzledScaleBytes(rows, cols)), 0xEE);
      SwizzleScales(s.data(), rows, cols, out.data());
      ASSERT_EQ(out, ToBlockedAsWritten(s, rows, cols)) << rows << " x " << cols;
      std::vector<std::uint8_t> back(s.size(), 0xEE);
      UnswizzleScales(out.data(), rows, cols, back.data());
      ASSERT_EQ(back, s);  // whole bytes: no masking
      for (std::int64_t o = 0; o < SwizzledScaleBytes(rows, cols); ++o) {
        const ScalePosition p = SwizzledScaleSource(o, cols);
        ASSERT_EQ(SwizzledScaleOffset(p.row, p.col, cols), o);
      }
    }
  }
}

static_assert(SwizzledScaleOffset(127, 3, 4) == 511 && MarlinPerm(1) == 128 && TinygemmInt4packWords(9, 32) == 64,
              "the layouts' index math is constexpr");

}  // namespace
}  // namespace lowbit::block
