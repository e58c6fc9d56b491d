// The tensor-core model from Python: one instruction's outputs on operand
// codes (matmul/tensor_core.h TensorCoreDot, TensorCoreMma), a whole
// y = x * W^T through an accumulation schedule (matmul/tensor_core_matrix.h
// ModelMatmul on the host, lowbit::cuda's ModelMatmulOnDevice for CUDA
// arrays), and one output explained step by step (FusedDotStep's
// FusedDotTrace). python/lowbit/tensor_core.py maps arrays and dtypes onto
// these functions; every code arrives here as one uint32 per element, and
// this file checks what the model relies on (instruction names, sizes, code
// widths, the schedule) before anything runs.
#include "tensor_core_bindings.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "lowbit/formats/format_list.h"
#include "lowbit/formats/matmul/accumulation_schedule.h"
#include "lowbit/formats/matmul/tensor_core.h"
#include "lowbit/formats/matmul/tensor_core_matrix.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/tensor_core.h"
#if defined(LOWBIT_PY_HAVE_CUDA)
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/tensor_core.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace lowbit::python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig>;
using OutArray = nb::ndarray<nb::c_contig>;

[[noreturn]] void Fail(const std::string& message) { throw nb::value_error(message.c_str()); }

// wgmma's N: every multiple of 8 from 8 to 256 (PTX ISA 9.0 §9.7.15,
// wgmma.mma_async's .shape list, .m64n8k* to .m64n256k*); the spec table
// holds the smallest one.
constexpr int kWgmmaMaxColumns = 256;
constexpr int kWgmmaColumnStep = 8;

// A user's word in a message, quoted as Python's repr would show its
// printable ASCII (anything else as \xNN), so that a message is one line.
std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (const unsigned char ch : text) {
    if (ch == '\\' || ch == '\'') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch >= 0x20 && ch < 0x7F) {
      out += static_cast<char>(ch);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    }
  }
  return out + "'";
}

std::string Hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

TensorCoreId InstructionOrThrow(const std::string& name) {
  TensorCoreId id{};
  if (FindTensorCoreInstruction(name, &id)) return id;
  std::vector<std::string> names;
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) names.emplace_back(inst.name);
  std::string message = "unknown tensor-core instruction " + Quoted(name);
  const std::string guess = recipe::DidYouMean(name, names);
  if (!guess.empty()) message += "; did you mean '" + guess + "'?";
  Fail(message + " (lowbit.tensor_core_instructions() lists them)");
}

template <typename A>
bool OnCudaArray(const A& a) {
  return a.device_type() == nb::device::cuda::value;
}

// `what` holds `count` uint32 codes, each no wider than `format`.
const std::uint32_t* CodesOrThrow(const char* what, const InArray& a, std::size_t count, const FormatSpec& format,
                                  bool check_values = true) {
  if (a.itemsize() != 4) Fail(std::string(what) + ": codes arrive as uint32 (one per element)");
  if (a.size() != count) {
    Fail(std::string(what) + " holds " + std::to_string(a.size()) + " codes, " + std::to_string(count) +
         " expected");
  }
  const auto* codes = static_cast<const std::uint32_t*>(a.data());
  if (check_values) {
    const std::uint64_t mask = format.CodeMask();
    for (std::size_t i = 0; i < count; ++i) {
      if ((codes[i] & ~mask) != 0) {
        Fail(std::string(what) + " element " + std::to_string(i) + " is code " + Hex(codes[i]) + ", wider than " +
             format.name + "'s " + std::to_string(format.total_bits) + " bits");
      }
    }
  }
  return codes;
}

std::uint32_t* OutOrThrow(OutArray& out, std::size_t count) {
  if (out.itemsize() != 4 || out.size() != count) {
    Fail("out must hold " + std::to_string(count) + " uint32 codes");
  }
  return static_cast<std::uint32_t*>(out.data());
}

void CheckColumns(const TensorCoreInstruction& inst, std::int64_t n) {
  if (inst.kind == TensorCoreInstructionKind::kMmaSync) {
    if (n != inst.n) {
      Fail(std::string(inst.name) + " has n = " + std::to_string(inst.n) + ", got " + std::to_string(n) +
           " columns");
    }
    return;
  }
  if (n < kWgmmaColumnStep || n > kWgmmaMaxColumns || n % kWgmmaColumnStep != 0) {
    Fail(std::string(inst.name) + " takes n a multiple of 8 from 8 to 256, got " + std::to_string(n) +
         " columns");
  }
}

void HostOnly(const char* function, std::initializer_list<const InArray*> arrays) {
  for (const InArray* a : arrays) {
    if (OnCudaArray(*a)) {
      Fail(std::string(function) + " runs on host arrays; move them to the CPU (lowbit.matmul_model runs CUDA "
                                   "tensors)");
    }
  }
}

// ---- the table ----------------------------------------------------------------

const char* KindName(TensorCoreInstructionKind kind) {
  return kind == TensorCoreInstructionKind::kMmaSync ? "mma.sync" : "wgmma";
}

const char* RoundingName(FusedSumRounding r) {
  switch (r) {
    case FusedSumRounding::kTruncate:
      return "truncate";
    case FusedSumRounding::kNearestEven:
      return "nearest-even";
    case FusedSumRounding::kWrapInteger:
      return "wrap-integer";
  }
  return "?";
}

std::vector<nb::dict> Instructions() {
  std::vector<nb::dict> rows;
  for (const TensorCoreInstruction& inst : kTensorCoreInstructions) {
    nb::dict d;
    d["name"] = inst.name;
    d["ptx"] = inst.ptx;
    d["kind"] = KindName(inst.kind);
    d["m"] = inst.m;
    d["n"] = inst.n;
    d["k"] = inst.k;
    std::vector<int> columns;
    if (inst.kind == TensorCoreInstructionKind::kMmaSync) {
      columns.push_back(inst.n);
    } else {
      for (int n = kWgmmaColumnStep; n <= kWgmmaMaxColumns; n += kWgmmaColumnStep) columns.push_back(n);
    }
    d["columns"] = columns;
    d["a_format"] = inst.a.code_format.name;
    d["b_format"] = inst.b.code_format.name;
    d["a_ignored_low_bits"] = inst.a.ignored_low_bits;
    d["b_ignored_low_bits"] = inst.b.ignored_low_bits;
    d["a_widened_to_fp16"] = inst.a.widened_to_fp16;
    d["b_widened_to_fp16"] = inst.b.widened_to_fp16;
    d["accumulator"] = inst.arithmetic.accumulator.name;
    d["accumulator_bits"] = inst.arithmetic.accumulator.total_bits;
    d["arithmetic"] = inst.arithmetic.name;
    d["products_per_step"] = inst.arithmetic.products_per_step;
    d["aligned_fraction_bits"] = inst.arithmetic.aligned_fraction_bits;
    d["rounding"] = RoundingName(inst.arithmetic.rounding);
    d["kept_significand_bits"] = inst.arithmetic.kept_significand_bits;
    d["nan_code"] = inst.arithmetic.nan_code;
    d["steps"] = inst.Steps();
    d["c_added_after_steps"] = inst.lowering.c_added_after_steps;
    rows.push_back(std::move(d));
  }
  return rows;
}

// ---- one instruction ------------------------------------------------------------

// d[i] = TensorCoreDot(a[i, :k], b[i, :k], c[i]) for `count` cases.
void Dot(const std::string& name, const InArray& a, const InArray& b, const InArray& c, OutArray out,
         std::int64_t count) {
  const TensorCoreInstruction inst = Instruction(InstructionOrThrow(name));
  HostOnly("the tensor-core dot", {&a, &b, &c});
  if (count < 0) Fail("the case count must not be negative");
  const auto cases = static_cast<std::size_t>(count);
  const std::uint32_t* ap = CodesOrThrow("A", a, cases * inst.k, inst.a.code_format);
  const std::uint32_t* bp = CodesOrThrow("B", b, cases * inst.k, inst.b.code_format);
  const std::uint32_t* cp = CodesOrThrow("C", c, cases, inst.arithmetic.accumulator);
  std::uint32_t* d = OutOrThrow(out, cases);
  nb::gil_scoped_release release;
  for (std::size_t i = 0; i < cases; ++i) d[i] = matmul::TensorCoreDot(inst, ap + i * inst.k, bp + i * inst.k, cp[i]);
}

// `batch` tiles of the whole instruction: A batch x m x k, B batch x n x k
// (K-major), C and D batch x m x n.
void Mma(const std::string& name, std::int64_t n, std::int64_t batch, const InArray& a, const InArray& b,
         const InArray& c, OutArray out) {
  const TensorCoreInstruction inst = Instruction(InstructionOrThrow(name));
  HostOnly("lowbit.mma", {&a, &b, &c});
  CheckColumns(inst, n);
  if (batch < 0) Fail("the batch must not be negative");
  const auto tiles = static_cast<std::size_t>(batch);
  const std::size_t a_tile = static_cast<std::size_t>(inst.m) * inst.k;
  const std::size_t b_tile = static_cast<std::size_t>(n) * inst.k;
  const std::size_t c_tile = static_cast<std::size_t>(inst.m) * n;
  const std::uint32_t* ap = CodesOrThrow("A", a, tiles * a_tile, inst.a.code_format);
  const std::uint32_t* bp = CodesOrThrow("B", b, tiles * b_tile, inst.b.code_format);
  const std::uint32_t* cp = CodesOrThrow("C", c, tiles * c_tile, inst.arithmetic.accumulator);
  std::uint32_t* d = OutOrThrow(out, tiles * c_tile);
  nb::gil_scoped_release release;
  for (std::size_t t = 0; t < tiles; ++t) {
    matmul::TensorCoreMma(inst, static_cast<int>(n), ap + t * a_tile, bp + t * b_tile, cp + t * c_tile,
                          d + t * c_tile);
  }
}

// ---- one output, step by step -----------------------------------------------------

nb::dict StepDict(const TensorCoreInstruction& inst, int step, std::uint32_t accumulator_in,
                  const matmul::FusedDotTrace& t) {
  const int count = inst.arithmetic.products_per_step;
  nb::dict d;
  d["step"] = step;
  d["accumulator_in"] = accumulator_in;
  d["special"] = t.special;
  d["result"] = t.result;
  if (t.special) return d;
  const bool integer = inst.arithmetic.rounding == FusedSumRounding::kWrapInteger;
  if (!integer) {
    d["max_exponent"] = t.max_exponent;
    d["unit_exponent"] = t.unit_exponent;
  }
  nb::list terms;
  for (int i = 0; i < t.term_count; ++i) {
    nb::dict term;
    term["k"] = i < count ? nb::cast(inst.KOfStepProduct(step, i)) : nb::none();  // None: the accumulator
    if (!integer) {
      term["exponent"] = t.exponent[i];
      term["truncated"] = t.truncated[i];
    }
    term["aligned"] = t.aligned[i];
    terms.append(term);
  }
  d["terms"] = terms;
  d["sum"] = t.sum;
  return d;
}

// TensorCoreDot's steps with their traces (tensor_core.h: the model's own
// walk, in the instruction's lowering), rendered as a dict.
nb::dict Explain(const std::string& name, const InArray& a, const InArray& b, std::uint32_t c) {
  const TensorCoreInstruction inst = Instruction(InstructionOrThrow(name));
  HostOnly("lowbit.mma_explain", {&a, &b});
  const std::uint32_t* ap = CodesOrThrow("A", a, inst.k, inst.a.code_format);
  const std::uint32_t* bp = CodesOrThrow("B", b, inst.k, inst.b.code_format);
  if ((c & ~inst.arithmetic.accumulator.CodeMask()) != 0) {
    Fail("C is code " + Hex(c) + ", wider than " + inst.arithmetic.accumulator.name + "'s " +
         std::to_string(inst.arithmetic.accumulator.total_bits) + " bits");
  }
  std::vector<matmul::FusedDotTrace> traces(static_cast<std::size_t>(inst.Steps()));
  const std::uint32_t d = matmul::TensorCoreDot(inst, ap, bp, c, traces.data());
  nb::list steps;
  for (int s = 0; s < inst.Steps(); ++s) steps.append(StepDict(inst, s, traces[s].accumulator, traces[s]));
  const std::uint32_t steps_result = traces.back().result;
  nb::dict out;
  out["instruction"] = inst.name;
  out["accumulator"] = inst.arithmetic.accumulator.name;
  out["c"] = c;
  out["c_added_after_steps"] = inst.lowering.c_added_after_steps;
  out["steps_result"] = steps_result;
  out["steps"] = steps;
  out["result"] = d;
  return out;
}

// ---- whole matrices through a schedule ---------------------------------------------

matmul::AccumulationSchedule ScheduleOrThrow(const TensorCoreInstruction& inst, TensorCoreId id,
                                             std::int64_t promotion_interval, std::int64_t split_k,
                                             const std::string& split_reduction, const std::string& output,
                                             double alpha, bool scale_per_column, std::int64_t k) {
  matmul::AccumulationSchedule s;
  s.instruction = id;
  const bool integer = inst.arithmetic.rounding == FusedSumRounding::kWrapInteger;
  if (promotion_interval < 0 || promotion_interval > (std::int64_t{1} << 30)) {
    Fail("schedule: promotion_interval must be between 0 and 2^30, got " + std::to_string(promotion_interval));
  }
  s.promotion_interval = static_cast<int>(promotion_interval);
  if (split_k < 1 || split_k > matmul::kMaxSplitK) {
    Fail("schedule: split_k must be between 1 and " + std::to_string(matmul::kMaxSplitK) + ", got " +
         std::to_string(split_k));
  }
  s.split_k = static_cast<int>(split_k);
  if (split_reduction == "in-order") {
    s.split_reduction = matmul::SplitReduction::kInOrder;
  } else if (split_reduction == "pairwise") {
    s.split_reduction = matmul::SplitReduction::kPairwiseTree;
  } else {
    Fail("schedule: split_reduction is 'in-order' or 'pairwise', got " + Quoted(split_reduction));
  }
  if (integer) {
    // The integer instruction's result is the INT32 sum itself (ScheduledDot).
    if (output != "int32") Fail("schedule: " + std::string(inst.name) + " gives int32 outputs, got output " + Quoted(output));
    s.output = FormatId::kFp32;
  } else {
    FormatId out{};
    std::string error;
    if (output == "int32" || !recipe::ParseFormatName(output, &out, &error) ||
        (out != FormatId::kFp32 && out != FormatId::kBf16 && out != FormatId::kFp16)) {
      Fail("schedule: output is 'fp32', 'bf16' or 'fp16', got " + Quoted(output));
    }
    s.output = out;
  }
  s.alpha = static_cast<float>(alpha);
  if (static_cast<double>(s.alpha) != alpha) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", alpha);
    Fail(std::string("schedule: alpha must be an FP32 value (the epilogue multiplies in FP32; give "
                     "float(numpy.float32(alpha))), got ") + buf);
  }
  s.scale_per_column = scale_per_column;
  if (const char* problem = matmul::ScheduleProblem(s, k)) {
    Fail(std::string("schedule: ") + problem + " (" + inst.name + ", k = " + std::to_string(inst.k) +
         ", K = " + std::to_string(k) + ")");
  }
  return s;
}

void Matmul(const std::string& name, std::int64_t promotion_interval, std::int64_t split_k,
            const std::string& split_reduction, const std::string& output, double alpha, const InArray& x,
            const InArray& w, std::int64_t m, std::int64_t n, std::int64_t k, std::optional<InArray> column_scales,
            OutArray out, int threads, std::uintptr_t stream) {
  const TensorCoreId id = InstructionOrThrow(name);
  const TensorCoreInstruction inst = Instruction(id);
  if (m < 1 || n < 1) Fail("x and w must have at least one row each, got m = " + std::to_string(m) + ", n = " + std::to_string(n));
  const matmul::AccumulationSchedule s = ScheduleOrThrow(inst, id, promotion_interval, split_k, split_reduction,
                                                          output, alpha, column_scales.has_value(), k);
  const bool cuda = OnCudaArray(x);
  const auto same_device = [&](bool on_cuda, const char* what) {
    if (on_cuda != cuda) Fail(std::string(what) + " and x are on different devices");
  };
  same_device(OnCudaArray(w), "w");
  same_device(OnCudaArray(out), "out");
  if (column_scales) same_device(OnCudaArray(*column_scales), "column_scales");
  const auto mk = static_cast<std::size_t>(m * k), nk = static_cast<std::size_t>(n * k);
  // On a device the codes are not read back to check their widths; the
  // Python layer hands over codes of the format's width there.
  const std::uint32_t* xp = CodesOrThrow("x", x, mk, inst.a.code_format, !cuda);
  const std::uint32_t* wp = CodesOrThrow("w", w, nk, inst.b.code_format, !cuda);
  const float* scales = nullptr;
  if (column_scales) {
    if (column_scales->itemsize() != 4 || column_scales->size() != static_cast<std::size_t>(n)) {
      Fail("column_scales must hold n = " + std::to_string(n) + " float32 values, got " +
           std::to_string(column_scales->size()));
    }
    scales = static_cast<const float*>(column_scales->data());
  }
  std::uint32_t* y = OutOrThrow(out, static_cast<std::size_t>(m * n));
  if (cuda) {
#if defined(LOWBIT_PY_HAVE_CUDA)
    if (cuda::DeviceCount() == 0) Fail("a CUDA tensor, but the CUDA runtime sees no GPU");
    const cudaError_t err = cuda::ModelMatmulOnDevice(s, xp, wp, m, n, k, scales, y,
                                                      reinterpret_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) Fail(std::string("the tensor-core model on the GPU failed: ") + cudaGetErrorString(err));
    return;
#else
    (void)stream;
    Fail("a CUDA tensor, but this lowbit build has no CUDA kernels (built without nvcc: see lowbit.build_info()); "
         "move the tensors to the CPU or rebuild where nvcc is found");
#endif
  }
  nb::gil_scoped_release release;
  matmul::ModelMatmul(s, xp, wp, m, n, k, scales, y, threads);
}

}  // namespace

void RegisterTensorCore(nb::module_& m) {
  m.def("tensor_core_instructions", &Instructions, "Every tensor-core instruction the model has, with its data.");
  m.def("tensor_core_dot", &Dot, "instruction"_a, "a"_a, "b"_a, "c"_a, "out"_a, "count"_a,
        "out[i] = one output of the instruction: a[i] (k codes), b[i] (k codes), c[i] (uint32 codes).");
  m.def("tensor_core_mma", &Mma, "instruction"_a, "n"_a, "batch"_a, "a"_a, "b"_a, "c"_a, "out"_a,
        "D = A * B + C for batch tiles: A batch x m x k, B batch x n x k (K-major), C and D batch x m x n codes.");
  m.def("tensor_core_explain", &Explain, "instruction"_a, "a"_a, "b"_a, "c"_a,
        "One output of the instruction, step by step (FusedDotTrace per fused step).");
  m.def("tensor_core_matmul", &Matmul, "instruction"_a, "promotion_interval"_a, "split_k"_a, "split_reduction"_a,
        "output"_a, "alpha"_a, "x"_a, "w"_a, "m"_a, "n"_a, "k"_a, "column_scales"_a.none(), "out"_a, "threads"_a,
        "stream"_a,
        "y (m x n codes) = x (m x k codes) * w (n x k codes)^T through an accumulation schedule (host arrays: "
        "ModelMatmul on `threads` threads; CUDA arrays: ModelMatmulOnDevice on `stream`).");
}

}  // namespace lowbit::python
