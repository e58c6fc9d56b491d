// Fuzzes the `lowbit` command line as a user types it: the input is split at
// newlines into arguments and run through tools/main.cc in-process
// (cli_main.cc), every subcommand and option reachable. Properties: no crash,
// no sanitizer report, no uncaught exception (it would abort, exit 134), and
// the exit status is 0, 1 or 2 (README "The lowbit tool"). Left out, as
// they test other things: `verify` (runs the whole harness: minutes per
// input), `check`, `--file` and `--scale-file` (they read the file system:
// a mutated path could name a terminal that blocks; their readers get tests
// of their own, proptests/cli). Seeds and the dictionary (fuzz_cli_args.dict)
// hold the words that found bugs: empty values, escape sequences and odd
// bytes in names, unknown short options, malformed group sizes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int LowbitCliMain(int argc, char** argv);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"lowbit"};
  std::string current;
  for (std::size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (args.size() > 24) return 0;
  // The CLI sees each argument as a C string, so a NUL ends it: "verify\0xyz"
  // reaches CLI11 as `verify`. Cut at the NUL before filtering, or the filter
  // below misses it (a CI run timed out on exactly that input, kept in the
  // corpus as fuzz/corpus/fuzz_cli_args/verify-after-nul).
  for (std::string& a : args) a.resize(std::char_traits<char>::length(a.c_str()));
  for (const std::string& a : args) {
    if (a == "verify" || a == "check" || a.find("-file") != std::string::npos) return 0;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = LowbitCliMain(static_cast<int>(args.size()), argv.data());
  if (status < 0 || status > 2) {
    std::fprintf(stderr, "cli_args_fuzzer: exit status %d\n", status);
    __builtin_trap();
  }
  return 0;
}
