// The defined-order FP32 GEMV reference (formats/matmul/gemv_order.h), on
// the host: hand-worked literal cases whose expected bits are derived in the
// comments (the order visible where it changes the result, the short last
// block, the GPTQ and AWQ packings, NaN scales, the sign of a zero sum), and
// shape properties against an independent exact sum (double) over unpacked
// codes, with values chosen so that every FP32 step is exact: K not a
// multiple of the block or group, M = 1, 3, 16, odd N.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <utility>
#include <vector>

#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/gemv_order.h"

namespace lowbit::matmul {
namespace {

constexpr std::uint16_t kBf16One = 0x3F80;
constexpr std::uint16_t kBf16MinusOne = 0xBF80;
constexpr std::uint16_t kBf16TwoTo24 = 0x4B80;  // 2^24

// One FP32 output of an M = 1 GEMV.
std::vector<std::uint32_t> RunF32(const GemvWeightView& w, const std::vector<std::uint16_t>& x, long m = 1) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(m * w.n));
  GemvDefinedOrder(w, x.data(), ActivationType::kBf16, m, OutputType::kFp32, out.data());
  return out;
}

// `count` copies of `fill` with the listed elements set.
template <typename T>
std::vector<T> Filled(std::size_t count, T fill, std::initializer_list<std::pair<std::size_t, T>> set = {}) {
  std::vector<T> v(count, fill);
  for (const auto& [i, value] : set) v[i] = value;
  return v;
}

// A hand-worked case: one problem (M = 1, BF16 x) and the output bits worked
// out in its comment, never by the code under test.
struct HandCase {
  const char* name;
  WeightFormat format;
  long n, k;
  std::vector<std::uint8_t> codes;          // FP4 / FP8 rows
  std::vector<std::uint8_t> block_scales;   // UE4M3 / E8M0 per block
  std::vector<float> channel_scales;        // FP8 per channel
  float tensor_scale;                       // NVFP4
  std::vector<std::uint32_t> words, zeros;  // INT4 (zeros empty: zero point 0)
  std::vector<std::uint16_t> group_scales;  // INT4
  ScaleType scale_type;
  WeightPacking packing;                    // INT4: kGptq or kAwq
  std::vector<std::uint16_t> x;
  OutputType out;
  std::vector<std::uint32_t> want;  // y[0], y[1], ...; empty: y[0] is a NaN
};

std::vector<HandCase> HandCases() {
  constexpr OutputType kF32 = OutputType::kFp32;
  constexpr ScaleType kFp16 = ScaleType::kFp16;
  constexpr WeightPacking kLowbit = WeightPacking::kLowbit;
  const std::vector<std::uint8_t> no_bytes;
  const std::vector<std::uint32_t> no_words;
  const std::vector<std::uint16_t> no_halves;
  const std::vector<float> no_floats;
  return {
      // 16 codes 2 (E2M1 1.0) * x 1.0, block scale 0x38 (UE4M3 1.0), tensor
      // scale 0.5: 16 * 1 * 0.5 = 8 = 0x41000000; as BF16 0x4100.
      {"nvfp4 one block times block and tensor scale", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(8, 0x22),
       {0x38}, no_floats, 0.5f, no_words, no_words, no_halves, kFp16, kLowbit, Filled(16, kBf16One), kF32,
       {0x41000000u}},
      {"nvfp4 one block, BF16 output", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(8, 0x22), {0x38}, no_floats,
       0.5f, no_words, no_words, no_halves, kFp16, kLowbit, Filled(16, kBf16One), OutputType::kBf16, {0x4100u}},
      // MXFP8, K = 64: block 0 (k < 32) on lane 0, block 1 on lane 1, E8M0
      // scale 127 (1.0). Block 0: 1.0 * 2^24 + 1.0 * 1.0 = 2^24 + 1, which
      // rounds to 2^24 (tie to even). Block 1: 1.0 + 1.0 = 2. The tree adds
      // lane 0 and lane 1: 2^24 + 2 = 16777218 = 0x4B800001, exact. One
      // sequential FP32 sum over k would lose each +1 and give 2^24 =
      // 0x4B800000.
      {"blocks on different lanes keep what one sequential sum loses", WeightFormat::kMxfp8E4m3, 1, 64,
       Filled<std::uint8_t>(64, 0x00, {{0, 0x38}, {1, 0x38}, {32, 0x38}, {33, 0x38}}),  // E4M3 1.0
       {127, 127}, no_floats, 1.0f, no_words, no_words, no_halves, kFp16, kLowbit,
       Filled(64, kBf16One, {{0, kBf16TwoTo24}}), kF32, {0x4B800001u}},
      // K = 17: block 0 is k 0..15 (codes 2 = 1.0, scale 1.0), block 1 is
      // k = 16 alone (code 7 = 6.0, scale 0x40 = UE4M3 2.0). The row holds 9
      // bytes; the padding nibble (high nibble of byte 8) is 0xF, never read.
      // Sum 16 * 1 + 6 * 2 = 28 = 0x41E00000; tensor scale 1.
      {"short last nvfp4 block takes its own scale", WeightFormat::kNvfp4, 1, 17,
       Filled<std::uint8_t>(9, 0x22, {{8, 0xF7}}), {0x38, 0x40}, no_floats, 1.0f, no_words, no_words, no_halves,
       kFp16, kLowbit, Filled(17, kBf16One), kF32, {0x41E00000u}},
      // GPTQ N = 8, K = 8, one short group (group 128 > K). Column 0's word
      // holds rows 0..7 in nibbles 0..7 with q_j = j: 0x76543210; other
      // columns 0. qzeros stores zero - 1: 0xF is zero point 0 (column 0),
      // 0x0 is 1. Column 0: (0 + 1 + ... + 7) * 1.0 = 28, times the FP16
      // scale 0.5 (0x3800) = 14 = 0x41600000. Column 1: eight (0 - 1) = -8,
      // times 0.5 = -4 = 0xC0800000.
      {"gptq words and stored zero minus one", WeightFormat::kUint4, 8, 8, no_bytes, no_bytes, no_floats, 1.0f,
       Filled<std::uint32_t>(8, 0, {{0, 0x76543210u}}), {0x0000000Fu}, Filled<std::uint16_t>(8, 0x3800), kFp16,
       WeightPacking::kGptq, Filled(8, kBf16One), kF32, {0x41600000u, 0xC0800000u}},
      // AWQ N = 8, K = 1: nibble i of the word holds column order_map[i] with
      // order_map 0,2,4,6,1,3,5,7; giving column n the code n makes the
      // word's nibbles 0,2,4,6,1,3,5,7 from the low end: 0x75316420. Zero
      // points 0 (AWQ stores them as is), BF16 scale 1.0 (0x3F80), x = 1:
      // y[n] = n, FP32 0, 1, 2, 3, 4, 5, 6, 7.
      {"awq order map puts columns in interleaved nibbles", WeightFormat::kUint4, 8, 1, no_bytes, no_bytes,
       no_floats, 1.0f, {0x75316420u}, {0u}, Filled<std::uint16_t>(8, 0x3F80), ScaleType::kBf16, WeightPacking::kAwq,
       {kBf16One}, kF32,
       {0x00000000u, 0x3F800000u, 0x40000000u, 0x40400000u, 0x40800000u, 0x40A00000u, 0x40C00000u, 0x40E00000u}},
      // Signed INT4, no zeros buffer (zero point 0): code 0xF is -1, 0x8 is
      // -8. GPTQ column 0 rows 0..7: 0x8F..: nibbles F,8,0,... -> -1 - 8 =
      // -9 = 0xC1100000, FP16 scale 1.0 (0x3C00).
      {"signed int4 codes without zero points", WeightFormat::kInt4, 8, 8, no_bytes, no_bytes, no_floats, 1.0f,
       Filled<std::uint32_t>(8, 0, {{0, 0x0000008Fu}}), no_words, Filled<std::uint16_t>(8, 0x3C00), kFp16,
       WeightPacking::kGptq,
       Filled(8, kBf16One), kF32, {0xC1100000u}},
      // E8M0 0xFF and UE4M3 0x7F are NaN: the block's fmaf gives NaN.
      {"mxfp4 NaN scale", WeightFormat::kMxfp4, 1, 32, Filled<std::uint8_t>(16, 0x22), {0xFF}, no_floats, 1.0f,
       no_words, no_words, no_halves, kFp16, kLowbit, Filled(32, kBf16One), kF32, {}},
      {"nvfp4 NaN scale", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(16, 0x22), {0x7F}, no_floats, 1.0f,
       no_words, no_words, no_halves, kFp16, kLowbit, Filled(32, kBf16One), kF32, {}},
      {"nvfp4 NaN scale, FP16 output", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(16, 0x22), {0x7F},
       no_floats, 1.0f, no_words, no_words, no_halves, kFp16, kLowbit, Filled(32, kBf16One), OutputType::kFp16, {}},
      // Codes 0 (+0) times x = -1: every product is -0; the partial starts at
      // +0 and fmaf(+0, -1, +0) = -0 + +0 = +0 (round to nearest), so the sum
      // is +0; a tensor scale -1 makes it -0 = 0x80000000.
      {"all-zero block sums to +0", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(8, 0x00), {0x38}, no_floats,
       1.0f, no_words, no_words, no_halves, kFp16, kLowbit, Filled(16, kBf16MinusOne), kF32, {0x00000000u}},
      {"all-zero block then takes the tensor scale's sign", WeightFormat::kNvfp4, 1, 16, Filled<std::uint8_t>(8, 0x00),
       {0x38}, no_floats, -1.0f, no_words, no_words, no_halves, kFp16, kLowbit, Filled(16, kBf16MinusOne), kF32,
       {0x80000000u}},
      // FP8 per-channel: sum 0 times channel scale +Inf = NaN; times 3: 0.
      {"fp8 per-channel infinite scale times a zero sum is NaN", WeightFormat::kFp8E4m3PerChannel, 1, 16,
       Filled<std::uint8_t>(16, 0x00), no_bytes, {INFINITY}, 1.0f, no_words, no_words, no_halves, kFp16, kLowbit,
       Filled(16, kBf16One), kF32, {}},
      {"fp8 per-channel finite scale times a zero sum is 0", WeightFormat::kFp8E4m3PerChannel, 1, 16,
       Filled<std::uint8_t>(16, 0x00), no_bytes, {3.0f}, 1.0f, no_words, no_words, no_halves, kFp16, kLowbit,
       Filled(16, kBf16One), kF32, {0x00000000u}},
  };
}

TEST(GemvOrder, HandWorkedCases) {
  for (const HandCase& c : HandCases()) {
    SCOPED_TRACE(c.name);
    GemvWeightView w;
    w.format = c.format;
    w.n = c.n;
    w.k = c.k;
    w.packing = c.packing;
    w.group = 128;
    w.scale_type = c.scale_type;
    w.codes = c.codes.empty() ? nullptr : c.codes.data();
    w.block_scales = c.block_scales.empty() ? nullptr : c.block_scales.data();
    w.channel_scales = c.channel_scales.empty() ? nullptr : c.channel_scales.data();
    w.tensor_scale = c.tensor_scale;
    w.words = c.words.empty() ? nullptr : c.words.data();
    w.zeros = c.zeros.empty() ? nullptr : c.zeros.data();
    w.group_scales = c.group_scales.empty() ? nullptr : c.group_scales.data();
    std::vector<std::uint32_t> y(static_cast<std::size_t>(c.n), 0xDEADBEEFu);
    GemvDefinedOrder(w, c.x.data(), ActivationType::kBf16, 1, c.out, y.data());
    if (c.want.empty()) {
      EXPECT_TRUE(GemvOutputIsNan(c.out, y[0])) << std::hex << y[0];
      continue;
    }
    ASSERT_LE(c.want.size(), y.size());
    for (std::size_t n = 0; n < c.want.size(); ++n) EXPECT_EQ(y[n], c.want[n]) << "y[" << n << "]";
  }
}

// ---- shape properties against an exact sum ---------------------------------------

// Weights built from unpacked codes [N][K] with the model's packers, scales
// that are powers of two, x small integers: every FP32 step of the defined
// order is exact, so its output must equal the exact sum computed here in
// double with the test's own indexing.
struct ExactCase {
  WeightFormat format;
  WeightPacking packing;
  long n, k, m;
  std::uint64_t seed;
};

void CheckExact(const ExactCase& c) {
  SCOPED_TRACE(::testing::Message() << "format " << WeightFormatName(c.format) << " packing "
                                    << WeightPackingName(c.packing) << " N=" << c.n << " K=" << c.k
                                    << " M=" << c.m);
  std::mt19937_64 rng(c.seed);
  const long group = 128;
  const long block = c.format == WeightFormat::kNvfp4               ? 16
                     : IsIntegerFormat(c.format)                     ? group
                     : c.format == WeightFormat::kFp8E4m3PerChannel ? c.k
                                                                     : 32;
  const long blocks = (c.k + block - 1) / block;
  std::vector<std::uint8_t> q(static_cast<std::size_t>(c.n * c.k));   // [N][K] codes
  std::vector<double> scale(static_cast<std::size_t>(c.n * blocks));  // per (n, block)
  std::vector<std::uint8_t> scale_codes(static_cast<std::size_t>(c.n * blocks));
  std::vector<std::uint8_t> zero(static_cast<std::size_t>(c.n * blocks));
  GemvWeightView w;
  w.format = c.format;
  w.packing = c.packing;
  w.n = c.n;
  w.k = c.k;
  w.group = static_cast<int>(group);
  for (auto& v : q) v = static_cast<std::uint8_t>(rng() % (GemvIsFp4(c.format) || IsIntegerFormat(c.format) ? 16 : 256));
  if (!GemvIsFp4(c.format) && !IsIntegerFormat(c.format)) {
    // E4M3 codes 0 or with exponent field 7..9 (1 <= |v| <= 7.5, steps of
    // 1/8 or coarser): sums stay exact in FP32 at these K.
    for (auto& v : q) {
      const std::uint8_t r = static_cast<std::uint8_t>(rng());
      v = (r & 7) == 0 ? static_cast<std::uint8_t>(v & 0x80)
                       : static_cast<std::uint8_t>((v & 0x80) | ((7 + (r >> 3) % 3) << 3) | (v & 7));
    }
  }
  for (long i = 0; i < c.n * blocks; ++i) {
    const int e = static_cast<int>(rng() % 5) - 2;  // 2^-2 .. 2^2
    scale[i] = std::ldexp(1.0, e);
    zero[i] = static_cast<std::uint8_t>(rng() % 16);
    if (c.format == WeightFormat::kNvfp4) scale_codes[i] = static_cast<std::uint8_t>((7 + e) << 3);  // UE4M3 2^e
    if (c.format == WeightFormat::kMxfp4 || c.format == WeightFormat::kMxfp8E4m3) scale_codes[i] = static_cast<std::uint8_t>(127 + e);
  }
  // Pack.
  std::vector<std::uint8_t> codes;
  std::vector<std::uint32_t> words, zeros;
  std::vector<std::uint16_t> group_scales;
  std::vector<float> channel;
  if (GemvIsFp4(c.format)) {
    const long row = (c.k + 1) / 2;
    codes.assign(static_cast<std::size_t>(c.n * row), 0);
    for (long n = 0; n < c.n; ++n) block::PackNibbles(&q[n * c.k], c.k, block::NibbleOrder::kLowFirst, &codes[n * row]);
  } else if (IsIntegerFormat(c.format)) {
    std::vector<std::uint8_t> kn(static_cast<std::size_t>(c.k * c.n)), zn(static_cast<std::size_t>(blocks * c.n));
    for (long n = 0; n < c.n; ++n) {
      for (long k = 0; k < c.k; ++k) kn[k * c.n + n] = q[n * c.k + k];
      for (long b = 0; b < blocks; ++b) zn[b * c.n + n] = zero[n * blocks + b];
    }
    if (c.packing == WeightPacking::kGptq) {
      words.resize(static_cast<std::size_t>(c.k / 8 * c.n));
      block::PackGptqQweight(kn.data(), c.k, c.n, words.data());
      zeros.resize(static_cast<std::size_t>(blocks * c.n / 8));
      block::PackGptqQzeros(zn.data(), blocks, c.n, zeros.data());
    } else {
      words.resize(static_cast<std::size_t>(c.k * c.n / 8));
      block::PackAwq(kn.data(), c.k, c.n, words.data());
      zeros.resize(static_cast<std::size_t>(blocks * c.n / 8));
      block::PackAwq(zn.data(), blocks, c.n, zeros.data());
    }
    group_scales.resize(static_cast<std::size_t>(blocks * c.n));
    for (long n = 0; n < c.n; ++n) {
      for (long b = 0; b < blocks; ++b) {
        const int e = static_cast<int>(std::ilogb(scale[n * blocks + b]));
        group_scales[b * c.n + n] = static_cast<std::uint16_t>((15 + e) << 10);  // FP16 2^e
      }
    }
  } else {
    codes = q;
    channel.resize(static_cast<std::size_t>(c.n));
    for (long n = 0; n < c.n; ++n) channel[n] = static_cast<float>(scale[n * blocks]);
  }
  // Per-row scale bytes: [N][blocks].
  w.codes = codes.data();
  w.block_scales = scale_codes.data();
  w.words = words.data();
  w.zeros = zeros.data();
  w.group_scales = group_scales.data();
  w.scale_type = ScaleType::kFp16;
  w.channel_scales = channel.data();
  w.tensor_scale = 0.5f;
  std::vector<std::uint16_t> x(static_cast<std::size_t>(c.m * c.k));
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int v = static_cast<int>(rng() % 9) - 4;  // -4 .. 4
    xd[i] = v;
    x[i] = static_cast<std::uint16_t>(EncodeF32(kBf16, static_cast<float>(v)).code);
  }
  std::vector<std::uint32_t> out(static_cast<std::size_t>(c.m * c.n));
  GemvDefinedOrder(w, x.data(), ActivationType::kBf16, c.m, OutputType::kFp32, out.data());
  for (long m = 0; m < c.m; ++m) {
    for (long n = 0; n < c.n; ++n) {
      double sum = 0;
      for (long k = 0; k < c.k; ++k) {
        const long b = k / block;
        double v;
        if (IsIntegerFormat(c.format)) {
          v = static_cast<double>(static_cast<int>(q[n * c.k + k]) - zero[n * blocks + b]);
        } else {
          v = DecodeToF64(GemvIsFp4(c.format) ? kE2m1 : kE4m3, q[n * c.k + k]);
        }
        sum += v * xd[m * c.k + k] * scale[n * blocks + b];
      }
      if (c.format == WeightFormat::kNvfp4) sum *= 0.5;
      const float want = static_cast<float>(sum);
      ASSERT_EQ(static_cast<double>(want), sum) << "the case is not exact in FP32";
      ASSERT_EQ(out[m * c.n + n], BitCast<std::uint32_t>(want)) << "m " << m << " n " << n;
    }
  }
}

TEST(GemvOrder, EveryFormatEqualsTheExactSumOverShapes) {
  std::uint64_t seed = 7;
  for (WeightFormat f : {WeightFormat::kNvfp4, WeightFormat::kMxfp4, WeightFormat::kMxfp8E4m3,
                         WeightFormat::kFp8E4m3PerChannel}) {
    // K: below one block, K % block != 0, odd K, several chunks per lane;
    // odd N.
    for (long k : {1L, 7L, 33L, 100L, 1000L, 2048L + 17}) {
      for (long m : {1L, 3L, 16L}) CheckExact({f, WeightPacking::kLowbit, m == 16 ? 3 : 5, k, m, seed++});
    }
  }
  for (WeightPacking p : {WeightPacking::kGptq, WeightPacking::kAwq}) {
    // GPTQ needs K % 8 == 0; AWQ takes any K. K % 128 != 0 (short group).
    for (long k : {8L, 136L, 1000L, 1024L + 8}) {
      for (long m : {1L, 3L, 16L}) {
        CheckExact({WeightFormat::kUint4, p, 16, p == WeightPacking::kAwq && k > 8 ? k - 3 : k, m, seed++});
      }
    }
  }
}

TEST(GemvOrder, OrderShapesAreTheKernels) {
  // The constants the CUDA kernels are built around (cuda/src/gemv/gemv.cu).
  EXPECT_EQ(GemvOrderOf(WeightFormat::kNvfp4, 0).block * GemvOrderOf(WeightFormat::kNvfp4, 0).blocks_per_chunk, 32);
  EXPECT_EQ(GemvOrderOf(WeightFormat::kMxfp4, 0).block, 32);
  EXPECT_EQ(GemvOrderOf(WeightFormat::kUint4, 128).lanes, 8);
  EXPECT_EQ(GemvOrderOf(WeightFormat::kInt4, 64).block, 64);
}

TEST(GemvOrder, RegistryViewsMapOntoTheGemvOrRefuseByName) {
  // The literal NVFP4 case above as a registry problem, batch 2 with the
  // second batch's scale doubled (UE4M3 0x40 = 2.0), strided x and y.
  std::vector<std::uint8_t> codes(16, 0x22);  // two batches of one 16-element row
  std::vector<std::uint8_t> scales = {0x38, 0x40};
  recipe::TensorScale ts[1];
  ts[0].decode = 0.5f;
  WeightView w;
  w.format = WeightFormat::kNvfp4;
  w.packing = WeightPacking::kLowbit;
  w.geometry = ScaleGeometry::kRowGroups;
  w.scale_type = ScaleType::kUe4m3;
  w.n = 1;
  w.k = 16;
  w.block = 16;
  w.batch = 2;
  w.codes = codes.data();
  w.codes_count = 16;
  w.codes_batch_stride = 8;
  w.scales = scales.data();
  w.scales_count = 2;
  w.scales_batch_stride = 1;
  w.tensor_scale = ts;
  w.tensor_scale_count = 1;
  w.tensor_scale_batch_stride = 0;
  MatmulProblem p;
  p.w = w;
  p.m = 1;
  std::vector<std::uint16_t> x(40, kBf16One);
  p.x.type = ActivationType::kBf16;
  p.x.data = x.data();
  p.x.count = 40;
  p.x.row_stride = 20;
  p.x.batch_stride = 20;
  std::vector<float> y(2);
  p.y.type = OutputType::kFp32;
  p.y.data = y.data();
  p.y.count = 2;
  p.y.row_stride = 1;
  p.y.batch_stride = 1;
  const GemvProblemResult r = GemvDefinedOrderProblem(p);
  ASSERT_EQ(r.error, nullptr);
  ASSERT_EQ(r.codes.size(), 2u);
  EXPECT_EQ(r.codes[0], 0x41000000u);  // 16 * 1 * 0.5
  EXPECT_EQ(r.codes[1], 0x41800000u);  // 16 * 2 * 0.5
  GemvWeightView v;
  WeightView odd = w;
  odd.k = 15;
  EXPECT_STREQ(GemvViewOf(odd, 0, &v), "the GEMV takes 4-bit rows that start on a byte (K even)");
  WeightView flat = w;
  flat.geometry = ScaleGeometry::kFlatBlocks;
  flat.k = 24;
  EXPECT_NE(GemvViewOf(flat, 0, &v), nullptr);
  flat.k = 32;
  EXPECT_EQ(GemvViewOf(flat, 0, &v), nullptr);  // K a multiple of 16: the same layout as per-row blocks
  WeightView int4 = w;
  int4.format = WeightFormat::kUint4;
  int4.scale_type = ScaleType::kFp32;
  EXPECT_STREQ(GemvViewOf(int4, 0, &v), "the GEMV takes integer weights in the GPTQ or AWQ packing");
}

}  // namespace
}  // namespace lowbit::matmul
