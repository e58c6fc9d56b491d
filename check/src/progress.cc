// StderrProgress (progress.h): the CLI's view of a long check.
#include "lowbit/check/progress.h"

#include <unistd.h>

#include <cstdio>

namespace lowbit::check {
namespace {

using Clock = std::chrono::steady_clock;

// A terminal is redrawn often; a log gets a line at most this often.
constexpr auto kTerminalPeriod = std::chrono::milliseconds(200);
constexpr auto kLogPeriod = std::chrono::seconds(10);

}  // namespace

StderrProgress::StderrProgress(bool enabled)
    : enabled_(enabled), terminal_(isatty(STDERR_FILENO) != 0) {}

void StderrProgress::Begin(const std::string& phase, std::uint64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  total_ = total;
  done_ = 0;
  start_ = last_print_ = Clock::now();
  if (enabled_ && !terminal_) {
    std::fprintf(stderr, "verify: %s (%llu units)\n", phase.c_str(),
                 static_cast<unsigned long long>(total));
  }
}

void StderrProgress::Advance(std::uint64_t units) {
  done_ += units;
  if (!enabled_) return;
  const auto now = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  if (now - last_print_ < (terminal_ ? kTerminalPeriod : kLogPeriod)) return;
  last_print_ = now;
  Print(false);
}

void StderrProgress::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K");
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  std::fprintf(stderr, "verify: %s done in %.1f s\n", phase_.c_str(), seconds);
}

void StderrProgress::Print(bool final_line) {
  const std::uint64_t done = done_;
  const double percent =
      total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  std::fprintf(stderr, "%sverify: %s %5.1f%% (%llu/%llu) %.0f s%s", terminal_ ? "\r\033[K" : "",
               phase_.c_str(), percent, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total_), seconds,
               terminal_ && !final_line ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace lowbit::check
