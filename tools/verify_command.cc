// `lowbit verify [--level smoke|ci|full]`: every registered kernel against
// the model, and the model against the oracle; a thin caller of the harness
// library (check/include/lowbit/check/check.h says what each part and level
// runs); at ci and full, the cuda-hw conversions are also swept over all
// their inputs on the GPU, SKIPPED without one. Output:
//   default  one line per (backend, operation): rows, inputs, mismatches and
//            whether any row was skipped, then the first mismatch of each
//            failed row and the total;
//   --rows   one line per (backend, operation, format or recipe) instead;
//   --json   every row as JSON (fields of check::Row), nothing else on stdout.
// Exit status 1 on any mismatch, and with --strict also when a backend row
// (kernel, recipe, packing or GPU sweep) was skipped: its backend is
// unavailable (a GPU machine whose GPU vanished must not pass green) or the
// harness could not compare it. Model-vs-oracle rows are no backend: the
// oracle's deliberate limits (its value grid covers formats of at most 16
// bits, check/src/oracle.cc) do not fail --strict. Rows whose kernel supports
// none of the option sets are no backend failure either and do not count.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/check/text.h"
#include "lowbit/formats/user_word.h"
#include "lowbit/registry/registry.h"
#include "parse.h"

namespace lowbit::tools {
namespace {

// More worker threads than this is a typo, not a machine (each thread holds a
// chunk of inputs; std::thread fails long before 99999).
constexpr int kMaxThreads = 256;

int DefaultThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(cores, 1, kMaxThreads));
}

struct VerifyArgs {
  std::string level = "ci";
  int threads = DefaultThreads();
  std::string format;
  std::string backend;
  bool quiet = false;
  bool rows = false;
  bool json = false;
  bool strict = false;
};

// ---- the summary per (backend, operation) ----------------------------------

struct Group {
  std::string backend;
  std::string operation;
  std::size_t rows = 0;
  std::size_t failed_rows = 0;
  std::size_t skipped_rows = 0;  // backend unavailable (Row::skipped set)
  std::size_t unsupported_rows = 0;  // ran nothing: no option set supported
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  std::string skip_reason;  // the first skipped row's reason
};

std::string GroupStatus(const Group& g) {
  std::string status;
  if (g.failed_rows > 0) {
    status = "MISMATCH (" + std::to_string(g.failed_rows) + (g.failed_rows == 1 ? " row)" : " rows)");
  } else if (g.skipped_rows == g.rows) {
    status = "SKIPPED (" + g.skip_reason + ")";
  } else {
    status = "ok";
  }
  if (g.skipped_rows > 0 && g.skipped_rows < g.rows) {
    status += ", " + std::to_string(g.skipped_rows) + " skipped (" + g.skip_reason + ")";
  }
  if (g.unsupported_rows > 0) {
    status += ", " + std::to_string(g.unsupported_rows) + " with no option set supported";
  }
  return status;
}

std::string RenderGroups(const std::vector<check::Row>& rows) {
  std::vector<Group> groups;
  for (const check::Row& r : rows) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.backend == r.backend && g.operation == r.operation;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{r.backend, r.operation});
    ++it->rows;
    it->checked += r.checked;
    it->mismatches += r.mismatches;
    if (r.mismatches > 0) ++it->failed_rows;
    if (!r.skipped.empty()) {
      if (it->skipped_rows++ == 0) it->skip_reason = r.skipped;
    } else if (r.checked == 0) {
      ++it->unsupported_rows;
    }
  }
  std::size_t widths[2] = {7, 9};
  for (const Group& g : groups) {
    widths[0] = std::max(widths[0], g.backend.size());
    widths[1] = std::max(widths[1], g.operation.size());
  }
  const int w0 = static_cast<int>(widths[0]);
  const int w1 = static_cast<int>(widths[1]);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-*s  %5s  %14s  %10s  %s\n", w0, "backend", w1, "operation", "rows",
                "inputs", "mismatches", "status");
  out += line;
  for (const Group& g : groups) {
    std::snprintf(line, sizeof line, "%-*s  %-*s  %5zu  %14llu  %10llu  ", w0, g.backend.c_str(), w1,
                  g.operation.c_str(), g.rows, static_cast<unsigned long long>(g.checked),
                  static_cast<unsigned long long>(g.mismatches));
    out += line + GroupStatus(g) + "\n";
  }
  return out;
}

// ---- JSON --------------------------------------------------------------------

std::string Json(const std::string& text) { return check::JsonString(text); }

const char* KindName(check::RowKind kind) {
  switch (kind) {
    case check::RowKind::kKernel: return "kernel";
    case check::RowKind::kRecipe: return "recipe";
    case check::RowKind::kPacking: return "packing";
    case check::RowKind::kGpuSweep: return "gpu-sweep";
    case check::RowKind::kOracle: return "oracle";
    case check::RowKind::kMatmul: return "matmul";
    case check::RowKind::kTensorCore: return "tensor-core";
  }
  return "?";
}

const char* OutcomeName(const check::Row& r) {
  switch (r.outcome()) {
    case check::Row::Outcome::kPassed: return "ok";
    case check::Row::Outcome::kFailed: return "mismatch";
    case check::Row::Outcome::kSkipped: return "skipped";
  }
  return "?";
}

std::string MismatchJson(const check::Row& row, const check::Mismatch& m) {
  std::string out = "{\"description\": " + Json(check::DescribeMismatch(row, m));
  out += ", \"combo\": " + Json(m.combo) + ", \"where\": " + Json(m.where);
  out += ", \"input\": " + std::to_string(m.input) + ", \"input_format\": " + Json(m.input_format);
  out += ", \"input_value\": " + Json(m.input_value);
  out += ", \"output_format\": " + Json(m.output_format);
  out += ", \"expected\": " + std::to_string(m.expected) + ", \"expected_value\": " + Json(m.expected_value);
  out += ", \"actual\": " + std::to_string(m.actual) + ", \"actual_value\": " + Json(m.actual_value);
  out += ", \"note\": " + Json(m.note) + "}";
  return out;
}

std::string RenderJson(const check::Results& results, const std::string& level, std::size_t strict_skips,
                       bool strict) {
  std::string out = "{\n  \"level\": " + Json(level) + ",\n";
  out += "  \"rows\": [";
  for (std::size_t i = 0; i < results.rows.size(); ++i) {
    const check::Row& r = results.rows[i];
    out += i == 0 ? "\n" : ",\n";
    out += "    {\"kind\": " + Json(KindName(r.kind)) + ", \"backend\": " + Json(r.backend) +
           ", \"operation\": " + Json(r.operation) + ", \"format\": " + Json(r.format) +
           ", \"inputs\": " + std::to_string(r.checked) + ", \"mismatches\": " + std::to_string(r.mismatches) +
           ", \"status\": " + Json(OutcomeName(r)) + ", \"skipped\": " + Json(r.skipped) +
           ", \"unsupported_option_sets\": " + std::to_string(r.unsupported_option_sets) +
           ", \"first_mismatches\": [";
    for (std::size_t k = 0; k < r.first_mismatches.size(); ++k) {
      out += (k == 0 ? "" : ", ") + MismatchJson(r, r.first_mismatches[k]);
    }
    out += "]}";
  }
  out += "\n  ],\n";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", results.seconds);
  const bool passed = results.mismatches() == 0 && !(strict && strict_skips > 0);
  out += "  \"summary\": {\"rows\": " + std::to_string(results.rows.size()) +
         ", \"inputs\": " + std::to_string(results.checked()) +
         ", \"mismatches\": " + std::to_string(results.mismatches()) +
         ", \"skipped\": " + std::to_string(results.skipped_rows()) + ", \"seconds\": " + seconds +
         ", \"strict\": " + (strict ? "true" : "false") + ", \"passed\": " + (passed ? "true" : "false") + "}\n}\n";
  return out;
}

// ---- the command ---------------------------------------------------------------

// StderrProgress without the phases that have no work: when --format or
// --backend matches no row every phase is empty, and the error that follows
// must be the only line on stderr (docs/bad-input.md "Command line").
class ProgressOfNonEmptyPhases : public check::Progress {
 public:
  explicit ProgressOfNonEmptyPhases(bool enabled) : shown_(enabled) {}
  void Begin(const std::string& phase, std::uint64_t total) override {
    active_ = total > 0;
    if (active_) shown_.Begin(phase, total);
  }
  void Advance(std::uint64_t units) override {
    if (active_) shown_.Advance(units);
  }
  void End() override {
    if (active_) shown_.End();
    active_ = false;
  }

 private:
  check::StderrProgress shown_;
  std::atomic<bool> active_{false};  // read by the workers' Advance
};

void RunVerify(const VerifyArgs& args) {
  check::Plan plan;
  if (!check::ParseLevel(args.level, &plan.level)) {
    throw CommandError("unknown level " + QuoteUserWord(args.level) + " (known: smoke, ci, full)");
  }
  plan.threads = args.threads;
  plan.filter.backend = args.backend;
  if (!args.format.empty()) plan.filter.format = Spec(ParseFormat(args.format)).name;
  const auto start = std::chrono::steady_clock::now();
  registry::Registry registry;
  check::RegisterAllBackends(registry);
  ProgressOfNonEmptyPhases progress(!args.quiet && !args.json);
  plan.progress = &progress;
  check::Results results = check::RunPlan(registry, plan);
  if (!results.error.empty()) throw CommandError(results.error);
  if (results.rows.empty()) throw CommandError("no kernel matches --format/--backend");
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t unavailable = 0;  // backend rows that did not run (--strict)
  const check::Row* first_unavailable = nullptr;
  for (const check::Row& r : results.rows) {
    if (r.kind == check::RowKind::kOracle || r.skipped.empty()) continue;
    if (unavailable++ == 0) first_unavailable = &r;
  }
  if (args.json) {
    std::fputs(RenderJson(results, args.level, unavailable, args.strict).c_str(), stdout);
  } else {
    std::fputs((args.rows ? check::RenderTable(results.rows) : RenderGroups(results.rows)).c_str(), stdout);
    std::fputs(check::RenderFirstMismatches(results.rows).c_str(), stdout);
    std::fputs(check::RenderSummary(results, "verify " + args.level).c_str(), stdout);
  }
  if (args.strict && unavailable > 0) {
    const check::Row& r = *first_unavailable;
    const std::string first = r.backend + " " + r.operation + " " + r.format + ": " + r.skipped;
    std::fflush(stdout);
    std::fprintf(stderr, "lowbit: error: --strict: %zu backend row%s did not run (first: %s)\n", unavailable,
                 unavailable == 1 ? "" : "s", first.c_str());
    throw CommandExit{1};
  }
  if (results.mismatches() > 0) throw CommandExit{1};
}

}  // namespace

void AddVerifyCommand(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every registered kernel against the model and the model against the oracle");
  verify->add_option("--level", args->level, "How many inputs per row")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& word) -> std::string {
            check::Level level;
            return check::ParseLevel(word, &level) ? ""
                                                   : "unknown level " + QuoteUserWord(word) + " (smoke, ci, full)";
          },
          "LEVEL in {smoke,ci,full}"));
  verify->add_option("--threads", args->threads, "Worker threads (default: this machine's cores)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxThreads));
  verify->add_option("--format", args->format, "Only this format (lowbit list formats)");
  verify->add_option("--backend", args->backend,
                     "Only backends whose name contains this (\"oracle\": the model-vs-oracle rows)");
  verify->add_flag("--quiet", args->quiet, "No progress on stderr");
  verify->add_flag("--rows", args->rows, "One line per (backend, operation, format) instead of the summary");
  verify->add_flag("--json", args->json, "Every row as JSON on stdout (no table, no progress)");
  verify->add_flag("--strict", args->strict,
                   "Exit 1 also when a backend row did not run (backend unavailable here, e.g. no GPU)");
  verify->callback([args] { RunVerify(*args); });
}

}  // namespace lowbit::tools
