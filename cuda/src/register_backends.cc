// Registry rows of lowbit::cuda: the element conversions of the two CUDA
// backends (registry.h): "cuda-hw" (PTX cvt) and "cuda-sw" (the model compiled
// for the device); the recipe rows (recipe_entry.h, backend "cuda"): every
// catalog recipe a GPU recipe kernel implements (recipe_plan.h KernelOf),
// quantize and where it exists dequantize, and the one call per direction
// of recipe_quantize.h over the same launcher; and the sweep rows of
// register.h ("cuda-hw-sweep"). A row's
// `available` is false without a GPU, so tests and `lowbit verify` show it
// as skipped. Element and recipe rows take host or device buffers: device
// buffers are used in place, asynchronously on RecipeArgs / ConvertArgs
// `stream` (registry/stream.h), host buffers are copied and waited for (the
// harness's way). They register for device memory (registry/choose.h), so a
// caller with device buffers is given them, cuda-hw above cuda-sw.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks.h"
#include "stream_scratch.h"
#include "model_recipe.h"
#include "spec_value.h"
#include "tensor_call.h"
#include "gemv/gemv.h"
#include "tc_matmul/tc_gemv.h"
#if LOWBIT_CUDA_HAS_TC_GEMM
#include "tc_matmul/tc_gemm.h"
#endif
#include "lowbit/cuda/convert.h"
#include "lowbit/cuda/device.h"
#include "lowbit/cuda/recipe_plan.h"
#include "lowbit/cuda/recipe_quantize.h"
#include "lowbit/cuda/register.h"
#include "lowbit/cuda/verify.h"
#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/registry/recipe_entry.h"
#include "lowbit/registry/registry.h"

namespace lowbit {

namespace {

cuda::ElementOp ToElementOp(registry::Operation op) {
  switch (op) {
    case registry::Operation::kEncodeF32: return cuda::ElementOp::kEncodeF32;
    case registry::Operation::kEncodeBf16: return cuda::ElementOp::kEncodeBf16;
    case registry::Operation::kEncodeF16: return cuda::ElementOp::kEncodeF16;
    case registry::Operation::kDecodeToF32: return cuda::ElementOp::kDecodeToF32;
    case registry::Operation::kDecodeToBf16: return cuda::ElementOp::kDecodeToBf16;
  }
  return cuda::ElementOp::kEncodeF32;
}

// Device scratch for one call with host arrays, freed on every path.
struct Scratch {
  void* p = nullptr;
  ~Scratch() {
    if (p) cudaFree(p);
  }
};

registry::Status ToRegistry(const cuda::Status& s) {
  return s.ok ? registry::Status::Ok() : registry::Status::Error(s.message);
}

registry::Status Run(cuda::Backend backend, const registry::ConvertArgs& args) {
  registry::Status status = registry::ValidateConvertArgs(args);
  if (!status.ok || args.count == 0) return status;
  if (!cuda::GpuAvailable()) return registry::Status::Error("no CUDA device");
  cuda::ConvertRequest r;
  r.op = ToElementOp(args.operation);
  r.format = args.format;
  r.backend = backend;
  r.count = args.count;
  r.encode = args.encode;
  r.decode = args.decode;
  // Array sizes from the registry's operation metadata.
  const std::size_t in_bytes = registry::InputBytes(args.operation, args.format) * args.count;
  const std::size_t out_bytes = registry::OutputBytes(args.operation, args.format) * args.count;
  const bool stochastic = registry::IsEncode(args.operation) && args.encode.rounding == RoundingMode::kStochastic;
  const bool device = cuda::detail::IsDevicePointer(args.input) && cuda::detail::IsDevicePointer(args.output) &&
                      (!stochastic || cuda::detail::IsDevicePointer(args.random_bits));
  if (device) {
    // In place, asynchronous on the caller's stream (registry/stream.h).
    r.input = args.input;
    r.output = args.output;
    r.random_bits = stochastic ? args.random_bits : nullptr;
    r.stream = static_cast<cudaStream_t>(args.stream);
    return ToRegistry(cuda::Convert(r));
  }
  Scratch in, out, rb;
  cudaError_t e = cudaMalloc(&in.p, in_bytes);
  if (e == cudaSuccess) e = cudaMalloc(&out.p, out_bytes);
  if (e == cudaSuccess && stochastic) e = cudaMalloc(&rb.p, 4 * args.count);
  if (e == cudaSuccess) e = cudaMemcpy(in.p, args.input, in_bytes, cudaMemcpyDefault);
  if (e == cudaSuccess && stochastic) e = cudaMemcpy(rb.p, args.random_bits, 4 * args.count, cudaMemcpyDefault);
  if (e != cudaSuccess) return ToRegistry(cuda::detail::CudaStatus("cuda", e));
  r.input = in.p;
  r.output = out.p;
  r.random_bits = stochastic ? static_cast<const std::uint32_t*>(rb.p) : nullptr;
  const cuda::Status s = cuda::Convert(r);
  if (!s.ok) return ToRegistry(s);
  // cudaMemcpy synchronizes with the conversion.
  return ToRegistry(cuda::detail::CudaStatus("cuda", cudaMemcpy(args.output, out.p, out_bytes, cudaMemcpyDefault)));
}

// The option sets with an instruction behind them: each rounding mode the
// cvt forms have, with and without .satfinite, for which
// HardwareEncodeOptions finds one; decodes have the one NVIDIA NaN rule.
std::vector<cuda::SweepOptionSet> InstructionOptionSets(cuda::ElementOp op, FormatId format) {
  std::vector<cuda::SweepOptionSet> sets;
  if (!cuda::IsEncode(op)) {
    const DecodeOptions decode = cuda::HardwareDecodeOptions(format);
    if (cuda::Supports(cuda::Backend::kHardware, op, format, EncodeOptions{}, decode)) {
      sets.push_back({"nan+,all-ones", EncodeOptions{}, decode});
    }
    return sets;
  }
  const std::pair<RoundingMode, const char*> modes[] = {{RoundingMode::kNearestEven, "rn"},
                                                        {RoundingMode::kTowardZero, "rz"},
                                                        {RoundingMode::kDown, "rm"},
                                                        {RoundingMode::kUp, "rp"}};
  for (const auto& [mode, name] : modes) {
    for (bool satfinite : {false, true}) {
      EncodeOptions o;
      if (cuda::HardwareEncodeOptions(op, format, mode, satfinite, &o)) {
        sets.push_back({std::string(name) + (satfinite ? ".satfinite" : ""), o, DecodeOptions{}});
      }
    }
  }
  return sets;
}

// ---- recipe rows -----------------------------------------------------------

// Which kernel runs a recipe row (lowbit/cuda/recipe_plan.h KernelOf, read
// off the recipe's fields).
struct RecipePlan {
  cuda::detail::RecipeKernel kernel = cuda::detail::RecipeKernel::kNone;
};

bool PlanRecipe(const recipe::Target& t, registry::RecipeOperation op, RecipePlan* plan) {
  if (t.recipe == nullptr) return false;
  plan->kernel = cuda::detail::KernelOf(*t.recipe, t.layout, op == registry::RecipeOperation::kQuantizeRecipe);
  return plan->kernel != cuda::detail::RecipeKernel::kNone;
}

// Device copies of a recipe row's buffers, freed on every path.
struct DeviceBuffers {
  std::vector<void*> owned;
  cudaError_t error = cudaSuccess;
  ~DeviceBuffers() {
    for (void* p : owned) cudaFree(p);
  }
  // A device buffer of `bytes`, holding a copy of `host` when given; null
  // for zero bytes.
  template <typename T>
  T* Make(std::size_t bytes, const void* host = nullptr) {
    if (bytes == 0 || error != cudaSuccess) return nullptr;
    void* p = nullptr;
    error = cudaMalloc(&p, bytes);
    if (error != cudaSuccess) return nullptr;
    owned.push_back(p);
    if (host != nullptr) error = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
    return static_cast<T*>(p);
  }
};

registry::Status Back(const char* what, void* host, const void* device, std::size_t bytes) {
  if (bytes == 0 || host == nullptr) return registry::Status::Ok();
  return ToRegistry(cuda::detail::CudaStatus(what, cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost)));
}

// The kernels of `plan` on device buffers, launched on `stream` and not
// waited for: every pointer of `a` is device memory, q.tensor_scale
// included (recipe::TensorScale, encode then decode), and `workspace` holds
// kRecipeWorkspaceFloats device floats for the amax and scale the kernels
// pass between launches. The row is one tensor description
// (tensor_call.h TensorCall) whatever the kernel. Called only by
// LaunchOnDevice, after its checks.
cuda::Status LaunchKernels(const RecipePlan& plan, const registry::RecipeArgs& a, float* workspace,
                           cudaStream_t stream) {
  cuda::detail::TensorCall t;
  t.recipe = a.target.recipe;
  t.layout = a.target.layout;
  t.rows = a.rows;  // ValidateRecipeArgs checked the product
  t.cols = a.cols;
  t.input = a.x;
  t.output = a.out;
  t.q = a.q;
  t.workspace = workspace;
  t.stream = stream;
  return cuda::detail::LaunchRecipeKernel(plan.kernel, a.operation == registry::RecipeOperation::kQuantizeRecipe, t);
}

// The one launcher of both entry points: the checks a launch on device
// buffers needs, then the kernels. `a` has passed ValidateRecipeArgs and is
// not empty. The zero-copy entry point (cuda::RunRecipeOnDevice) calls it
// with the caller's buffers; the host-buffer rows (RunRecipe) with their
// device copies.
cuda::Status LaunchOnDevice(const RecipePlan& plan, const registry::RecipeArgs& a, float* workspace,
                            cudaStream_t stream) {
  if (workspace == nullptr) return cuda::Status::Error("cuda: null recipe workspace");
  // The MX and NVFP4 kernels take 1-D blocks of the flattened tensor; a
  // layout of groups along rows is the same only when every row is whole
  // blocks (formats/include/lowbit/formats/recipe/tensor.h LayoutApplies).
  const recipe::Layout& layout = a.target.layout;
  if (a.target.recipe->family() != recipe::Family::kScaled && layout.geometry == recipe::Geometry::kGroup &&
      a.cols % static_cast<std::size_t>(layout.size) != 0) {
    return cuda::Status::Error("cuda: " + recipe::CanonicalName(a.target) + " with rows of " + std::to_string(a.cols) +
                               " columns (not whole blocks of " + std::to_string(layout.size) +
                               "): the GPU kernels take 1-D blocks of the flattened tensor");
  }
  if (!cuda::GpuAvailable()) return cuda::Status::Error("cuda: no CUDA device");
  // Host pointers would be read by the kernels as device addresses: refuse
  // them here, naming the buffer (the host-buffer rows copy instead).
  const std::pair<const void*, const char*> buffers[] = {
      {a.x, "x"}, {a.out, "out"}, {a.q.codes, "codes"}, {a.q.scale_codes, "scale codes"},
      {a.q.scales, "scales"}, {a.q.zero_points, "zero points"}, {a.q.tensor_scale, "tensor scale"},
      {workspace, "workspace"}};
  for (const auto& [p, what] : buffers) {
    if (p != nullptr && !cuda::detail::IsDevicePointer(p)) {
      return cuda::Status::Error(std::string("cuda: the ") + what + " buffer is not device memory");
    }
  }
  return LaunchKernels(plan, a, workspace, stream);
}

// The host-buffer rows: LaunchOnDevice wrapped in a copy through the host.
// The inputs are copied to device buffers, the kernels run there, and the
// outputs are copied back after the device is synchronized.
registry::Status RunRecipe(const RecipePlan& plan, const registry::RecipeArgs& a) {
  if (registry::Status s = registry::ValidateRecipeArgs(a); !s.ok) return s;
  // The GPU kernels derive every scale from x; a given (static) scale
  // (RecipeArgs::given_scale) runs on the scalar row, never silently ignored.
  if (a.given_scale != nullptr) return registry::Status::Error("cuda: given (static) scales run on the scalar row only");
  if (registry::Status s = registry::RequireF32Output(a, "cuda"); !s.ok) return s;
  if (a.rows == 0 || a.cols == 0) return registry::Status::Ok();  // empty, never a product that wraps to 0
  const std::size_t count = a.rows * a.cols;  // ValidateRecipeArgs checked the product
  if (!cuda::GpuAvailable()) return registry::Status::Error("no CUDA device");
  const bool quantize_call = a.operation == registry::RecipeOperation::kQuantizeRecipe;
  if (cuda::detail::IsDevicePointer(quantize_call ? static_cast<const void*>(a.x) : a.q.codes)) {
    // Device buffers: in place, asynchronous on the caller's stream, the
    // workspace from the stream-ordered pool (freed in stream order).
    const auto stream = static_cast<cudaStream_t>(a.stream);
    cuda::detail::StreamScratch workspace(stream);
    if (cudaError_t e = workspace.Allocate(sizeof(float) * cuda::kRecipeWorkspaceFloats); e != cudaSuccess) {
      return ToRegistry(cuda::detail::CudaStatus("cuda", e));
    }
    return ToRegistry(LaunchOnDevice(plan, a, static_cast<float*>(workspace.get()), stream));
  }
  const recipe::BufferSizes sizes = registry::RecipeBufferSizes(a.target, a.rows, a.cols).sizes;
  const bool quantize = a.operation == registry::RecipeOperation::kQuantizeRecipe;
  const std::size_t code_bytes = static_cast<std::size_t>(sizes.code_bytes);
  const std::size_t scale_code_bytes = static_cast<std::size_t>(sizes.scale_codes);
  const std::size_t scale_bytes = 4 * static_cast<std::size_t>(sizes.scales);
  const std::size_t zero_point_bytes = 4 * static_cast<std::size_t>(sizes.zero_points);
  DeviceBuffers d;
  registry::RecipeArgs on_device = a;
  on_device.x = quantize ? d.Make<float>(4 * count, a.x) : nullptr;
  on_device.out = quantize ? nullptr : d.Make<float>(4 * count);
  on_device.q.codes = d.Make<std::uint8_t>(code_bytes, quantize ? nullptr : a.q.codes);
  on_device.q.scale_codes = d.Make<std::uint8_t>(scale_code_bytes, quantize ? nullptr : a.q.scale_codes);
  on_device.q.scales = d.Make<float>(scale_bytes, quantize ? nullptr : a.q.scales);
  on_device.q.zero_points = d.Make<std::int32_t>(zero_point_bytes, quantize ? nullptr : a.q.zero_points);
  // NVFP4's tensor scale as (encode, decode), recipe::TensorScale's order,
  // then the workspace.
  float scratch_host[2 + cuda::kRecipeWorkspaceFloats] = {};
  if (!quantize && a.q.tensor_scale != nullptr) {
    scratch_host[0] = a.q.tensor_scale->encode;
    scratch_host[1] = a.q.tensor_scale->decode;
  }
  float* scratch = d.Make<float>(sizeof(scratch_host), scratch_host);
  on_device.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(scratch);
  if (d.error != cudaSuccess) return ToRegistry(cuda::detail::CudaStatus("cuda", d.error));

  if (cuda::Status s = LaunchOnDevice(plan, on_device, scratch + 2, nullptr); !s.ok) return ToRegistry(s);
  if (registry::Status e = ToRegistry(cuda::detail::CudaStatus("cuda", cudaDeviceSynchronize())); !e.ok) return e;
  if (!quantize) return Back("cuda", a.out, on_device.out, 4 * count);
  float tensor_host[2] = {0.0f, 0.0f};
  for (registry::Status e : {Back("cuda", a.q.codes, on_device.q.codes, code_bytes),
                             Back("cuda", a.q.scale_codes, on_device.q.scale_codes, scale_code_bytes),
                             Back("cuda", a.q.scales, on_device.q.scales, scale_bytes),
                             Back("cuda", a.q.zero_points, on_device.q.zero_points, zero_point_bytes),
                             Back("cuda", tensor_host, scratch, sizes.tensor_scales > 0 ? sizeof(tensor_host) : 0)}) {
    if (!e.ok) return e;
  }
  if (sizes.tensor_scales > 0) *a.q.tensor_scale = recipe::TensorScale{tensor_host[0], tensor_host[1]};
  return registry::Status::Ok();
}

}  // namespace

namespace cuda {

Status RunRecipeOnDevice(const registry::RecipeArgs& args, float* workspace, cudaStream_t stream) {
  if (registry::Status s = registry::ValidateRecipeArgs(args); !s.ok) return Status::Error(s.message);
  if (args.given_scale != nullptr) return Status::Error("cuda: given (static) scales run on the scalar row only");
  if (registry::Status s = registry::RequireF32Output(args, "cuda"); !s.ok) return Status::Error(s.message);
  if (args.rows == 0 || args.cols == 0) return Status::Ok();
  RecipePlan plan{};
  if (!PlanRecipe(args.target, args.operation, &plan)) {
    return Status::Error("cuda: no GPU kernel for " + std::string(registry::RecipeOperationName(args.operation)) +
                         " " + recipe::CanonicalName(args.target));
  }
  return LaunchOnDevice(plan, args, workspace, stream);
}

namespace {

// The registry's arguments of one Quantize / Dequantize call, checked as
// every backend checks them; `empty` for rows or cols 0.
Status CheckCall(registry::RecipeOperation op, const recipe::Recipe& r, const recipe::Layout& layout,
                 const float* x, std::size_t rows, std::size_t cols, const recipe::QuantizedTensor& q, float* out,
                 registry::RecipeArgs* a, RecipePlan* plan, bool* empty) {
  if (r.name == nullptr || r.profile == nullptr) return Status::Error("cuda: a recipe without a name");
  a->operation = op;
  a->target.kind = recipe::Target::Kind::kRecipe;
  a->target.recipe = &r;
  a->target.layout = layout;
  a->rows = rows;
  a->cols = cols;
  a->x = x;
  a->q = q;
  a->out = out;
  if (registry::Status s = registry::ValidateRecipeArgs(*a); !s.ok) return Status::Error(s.message);
  if (!PlanRecipe(a->target, op, plan)) {
    return Status::Error("cuda: no GPU kernel for " + std::string(registry::RecipeOperationName(op)) + " " +
                         recipe::CanonicalName(a->target) + " (recipe_quantize.h RunsQuantize / RunsDequantize)");
  }
  *empty = rows == 0 || cols == 0;
  return Status::Ok();
}

Status RunCall(const RecipePlan& plan, const registry::RecipeArgs& a, cudaStream_t stream) {
  detail::StreamScratch workspace(stream);
  if (cudaError_t e = workspace.Allocate(sizeof(float) * kRecipeWorkspaceFloats); e != cudaSuccess) {
    return detail::CudaStatus("cuda", e);
  }
  return LaunchOnDevice(plan, a, static_cast<float*>(workspace.get()), stream);
}

}  // namespace

Status Quantize(const recipe::Recipe& r, const recipe::Layout& layout, const float* x, std::size_t rows,
                std::size_t cols, const recipe::QuantizedTensor& q, cudaStream_t stream) {
  registry::RecipeArgs a;
  RecipePlan plan;
  bool empty = false;
  if (Status s = CheckCall(registry::RecipeOperation::kQuantizeRecipe, r, layout, x, rows, cols, q, nullptr, &a,
                           &plan, &empty);
      !s.ok || empty) {
    return s;
  }
  return RunCall(plan, a, stream);
}

Status Dequantize(const recipe::Recipe& r, const recipe::Layout& layout, const recipe::ConstQuantizedTensor& q,
                  std::size_t rows, std::size_t cols, float* out, cudaStream_t stream) {
  // The registry's arguments hold one QuantizedTensor for both directions;
  // dequantization only reads it.
  const recipe::QuantizedTensor buffers{const_cast<std::uint8_t*>(q.codes), const_cast<std::uint8_t*>(q.scale_codes),
                                        const_cast<float*>(q.scales), const_cast<std::int32_t*>(q.zero_points),
                                        const_cast<recipe::TensorScale*>(q.tensor_scale)};
  registry::RecipeArgs a;
  RecipePlan plan;
  bool empty = false;
  if (Status s = CheckCall(registry::RecipeOperation::kDequantizeRecipe, r, layout, nullptr, rows, cols, buffers, out,
                           &a, &plan, &empty);
      !s.ok || empty) {
    return s;
  }
  return RunCall(plan, a, stream);
}

void RegisterCudaRecipes(registry::Registry& registry) {
  for (const std::string& name : registry::AllRecipeNames()) {
    recipe::Target target;
    if (!registry::ParseRecipe(name, &target)) continue;
    for (registry::RecipeOperation op : registry::kAllRecipeOperations) {
      RecipePlan plan{};
      if (!PlanRecipe(target, op, &plan)) continue;
      // Device memory; given (static) scales and FP16 output run on the
      // host rows (RunRecipe refuses them by name when called directly).
      registry.AddRecipe(registry::RecipeEntry{
          op, name, "cuda", [] { return GpuAvailable(); },
          [plan](const registry::RecipeArgs& a) { return RunRecipe(plan, a); }, registry::Memory::kDevice,
          /*preference=*/0, /*any_layout=*/false, [](const registry::RecipeArgs& a) {
            return a.given_scale == nullptr && a.output_format == FormatId::kFp32;
          }});
    }
  }
}

}  // namespace cuda

namespace registry {

void RegisterCudaBackends(Registry& registry) {
  for (Operation op : kAllOperations) {
    for (FormatId format : kAllFormats) {
      if (!OperationApplies(op, format)) continue;
      const cuda::ElementOp eop = ToElementOp(op);
      for (cuda::Backend backend : cuda::kAllBackends) {
        if (backend == cuda::Backend::kHardware && InstructionOptionSets(eop, format).empty()) continue;
        KernelEntry entry;
        entry.operation = op;
        entry.format = format;
        entry.backend = cuda::BackendName(backend);
        entry.supports = [backend, eop, format](const ConvertArgs& a) {
          return cuda::Supports(backend, eop, format, a.encode, a.decode);
        };
        entry.available = [] { return cuda::GpuAvailable(); };
        entry.run = [backend](const ConvertArgs& a) { return Run(backend, a); };
        entry.memory = Memory::kDevice;
        entry.preference = backend == cuda::Backend::kHardware ? 1 : 0;  // the instruction where it is exact
        registry.Add(std::move(entry));
      }
    }
  }
  cuda::RegisterCudaRecipes(registry);
  cuda::RegisterCudaLayouts(registry);  // register_layouts.cc
  cuda::RegisterCudaTensorCore(registry);  // register_tensor_core.cc
#if LOWBIT_CUDA_HAS_TC_GEMM
  cuda::tc_gemm::RegisterCudaTcGemm(registry);  // tc_matmul/register_tc_gemm.cc (built with CUTLASS)
#endif
  cuda::gemv::RegisterCudaGemv(registry);  // gemv/register_gemv.cc
  cuda::tc_gemv::RegisterCudaTcGemv(registry);  // tc_matmul/register_tc_gemv.cc
}

}  // namespace registry

namespace cuda {

std::vector<SweepRow> HardwareSweepRows() {
  std::vector<SweepRow> rows;
  for (registry::Operation op : registry::kAllOperations) {
    for (FormatId format : kAllFormats) {
      const ElementOp eop = ToElementOp(op);
      std::vector<SweepOptionSet> sets = InstructionOptionSets(eop, format);
      if (sets.empty()) continue;
      SweepRow row;
      row.operation = op;
      row.format = format;
      row.backend = "cuda-hw-sweep";
      row.option_sets = std::move(sets);
      row.available = [] { return GpuAvailable(); };
      row.run = [eop, format](const SweepOptionSet& options, VerifyReport* report) {
        return ToRegistry(VerifyAllInputs(Backend::kHardware, eop, format, options.encode, options.decode, report));
      };
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace cuda
}  // namespace lowbit
