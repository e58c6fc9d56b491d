// `lowbit`: bit-exact ML number formats on the command line. Each subcommand
// lives in its own file (commands.h says how to add one).
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

namespace {

// CLI11 reads "-inf" and "-nan" as short options (only "-<digit>" passes as
// a negative number). A leading space keeps them positional; the value
// parser skips it.
std::vector<std::string> ProtectNegativeSpecials(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string lower = args[i];
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "-inf" || lower == "-infinity" || lower == "-nan") args[i] = " " + args[i];
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  using lowbit::tools::kUsageExitCode;
  CLI::App app{"lowbit: bit-exact models of ML number formats"};
  app.require_subcommand(1);
  lowbit::tools::AddShowCommand(app);
  lowbit::tools::AddTableCommand(app);
  lowbit::tools::AddEncodeCommand(app);
  lowbit::tools::AddDecodeCommand(app);
  lowbit::tools::AddVerifyCommand(app);
  lowbit::tools::AddQuantizeCommand(app);
  lowbit::tools::AddExplainCommand(app);
  lowbit::tools::AddListCommand(app);
  std::vector<std::string> args = ProtectNegativeSpecials(argc, argv);
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known |= sub->get_name() == args[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "lowbit: error: unknown command '%s' (known: %s)\n", args[1].c_str(),
                   names.c_str());
      return kUsageExitCode;
    }
  }
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  try {
    app.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "lowbit: error: %s\n", e.what());
    return kUsageExitCode;
  } catch (const lowbit::tools::CommandError& e) {
    std::fprintf(stderr, "lowbit: error: %s\n", e.what());
    return kUsageExitCode;
  } catch (const lowbit::tools::CommandExit& e) {
    return e.code;
  }
  return 0;
}
