// Runs the built `lowbit` binary for the proptests/cli/*_test.cc tests and
// captures its exit code, stdout and stderr. proptests/CMakeLists.txt gives
// those tests LOWBIT_CLI_PATH and a build dependency on the binary.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace lowbit::testing {

struct CliResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  int signal = 0;      // the signal that ended it, if one did
  std::string out;
  std::string err;
  // The first whitespace-separated word of stdout.
  std::string FirstToken() const {
    std::istringstream in(out);
    std::string token;
    in >> token;
    return token;
  }
};

inline bool CliBuilt() {
#if defined(LOWBIT_CLI_PATH)
  return true;
#else
  return false;
#endif
}

inline std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// How RunCliWith runs the process, beyond the arguments.
struct CliRunOptions {
  // Where stdout goes instead of a captured temporary file (e.g. /dev/full);
  // `out` is then empty.
  std::string stdout_path;
  // RLIMIT_AS of the child in bytes (0: unlimited), to make allocations fail.
  std::uint64_t address_space_limit = 0;
  // Seconds before the child is ended by SIGALRM (exit_code -1): a hang is a
  // failure, not a stuck test.
  unsigned timeout_seconds = 120;
};

// Runs `lowbit args...` with stdout and stderr in temporary files.
inline CliResult RunCliWith(const std::vector<std::string>& args, const CliRunOptions& options) {
  CliResult result;
#if defined(LOWBIT_CLI_PATH)
  char out_path[] = "/tmp/lowbit_cli_out_XXXXXX";
  char err_path[] = "/tmp/lowbit_cli_err_XXXXXX";
  const int out_fd = mkstemp(out_path);
  const int err_fd = mkstemp(err_path);
  if (out_fd < 0 || err_fd < 0) return result;
  std::vector<std::string> argv_storage = {LOWBIT_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    int stdout_fd = out_fd;
    if (!options.stdout_path.empty()) stdout_fd = open(options.stdout_path.c_str(), O_WRONLY);
    if (stdout_fd < 0) _exit(126);
    dup2(stdout_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (options.address_space_limit != 0) {
      const rlimit limit{options.address_space_limit, options.address_space_limit};
      setrlimit(RLIMIT_AS, &limit);
    }
    alarm(options.timeout_seconds);  // survives execv: SIGALRM ends a hung child
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(out_fd);
  close(err_fd);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  result.out = ReadWhole(out_path);
  result.err = ReadWhole(err_path);
  unlink(out_path);
  unlink(err_path);
#else
  (void)args;
  (void)options;
#endif
  return result;
}

inline CliResult RunCli(const std::vector<std::string>& args) { return RunCliWith(args, CliRunOptions{}); }

}  // namespace lowbit::testing
