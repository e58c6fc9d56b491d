// The diagnosis engine (diagnosis.h): score candidates slot by slot, keep
// those that say something, order them, and write the one-line summary.
#include "diagnosis.h"

#include <algorithm>
#include <string>

#include "describe.h"
#include "user_outputs_internal.h"

namespace lowbit::check::internal {

namespace {

// FNV-1a over the outputs: candidates whose outputs equal the target's are
// left out without keeping every candidate's outputs in memory.
constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;
// What a slot without an output hashes as (no code has all 64 bits set).
constexpr std::uint64_t kNoOutput = ~std::uint64_t{0};

std::uint64_t Mix(std::uint64_t hash, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    hash ^= (value >> (8 * i)) & 0xFF;
    hash *= kFnvPrime;
  }
  return hash;
}

// Counts, per class, the slots where `outputs` differ from `actual`; returns
// the hash of the outputs and the number of equal slots.
std::uint64_t Score(const Slots& slots, const SlotFn& outputs, const std::vector<std::uint64_t>& actual,
                    bool mix_actual, std::uint64_t* matched, std::vector<DifferenceClass>* differences) {
  std::vector<DifferenceClass> by_class(slots.class_names.size());
  std::uint64_t hash = kFnvOffset;
  *matched = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    std::uint64_t v = kNoOutput;
    const bool has = outputs(i, &v);
    if (!has) v = kNoOutput;
    hash = Mix(hash, v);
    if (mix_actual) hash = Mix(hash, actual[i]);
    if (has && v == actual[i]) {
      ++*matched;
      continue;
    }
    DifferenceClass& d = by_class[slots.cls[i]];
    if (d.count == 0) {
      d.candidate_code = v;
      d.actual_code = actual[i];
    }
    ++d.count;
  }
  differences->clear();
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    if (by_class[c].count == 0) continue;
    by_class[c].what = slots.class_names[c];
    differences->push_back(by_class[c]);
  }
  std::stable_sort(differences->begin(), differences->end(),
                   [](const DifferenceClass& a, const DifferenceClass& b) { return a.count > b.count; });
  return hash;
}

std::string CodeText(std::uint64_t code) { return code == kNoOutput ? "no result" : Hex(code); }

// "the 1 NaN input", not "inputs": the class names are plural nouns.
std::string CountedClass(std::uint64_t count, const std::string& what) {
  std::string text = what;
  if (count == 1) {
    for (const char* plural : {"inputs", "ties", "codes", "scales", "points", "values", "elements"}) {
      const std::size_t at = text.find(plural);
      if (at == std::string::npos) continue;
      text.erase(at + std::string(plural).size() - 1, 1);
      break;
    }
  }
  return std::to_string(count) + " " + text;
}

}  // namespace

std::string RoundingText(RoundingMode mode) {
  std::string text = RoundingName(mode);
  switch (mode) {
    case RoundingMode::kNearestUp: return text + " (ties toward +Inf)";
    case RoundingMode::kNearestDown: return text + " (ties toward -Inf)";
    case RoundingMode::kNearestTowardZero: return text + " (ties toward zero)";
    default: return text;
  }
}

std::uint8_t Slots::AddClass(const std::string& name) {
  for (std::size_t i = 0; i < class_names.size(); ++i) {
    if (class_names[i] == name) return static_cast<std::uint8_t>(i);
  }
  class_names.push_back(name);
  return static_cast<std::uint8_t>(class_names.size() - 1);
}

void DiagnosisBuilder::SetTarget(const SlotFn& target) {
  std::uint64_t matched = 0;
  target_hash_ = Score(slots_, target, slots_.actual, false, &matched, &target_differences_);
}

void DiagnosisBuilder::Add(const CandidateInfo& info, const SlotFn& outputs,
                           const std::vector<std::uint64_t>* actual) {
  for (const Candidate& c : candidates_) {
    if (c.name == info.name) return;
  }
  Candidate c;
  c.name = info.name;
  c.kind = info.kind;
  c.detail = info.detail;
  c.checked = slots_.actual.size();
  const std::uint64_t hash =
      Score(slots_, outputs, actual != nullptr ? *actual : slots_.actual, actual != nullptr, &c.matched, &c.differences);
  // The same outputs as the target, read the same way: no information.
  if (actual == nullptr && hash == target_hash_) return;
  candidates_.push_back(std::move(c));
  hashes_.push_back(hash);
}

std::string DescribeDifferences(const std::vector<DifferenceClass>& classes, const char* expected_word) {
  std::string text;
  const std::size_t shown = std::min<std::size_t>(classes.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    const DifferenceClass& d = classes[i];
    if (i > 0) text += i + 1 == shown && classes.size() <= 3 ? " and " : ", ";
    text += "the " + CountedClass(d.count, d.what) + " (" + expected_word + " " +
            CodeText(d.candidate_code) + ", got " + CodeText(d.actual_code) + ")";
  }
  if (classes.size() > shown) {
    std::uint64_t rest = 0;
    for (std::size_t i = shown; i < classes.size(); ++i) rest += classes[i].count;
    text += " and " + std::to_string(rest) + " more";
  }
  return text;
}

Diagnosis DiagnosisBuilder::Finish(const std::string& target_name, const std::string& noun, std::uint64_t total) {
  Diagnosis d;
  d.ran = true;
  d.compared = slots_.actual.size();
  d.target_differences = target_differences_;
  d.candidates = std::move(candidates_);
  std::stable_sort(d.candidates.begin(), d.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.FullMatch() != b.FullMatch()) return a.FullMatch();
    return a.matched > b.matched;
  });
  const std::string scope = d.compared == total ? "all " + std::to_string(total) + " " + noun
                                                : "the first " + std::to_string(d.compared) + " " + noun;
  // At most three names in the line; the rest are in the candidate list
  // (few inputs can leave many conventions indistinguishable).
  constexpr std::size_t kNamesInSummary = 3;
  std::string full;
  std::size_t full_count = 0;
  for (const Candidate& c : d.candidates) {
    if (!c.FullMatch()) break;
    if (full_count++ < kNamesInSummary) full += (full.empty() ? "" : ", ") + c.name;
  }
  if (full_count > kNamesInSummary) full += " and " + std::to_string(full_count - kNamesInSummary) + " more";
  if (!full.empty()) {
    d.summary = "matches " + full + " on " + scope;
  } else {
    d.summary = "matches no known convention (" + std::to_string(d.candidates.size()) + " tried)";
    if (!d.candidates.empty() && d.candidates.front().matched > 0) {
      const Candidate& best = d.candidates.front();
      d.summary += "; closest: " + best.name + " on " + std::to_string(best.matched) + " of " +
                   std::to_string(best.checked) + " " + noun + ", differing on " +
                   DescribeDifferences(best.differences, "it gives");
    }
  }
  if (!target_differences_.empty()) {
    d.summary += "; differs from " + target_name + " on " + DescribeDifferences(target_differences_, "expected");
  }
  return d;
}

}  // namespace lowbit::check::internal
