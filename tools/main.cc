// `lowbit`: bit-exact ML number formats on the command line. Each subcommand
// lives in its own file (commands.h says how to add one). main() owns what
// every command shares: the usage and version, negative numbers as values,
// one error line and exit status 2 for any failure (usage, file, memory,
// threads), and the check that everything printed reached stdout.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "value_parse.h"

#ifndef LOWBIT_VERSION
#define LOWBIT_VERSION "unknown"
#endif

namespace {

using lowbit::tools::kUsageExitCode;

// CLI11 reads "-.5", "-inf" and "-nan" as short options (only "-<digit>"
// passes as a negative number: CLI/App.hpp _recognize). A leading space keeps
// such a word positional; the value parser skips it. Only words that are
// numbers change, so "-h" and real options stay options.
std::vector<std::string> ProtectNegativeValues(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '-') continue;
    try {
      lowbit::tools::ParseExactValue(a);
    } catch (const lowbit::tools::CommandError&) {
      continue;
    }
    args[i] = " " + a;
  }
  return args;
}

int Fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "lowbit: error: %s\n", message.c_str());
  return kUsageExitCode;
}

// What the command printed must have reached stdout: a full disk or a closed
// pipe is an error, not a silent exit 0 (lowbit table bf16 > /dev/full).
int FlushOutput(int code) {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int error = errno;
    std::fprintf(stderr, "lowbit: error: writing the output failed%s%s\n", error != 0 ? ": " : "",
                 error != 0 ? std::strerror(error) : "");
    return code == 0 ? kUsageExitCode : code;
  }
  return code;
}

int Run(int argc, char** argv) {
  CLI::App app{"lowbit " LOWBIT_VERSION ": bit-exact models of ML number formats"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("lowbit ") + LOWBIT_VERSION);
  lowbit::tools::AddShowCommand(app);
  lowbit::tools::AddTableCommand(app);
  lowbit::tools::AddEncodeCommand(app);
  lowbit::tools::AddDecodeCommand(app);
  lowbit::tools::AddVerifyCommand(app);
  lowbit::tools::AddQuantizeCommand(app);
  lowbit::tools::AddExplainCommand(app);
  lowbit::tools::AddListCommand(app);
  lowbit::tools::AddCheckCommand(app);
  lowbit::tools::AddMmaCommand(app);
  std::vector<std::string> args = ProtectNegativeValues(argc, argv);
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == args[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) return Fail("unknown command '" + args[1] + "' (known: " + names + ")");
  }
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(e.what());
  } catch (const lowbit::tools::CommandError& e) {
    return Fail(e.what());
  } catch (const lowbit::tools::CommandExit& e) {
    return e.code;
  }
  // Bare `lowbit`: the usage, as --help prints it.
  if (app.get_subcommands().empty()) std::fputs(app.help().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int code = 0;
  try {
    code = Run(argc, argv);
  } catch (const std::bad_alloc&) {
    code = Fail("out of memory (the input is too large for this machine)");
  } catch (const std::length_error& e) {
    code = Fail(std::string("out of memory (") + e.what() + ")");
  } catch (const std::system_error& e) {
    // e.g. std::thread failing to start a worker thread.
    code = Fail(std::string("system error: ") + e.what());
  } catch (const std::exception& e) {
    code = Fail(std::string("internal error: ") + e.what());
  }
  return FlushOutput(code);
}
