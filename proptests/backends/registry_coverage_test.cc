// Coverage (docs/design.md "Everything that computes is a registry entry"):
// every (operation, format) that OperationApplies names has a scalar entry
// that is available, no entry claims a row that does not apply, and the
// applicability rule itself matches docs/formats-reference.md §1 ("into FP16/BF16 for all
// FP8/FP6/FP4") and a brute-force check over every code.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

using ::lowbit::testing::AllBackends;

TEST(RegistryCoverage, EveryApplicableRowHasAnAvailableScalarEntry) {
  int rows = 0;
  for (Operation operation : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(operation, format)) continue;
      ++rows;
      const KernelEntry* entry = AllBackends().Find(operation, format, "scalar");
      ASSERT_NE(entry, nullptr) << "no scalar kernel for " << OperationName(operation) << " "
                                << Spec(format).name;
      EXPECT_TRUE(entry->available());
    }
  }
  // Every element format but FP64 x 4 operations, plus decode-to-bf16 for
  // the formats BF16 holds (all but FP64, FP32, FP16).
  EXPECT_EQ(rows, (kFormatCount - 1) * 4 + (kFormatCount - 3));
}

TEST(RegistryCoverage, NoEntryClaimsARowThatDoesNotApply) {
  std::set<std::pair<std::string, std::pair<int, int>>> keys;
  for (const KernelEntry& entry : AllBackends().Entries()) {
    EXPECT_TRUE(OperationApplies(entry.operation, entry.format))
        << entry.backend << " registered " << OperationName(entry.operation) << " "
        << Spec(entry.format).name;
    EXPECT_FALSE(entry.backend.empty());
    EXPECT_TRUE(entry.supports && entry.available && entry.run) << entry.backend;
    const bool fresh = keys.insert({entry.backend, {static_cast<int>(entry.operation),
                                                    static_cast<int>(entry.format)}})
                           .second;
    EXPECT_TRUE(fresh) << "duplicate entry " << entry.backend;
  }
}

TEST(RegistryCoverage, RegisteringTwiceKeepsOneEntryPerKey) {
  Registry registry;
  RegisterScalarBackend(registry);
  const std::size_t once = registry.Entries().size();
  RegisterScalarBackend(registry);
  EXPECT_EQ(registry.Entries().size(), once);
}

TEST(RegistryCoverage, BfloatHoldsExactlyListsTheFactsSheetFormats) {
  // docs/formats-reference.md §1: every FP8/FP6/FP4, E8M0, UE4M3 and the
  // integers decode exactly into BF16; only the wide floats do not. Listed
  // the other way round so that a new narrow format needs no edit here.
  const std::set<std::string> kNotHeld = {"fp64", "fp32", "fp16"};
  for (FormatId format : kAllFormats) {
    const FormatSpec& spec = Spec(format);
    EXPECT_EQ(BfloatHoldsExactly(spec), kNotHeld.count(spec.name) == 0) << spec.name;
  }
}

TEST(RegistryCoverage, BfloatHoldsExactlyAgreesWithEveryCode) {
  // Brute force for the <= 16-bit formats: a format is held iff no finite
  // code is inexact in BF16. FP16 must fail on some code (e.g. 1 + 2^-10).
  for (FormatId format : kAllFormats) {
    const FormatSpec& spec = Spec(format);
    if (spec.total_bits > 16) continue;
    bool all_exact = true;
    for (std::uint64_t code = 0; code <= spec.CodeMask(); ++code) {
      all_exact &= (Convert(spec, code, kBf16).flags & kFlagInexact) == 0;
    }
    EXPECT_EQ(BfloatHoldsExactly(spec), all_exact) << spec.name;
  }
}

// The operation table (registry.h kOperationInfo), typed out here so that a
// wrong row cannot size every caller's buffers wrongly in agreement.
TEST(RegistryOperations, TableMatchesTheOperationsDocumentedInRegistryH) {
  struct Expected {
    Operation operation;
    const char* name;
    FormatId input;   // for the row format E4M3
    FormatId output;
    std::size_t input_bytes;
    std::size_t output_bytes;
    bool encode;
  };
  const Expected kExpected[] = {
      {Operation::kEncodeF32, "encode-f32", FormatId::kFp32, FormatId::kE4m3, 4, 1, true},
      {Operation::kEncodeBf16, "encode-bf16", FormatId::kBf16, FormatId::kE4m3, 2, 1, true},
      {Operation::kEncodeF16, "encode-f16", FormatId::kFp16, FormatId::kE4m3, 2, 1, true},
      {Operation::kDecodeToF32, "decode-to-f32", FormatId::kE4m3, FormatId::kFp32, 1, 4, false},
      {Operation::kDecodeToBf16, "decode-to-bf16", FormatId::kE4m3, FormatId::kBf16, 1, 2, false},
  };
  ASSERT_EQ(std::size(kExpected), std::size(kOperationInfo));
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.name);
    EXPECT_STREQ(OperationName(e.operation), e.name);
    EXPECT_EQ(&InputSpec(e.operation, FormatId::kE4m3), &Spec(e.input));
    EXPECT_EQ(&OutputSpec(e.operation, FormatId::kE4m3), &Spec(e.output));
    EXPECT_EQ(InputBytes(e.operation, FormatId::kE4m3), e.input_bytes);
    EXPECT_EQ(OutputBytes(e.operation, FormatId::kE4m3), e.output_bytes);
    EXPECT_EQ(IsEncode(e.operation), e.encode);
  }
  // Code widths of the row format: 16-bit codes take 2 bytes, FP32 4, 4-bit 1.
  EXPECT_EQ(InputBytes(Operation::kDecodeToF32, FormatId::kFp16), 2u);
  EXPECT_EQ(OutputBytes(Operation::kEncodeF32, FormatId::kFp32), 4u);
  EXPECT_EQ(OutputBytes(Operation::kEncodeF16, FormatId::kInt4), 1u);
  EXPECT_EQ(FindOperationInfo(static_cast<Operation>(77)), nullptr);
  EXPECT_STREQ(OperationName(static_cast<Operation>(77)), "unknown-operation");
}

// The registry names no backend: RegisterAllBackends (lowbit::backends) is
// where the built ones come together, and it reports which those are.
TEST(RegistryBackends, RegisterAllBackendsCallsEachBuiltLibrary) {
  const std::vector<std::string> built = check::BuiltBackendLibraries();
  ASSERT_FALSE(built.empty());
  EXPECT_EQ(built.front(), "scalar");
  bool simd_rows = false, cuda_rows = false;
  for (const KernelEntry& entry : AllBackends().Entries()) {
    simd_rows |= entry.backend.rfind("simd:", 0) == 0;
    cuda_rows |= entry.backend.rfind("cuda-", 0) == 0;
  }
  const auto has = [&built](const char* name) {
    for (const std::string& b : built) {
      if (b == name) return true;
    }
    return false;
  };
  EXPECT_EQ(simd_rows, has("simd"));
  EXPECT_EQ(cuda_rows, has("cuda"));
}

KernelEntry Dummy(FormatId format, std::string backend, int tag) {
  KernelEntry entry;
  entry.operation = Operation::kEncodeF32;
  entry.format = format;
  entry.backend = std::move(backend);
  entry.supports = [](const ConvertArgs&) { return true; };
  entry.available = [] { return true; };
  entry.run = [tag](const ConvertArgs&) { return Status::Error(std::to_string(tag)); };
  return entry;
}

// Thread safety (registry.h): a pointer from Find and a listing from Entries
// stay valid and unchanged while other threads keep adding and replacing.
TEST(RegistryThreads, FindAndEntriesStayValidWhileOthersAdd) {
  Registry registry;
  registry.Add(Dummy(FormatId::kE4m3, "first", 1));
  const KernelEntry* first = registry.Find(Operation::kEncodeF32, FormatId::kE4m3, "first");
  ASSERT_NE(first, nullptr);
  const std::vector<KernelEntry>& listing = registry.Entries();
  ASSERT_EQ(listing.size(), 1u);

  constexpr int kWriters = 2;
  constexpr int kAddsPerWriter = 64;
  std::atomic<bool> writers_done{false};
  std::atomic<bool> reader_saw_bad{false};
  std::atomic<int> lookups{0};
  // The reader starts first and the writers wait for its first lookup, so
  // the two overlap however the threads are scheduled.
  std::thread reader([&] {
    while (!writers_done || lookups < 2) {
      const KernelEntry* e = registry.Find(Operation::kEncodeF32, FormatId::kE4m3, "first");
      std::size_t named = 0;
      for (const KernelEntry& entry : registry.Entries()) named += entry.backend.empty() ? 0 : 1;
      if (e == nullptr || e->backend != "first" || named == 0) reader_saw_bad = true;
      ++lookups;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&registry, &lookups, w] {
      while (lookups == 0) std::this_thread::yield();
      for (int i = 0; i < kAddsPerWriter; ++i) {
        registry.Add(Dummy(kAllFormats[i % kFormatCount],
                           "writer" + std::to_string(w) + "-" + std::to_string(i / kFormatCount),
                           i));
        // Replacing the key that readers hold must not touch their copy.
        registry.Add(Dummy(FormatId::kE4m3, "first", 100 + i));
      }
    });
  }
  for (std::thread& t : writers) t.join();
  writers_done = true;
  reader.join();
  EXPECT_FALSE(reader_saw_bad);
  EXPECT_GE(lookups.load(), 2);
  // The early pointer and listing still show the first registration.
  EXPECT_EQ(first->run(ConvertArgs{}).message, "1");
  ASSERT_EQ(listing.size(), 1u);
  EXPECT_EQ(listing[0].run(ConvertArgs{}).message, "1");
  // A fresh read shows every add, with "first" replaced by the last writer.
  const std::size_t distinct_per_writer = kAddsPerWriter;  // (format, i / count) pairs differ
  EXPECT_EQ(registry.Entries().size(), 1 + kWriters * distinct_per_writer);
  const KernelEntry* now = registry.Find(Operation::kEncodeF32, FormatId::kE4m3, "first");
  ASSERT_NE(now, nullptr);
  EXPECT_NE(now->run(ConvertArgs{}).message, "1");
}

}  // namespace
}  // namespace lowbit::registry
