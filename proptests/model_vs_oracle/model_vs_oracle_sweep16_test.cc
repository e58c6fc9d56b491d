// Model == oracle, code AND flags, for every one of the 65536 FP16 and the
// 65536 BF16 inputs into every narrower format (and FP16 <-> BF16), for every
// rounding mode, overflow policy and policy bundle (option_generators.h).
// Exhaustive at every test level (docs/design.md "Exhaustive wherever it is
// cheap"): the oracle's expensive part (locating each input among the
// destination's values by exact comparison) is done once per (source,
// destination) and reused by every option set. Built with sanitizers
// (scripts/sanitize.sh) it takes every 7th input instead: there it looks
// for memory errors and undefined behaviour on every path, and every sign
// and binade (128 codes or more each) and every value of the low byte (7
// is odd) is still reached, while the plain build's run proves every input.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/reference/exact_value.h"
#include "lowbit/reference/oracle_encode.h"
#include "option_generators.h"
#include "under_sanitizer.h"

namespace lowbit {
namespace {

using reference::Exact;
using reference::ExactClass;
using reference::Location;
using testing::PolicyBundles;
using testing::RandomChoices;

constexpr int kInputs = 1 << 16;
#if defined(LOWBIT_UNDER_SANITIZER)
constexpr int kInputStride = 7;
#else
constexpr int kInputStride = 1;
#endif
constexpr long kInputsSwept = (kInputs + kInputStride - 1) / kInputStride;
constexpr bool SweepReachesEveryLowByte() {
  bool seen[256] = {};
  for (int code = 0; code < kInputs; code += kInputStride) seen[code & 0xFF] = true;
  for (const bool b : seen) {
    if (!b) return false;
  }
  return true;
}
static_assert(SweepReachesEveryLowByte() && kInputStride < 128, "every low byte, every binade");

// The exact meaning of every 16-bit code of a source format, computed once.
const std::vector<Exact>& SourceValues(FormatId src) {
  static std::mutex mutex;
  static std::map<FormatId, std::vector<Exact>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  std::vector<Exact>& v = cache[src];
  if (v.empty()) {
    v.resize(kInputs);  // the swept codes' entries
    for (int code = 0; code < kInputs; code += kInputStride) v[code] = reference::ExactValue(Spec(src), code);
  }
  return v;
}

// Where every finite source value lies in a destination, computed once.
const std::vector<Location>& Locations(FormatId src, FormatId dst) {
  static std::mutex mutex;
  static std::map<std::pair<FormatId, FormatId>, std::vector<Location>> cache;
  const std::vector<Exact>& values = SourceValues(src);
  const std::lock_guard<std::mutex> lock(mutex);
  std::vector<Location>& v = cache[{src, dst}];
  if (v.empty()) {
    v.resize(kInputs);
    for (int code = 0; code < kInputs; code += kInputStride) {
      if (values[code].value_class == ExactClass::kFinite) {
        v[code] = reference::Locate(Spec(dst), values[code].magnitude);
      }
    }
  }
  return v;
}

struct SweepCase {
  FormatId src;
  FormatId dst;
  RoundingMode mode;
  Overflow overflow;
};

std::string CaseName(const ::testing::TestParamInfo<SweepCase>& info) {
  const SweepCase& c = info.param;
  std::string name = std::string(Spec(c.src).name) + "To" + Spec(c.dst).name + "_" +
                     testing::ModeName(c.mode) + "_" + testing::OverflowName(c.overflow);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

std::vector<SweepCase> AllCases() {
  // Every format of at most 8 bits, from the format list, so that a new one
  // is swept with no edit here.
  std::vector<FormatId> narrow;
  for (FormatId id : kAllFormats) {
    if (Spec(id).total_bits <= 8) narrow.push_back(id);
  }
  std::vector<SweepCase> cases;
  for (FormatId src : {FormatId::kFp16, FormatId::kBf16}) {
    std::vector<FormatId> dsts = {src == FormatId::kFp16 ? FormatId::kBf16 : FormatId::kFp16};
    dsts.insert(dsts.end(), narrow.begin(), narrow.end());
    for (FormatId dst : dsts) {
      for (RoundingMode mode : testing::kAllModes) {
        for (Overflow overflow : testing::OverflowsFor(Spec(dst))) {
          cases.push_back({src, dst, mode, overflow});
        }
      }
    }
  }
  return cases;
}

class ModelVsOracleSweep16 : public ::testing::TestWithParam<SweepCase> {};

TEST_P(ModelVsOracleSweep16, EveryInputCodeAndFlags) {
  const SweepCase& c = GetParam();
  const FormatSpec& src = Spec(c.src);
  const FormatSpec& dst = Spec(c.dst);
  const std::vector<Exact>& values = SourceValues(c.src);
  const std::vector<Location>& locations = Locations(c.src, c.dst);
  long checked = 0;
  int failures = 0;
  for (const testing::PolicyBundle& bundle : PolicyBundles()) {
    for (int code = 0; code < kInputs && failures < 20; code += kInputStride) {
      EncodeOptions o = bundle.options;
      o.rounding = c.mode;
      o.overflow = c.overflow;
      std::vector<testing::RandomChoice> randoms = {{0, 0}};
      if (c.mode == RoundingMode::kStochastic) randoms = RandomChoices(code);
      for (const testing::RandomChoice& random : randoms) {
        o.random_bits = random.bits;
        o.random_bit_count = random.count;
        const EncodeResult model = Convert(src, code, dst, o);
        const EncodeResult oracle = reference::Decide(dst, values[code], locations[code], o);
        ++checked;
        if (model.code != oracle.code || model.flags != oracle.flags) {
          ++failures;
          ADD_FAILURE() << src.name << " 0x" << std::hex << code << " -> " << dst.name << " ["
                        << bundle.name << " " << testing::Describe(o) << "]: model 0x"
                        << model.code << " flags " << int(model.flags) << ", oracle 0x"
                        << oracle.code << " flags " << int(oracle.flags);
        }
      }
    }
  }
  // The sweep really ran over every input (every 7th under sanitizers) of
  // every bundle.
  EXPECT_GE(checked, kInputsSwept * static_cast<long>(PolicyBundles().size()));
}

INSTANTIATE_TEST_SUITE_P(All, ModelVsOracleSweep16, ::testing::ValuesIn(AllCases()), CaseName);

}  // namespace
}  // namespace lowbit
