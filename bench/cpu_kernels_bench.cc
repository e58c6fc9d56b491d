// Elements per second of every CPU kernel in the registry (scalar model and
// each Highway target), in cache and out of cache, beside a plain memory copy
// of the same input bytes. The benchmarks are generated from the registry
// table: a kernel is benchmarked by being registered (docs/design.md
// "Everything that computes is a registry entry").
//
// Names: <operation>/<format>/<backend>/<in_cache|out_of_cache>, and
// copy/<bytes per element>B/<in_cache|out_of_cache>.
// LOWBIT_BENCH_ALL=1 also runs the out-of-cache size for every kernel (by
// default only for the goal kernels, to keep a run short).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/block/packing.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/check/backends.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/parallel.h"
#include "lowbit/registry/registry.h"
#if defined(LOWBIT_HAVE_SIMD)
#include "lowbit/simd/simd.h"
#endif

namespace lowbit {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;

// 4096 FP32 inputs (16 KiB) plus their codes fit the 32 KiB L1 data cache of
// one core; 64 Mi elements (256 MiB of FP32) exceed the 32 MiB L3.
constexpr std::size_t kInCache = 4096;
constexpr std::size_t kOutOfCache = std::size_t{64} << 20;

// Bytes per element of each array: the registry's operation table.
FormatId IdOf(const FormatSpec& spec) {
  FormatId id{};
  FindFormat(spec.name, &id);
  return id;
}
std::size_t InputBytes(Operation op, const FormatSpec& spec) {
  return registry::InputBytes(op, IdOf(spec));
}
std::size_t OutputBytes(Operation op, const FormatSpec& spec) {
  return registry::OutputBytes(op, IdOf(spec));
}

// The benchmarks' one random source: a linear congruential generator
// (Numerical Recipes' constants), uniform values in [0, 1) from its top 24
// bits, and near-N(0, 1) values by Irwin-Hall (the sum of 12 uniforms minus 6).
class InputRandom {
 public:
  float Uniform() {
    state_ = state_ * 1664525u + 1013904223u;
    return static_cast<float>(state_ >> 8) * (1.0f / 16777216.0f);
  }
  float Gaussian() {
    float g = -6.0f;
    for (int k = 0; k < 12; ++k) g += Uniform();
    return g;
  }

 private:
  std::uint32_t state_ = 12345;
};

// Encode inputs as quantization feeds them: Gaussian values scaled so that
// about 4 sigma reach the destination's largest finite value (what a
// per-tensor or per-block scale does before the cast). Decode inputs: every
// code, uniformly.
void FillInputs(Operation op, const FormatSpec& spec, std::vector<std::uint8_t>& bytes,
                std::size_t count) {
  InputRandom random;
  const float max_finite =
      spec.IsFloat() ? DecodeToF32(spec, spec.MaxFiniteCode()) : static_cast<float>(spec.IntMax());
  const float sigma = max_finite / 4;
  for (std::size_t i = 0; i < count; ++i) {
    const float x = random.Gaussian() * sigma;
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    switch (op) {
      case Operation::kEncodeF32:
        std::memcpy(bytes.data() + 4 * i, &bits, 4);
        break;
      case Operation::kEncodeBf16:
      case Operation::kEncodeF16: {
        // The input's own format: BF16 truncation / FP16 model conversion.
        const std::uint16_t h =
            op == Operation::kEncodeBf16
                ? static_cast<std::uint16_t>(bits >> 16)
                : static_cast<std::uint16_t>(EncodeF32Bits(kFp16, bits).code);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        break;
      }
      default: {
        const std::uint64_t code =
            static_cast<std::uint64_t>(random.Uniform() * 16777216.0f) & spec.CodeMask();
        std::memcpy(bytes.data() + InputBytes(op, spec) * i, &code, InputBytes(op, spec));
        break;
      }
    }
  }
}

// Quantizer inputs: FP32 activations or weights, N(0, 1) (InputRandom). A
// scale chosen per tensor or per block makes the kernels' work independent
// of the magnitude, except where it reaches Inf:
// FillInputs' BF16-scaled values (sigma = max / 4) overflow FP32 beyond 4
// sigma, which made NVFP4's tensor amax Inf and sent every block of its
// benchmark down the NaN / Inf path.
void FillActivations(std::vector<std::uint8_t>& bytes, std::size_t count) {
  InputRandom random;
  for (std::size_t i = 0; i < count; ++i) {
    const float g = random.Gaussian();
    std::memcpy(bytes.data() + 4 * i, &g, 4);
  }
}

void RunKernel(benchmark::State& state, const KernelEntry* entry, std::size_t count) {
  const FormatSpec& spec = Spec(entry->format);
  std::vector<std::uint8_t> input(count * InputBytes(entry->operation, spec));
  std::vector<std::uint8_t> output(count * OutputBytes(entry->operation, spec));
  FillInputs(entry->operation, spec, input, count);
  ConvertArgs args{};
  args.operation = entry->operation;
  args.format = entry->format;
  args.input = input.data();
  args.output = output.data();
  args.count = count;
  if (!entry->available()) {
    state.SkipWithError("backend not available on this machine");
    return;
  }
  for (auto _ : state) {
    const registry::Status status = entry->run(args);
    if (!status.ok) {
      state.SkipWithError(status.message.c_str());
      break;
    }
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * count *
                                                    (InputBytes(entry->operation, spec) +
                                                     OutputBytes(entry->operation, spec))));
}

// memcpy of `count` elements of `element_bytes` (the conversion's input bytes).
void RunCopy(benchmark::State& state, std::size_t element_bytes, std::size_t count) {
  std::vector<std::uint8_t> input(count * element_bytes, 1), output(count * element_bytes);
  for (auto _ : state) {
    std::memcpy(output.data(), input.data(), input.size());
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * input.size()));
}

// The "x copy" baseline: a memcpy that moves `moved_bytes` bytes per
// element in all, read plus written, i.e. copies moved_bytes / 2 per element.
// A kernel that reads I and writes O bytes per element is compared with
// copy-rw/<I + O>B, the copy of the same number of bytes.
void RunCopyReadWrite(benchmark::State& state, std::size_t moved_bytes, std::size_t count) {
  const std::size_t size = count * moved_bytes / 2;
  std::vector<std::uint8_t> input(size, 1), output(size);
  for (auto _ : state) {
    std::memcpy(output.data(), input.data(), input.size());
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * input.size()));
}

// The bytes a quantize or dequantize of one tensor moves: FP32 values one
// way, the recipe's buffers (recipe::SizesOf: codes in its packing, scale
// codes, FP32 scales, zero points) the other. A recipe with a tensor scale
// reads its input twice (the tensor amax first); that second read is not
// counted here.
std::size_t TensorBytes(const recipe::Recipe& r, const recipe::Layout& layout, std::size_t rows, std::size_t cols) {
  recipe::GroupGrid grid;
  if (recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &grid) !=
      recipe::TensorStatus::kOk) {
    return 0;
  }
  const recipe::BufferSizes b = recipe::SizesOf(r, grid);
  return rows * cols * 4 + static_cast<std::size_t>(b.code_bytes + b.scale_codes) +
         static_cast<std::size_t>(b.scales + b.zero_points) * 4;
}

// The buffers of one recipe benchmark: Gaussian FP32 input
// (FillActivations) and the recipe's storage for its grid on the shape.
struct RecipeBenchBuffers {
  std::vector<std::uint8_t> input;
  std::unique_ptr<registry::RecipeStorage> storage;
  const float* x() const { return reinterpret_cast<const float*>(input.data()); }
};

// False (and the benchmark skipped) when the layout does not tile the shape.
bool MakeRecipeBenchBuffers(benchmark::State& state, const recipe::Recipe& r, recipe::Layout layout,
                            std::size_t rows, std::size_t cols, RecipeBenchBuffers* b) {
  recipe::GroupGrid grid;
  if (recipe::MakeGroupGrid(r, layout, static_cast<long>(rows), static_cast<long>(cols), &grid) !=
      recipe::TensorStatus::kOk) {
    state.SkipWithError("the layout does not tile the shape");
    return false;
  }
  b->storage = std::make_unique<registry::RecipeStorage>(recipe::SizesOf(r, grid));
  b->input.resize(rows * cols * 4);
  FillActivations(b->input, rows * cols);
  return true;
}

// Quantization of a [rows, cols] tensor of Gaussian FP32 values
// (FillActivations) with one recipe and layout: the model
// (recipe::QuantizeTensor) when target < 0, else simd::Quantize on that
// target.
void RunRecipeQuantize(benchmark::State& state, const recipe::Recipe* r, recipe::Layout layout,
                       std::int64_t target, std::size_t rows, std::size_t cols) {
  const std::size_t count = rows * cols;
  RecipeBenchBuffers b;
  if (!MakeRecipeBenchBuffers(state, *r, layout, rows, cols, &b)) return;
  const recipe::QuantizedTensor q = b.storage->View();
  const float* x = b.x();
  for (auto _ : state) {
    if (target < 0) {
      recipe::QuantizeTensor(*r, layout, x, static_cast<long>(rows), static_cast<long>(cols), q);
    } else {
#if defined(LOWBIT_HAVE_SIMD)
      const registry::Status status = simd::Quantize(target, *r, layout, x, rows, cols, q);
      if (!status.ok) {
        state.SkipWithError(status.message.c_str());
        break;
      }
#endif
    }
    benchmark::DoNotOptimize(q.codes);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * TensorBytes(*r, layout, rows, cols)));
}

// The inverse on the SIMD kernels: the recipe's buffers -> FP32.
void RunRecipeDequantize(benchmark::State& state, const recipe::Recipe* r, recipe::Layout layout,
                         std::int64_t target, std::size_t rows, std::size_t cols) {
  const std::size_t count = rows * cols;
  RecipeBenchBuffers b;
  if (!MakeRecipeBenchBuffers(state, *r, layout, rows, cols, &b)) return;
  const recipe::QuantizedTensor q = b.storage->View();
  std::vector<float> out(count);
  recipe::QuantizeTensor(*r, layout, b.x(), static_cast<long>(rows), static_cast<long>(cols), q);
  for (auto _ : state) {
#if defined(LOWBIT_HAVE_SIMD)
    const registry::Status status = simd::Dequantize(target, *r, layout, recipe::AsConst(q), rows, cols, out.data());
    if (!status.ok) {
      state.SkipWithError(status.message.c_str());
      break;
    }
#endif
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * TensorBytes(*r, layout, rows, cols)));
}

// The "x copy" baseline of one recipe: a memcpy moving, read plus written,
// exactly the bytes its quantize rows count (TensorBytes; with both_reads
// also x's second read, 4 bytes an element), items the tensor's elements.
// The rows' items per second over this row's are then also their bytes per
// second over the copy's. The nearest copy-rw/<B>B, 5 bytes an element,
// moves more than an INT4-g128 or NVFP4 quantize counts (4.53 to 4.56), at
// the same bytes per second (measured on the 2-core VM of bench/RESULTS.md
// "CPU": copy-rw/5B 7.96 G el/s, these copies 8.69-8.82, both about 40 GB/s),
// so a ratio of items per second against copy-rw/5B read 9-10% above the
// ratio on bytes that bench/compare_cpu.py forms.
void RunRecipeCopy(benchmark::State& state, const recipe::Recipe* r, recipe::Layout layout, bool both_reads,
                   std::size_t rows, std::size_t cols) {
  const std::size_t count = rows * cols;
  const std::size_t moved = TensorBytes(*r, layout, rows, cols) + (both_reads ? count * 4 : 0);
  if (moved == 0) {
    state.SkipWithError("the layout does not tile the shape");
    return;
  }
  RunCopyReadWrite(state, moved, 1);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
}

// One recipe's quantize benchmarks: the model in cache, each SIMD target in
// and out of cache (and the dequantize where asked), and out of cache the
// copy of the same bytes (RunRecipeCopy; NVFP4's also with x read twice).
// `name` is the benchmark's recipe part ("mxfp4-ocp", "int4-g128-ao-sym").
void RegisterRecipeBenchmarks(const std::string& name, const recipe::Recipe* r, recipe::Layout layout,
                              std::size_t cols, bool dequantize) {
  const std::string base = "quantize/" + name + "/";
  benchmark::RegisterBenchmark((base + "copy-rw/out_of_cache").c_str(), RunRecipeCopy, r, layout, false,
                               kOutOfCache / cols, cols)
      ->MinTime(0.3)
      ->UseRealTime();
  recipe::GroupGrid grid;
  if (recipe::MakeGroupGrid(*r, layout, static_cast<long>(kOutOfCache / cols), static_cast<long>(cols), &grid) ==
          recipe::TensorStatus::kOk &&
      recipe::SizesOf(*r, grid).tensor_scales != 0) {
    benchmark::RegisterBenchmark((base + "copy-rw-both-reads/out_of_cache").c_str(), RunRecipeCopy, r, layout, true,
                                 kOutOfCache / cols, cols)
        ->MinTime(0.3)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark((base + "scalar/in_cache").c_str(), RunRecipeQuantize, r, layout, std::int64_t{-1},
                               kInCache / cols, cols)
      ->MinTime(0.05);
#if defined(LOWBIT_HAVE_SIMD)
  for (std::int64_t target : simd::CompiledTargets()) {
    if (!simd::TargetAvailable(target)) continue;
    const std::string simd_name = std::string("simd:") + simd::TargetName(target);
    benchmark::RegisterBenchmark((base + simd_name + "/in_cache").c_str(), RunRecipeQuantize, r, layout, target,
                                 kInCache / cols, cols)
        ->MinTime(0.05);
    benchmark::RegisterBenchmark((base + simd_name + "/out_of_cache").c_str(), RunRecipeQuantize, r, layout, target,
                                 kOutOfCache / cols, cols)
        ->MinTime(0.3)
        ->UseRealTime();
    if (!dequantize) continue;
    const std::string de = "dequantize/" + name + "/" + simd_name;
    benchmark::RegisterBenchmark((de + "/in_cache").c_str(), RunRecipeDequantize, r, layout, target,
                                 kInCache / cols, cols)
        ->MinTime(0.05);
    benchmark::RegisterBenchmark((de + "/out_of_cache").c_str(), RunRecipeDequantize, r, layout, target,
                                 kOutOfCache / cols, cols)
        ->MinTime(0.3)
        ->UseRealTime();
  }
#endif
}

void RegisterBlockBenchmarks() {
  // INT4 / UINT4 per group of 128 along K of a [count / 4096, 4096] matrix,
  // packed two codes per byte, low nibble first.
  constexpr std::size_t kInt4Cols = 4096;
  const recipe::Layout g128{recipe::Geometry::kGroup, 128, 0};
  for (const auto& [element, profile] : {std::pair{"int4", "ao-sym"}, {"uint4", "gptq-asym"}, {"int4", "common"}}) {
    const recipe::Recipe* r = recipe::FindRecipe(element, profile);
    RegisterRecipeBenchmarks(std::string(element) + "-g128-" + profile, r, g128, kInt4Cols,
                             /*dequantize=*/std::string(profile) == "ao-sym");
  }
  // NVFP4 (the tensor amax pass included) and MX over the flattened tensor.
  for (const auto& [profile, name] : {std::pair{"te", "te"}, {"ao", "ao"}}) {
    const recipe::Recipe* r = recipe::FindRecipe("nvfp4", profile);
    RegisterRecipeBenchmarks(std::string("nvfp4-") + name, r, r->layout, kInCache, false);
  }
  for (const char* format : {"mxfp4", "mxfp8_e4m3"}) {
    for (const char* profile : {"ocp", "te"}) {
      const recipe::Recipe* r = recipe::FindRecipe(format, profile);
      RegisterRecipeBenchmarks(std::string(format) + "-" + profile, r, r->layout, kInCache, false);
    }
  }
}

// All cores: the same registry row on one thread and split by
// registry::RunParallel over the shared pool, at a size that fits each core's
// L2 once split (256 Ki elements: 1 MiB of FP32 plus the codes, half per core
// on two cores) and out of cache.
constexpr std::size_t kParallelInCache = std::size_t{256} << 10;

bool IsGoalKernel(const KernelEntry& e);  // below

void RunKernelThreads(benchmark::State& state, const KernelEntry* entry, bool pool,
                      std::size_t count) {
  const FormatSpec& spec = Spec(entry->format);
  std::vector<std::uint8_t> input(count * InputBytes(entry->operation, spec));
  std::vector<std::uint8_t> output(count * OutputBytes(entry->operation, spec));
  FillInputs(entry->operation, spec, input, count);
  ConvertArgs args{};
  args.operation = entry->operation;
  args.format = entry->format;
  args.input = input.data();
  args.output = output.data();
  args.count = count;
  for (auto _ : state) {
    const registry::Status status = pool ? registry::RunParallel(*entry, args) : entry->run(args);
    if (!status.ok) {
      state.SkipWithError(status.message.c_str());
      break;
    }
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  state.counters["threads_in_pool"] = registry::ThreadPool::Shared().threads();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * count *
                                                    (InputBytes(entry->operation, spec) +
                                                     OutputBytes(entry->operation, spec))));
}

// A recipe row ([count / 4096, 4096] FP32): quantize, or dequantize of codes
// the same row made first.
void RunRecipeThreads(benchmark::State& state, const registry::RecipeEntry* entry,
                      const registry::RecipeEntry* quantizer, bool pool, std::size_t count) {
  constexpr std::size_t kCols = 4096;
  recipe::Target target;
  registry::ParseRecipe(entry->recipe, &target);
  const registry::RecipeBuffers sizes = registry::RecipeBufferSizes(target, count / kCols, kCols);
  if (!sizes.ok) {
    state.SkipWithError(sizes.error.c_str());
    return;
  }
  std::vector<std::uint8_t> input(count * 4);
  FillActivations(input, count);
  std::vector<float> out(count);
  registry::RecipeStorage storage(sizes.sizes);
  registry::RecipeArgs args;
  args.operation = registry::RecipeOperation::kQuantizeRecipe;
  args.target = target;
  args.rows = count / kCols;
  args.cols = kCols;
  args.x = reinterpret_cast<const float*>(input.data());
  args.q = storage.View();
  if (entry->operation == registry::RecipeOperation::kDequantizeRecipe) {
    quantizer->run(args);
    args.operation = entry->operation;
    args.x = nullptr;
    args.out = out.data();
  }
  for (auto _ : state) {
    const registry::Status status = pool ? registry::RunParallel(*entry, args) : entry->run(args);
    if (!status.ok) {
      state.SkipWithError(status.message.c_str());
      break;
    }
    benchmark::DoNotOptimize(storage.codes.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const std::size_t quantized = storage.codes.size() + storage.scale_codes.size() +
                                4 * (storage.scales.size() + storage.zero_points.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (count * 4 + quantized)));
}

void RegisterParallelBenchmarks(const registry::Registry& table) {
  // The rows the registry chooses for host buffers (registry/choose.h), the
  // rows the Python package and the CLI run; the scalar model (preference 0)
  // is measured by the other benchmarks.
  auto add = [](const std::string& base, auto&& run) {
    for (bool pool : {false, true}) {
      const std::string name = base + (pool ? "/pool" : "/one_thread");
      benchmark::RegisterBenchmark((name + "/in_cache").c_str(), run, pool, kParallelInCache)
          ->MinTime(0.1)
          ->UseRealTime();
      benchmark::RegisterBenchmark((name + "/out_of_cache").c_str(), run, pool, kOutOfCache)
          ->MinTime(0.3)
          ->UseRealTime();
    }
  };
  for (const KernelEntry& e : table.Entries()) {
    if (!IsGoalKernel(e)) continue;
    registry::ConvertArgs call;
    call.operation = e.operation;
    call.format = e.format;
    if (e.preference == 0 || registry::ChooseConvertRow(table, call, registry::Memory::kHost) != &e) continue;
    const KernelEntry* entry = &e;
    add(std::string("parallel/") + registry::OperationName(e.operation) + "/" +
            Spec(e.format).name + "/" + e.backend,
        [entry](benchmark::State& state, bool pool, std::size_t count) {
          RunKernelThreads(state, entry, pool, count);
        });
  }
  for (const char* recipe_name : {"mxfp4:ocp", "mxfp8_e4m3:ocp", "int4:ao-sym/g128"}) {
    registry::RecipeArgs call;
    if (!registry::ParseRecipe(recipe_name, &call.target)) continue;
    call.operation = registry::RecipeOperation::kQuantizeRecipe;
    const registry::RecipeEntry* quantizer = registry::ChooseRecipeRow(table, call, registry::Memory::kHost);
    if (quantizer == nullptr || quantizer->preference == 0) continue;
    for (registry::RecipeOperation op : registry::kAllRecipeOperations) {
      call.operation = op;
      const registry::RecipeEntry* entry = registry::ChooseRecipeRow(table, call, registry::Memory::kHost);
      if (entry == nullptr || entry->preference == 0) continue;
      add(std::string("parallel/") + registry::RecipeOperationName(op) + "/" + recipe_name + "/" +
              entry->backend,
          [entry, quantizer](benchmark::State& state, bool pool, std::size_t count) {
            RunRecipeThreads(state, entry, quantizer, pool, count);
          });
    }
  }
}

// The kernels the issue sets goals for (FP32 <-> E4M3/E5M2/E2M1/BF16/FP16).
bool IsGoalKernel(const KernelEntry& e) {
  const bool goal_format = e.format == FormatId::kE4m3 || e.format == FormatId::kE5m2 ||
                           e.format == FormatId::kE2m1 || e.format == FormatId::kBf16 ||
                           e.format == FormatId::kFp16;
  return goal_format &&
         (e.operation == Operation::kEncodeF32 || e.operation == Operation::kDecodeToF32);
}

void RegisterAll() {
  static registry::Registry table;  // outlives the benchmarks
  check::RegisterAllBackends(table);
  const bool all_out_of_cache = std::getenv("LOWBIT_BENCH_ALL") != nullptr;
  for (const KernelEntry& e : table.Entries()) {
    if (e.backend != "scalar" && e.backend.rfind("simd:", 0) != 0) continue;  // CPU only
    const std::string name = std::string(registry::OperationName(e.operation)) + "/" +
                             Spec(e.format).name + "/" + e.backend;
    benchmark::RegisterBenchmark((name + "/in_cache").c_str(), RunKernel, &e, kInCache)
        ->MinTime(0.05);
    // The scalar model out of cache would take minutes per kernel; its
    // in-cache rate is the baseline the ratios use.
    if (e.backend != "scalar" && (all_out_of_cache || IsGoalKernel(e))) {
      benchmark::RegisterBenchmark((name + "/out_of_cache").c_str(), RunKernel, &e, kOutOfCache)
          ->MinTime(0.3)
          ->UseRealTime();
    }
  }
  RegisterBlockBenchmarks();
  RegisterParallelBenchmarks(table);
  for (std::size_t bytes : {1, 2, 4}) {
    const std::string name = "copy/" + std::to_string(bytes) + "B";
    benchmark::RegisterBenchmark((name + "/in_cache").c_str(), RunCopy, bytes, kInCache)
        ->MinTime(0.05);
    benchmark::RegisterBenchmark((name + "/out_of_cache").c_str(), RunCopy, bytes, kOutOfCache)
        ->MinTime(0.3)
        ->UseRealTime();
  }
  // Read + write bytes per element of the kernels above: 2 (1 -> 1) to 8 (4 -> 4).
  for (std::size_t moved : {2, 3, 4, 5, 6, 8}) {
    const std::string name = "copy-rw/" + std::to_string(moved) + "B";
    benchmark::RegisterBenchmark((name + "/in_cache").c_str(), RunCopyReadWrite, moved, kInCache)
        ->MinTime(0.05);
    benchmark::RegisterBenchmark((name + "/out_of_cache").c_str(), RunCopyReadWrite, moved,
                                 kOutOfCache)
        ->MinTime(0.3)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace lowbit

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lowbit::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
