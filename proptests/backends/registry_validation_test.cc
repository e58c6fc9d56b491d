// Argument validation of every registered kernel (registry.h
// ValidateConvertArgs): each bad call is rejected with a message naming the
// problem, and count 0 is valid even with null pointers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/check/backends.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

const std::vector<KernelEntry>& AllEntries() {
  static const bool registered = [] {
    check::RegisterAllBackends(Registry::Global());
    return true;
  }();
  (void)registered;
  return Registry::Global().Entries();
}

// Buffers big enough for 4 elements of any operation (8-byte codes max).
struct Buffers {
  std::uint64_t input[4] = {0, 0, 0, 0};
  std::uint64_t output[4] = {0, 0, 0, 0};
  std::uint32_t random[4] = {1, 2, 3, 4};
};

ConvertArgs ValidArgs(const KernelEntry& entry, Buffers& buffers) {
  ConvertArgs args{.operation = entry.operation, .format = entry.format};
  args.input = buffers.input;
  args.output = buffers.output;
  args.count = 4;
  return args;
}

void ExpectErrorMentions(const Status& status, const std::string& word,
                         const KernelEntry& entry) {
  EXPECT_FALSE(status.ok) << entry.backend << " " << OperationName(entry.operation) << " "
                          << Spec(entry.format).name;
  EXPECT_NE(status.message.find(word), std::string::npos)
      << "message '" << status.message << "' should name '" << word << "'";
}

TEST(RegistryValidation, EveryEntryRunsOnValidArgs) {
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available()) continue;
    Buffers buffers;
    const ConvertArgs args = ValidArgs(entry, buffers);
    if (!entry.supports(args)) continue;
    const Status status = entry.run(args);
    EXPECT_TRUE(status.ok) << entry.backend << " " << OperationName(entry.operation) << " "
                           << Spec(entry.format).name << ": " << status.message;
  }
}

TEST(RegistryValidation, CountZeroWithNullPointersIsFine) {
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available()) continue;
    ConvertArgs args{.operation = entry.operation, .format = entry.format};
    args.encode.rounding = RoundingMode::kStochastic;  // no random bits needed either
    const Status status = entry.run(args);
    EXPECT_TRUE(status.ok) << entry.backend << ": " << status.message;
  }
}

TEST(RegistryValidation, NullInputOrOutputIsRejected) {
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available()) continue;
    Buffers buffers;
    ConvertArgs args = ValidArgs(entry, buffers);
    args.input = nullptr;
    ExpectErrorMentions(entry.run(args), "null input", entry);
    args = ValidArgs(entry, buffers);
    args.output = nullptr;
    ExpectErrorMentions(entry.run(args), "null output", entry);
  }
}

TEST(RegistryValidation, UnknownFormatIsRejected) {
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available()) continue;
    Buffers buffers;
    ConvertArgs args = ValidArgs(entry, buffers);
    args.format = static_cast<FormatId>(200);
    ExpectErrorMentions(entry.run(args), "unknown format id 200", entry);
  }
}

TEST(RegistryValidation, UnknownOperationIsRejected) {
  Buffers buffers;
  ConvertArgs args{.operation = static_cast<Operation>(77), .format = FormatId::kE4m3};
  args.input = buffers.input;
  args.output = buffers.output;
  args.count = 1;
  const Status status = ValidateConvertArgs(args);
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.message, "unknown operation 77");
}

TEST(RegistryValidation, DecodeToBf16OfAWiderFormatIsRejected) {
  // FP16 has 11 significant bits, BF16 8: 1 + 2^-10 (0x3C01) has no BF16 twin.
  Buffers buffers;
  for (FormatId format : {FormatId::kFp16, FormatId::kFp32, FormatId::kFp64}) {
    ConvertArgs args{.operation = Operation::kDecodeToBf16, .format = format};
    args.input = buffers.input;
    args.output = buffers.output;
    args.count = 1;
    const Status status = ValidateConvertArgs(args);
    EXPECT_FALSE(status.ok) << Spec(format).name;
    EXPECT_NE(status.message.find("BF16 cannot hold"), std::string::npos) << status.message;
  }
  // And no kernel claims such a row: an entry for it would be run by verify.
  for (const KernelEntry& entry : AllEntries()) {
    if (entry.operation != Operation::kDecodeToBf16) continue;
    EXPECT_NE(entry.format, FormatId::kFp16);
    EXPECT_NE(entry.format, FormatId::kFp32);
  }
}

TEST(RegistryValidation, StochasticWithoutRandomBitsIsRejected) {
  int encodes = 0;
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available() || !IsEncode(entry.operation)) continue;
    Buffers buffers;
    ConvertArgs args = ValidArgs(entry, buffers);
    args.encode.rounding = RoundingMode::kStochastic;
    if (!entry.supports(args)) continue;
    ++encodes;
    ExpectErrorMentions(entry.run(args), "random_bits", entry);
    args.random_bits = buffers.random;
    EXPECT_TRUE(entry.run(args).ok);
    args.encode.random_bit_count = 33;
    ExpectErrorMentions(entry.run(args), "random_bit_count 33", entry);
  }
  EXPECT_GT(encodes, 0) << "no encode kernel took stochastic rounding";
}

TEST(RegistryValidation, DecodesIgnoreTheEncodeRounding) {
  for (const KernelEntry& entry : AllEntries()) {
    if (!entry.available() || IsEncode(entry.operation)) continue;
    Buffers buffers;
    ConvertArgs args = ValidArgs(entry, buffers);
    args.encode.rounding = RoundingMode::kStochastic;  // meaningless for a decode
    if (!entry.supports(args)) continue;
    EXPECT_TRUE(entry.run(args).ok) << entry.backend << " " << Spec(entry.format).name;
  }
}

}  // namespace
}  // namespace lowbit::registry
