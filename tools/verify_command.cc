// `lowbit verify [--level smoke|ci|full]`: every registered kernel against
// the model, and the model against the oracle; prints one table row per
// (backend, operation, format) and exits 1 on any mismatch. verify.h and
// verify_inputs.cc say what each level runs; at ci and full, the cuda-hw
// conversions are also swept over all their inputs on the GPU
// (verify_gpu.cc), SKIPPED without one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/registry/registry.h"
#include "parse.h"
#include "verify.h"

namespace lowbit::tools {
namespace {

struct VerifyArgs {
  std::string level = "ci";
  int threads = 2;
  std::string format;
  std::string backend;
  bool quiet = false;
};

VerifyLevel ParseLevel(const std::string& name) {
  if (name == "smoke") return VerifyLevel::kSmoke;
  if (name == "ci") return VerifyLevel::kCi;
  if (name == "full") return VerifyLevel::kFull;
  throw CommandError("unknown level '" + name + "' (known: smoke, ci, full)");
}

void PrintTable(const std::vector<VerifyRow>& rows) {
  std::size_t widths[3] = {7, 9, 6};
  for (const VerifyRow& r : rows) {
    widths[0] = std::max(widths[0], r.backend.size());
    widths[1] = std::max(widths[1], r.operation.size());
    widths[2] = std::max(widths[2], r.format.size());
  }
  const auto w = [](std::size_t x) { return static_cast<int>(x); };
  std::printf("%-*s  %-*s  %-*s  %12s  %10s  %s\n", w(widths[0]), "backend", w(widths[1]),
              "operation", w(widths[2]), "format", "inputs", "mismatches", "status");
  for (const VerifyRow& r : rows) {
    std::string status;
    if (!r.skipped.empty()) {
      status = "SKIPPED (" + r.skipped + ")";
    } else if (r.mismatches > 0) {
      status = "MISMATCH";
    } else if (r.checked == 0) {
      status = "SKIPPED (no option set supported)";
    } else {
      status = "ok";
    }
    if (r.skipped.empty() && r.unsupported_combos > 0) {
      status += " (" + std::to_string(r.unsupported_combos) + " option sets unsupported)";
    }
    std::printf("%-*s  %-*s  %-*s  %12llu  %10llu  %s\n", w(widths[0]), r.backend.c_str(),
                w(widths[1]), r.operation.c_str(), w(widths[2]), r.format.c_str(),
                static_cast<unsigned long long>(r.checked),
                static_cast<unsigned long long>(r.mismatches), status.c_str());
  }
}

void RunVerify(const VerifyArgs& args) {
  const VerifyLevel level = ParseLevel(args.level);
  if (args.threads < 1) throw CommandError("--threads must be at least 1");
  VerifyFilter filter{args.format, args.backend};
  if (!args.format.empty()) filter.format = Spec(ParseFormat(args.format)).name;
  const auto start = std::chrono::steady_clock::now();
  registry::Registry registry;
  registry::RegisterAllBackends(registry);
  Progress progress(!args.quiet);
  std::vector<VerifyRow> rows = VerifyBackends(registry, level, filter, args.threads, progress);
  for (VerifyRow& r : VerifyRecipes(registry, level, filter, progress)) rows.push_back(std::move(r));
#if defined(LOWBIT_HAVE_CUDA_BACKEND)
  const std::vector<VerifyRow> gpu_rows = VerifyGpuSweeps(level, filter, progress);
  rows.insert(rows.end(), gpu_rows.begin(), gpu_rows.end());
#else
  if (level != VerifyLevel::kSmoke && filter.Backend("cuda-hw-sweep")) {
    rows.push_back({"cuda-hw-sweep", "all", "all", 0, 0, "the CUDA backend was not built"});
  }
#endif
#if defined(LOWBIT_HAVE_REFERENCE)
  const std::vector<VerifyRow> oracle_rows =
      VerifyModelAgainstOracle(level, filter, args.threads, progress);
  rows.insert(rows.end(), oracle_rows.begin(), oracle_rows.end());
#else
  if (filter.Backend("oracle")) {
    rows.push_back({"model-vs-oracle", "all", "all", 0, 0, "lowbit::reference was not built"});
  }
#endif
  if (rows.empty()) throw CommandError("no kernel matches --format/--backend");
  PrintTable(rows);
  std::uint64_t checked = 0, mismatches = 0, skipped = 0;
  for (const VerifyRow& r : rows) {
    checked += r.checked;
    mismatches += r.mismatches;
    skipped += r.skipped.empty() ? 0 : 1;
    if (r.mismatches > 0) {
      std::printf("first mismatch of %s %s %s: %s\n", r.backend.c_str(), r.operation.c_str(),
                  r.format.c_str(), r.example.c_str());
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("verify %s: %zu rows, %llu inputs checked, %llu mismatches, %llu skipped, %.1f s\n",
              args.level.c_str(), rows.size(), static_cast<unsigned long long>(checked),
              static_cast<unsigned long long>(mismatches), static_cast<unsigned long long>(skipped),
              seconds);
  if (mismatches > 0) throw CommandExit{1};
}

}  // namespace

void AddVerifyCommand(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* verify = app.add_subcommand(
      "verify", "Check every registered kernel against the model and the model against the oracle");
  verify->add_option("--level", args->level, "smoke | ci | full")->capture_default_str();
  verify->add_option("--threads", args->threads, "Worker threads")->capture_default_str();
  verify->add_option("--format", args->format, "Only this format");
  verify->add_option("--backend", args->backend,
                     "Only backends whose name contains this (\"oracle\": the model-vs-oracle rows)");
  verify->add_flag("--quiet", args->quiet, "No progress on stderr");
  verify->callback([args] { RunVerify(*args); });
}

}  // namespace lowbit::tools
