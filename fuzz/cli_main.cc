// tools/main.cc compiled as the function LowbitCliMain, so that
// cli_args_fuzzer.cc drives the real command line in-process. The headers
// main.cc includes come first, so the rename touches main.cc's own `main`
// only.
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"

#define main LowbitCliMain
#include "main.cc"  // NOLINT(bugprone-suspicious-include)
#undef main
