// Threads and determinism (docs/bad-input.md "Threads"; docs/design.md
// "Thread safety"): several threads run different registry rows at once
// (element conversions of every format with several option sets, every
// recipe row, every packing row, on the scalar and every SIMD backend), each
// result equal bit for bit to the scalar model's result computed first on
// one thread, for 1, 2, 4 and 8 threads and on repeated runs; meanwhile one
// thread keeps adding rows to Registry::Global() while the others look rows
// up in it. Built with -fsanitize=thread this is the ThreadSanitizer check
// of the shared state (the registry's tables, the SIMD tables built on first
// use, the target dispatch).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "all_backends.h"
#include "lowbit/check/backends.h"
#include "lowbit/registry/registry.h"
#include "test_level.h"

namespace lowbit::registry {
namespace {

using testing::CurrentTestLevel;
using testing::TestLevel;

using ::lowbit::testing::AllBackends;

// One call and the bytes it must produce (the scalar row's, computed first
// on one thread). Run() returns the bytes this call produced.
struct Job {
  std::string name;
  std::function<std::vector<unsigned char>()> run;
  std::vector<unsigned char> expected;
};

std::vector<unsigned char> Bytes(const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  return {b, b + n};
}

// Element conversions: inputs of `count` random elements (codes masked to
// the format's width for decodes), three option sets per encode.
void AddConvertJobs(const Registry& registry, std::size_t count, std::vector<Job>* jobs) {
  std::mt19937_64 rng(16);
  std::vector<EncodeOptions> option_sets(3);
  option_sets[1].rounding = RoundingMode::kTowardZero;
  option_sets[1].overflow = Overflow::kSaturate;
  option_sets[2].rounding = RoundingMode::kStochastic;
  option_sets[2].random_bit_count = 8;
  auto random_bits = std::make_shared<std::vector<std::uint32_t>>(count);
  for (auto& r : *random_bits) r = static_cast<std::uint32_t>(rng());
  for (const KernelEntry& entry : registry.Entries()) {
    if (!entry.available()) continue;
    const KernelEntry* scalar = registry.Find(entry.operation, entry.format, "scalar");
    if (scalar == nullptr) continue;
    const std::size_t in_bytes = InputBytes(entry.operation, entry.format);
    const std::size_t out_bytes = OutputBytes(entry.operation, entry.format);
    auto input = std::make_shared<std::vector<unsigned char>>(count * in_bytes);
    for (auto& b : *input) b = static_cast<unsigned char>(rng());
    if (!IsEncode(entry.operation)) {  // codes with the bits above total_bits clear
      const std::uint64_t mask = Spec(entry.format).CodeMask();
      for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t code = 0;
        std::memcpy(&code, input->data() + i * in_bytes, in_bytes);
        code &= mask;
        std::memcpy(input->data() + i * in_bytes, &code, in_bytes);
      }
    }
    const std::size_t sets = IsEncode(entry.operation) ? option_sets.size() : 1;
    for (std::size_t o = 0; o < sets; ++o) {
      ConvertArgs args{};
      args.operation = entry.operation;
      args.format = entry.format;
      args.count = count;
      args.encode = option_sets[o];
      args.random_bits = random_bits->data();
      if (!entry.supports(args)) continue;
      auto call = [args, input, random_bits, out_bytes, count](const KernelEntry* row) {
        std::vector<unsigned char> out(count * out_bytes, 0xA5);
        ConvertArgs a = args;
        a.input = input->data();
        a.output = out.data();
        const Status s = row->run(a);
        if (!s.ok) return Bytes(s.message.data(), s.message.size());
        return out;
      };
      Job job;
      job.name = std::string(OperationName(entry.operation)) + " " + Spec(entry.format).name + " " +
                 entry.backend + " options " + std::to_string(o);
      job.expected = call(scalar);
      job.run = [call, row = &entry] { return call(row); };
      jobs->push_back(std::move(job));
    }
  }
}

// Every recipe row on a small tensor: quantize from random values,
// dequantize from the scalar quantize's buffers.
void AddRecipeJobs(const Registry& registry, std::vector<Job>* jobs) {
  std::mt19937 rng(32);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (const RecipeEntry& entry : registry.RecipeEntries()) {
    if (!entry.available()) continue;
    const RecipeEntry* scalar_quantize = registry.FindRecipe(RecipeOperation::kQuantizeRecipe, entry.recipe, "scalar");
    const RecipeEntry* scalar = registry.FindRecipe(entry.operation, entry.recipe, "scalar");
    if (scalar == nullptr || scalar_quantize == nullptr) continue;
    recipe::Target target;
    ASSERT_TRUE(ParseRecipe(entry.recipe, &target)) << entry.recipe;
    const std::size_t rows = 4, cols = 256;
    const RecipeBuffers sizes = RecipeBufferSizes(target, rows, cols);
    ASSERT_TRUE(sizes.ok) << entry.recipe << ": " << sizes.error;
    auto x = std::make_shared<std::vector<float>>(rows * cols);
    for (float& v : *x) v = normal(rng);
    auto quantized = std::make_shared<RecipeStorage>(sizes.sizes);
    RecipeArgs q{RecipeOperation::kQuantizeRecipe, target, rows, cols, x->data(), quantized->View(), nullptr};
    ASSERT_TRUE(scalar_quantize->run(q).ok) << entry.recipe;
    const bool quantize = entry.operation == RecipeOperation::kQuantizeRecipe;
    auto call = [=](const RecipeEntry* row) {
      RecipeStorage storage(sizes.sizes);
      std::vector<float> out(rows * cols, -1.0f);
      RecipeArgs a{entry.operation, target, rows, cols, x->data(),
                   quantize ? storage.View() : quantized->View(), out.data()};
      const Status s = row->run(a);
      if (!s.ok) return Bytes(s.message.data(), s.message.size());
      if (!quantize) return Bytes(out.data(), out.size() * sizeof(float));
      std::vector<unsigned char> all = storage.codes;
      for (const auto& part : {Bytes(storage.scale_codes.data(), storage.scale_codes.size()),
                               Bytes(storage.scales.data(), storage.scales.size() * sizeof(float)),
                               Bytes(storage.zero_points.data(), storage.zero_points.size() * 4),
                               Bytes(storage.tensor_scale.data(),
                                     storage.tensor_scale.size() * sizeof(recipe::TensorScale))}) {
        all.insert(all.end(), part.begin(), part.end());
      }
      return all;
    };
    Job job;
    job.name = std::string(RecipeOperationName(entry.operation)) + " " + entry.recipe + " " + entry.backend;
    job.expected = call(scalar);
    job.run = [call, row = &entry] { return call(row); };
    jobs->push_back(std::move(job));
  }
}

void AddPackingJobs(const Registry& registry, std::vector<Job>* jobs) {
  std::mt19937 rng(64);
  for (const PackingEntry& entry : registry.PackingEntries()) {
    if (!entry.available()) continue;
    const PackingEntry* scalar = registry.FindPacking(entry.layout, entry.direction, "scalar");
    if (scalar == nullptr) continue;
    const std::size_t rows = 16, cols = 128;  // a shape every layout takes (tinygemm k8: K % 128)
    const PackingSizes sizes = PackingBufferSizes(entry.layout, rows, cols);
    ASSERT_TRUE(sizes.ok) << sizes.error;
    auto codes = std::make_shared<std::vector<std::uint8_t>>(sizes.codes);
    for (auto& c : *codes) c = static_cast<std::uint8_t>(rng() & 0xF);
    auto words = std::make_shared<std::vector<std::uint32_t>>(sizes.packed_units);
    for (auto& w : *words) w = rng();
    const bool byte_unit = FindPackingLayoutInfo(entry.layout)->unit == PackedUnit::kByte;
    auto call = [=](const PackingEntry* row) {
      PackingArgs a;
      a.layout = entry.layout;
      a.direction = entry.direction;
      a.rows = rows;
      a.cols = cols;
      std::vector<std::uint32_t> packed(sizes.packed_units, 0xA5A5A5A5u);
      std::vector<std::uint8_t> unpacked(sizes.codes, 0xA5);
      a.codes = codes->data();
      a.packed_bytes = byte_unit ? reinterpret_cast<std::uint8_t*>(packed.data()) : nullptr;
      a.packed_words = byte_unit ? nullptr : packed.data();
      a.in_bytes = reinterpret_cast<const std::uint8_t*>(words->data());
      a.in_words = words->data();
      a.codes_out = unpacked.data();
      const Status s = row->run(a);
      if (!s.ok) return Bytes(s.message.data(), s.message.size());
      if (entry.direction == PackDirection::kPack) return Bytes(packed.data(), packed.size() * 4);
      return Bytes(unpacked.data(), unpacked.size());
    };
    Job job;
    job.name = std::string(PackingLayoutName(entry.layout)) + " " + PackDirectionName(entry.direction) + " " +
               entry.backend;
    job.expected = call(scalar);
    job.run = [call, row = &entry] { return call(row); };
    jobs->push_back(std::move(job));
  }
}

std::vector<Job> AllJobs(std::size_t count) {
  std::vector<Job> jobs;
  AddConvertJobs(AllBackends(), count, &jobs);
  AddRecipeJobs(AllBackends(), &jobs);
  AddPackingJobs(AllBackends(), &jobs);
  return jobs;
}

TEST(ThreadsDeterminism, JobsCoverEveryBackendKind) {
  const std::vector<Job> jobs = AllJobs(64);
  std::size_t simd = 0, recipes = 0, packing = 0;
  for (const Job& j : jobs) {
    simd += j.name.find("simd:") != std::string::npos;
    recipes += j.name.find("quantize-recipe") != std::string::npos;
    packing += j.name.find(" pack ") != std::string::npos || j.name.find(" unpack ") != std::string::npos;
  }
  EXPECT_GT(recipes, 10u);
  EXPECT_GT(packing, 5u);
  // lowbit::backends registers SIMD rows when lowbit::simd is built; the
  // list of built libraries says whether it was.
  bool simd_built = false;
  for (const std::string& lib : check::BuiltBackendLibraries()) simd_built |= lib.find("simd") != std::string::npos;
  if (simd_built) EXPECT_GT(simd, 100u);
}

// Each of `threads` threads runs every job `rounds` times, starting at a
// different job so that different formats, options and recipes run at the
// same moment; every result must equal the one-thread scalar result.
void RunConcurrently(const std::vector<Job>& jobs, int threads, int rounds) {
  std::atomic<int> mismatches{0};
  std::vector<std::string> first(threads);
  std::atomic<bool> stop{false};
  // Registry::Global() under concurrent Add and Find (registry.h "Thread
  // safety"): one writer, every worker a reader.
  std::thread writer([&stop] {
    for (int i = 0; !stop.load(); ++i) {
      KernelEntry e{Operation::kEncodeF32, FormatId::kE4m3, "robustness-writer-" + std::to_string(i % 8),
                    [](const ConvertArgs&) { return true; }, [] { return false; },
                    [](const ConvertArgs&) { return Status::Ok(); }};
      Registry::Global().Add(std::move(e));
      (void)Registry::Global().Entries().size();
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::size_t n = jobs.size();
      const std::size_t start = n * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
      for (int round = 0; round < rounds; ++round) {
        for (std::size_t k = 0; k < n; ++k) {
          const Job& job = jobs[(start + k) % n];
          if (job.run() != job.expected) {
            if (mismatches.fetch_add(1) == 0) first[t] = job.name;
          }
          if (k % 64 == 0) {
            const KernelEntry* found = Registry::Global().Find(Operation::kEncodeF32, FormatId::kE4m3,
                                                               "robustness-writer-0");
            if (found != nullptr && found->backend != "robustness-writer-0") mismatches.fetch_add(1);
          }
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  stop = true;
  writer.join();
  std::string names;
  for (const std::string& f : first) names += f.empty() ? "" : f + "; ";
  EXPECT_EQ(mismatches.load(), 0) << threads << " threads, first mismatch in: " << names;
}

TEST(ThreadsDeterminism, SameBitsOnOneToEightThreads) {
  const bool smoke = CurrentTestLevel() == TestLevel::kSmoke;
  const std::vector<Job> jobs = AllJobs(smoke ? 64 : 1024);
  ASSERT_FALSE(jobs.empty());
  for (int threads : {1, 2, 4, 8}) RunConcurrently(jobs, threads, smoke ? 1 : 2);
}

TEST(ThreadsDeterminism, SameBitsOnRepeatedRuns) {
  const std::vector<Job> jobs = AllJobs(256);
  for (const Job& job : jobs) {
    const std::vector<unsigned char> a = job.run();
    ASSERT_EQ(a, job.expected) << job.name;
    ASSERT_EQ(job.run(), a) << job.name;
  }
}

}  // namespace
}  // namespace lowbit::registry
