// Kernel rows against the model: the same inputs and options go through the
// kernel (over arrays) and through Convert element by element; any differing
// output bit is a mismatch. Rows whose backend cannot run here are SKIPPED,
// never passed (docs/design.md "Everything that computes is a registry
// entry"). The kernels of one (operation, format) share each input chunk and
// its model outputs.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "describe.h"
#include "lowbit/check/check.h"
#include "lowbit/check/inputs.h"
#include "lowbit/check/progress.h"
#include "lowbit/formats/convert.h"
#include "lowbit/registry/parallel.h"

namespace lowbit::check {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;

constexpr std::uint64_t kChunk = 1 << 17;

std::uint64_t Load(const unsigned char* p, std::size_t width) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, width);  // little-endian host: the low bytes
  return v;
}

// One option set of one (operation, format): an encode combo or a decode one.
struct Combo {
  std::string name;
  EncodeOptions encode;
  DecodeOptions decode;
  bool exhaustive = false;
  int index = 0;
};

std::vector<Combo> CombosFor(Operation op, const FormatSpec& spec) {
  std::vector<Combo> combos;
  int index = 0;
  if (registry::IsEncode(op)) {
    for (const EncodeCombo& c : EncodeCombos(spec)) {
      combos.push_back({c.name, c.options, DecodeOptions{}, c.exhaustive, index++});
    }
  } else {
    for (const DecodeCombo& d : DecodeCombos(spec)) {
      combos.push_back({d.name, EncodeOptions{}, d.options, index == 0, index});
      ++index;
    }
  }
  return combos;
}

// The kernels of one (operation, format) and the rows they report into.
struct KernelSet {
  Operation op;
  FormatId format;
  std::vector<std::pair<const KernelEntry*, std::size_t>> kernels;  // kernel, row index
};

// One combo's inputs for one KernelSet.
struct Group {
  const KernelSet* set;
  Combo combo;
  std::shared_ptr<const InputSet> inputs;
};

// A batch of work: one chunk of a group, checked against all its kernels.
struct Job {
  const Group* group;
  std::uint64_t begin;
  std::uint64_t end;
};

class Checker {
 public:
  explicit Checker(std::vector<Row>* rows) : rows_(rows) {}

  void Run(const Job& chunk) {
    const Group& group = *chunk.group;
    const Operation op = group.set->op;
    const FormatId format = group.set->format;
    const std::uint64_t begin = chunk.begin;
    const FormatSpec& in_spec = registry::InputSpec(op, format);
    const FormatSpec& out_spec = registry::OutputSpec(op, format);
    const std::size_t in_bytes = registry::InputBytes(op, format);
    const std::size_t out_bytes = registry::OutputBytes(op, format);
    const std::size_t n = chunk.end - begin;
    std::vector<unsigned char> input(n * in_bytes);
    std::vector<std::uint32_t> random(n);
    std::vector<std::uint64_t> expected(n);
    const bool encode = registry::IsEncode(op);
    const bool stochastic = encode && group.combo.encode.rounding == RoundingMode::kStochastic;
    EncodeOptions options = encode ? group.combo.encode : ToDecodeEncodeOptions(group.combo.decode);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t x = group.inputs->At(begin + i);
      std::memcpy(input.data() + i * in_bytes, &x, in_bytes);
      if (stochastic) options.random_bits = random[i] = RandomWord(begin + i, group.combo.index);
      expected[i] = Convert(in_spec, x, out_spec, options).code;
    }
    std::vector<unsigned char> output(n * out_bytes);
    for (const auto& [kernel, row] : group.set->kernels) {
      ConvertArgs args{.operation = op, .format = format};
      args.input = input.data();
      args.output = output.data();
      args.count = n;
      args.encode = group.combo.encode;
      args.decode = group.combo.decode;
      args.random_bits = stochastic ? random.data() : nullptr;
      Row local;
      if (!kernel->supports(args)) {
        if (begin == 0) local.unsupported_option_sets = 1;
        Merge(row, std::move(local));
        continue;
      }
      std::fill(output.begin(), output.end(), 0xA5);
      const registry::Status status = kernel->run(args);
      local.checked = n;
      if (!status.ok) {
        Mismatch m;
        m.combo = group.combo.name;
        m.note = "kernel error: " + status.message;
        internal::AddMismatch(&local, std::move(m));
        local.mismatches = n;  // no output of the chunk can be trusted
        Merge(row, std::move(local));
        continue;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t got = Load(output.data() + i * out_bytes, out_bytes);
        if (got == expected[i]) continue;
        Mismatch m = internal::ElementMismatch(group.combo.name, in_spec,
                                               group.inputs->At(begin + i), out_spec,
                                               expected[i], got);
        if (stochastic) m.random_bits = random[i];
        internal::AddMismatch(&local, std::move(m));
      }
      Merge(row, std::move(local));
    }
  }

 private:
  void Merge(std::size_t row, Row local) {
    std::lock_guard<std::mutex> lock(mutex_);
    Row& r = (*rows_)[row];
    r.checked += local.checked;
    r.mismatches += local.mismatches;
    r.unsupported_option_sets += local.unsupported_option_sets;
    for (Mismatch& m : local.first_mismatches) {
      if (r.first_mismatches.size() >= kMaxMismatchesPerRow) break;
      r.first_mismatches.push_back(std::move(m));
    }
  }

  std::vector<Row>* rows_;
  std::mutex mutex_;
};

// Runs every KernelSet over the inputs of `level`, on at most `threads` threads.
void RunSets(const std::vector<KernelSet>& sets, Level level, int threads, Progress* progress,
             std::vector<Row>* rows) {
  std::vector<std::unique_ptr<Group>> groups;
  std::vector<Job> jobs;
  std::uint64_t total_elements = 0;
  for (const KernelSet& set : sets) {
    if (set.kernels.empty()) continue;
    const FormatSpec& spec = Spec(set.format);
    std::map<bool, std::shared_ptr<const InputSet>> inputs;  // by exhaustive flag
    for (const Combo& combo : CombosFor(set.op, spec)) {
      auto& shared = inputs[combo.exhaustive];
      if (!shared) {
        shared = std::make_shared<const InputSet>(InputsFor(set.op, spec, level, combo.exhaustive));
      }
      groups.push_back(std::make_unique<Group>(Group{&set, combo, shared}));
      for (std::uint64_t begin = 0; begin < shared->size(); begin += kChunk) {
        jobs.push_back({groups.back().get(), begin, std::min(shared->size(), begin + kChunk)});
      }
      total_elements += shared->size();
    }
  }
  if (progress) progress->Begin("kernels vs model", total_elements);
  Checker checker(rows);
  // The process's one thread pool (registry/parallel.h), at most `threads`
  // of its threads: no threads are started per call.
  registry::ThreadPool::Shared().ParallelFor(
      jobs.size(),
      [&](std::size_t j) {
        checker.Run(jobs[j]);
        if (progress) progress->Advance(jobs[j].end - jobs[j].begin);
      },
      threads < 1 ? 1 : threads);
  if (progress) progress->End();
}

Row KernelRow(const KernelEntry& entry) {
  Row row;
  row.kind = RowKind::kKernel;
  row.backend = entry.backend;
  row.operation = registry::OperationName(entry.operation);
  row.format = Spec(entry.format).name;
  return row;
}

}  // namespace

std::vector<Row> CheckKernels(const registry::Registry& registry, Level level,
                              const Filter& filter, int threads, Progress* progress) {
  std::vector<Row> rows;
  std::vector<KernelSet> sets;
  const std::vector<KernelEntry>& entries = registry.Entries();
  for (Operation op : registry::kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!registry::OperationApplies(op, format) || !filter.Format(Spec(format))) continue;
      KernelSet set{op, format, {}};
      for (const KernelEntry& entry : entries) {
        if (entry.operation != op || entry.format != format || !filter.Backend(entry.backend)) {
          continue;
        }
        rows.push_back(KernelRow(entry));
        if (entry.available()) {
          set.kernels.emplace_back(&entry, rows.size() - 1);
        } else {
          rows.back().skipped = "backend not available on this machine";
        }
      }
      sets.push_back(std::move(set));
    }
  }
  RunSets(sets, level, threads, progress, &rows);
  return rows;
}

Row CheckKernel(const KernelEntry& kernel, Level level, int threads, Progress* progress) {
  std::vector<Row> rows = {KernelRow(kernel)};
  if (!registry::OperationApplies(kernel.operation, kernel.format)) {
    rows[0].skipped = std::string(registry::OperationName(kernel.operation)) +
                      " does not apply to " + Spec(kernel.format).name;
    return rows[0];
  }
  if (!kernel.available()) {
    rows[0].skipped = "backend not available on this machine";
    return rows[0];
  }
  const std::vector<KernelSet> sets = {KernelSet{kernel.operation, kernel.format, {{&kernel, 0}}}};
  RunSets(sets, level, threads < 1 ? 1 : threads, progress, &rows);
  return rows[0];
}

}  // namespace lowbit::check
