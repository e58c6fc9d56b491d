// `lowbit verify [--level smoke|ci|full]`: every registered kernel against
// the model, and the model against the oracle; prints one table row per
// (backend, operation, format) and exits 1 on any mismatch. A thin caller of
// the harness library (check/include/lowbit/check/check.h says what each
// part and level runs); at ci and full, the cuda-hw conversions are also
// swept over all their inputs on the GPU, SKIPPED without one.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lowbit/check/backends.h"
#include "lowbit/check/check.h"
#include "lowbit/check/progress.h"
#include "lowbit/check/text.h"
#include "lowbit/registry/registry.h"
#include "parse.h"

namespace lowbit::tools {
namespace {

struct VerifyArgs {
  std::string level = "ci";
  int threads = 2;
  std::string format;
  std::string backend;
  bool quiet = false;
};

void RunVerify(const VerifyArgs& args) {
  check::Plan plan;
  if (!check::ParseLevel(args.level, &plan.level)) {
    throw CommandError("unknown level '" + args.level + "' (known: smoke, ci, full)");
  }
  if (args.threads < 1) throw CommandError("--threads must be at least 1");
  plan.threads = args.threads;
  plan.filter.backend = args.backend;
  if (!args.format.empty()) plan.filter.format = Spec(ParseFormat(args.format)).name;
  const auto start = std::chrono::steady_clock::now();
  registry::Registry registry;
  check::RegisterAllBackends(registry);
  check::StderrProgress progress(!args.quiet);
  plan.progress = &progress;
  check::Results results = check::RunPlan(registry, plan);
  if (!results.error.empty()) throw CommandError(results.error);
  if (results.rows.empty()) throw CommandError("no kernel matches --format/--backend");
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fputs(check::RenderTable(results.rows).c_str(), stdout);
  std::fputs(check::RenderFirstMismatches(results.rows).c_str(), stdout);
  std::fputs(check::RenderSummary(results, "verify " + args.level).c_str(), stdout);
  if (results.mismatches() > 0) throw CommandExit{1};
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
