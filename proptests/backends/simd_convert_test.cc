// SIMD array kernels (simd.h ConvertOnTarget) against the scalar model, on
// each compiled Highway target (a gtest parameter, simd_test_util.h): every
// encode from FP32 on all 2^32 inputs at ci and full (RNE with the format's
// overflow and with satfinite) and over a strided sample, every 16-bit input of
// the BF16/FP16 encodes, every code of every decode, for every rounding mode
// and policy bundle; RapidCheck arrays with odd lengths and unaligned
// pointers; the argument errors; and the registry rows.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"
#include "lowbit/simd/register.h"
#include "lowbit/simd/simd.h"
// The decode tables are private to the SIMD library (no public entry point);
// the test reads them to check the premise of the register-table decodes.
#include "../../simd/src/decode_tables.h"
#include "option_generators.h"
#include "rounding_classes.h"
#include "simd_test_util.h"
#include "test_level.h"

namespace lowbit {
namespace {

using registry::ConvertArgs;
using registry::Operation;
using testing::CurrentTestLevel;
using testing::TestLevel;

using testing::Hex;

std::size_t InputBytes(Operation op, const FormatSpec& spec) {
  switch (op) {
    case Operation::kEncodeF32:
      return 4;
    case Operation::kEncodeBf16:
    case Operation::kEncodeF16:
      return 2;
    default:
      return registry::CodeBytes(spec);
  }
}
std::size_t OutputBytes(Operation op, const FormatSpec& spec) {
  switch (op) {
    case Operation::kDecodeToF32:
      return 4;
    case Operation::kDecodeToBf16:
      return 2;
    default:
      return registry::CodeBytes(spec);
  }
}
const FormatSpec& SourceSpec(Operation op, const FormatSpec& spec) {
  switch (op) {
    case Operation::kEncodeF32:
      return kFp32;
    case Operation::kEncodeBf16:
      return kBf16;
    case Operation::kEncodeF16:
      return kFp16;
    default:
      return spec;
  }
}
const FormatSpec& DestSpec(Operation op, const FormatSpec& spec) {
  switch (op) {
    case Operation::kDecodeToF32:
      return kFp32;
    case Operation::kDecodeToBf16:
      return kBf16;
    default:
      return spec;
  }
}

void PutElement(std::vector<std::uint8_t>& buffer, std::size_t bytes, std::size_t i,
                std::uint64_t v) {
  std::memcpy(buffer.data() + i * bytes, &v, bytes);  // little endian
}
std::uint64_t GetElement(const std::uint8_t* buffer, std::size_t bytes, std::size_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, buffer + i * bytes, bytes);
  return v;
}

// One operation on one format with one option set, applied to `inputs`.
struct Job {
  Operation op;
  FormatId format;
  EncodeOptions encode;
  DecodeOptions decode;
};

std::uint32_t RandomWord(std::uint64_t input, std::size_t i) {
  return testing::MixedWord(input * 0x9E3779B97F4A7C15ULL + i);
}

std::vector<std::uint64_t> ModelOutputs(const Job& job, const std::vector<std::uint64_t>& inputs) {
  const FormatSpec& spec = Spec(job.format);
  const FormatSpec& src = SourceSpec(job.op, spec);
  const FormatSpec& dst = DestSpec(job.op, spec);
  const bool decode = job.op == Operation::kDecodeToF32 || job.op == Operation::kDecodeToBf16;
  EncodeOptions o = decode ? ToDecodeEncodeOptions(job.decode) : job.encode;
  std::vector<std::uint64_t> out(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (o.rounding == RoundingMode::kStochastic) o.random_bits = RandomWord(inputs[i], i);
    out[i] = Convert(src, inputs[i], dst, o).code;
  }
  return out;
}

// Runs the SIMD kernel on `target` with the input and output placed `offset`
// bytes past an aligned start.
std::vector<std::uint64_t> SimdOutputs(const Job& job, const std::vector<std::uint64_t>& inputs,
                                       std::int64_t target, std::size_t offset = 0) {
  const FormatSpec& spec = Spec(job.format);
  const std::size_t in_bytes = InputBytes(job.op, spec);
  const std::size_t out_bytes = OutputBytes(job.op, spec);
  std::vector<std::uint8_t> in(inputs.size() * in_bytes + offset + 8);
  std::vector<std::uint8_t> out(inputs.size() * out_bytes + offset + 8, 0xCD);
  std::vector<std::uint8_t> packed(inputs.size() * in_bytes);
  for (std::size_t i = 0; i < inputs.size(); ++i) PutElement(packed, in_bytes, i, inputs[i]);
  if (!packed.empty()) std::memcpy(in.data() + offset, packed.data(), packed.size());
  std::vector<std::uint32_t> random(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) random[i] = RandomWord(inputs[i], i);
  ConvertArgs args{};
  args.operation = job.op;
  args.format = job.format;
  args.input = in.data() + offset;
  args.output = out.data() + offset;
  args.count = inputs.size();
  args.encode = job.encode;
  args.decode = job.decode;
  args.random_bits = job.encode.rounding == RoundingMode::kStochastic ? random.data() : nullptr;
  const registry::Status status = simd::ConvertOnTarget(target, args);
  EXPECT_TRUE(status.ok) << status.message;
  std::vector<std::uint64_t> result(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    result[i] = GetElement(out.data() + offset, out_bytes, i);
  }
  // Nothing written past the end.
  for (std::size_t b = offset + inputs.size() * out_bytes; b < out.size(); ++b) {
    EXPECT_EQ(out[b], 0xCD) << "write past the end at byte " << b;
  }
  for (std::size_t b = 0; b < offset; ++b) EXPECT_EQ(out[b], 0xCD) << "write before the start";
  return result;
}

// Number of mismatches; the first few are reported.
std::size_t Compare(const Job& job, const std::vector<std::uint64_t>& inputs,
                    const std::vector<std::uint64_t>& expected,
                    const std::vector<std::uint64_t>& actual, std::int64_t target) {
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    if (++mismatches <= 5) {
      ADD_FAILURE() << registry::OperationName(job.op) << " " << Spec(job.format).name << " on "
                    << simd::TargetName(target) << " [" << testing::Describe(job.encode)
                    << "] input " << Hex(inputs[i]) << ": model " << Hex(expected[i]) << ", simd "
                    << Hex(actual[i]);
    }
  }
  return mismatches;
}

void CheckTarget(const Job& job, const std::vector<std::uint64_t>& inputs, std::int64_t target) {
  const std::vector<std::uint64_t> expected = ModelOutputs(job, inputs);
  EXPECT_EQ(Compare(job, inputs, expected, SimdOutputs(job, inputs, target), target), 0u);
}

std::vector<FormatId> EncodableFormats() {
  std::vector<FormatId> v;
  for (FormatId id : kAllFormats) {
    if (registry::OperationApplies(Operation::kEncodeF32, id)) v.push_back(id);
  }
  return v;
}

// Every option set a conversion is checked under: each rounding mode with
// each overflow policy and each policy bundle, plus stochastic with a
// non-default random bit count.
std::vector<EncodeOptions> OptionSets(const FormatSpec& dst) {
  std::vector<EncodeOptions> v;
  for (const testing::OptionSet& set : testing::OptionSetsFor(dst)) v.push_back(set.options);
  EncodeOptions few_random;
  few_random.rounding = RoundingMode::kStochastic;
  few_random.random_bit_count = 3;
  v.push_back(few_random);
  few_random.random_bit_count = 20;
  v.push_back(few_random);
  return v;
}

// FP32 inputs at ci: every sign and exponent with mantissas at every rounding
// boundary (ties, one either side, all ones), plus a stride through all 2^32.
std::vector<std::uint64_t> Fp32Sample(std::uint32_t stride) {
  std::vector<std::uint64_t> v;
  for (std::uint32_t sign = 0; sign < 2; ++sign) {
    for (std::uint32_t e = 0; e < 256; ++e) {
      const std::uint32_t top = (sign << 31) | (e << 23);
      for (int k = 0; k < 23; ++k) {
        const std::uint32_t bit = 1u << k;
        for (std::uint32_t m : {bit, bit - 1, bit + 1, (bit << 1) - 1, 0x7FFFFFu & ~(bit - 1),
                                (0x7FFFFFu & ~((bit << 1) - 1)) | bit}) {
          v.push_back(top | (m & 0x7FFFFFu));
        }
      }
      v.push_back(top);
    }
  }
  for (std::uint64_t x = 0; x < (std::uint64_t{1} << 32); x += stride) v.push_back(x);
  return v;
}

std::vector<std::uint64_t> AllCodes(int bits) {
  std::vector<std::uint64_t> v(std::size_t{1} << bits);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

LOWBIT_SIMD_TARGET_SUITE(SimdEncodeF32);
TEST_P(SimdEncodeF32, SampleEveryFormatModeAndPolicy) {
  const std::uint32_t stride = CurrentTestLevel() == TestLevel::kSmoke ? 1000003u : 104729u;
  const std::vector<std::uint64_t> inputs = Fp32Sample(stride);
  for (FormatId id : EncodableFormats()) {
    for (const EncodeOptions& o : OptionSets(Spec(id))) {
      CheckTarget(Job{Operation::kEncodeF32, id, o, {}}, inputs, target());
    }
  }
}

LOWBIT_SIMD_TARGET_SUITE(SimdEncode16);
TEST_P(SimdEncode16, AllInputsEveryFormatModeAndPolicy) {
  const std::vector<std::uint64_t> inputs = AllCodes(16);
  for (Operation op : {Operation::kEncodeBf16, Operation::kEncodeF16}) {
    for (FormatId id : EncodableFormats()) {
      std::vector<EncodeOptions> sets = OptionSets(Spec(id));
      if (CurrentTestLevel() == TestLevel::kSmoke) sets.resize(2);
      for (const EncodeOptions& o : sets) CheckTarget(Job{op, id, o, {}}, inputs, target());
    }
  }
}

LOWBIT_SIMD_TARGET_SUITE(SimdDecode);
TEST_P(SimdDecode, AllCodesEveryFormatAndNanPolicy) {
  for (Operation op : {Operation::kDecodeToF32, Operation::kDecodeToBf16}) {
    for (FormatId id : kAllFormats) {
      if (!registry::OperationApplies(op, id)) continue;
      const FormatSpec& spec = Spec(id);
      // FP32 codes: the boundary sample (all 2^32 would add nothing a decode
      // can get wrong that the sample misses: it only touches NaN/zero).
      const std::vector<std::uint64_t> inputs =
          spec.total_bits == 32 ? Fp32Sample(1000003u) : AllCodes(spec.total_bits);
      for (int s = 0; s < 3; ++s) {
        for (int pl = 0; pl < 4; ++pl) {
          DecodeOptions d;
          d.nan_sign = static_cast<NanSign>(s);
          d.nan_payload = static_cast<NanPayload>(pl);
          CheckTarget(Job{op, id, {}, d}, inputs, target());
          if (spec.total_bits > 16) continue;
          // Every code again in a scrambled order (167 is odd, so i * 167 mod
          // 2^bits visits each code once per 2^bits), twice over and cut short
          // of a multiple of 64: the register-table decodes (convert-inl.h
          // DecodeNarrowLoop) permute codes across 128-bit blocks and finish
          // with a padded tail, and both would show as misplaced codes here;
          // the FP16 decode's vcvtph2ps path sees NaN and Inf lanes among
          // finite ones (in order, whole vectors are special or none is).
          const std::uint64_t codes = std::uint64_t{1} << spec.total_bits;
          std::vector<std::uint64_t> scrambled(2 * codes - (codes > 37 ? 37 : 1));
          for (std::size_t i = 0; i < scrambled.size(); ++i) scrambled[i] = (i * 167) % codes;
          CheckTarget(Job{op, id, {}, d}, scrambled, target());
        }
      }
    }
  }
}

// The decodes of 5- to 8-bit formats read the tables as 16-bit halves on
// AVX-512 targets (convert-inl.h DecodeNarrowLoop), leaving out a half that
// decode_tables.h marks zero: the halves rebuild every entry, the zero flags
// are true only where they hold, and the byte planes are the halves' bytes.
TEST(SimdDecodeTables, NarrowHalvesRebuildEveryEntry) {
  int low_zero_f32 = 0;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits > 8) continue;
    for (bool to_bf16 : {false, true}) {
      for (int s = 0; s < 3; ++s) {
        for (int pl = 0; pl < 4; ++pl) {
          DecodeOptions d;
          d.nan_sign = static_cast<NanSign>(s);
          d.nan_payload = static_cast<NanPayload>(pl);
          const simd::NarrowDecodeTable n = simd::DecodeTableNarrow(id, to_bf16, d);
          const std::int32_t* wide = simd::DecodeTable(id, to_bf16, d);
          if (to_bf16) EXPECT_TRUE(n.high_zero) << Spec(id).name;
          if (!to_bf16 && n.low_zero) ++low_zero_f32;
          for (int c = 0; c < simd::kDecodeTableSize; ++c) {
            const std::uint32_t low = n.low_zero ? 0u : n.low[c];
            const std::uint32_t high = n.high_zero ? 0u : n.high[c];
            ASSERT_EQ(high << 16 | low, static_cast<std::uint32_t>(wide[c]))
                << Spec(id).name << " code " << c;
            ASSERT_EQ(n.planes[c] | n.planes[256 + c] << 8, n.low[c]) << c;
            ASSERT_EQ(n.planes[512 + c] | n.planes[768 + c] << 8, n.high[c]) << c;
          }
        }
      }
    }
  }
  // The FP32 fast path (no low half) serves most tables, not none.
  EXPECT_GT(low_zero_f32, 0);
}

// All 2^32 FP32 inputs for RNE (format overflow and satfinite): one test per
// (target, format, overflow) so that one conversion can be run alone. At full
// on every target this CPU runs; at ci on the target kBestTarget dispatches to
// (what every caller here gets), the others taking SimdEncodeF32's boundary
// sample and stride through all 2^32 (above) — every target at ci was 430 of
// CI's ~1,800 test-seconds on 2 cores. The expected code of every input is the model's, asked once per
// rounding class (rounding_classes.h says why that is the model's code for
// every input; ModelClassesAreSound checks the premise).
struct ExhaustiveCase {
  FormatId format;
  Overflow overflow;
};

void ExpectedGroup(const FormatSpec& dst, const EncodeOptions& o, std::uint32_t sign,
                   std::uint32_t e, std::uint8_t* out) {
  testing::ExpectedGroupByClasses(dst, sign, e, registry::CodeBytes(dst), out,
                                  [&](std::uint32_t x) { return EncodeF32Bits(dst, x, o).code; });
}

class SimdEncodeF32Exhaustive : public testing::SimdTargetCaseTest<ExhaustiveCase> {};

TEST_P(SimdEncodeF32Exhaustive, AllInputs) {
  if (CurrentTestLevel() == TestLevel::kSmoke) GTEST_SKIP() << "LOWBIT_TEST_LEVEL=ci and full";
  if (CurrentTestLevel() == TestLevel::kCi && simd::TargetThatRuns(this->target()) != simd::TargetThatRuns(simd::kBestTarget)) {
    GTEST_SKIP() << "all 2^32 inputs on this target: LOWBIT_TEST_LEVEL=full (ci: the dispatched target)";
  }
  const FormatId id = test_case().format;
  // FP32 -> FP32 is no narrowing (only NaNs change) and has no rounding
  // classes: the model per input, about two minutes. Full only.
  if (CurrentTestLevel() == TestLevel::kCi && id == FormatId::kFp32) {
    GTEST_SKIP() << "FP32 -> FP32: LOWBIT_TEST_LEVEL=full only";
  }
  const FormatSpec& dst = Spec(id);
  EncodeOptions o;
  o.overflow = test_case().overflow;
  const std::int64_t target = this->target();
  const std::size_t out_bytes = registry::CodeBytes(dst);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> first_bad(2, ~std::uint64_t{0});
  auto work = [&](unsigned part) {
    constexpr std::uint32_t kGroup = 1u << 23;
    std::vector<std::uint32_t> in(kGroup);
    std::vector<std::uint8_t> expected(std::size_t{kGroup} * out_bytes);
    std::vector<std::uint8_t> actual(std::size_t{kGroup} * out_bytes);
    for (std::uint32_t group = part; group < 512; group += 2) {
      const std::uint32_t sign = group >> 8, e = group & 0xFF;
      const std::uint32_t top = (sign << 31) | (e << 23);
      ExpectedGroup(dst, o, sign, e, expected.data());
      for (std::uint32_t m = 0; m < kGroup; ++m) in[m] = top | m;
      ConvertArgs args{};
      args.operation = Operation::kEncodeF32;
      args.format = id;
      args.input = in.data();
      args.output = actual.data();
      args.count = kGroup;
      args.encode = o;
      simd::ConvertOnTarget(target, args);
      if (std::memcmp(expected.data(), actual.data(), expected.size()) == 0) continue;
      for (std::uint32_t m = 0; m < kGroup; ++m) {
        if (std::memcmp(expected.data() + m * out_bytes, actual.data() + m * out_bytes,
                        out_bytes) != 0) {
          first_bad[part] = std::min<std::uint64_t>(first_bad[part], top | m);
          break;
        }
      }
    }
  };
  std::thread t0(work, 0u), t1(work, 1u);
  t0.join();
  t1.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s %s on %s: all 2^32 inputs in %.1f s\n", dst.name,
              testing::OverflowName(o.overflow), simd::TargetName(target), seconds);
  EXPECT_EQ(std::min(first_bad[0], first_bad[1]), ~std::uint64_t{0})
      << "first mismatching input " << Hex(std::min(first_bad[0], first_bad[1]));
}

// The premise of the class shortcut, checked against the model itself on
// inputs spread over every kind of group, for every destination and both
// overflow options the sweep uses (at ci and full, as the sweep).
TEST(SimdEncodeF32ModelClasses, AreSound) {
  if (CurrentTestLevel() == TestLevel::kSmoke) GTEST_SKIP() << "LOWBIT_TEST_LEVEL=ci and full";
  std::vector<std::uint8_t> expected(std::size_t{testing::kFp32GroupSize} * 4);
  std::uint64_t checked = 0;
  for (FormatId id : EncodableFormats()) {
    for (Overflow overflow : {Overflow::kFormatDefault, Overflow::kSaturate}) {
      EncodeOptions o;
      o.overflow = overflow;
      const FormatSpec& dst = Spec(id);
      const std::size_t out_bytes = registry::CodeBytes(dst);
      for (std::uint32_t group : testing::kClassCheckGroups) {
        const std::uint32_t sign = group >> 8, e = group & 0xFF;
        if (testing::GroupMethodFor(dst, sign, e, [&](std::uint32_t x) { return EncodeF32Bits(dst, x, o).code; }) ==
            testing::GroupMethod::kPerInput) {
          continue;  // the model per input: nothing to check
        }
        ExpectedGroup(dst, o, sign, e, expected.data());
        testing::ForEachClassEdgeMantissa(dst, e, [&](std::uint32_t m) {
          const std::uint32_t x = (sign << 31) | (e << 23) | m;
          std::uint64_t code = 0;
          std::memcpy(&code, expected.data() + std::size_t{m} * out_bytes, out_bytes);
          ASSERT_EQ(code, EncodeF32Bits(dst, x, o).code)
              << dst.name << " " << testing::OverflowName(overflow) << " " << Hex(x);
          ++checked;
        });
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(checked, 1000000u);
}

std::vector<ExhaustiveCase> ExhaustiveCases() {
  std::vector<ExhaustiveCase> v;
  for (FormatId id : EncodableFormats()) {
    for (Overflow overflow : {Overflow::kFormatDefault, Overflow::kSaturate}) {
      v.push_back({id, overflow});
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(
    simd, SimdEncodeF32Exhaustive,
    ::testing::Combine(::testing::ValuesIn(simd::CompiledTargets()), ::testing::ValuesIn(ExhaustiveCases())),
    [](const ::testing::TestParamInfo<std::tuple<std::int64_t, ExhaustiveCase>>& info) {
      const ExhaustiveCase& c = std::get<1>(info.param);
      return std::string(simd::TargetName(std::get<0>(info.param))) + "_" + Spec(c.format).name +
             "_" + testing::OverflowName(c.overflow);
    });

// Arrays of any length at any byte offset: every element equals the model
// and nothing outside the output is written.
void ArraysMatchModel(std::int64_t target) {
  std::vector<std::pair<Operation, FormatId>> rows;
  for (Operation op : registry::kAllOperations) {
    for (FormatId id : kAllFormats) {
      if (registry::OperationApplies(op, id)) rows.emplace_back(op, id);
    }
  }
  const auto [op, id] = *rc::gen::elementOf(rows);
  const FormatSpec& spec = Spec(id);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, 100);
  const std::size_t offset = *rc::gen::inRange<std::size_t>(0, 8);
  const int in_bits = static_cast<int>(InputBytes(op, spec) * 8);
  const std::uint64_t in_mask =
      op == Operation::kDecodeToF32 || op == Operation::kDecodeToBf16
          ? spec.CodeMask()
          : (in_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << in_bits) - 1);
  std::vector<std::uint64_t> inputs(count);
  for (auto& x : inputs) x = *rc::gen::arbitrary<std::uint64_t>() & in_mask;
  const auto options = OptionSets(spec);
  Job job{op, id, options[*rc::gen::inRange<std::size_t>(0, options.size())], {}};
  const std::vector<std::uint64_t> expected = ModelOutputs(job, inputs);
  const auto actual = SimdOutputs(job, inputs, target, offset);
  RC_ASSERT(Compare(job, inputs, expected, actual, target) == 0u);
}

LOWBIT_SIMD_TARGET_SUITE(SimdArrays);
TEST_P(SimdArrays, OddLengthsAndOffsetsMatchModel) {
  testing::CheckAtLevel({20, 100, 5000}, [this] { ArraysMatchModel(target()); });
}

LOWBIT_SIMD_TARGET_SUITE(SimdErrors);
TEST_P(SimdErrors, RejectsWhatIsWrong) {
  std::uint8_t out[4];
  float in[4] = {1, 2, 3, 4};
  ConvertArgs args{};
  args.operation = Operation::kEncodeF32;
  args.format = FormatId::kE4m3;
  args.input = nullptr;
  args.output = out;
  args.count = 4;
  registry::Status s = simd::ConvertOnTarget(target(), args);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.message.find("null input"), std::string::npos) << s.message;
  args.input = in;
  args.output = nullptr;
  s = simd::ConvertOnTarget(target(), args);
  EXPECT_NE(s.message.find("null output"), std::string::npos) << s.message;
  args.output = out;
  args.encode.rounding = RoundingMode::kStochastic;
  s = simd::ConvertOnTarget(target(), args);
  EXPECT_NE(s.message.find("random_bits"), std::string::npos) << s.message;
  args.encode.rounding = RoundingMode::kNearestEven;
  ConvertArgs bad = args;
  bad.operation = Operation::kDecodeToBf16;
  bad.format = FormatId::kFp16;
  EXPECT_FALSE(simd::ConvertOnTarget(target(), bad).ok);
  // count 0 with null pointers is fine.
  ConvertArgs empty = args;
  empty.input = nullptr;
  empty.output = nullptr;
  empty.count = 0;
  EXPECT_TRUE(simd::ConvertOnTarget(target(), empty).ok);
}

// Every (operation, format) row of this target is registered as
// "simd:<TARGET>" and available (a target the CPU lacks is skipped above).
LOWBIT_SIMD_TARGET_SUITE(SimdRegistry);
TEST_P(SimdRegistry, EveryOperationIsRegistered) {
  registry::Registry r;
  registry::RegisterSimdBackends(r);
  const std::string backend = std::string("simd:") + target_name();
  for (Operation op : registry::kAllOperations) {
    for (FormatId id : kAllFormats) {
      if (!registry::OperationApplies(op, id)) continue;
      const registry::KernelEntry* e = r.Find(op, id, backend);
      ASSERT_NE(e, nullptr) << backend << " " << registry::OperationName(op) << " " << Spec(id).name;
      EXPECT_TRUE(e->available());
    }
  }
}

}  // namespace
}  // namespace lowbit
