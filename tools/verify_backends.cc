// Every registered kernel against the model: the same inputs and options go
// through the kernel (over arrays) and through Convert element by element;
// any differing output bit is a mismatch. Rows whose backend cannot run here
// are SKIPPED, never passed (docs/design.md "Tests").
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "lowbit/formats/convert.h"
#include "parse.h"
#include "verify.h"

namespace lowbit::tools {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;

constexpr std::uint64_t kChunk = 1 << 17;

bool IsEncode(Operation op) {
  return op == Operation::kEncodeF32 || op == Operation::kEncodeBf16 ||
         op == Operation::kEncodeF16;
}

// The model's view of an operation: source and destination formats.
struct Sides {
  const FormatSpec* src;
  const FormatSpec* dst;
};
Sides SidesOf(Operation op, const FormatSpec& spec) {
  switch (op) {
    case Operation::kEncodeF32:
      return {&kFp32, &spec};
    case Operation::kEncodeBf16:
      return {&kBf16, &spec};
    case Operation::kEncodeF16:
      return {&kFp16, &spec};
    case Operation::kDecodeToF32:
      return {&spec, &kFp32};
    case Operation::kDecodeToBf16:
      return {&spec, &kBf16};
  }
  return {&spec, &spec};
}

std::size_t Bytes(const FormatSpec& spec) { return registry::CodeBytes(spec); }

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
  if (IsEncode(op)) {
    int index = 0;
    for (const EncodeCombo& c : EncodeCombos(spec)) {
      combos.push_back({c.name, c.options, DecodeOptions{}, c.exhaustive, index++});
    }
  } else {
    int index = 0;
    for (const DecodeOptions& d : DecodeCombos()) {
      const char* sign = d.nan_sign == NanSign::kKeep ? "nan-sign-kept"
                         : d.nan_sign == NanSign::kPositive ? "nan+" : "nan-";
      const char* payload = d.nan_payload == NanPayload::kTruncate ? "payload"
                            : d.nan_payload == NanPayload::kAllOnes ? "all-ones" : "quiet";
      combos.push_back({std::string(sign) + "," + payload, EncodeOptions{}, d, index == 0, index});
      ++index;
    }
  }
  return combos;
}

// One combo's inputs for one (op, format) and the kernels of that row.
struct Group {
  Operation op;
  FormatId format;
  Combo combo;
  std::shared_ptr<const InputSet> inputs;
  std::vector<std::pair<const KernelEntry*, std::size_t>> kernels;  // kernel, row index
};

// A batch of work: one chunk of a group, checked against all its kernels.
struct Job {
  const Group* group;
  std::uint64_t begin;
  std::uint64_t end;
};

class Checker {
 public:
  explicit Checker(std::vector<VerifyRow>* rows) : rows_(rows) {}

  void Run(const Job& chunk) {
    const Group& job = *chunk.group;
    const std::uint64_t begin = chunk.begin;
    const FormatSpec& spec = Spec(job.format);
    const Sides sides = SidesOf(job.op, spec);
    const std::size_t in_bytes = Bytes(*sides.src);
    const std::size_t out_bytes = Bytes(*sides.dst);
    const std::size_t n = chunk.end - begin;
    std::vector<unsigned char> input(n * in_bytes);
    std::vector<std::uint32_t> random(n);
    std::vector<std::uint64_t> expected(n);
    const bool stochastic = IsEncode(job.op) && job.combo.encode.rounding == RoundingMode::kStochastic;
    EncodeOptions options = IsEncode(job.op) ? job.combo.encode : ToDecodeEncodeOptions(job.combo.decode);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t x = job.inputs->At(begin + i);
      std::memcpy(input.data() + i * in_bytes, &x, in_bytes);
      if (stochastic) options.random_bits = random[i] = RandomWord(begin + i, job.combo.index);
      expected[i] = Convert(*sides.src, x, *sides.dst, options).code;
    }
    std::vector<unsigned char> output(n * out_bytes);
    for (const auto& [kernel, row] : job.kernels) {
      ConvertArgs args{.operation = job.op, .format = job.format};
      args.input = input.data();
      args.output = output.data();
      args.count = n;
      args.encode = job.combo.encode;
      args.decode = job.combo.decode;
      args.random_bits = stochastic ? random.data() : nullptr;
      if (!kernel->supports(args)) {
        if (begin == 0) Record(row, 0, 0, "", /*unsupported=*/1);
        continue;
      }
      std::fill(output.begin(), output.end(), 0xA5);
      const registry::Status status = kernel->run(args);
      if (!status.ok) {
        Record(row, n, n, "combo " + job.combo.name + ": kernel error: " + status.message, 0);
        continue;
      }
      std::uint64_t mismatches = 0;
      std::string example;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t got = Load(output.data() + i * out_bytes, out_bytes);
        if (got == expected[i]) continue;
        if (mismatches++ == 0) {
          example = "input " + Hex(job.inputs->At(begin + i)) + " combo " + job.combo.name +
                    (stochastic ? " random " + Hex(random[i]) : "") + ": model " +
                    Hex(expected[i]) + ", kernel " + Hex(got);
        }
      }
      Record(row, n, mismatches, example, 0);
    }
  }

 private:
  void Record(std::size_t row, std::uint64_t checked, std::uint64_t mismatches,
              const std::string& example, int unsupported) {
    std::lock_guard<std::mutex> lock(mutex_);
    VerifyRow& r = (*rows_)[row];
    r.checked += checked;
    r.mismatches += mismatches;
    r.unsupported_combos += unsupported;
    if (r.example.empty()) r.example = example;
  }

  std::vector<VerifyRow>* rows_;
  std::mutex mutex_;
};

}  // namespace

std::vector<VerifyRow> VerifyBackends(const registry::Registry& registry, VerifyLevel level,
                                      const VerifyFilter& filter, int threads, Progress& progress) {
  std::vector<VerifyRow> rows;
  std::vector<std::unique_ptr<Group>> groups;
  std::vector<Job> jobs;
  std::uint64_t total_elements = 0;
  for (Operation op : registry::kAllOperations) {
    for (FormatId format : kAllFormats) {
      const FormatSpec& spec = Spec(format);
      if (!registry::OperationApplies(op, format) || !filter.Format(spec)) continue;
      std::vector<std::pair<const KernelEntry*, std::size_t>> kernels;
      for (const KernelEntry& entry : registry.Entries()) {
        if (entry.operation != op || entry.format != format || !filter.Backend(entry.backend)) {
          continue;
        }
        VerifyRow row{entry.backend, registry::OperationName(op), spec.name};
        if (!entry.available()) row.skipped = "backend not available on this machine";
        rows.push_back(row);
        if (entry.available()) kernels.emplace_back(&entry, rows.size() - 1);
      }
      if (kernels.empty()) continue;
      std::map<bool, std::shared_ptr<const InputSet>> inputs;  // by exhaustive flag
      for (const Combo& combo : CombosFor(op, spec)) {
        auto& set = inputs[combo.exhaustive];
        if (!set) set = std::make_shared<const InputSet>(InputsFor(op, spec, level, combo.exhaustive));
        groups.push_back(std::make_unique<Group>(Group{op, format, combo, set, kernels}));
        for (std::uint64_t begin = 0; begin < set->size(); begin += kChunk) {
          jobs.push_back({groups.back().get(), begin, std::min(set->size(), begin + kChunk)});
        }
        total_elements += set->size();
      }
    }
  }
  progress.Begin("kernels vs model", total_elements);
  Checker checker(&rows);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t j = next++; j < jobs.size(); j = next++) {
      checker.Run(jobs[j]);
      progress.Advance(jobs[j].end - jobs[j].begin);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  progress.End();
  return rows;
}

}  // namespace lowbit::tools
