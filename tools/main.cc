// `lowbit`: bit-exact ML number formats on the command line. Each subcommand
// lives in its own file (commands.h says how to add one). main() owns what
// every command shares: the usage and version, negative numbers as values,
// one error line and exit status 2 for any failure (usage, file, memory,
// threads), and the check that everything printed reached stdout.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "lowbit/formats/user_word.h"
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

// Options are checked before CLI11 parses, so that its messages never need
// to echo them: a word that starts with '-' must be an option of the command
// (CLI11 would otherwise take "-x" for a missing value: "value is required"),
// and an option given an empty value ("--scales ''", "--layout=") is an error
// naming the option, never "not given" (docs/bad-input.md "Empty values").
// Returns the problem, or "".
std::string CheckOptionWords(const CLI::App& command, const std::vector<std::string>& args, std::size_t first) {
  const std::string where = command.get_parent() == nullptr ? "lowbit" : "lowbit " + command.get_name();
  // What CLI11 takes for an option name's first character (CLI/StringTools.hpp
  // valid_first_char at 2.1): any other word is a value.
  const auto name_start = [](char c) { return c != '-' && c != '!' && c != ' ' && c != '\n'; };
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;  // the rest are values
    const bool long_form = a.size() > 2 && a[0] == '-' && a[1] == '-' && name_start(a[2]);
    const bool short_form = !long_form && a.size() > 1 && a[0] == '-' && name_start(a[1]);
    if (!long_form && !short_form) continue;
    // "-<digit>": CLI11 reads a number unless the command has that option.
    if (short_form && a[1] >= '0' && a[1] <= '9' && command.get_option_no_throw(a.substr(0, 2)) == nullptr) continue;
    const std::size_t equals = long_form ? a.find('=') : std::string::npos;
    const std::string name = long_form ? a.substr(0, equals) : a.substr(0, 2);
    const CLI::Option* option = command.get_option_no_throw(name);
    if (option == nullptr) {
      return "unknown option " + lowbit::QuoteUserWord(name) + " for " + where + " (" + where +
             " --help lists them; a value that starts with '-' is a number such as -1.5 or -inf)";
    }
    if (option->get_expected_min() == 0) continue;  // a flag
    // CLI11 takes the word after an option that needs a value as that value,
    // whatever it looks like (--static -inf,1).
    std::string value;
    if (equals != std::string::npos) {
      value = a.substr(equals + 1);
    } else if (short_form && a.size() > 2) {
      value = a.substr(2);  // -xVALUE
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      continue;  // no value at all: CLI11 names the option
    }
    if (value.empty()) {
      return name + " is given an empty value (give a value, or leave " + name + " out for its default)";
    }
  }
  return "";
}

// CLI11 writes into some messages the words it refused (an extra argument,
// a value it cannot convert): each such word that is not short printable
// text is shown as every user word is (QuoteUserWord), so the error stays one
// line of bounded length.
std::string QuoteWordsOfCli11Message(const std::string& message) {
  std::string out;
  std::size_t start = 0;
  while (start <= message.size()) {
    std::size_t end = message.find(' ', start);
    if (end == std::string::npos) end = message.size();
    const std::string word = message.substr(start, end - start);
    // Words lowbit's own validators quoted are at most 4 bytes per byte
    // shown plus the quotes and the length: left as they are.
    const bool plain = word.size() <= 4 * lowbit::kMaxShownWordBytes + 32 &&
                       std::all_of(word.begin(), word.end(), [](char c) {
                         return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F;
                       });
    out += (start == 0 ? "" : " ") + (plain ? word : lowbit::QuoteUserWord(word));
    start = end + 1;
  }
  return out;
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
  // `lowbit check gemm ...` is the hidden command check-gemm
  // (check_gemm_command.cc): `check` itself takes a target and --input.
  if (args.size() > 2 && args[1] == "check" && args[2] == "gemm") {
    args.erase(args.begin() + 2);
    args[1] = "check-gemm";
  }
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == args[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) return Fail("unknown command " + lowbit::QuoteUserWord(args[1]) + " (known: " + names + ")");
  }
  if (args.size() > 1) {
    const bool top_level = args[1].empty() || args[1][0] == '-';
    const CLI::App& command = top_level ? app : *app.get_subcommand(args[1]);
    const std::string problem = CheckOptionWords(command, args, top_level ? 1 : 2);
    if (!problem.empty()) return Fail(problem);
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
    return Fail(QuoteWordsOfCli11Message(e.what()));
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
