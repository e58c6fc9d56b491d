// The lowbit command line: main.cc builds one CLI11 app and calls one Add*
// function per subcommand, each defined in its own *_command.cc. To add a
// subcommand (e.g. `quantize`, `explain`): write foo_command.cc defining
// AddFooCommand, declare it here, add one line to main.cc and the file to
// tools/CMakeLists.txt.
#pragma once

#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

namespace lowbit::tools {

// A usage problem found after parsing (unknown format, malformed code or
// value, unknown profile or mode): main prints "lowbit: error: <message>" on
// one line and exits with kUsageExitCode.
class CommandError : public std::runtime_error {
 public:
  explicit CommandError(const std::string& message) : std::runtime_error(message) {}
};

inline constexpr int kUsageExitCode = 2;

// Exit codes a command returns through its callback (thrown as
// CommandExit so that CLI11's callback plumbing needs no global state).
struct CommandExit {
  int code;
};

void AddShowCommand(CLI::App& app);
void AddTableCommand(CLI::App& app);
void AddEncodeCommand(CLI::App& app);
void AddDecodeCommand(CLI::App& app);
void AddVerifyCommand(CLI::App& app);
void AddQuantizeCommand(CLI::App& app);  // quantize_command.cc (block recipes)
void AddExplainCommand(CLI::App& app);   // explain_command.cc (block recipes)
void AddListCommand(CLI::App& app);      // list_command.cc (formats, profiles, recipes)
void AddCheckCommand(CLI::App& app);     // check_command.cc (a user kernel's dumped outputs)
void AddCheckGemmCommand(CLI::App& app);  // check_gemm_command.cc (`lowbit check gemm`, added by check)
void AddMmaCommand(CLI::App& app);       // mma_command.cc (one tensor-core output, step by step)

}  // namespace lowbit::tools
