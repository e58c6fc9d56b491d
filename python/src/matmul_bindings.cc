// The matmul rows (registry matmul_entry.h) from Python: y = x * W^T with W
// in lowbit's packed layouts (formats/matmul/weights.h), on host arrays
// (NumPy, the "scalar" rows or any host row) or CUDA arrays (torch via
// DLPack, a row's run_on_device on the caller's stream). python/lowbit/_arrays.py
// maps a lowbit.quantize result onto these arguments unchanged.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "lowbit/check/backends.h"
#include "lowbit/formats/matmul/weight_kind.h"
#include "lowbit/formats/matmul/weights.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/registry.h"
#include "matmul_bindings.h"

#if defined(LOWBIT_PY_HAVE_CUDA)
#include "cuda_bridge.h"
#include "lowbit/cuda/tensor_core_gemv.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace lowbit::python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig>;
using OutArray = nb::ndarray<nb::c_contig>;
using registry::MatmulEntry;
using registry::MatmulOperation;
using registry::Registry;

[[noreturn]] void Fail(const std::string& message) { throw nb::value_error(message.c_str()); }

const Registry& Rows() {
  static Registry& reg = [] () -> Registry& {
    Registry& r = Registry::Global();
    check::RegisterAllBackends(r);  // replaces rows already there: harmless after module.cc's call
    return r;
  }();
  return reg;
}

matmul::ActivationType ActivationOf(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return matmul::ActivationType::kBf16;
  if (name == "fp16" || name == "float16") return matmul::ActivationType::kFp16;
  Fail("activations are bf16 or fp16, got '" + name + "'");
}
matmul::OutputType OutputOf(const std::string& name) {
  if (name == "bf16" || name == "bfloat16") return matmul::OutputType::kBf16;
  if (name == "fp16" || name == "float16") return matmul::OutputType::kFp16;
  if (name == "fp32" || name == "float32") return matmul::OutputType::kFp32;
  Fail("outputs are bf16, fp16 or fp32, got '" + name + "'");
}
// PackedWeight.geometry's words for weights.h's ScaleGeometry.
constexpr struct {
  const char* name;
  matmul::ScaleGeometry geometry;
} kGeometryNames[] = {{"flat", matmul::ScaleGeometry::kFlatBlocks},
                      {"row-blocks", matmul::ScaleGeometry::kRowGroups},
                      {"per-row", matmul::ScaleGeometry::kPerRow}};

matmul::ScaleGeometry GeometryOf(const std::string& name) {
  for (const auto& g : kGeometryNames) {
    if (name == g.name) return g.geometry;
  }
  Fail("unknown scale geometry '" + name + "' (flat, row-blocks, per-row)");
}
const char* GeometryName(matmul::ScaleGeometry geometry) {
  for (const auto& g : kGeometryNames) {
    if (g.geometry == geometry) return g.name;
  }
  return "?";
}

bool OnCuda(const InArray& a) { return a.device_type() == nb::device::cuda::value; }

void CheckItem(const char* what, std::size_t itemsize, std::size_t want) {
  if (itemsize != want) {
    Fail(std::string(what) + " has " + std::to_string(itemsize) + "-byte items, this layout needs " +
         std::to_string(want) + "-byte ones");
  }
}

// The kind a user's name means: a canonical name or an alias of it
// (formats/matmul/weight_kind.h kWeightKindAliases); the error lists the
// canonical names.
const registry::MatmulWeightKind& KindOf(const std::string& weight) {
  const registry::MatmulWeightKind* kind = registry::FindMatmulWeightKind(weight);
  if (kind == nullptr) {
    std::string names;
    for (const matmul::WeightKind& k : matmul::kWeightKinds) names += std::string(names.empty() ? "" : ", ") + k.name;
    Fail("unknown weight kind '" + weight + "' (" + names + ")");
  }
  return *kind;
}

// W's view over the arrays, with the counts they really have (Validate
// compares them with the shape); their item sizes checked.
matmul::WeightView WeightsOf(const registry::MatmulWeightKind& kind, const std::string& geometry, std::int64_t n,
                             std::int64_t k, std::int64_t block, std::int64_t batch, const InArray& codes,
                             const InArray& scales, const std::optional<InArray>& zeros,
                             const std::optional<InArray>& tensor_scale) {
  const bool words = kind.packing != matmul::WeightPacking::kLowbit;
  CheckItem("codes", codes.itemsize(), words ? 4 : 1);
  CheckItem("scales", scales.itemsize(), matmul::ScaleBytes(kind.scale_type));
  if (zeros) CheckItem("zeros", zeros->itemsize(), 4);
  if (tensor_scale) CheckItem("tensor_scale", tensor_scale->itemsize(), 4);
  if (tensor_scale && tensor_scale->size() % 2 != 0) Fail("tensor_scale holds (encode, decode) pairs: an even count");
  matmul::WeightView w = matmul::DenseWeights(
      kind.format, kind.packing, GeometryOf(geometry), kind.scale_type, n, k, block, batch, codes.data(), scales.data(),
      zeros ? zeros->data() : nullptr,
      tensor_scale ? static_cast<const recipe::TensorScale*>(tensor_scale->data()) : nullptr);
  w.codes_count = static_cast<std::int64_t>(codes.size());
  w.scales_count = static_cast<std::int64_t>(scales.size());
  w.zeros_count = zeros ? static_cast<std::int64_t>(zeros->size()) : 0;
  w.tensor_scale_count = tensor_scale ? static_cast<std::int64_t>(tensor_scale->size() / 2) : 0;
  return w;
}

// A lowbit.quantize result as a matmul weight: the row's weight kind, the
// view's scale geometry and its block (formats/matmul/weight_kind.h
// LowbitWeightKindOf), or why not. `layout` is QuantizedTensor.layout
// (recipe::LayoutName); empty or the recipe's own is its default layout.
std::tuple<std::string, std::string, std::int64_t> MatmulWeightOfRecipe(const std::string& name,
                                                                        const std::string& layout) {
  recipe::Target t;
  std::string error;
  if (!recipe::ParseTarget(name, &t, &error)) Fail(error);
  if (t.kind != recipe::Target::Kind::kRecipe) Fail("'" + name + "' names a format, not a recipe");
  if (!layout.empty() && layout != recipe::LayoutName(t.layout)) {
    if (!recipe::ParseLayout(layout, &t.layout, &error)) Fail(error);
  }
  const matmul::WeightKind* kind = nullptr;
  if (const char* why = matmul::LowbitWeightKindOf(*t.recipe, t.layout, &kind); why != nullptr) {
    std::string message = "recipe " + recipe::RecipeName(*t.recipe) + " (" + recipe::LayoutName(t.layout) +
                          ") has no matmul row: " + why;
    bool format_has_kind = false;
    for (const matmul::WeightKind& k : matmul::kWeightKinds) format_has_kind |= std::string(k.format) == t.recipe->name;
    if (!format_has_kind) {
      std::string kinds;
      for (const matmul::WeightKind& k : matmul::kWeightKinds) {
        if (k.packing == matmul::WeightPacking::kLowbit) kinds += (kinds.empty() ? "" : ", ") + std::string(k.name);
      }
      message += " (the kinds of lowbit.quantize results: " + kinds + ")";
    }
    Fail(message);
  }
  const bool per_row = t.layout.geometry == recipe::Geometry::kPerRow;
  return {kind->name, GeometryName(matmul::ScaleGeometryOf(t.layout)), per_row ? 0 : t.layout.size};
}

// GPTQ / AWQ checkpoint tensors as a matmul weight: the weight kind
// for the packing ("gptq", "awq") and the scales' storage ("fp16", "bf16").
std::string MatmulWeightOfCheckpoint(const std::string& packing, const std::string& scale_storage) {
  for (const matmul::WeightKind& k : matmul::kWeightKinds) {
    if (k.packing != matmul::WeightPacking::kLowbit && packing == matmul::WeightPackingName(k.packing) &&
        scale_storage == matmul::ScaleTypeName(k.scale_storage)) {
      return k.name;
    }
  }
  Fail("no checkpoint weight kind packs '" + packing + "' words with " + scale_storage + " scales");
}

// Every weight kind (formats/matmul/weight_kind.h kWeightKinds): its name in
// the recipe grammar (the matmul rows' weight), the older names that still
// mean it (kWeightKindAliases), the catalog format and layout it is a target
// of, its packing and scale storage.
std::vector<nb::dict> MatmulWeightKinds() {
  std::vector<nb::dict> kinds;
  for (const matmul::WeightKind& k : matmul::kWeightKinds) {
    nb::dict d;
    d["name"] = k.name;
    std::vector<std::string> aliases;
    for (const matmul::WeightKindAlias& a : matmul::kWeightKindAliases) {
      if (std::string_view(a.name) == k.name) aliases.push_back(a.alias);
    }
    d["aliases"] = aliases;
    d["format"] = k.format;
    d["layout"] = recipe::LayoutName(k.layout);
    d["packing"] = matmul::WeightPackingName(k.packing);
    d["scale_storage"] = matmul::ScaleTypeName(k.scale_storage);
    kinds.push_back(std::move(d));
  }
  return kinds;
}

// Runs one matmul row; returns the backend that ran.
std::string Matmul(const std::string& operation, const std::string& weight, const std::string& geometry,
                   std::int64_t n, std::int64_t k, std::int64_t block, std::int64_t batch, std::int64_t m,
                   const InArray& codes, const InArray& scales, std::optional<InArray> zeros,
                   std::optional<InArray> tensor_scale, const InArray& x, const std::string& activation,
                   OutArray out, const std::string& output, const std::string& backend, std::uintptr_t stream) {
  MatmulOperation op{};
  if (!registry::ParseMatmulOperation(operation, &op)) Fail("operation is gemv or gemm, got '" + operation + "'");
  const registry::MatmulWeightKind* kind = &KindOf(weight);
  registry::MatmulArgs a;
  a.w = WeightsOf(*kind, geometry, n, k, block, batch, codes, scales, zeros, tensor_scale);
  CheckItem("x", x.itemsize(), 2);
  const matmul::OutputType out_type = OutputOf(output);
  if (out.itemsize() != matmul::OutputBytes(out_type)) {
    Fail("out has " + std::to_string(out.itemsize()) + "-byte items, " + output + " needs " +
         std::to_string(matmul::OutputBytes(out_type)));
  }
  const bool cuda = OnCuda(x);
  const auto same_device = [&](const InArray& a, const char* what) {
    if (OnCuda(a) != cuda) Fail(std::string(what) + " and x are on different devices");
  };
  same_device(codes, "codes");
  same_device(scales, "scales");
  if (zeros) same_device(*zeros, "zeros");
  if (tensor_scale) same_device(*tensor_scale, "tensor_scale");
  if ((out.device_type() == nb::device::cuda::value) != cuda) Fail("out and x are on different devices");

  a.m = m;
  a.x.type = ActivationOf(activation);
  a.x.data = x.data();
  a.x.count = static_cast<std::int64_t>(x.size());
  a.x.row_stride = k;
  a.x.batch_stride = m * k;
  a.y.type = out_type;
  a.y.data = out.data();
  a.y.count = static_cast<std::int64_t>(out.size());
  a.y.row_stride = n;
  a.y.batch_stride = m * n;

  const Registry& reg = Rows();
  const MatmulEntry* row = nullptr;
  if (!backend.empty()) {
    row = reg.FindMatmul(op, kind->name, a.x.type, a.y.type, backend);
    if (row == nullptr) Fail("no " + operation + " row '" + weight + "' " + activation + "->" + output + " for backend '" + backend + "'");
  } else {
    // The registry chooses, for where x is (registry/choose.h).
    row = registry::ChooseMatmulRow(reg, op, kind->name, a.x.type, a.y.type,
                                    cuda ? registry::Memory::kDevice : registry::Memory::kHost);
    if (row == nullptr) {
      Fail(std::string("no ") + (cuda ? "CUDA " : "host ") + operation + " row for " + weight + " " + activation +
           "->" + output + (cuda ? " (this build has no CUDA matmul row for it; use host arrays)" : ""));
    }
  }
  if (row->available && !row->available()) Fail("backend '" + row->backend + "' is not available here");
  registry::Status s;
  if (cuda) {
    if (!row->run_on_device) Fail("backend '" + row->backend + "' takes host memory, x is on a CUDA device");
    s = row->run_on_device(a, reinterpret_cast<void*>(stream));
  } else {
    nb::gil_scoped_release release;
    s = row->run(a);
  }
  if (!s.ok) Fail(s.message);
  return row->backend;
}

// Every matmul row: operation, weight, activation, output, backend, whether
// it runs here and on device memory.
std::vector<nb::dict> MatmulRows() {
  std::vector<nb::dict> rows;
  for (const MatmulEntry& e : Rows().MatmulEntries()) {
    nb::dict d;
    d["operation"] = registry::MatmulOperationName(e.operation);
    d["weight"] = e.weight;
    d["activation"] = matmul::ActivationTypeName(e.activation);
    d["output"] = matmul::OutputTypeName(e.output);
    d["backend"] = e.backend;
    d["available"] = !e.available || e.available();
    d["device"] = static_cast<bool>(e.run_on_device);
    rows.push_back(std::move(d));
  }
  return rows;
}

#if defined(LOWBIT_PY_HAVE_CUDA)
// lowbit.tensor_core_weight: W (CUDA arrays) packed once on `stream`.
std::unique_ptr<cuda::PackedTensorCoreWeights> PackTensorCoreWeight(
    const std::string& weight, const std::string& geometry, std::int64_t n, std::int64_t k, std::int64_t block,
    std::int64_t batch, const InArray& codes, const InArray& scales, std::optional<InArray> tensor_scale,
    std::uintptr_t stream) {
  if (const std::string why = CudaUnavailable(); !why.empty()) Fail(why);
  const registry::MatmulWeightKind& kind = KindOf(weight);
  // lowbit.quantize results are in lowbit's packing; which of them the
  // kernel takes is the packer's rule (tc_gemv_pack.h PackProblem), whose
  // line Pack returns.
  if (kind.packing != matmul::WeightPacking::kLowbit) {
    Fail("tensor_core_weight takes lowbit.quantize results (lowbit's packing), got '" + weight + "'");
  }
  if (!OnCuda(codes) || !OnCuda(scales) || (tensor_scale && !OnCuda(*tensor_scale))) {
    Fail("the weight's arrays must be on a CUDA device (move them with .cuda())");
  }
  const matmul::WeightView w = WeightsOf(kind, geometry, n, k, block, batch, codes, scales, std::nullopt, tensor_scale);
  std::string error;
  auto packed = cuda::PackedTensorCoreWeights::Pack(w, reinterpret_cast<void*>(stream), &error);
  if (packed == nullptr) Fail(error);
  return packed;
}

void TensorCoreGemv(cuda::PackedTensorCoreWeights& packed, const InArray& x, std::int64_t m, OutArray out,
                    const std::string& output, std::uintptr_t stream) {
  if (!OnCuda(x) || out.device_type() != nb::device::cuda::value) Fail("x and out must be on a CUDA device");
  CheckItem("x", x.itemsize(), 2);
  const matmul::OutputType out_type = OutputOf(output);
  CheckItem("out", out.itemsize(), matmul::OutputBytes(out_type));
  const std::int64_t rows = packed.batch() * m;
  if (m < 1 || static_cast<std::int64_t>(x.size()) != rows * packed.k()) {
    Fail("x holds " + std::to_string(x.size()) + " elements, the weight takes " + std::to_string(packed.batch()) +
         " x M x " + std::to_string(packed.k()) + " with M = " + std::to_string(m));
  }
  if (static_cast<std::int64_t>(out.size()) != rows * packed.n()) Fail("out does not hold batch x M x N elements");
  const std::string why = packed.Gemv(static_cast<const std::uint16_t*>(x.data()), m, out_type, out.data(),
                                      reinterpret_cast<void*>(stream));
  if (!why.empty()) Fail(why);
}
#endif

}  // namespace

void RegisterMatmul(nb::module_& m) {
#if defined(LOWBIT_PY_HAVE_CUDA)
  nb::class_<cuda::PackedTensorCoreWeights>(m, "PackedTensorCoreWeights",
                                            "NVFP4 / MX / FP8 per-channel weights packed once on a CUDA device "
                                            "(lowbit/cuda/tensor_core_gemv.h).")
      .def_prop_ro("n", &cuda::PackedTensorCoreWeights::n)
      .def_prop_ro("k", &cuda::PackedTensorCoreWeights::k)
      .def_prop_ro("batch", &cuda::PackedTensorCoreWeights::batch)
      .def("gemv", &TensorCoreGemv, "x"_a, "m"_a, "out"_a, "output"_a, "stream"_a,
           "y = x * W^T on the tensor cores, on `stream`.");
  m.def("pack_tensor_core_weight", &PackTensorCoreWeight, "weight"_a, "geometry"_a, "n"_a, "k"_a, "block"_a,
        "batch"_a, "codes"_a, "scales"_a, "tensor_scale"_a.none(), "stream"_a,
        "W packed once on the device for the tensor-core GEMV, on `stream`.");
#endif
  m.def("matmul", &Matmul, "operation"_a, "weight"_a, "geometry"_a, "n"_a, "k"_a, "block"_a, "batch"_a, "m"_a,
        "codes"_a, "scales"_a, "zeros"_a.none(), "tensor_scale"_a.none(), "x"_a, "activation"_a, "out"_a,
        "output"_a, "backend"_a, "stream"_a,
        "y = x * W^T through a matmul row (registry matmul_entry.h); returns the backend that ran.");
  m.def("matmul_rows", &MatmulRows, "Every matmul row of the registry.");
  m.def("matmul_weight_of_recipe", &MatmulWeightOfRecipe, "recipe"_a, "layout"_a,
        "A lowbit.quantize result's matmul weight kind (its canonical name), scale geometry and block; "
        "ValueError with the reason when no matmul row reads it.");
  m.def("matmul_weight_of_checkpoint", &MatmulWeightOfCheckpoint, "packing"_a, "scale_storage"_a,
        "The matmul weight kind (its canonical name) of GPTQ / AWQ words with FP16 / BF16 scales.");
  m.def("matmul_weight_kinds", &MatmulWeightKinds, "Every matmul weight kind (formats/matmul/weight_kind.h).");
}

}  // namespace lowbit::python
