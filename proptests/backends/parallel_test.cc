// The thread pool and the split registry calls (registry/parallel.h): every
// task runs once, nesting and concurrent callers finish, and a call split
// over threads gives the bytes of the same call on one thread, for every CPU
// row (element rows and recipe rows), errors included.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "generators_at_level.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/convert.h"
#include "lowbit/registry/parallel.h"
#include "lowbit/registry/registry.h"

namespace lowbit {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;
using registry::RecipeArgs;
using registry::RecipeEntry;
using registry::RecipeOperation;
using registry::ThreadPool;
using testing::CurrentTestLevel;
using testing::TestLevel;

bool IsCpuBackend(const std::string& backend) {
  return backend == "scalar" || backend.rfind("simd:", 0) == 0;
}

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

TEST(ThreadPool, RunsEveryTaskOnce) {
  ThreadPool pool(4);
  for (std::size_t tasks : {0u, 1u, 2u, 3u, 17u, 1000u}) {
    for (int max_threads : {0, 1, 2, 4, 9}) {
      std::vector<std::atomic<int>> runs(tasks);
      pool.ParallelFor(tasks, [&](std::size_t i) { runs[i].fetch_add(1); }, max_threads);
      for (std::size_t i = 0; i < tasks; ++i) ASSERT_EQ(runs[i].load(), 1) << tasks << " " << i;
    }
  }
}

TEST(ThreadPool, NestedAndConcurrentCallsFinish) {
  ThreadPool pool(3);
  // A task calling the pool again runs that call inline (no self-wait).
  std::atomic<int> inner{0};
  pool.ParallelFor(6, [&](std::size_t) {
    pool.ParallelFor(5, [&](std::size_t) { inner.fetch_add(1); });
  });
  EXPECT_EQ(inner.load(), 30);
  // Callers on several threads at once: one owns the pool, the others run
  // their tasks themselves; every task still runs once.
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        pool.ParallelFor(7, [&](std::size_t) { total.fetch_add(1); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 7);
}

TEST(ThreadPool, DefaultThreadCountIsPositive) { EXPECT_GE(registry::DefaultThreadCount(), 1); }

// Sets LOWBIT_POOL_SPIN_US for one scope and puts the old value back.
class SpinEnvironment {
 public:
  explicit SpinEnvironment(const char* value) {
    if (const char* old = std::getenv("LOWBIT_POOL_SPIN_US")) old_ = old, had_ = true;
    if (value) setenv("LOWBIT_POOL_SPIN_US", value, 1);
    else unsetenv("LOWBIT_POOL_SPIN_US");
  }
  ~SpinEnvironment() {
    if (had_) setenv("LOWBIT_POOL_SPIN_US", old_.c_str(), 1);
    else unsetenv("LOWBIT_POOL_SPIN_US");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(ThreadPool, PollingTimeComesFromTheEnvironment) {
  const std::pair<const char*, long> cases[] = {{nullptr, 100}, {"0", 0},       {"250", 250},  {"100000", 100000},
                                                {"100001", 100}, {"-1", 100},   {"12us", 100}, {"", 100}};
  for (const auto& [value, want] : cases) {
    SpinEnvironment env(value);
    EXPECT_EQ(registry::SpinMicroseconds().count(), want) << (value ? value : "(unset)");
  }
}

// Polling before blocking (SpinMicroseconds) changes only when threads wake:
// with it off, short, and long, every task of back-to-back and concurrent
// jobs runs once.
TEST(ThreadPool, EveryTaskRunsOnceWhetherWorkersPollOrBlock) {
  for (long spin : {0L, 1L, 100L, 5000L}) {
    ThreadPool pool(3, std::chrono::microseconds(spin));
    for (int round = 0; round < 200; ++round) {
      const std::size_t tasks = 1 + static_cast<std::size_t>(round % 9);
      std::vector<std::atomic<int>> runs(tasks);
      pool.ParallelFor(tasks, [&](std::size_t i) { runs[i].fetch_add(1); });
      for (std::size_t i = 0; i < tasks; ++i) ASSERT_EQ(runs[i].load(), 1) << spin << " " << round << " " << i;
    }
    std::atomic<int> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c) {
      callers.emplace_back([&] {
        for (int round = 0; round < 50; ++round) pool.ParallelFor(5, [&](std::size_t) { total.fetch_add(1); });
      });
    }
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(total.load(), 3 * 50 * 5) << spin;
  }
}

// Element rows: a count that splits into several chunks with a short tail.
TEST(RunParallel, ElementRowsEqualOneThread) {
  static registry::Registry table;
  check::RegisterAllBackends(table);
  ThreadPool pool(4);
  const std::size_t count = 3 * registry::kMinElementsPerChunk + 777;
  const bool smoke = CurrentTestLevel() == TestLevel::kSmoke;
  int compared = 0;
  for (const KernelEntry& e : table.Entries()) {
    if (!IsCpuBackend(e.backend) || !e.available()) continue;
    if (smoke && e.backend == "scalar") continue;
    const std::size_t in_bytes = registry::InputBytes(e.operation, e.format);
    const std::size_t out_bytes = registry::OutputBytes(e.operation, e.format);
    const bool decode =
        e.operation == Operation::kDecodeToF32 || e.operation == Operation::kDecodeToBf16;
    std::vector<std::uint8_t> input(count * in_bytes);
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t x = Mix(i * 131 + static_cast<std::uint64_t>(e.format));
      if (decode) x &= Spec(e.format).CodeMask();
      std::memcpy(input.data() + i * in_bytes, &x, in_bytes);  // little-endian low bytes
    }
    std::vector<std::uint32_t> random(count);
    for (std::size_t i = 0; i < count; ++i) random[i] = static_cast<std::uint32_t>(Mix(~i));
    for (RoundingMode mode : {RoundingMode::kNearestEven, RoundingMode::kStochastic}) {
      if (decode && mode == RoundingMode::kStochastic) continue;
      ConvertArgs args{};
      args.operation = e.operation;
      args.format = e.format;
      args.input = input.data();
      args.count = count;
      args.encode.rounding = mode;
      if (mode == RoundingMode::kStochastic) {
        args.encode.random_bit_count = 13;
        args.random_bits = random.data();
      }
      if (e.supports && !e.supports(args)) continue;
      std::vector<std::uint8_t> one(count * out_bytes, 0xCD), split(count * out_bytes, 0xCD);
      args.output = one.data();
      const registry::Status s1 = e.run(args);
      args.output = split.data();
      const registry::Status s2 = registry::RunParallel(e, args, 4, pool);
      ASSERT_EQ(s1.ok, s2.ok) << e.backend << " " << Spec(e.format).name;
      ASSERT_EQ(s1.message, s2.message);
      ASSERT_TRUE(one == split) << registry::OperationName(e.operation) << " "
                                << Spec(e.format).name << " on " << e.backend;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
}

// Recipe rows: shapes whose groups split into chunks (and one that every
// grouped layout refuses, whose error must be the row's own).
TEST(RunParallel, RecipeRowsEqualOneThread) {
  static registry::Registry table;
  check::RegisterAllBackends(table);
  ThreadPool pool(4);
  const bool smoke = CurrentTestLevel() == TestLevel::kSmoke;
  struct Shape {
    std::size_t rows, cols;
  };
  // Each just above two chunks of registry::kMinElementsPerChunk: rows of
  // 128-groups, rows of 32- and 16-blocks, and a width that every grouped
  // layout refuses (flattened 1-D blocks still split).
  const Shape shapes[] = {{264, 256}, {700, 96}, {270, 250}};
  int compared = 0, split_calls = 0;
  for (const RecipeEntry& e : table.RecipeEntries()) {
    if (!IsCpuBackend(e.backend) || !e.available()) continue;
    if (smoke && e.backend == "scalar") continue;
    const registry::RecipeEntry* quantizer =
        table.FindRecipe(RecipeOperation::kQuantizeRecipe, e.recipe, "scalar");
    ASSERT_NE(quantizer, nullptr) << e.recipe;
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(e.recipe, &target)) << e.recipe;
    for (const Shape& shape : shapes) {
      // The scalar rows (the model) are slow: one shape below the full level.
      if (e.backend == "scalar" && &shape != &shapes[0] &&
          CurrentTestLevel() != TestLevel::kFull) {
        continue;
      }
      const registry::RecipeBuffers sizes =
          registry::RecipeBufferSizes(target, shape.rows, shape.cols);
      const std::size_t n = shape.rows * shape.cols;
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = Mix(i + 7 * shape.cols);
        x[i] = (static_cast<float>(r % 20001) - 10000.0f) * 1e-3f *
               static_cast<float>(1 + (r >> 40) % 7);
      }
      x[5] = 0.0f;
      if (!sizes.ok) continue;
      registry::RecipeStorage q_one(sizes.sizes), q_split(sizes.sizes), q_in(sizes.sizes);
      RecipeArgs args;
      args.operation = e.operation;
      args.target = target;
      args.rows = shape.rows;
      args.cols = shape.cols;
      std::vector<float> out_one(n, -1.0f), out_split(n, -1.0f);
      registry::Status s1, s2;
      if (e.operation == RecipeOperation::kQuantizeRecipe) {
        args.x = x.data();
        args.q = q_one.View();
        s1 = e.run(args);
        args.q = q_split.View();
        s2 = registry::RunParallel(e, args, 4, pool);
      } else {
        RecipeArgs make = args;
        make.operation = RecipeOperation::kQuantizeRecipe;
        make.x = x.data();
        make.q = q_in.View();
        ASSERT_TRUE(quantizer->run(make).ok) << e.recipe;
        args.q = q_in.View();
        args.out = out_one.data();
        s1 = e.run(args);
        args.out = out_split.data();
        s2 = registry::RunParallel(e, args, 4, pool);
      }
      ASSERT_EQ(s1.ok, s2.ok) << e.recipe << " " << e.backend;
      ASSERT_EQ(s1.message, s2.message) << e.recipe << " " << e.backend;
      const std::string what = std::string(registry::RecipeOperationName(e.operation)) + " " +
                               e.recipe + " on " + e.backend + " [" + std::to_string(shape.rows) +
                               ", " + std::to_string(shape.cols) + "]";
      EXPECT_TRUE(q_one.codes == q_split.codes) << what;
      EXPECT_TRUE(q_one.scale_codes == q_split.scale_codes) << what;
      EXPECT_TRUE(q_one.scales.empty() ||
                  0 == std::memcmp(q_one.scales.data(), q_split.scales.data(), q_one.scales.size() * sizeof(float)))
          << what;
      EXPECT_TRUE(q_one.zero_points == q_split.zero_points) << what;
      EXPECT_TRUE(q_one.tensor_scale.empty() ||
                  0 == std::memcmp(q_one.tensor_scale.data(), q_split.tensor_scale.data(),
                                   q_one.tensor_scale.size() * sizeof(recipe::TensorScale)))
          << what;
      EXPECT_EQ(0, std::memcmp(out_one.data(), out_split.data(), n * sizeof(float))) << what;
      ++compared;
      if (registry::RecipeChunkStarts(args, 4).size() > 1) ++split_calls;
    }
  }
  EXPECT_GT(compared, 0);
  EXPECT_GT(split_calls, 0) << "no recipe call was split: the test would prove nothing";
}

// Chunk starts: whole groups, never inside a scale block, none for a
// per-tensor layout or a quantize that needs the tensor's own amax.
TEST(RunParallel, RecipeChunksHoldWholeGroups) {
  for (const std::string& name : registry::AllRecipeNames()) {
    recipe::Target target;
    ASSERT_TRUE(registry::ParseRecipe(name, &target)) << name;
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{4096, 256},
                                     {4099, 250}, {1, 1 << 20}}) {
      RecipeArgs args;
      args.target = target;
      args.rows = rows;
      args.cols = cols;
      const std::vector<std::size_t> starts = registry::RecipeChunkStarts(args, 8);
      ASSERT_FALSE(starts.empty());
      EXPECT_EQ(starts[0], 0u);
      recipe::GroupGrid grid;
      if (recipe::MakeGroupGrid(*target.recipe, target.layout, static_cast<long>(rows),
                                static_cast<long>(cols), &grid) != recipe::TensorStatus::kOk) {
        EXPECT_EQ(starts.size(), 1u) << name;
        continue;
      }
      if (target.layout.geometry == recipe::Geometry::kPerTensor ||
          target.recipe->tensor_scale != recipe::TensorScaleRule::kNone) {
        EXPECT_EQ(starts.size(), 1u) << name;
      }
      for (std::size_t first : starts) {
        if (grid.flat) {
          EXPECT_EQ(first % static_cast<std::size_t>(grid.group_cols), 0u) << name << " " << first;
        } else {
          EXPECT_EQ(first % (cols * static_cast<std::size_t>(grid.group_rows)), 0u)
              << name << " " << first;
        }
        if (target.recipe->packing != recipe::Packing::kOnePerByte) {
          EXPECT_EQ(first % 2, 0u) << name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lowbit
