// Coverage (docs/design.md "Everything that computes is a registry entry"):
// every (operation, format) that OperationApplies names has a scalar entry
// that is available, no entry claims a row that does not apply, and the
// applicability rule itself matches docs/formats-reference.md §1 ("into FP16/BF16 for all
// FP8/FP6/FP4") and a brute-force check over every code.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "lowbit/formats/convert.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {
namespace {

const Registry& All() {
  static const Registry registry = [] {
    Registry r;
    RegisterAllBackends(r);
    return r;
  }();
  return registry;
}

TEST(RegistryCoverage, EveryApplicableRowHasAnAvailableScalarEntry) {
  int rows = 0;
  for (Operation operation : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(operation, format)) continue;
      ++rows;
      const KernelEntry* entry = All().Find(operation, format, "scalar");
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
  for (const KernelEntry& entry : All().Entries()) {
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

}  // namespace
}  // namespace lowbit::registry
