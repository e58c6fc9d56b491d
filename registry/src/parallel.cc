#include "lowbit/registry/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "lowbit/formats/recipe/tensor.h"

namespace lowbit::registry {

namespace {
// Set on the pool's worker threads: a task that calls ParallelFor again runs
// its tasks inline instead of waiting for the workers it occupies.
thread_local bool tls_in_pool_task = false;

// One iteration of a polling loop: tells the core it is spinning (x86
// PAUSE, Arm YIELD), which saves power and frees a sibling hyperthread.
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` until it holds or `spin` has passed; returns whether it held.
template <typename Ready>
bool SpinUntil(std::chrono::microseconds spin, Ready ready) {
  if (spin.count() <= 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + spin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    // The clock is read every 64 polls (a vDSO call costs tens of ns).
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return ready();
    SpinPause();
  }
}
}  // namespace

std::chrono::microseconds SpinMicroseconds() {
  if (const char* env = std::getenv("LOWBIT_POOL_SPIN_US")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 0 && n <= 100000) return std::chrono::microseconds(n);
  }
  return std::chrono::microseconds(100);
}

ThreadPool::ThreadPool(int threads, std::chrono::microseconds spin) : spin_(spin) {
  for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& w : workers_) w.join();
}

ThreadPool& ThreadPool::Shared() {
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other objects they could touch are already gone.
  static ThreadPool* const kPool = new ThreadPool(DefaultThreadCount());
  return *kPool;
}

int DefaultThreadCount() {
  if (const char* env = std::getenv("LOWBIT_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 1024) return static_cast<int>(n);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// Claims and runs tasks of the current job until none is left. Called with
// mutex_ unlocked.
void ThreadPool::RunTasks() {
  for (;;) {
    std::size_t i;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= tasks_) return;
      i = next_++;
    }
    (*task_)(i);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (++finished_ == tasks_) done_.notify_all();
    }
  }
}

void ThreadPool::WorkerLoop() {
  tls_in_pool_task = true;
  unsigned long seen = 0;
  for (;;) {
    // Poll for the next job before sleeping (SpinMicroseconds); the wait
    // below then finds it at once.
    SpinUntil(spin_, [&] { return stop_.load() || generation_.load() != seen; });
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && seats_ > 0); });
      if (stop_) return;
      seen = generation_;
      --seats_;
      ++working_;
    }
    RunTasks();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--working_ == 0) done_.notify_all();
    }
  }
}

void ThreadPool::ParallelFor(std::size_t tasks, const std::function<void(std::size_t)>& task,
                             int max_threads) {
  const int limit = max_threads <= 0 ? threads() : std::min(max_threads, threads());
  const bool serial = tasks <= 1 || limit <= 1 || tls_in_pool_task;
  std::unique_lock<std::mutex> owner(job_owner_, std::defer_lock);
  if (serial || !owner.try_lock()) {
    for (std::size_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    tasks_ = tasks;
    next_ = 0;
    finished_ = 0;
    seats_ = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(limit - 1), tasks - 1));
    ++generation_;
  }
  wake_.notify_all();
  tls_in_pool_task = true;  // a task the caller runs that calls again runs inline
  RunTasks();
  tls_in_pool_task = false;
  // Poll for the workers to finish before sleeping (SpinMicroseconds).
  SpinUntil(spin_, [&] { return finished_.load() == tasks_ && working_.load() == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  // Every task finished, and no worker still holds `task` (it is the caller's).
  done_.wait(lock, [&] { return finished_ == tasks_ && working_ == 0; });
  seats_ = 0;
  task_ = nullptr;
}

namespace {

// Elements in [begin, end) of `chunks` near-equal chunks, each a multiple of
// 64 elements (whole SIMD vectors) except the last.
std::vector<std::size_t> ElementChunkStarts(std::size_t count, std::size_t chunks) {
  chunks = std::max<std::size_t>(1, std::min(chunks, count / kMinElementsPerChunk));
  std::size_t per = (count + chunks - 1) / chunks;
  per = (per + 63) / 64 * 64;
  std::vector<std::size_t> starts;
  for (std::size_t s = 0; s < count; s += per) starts.push_back(s);
  if (starts.empty()) starts.push_back(0);
  return starts;
}

Status FirstError(const std::vector<Status>& results) {
  for (const Status& s : results) {
    if (!s.ok) return s;
  }
  return Status::Ok();
}

}  // namespace

Status RunParallel(const KernelEntry& entry, const ConvertArgs& args, int threads,
                   ThreadPool& pool) {
  const int limit = threads <= 0 ? pool.threads() : std::min(threads, pool.threads());
  if (limit <= 1 || args.count < 2 * kMinElementsPerChunk) return entry.run(args);
  // What the row refuses or does not implement is its own answer, unsplit.
  if (!ValidateConvertArgs(args).ok || (entry.supports && !entry.supports(args))) {
    return entry.run(args);
  }
  const std::size_t in_bytes = InputBytes(args.operation, args.format);
  const std::size_t out_bytes = OutputBytes(args.operation, args.format);
  const std::vector<std::size_t> starts =
      ElementChunkStarts(args.count, static_cast<std::size_t>(limit));
  std::vector<Status> results(starts.size());
  pool.ParallelFor(
      starts.size(),
      [&](std::size_t k) {
        const std::size_t begin = starts[k];
        const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : args.count;
        ConvertArgs chunk = args;
        chunk.input = static_cast<const char*>(args.input) + begin * in_bytes;
        chunk.output = static_cast<char*>(args.output) + begin * out_bytes;
        chunk.count = end - begin;
        if (args.random_bits != nullptr) chunk.random_bits = args.random_bits + begin;
        results[k] = entry.run(chunk);
      },
      limit);
  return FirstError(results);
}

std::vector<std::size_t> RecipeChunkStarts(const RecipeArgs& args, std::size_t chunks) {
  const std::vector<std::size_t> one{0};
  if (chunks <= 1 || args.rows == 0 || args.cols == 0 ||
      args.target.kind != recipe::Target::Kind::kRecipe || args.target.recipe == nullptr) {
    return one;
  }
  const recipe::Recipe& r = *args.target.recipe;
  const recipe::Layout& layout = args.target.layout;
  recipe::GroupGrid grid;
  if (recipe::MakeGroupGrid(r, layout, static_cast<long>(args.rows), static_cast<long>(args.cols),
                            &grid) != recipe::TensorStatus::kOk) {
    return one;
  }
  // A per-tensor group, or a tensor scale computed from the whole input.
  if (layout.geometry == recipe::Geometry::kPerTensor) return one;
  if (args.operation == RecipeOperation::kQuantizeRecipe &&
      r.tensor_scale != recipe::TensorScaleRule::kNone) {
    return one;
  }
  // Only packings whose bytes follow element order (a chunk is a contiguous
  // run of bytes); a layout that reorders codes is not split.
  const bool nibbles = r.packing == recipe::Packing::kNibblesLowFirst ||
                       r.packing == recipe::Packing::kNibblesHighFirst;
  if (!nibbles && r.packing != recipe::Packing::kOnePerByte) return one;
  // The element step between chunk starts: whole blocks of the flattened
  // tensor (1-D blocks), or whole rows of groups (tiles); an even element
  // count for two codes per byte.
  const std::size_t count = args.rows * args.cols;
  std::size_t step = grid.flat ? static_cast<std::size_t>(grid.group_cols)
                               : static_cast<std::size_t>(grid.group_rows) * args.cols;
  if (nibbles && step % 2 != 0) step *= 2;
  const std::size_t min_steps = std::max<std::size_t>(1, (kMinElementsPerChunk + step - 1) / step);
  const std::size_t total_steps = count / step;  // the last chunk also takes the rest
  chunks = std::min(chunks, total_steps / min_steps);
  if (chunks <= 1) return one;
  const std::size_t per = (total_steps + chunks - 1) / chunks * step;
  std::vector<std::size_t> starts;
  for (std::size_t s = 0; s < count && starts.size() < chunks; s += per) starts.push_back(s);
  return starts;
}

Status RunParallel(const RecipeEntry& entry, const RecipeArgs& args, int threads,
                   ThreadPool& pool) {
  const int limit = threads <= 0 ? pool.threads() : std::min(threads, pool.threads());
  // Given (static) scales are indexed by group over the whole tensor: a
  // chunk would need its own slice of them, so such a call runs whole.
  if (limit <= 1 || args.given_scale != nullptr || !ValidateRecipeArgs(args).ok) return entry.run(args);
  const std::vector<std::size_t> starts =
      RecipeChunkStarts(args, static_cast<std::size_t>(limit));
  if (starts.size() <= 1) return entry.run(args);
  const recipe::Recipe& r = *args.target.recipe;
  const std::size_t count = args.rows * args.cols;
  const bool flat = args.target.layout.geometry == recipe::Geometry::kBlock1d;
  // A chunk's shape: 1-D blocks see the flattened tensor, so a run of whole
  // blocks is the row [1, n]; other layouts take whole rows.
  auto shape_of = [&](std::size_t elements) {
    return flat ? std::pair<long, long>{1, static_cast<long>(elements)}
                : std::pair<long, long>{static_cast<long>(elements / args.cols),
                                        static_cast<long>(args.cols)};
  };
  // The buffers of the elements before a chunk come first in each buffer
  // (groups are numbered row-major, codes packed in element order): their
  // sizes are the chunk's offsets.
  auto offsets = [&](std::size_t first) {
    recipe::BufferSizes b;
    if (first == 0) return b;
    recipe::GroupGrid g;
    const auto [rows, cols] = shape_of(first);
    recipe::MakeGroupGrid(r, args.target.layout, rows, cols, &g);
    return recipe::SizesOf(r, g);
  };
  std::vector<Status> results(starts.size());
  pool.ParallelFor(
      starts.size(),
      [&](std::size_t k) {
        const std::size_t begin = starts[k];
        const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : count;
        const recipe::BufferSizes at = offsets(begin);
        RecipeArgs chunk = args;
        const auto [rows, cols] = shape_of(end - begin);
        chunk.rows = static_cast<std::size_t>(rows);
        chunk.cols = static_cast<std::size_t>(cols);
        if (args.x != nullptr) chunk.x = args.x + begin;
        if (args.out != nullptr) chunk.out = args.out + begin;
        if (args.out_f16 != nullptr) chunk.out_f16 = args.out_f16 + begin;
        if (args.q.codes != nullptr) chunk.q.codes = args.q.codes + at.code_bytes;
        if (args.q.scale_codes != nullptr) chunk.q.scale_codes = args.q.scale_codes + at.scale_codes;
        if (args.q.scales != nullptr) chunk.q.scales = args.q.scales + at.scales;
        if (args.q.zero_points != nullptr) chunk.q.zero_points = args.q.zero_points + at.zero_points;
        results[k] = entry.run(chunk);
      },
      limit);
  return FirstError(results);
}

}  // namespace lowbit::registry
