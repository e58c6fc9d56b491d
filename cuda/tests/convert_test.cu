// cuda-hw and cuda-sw array conversions equal the model bit for bit: all 2^32
// FP32 inputs per hardware conversion (on the GPU, verify.h), every 16-bit
// input, every code for decodes; the device-compiled model (cuda-sw) against
// the host-compiled model on boundary values plus a strided 2^22 sample for
// every format and several option sets; odd lengths, misaligned buffers and
// argument errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "layout_variants.h"
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/verify.h"
#include "lowbit/formats/convert.h"

namespace lowbit::cuda {
namespace {

using testing::DeviceBuffer;
using testing::Download;
using testing::Upload;

std::string Hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void ExpectClean(const VerifyReport& r, const std::string& what) {
  std::string examples;
  for (int k = 0; k < r.examples; ++k) {
    examples += " in=" + Hex(r.example_input[k]) + " got=" + Hex(r.example_backend[k]) +
                " model=" + Hex(r.example_model[k]);
  }
  EXPECT_EQ(r.mismatches, 0u) << what << examples;
  EXPECT_GT(r.inputs, 0u) << what;
}

// ---------- cuda-hw: every input, on the GPU ----------

struct HwCase {
  ElementOp op;
  FormatId format;
  RoundingMode rounding;
  bool satfinite;
};

std::vector<HwCase> HopperHardwareCases() {
  const RoundingMode rn = RoundingMode::kNearestEven;
  return {
      {ElementOp::kEncodeF32, FormatId::kE4m3, rn, true},
      {ElementOp::kEncodeF32, FormatId::kE5m2, rn, true},
      {ElementOp::kEncodeF32, FormatId::kBf16, rn, false},
      {ElementOp::kEncodeF32, FormatId::kBf16, rn, true},
      {ElementOp::kEncodeF32, FormatId::kBf16, RoundingMode::kTowardZero, false},
      {ElementOp::kEncodeF32, FormatId::kBf16, RoundingMode::kDown, false},
      {ElementOp::kEncodeF32, FormatId::kBf16, RoundingMode::kUp, false},
      {ElementOp::kEncodeF32, FormatId::kFp16, rn, false},
      {ElementOp::kEncodeF32, FormatId::kFp16, rn, true},
      {ElementOp::kEncodeF32, FormatId::kFp16, RoundingMode::kTowardZero, false},
      {ElementOp::kEncodeBf16, FormatId::kE4m3, rn, true},
      {ElementOp::kEncodeBf16, FormatId::kE5m2, rn, true},
      {ElementOp::kEncodeF16, FormatId::kE4m3, rn, true},
      {ElementOp::kEncodeF16, FormatId::kE5m2, rn, true},
      {ElementOp::kDecodeToF32, FormatId::kE4m3, rn, true},
      {ElementOp::kDecodeToF32, FormatId::kE5m2, rn, true},
      {ElementOp::kDecodeToF32, FormatId::kFp16, rn, true},
      {ElementOp::kDecodeToBf16, FormatId::kE4m3, rn, true},
      {ElementOp::kDecodeToBf16, FormatId::kE5m2, rn, true},
  };
}

std::string CaseName(const HwCase& c) {
  return std::string(ElementOpName(c.op)) + " " + Spec(c.format).name + " rounding=" +
         std::to_string(static_cast<int>(c.rounding)) + (c.satfinite ? " satfinite" : "");
}

TEST(CudaHardware, EveryInputEqualsModel) {
  LOWBIT_REQUIRE_GPU();
  for (const HwCase& c : HopperHardwareCases()) {
    EncodeOptions enc;
    if (c.op == ElementOp::kEncodeF32 || c.op == ElementOp::kEncodeBf16 ||
        c.op == ElementOp::kEncodeF16) {
      ASSERT_TRUE(HardwareEncodeOptions(c.op, c.format, c.rounding, c.satfinite, &enc))
          << CaseName(c);
    }
    const DecodeOptions dec = HardwareDecodeOptions();
    ASSERT_TRUE(Supports(Backend::kHardware, c.op, c.format, enc, dec)) << CaseName(c);
    VerifyReport report;
    const Status s = VerifyAllInputs(Backend::kHardware, c.op, c.format, enc, dec, &report);
    ASSERT_TRUE(s.ok) << s.message;
    ExpectClean(report, CaseName(c));
    std::printf("[ verify ] cuda-hw %-40s %llu inputs, %llu mismatches, %.2f ms\n",
                CaseName(c).c_str(), static_cast<unsigned long long>(report.inputs),
                static_cast<unsigned long long>(report.mismatches), report.milliseconds);
  }
}

TEST(CudaHardware, OptionsOutsideTheInstructionAreRefused) {
  // The model's defaults are OCP non-saturating with the NaN sign kept: no
  // Hopper instruction does that (docs/formats-reference.md §4.1 DISAGREE table).
  EXPECT_FALSE(Supports(Backend::kHardware, ElementOp::kEncodeF32, FormatId::kE4m3,
                        EncodeOptions{}, DecodeOptions{}));
  EncodeOptions o;
  ASSERT_TRUE(HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3,
                                    RoundingMode::kNearestEven, true, &o));
  EXPECT_TRUE(Supports(Backend::kHardware, ElementOp::kEncodeF32, FormatId::kE4m3, o, {}));
  o.nan_sign = NanSign::kKeep;
  EXPECT_FALSE(Supports(Backend::kHardware, ElementOp::kEncodeF32, FormatId::kE4m3, o, {}));
  // E4M3 has one NaN per sign, so the payload policy does not matter.
  ASSERT_TRUE(HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3,
                                    RoundingMode::kNearestEven, true, &o));
  o.nan_payload = NanPayload::kQuietOnly;
  EXPECT_TRUE(Supports(Backend::kHardware, ElementOp::kEncodeF32, FormatId::kE4m3, o, {}));
  // No FP4 instruction on Hopper-only builds / devices.
  if (!HardwareHasBlackwellCvt()) {
    EXPECT_FALSE(HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE2m1,
                                       RoundingMode::kNearestEven, true, &o));
  }
  EXPECT_FALSE(HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3,
                                     RoundingMode::kTowardZero, true, &o));
}

// ---------- cuda-sw: the device-compiled model against the host model ----------

std::vector<EncodeOptions> OptionSets() {
  std::vector<EncodeOptions> sets;
  sets.push_back(EncodeOptions{});  // OCP / format default
  EncodeOptions hw;
  HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3, RoundingMode::kNearestEven,
                        true, &hw);
  sets.push_back(hw);
  EncodeOptions rz;
  rz.rounding = RoundingMode::kTowardZero;
  rz.nan_payload = NanPayload::kQuietOnly;
  rz.keep_negative_zero = false;
  sets.push_back(rz);
  EncodeOptions up;
  up.rounding = RoundingMode::kUp;
  up.overflow = Overflow::kSaturate;
  up.inf_input = InfInput::kAlwaysNonFinite;
  up.nan_into_no_nan = NanIntoNoNan::kOppositeSignZero;
  up.zero_into_no_zero = ZeroIntoNoZero::kNan;
  up.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  sets.push_back(up);
  EncodeOptions away;
  away.rounding = RoundingMode::kNearestAway;
  away.overflow = Overflow::kWrap;
  away.nan_sign = NanSign::kNegative;
  away.negative_into_unsigned = NegativeIntoUnsigned::kClampZero;
  sets.push_back(away);
  EncodeOptions odd;
  odd.rounding = RoundingMode::kOdd;
  odd.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
  sets.push_back(odd);
  EncodeOptions down;
  down.rounding = RoundingMode::kDown;
  sets.push_back(down);
  return sets;
}

template <typename Code>
void CheckSwEncode(FormatId format, ElementOp op, const std::vector<std::uint32_t>& in32,
                   const EncodeOptions& o, const std::vector<std::uint32_t>* rbits) {
  const FormatSpec& spec = Spec(format);
  const std::size_t n = in32.size();
  const bool from16 = op != ElementOp::kEncodeF32;
  DeviceBuffer din(n * 4), dout(n * sizeof(Code)), drb(n * 4);
  if (from16) {
    std::vector<std::uint16_t> in16(n);
    for (std::size_t i = 0; i < n; ++i) in16[i] = static_cast<std::uint16_t>(in32[i]);
    Upload(din, in16);
  } else {
    Upload(din, in32);
  }
  if (rbits) Upload(drb, *rbits);
  ConvertRequest r;
  r.op = op;
  r.format = format;
  r.backend = Backend::kSoftware;
  r.input = din.get();
  r.output = dout.get();
  r.count = n;
  r.encode = o;
  r.random_bits = rbits ? drb.get<std::uint32_t>() : nullptr;
  const Status s = Convert(r);
  ASSERT_TRUE(s.ok) << s.message;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Code> got(n);
  Download(got, dout);
  int failures = 0;
  for (std::size_t i = 0; i < n && failures < 5; ++i) {
    EncodeOptions oi = o;
    if (rbits) oi.random_bits = (*rbits)[i];
    std::uint64_t want;
    if (op == ElementOp::kEncodeF32) want = EncodeF32Bits(spec, in32[i], oi).code;
    else if (op == ElementOp::kEncodeBf16) want = EncodeBf16Bits(spec, static_cast<std::uint16_t>(in32[i]), oi).code;
    else want = EncodeF16Bits(spec, static_cast<std::uint16_t>(in32[i]), oi).code;
    if (static_cast<std::uint64_t>(got[i]) != want) {
      ++failures;
      ADD_FAILURE() << ElementOpName(op) << " " << spec.name << " rounding="
                    << static_cast<int>(o.rounding) << " input=" << Hex(in32[i])
                    << " cuda-sw=" << Hex(got[i]) << " host model=" << Hex(want);
    }
  }
}

template <typename Code>
void CheckSwDecodes(FormatId format) {
  const FormatSpec& spec = Spec(format);
  std::vector<std::uint32_t> codes32;
  if (spec.total_bits <= 16) {
    // Every code, repeated to at least 4096 elements, so that the table
    // paths of convert.cu (table_map.cuh) also run their 16-byte units.
    do {
      for (std::uint32_t c = 0; c < (1u << spec.total_bits); ++c) codes32.push_back(c);
    } while (codes32.size() < 4096);
  } else {
    codes32 = testing::F32TestInputs(1 << 20);
  }
  std::vector<Code> codes(codes32.size());
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<Code>(codes32[i]);
  const std::size_t n = codes.size();
  DeviceBuffer din(n * sizeof(Code)), dout(n * 4);
  Upload(din, codes);
  const DecodeOptions decode_sets[] = {DecodeOptions{}, HardwareDecodeOptions(),
                                       DecodeOptions{NanSign::kNegative, NanPayload::kQuietOnly}};
  for (const DecodeOptions& d : decode_sets) {
    for (ElementOp op : {ElementOp::kDecodeToF32, ElementOp::kDecodeToBf16}) {
      if (!Supports(Backend::kSoftware, op, format, {}, d)) continue;
      ConvertRequest r;
      r.op = op;
      r.format = format;
      r.input = din.get();
      r.output = dout.get();
      r.count = n;
      r.decode = d;
      const Status s = Convert(r);
      ASSERT_TRUE(s.ok) << s.message;
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      int failures = 0;
      if (op == ElementOp::kDecodeToF32) {
        std::vector<std::uint32_t> got(n);
        Download(got, dout);
        for (std::size_t i = 0; i < n && failures < 5; ++i) {
          const std::uint32_t want = DecodeToF32Bits(spec, codes[i], d);
          if (got[i] != want) {
            ++failures;
            ADD_FAILURE() << "decode-to-f32 " << spec.name << " code=" << Hex(codes[i])
                          << " cuda-sw=" << Hex(got[i]) << " host=" << Hex(want);
          }
        }
      } else {
        std::vector<std::uint16_t> got(n);
        Download(got, dout);
        constexpr FormatSpec kBf = kBf16;
        for (std::size_t i = 0; i < n && failures < 5; ++i) {
          const std::uint64_t want =
              lowbit::Convert(spec, codes[i], kBf, ToDecodeEncodeOptions(d)).code;
          if (got[i] != want) {
            ++failures;
            ADD_FAILURE() << "decode-to-bf16 " << spec.name << " code=" << Hex(codes[i])
                          << " cuda-sw=" << Hex(got[i]) << " host=" << Hex(want);
          }
        }
      }
    }
  }
}

template <typename Code>
void CheckSwFormat(FormatId format) {
  const std::vector<std::uint32_t> in32 = testing::F32TestInputs(1 << 21);
  std::vector<std::uint32_t> all16(1 << 16);
  for (std::uint32_t i = 0; i < all16.size(); ++i) all16[i] = i;
  for (const EncodeOptions& o : OptionSets()) {
    CheckSwEncode<Code>(format, ElementOp::kEncodeF32, in32, o, nullptr);
    CheckSwEncode<Code>(format, ElementOp::kEncodeBf16, all16, o, nullptr);
    CheckSwEncode<Code>(format, ElementOp::kEncodeF16, all16, o, nullptr);
  }
  // Stochastic rounding with random words, default and explicit bit counts.
  std::mt19937 rng(1234 + static_cast<int>(format));
  std::vector<std::uint32_t> rb(in32.size());
  for (auto& w : rb) w = rng();
  const std::vector<std::uint32_t> rb16(rb.begin(), rb.begin() + all16.size());
  for (int bits : {0, 3, 32}) {
    EncodeOptions sr;
    sr.rounding = RoundingMode::kStochastic;
    sr.random_bit_count = bits;
    CheckSwEncode<Code>(format, ElementOp::kEncodeF32, in32, sr, &rb);
    // 2^16 BF16 inputs would take the table path of a deterministic map
    // (table_map.cuh); stochastic rounding must not, its word is per element.
    CheckSwEncode<Code>(format, ElementOp::kEncodeBf16, all16, sr, &rb16);
  }
  CheckSwDecodes<Code>(format);
}

TEST(CudaSoftware, DeviceModelEqualsHostModelForEveryFormat) {
  LOWBIT_REQUIRE_GPU();
#define LOWBIT_SW_FORMAT(Id, spec)                                                       \
  {                                                                                      \
    SCOPED_TRACE(spec.name);                                                             \
    if constexpr (spec.total_bits <= 8) CheckSwFormat<std::uint8_t>(FormatId::k##Id);    \
    else if constexpr (spec.total_bits <= 16) CheckSwFormat<std::uint16_t>(FormatId::k##Id); \
    else if constexpr (spec.total_bits <= 32) CheckSwFormat<std::uint32_t>(FormatId::k##Id); \
    else CheckSwFormat<std::uint64_t>(FormatId::k##Id);                                  \
  }
  LOWBIT_FORMATS(LOWBIT_SW_FORMAT)
#undef LOWBIT_SW_FORMAT
}

TEST(CudaSoftware, SweepRunsThroughTheSameTable) {
  LOWBIT_REQUIRE_GPU();
  VerifyReport report;
  const Status s = VerifyAllInputs(Backend::kSoftware, ElementOp::kEncodeF32, FormatId::kE2m1,
                                   EncodeOptions{}, DecodeOptions{}, &report);
  ASSERT_TRUE(s.ok) << s.message;
  EXPECT_EQ(report.inputs, std::uint64_t{1} << 32);
  ExpectClean(report, "cuda-sw e2m1");
  std::printf("[ verify ] cuda-sw encode-f32 e2m1 (model vs itself) %.2f ms\n", report.milliseconds);
}

// ---------- array plumbing: lengths, alignment, guards ----------

// Every layout variant (layout_variants.h: the current layouts, the ones they
// replaced, the streaming-hint ones the benchmark also times), both
// backends, a narrowing (FP32 -> E4M3) and a widening (E4M3 -> BF16) map.
TEST(CudaArrays, AnyLengthAnyAlignmentWritesExactlyTheRange) {
  LOWBIT_REQUIRE_GPU();
  EncodeOptions hw;
  ASSERT_TRUE(HardwareEncodeOptions(ElementOp::kEncodeF32, FormatId::kE4m3,
                                    RoundingMode::kNearestEven, true, &hw));
  const DecodeOptions hw_decode = HardwareDecodeOptions(FormatId::kE4m3);
  std::mt19937 rng(7);
  for (LayoutVariant variant : kAllLayoutVariants) {
    for (Backend backend : kAllBackends) {
      // BF16 -> E4M3 as well: cuda-sw maps 16-bit sources through a table
      // from 2^16 elements (table_map.cuh), byte sources (E4M3 -> BF16) always.
      for (ElementOp op : {ElementOp::kEncodeF32, ElementOp::kEncodeBf16, ElementOp::kDecodeToBf16}) {
        const bool encode = op != ElementOp::kDecodeToBf16;
        const std::size_t in_size = op == ElementOp::kEncodeF32 ? 4 : op == ElementOp::kEncodeBf16 ? 2 : 1;
        const std::size_t out_size = encode ? 1 : 2;
        for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{15}, std::size_t{16},
                              std::size_t{17}, std::size_t{63}, std::size_t{255}, std::size_t{256},
                              std::size_t{65535}, std::size_t{65536}, std::size_t{1000003}}) {
          for (std::size_t in_off : {0, 1, 3}) {
            for (std::size_t out_off : {0, 5}) {
              std::vector<std::uint8_t> in(n * in_size);
              for (auto& x : in) x = static_cast<std::uint8_t>(rng());
              DeviceBuffer din((n + in_off) * in_size), dout((n + out_off + 64) * out_size);
              Upload(din, in, in_off * in_size);
              std::vector<std::uint8_t> poison((n + out_off + 64) * out_size, 0xA5);
              Upload(dout, poison);
              ConvertRequest r;
              r.op = op;
              r.format = FormatId::kE4m3;
              r.backend = backend;
              r.input = din.get<char>() + in_off * in_size;
              r.output = dout.get<char>() + out_off * out_size;
              r.count = n;
              r.encode = hw;
              r.decode = hw_decode;
              const Status s = Convert(r, variant);
              ASSERT_TRUE(s.ok) << s.message;
              ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
              std::vector<std::uint8_t> got((n + out_off + 64) * out_size);
              Download(got, dout);
              const std::string what = std::string(LayoutVariantName(variant)) + " " + BackendName(backend) + " " +
                                       ElementOpName(op) + " n=" + std::to_string(n);
              for (std::size_t i = 0; i < out_off * out_size; ++i) ASSERT_EQ(got[i], 0xA5) << "wrote before " << what;
              for (std::size_t i = 0; i < 64 * out_size; ++i) {
                ASSERT_EQ(got[(out_off + n) * out_size + i], 0xA5) << "wrote after " << what;
              }
              for (std::size_t i = 0; i < n; ++i) {
                if (op == ElementOp::kEncodeF32) {
                  std::uint32_t x;
                  std::memcpy(&x, &in[4 * i], 4);
                  ASSERT_EQ(got[out_off + i], EncodeF32Bits(kE4m3, x, hw).code) << what << " i=" << i;
                } else if (op == ElementOp::kEncodeBf16) {
                  std::uint16_t x;
                  std::memcpy(&x, &in[2 * i], 2);
                  ASSERT_EQ(got[out_off + i], EncodeBf16Bits(kE4m3, x, hw).code) << what << " i=" << i;
                } else {
                  const std::uint16_t y = static_cast<std::uint16_t>(got[2 * (out_off + i)] |
                                                                     (got[2 * (out_off + i) + 1] << 8));
                  ASSERT_EQ(y, ::lowbit::Convert(kE4m3, in[i], kBf16, ToDecodeEncodeOptions(hw_decode)).code)
                      << what << " i=" << i;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(CudaArrays, BadArgumentsReturnErrors) {
  LOWBIT_REQUIRE_GPU();
  DeviceBuffer a(64), b(64);
  std::vector<float> host(16);
  ConvertRequest r;
  r.op = ElementOp::kEncodeF32;
  r.format = FormatId::kE4m3;
  r.backend = Backend::kSoftware;
  r.count = 16;
  r.input = nullptr;
  r.output = b.get();
  EXPECT_FALSE(Convert(r).ok);
  r.input = host.data();
  Status s = Convert(r);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("device memory"), std::string::npos) << s.message;
  r.input = a.get();
  EXPECT_TRUE(Convert(r).ok);
  r.backend = Backend::kHardware;  // default options: non-saturating, no instruction
  s = Convert(r);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("cuda-sw"), std::string::npos) << s.message;
  r.backend = Backend::kSoftware;
  r.encode.rounding = RoundingMode::kStochastic;
  EXPECT_FALSE(Convert(r).ok);  // no random bits
  r.encode = {};
  r.op = ElementOp::kDecodeToBf16;
  r.format = FormatId::kFp16;  // BF16 cannot hold every FP16 value
  EXPECT_FALSE(Convert(r).ok);
  r.format = static_cast<FormatId>(200);
  EXPECT_FALSE(Convert(r).ok);
  r.format = FormatId::kE4m3;
  r.count = 0;
  r.input = nullptr;
  EXPECT_TRUE(Convert(r).ok);  // nothing to do is not an error
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace lowbit::cuda
