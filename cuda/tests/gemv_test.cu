// The GEMV (cuda/src/gemv/): every in-register decode equals the
// model on every code, and every GEMV output equals the defined-order FP32
// reference (formats/include/lowbit/formats/matmul/gemv_order.h) bit for bit
// (NaN compared as NaN: payloads are not part of the contract), over shapes
// with K not a multiple of the block or group, odd N, M = 1, 3, 16, batch 2,
// both activation types, all three output types, and scale bytes drawn from
// the whole code range (NaN, zero and extreme scales) as well as a moderate
// one. Bad arguments get a named error without a launch.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemv/decode.cuh"
#include "gemv/gemv.h"
#include "gpu_test_util.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/gemv_order.h"
#include "lowbit/formats/recipe/steps.h"

namespace lowbit::cuda::gemv {
namespace {

using matmul::ActivationType;
using matmul::OutputType;
using matmul::ScaleType;
using matmul::WeightFormat;
using matmul::WeightPacking;
using testing::DeviceVector;

bool F32IsNanBits(std::uint32_t b) { return (b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFFu) != 0; }

// Equal bits, or both NaN.
::testing::AssertionResult SameF32(std::uint32_t got, std::uint32_t want) {
  if (got == want || (F32IsNanBits(got) && F32IsNanBits(want))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hex << "got 0x" << got << " want 0x" << want;
}

// ---- decodes, every code ---------------------------------------------------------

enum DecodeKind : int { kDecodeE2m1Nibble, kDecodeE4m3Pair, kDecodeUe4m3, kDecodeE8m0, kDecodeBf16, kDecodeFp16, kDecodeInt4 };

// out[i] = the FP32 bits of decode `kind` of input i (see the host loops).
__global__ void DecodeKernel(int kind, const std::uint32_t* in, std::uint32_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t v = in[i];
  float r = 0.0f;
  switch (kind) {
    case kDecodeE2m1Nibble: {  // v = code | position << 8: the code placed in nibble `position` of a noisy word
      const int pos = static_cast<int>(v >> 8);
      const std::uint32_t word = (0x9E3779B9u & ~(0xFu << (4 * pos))) | ((v & 0xFu) << (4 * pos));
      switch (pos) {  // compile-time positions, as the kernels use them
        case 0: r = E2m1NibbleToF32(word, 0); break;
        case 1: r = E2m1NibbleToF32(word, 1); break;
        case 2: r = E2m1NibbleToF32(word, 2); break;
        case 3: r = E2m1NibbleToF32(word, 3); break;
        case 4: r = E2m1NibbleToF32(word, 4); break;
        case 5: r = E2m1NibbleToF32(word, 5); break;
        case 6: r = E2m1NibbleToF32(word, 6); break;
        default: r = E2m1NibbleToF32(word, 7); break;
      }
      break;
    }
    case kDecodeE4m3Pair: {  // v = low byte | high byte << 8; out = low's value, out[n + i] = high's
      const float2 f = E4m3x2ToF32x2(v);
      out[n + i] = __float_as_uint(f.y);
      r = f.x;
      break;
    }
    case kDecodeUe4m3: r = Ue4m3ToF32(v); break;
    case kDecodeE8m0: r = E8m0ToF32(v); break;
    case kDecodeBf16: r = Bf16BitsToF32(v); break;
    case kDecodeFp16: r = Fp16BitsToF32(v); break;
    case kDecodeInt4: {  // v = code | zero << 4 | signed << 8 | position << 9
      const int pos = static_cast<int>(v >> 9);
      const bool is_signed = (v >> 8) & 1u;
      const std::uint32_t word = Int4SignFlip((0x5A5A5A5Au & ~(0xFu << (4 * pos))) | ((v & 0xFu) << (4 * pos)), is_signed);
      const float zm = Int4ZeroMagic(static_cast<int>((v >> 4) & 0xFu), is_signed);
      switch (pos) {
        case 0: r = Int4NibbleMinusZero(word, 0, zm); break;
        case 1: r = Int4NibbleMinusZero(word, 1, zm); break;
        case 2: r = Int4NibbleMinusZero(word, 2, zm); break;
        case 3: r = Int4NibbleMinusZero(word, 3, zm); break;
        case 4: r = Int4NibbleMinusZero(word, 4, zm); break;
        case 5: r = Int4NibbleMinusZero(word, 5, zm); break;
        case 6: r = Int4NibbleMinusZero(word, 6, zm); break;
        default: r = Int4NibbleMinusZero(word, 7, zm); break;
      }
      break;
    }
  }
  out[i] = __float_as_uint(r);
}

// out[8 i + j] = the FP32 bits of nibble j of word i by E2m1x8ToF32.
__global__ void E2m1x8Kernel(const std::uint32_t* in, std::uint32_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v[8];
  E2m1x8ToF32(in[i], v);
  for (int j = 0; j < 8; ++j) out[8 * i + j] = __float_as_uint(v[j]);
}

std::vector<std::uint32_t> RunDecode(int kind, const std::vector<std::uint32_t>& in, std::size_t out_count) {
  DeviceVector<std::uint32_t> d_in(in);
  DeviceVector<std::uint32_t> d_out(out_count);
  const int n = static_cast<int>(in.size());
  DecodeKernel<<<(n + 255) / 256, 256>>>(kind, d_in.p, d_out.p, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return d_out.Get(out_count);
}

TEST(CudaGemvDecode, E2m1EveryCodeInEveryNibble) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in;
  for (std::uint32_t pos = 0; pos < 8; ++pos) {
    for (std::uint32_t c = 0; c < 16; ++c) in.push_back(c | pos << 8);
  }
  const auto got = RunDecode(kDecodeE2m1Nibble, in, in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(got[i], DecodeToF32Bits(kE2m1, in[i] & 0xF)) << "code " << (in[i] & 0xF) << " nibble " << (in[i] >> 8);
  }
}

// Every byte (two codes) in every byte position of a noisy word: each code
// in each of the 8 nibble positions next to each other code.
TEST(CudaGemvDecode, E2m1x8EveryByteInEveryPosition) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in;
  for (std::uint32_t pos = 0; pos < 4; ++pos) {
    for (std::uint32_t b = 0; b < 256; ++b) in.push_back((0x9E3779B9u * (b + 1) & ~(0xFFu << (8 * pos))) | b << (8 * pos));
  }
  DeviceVector<std::uint32_t> d_in(in);
  DeviceVector<std::uint32_t> d_out(8 * in.size());
  const int n = static_cast<int>(in.size());
  E2m1x8Kernel<<<(n + 255) / 256, 256>>>(d_in.p, d_out.p, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = d_out.Get(8 * in.size());
  int bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    for (int j = 0; j < 8; ++j) {
      const std::uint32_t code = (in[i] >> (4 * j)) & 0xFu;
      if (got[8 * i + j] != DecodeToF32Bits(kE2m1, code) && ++bad <= 10) {
        ADD_FAILURE() << std::hex << "word 0x" << in[i] << " nibble " << j << " got 0x" << got[8 * i + j];
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(CudaGemvDecode, E4m3EveryCodeBothHalvesOfThePtxPair) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in;
  for (std::uint32_t c = 0; c < 256; ++c) in.push_back(c | (255 - c) << 8);
  const auto got = RunDecode(kDecodeE4m3Pair, in, 2 * in.size());
  for (std::uint32_t c = 0; c < 256; ++c) {
    EXPECT_TRUE(SameF32(got[c], DecodeToF32Bits(kE4m3, c))) << "low byte " << c;
    EXPECT_TRUE(SameF32(got[256 + c], DecodeToF32Bits(kE4m3, 255 - c))) << "high byte " << (255 - c);
  }
}

TEST(CudaGemvDecode, Ue4m3AndE8m0EveryByte) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in(256);
  for (std::uint32_t c = 0; c < 256; ++c) in[c] = c;
  const auto ue = RunDecode(kDecodeUe4m3, in, 256);
  const auto e8 = RunDecode(kDecodeE8m0, in, 256);
  for (std::uint32_t c = 0; c < 256; ++c) {
    EXPECT_TRUE(SameF32(ue[c], DecodeToF32Bits(kUe4m3, c))) << "ue4m3 byte " << c;
    EXPECT_TRUE(SameF32(e8[c], DecodeToF32Bits(kE8m0, c))) << "e8m0 byte " << c;
  }
  EXPECT_EQ(e8[0], 0x00400000u);  // 2^-127: not flushed
}

TEST(CudaGemvDecode, Bf16AndFp16EveryCode) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in(65536);
  for (std::uint32_t c = 0; c < 65536; ++c) in[c] = c;
  const auto bf = RunDecode(kDecodeBf16, in, in.size());
  const auto hf = RunDecode(kDecodeFp16, in, in.size());
  int bad = 0;
  for (std::uint32_t c = 0; c < 65536 && bad < 10; ++c) {
    if (!SameF32(bf[c], DecodeToF32Bits(kBf16, c))) { ++bad; ADD_FAILURE() << "bf16 " << c; }
    if (!SameF32(hf[c], DecodeToF32Bits(kFp16, c))) { ++bad; ADD_FAILURE() << "fp16 " << c; }
  }
}

TEST(CudaGemvDecode, Int4EveryCodeZeroSignAndNibble) {
  LOWBIT_REQUIRE_GPU();
  std::vector<std::uint32_t> in;
  for (std::uint32_t pos = 0; pos < 8; ++pos) {
    for (std::uint32_t s = 0; s < 2; ++s) {
      for (std::uint32_t z = 0; z < 16; ++z) {
        for (std::uint32_t c = 0; c < 16; ++c) in.push_back(c | z << 4 | s << 8 | pos << 9);
      }
    }
  }
  const auto got = RunDecode(kDecodeInt4, in, in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t c = in[i] & 0xF, z = (in[i] >> 4) & 0xF;
    const bool s = (in[i] >> 8) & 1;
    const std::int32_t q = recipe::IntegerOfCode(s ? kInt4 : kUint4, static_cast<std::uint8_t>(c));
    const float want = static_cast<float>(q - static_cast<std::int32_t>(z));
    EXPECT_EQ(got[i], F32Bits(want)) << "code " << c << " zero " << z << " signed " << s;
  }
}

// ---- GEMV against the defined-order reference -----------------------------------

// Scale bytes: moderate (finite, no overflow), or any byte (NaN, 0, extremes).
enum class ScaleClass { kModerate, kAnyByte };

struct HostWeights {
  matmul::GemvWeightView view;  // host pointers into the vectors below, entry 0
  std::vector<std::uint8_t> codes, block_scales;
  std::vector<float> channel_scales;
  std::vector<std::uint32_t> words, zeros;
  std::vector<std::uint16_t> group_scales;
  GemvEntrySizes sizes;
};

std::uint16_t RandomActivation(std::mt19937_64& rng, ActivationType t) {
  // Sign, an exponent within 2^-6 .. 2^5, a random mantissa; 1 in 16 zero.
  const std::uint32_t r = static_cast<std::uint32_t>(rng());
  if ((r & 15) == 0) return (r & 16) ? 0x8000 : 0;
  const std::uint32_t sign = (r >> 31) << 15;
  const int e = static_cast<int>((r >> 8) % 12) - 6;
  if (t == ActivationType::kBf16) return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e + 127) << 7) | ((r >> 20) & 0x7F));
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(e + 15) << 10) | ((r >> 20) & 0x3FF));
}

HostWeights MakeWeights(WeightFormat f, WeightPacking packing, long n, long k, long batch, ScaleClass sc,
                        bool with_zeros, ScaleType st, std::mt19937_64& rng) {
  HostWeights h;
  matmul::GemvWeightView& w = h.view;
  w.format = f;
  w.packing = packing;
  w.n = n;
  w.k = k;
  w.group = 128;
  w.scale_type = st;
  w.tensor_scale = sc == ScaleClass::kModerate ? 0.3125f : 1.5e-5f;
  h.sizes = GemvEntryElementCounts(w);
  auto byte = [&] { return static_cast<std::uint8_t>(rng()); };
  h.codes.resize(h.sizes.codes * batch);
  for (auto& c : h.codes) {
    c = byte();
    // FP8 codes: NaN codes only in the any-byte class.
    if (sc == ScaleClass::kModerate && !matmul::GemvIsFp4(f)) {
      while ((c & 0x7F) == 0x7F) c = byte();
    }
  }
  h.block_scales.resize(h.sizes.block_scales * batch);
  for (auto& s : h.block_scales) {
    if (sc == ScaleClass::kAnyByte) {
      s = byte();
    } else if (f == WeightFormat::kNvfp4) {
      s = static_cast<std::uint8_t>(0x20 + rng() % 0x40);  // 2^-3 .. 2^4 (UE4M3)
    } else {
      s = static_cast<std::uint8_t>(120 + rng() % 15);  // 2^-7 .. 2^7 (E8M0)
    }
  }
  h.channel_scales.resize(h.sizes.channel_scales * batch);
  for (auto& s : h.channel_scales) {
    s = sc == ScaleClass::kModerate ? 0.001f + static_cast<float>(rng() % 1000) / 997.0f : F32FromBits(static_cast<std::uint32_t>(rng()));
  }
  h.words.resize(h.sizes.words * batch);
  for (auto& x : h.words) x = static_cast<std::uint32_t>(rng());
  h.group_scales.resize(h.sizes.group_scales * batch);
  for (auto& s : h.group_scales) {
    if (sc == ScaleClass::kAnyByte) {
      s = static_cast<std::uint16_t>(rng());
    } else {
      const std::uint32_t e = static_cast<std::uint32_t>(rng() % 8);  // 2^-9 .. 2^-2
      s = st == ScaleType::kFp16 ? static_cast<std::uint16_t>(((6 + e) << 10) | (rng() & 0x3FF))
                                     : static_cast<std::uint16_t>(((118 + e) << 7) | (rng() & 0x7F));
    }
  }
  h.zeros.resize(h.sizes.zeros * batch);
  for (auto& z : h.zeros) z = static_cast<std::uint32_t>(rng());
  w.codes = h.codes.data();
  w.block_scales = h.block_scales.data();
  w.channel_scales = h.channel_scales.data();
  w.words = h.words.data();
  w.group_scales = h.group_scales.data();
  w.zeros = with_zeros ? h.zeros.data() : nullptr;
  return h;
}

// The view of batch entry l (host or device base pointers).
matmul::GemvWeightView EntryView(matmul::GemvWeightView w, const GemvEntrySizes& s, long l) {
  w.codes = w.codes ? w.codes + l * s.codes : nullptr;
  w.block_scales = w.block_scales ? w.block_scales + l * s.block_scales : nullptr;
  w.channel_scales = w.channel_scales ? w.channel_scales + l * s.channel_scales : nullptr;
  w.words = w.words ? w.words + l * s.words : nullptr;
  w.group_scales = w.group_scales ? w.group_scales + l * s.group_scales : nullptr;
  w.zeros = w.zeros ? w.zeros + l * s.zeros : nullptr;
  return w;
}

struct Case {
  WeightFormat format;
  long n, k, m, batch;
  ActivationType act;
  OutputType out;
  ScaleClass scales;
  WeightPacking packing = WeightPacking::kLowbit;  // kGptq / kAwq for kInt4 / kUint4
  bool zeros = true;
  ScaleType scale_type = ScaleType::kFp16;
};

std::string Describe(const Case& c) {
  return std::string("format ") + matmul::WeightFormatName(c.format) + " packing " +
         matmul::WeightPackingName(c.packing) + " N=" + std::to_string(c.n) + " K=" +
         std::to_string(c.k) + " M=" + std::to_string(c.m) + " L=" + std::to_string(c.batch) + " act " +
         std::to_string(static_cast<int>(c.act)) + " out " + std::to_string(static_cast<int>(c.out)) + " scales " +
         std::to_string(static_cast<int>(c.scales)) + " zeros " + std::to_string(c.zeros) + " scale_type " +
         matmul::ScaleTypeName(c.scale_type);
}

void RunCase(const Case& c, std::uint64_t seed) {
  SCOPED_TRACE(Describe(c));
  std::mt19937_64 rng(seed);
  HostWeights h = MakeWeights(c.format, c.packing, c.n, c.k, c.batch, c.scales, c.zeros, c.scale_type, rng);
  std::vector<std::uint16_t> x(static_cast<std::size_t>(c.batch * c.m * c.k));
  for (auto& v : x) v = RandomActivation(rng, c.act);
  if (c.m >= 3) {  // row 1 of entry 0 all zero, +0 and -0: the sign of a zero sum
    for (long k = 0; k < c.k; ++k) x[c.k + k] = (k % 3 == 0) ? 0x8000 : 0;
  }
  // Reference, entry by entry.
  const std::size_t outs = static_cast<std::size_t>(c.batch * c.m * c.n);
  std::vector<std::uint32_t> want(outs);
  for (long l = 0; l < c.batch; ++l) {
    matmul::GemvDefinedOrder(EntryView(h.view, h.sizes, l), x.data() + l * c.m * c.k, c.act, c.m, c.out,
                             want.data() + l * c.m * c.n);
  }
  // Device.
  DeviceVector<std::uint8_t> d_codes(h.codes), d_bs(h.block_scales);
  DeviceVector<float> d_cs(h.channel_scales);
  DeviceVector<std::uint32_t> d_words(h.words), d_zeros(h.zeros);
  DeviceVector<std::uint16_t> d_gs(h.group_scales), d_x(x);
  const std::size_t out_bytes = outs * (c.out == OutputType::kFp32 ? 4 : 2);
  DeviceVector<std::uint8_t> d_out(out_bytes);
  ASSERT_EQ(cudaMemset(d_out.p, 0x5A, out_bytes), cudaSuccess);  // poison: every output must be written
  GemvLaunch g;
  g.w = h.view;
  g.w.codes = d_codes.p;
  g.w.block_scales = d_bs.p;
  g.w.channel_scales = d_cs.p;
  g.w.words = d_words.p;
  g.w.group_scales = d_gs.p;
  g.w.zeros = c.zeros ? d_zeros.p : nullptr;
  g.batch = c.batch;
  g.m = c.m;
  g.act = c.act;
  g.x = d_x.p;
  g.out_type = c.out;
  g.out = d_out.p;
  const GemvStatus st = LaunchGemv(g);
  ASSERT_TRUE(st.ok) << st.error;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<std::uint8_t> raw = d_out.Get(out_bytes);
  int bad = 0, nan_outputs = 0;
  for (std::size_t i = 0; i < outs; ++i) {
    std::uint32_t got = 0;
    if (c.out == OutputType::kFp32) {
      std::memcpy(&got, raw.data() + 4 * i, 4);
    } else {
      std::uint16_t h16;
      std::memcpy(&h16, raw.data() + 2 * i, 2);
      got = h16;
    }
    const bool both_nan = matmul::GemvOutputIsNan(c.out, got) && matmul::GemvOutputIsNan(c.out, want[i]);
    nan_outputs += matmul::GemvOutputIsNan(c.out, want[i]);
    if (got != want[i] && !both_nan) {
      if (++bad <= 5) {
        ADD_FAILURE() << "output " << i << " (l, m, n) = (" << i / (c.m * c.n) << ", " << (i / c.n) % c.m << ", "
                      << i % c.n << "): got 0x" << std::hex << got << " want 0x" << want[i] << std::dec;
      }
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << outs << " outputs differ";
  if (c.scales == ScaleClass::kModerate) EXPECT_EQ(nan_outputs, 0) << "moderate scales gave NaN outputs";
}

const OutputType kOuts[] = {OutputType::kBf16, OutputType::kFp16, OutputType::kFp32};

TEST(CudaGemv, KMajorFormatsMatchTheDefinedOrderBitForBit) {
  LOWBIT_REQUIRE_GPU();
  const WeightFormat formats[] = {WeightFormat::kNvfp4, WeightFormat::kMxfp4, WeightFormat::kMxfp8E4m3,
                                  WeightFormat::kFp8E4m3PerChannel};
  // K: a multiple of every chunk (vector loads), K % 32 = 8 (short last
  // block, scalar tail), odd K (odd FP4 row bytes), K smaller than a block.
  const long shapes[][2] = {{5, 1536}, {37, 1000}, {9, 33}, {3, 7}};
  std::uint64_t seed = 1;
  int variant = 0;
  for (WeightFormat f : formats) {
    for (const auto& s : shapes) {
      for (long m : {1L, 3L, 16L}) {
        for (ScaleClass sc : {ScaleClass::kModerate, ScaleClass::kAnyByte}) {
          ++variant;
          Case c{f, s[0], s[1], m, 2, variant % 2 ? ActivationType::kBf16 : ActivationType::kFp16, kOuts[variant % 3], sc};
          RunCase(c, seed++);
        }
      }
    }
  }
}

TEST(CudaGemv, Int4GptqAndAwqMatchTheDefinedOrderBitForBit) {
  LOWBIT_REQUIRE_GPU();
  // K % 128 != 0 (a short last group), K a multiple of 128, AWQ with odd K.
  struct S { WeightPacking packing; long n, k; };
  // More groups than a block's slots (GPTQ 16, AWQ 32: several tiles, the
  // last partial) and N past one block's columns (GPTQ 16, AWQ 64 channels).
  const S shapes[] = {{WeightPacking::kGptq, 24, 1000}, {WeightPacking::kGptq, 16, 1024},
                      {WeightPacking::kAwq, 24, 999},   {WeightPacking::kAwq, 16, 1024},
                      {WeightPacking::kGptq, 40, 4104}, {WeightPacking::kAwq, 72, 4999}};
  std::uint64_t seed = 1000;
  int variant = 0;
  for (const S& s : shapes) {
    for (long m : {1L, 3L, 16L}) {
      for (ScaleClass sc : {ScaleClass::kModerate, ScaleClass::kAnyByte}) {
        ++variant;
        // Signed (int4) codes in one variant of four.
        const WeightFormat f = variant % 4 == 3 ? WeightFormat::kInt4 : WeightFormat::kUint4;
        Case c{f, s.n, s.k, m, 2, variant % 2 ? ActivationType::kBf16 : ActivationType::kFp16, kOuts[variant % 3], sc};
        c.packing = s.packing;
        c.zeros = variant % 5 != 4;
        c.scale_type = variant % 3 == 0 ? ScaleType::kBf16 : ScaleType::kFp16;
        RunCase(c, seed++);
      }
    }
  }
}

TEST(CudaGemv, BadArgumentsAreNamedWithoutALaunch) {
  // Host-side checks only: runs without a GPU.
  GemvLaunch g;
  g.w.format = WeightFormat::kNvfp4;
  g.w.n = 8;
  g.w.k = 32;
  static std::uint8_t bytes[64];
  alignas(16) static std::uint16_t xs[64];
  g.w.codes = bytes;
  g.w.block_scales = bytes;
  g.x = xs;
  g.out = xs;
  EXPECT_TRUE(ValidateGemv(g).ok);
  auto error_of = [](GemvLaunch bad) { return ValidateGemv(bad).error; };
  GemvLaunch b = g;
  b.m = 17;
  EXPECT_NE(error_of(b).find("M = 17"), std::string::npos);
  b = g;
  b.w.k = 0;
  EXPECT_NE(error_of(b).find("K = 0"), std::string::npos);
  b = g;
  b.w.block_scales = nullptr;
  EXPECT_NE(error_of(b).find("block_scales"), std::string::npos);
  b = g;
  b.x = reinterpret_cast<const char*>(xs) + 1;
  EXPECT_NE(error_of(b).find("x is not 2-byte aligned"), std::string::npos);
  b = g;
  b.w.format = WeightFormat::kUint4;
  b.w.packing = WeightPacking::kGptq;
  b.w.words = reinterpret_cast<const std::uint32_t*>(xs);
  b.w.group_scales = xs;
  b.w.n = 12;
  EXPECT_NE(error_of(b).find("N = 12 is not a multiple of 8"), std::string::npos);
  b.w.n = 16;
  b.w.k = 12;
  EXPECT_NE(error_of(b).find("K = 12 is not a multiple of 8"), std::string::npos);
  b.w.k = 16;
  b.w.group = 12;
  EXPECT_NE(error_of(b).find("group = 12"), std::string::npos);
  b.w.group = 128;
  EXPECT_TRUE(ValidateGemv(b).ok) << ValidateGemv(b).error;
  b.w.words = reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const char*>(xs) + 2);
  EXPECT_NE(error_of(b).find("4-byte aligned"), std::string::npos);
  b = g;
  b.batch = 0;
  EXPECT_NE(error_of(b).find("batch L = 0"), std::string::npos);
  b = g;
  b.w.n = 1L << 40;
  b.w.k = 1L << 30;
  EXPECT_NE(error_of(b).find("overflows"), std::string::npos);
  // The packing goes with the format (weights.h's vocabulary).
  b = g;
  b.w.packing = WeightPacking::kGptq;
  EXPECT_NE(error_of(b).find("nvfp4 weights take the lowbit packing"), std::string::npos);
  b = g;
  b.w.format = WeightFormat::kInt4;
  EXPECT_NE(error_of(b).find("GPTQ or AWQ packing"), std::string::npos);
  b.w.packing = WeightPacking::kAwq;
  b.w.words = reinterpret_cast<const std::uint32_t*>(xs);
  b.w.group_scales = xs;
  b.w.scale_type = ScaleType::kFp32;
  EXPECT_NE(error_of(b).find("awq: group scales are FP16 or BF16, got fp32"), std::string::npos);
}

}  // namespace
}  // namespace lowbit::cuda::gemv
