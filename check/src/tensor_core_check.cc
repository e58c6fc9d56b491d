// The tensor-core rows (registry/include/lowbit/registry/tensor_core_entry.h):
// each row's every operand family swept through the instruction and the
// model, TensorCoreSetsPerFamily(level) sets of each, every output element
// compared bit for bit (docs/tensor-cores.md "Verified on the hardware").
// The hardware is the reference: a mismatch shows the model's D as
// "expected" and the instruction's as "hardware", with the set that drew it
// and a `lowbit mma` command line that explains the model's side.
#include <string>
#include <utility>
#include <vector>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/tensor_core.h"
#include "lowbit/registry/registry.h"
#include "lowbit/registry/tensor_core_entry.h"

namespace lowbit::check {
namespace {

using registry::TensorCoreEntry;
using registry::TensorCoreSweepReport;

// A fixed seed per (instruction, family), so a mismatch is drawn again by
// the same call.
std::uint64_t SeedOf(const TensorCoreEntry& entry, int family) {
  return 0x7C5EED00u + static_cast<std::uint64_t>(entry.instruction) * 64u + static_cast<std::uint64_t>(family);
}

std::string CodeList(const std::vector<std::uint32_t>& codes) {
  std::string text;
  for (std::uint32_t code : codes) text += (text.empty() ? "" : ",") + internal::Hex(code);
  return text;
}

Mismatch FirstMismatch(const TensorCoreEntry& entry, const std::string& family, std::uint64_t seed,
                       const TensorCoreSweepReport& report) {
  const TensorCoreInstruction& inst = Instruction(entry.instruction);
  const FormatSpec& acc = inst.arithmetic.accumulator;
  Mismatch m;
  m.combo = family;
  m.where = "set " + std::to_string(report.first_set) + " of seed " + internal::Hex(seed) + ", d[" +
            std::to_string(report.first_row) + "][" + std::to_string(report.first_column) + "]";
  m.output_format = acc.name;
  m.expected = report.first_model;
  m.expected_value = internal::ValueText(acc, report.first_model);
  m.actual = report.first_hardware;
  m.actual_value = internal::ValueText(acc, report.first_hardware);
  if (acc.IsFloat()) m.code_distance = internal::CodeDistance(acc, report.first_model, report.first_hardware);
  if (static_cast<int>(report.first_a.size()) == inst.k && static_cast<int>(report.first_b.size()) == inst.k) {
    m.note = std::string("the model's side: lowbit mma ") + inst.name + " --codes --a " + CodeList(report.first_a) +
             " --b " + CodeList(report.first_b) + " --c " + internal::Hex(report.first_c);
  }
  return m;
}

}  // namespace

std::int64_t TensorCoreSetsPerFamily(Level level) {
  switch (level) {
    case Level::kSmoke: return 1'000;
    case Level::kCi: return 100'000;
    case Level::kFull: return 1'000'000;
  }
  return 0;
}

Row CheckTensorCore(const TensorCoreEntry& entry, Level level) {
  const TensorCoreInstruction& inst = Instruction(entry.instruction);
  Row row;
  row.kind = RowKind::kTensorCore;
  row.backend = entry.backend;
  row.operation = "tensor-core";
  row.format = registry::TensorCoreRowName(entry);
  if (!entry.sweep) {
    row.skipped = "the row has no sweep";
    return row;
  }
  if (entry.families.empty()) {
    row.skipped = "the row names no operand family";  // nothing compared is never a pass
    return row;
  }
  if (!entry.available || !entry.available()) {
    const std::string why = entry.unavailable_reason ? entry.unavailable_reason() : "";
    row.skipped = why.empty() ? "backend not available here" : why;
    return row;
  }
  const std::int64_t sets = TensorCoreSetsPerFamily(level);
  const std::int64_t outputs_per_set = static_cast<std::int64_t>(inst.m) * entry.n;
  for (std::size_t f = 0; f < entry.families.size(); ++f) {
    const std::string& family = entry.families[f];
    const std::uint64_t seed = SeedOf(entry, static_cast<int>(f));
    TensorCoreSweepReport report;
    const registry::Status status = entry.sweep(static_cast<int>(f), seed, sets, &report);
    if (!status.ok) {
      Mismatch m;
      m.combo = family;
      m.note = "sweep error: " + status.message;
      internal::AddMismatch(&row, std::move(m));
      continue;
    }
    // A sweep that compared less than it was asked to is a failure, not a
    // smaller pass.
    if (report.sets != sets || report.outputs != sets * outputs_per_set) {
      Mismatch m;
      m.combo = family;
      m.note = "the sweep compared " + std::to_string(report.outputs) + " outputs of " + std::to_string(report.sets) +
               " sets; asked for " + std::to_string(sets) + " sets of " + std::to_string(outputs_per_set);
      internal::AddMismatch(&row, std::move(m));
    }
    row.checked += static_cast<std::uint64_t>(report.outputs);
    if (report.mismatches > 0) {
      row.mismatches += static_cast<std::uint64_t>(report.mismatches);
      if (row.first_mismatches.size() < kMaxMismatchesPerRow) {
        row.first_mismatches.push_back(FirstMismatch(entry, family, seed, report));
      }
    }
  }
  return row;
}

std::vector<Row> CheckTensorCores(const registry::Registry& registry, Level level, const Filter& filter,
                                  Progress* progress) {
  // A format filter names an element format; tensor-core rows are selected
  // without one.
  std::vector<const TensorCoreEntry*> chosen;
  if (filter.format.empty()) {
    for (const TensorCoreEntry& entry : registry.TensorCoreEntries()) {
      if (filter.Backend(entry.backend)) chosen.push_back(&entry);
    }
  }
  std::vector<Row> rows;
  if (progress && !chosen.empty()) progress->Begin("tensor cores vs model", chosen.size());
  for (const TensorCoreEntry* entry : chosen) {
    rows.push_back(CheckTensorCore(*entry, level));
    if (progress) progress->Advance(1);
  }
  if (progress && !chosen.empty()) progress->End();
  return rows;
}

}  // namespace lowbit::check
