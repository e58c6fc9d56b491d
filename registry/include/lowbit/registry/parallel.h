// All cores for one registry call: one process-wide
// pool of worker threads, started once, and the rules that split a registry
// row's call into chunks whose results are bit for bit those of one call on
// one thread.
//
// Element rows (registry.h ConvertArgs) split at any element: every element's
// result depends on that element alone (and on its own random word for
// stochastic rounding, which moves with it). Recipe rows (recipe_entry.h)
// split only between whole groups: whole rows of a per-row, per-group or 2-D
// tile layout, whole blocks of a flattened 1-D block layout (any shape), never
// inside a scale block; a recipe with a tensor scale is never split to quantize (the
// tensor scale reads the whole tensor), nor is a per-tensor layout.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

// How long a worker waiting for a job, and a caller waiting for its workers,
// poll before they block on a condition variable: LOWBIT_POOL_SPIN_US when
// it is an integer in [0, 100000], else 100 us. A blocked thread took about
// 20 us to wake on the project's 2-vCPU KVM machine (bench/RESULTS-archive-2026.md, "the
// pool in cache"), as long as a whole in-cache call; polling first lets
// back-to-back calls hand work over without that wake-up, at the price of
// up to this long of one core's time after each call.
std::chrono::microseconds SpinMicroseconds();

class ThreadPool {
 public:
  // `threads` in all, the calling thread included (at least 1): threads - 1
  // workers are started here and wait for work until the pool is destroyed.
  // `spin`: how long waiting threads poll before they block (SpinMicroseconds).
  explicit ThreadPool(int threads, std::chrono::microseconds spin = SpinMicroseconds());
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process's pool: DefaultThreadCount() threads, started on first use.
  static ThreadPool& Shared();

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) for every i in [0, tasks), on at most `max_threads` threads
  // (0: all of the pool's) with the caller as one of them, and returns when
  // all have finished. Tasks must not throw. One job runs at a time: a call
  // made while the pool is busy (another caller, or a task calling again)
  // runs its tasks on the calling thread, in order, so nesting never waits
  // on itself.
  void ParallelFor(std::size_t tasks, const std::function<void(std::size_t)>& task,
                   int max_threads = 0);

 private:
  void WorkerLoop();
  void RunTasks();

  std::vector<std::thread> workers_;
  std::mutex job_owner_;  // held by the caller whose job is running
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  // The current job. Written under mutex_; generation_, finished_, working_
  // and stop_ are also read without it, by the short spin that precedes each
  // blocking wait (SpinMicroseconds).
  const std::function<void(std::size_t)>* task_ = nullptr;
  std::size_t tasks_ = 0;
  std::size_t next_ = 0;
  std::atomic<std::size_t> finished_{0};
  int seats_ = 0;                 // workers that may still join the job
  std::atomic<int> working_{0};   // workers inside the job
  std::atomic<unsigned long> generation_{0};
  std::atomic<bool> stop_{false};
  std::chrono::microseconds spin_;
};

// LOWBIT_THREADS when it is a positive integer, else the hardware's thread
// count (std::thread::hardware_concurrency, at least 1).
int DefaultThreadCount();

// The smallest chunk worth a thread of its own, in elements: below it the
// hand-over costs more than the work (a pool wake-up is microseconds, a
// SIMD kernel converts thousands of elements per microsecond).
inline constexpr std::size_t kMinElementsPerChunk = std::size_t{1} << 15;

// entry.run(args) split over `threads` threads of `pool` (0: all of them).
// Arguments that the row refuses, or does not support, run unsplit, so that
// errors are exactly the row's own.
Status RunParallel(const KernelEntry& entry, const ConvertArgs& args, int threads = 0,
                   ThreadPool& pool = ThreadPool::Shared());
Status RunParallel(const RecipeEntry& entry, const RecipeArgs& args, int threads = 0,
                   ThreadPool& pool = ThreadPool::Shared());

// The chunks a recipe call splits into, as the flat index of each chunk's
// first element (ascending, the first 0): whole groups as the header comment
// says, at most `chunks` of them; {0} when the call cannot be split. A 1-D
// block layout splits the flattened tensor between blocks (a chunk runs as
// the shape [1, n]); other layouts split between whole rows of groups.
// Exposed for the tests.
std::vector<std::size_t> RecipeChunkStarts(const RecipeArgs& args, std::size_t chunks);

}  // namespace lowbit::registry
