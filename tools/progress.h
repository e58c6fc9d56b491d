// Progress of a long run on stderr: a counter rewritten in place on a
// terminal, a plain line every few seconds otherwise (logs, CI).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace lowbit::tools {

class Progress {
 public:
  explicit Progress(bool enabled);
  // Starts a phase of `total` work units.
  void Begin(const std::string& phase, std::uint64_t total);
  // Marks units done; prints when it is time to.
  void Advance(std::uint64_t units = 1);
  // Ends the phase (clears the terminal line).
  void End();

 private:
  void Print(bool final_line);

  bool enabled_;
  bool terminal_;
  std::string phase_;
  std::uint64_t total_ = 0;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
};

}  // namespace lowbit::tools
