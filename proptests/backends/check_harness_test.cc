// The harness library itself (lowbit/check/check.h) can fail: a kernel that
// is wrong on one input is caught with that input and both outputs decoded,
// a kernel that errors fails every output, an unavailable backend or one
// that supports nothing is SKIPPED (never passed), a recipe row that differs
// in one byte is caught, and a bad plan is an error. The expected codes and
// values are typed from docs/formats-reference.md §1 (E4M3: 1.0 = 0x38,
// 1.125 = 0x39), not taken from the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#include "lowbit/check/inputs.h"
#include "lowbit/check/progress.h"
#include "lowbit/check/text.h"
#include "lowbit/formats/profiles/profile_id.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/registry.h"

namespace lowbit::check {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;
using registry::Status;

const registry::Registry& ScalarOnly() {
  static const registry::Registry registry = [] {
    registry::Registry r;
    registry::RegisterScalarBackend(r);
    return r;
  }();
  return registry;
}

const KernelEntry& ScalarKernel(Operation operation, FormatId format) {
  const KernelEntry* entry = ScalarOnly().Find(operation, format, "scalar");
  if (entry == nullptr) std::abort();
  return *entry;
}

constexpr std::uint32_t kOneF32 = 0x3F800000;  // 1.0f

// The scalar E4M3 encode, except that 1.0 comes out as 0x39 (1.125) instead
// of 0x38: wrong on exactly one input.
KernelEntry OffByOneAtOne() {
  KernelEntry k = ScalarKernel(Operation::kEncodeF32, FormatId::kE4m3);
  k.backend = "test:off-by-one";
  const registry::ConvertFn model = k.run;
  k.run = [model](const ConvertArgs& args) {
    const Status status = model(args);
    const auto* in = static_cast<const std::uint32_t*>(args.input);
    auto* out = static_cast<std::uint8_t*>(args.output);
    for (std::size_t i = 0; i < args.count; ++i) {
      if (in[i] == kOneF32) out[i] = 0x39;
    }
    return status;
  };
  return k;
}

TEST(CheckKernel, FindsTheOneWrongInputAndDecodesIt) {
  const Row row = CheckKernel(OffByOneAtOne(), Level::kSmoke);
  EXPECT_EQ(row.kind, RowKind::kKernel);
  EXPECT_EQ(row.backend, "test:off-by-one");
  EXPECT_EQ(row.operation, "encode-f32");
  EXPECT_EQ(row.format, "e4m3");
  EXPECT_EQ(row.outcome(), Row::Outcome::kFailed);
  // 1.0 is exact in E4M3, so every option set expects 0x38 and each one sees
  // this input once: one mismatch per option set.
  EXPECT_EQ(row.mismatches, EncodeCombos(kE4m3).size());
  EXPECT_GT(row.checked, row.mismatches);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_LE(row.first_mismatches.size(), kMaxMismatchesPerRow);
  const Mismatch& m = row.first_mismatches.front();
  EXPECT_EQ(m.input, kOneF32);
  EXPECT_EQ(m.input_format, "fp32");
  EXPECT_EQ(m.input_value, "1");
  EXPECT_EQ(m.output_format, "e4m3");
  EXPECT_EQ(m.expected, 0x38u);
  EXPECT_EQ(m.expected_value, "1");
  EXPECT_EQ(m.actual, 0x39u);
  EXPECT_EQ(m.actual_value, "1.125");
  ASSERT_TRUE(m.code_distance.has_value());
  EXPECT_EQ(*m.code_distance, 1u);
  // One thread runs the option sets in order, so the first is "rne".
  EXPECT_EQ(m.combo, "rne");
  EXPECT_FALSE(m.random_bits.has_value());
  EXPECT_EQ(DescribeMismatch(row, m),
            "input 0x3f800000 (fp32 1) combo rne: model 0x38 (e4m3 1), kernel 0x39 (e4m3 1.125), "
            "1 code apart");
  EXPECT_EQ(RenderFirstMismatches({row}),
            "first mismatch of test:off-by-one encode-f32 e4m3: " + DescribeMismatch(row, m) +
                "\n");
}

TEST(CheckKernel, AKernelErrorFailsEveryOutput) {
  KernelEntry k = ScalarKernel(Operation::kDecodeToF32, FormatId::kE2m1);
  k.backend = "test:error";
  k.run = [](const ConvertArgs&) { return Status::Error("device on fire"); };
  const Row row = CheckKernel(k, Level::kSmoke);
  EXPECT_EQ(row.outcome(), Row::Outcome::kFailed);
  EXPECT_EQ(row.mismatches, row.checked);
  ASSERT_FALSE(row.first_mismatches.empty());
  EXPECT_EQ(row.first_mismatches[0].note, "kernel error: device on fire");
  EXPECT_NE(DescribeMismatch(row, row.first_mismatches[0]).find("kernel error: device on fire"),
            std::string::npos);
}

TEST(CheckKernel, AnUnavailableBackendIsSkippedNotPassed) {
  KernelEntry k = ScalarKernel(Operation::kEncodeF32, FormatId::kE5m2);
  k.backend = "test:elsewhere";
  k.available = [] { return false; };
  bool ran = false;
  k.run = [&ran](const ConvertArgs&) {
    ran = true;
    return Status::Ok();
  };
  const Row row = CheckKernel(k, Level::kSmoke);
  EXPECT_FALSE(ran);
  EXPECT_EQ(row.outcome(), Row::Outcome::kSkipped);
  EXPECT_EQ(row.checked, 0u);
  EXPECT_NE(StatusText(row).find("SKIPPED"), std::string::npos) << StatusText(row);
}

TEST(CheckKernel, AKernelThatSupportsNothingIsSkippedNotPassed) {
  KernelEntry k = ScalarKernel(Operation::kEncodeBf16, FormatId::kE4m3);
  k.backend = "test:picky";
  k.supports = [](const ConvertArgs&) { return false; };
  const Row row = CheckKernel(k, Level::kSmoke);
  EXPECT_EQ(row.outcome(), Row::Outcome::kSkipped);
  EXPECT_EQ(row.unsupported_option_sets, static_cast<int>(EncodeCombos(kE4m3).size()));
  EXPECT_EQ(StatusText(row), "SKIPPED (no option set supported) (" +
                                 std::to_string(EncodeCombos(kE4m3).size()) +
                                 " option sets unsupported)");
}

// The rows that accept one implementation's options only (cuda-hw: PTX cvt,
// the nvidia profile) find them among the option sets.
TEST(CheckKernel, TheOptionSetsHoldEveryProfilesOwn) {
  std::vector<std::string> names;
  for (const EncodeCombo& c : EncodeCombos(kBf16)) names.push_back(c.name);
  for (const char* want : {"profile nvidia,rne", "profile nvidia,rtz", "profile nvidia,up", "profile nvidia,down",
                           "profile nvidia,rne+satfinite", "profile ml_dtypes,rne", "profile pytorch-cpu,rne"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  names.clear();
  for (const EncodeCombo& c : EncodeCombos(kE4m3)) names.push_back(c.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "profile nvidia-nosat,rne"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "profile nvidia,rne+satfinite"), names.end())
      << "E4M3's nvidia options saturate already";
}

TEST(CheckKernel, TheScalarRowPassesOnEveryDecodeCode) {
  // 256 E8M0 codes x (3 NaN option sets + one per profile), every one compared.
  const Row row = CheckKernel(ScalarKernel(Operation::kDecodeToBf16, FormatId::kE8m0), Level::kCi);
  EXPECT_EQ(row.outcome(), Row::Outcome::kPassed);
  EXPECT_EQ(row.checked, 256u * (3u + static_cast<unsigned>(kProfileCount)));
  EXPECT_EQ(DecodeCombos(kE8m0).size(), 3u + static_cast<unsigned>(kProfileCount));
}

// A progress sink that counts what the harness reports.
class CountingProgress : public Progress {
 public:
  void Begin(const std::string&, std::uint64_t total) override {
    ++phases;
    totals += total;
  }
  void Advance(std::uint64_t units) override { done += units; }
  void End() override { ++ends; }
  int phases = 0, ends = 0;
  std::uint64_t totals = 0;
  std::atomic<std::uint64_t> done{0};
};

TEST(CheckRun, FiltersPartsAndProgress) {
  CountingProgress progress;
  Plan plan;
  plan.level = Level::kSmoke;
  plan.filter.format = "e2m1";
  plan.filter.backend = "scalar";
  plan.progress = &progress;
  const Results results = RunPlan(ScalarOnly(), plan);
  ASSERT_TRUE(results.error.empty()) << results.error;
  // encode-f32, encode-bf16, encode-f16, decode-to-f32, decode-to-bf16.
  ASSERT_EQ(results.rows.size(), 5u);
  for (const Row& row : results.rows) {
    EXPECT_EQ(row.format, "e2m1");
    EXPECT_EQ(row.backend, "scalar");
    EXPECT_EQ(row.outcome(), Row::Outcome::kPassed) << row.operation;
  }
  EXPECT_TRUE(results.passed());
  EXPECT_EQ(progress.phases, progress.ends);
  EXPECT_EQ(progress.done.load(), progress.totals);
  EXPECT_GT(progress.totals, 0u);
  const std::string summary = RenderSummary(results, "verify smoke");
  EXPECT_EQ(summary.rfind("verify smoke: 5 rows, ", 0), 0u) << summary;
}

TEST(CheckRun, TheOracleRowsComeWithTheirOwnFilter) {
  Plan plan;
  plan.level = Level::kSmoke;
  plan.filter.format = "e5m2";
  plan.filter.backend = "oracle";
  const Results results = RunPlan(ScalarOnly(), plan);
  ASSERT_TRUE(results.error.empty()) << results.error;
  ASSERT_FALSE(results.rows.empty());
  for (const Row& row : results.rows) EXPECT_EQ(row.kind, RowKind::kOracle);
  if (!OracleBuilt()) {
    EXPECT_EQ(results.rows[0].outcome(), Row::Outcome::kSkipped);
    return;
  }
  // decode-exact of every E5M2 code, and three encodes.
  ASSERT_EQ(results.rows.size(), 4u);
  EXPECT_EQ(results.rows[0].operation, "decode-exact");
  EXPECT_EQ(results.rows[0].checked, 256u);
  EXPECT_TRUE(results.passed());
}

TEST(CheckRun, ABadPlanIsAnError) {
  Plan plan;
  plan.threads = 0;
  EXPECT_NE(RunPlan(ScalarOnly(), plan).error.find("threads"), std::string::npos);
  plan.threads = 1;
  plan.filter.format = "float8_e4m3fn";  // an alias: the caller resolves names
  EXPECT_NE(RunPlan(ScalarOnly(), plan).error.find("unknown format 'float8_e4m3fn'"),
            std::string::npos);
}

TEST(CheckRun, LevelNamesRoundTrip) {
  for (Level level : kAllLevels) {
    Level parsed{};
    ASSERT_TRUE(ParseLevel(LevelName(level), &parsed));
    EXPECT_EQ(parsed, level);
  }
  Level unused{};
  EXPECT_FALSE(ParseLevel("quick", &unused));
}

// ---- Recipes ----------------------------------------------------------------

// One recipe row of each kind of scale buffer: an MX / NVFP4 row (scale
// codes) and a scaled row (FP32 scales).
std::vector<const registry::RecipeEntry*> OneQuantizeRowPerScaleKind() {
  const registry::RecipeEntry* codes = nullptr;
  const registry::RecipeEntry* floats = nullptr;
  for (const registry::RecipeEntry& entry : ScalarOnly().RecipeEntries()) {
    if (entry.operation != registry::RecipeOperation::kQuantizeRecipe) continue;
    recipe::Target target;
    if (!registry::ParseRecipe(entry.recipe, &target)) continue;
    const bool scaled = target.recipe->family() == recipe::Family::kScaled;
    const registry::RecipeEntry*& slot = scaled ? floats : codes;
    if (slot == nullptr) slot = &entry;
  }
  return {codes, floats};
}

TEST(CheckRecipe, ARowWithOneWrongScaleIsCaught) {
  for (const registry::RecipeEntry* scalar : OneQuantizeRowPerScaleKind()) {
    ASSERT_NE(scalar, nullptr) << "no scalar quantize row of this kind";
    SCOPED_TRACE(scalar->recipe);
    registry::RecipeEntry wrong = *scalar;
    wrong.backend = "test:scale";
    const auto model = scalar->run;
    wrong.run = [model](const registry::RecipeArgs& args) {
      const Status status = model(args);
      if (!status.ok) return status;
      if (args.q.scale_codes != nullptr) args.q.scale_codes[0] ^= 1;
      if (args.q.scales != nullptr) args.q.scales[0] = -args.q.scales[0];
      return status;
    };
    const Row row = CheckRecipe(wrong, scalar, Level::kSmoke);
    EXPECT_EQ(row.kind, RowKind::kRecipe);
    EXPECT_EQ(row.format, scalar->recipe);
    ASSERT_EQ(row.outcome(), Row::Outcome::kFailed);
    ASSERT_FALSE(row.first_mismatches.empty());
    const Mismatch& m = row.first_mismatches.front();
    if (m.where == "scale code 0") {
      EXPECT_EQ(m.expected ^ m.actual, 1u);
    } else {
      EXPECT_EQ(m.where, "scale 0");
      EXPECT_EQ(m.output_format, "fp32");
      EXPECT_EQ(m.expected ^ m.actual, 0x80000000u);  // the sign bit
    }
    // The same row against itself passes; without a scalar row it is skipped.
    EXPECT_EQ(CheckRecipe(*scalar, scalar, Level::kSmoke).outcome(), Row::Outcome::kPassed);
    EXPECT_EQ(CheckRecipe(wrong, nullptr, Level::kSmoke).outcome(), Row::Outcome::kSkipped);
  }
}

}  // namespace
}  // namespace lowbit::check
