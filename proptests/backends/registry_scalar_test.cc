// The scalar backend over arrays: element i of the output is the model's
// Convert of element i of the input, for odd lengths (no hidden vector width),
// every code width, every option set, without writing past `count`; and a
// literal table from docs/formats-reference.md pins a few outputs independently of the model.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

const Registry& Scalar() {
  static const Registry registry = [] {
    Registry r;
    RegisterScalarBackend(r);
    return r;
  }();
  return registry;
}

// The model's view of a row, from the registry's operation table.
struct Sides {
  const FormatSpec* input;
  std::size_t input_bytes;
  const FormatSpec* output;
  std::size_t output_bytes;
};

Sides SidesOf(Operation op, FormatId format) {
  return {&InputSpec(op, format), InputBytes(op, format), &OutputSpec(op, format),
          OutputBytes(op, format)};
}

std::uint64_t Load(const std::vector<unsigned char>& bytes, std::size_t i, std::size_t width) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * width, width);  // little-endian host
  return v;
}

void Store(std::vector<unsigned char>& bytes, std::size_t i, std::size_t width, std::uint64_t v) {
  std::memcpy(bytes.data() + i * width, &v, width);
}

std::vector<EncodeOptions> OptionSets() {
  std::vector<EncodeOptions> sets;
  for (RoundingMode mode :
       {RoundingMode::kNearestEven, RoundingMode::kNearestAway, RoundingMode::kTowardZero,
        RoundingMode::kUp, RoundingMode::kDown, RoundingMode::kOdd, RoundingMode::kStochastic}) {
    for (Overflow overflow : {Overflow::kFormatDefault, Overflow::kSaturate}) {
      EncodeOptions o;
      o.rounding = mode;
      o.overflow = overflow;
      sets.push_back(o);
    }
  }
  EncodeOptions nvidia;  // NaN and zero policies of the non-default kinds
  nvidia.nan_sign = NanSign::kPositive;
  nvidia.nan_payload = NanPayload::kAllOnes;
  nvidia.nan_into_no_nan = NanIntoNoNan::kPositiveZero;
  nvidia.keep_negative_zero = false;
  nvidia.negative_into_unsigned = NegativeIntoUnsigned::kMagnitude;
  sets.push_back(nvidia);
  return sets;
}

// Inputs biased to special bit patterns: all-zero / all-one low bits, signs,
// exponent extremes, plus uniform ones.
std::uint64_t RandomInput(std::mt19937_64& rng, std::uint64_t mask) {
  std::uint64_t v = rng();
  switch (rng() % 4) {
    case 0:
      v &= ~((std::uint64_t{1} << (rng() % 24)) - 1);
      break;
    case 1:
      v |= (std::uint64_t{1} << (rng() % 24)) - 1;
      break;
    default:
      break;
  }
  return v & mask;
}

TEST(RegistryScalar, ArraysMatchTheModelElementByElement) {
  std::mt19937_64 rng(12345);
  int checked_rows = 0;
  const unsigned char kCanary = 0xA5;
  for (const KernelEntry& entry : Scalar().Entries()) {
    const FormatSpec& spec = Spec(entry.format);
    const Sides sides = SidesOf(entry.operation, entry.format);
    const bool is_encode = IsEncode(entry.operation);
    for (std::size_t count : {1u, 3u, 7u, 17u, 255u, 1001u}) {
      for (const EncodeOptions& options : OptionSets()) {
        std::vector<unsigned char> input(count * sides.input_bytes);
        std::vector<unsigned char> output((count + 8) * sides.output_bytes, kCanary);
        std::vector<std::uint32_t> random(count);
        for (std::size_t i = 0; i < count; ++i) {
          Store(input, i, sides.input_bytes, RandomInput(rng, sides.input->CodeMask()));
          random[i] = static_cast<std::uint32_t>(rng());
        }
        ConvertArgs args{.operation = entry.operation, .format = entry.format};
        args.input = input.data();
        args.output = output.data();
        args.count = count;
        if (is_encode) {
          args.encode = options;
          args.random_bits = random.data();
        } else {
          args.decode.nan_sign = options.nan_sign;
          args.decode.nan_payload = options.nan_payload;
        }
        const Status status = entry.run(args);
        ASSERT_TRUE(status.ok) << status.message;
        for (std::size_t i = 0; i < count; ++i) {
          EncodeOptions expected_options =
              is_encode ? options : ToDecodeEncodeOptions(args.decode);
          expected_options.random_bits = random[i];
          const std::uint64_t in = Load(input, i, sides.input_bytes);
          const std::uint64_t expected =
              Convert(*sides.input, in, *sides.output, expected_options).code;
          ASSERT_EQ(Load(output, i, sides.output_bytes), expected)
              << OperationName(entry.operation) << " " << spec.name << " count " << count
              << " element " << i << " input 0x" << std::hex << in;
        }
        for (std::size_t b = count * sides.output_bytes; b < output.size(); ++b) {
          ASSERT_EQ(output[b], kCanary) << "wrote past count " << count << " in "
                                        << OperationName(entry.operation) << " " << spec.name;
        }
      }
    }
    ++checked_rows;
  }
  EXPECT_GT(checked_rows, 60);
}

// Literal expectations typed from docs/formats-reference.md (§1, §4.1, §4.5, §9, §10.2),
// not computed by the model.
struct Literal {
  Operation operation;
  FormatId format;
  Overflow overflow;
  std::uint64_t input;
  std::uint64_t expected;
};

TEST(RegistryScalar, LiteralFactsThroughTheTable) {
  const Literal kLiterals[] = {
      // FP32 -> E4M3 (§4.1, §10.2): 448, 464 ties to 448, above 464 overflows.
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x43E00000, 0x7E},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x43E80000, 0x7E},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x43E80001, 0x7F},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kSaturate, 0x43E80001, 0x7E},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kSaturate, 0xFF800000, 0xFE},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x80000000, 0x80},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x3A800000, 0x00},
      {Operation::kEncodeF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x3A800001, 0x01},
      // FP32 -> E5M2: 61440 ties up to Inf, saturating gives 57344 (§4.2).
      {Operation::kEncodeF32, FormatId::kE5m2, Overflow::kFormatDefault, 0x47700000, 0x7C},
      {Operation::kEncodeF32, FormatId::kE5m2, Overflow::kSaturate, 0x47700000, 0x7B},
      // FP32 -> E2M1: 0.25 ties to 0, 5.0 ties to 4 (even), 6 is max (§1, §9).
      {Operation::kEncodeF32, FormatId::kE2m1, Overflow::kFormatDefault, 0x3E800000, 0x0},
      {Operation::kEncodeF32, FormatId::kE2m1, Overflow::kFormatDefault, 0x40A00000, 0x6},
      {Operation::kEncodeF32, FormatId::kE2m1, Overflow::kFormatDefault, 0x40C00001, 0x7},
      // FP32 -> BF16 (§10.2): 65520 -> 0x4780, FLT_MAX -> Inf, RNE.
      {Operation::kEncodeF32, FormatId::kBf16, Overflow::kFormatDefault, 0x477FF000, 0x4780},
      {Operation::kEncodeF32, FormatId::kBf16, Overflow::kFormatDefault, 0x7F7FFFFF, 0x7F80},
      // FP16 -> E4M3 goes in exactly: 464 (0x5F40) ties to 448.
      {Operation::kEncodeF16, FormatId::kE4m3, Overflow::kFormatDefault, 0x5F40, 0x7E},
      // BF16 -> FP16: 65520 (0x4780) is FP16's overflow tie, rounds to Inf.
      {Operation::kEncodeBf16, FormatId::kFp16, Overflow::kFormatDefault, 0x4780, 0x7C00},
      // Decodes (§1): E8M0 code 0 is 2^-127, an FP32 and a BF16 subnormal.
      {Operation::kDecodeToF32, FormatId::kE8m0, Overflow::kFormatDefault, 0x00, 0x00400000},
      {Operation::kDecodeToBf16, FormatId::kE8m0, Overflow::kFormatDefault, 0x00, 0x0040},
      {Operation::kDecodeToF32, FormatId::kE4m3, Overflow::kFormatDefault, 0x7E, 0x43E00000},
      {Operation::kDecodeToF32, FormatId::kE4m3Fnuz, Overflow::kFormatDefault, 0x7F, 0x43700000},
      {Operation::kDecodeToBf16, FormatId::kInt8, Overflow::kFormatDefault, 0x80, 0xC300},
      {Operation::kDecodeToF32, FormatId::kUe4m3, Overflow::kFormatDefault, 0x01, 0x3B000000},
  };
  for (const Literal& literal : kLiterals) {
    const KernelEntry* entry = Scalar().Find(literal.operation, literal.format, "scalar");
    ASSERT_NE(entry, nullptr);
    const FormatSpec& spec = Spec(literal.format);
    const Sides sides = SidesOf(literal.operation, literal.format);
    std::uint64_t in = literal.input;
    std::uint64_t out = 0;
    ConvertArgs args{.operation = literal.operation, .format = literal.format};
    args.input = &in;  // little-endian: the low bytes are the element
    args.output = &out;
    args.count = 1;
    args.encode.overflow = literal.overflow;
    ASSERT_TRUE(entry->run(args).ok);
    EXPECT_EQ(out & ((sides.output_bytes == 8) ? ~0ull : ((1ull << (8 * sides.output_bytes)) - 1)),
              literal.expected)
        << OperationName(literal.operation) << " " << spec.name << " input 0x" << std::hex
        << literal.input;
  }
}

TEST(RegistryScalar, StochasticUsesEachElementsOwnBits) {
  // 1 + 2^-4 into E2M1 (quantum 0.5 at 1): the discarded part is 1/8 of a
  // step, so with 8 random bits the carry happens iff random >= 224.
  const KernelEntry* entry = Scalar().Find(Operation::kEncodeF32, FormatId::kE2m1, "scalar");
  ASSERT_NE(entry, nullptr);
  const float input[3] = {1.0625f, 1.0625f, 1.0625f};
  const std::uint32_t random[3] = {223, 224, 255};
  std::uint8_t output[3] = {};
  ConvertArgs args{.operation = Operation::kEncodeF32, .format = FormatId::kE2m1};
  args.input = input;
  args.output = output;
  args.count = 3;
  args.encode.rounding = RoundingMode::kStochastic;
  args.random_bits = random;
  ASSERT_TRUE(entry->run(args).ok);
  EXPECT_EQ(output[0], 0x2);  // 1.0
  EXPECT_EQ(output[1], 0x3);  // 1.5
  EXPECT_EQ(output[2], 0x3);
}

}  // namespace
}  // namespace lowbit::registry
