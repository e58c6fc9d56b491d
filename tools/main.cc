// `lowbit`: bit-exact ML number formats on the command line. Each subcommand
// lives in its own file (commands.h says how to add one).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"

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
  try {
    app.parse(argc, argv);
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
