// The thread pool's hand-over cost (registry/parallel.h), apart from any
// kernel: ParallelFor of two tasks that each busy-wait 25 us, about the
// length of an in-cache registry call split in two, with the pool's polling
// before blocking off (spin 0) and at its default (100 us). Two tasks
// on two threads take 25 us plus the hand-over; the counters say when the
// second task started (after the call began) and how often the caller ran it
// itself because no worker had woken yet. bench/RESULTS-archive-2026.md, "the pool in cache".
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "lowbit/registry/parallel.h"

namespace {

using Clock = std::chrono::steady_clock;

void BusyWait(std::chrono::microseconds d) {
  const auto end = Clock::now() + d;
  while (Clock::now() < end) {
  }
}

void PoolHandover(benchmark::State& state, long spin_us) {
  lowbit::registry::ThreadPool pool(2, std::chrono::microseconds(spin_us));
  const auto caller = std::this_thread::get_id();
  std::vector<double> second_start_us;
  double caller_ran_second = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    double start_us = 0;
    bool by_caller = false;
    pool.ParallelFor(2, [&](std::size_t k) {
      if (k == 1) {
        start_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        by_caller = std::this_thread::get_id() == caller;
      }
      BusyWait(std::chrono::microseconds(25));
    });
    second_start_us.push_back(start_us);
    caller_ran_second += by_caller ? 1 : 0;
  }
  std::sort(second_start_us.begin(), second_start_us.end());
  state.counters["second_task_start_us_median"] = second_start_us[second_start_us.size() / 2];
  state.counters["caller_ran_both"] = caller_ran_second / static_cast<double>(second_start_us.size());
}

BENCHMARK_CAPTURE(PoolHandover, polling_off, 0L)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(PoolHandover, polling_100us, 100L)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
