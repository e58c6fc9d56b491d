// Progress of a long check. The checks call a Progress they are given and
// print nothing themselves; StderrProgress is the CLI's view (a counter
// rewritten in place on a terminal, a plain line every few seconds in a log),
// and the Python package or a test can pass its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace lowbit::check {

class Progress {
 public:
  virtual ~Progress() = default;
  // A phase of `total` work units starts ("kernels vs model").
  virtual void Begin(const std::string& phase, std::uint64_t total) = 0;
  // `units` more are done. Called from worker threads: must be thread-safe.
  virtual void Advance(std::uint64_t units) = 0;
  // The phase ended.
  virtual void End() = 0;
};

class StderrProgress : public Progress {
 public:
  // `enabled` false prints nothing (the CLI's --quiet).
  explicit StderrProgress(bool enabled);
  void Begin(const std::string& phase, std::uint64_t total) override;
  void Advance(std::uint64_t units) override;
  void End() override;

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

}  // namespace lowbit::check
