// lowbit._lowbit: the nanobind extension under the Python package `lowbit`
// (python/lowbit/). Everything that computes goes through the registry
// (registry/include/lowbit/registry/registry.h: element conversions and
// recipe rows, each chosen by the registry for where its buffers are,
// registry/choose.h: the best SIMD row this CPU runs or the scalar model for
// host arrays, the CUDA rows on the caller's stream for CUDA arrays) or
// through the model's own functions (formats/include/lowbit/...)
// for what has no registry row: FP64 inputs, flags, profiles, explain. Names
// go through the one grammar (formats/include/lowbit/formats/recipe/names.h),
// so every error message is the CLI's.
//
// Buffers arrive C-contiguous from the Python layer (python/lowbit/_arrays.py
// makes strided inputs contiguous and allocates the outputs); this file
// checks what a kernel relies on (sizes, item sizes, device) before writing
// anything, and releases the GIL while a kernel runs. The registry is filled
// once at import and read-only afterwards (its Find results stay valid, see
// registry.h "Thread safety"), so calls from several threads are safe.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cuda_bridge.h"
#include "matmul_bindings.h"
#include "matmul_check_bindings.h"
#include "tensor_core_bindings.h"
#include "testing_bindings.h"
#include "lowbit/check/backends.h"
#include "lowbit/formats/convert.h"
#include "lowbit/formats/format_list.h"
#include "lowbit/formats/profiles/profiles.h"
#include "lowbit/formats/recipe/catalog.h"
#include "lowbit/formats/recipe/names.h"
#include "lowbit/formats/recipe/steps.h"
#include "lowbit/formats/recipe/tensor.h"
#include "lowbit/formats/recipe/trace_tensor.h"
#include "lowbit/formats/user_word.h"
#include "lowbit/registry/choose.h"
#include "lowbit/registry/parallel.h"
#include "lowbit/registry/registry.h"
#if defined(LOWBIT_PY_HAVE_REFERENCE)
#include "lowbit/reference/block/error_metrics.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace lowbit::python {
namespace {

using registry::ConvertArgs;
using registry::KernelEntry;
using registry::Operation;
using registry::Registry;

// Input arrays may be read-only; outputs must be writable (nanobind refuses a
// read-only array for these, and the Python layer says so first).
using InArray = nb::ndarray<nb::ro, nb::c_contig>;
using OutArray = nb::ndarray<nb::c_contig>;

[[noreturn]] void Fail(const std::string& message) { throw nb::value_error(message.c_str()); }

// ---- names, through the one grammar -----------------------------------------

FormatId FormatOrThrow(const std::string& name) {
  FormatId id{};
  std::string error;
  if (!recipe::ParseFormatName(name, &id, &error)) Fail(error);
  return id;
}

ProfileId ProfileOrThrow(const std::string& name) {
  ProfileId id{};
  std::string error;
  if (!recipe::ParseProfileName(name, &id, &error)) Fail(error);
  return id;
}

// The CLI's rounding words and message (rounding_mode_list.h, as tools/parse.cc
// ParseRoundingMode).
RoundingMode RoundingOrThrow(const std::string& name) {
  RoundingMode mode{};
  if (FindRoundingMode(name, &mode)) return mode;
  std::string known;
  for (RoundingMode m : kAllRoundingModes) known += (known.empty() ? "" : ", ") + std::string(RoundingModeName(m));
  Fail("unknown rounding mode " + QuoteUserWord(name) + " (known: " + known + ")");
}

// A recipe name (with an optional layout override in `layout`), as the CLI's
// ParseRecipeOrThrow (tools/quantize_command.cc) words it.
recipe::Target RecipeOrThrow(const std::string& name, const std::string& layout) {
  recipe::Target t;
  std::string error;
  if (!recipe::ParseTarget(name, &t, &error)) Fail(error + " (lowbit.recipes lists them)");
  if (t.kind != recipe::Target::Kind::kRecipe) {
    std::string recipes;
    for (const recipe::Recipe& r : recipe::kAllRecipes) {
      if (std::string(r.name) == Spec(t.format).name) recipes += (recipes.empty() ? "" : ", ") + recipe::RecipeName(r);
    }
    Fail(QuoteUserWord(name) + " names a format, not a recipe" +
         (recipes.empty() ? std::string(" (lowbit.recipes lists them)") : " (its recipes: " + recipes + ")"));
  }
  if (!layout.empty()) {
    if (name.find('/') != std::string::npos) {
      Fail("two layouts: " + QuoteUserWord(name.substr(name.find('/') + 1)) + " in the recipe name and layout=" +
           QuoteUserWord(layout) + " (give one)");
    }
    recipe::Layout l;
    if (!recipe::ParseLayout(layout, &l, &error)) Fail(error);
    if (!recipe::LayoutApplies(*t.recipe, l)) {
      Fail("layout " + QuoteUserWord(layout) + " does not apply to " + recipe::RecipeName(*t.recipe) +
           " (MX and NVFP4 keep their 1-D block of " + std::to_string(t.recipe->layout.size) + ")");
    }
    t.layout = l;
  }
  return t;
}

// ---- the registry, filled once; it chooses every row ------------------------------

const Registry& TheRegistry() {
  static Registry& registry = []() -> Registry& {
    Registry& reg = Registry::Global();
    check::RegisterAllBackends(reg);
    return reg;
  }();
  return registry;
}

// The host backend the registry chooses here ("simd:AVX2"), or "" when its
// choice is the scalar model (preference 0).
std::string HostBackend() {
  ConvertArgs probe;
  probe.operation = Operation::kEncodeF32;
  probe.format = FormatId::kE4m3;
  const KernelEntry* e = registry::ChooseConvertRow(TheRegistry(), probe, registry::Memory::kHost);
  return e != nullptr && e->preference > 0 ? e->backend : "";
}

// A CUDA array the registry has no row for: why (no CUDA build, no GPU), or
// `what` when CUDA is there.
[[noreturn]] void FailNoDeviceRow(const std::string& what) {
  const std::string why = CudaUnavailable();
  Fail(why.empty() ? what : why);
}

registry::StreamHandle StreamOf(std::uintptr_t stream) { return reinterpret_cast<registry::StreamHandle>(stream); }

// Runs a conversion on the row the registry chooses for where its buffers
// are: host rows on every core (registry/parallel.h), device rows on
// `args.stream`, asynchronously.
void RunRow(const ConvertArgs& args, registry::Memory memory) {
  const KernelEntry* e = registry::ChooseConvertRow(TheRegistry(), args, memory);
  if (e == nullptr) {
    const std::string what =
        std::string("no kernel for ") + registry::OperationName(args.operation) + " " + Spec(args.format).name;
    if (memory == registry::Memory::kDevice) FailNoDeviceRow(what + " on CUDA arrays with these options");
    Fail(what);
  }
  registry::Status st;
  {
    nb::gil_scoped_release release;
    st = memory == registry::Memory::kHost ? registry::RunParallel(*e, args) : e->run(args);
  }
  if (!st.ok) Fail(st.message);
}

// ---- buffer checks ------------------------------------------------------------

template <typename A>
bool OnCuda(const A& a) { return a.device_type() == nb::device::cuda::value; }

void CheckItemSize(const char* what, std::size_t itemsize, std::size_t want, const FormatSpec& spec) {
  if (itemsize != want) {
    throw nb::type_error((std::string(what) + ": " + spec.name + " needs " + std::to_string(want) +
                          "-byte elements, got " + std::to_string(itemsize) + "-byte ones")
                             .c_str());
  }
}

void CheckSameDevice(const InArray& a, const OutArray& b) {
  if (a.device_type() != b.device_type() || a.device_id() != b.device_id()) {
    Fail("input and output are on different devices");
  }
}

template <typename T>
void CheckCodesFit(const FormatSpec& spec, const T* codes, std::size_t n) {
  const std::uint64_t mask = spec.CodeMask();
  for (std::size_t k = 0; k < n; ++k) {
    if (static_cast<std::uint64_t>(codes[k]) > mask) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(codes[k]));
      char maxhex[24];
      std::snprintf(maxhex, sizeof maxhex, "0x%llx", static_cast<unsigned long long>(mask));
      Fail(std::string("code '") + hex + "' out of range for " + spec.name + " (" +
           std::to_string(spec.total_bits) + " bits, max " + maxhex + ") at index " + std::to_string(k));
    }
  }
}

std::uint64_t LoadUnsigned(const void* p, std::size_t bytes, std::size_t k) {
  switch (bytes) {
    case 1: return static_cast<const std::uint8_t*>(p)[k];
    case 2: return static_cast<const std::uint16_t*>(p)[k];
    case 4: return static_cast<const std::uint32_t*>(p)[k];
    default: return static_cast<const std::uint64_t*>(p)[k];
  }
}

void StoreUnsigned(void* p, std::size_t bytes, std::size_t k, std::uint64_t v) {
  switch (bytes) {
    case 1: static_cast<std::uint8_t*>(p)[k] = static_cast<std::uint8_t>(v); return;
    case 2: static_cast<std::uint16_t*>(p)[k] = static_cast<std::uint16_t>(v); return;
    case 4: static_cast<std::uint32_t*>(p)[k] = static_cast<std::uint32_t>(v); return;
    default: static_cast<std::uint64_t*>(p)[k] = v; return;
  }
}

// ---- encode / decode ------------------------------------------------------------

std::optional<Operation> EncodeOperation(FormatId from) {
  switch (from) {
    case FormatId::kFp32: return Operation::kEncodeF32;
    case FormatId::kBf16: return Operation::kEncodeBf16;
    case FormatId::kFp16: return Operation::kEncodeF16;
    default: return std::nullopt;
  }
}

// x (codes of `from`: fp64/fp32/fp16/bf16 bits) -> out (codes of `to`).
void Encode(const InArray& x, const std::string& from_name, OutArray out, const std::string& to_name,
            const std::string& rounding, bool saturate, const std::optional<std::string>& profile,
            std::optional<InArray> random_bits, int random_bit_count, std::optional<OutArray> flags,
            std::uintptr_t stream) {
  const FormatId from = FormatOrThrow(from_name);
  const FormatId to = FormatOrThrow(to_name);
  const FormatSpec& src = Spec(from);
  const FormatSpec& dst = Spec(to);
  if (from != FormatId::kFp64 && from != FormatId::kFp32 && from != FormatId::kFp16 && from != FormatId::kBf16) {
    throw nb::type_error(("the input type must be fp64, fp32, fp16 or bf16, got " + std::string(src.name)).c_str());
  }
  const RoundingMode mode = RoundingOrThrow(rounding);
  const std::size_t n = x.size();
  if (out.size() != n) Fail("out has " + std::to_string(out.size()) + " elements, the input " + std::to_string(n));
  CheckItemSize("input", x.itemsize(), registry::CodeBytes(src), src);
  CheckItemSize("out", out.itemsize(), registry::CodeBytes(dst), dst);
  CheckSameDevice(x, out);
  if (random_bit_count < 0 || random_bit_count > 32) {
    Fail("random_bit_count " + std::to_string(random_bit_count) + " outside 0..32");
  }
  // A count of random bits means stochastic rounding: with another mode or
  // a profile it would be ignored, so it is refused (as the CLI refuses
  // --random-bit-count; docs/bad-input.md "Contradictory options").
  if (random_bit_count != 0 && (profile || mode != RoundingMode::kStochastic)) {
    Fail("random_bit_count " + std::to_string(random_bit_count) + " needs rounding='stochastic' and no profile");
  }

  EncodeOptions options;
  options.rounding = mode;
  options.overflow = saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
  options.random_bit_count = random_bit_count;
  const std::uint32_t* rbits = nullptr;
  std::optional<ProfileId> pid;
  if (profile) {
    pid = ProfileOrThrow(*profile);
    if (saturate) Fail("saturate with a profile: the profile fixes the overflow policy");
    if (random_bits) Fail("random_bits with a profile: profiles take no random bits");
  } else if (mode == RoundingMode::kStochastic) {
    if (!random_bits) Fail("rounding='stochastic' needs random_bits (one uint32 per element)");
    if (random_bits->itemsize() != 4) throw nb::type_error("random_bits must be uint32");
    if (random_bits->size() != n) {
      Fail("random_bits has " + std::to_string(random_bits->size()) + " elements, the input " + std::to_string(n));
    }
    if (random_bits->device_type() != x.device_type()) Fail("random_bits is on another device than the input");
    rbits = static_cast<const std::uint32_t*>(random_bits->data());
  } else if (random_bits) {
    Fail("random_bits needs rounding='stochastic'");
  }
  if (flags) {
    if (flags->size() != n) Fail("flags must have one uint8 per element");
    if (flags->itemsize() != 1) throw nb::type_error("flags must be uint8");
  }

  // The registry's kernels: FP32/BF16/FP16 inputs, no flags, no profile;
  // CUDA tensors have no other path.
  const auto op = EncodeOperation(from);
  const bool on_cuda = OnCuda(x);
  if (on_cuda) {
    if (pid || flags) Fail("profile= and flags= run on the CPU only (the CUDA kernels return no flags)");
    if (!op) Fail("CUDA tensors: the input must be fp32, fp16 or bf16 (no FP64 kernel)");
  }
  if (op && !pid && !flags) {
    ConvertArgs args;
    args.operation = *op;
    args.format = to;
    args.input = x.data();
    args.output = out.data();
    args.count = n;
    args.encode = options;
    args.random_bits = rbits;
    if (on_cuda) args.stream = StreamOf(stream);
    if (const registry::Status st = registry::ValidateConvertArgs(args); !st.ok) Fail(st.message);
    RunRow(args, on_cuda ? registry::Memory::kDevice : registry::Memory::kHost);
    return;
  }

  // The model element by element: FP64 inputs (converted directly, never
  // through FP32), flags, profiles.
  if (pid) {  // does the profile have this conversion at all? (checked on one input before writing)
    EncodeResult probe;
    if (!ProfileEncode(*pid, src, 0, dst, mode, &probe)) {
      Fail(std::string("profile ") + ProfileName(*pid) + " has no conversion " + src.name + " -> " + dst.name +
           " with rounding " + rounding);
    }
  }
  const void* in = x.data();
  void* o = out.data();
  std::uint8_t* f = flags ? static_cast<std::uint8_t*>(flags->data()) : nullptr;
  const std::size_t in_bytes = registry::CodeBytes(src);
  const std::size_t out_bytes = registry::CodeBytes(dst);
  bool undefined = false;
  std::size_t undefined_at = 0;
  {
    nb::gil_scoped_release release;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t code = LoadUnsigned(in, in_bytes, k);
      EncodeResult r;
      if (pid) {
        if (!ProfileEncode(*pid, src, code, dst, mode, &r)) {
          if (!undefined) undefined_at = k;
          undefined = true;
          r = EncodeResult{};
        }
      } else {
        EncodeOptions e = options;
        if (rbits != nullptr) e.random_bits = rbits[k];
        r = Convert(src, code, dst, e);
      }
      StoreUnsigned(o, out_bytes, k, r.code);
      if (f != nullptr) f[k] = r.flags;
    }
  }
  if (undefined) {
    Fail(std::string("profile ") + ProfileName(*pid) + " leaves the result of input " + std::to_string(undefined_at) +
         " undefined (" + src.name + " -> " + dst.name + ")");
  }
}

// codes (of `from`) -> out (fp32 / bf16 / fp16 / fp64 bits).
void Decode(const InArray& codes, const std::string& from_name, OutArray out, const std::string& to_name,
            const std::optional<std::string>& profile, std::uintptr_t stream) {
  const FormatId from = FormatOrThrow(from_name);
  const FormatId to = FormatOrThrow(to_name);
  const FormatSpec& src = Spec(from);
  const FormatSpec& dst = Spec(to);
  if (to != FormatId::kFp64 && to != FormatId::kFp32 && to != FormatId::kFp16 && to != FormatId::kBf16) {
    throw nb::type_error(("dtype must be float64, float32, float16 or bfloat16, got " + std::string(dst.name)).c_str());
  }
  const std::size_t n = codes.size();
  if (out.size() != n) Fail("out has " + std::to_string(out.size()) + " elements, the codes " + std::to_string(n));
  CheckItemSize("codes", codes.itemsize(), registry::CodeBytes(src), src);
  CheckItemSize("out", out.itemsize(), registry::CodeBytes(dst), dst);
  CheckSameDevice(codes, out);
  std::optional<ProfileId> pid;
  if (profile) pid = ProfileOrThrow(*profile);

  const bool to_f32 = to == FormatId::kFp32;
  const bool to_bf16 = to == FormatId::kBf16 && registry::OperationApplies(Operation::kDecodeToBf16, from);
  if (OnCuda(codes)) {
    if (pid) Fail("profile= runs on the CPU only");
    if (!to_f32 && !to_bf16) Fail("CUDA tensors decode to float32, or to bfloat16 where it holds every value");
    const Operation op = to_f32 ? Operation::kDecodeToF32 : Operation::kDecodeToBf16;
    ConvertArgs args;
    args.operation = op;
    args.format = from;
    args.input = codes.data();
    args.output = out.data();
    args.count = n;
    args.stream = StreamOf(stream);
    if (const registry::Status st = registry::ValidateConvertArgs(args); !st.ok) Fail(st.message);
    RunRow(args, registry::Memory::kDevice);
    return;
  }

  switch (registry::CodeBytes(src)) {  // a kernel may assume the bits above the code are clear
    case 1: CheckCodesFit(src, static_cast<const std::uint8_t*>(codes.data()), n); break;
    case 2: CheckCodesFit(src, static_cast<const std::uint16_t*>(codes.data()), n); break;
    default: break;  // 32- and 64-bit codes use every bit
  }
  if (!pid && (to_f32 || to_bf16)) {
    ConvertArgs args;
    args.operation = to_f32 ? Operation::kDecodeToF32 : Operation::kDecodeToBf16;
    args.format = from;
    args.input = codes.data();
    args.output = out.data();
    args.count = n;
    if (const registry::Status st = registry::ValidateConvertArgs(args); !st.ok) Fail(st.message);
    RunRow(args, registry::Memory::kHost);
    return;
  }
  if (pid) {
    EncodeResult probe;
    if (!ProfileEncode(*pid, src, 0, dst, RoundingMode::kNearestEven, &probe)) {
      Fail(std::string("profile ") + ProfileName(*pid) + " has no conversion " + src.name + " -> " + dst.name);
    }
  }
  const std::size_t in_bytes = registry::CodeBytes(src);
  const std::size_t out_bytes = registry::CodeBytes(dst);
  const void* in = codes.data();
  void* o = out.data();
  {
    nb::gil_scoped_release release;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t code = LoadUnsigned(in, in_bytes, k);
      EncodeResult r;
      if (!pid || !ProfileEncode(*pid, src, code, dst, RoundingMode::kNearestEven, &r)) r = Convert(src, code, dst);
      StoreUnsigned(o, out_bytes, k, r.code);
    }
  }
}

// ---- tables: formats, profiles, recipes ------------------------------------------

nb::dict FormatInfo(FormatId id) {
  const FormatSpec& f = Spec(id);
  nb::dict d;
  d["name"] = f.name;
  d["bits"] = f.total_bits;
  d["kind"] = f.IsFloat() ? "float" : "integer";
  d["signed"] = f.has_sign;
  d["exponent_bits"] = f.exponent_bits;
  d["mantissa_bits"] = f.mantissa_bits;
  d["bias"] = f.bias;
  d["has_inf"] = f.HasInf();
  d["has_nan"] = f.HasNan();
  d["has_negative_zero"] = f.HasNegativeZero();
  d["has_zero"] = f.HasZero();
  d["max_code"] = f.MaxFiniteCode();
  d["ml_dtypes_name"] = f.ml_dtypes_name != nullptr ? nb::cast(std::string(f.ml_dtypes_name)) : nb::none();
  if (f.IsFloat()) {
    d["max"] = DecodeToF64(f, f.MaxFiniteCode());
    // Smallest normal: exponent field 1 (E8M0: field 0 is a normal, 2^-bias).
    const std::uint64_t normal_field = f.has_subnormals ? 1 : 0;
    d["smallest_normal"] = DecodeToF64(f, normal_field << f.mantissa_bits);
    d["smallest_subnormal"] =
        f.has_subnormals && f.mantissa_bits > 0 ? nb::cast(DecodeToF64(f, 1)) : nb::none();
  } else {
    d["max"] = static_cast<double>(f.IntMax());
    d["min"] = static_cast<double>(f.IntMin());
    d["smallest_normal"] = nb::none();
    d["smallest_subnormal"] = nb::none();
  }
  // Special codes, found by decoding every code (formats of at most 16 bits).
  nb::list nan_codes, inf_codes;
  if (f.IsFloat() && f.total_bits <= 16) {
    for (std::uint64_t c = 0; c <= f.CodeMask(); ++c) {
      const double v = DecodeToF64(f, c);
      if (std::isnan(v)) nan_codes.append(c);
      if (std::isinf(v)) inf_codes.append(c);
    }
  }
  d["nan_codes"] = nan_codes;
  d["inf_codes"] = inf_codes;
  return d;
}

nb::list FormatTable() {
  nb::list l;
  for (FormatId id : kAllFormats) l.append(FormatInfo(id));
  return l;
}

nb::list ProfileTable() {
  nb::list l;
  for (ProfileId id : kAllProfiles) {
    nb::dict d;
    d["name"] = ProfileName(id);
    d["source"] = ProfileSource(id);
    l.append(d);
  }
  return l;
}

nb::dict RecipeInfo(const recipe::Recipe& r, const recipe::Layout& layout) {
  nb::dict d;
  d["name"] = recipe::RecipeName(r);
  d["format"] = r.name;
  d["profile"] = r.profile;
  d["source"] = r.source;
  d["family"] = recipe::FamilyName(r.family());
  d["element"] = r.element.name;
  d["scale_format"] = r.scale_format.name;
  d["scale_rule"] = recipe::ScaleRuleName(r.scale_rule);
  d["layout"] = recipe::LayoutName(layout);
  d["block_size"] = layout.size;
  d["packing"] = recipe::PackingName(r.packing);
  d["zero_point"] = r.zero_point == recipe::ZeroPoint::kInteger;
  d["tensor_scale"] = r.tensor_scale != recipe::TensorScaleRule::kNone;
  return d;
}

nb::list RecipeTable() {
  nb::list l;
  for (const recipe::Recipe& r : recipe::kAllRecipes) l.append(RecipeInfo(r, r.layout));
  return l;
}

// What a name means: {"kind": "format", "format": ..., "profile": ...} or
// {"kind": "recipe", ...RecipeInfo}.
nb::dict ParseName(const std::string& name) {
  recipe::Target t;
  std::string error;
  if (!recipe::ParseTarget(name, &t, &error)) Fail(error);
  if (t.kind == recipe::Target::Kind::kRecipe) {
    nb::dict d = RecipeInfo(*t.recipe, t.layout);
    d["kind"] = "recipe";
    d["canonical"] = recipe::CanonicalName(t);
    return d;
  }
  nb::dict d;
  d["kind"] = "format";
  d["format"] = Spec(t.format).name;
  d["profile"] = t.profile ? nb::cast(std::string(ProfileName(*t.profile))) : nb::none();
  return d;
}

// ---- recipes: quantize / dequantize through the registry's recipe rows ------

// The recipe row the registry chooses for host buffers (registry/choose.h):
// the best SIMD row this CPU runs where it takes the call, else the scalar
// row (the model), which takes any layout the recipe allows and given scales.
const registry::RecipeEntry* HostRecipeRow(const registry::RecipeArgs& args) {
  const registry::RecipeEntry* e = registry::ChooseRecipeRow(TheRegistry(), args, registry::Memory::kHost);
  if (e == nullptr) Fail("no kernel row for " + registry::RecipeRowName(args.target));
  return e;
}

nb::dict BufferSizes(const std::string& name, const std::string& layout, std::size_t rows, std::size_t cols) {
  const recipe::Target t = RecipeOrThrow(name, layout);
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(t, rows, cols);
  if (!b.ok) Fail(b.error + " (shape " + std::to_string(rows) + "x" + std::to_string(cols) + ", layout " +
                  recipe::LayoutName(t.layout) + ")");
  nb::dict d = RecipeInfo(*t.recipe, t.layout);
  d["canonical"] = recipe::CanonicalName(t);
  d["code_bytes"] = b.sizes.code_bytes;
  d["scale_codes"] = b.sizes.scale_codes;
  d["scales"] = b.sizes.scales;
  d["zero_points"] = b.sizes.zero_points;
  d["tensor_scales"] = b.sizes.tensor_scales;
  return d;
}

template <typename T>
T* BufferOrNull(std::optional<OutArray>& a, long want, const char* what) {
  if (want == 0) return nullptr;
  if (!a || static_cast<long>(a->size()) != want || a->itemsize() != sizeof(T)) {
    Fail(std::string(what) + ": expected " + std::to_string(want) + " elements of " + std::to_string(sizeof(T)) +
         " bytes");
  }
  return static_cast<T*>(a->data());
}

template <typename T>
const T* ConstBufferOrNull(const std::optional<InArray>& a, long want, const char* what) {
  if (want == 0) return nullptr;
  if (!a || static_cast<long>(a->size()) != want || a->itemsize() != sizeof(T)) {
    Fail(std::string(what) + ": expected " + std::to_string(want) + " elements of " + std::to_string(sizeof(T)) +
         " bytes");
  }
  return static_cast<const T*>(a->data());
}

// tensor_scale: (encode, decode) of the TensorScale, written or read.
// CUDA arrays: every buffer given must be on x's device.
template <typename A>
void CheckSameDeviceAll(const InArray& x, std::initializer_list<const std::optional<A>*> arrays) {
  for (const std::optional<A>* a : arrays) {
    if (*a && ((*a)->device_type() != x.device_type() || (*a)->device_id() != x.device_id())) {
      Fail("the buffers of a quantized CUDA tensor must all be on the input's device");
    }
  }
}

// A recipe on CUDA buffers: the device row the registry chooses, in place,
// asynchronously on the caller's stream.
void RunCudaRecipe(registry::RecipeArgs args, std::uintptr_t stream) {
  if (const registry::Status st = registry::ValidateRecipeArgs(args); !st.ok) Fail(st.message);
  args.stream = StreamOf(stream);
  const char* cpu = " (the CPU path takes every recipe and layout: move the tensor to the CPU)";
  const registry::RecipeEntry* row = registry::ChooseRecipeRow(TheRegistry(), args, registry::Memory::kDevice);
  if (row == nullptr) {
    FailNoDeviceRow("cuda: no GPU kernel for " + std::string(registry::RecipeOperationName(args.operation)) + " " +
                    recipe::CanonicalName(args.target) + cpu);
  }
  registry::Status st;
  {
    nb::gil_scoped_release release;
    st = row->run(args);
  }
  if (!st.ok) Fail(st.message + cpu);
}

void Quantize(const InArray& x, std::size_t rows, std::size_t cols, const std::string& name,
              const std::string& layout, OutArray codes, std::optional<OutArray> scale_codes,
              std::optional<OutArray> scales, std::optional<OutArray> zero_points,
              std::optional<OutArray> tensor_scale, std::optional<double> given_tensor_amax,
              std::uintptr_t stream, std::optional<InArray> given_scale) {
  const recipe::Target t = RecipeOrThrow(name, layout);
  const recipe::Recipe& r = *t.recipe;
  if (x.itemsize() != 4) throw nb::type_error("quantize takes float32 input");
  if (x.size() != rows * cols) Fail("x has " + std::to_string(x.size()) + " elements, not rows * cols");
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(t, rows, cols);
  if (!b.ok) Fail(b.error + " (shape " + std::to_string(rows) + "x" + std::to_string(cols) + ", layout " +
                  recipe::LayoutName(t.layout) + ")");
  std::optional<OutArray> codes_opt(codes);
  recipe::QuantizedTensor q;
  q.codes = BufferOrNull<std::uint8_t>(codes_opt, b.sizes.code_bytes, "codes");
  q.scale_codes = BufferOrNull<std::uint8_t>(scale_codes, b.sizes.scale_codes, "scale_codes");
  q.scales = BufferOrNull<float>(scales, b.sizes.scales, "scales");
  q.zero_points = BufferOrNull<std::int32_t>(zero_points, b.sizes.zero_points, "zero_points");
  float* ts = BufferOrNull<float>(tensor_scale, 2 * b.sizes.tensor_scales, "tensor_scale");
  recipe::TensorScale tscale;
  q.tensor_scale = ts != nullptr ? &tscale : nullptr;
  const float* xp = static_cast<const float*>(x.data());

  if (OnCuda(x)) {
    // Every buffer on x's device; the recipe's CUDA kernels write them in
    // place on the caller's stream (RunCudaRecipe).
    if (given_tensor_amax) Fail("tensor_scale= (a calibrated tensor amax) runs on the CPU only");
    if (given_scale) {
      Fail("given_scale= runs on the CPU only: the CUDA recipe rows derive every scale from x (quantize a CPU "
           "array, where the scalar row takes it)");
    }
    CheckSameDeviceAll(x, {&codes_opt, &scale_codes, &scales, &zero_points, &tensor_scale});
    registry::RecipeArgs args;
    args.operation = registry::RecipeOperation::kQuantizeRecipe;
    args.target = t;
    args.rows = rows;
    args.cols = cols;
    args.x = xp;
    args.q = q;
    args.q.tensor_scale = reinterpret_cast<recipe::TensorScale*>(ts);  // device: encode, decode
    RunCudaRecipe(args, stream);
    return;
  }

  if (given_tensor_amax) {
    // A calibrated tensor amax: the model's steps with that tensor scale
    // (recipe/tensor.h QuantizeTensor, whose tensor scale comes from x).
    if (r.tensor_scale == recipe::TensorScaleRule::kNone) {
      Fail(recipe::RecipeName(r) + " has no tensor-level scale (tensor_scale applies to NVFP4 recipes)");
    }
    const float amax = static_cast<float>(*given_tensor_amax);
    if (std::isnan(amax) || amax < 0.0f) Fail("tensor_scale: the tensor amax must be a number >= 0");
    nb::gil_scoped_release release;
    recipe::GroupGrid g;
    recipe::MakeGroupGrid(r, t.layout, static_cast<long>(rows), static_cast<long>(cols), &g);
    tscale = recipe::ChooseTensorScale(r, amax);
    if (r.packing != recipe::Packing::kOnePerByte) std::memset(q.codes, 0, static_cast<std::size_t>(b.sizes.code_bytes));
    for (long group = 0; group < g.Count(); ++group) {
      recipe::GroupStats stats = recipe::EmptyStats();
      recipe::ForEachInGroup(g, group, [&](long k) { stats = recipe::Accumulate(r, stats, xp[k]); });
      const recipe::BlockScale s = recipe::ChooseScale(r, stats, tscale);
      recipe::StoreScale(r, q, group, s);
      recipe::ForEachInGroup(g, group, [&](long k) {
        recipe::StoreCode(r.packing, q.codes, k, recipe::EncodeElement(r, s, xp[k]));
      });
    }
  } else {
    registry::RecipeArgs args;
    args.operation = registry::RecipeOperation::kQuantizeRecipe;
    args.target = t;
    args.rows = rows;
    args.cols = cols;
    args.x = xp;
    args.q = q;
    if (given_scale) {
      // Given (static) scales: float32, each finite and > 0 (a zero,
      // negative, infinite or NaN scale gives no codes vLLM's kernels would),
      // one for every group or one per group. ValidateRecipeArgs refuses a
      // recipe that takes none and a count that is neither.
      if (given_scale->itemsize() != sizeof(float)) throw nb::type_error("given_scale must be float32");
      const float* gs = static_cast<const float*>(given_scale->data());
      for (std::size_t i = 0; i < given_scale->size(); ++i) {
        if (!std::isfinite(gs[i]) || !(gs[i] > 0.0f)) {
          Fail("given_scale[" + std::to_string(i) + "] is " + std::to_string(gs[i]) +
               ": a given scale must be a finite number > 0");
        }
      }
      if (given_scale->size() == 0) Fail("given_scale is empty (give 1 scale, or one per group)");
      args.given_scale = gs;
      args.given_scale_count = given_scale->size();
    }
    if (const registry::Status st = registry::ValidateRecipeArgs(args); !st.ok) Fail(st.message);
    // The SIMD rows refuse given scales (their kernels derive every scale
    // from x, RecipeEntry::supports): the registry then chooses the scalar row.
    const registry::RecipeEntry* row = HostRecipeRow(args);
    registry::Status st;
    {
      nb::gil_scoped_release release;
      st = registry::RunParallel(*row, args);
    }
    if (!st.ok) Fail(st.message);
  }
  if (ts != nullptr) {
    ts[0] = tscale.encode;
    ts[1] = tscale.decode;
  }
}

void Dequantize(std::size_t rows, std::size_t cols, const std::string& name, const std::string& layout,
                const InArray& codes, std::optional<InArray> scale_codes, std::optional<InArray> scales,
                std::optional<InArray> zero_points, std::optional<InArray> tensor_scale, OutArray out,
                std::uintptr_t stream) {
  const recipe::Target t = RecipeOrThrow(name, layout);
  if (out.itemsize() != 4 || out.size() != rows * cols) Fail("out must be float32 with rows * cols elements");
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(t, rows, cols);
  if (!b.ok) Fail(b.error);
  std::optional<InArray> codes_opt(codes);
  recipe::ConstQuantizedTensor cq;
  cq.codes = ConstBufferOrNull<std::uint8_t>(codes_opt, b.sizes.code_bytes, "codes");
  cq.scale_codes = ConstBufferOrNull<std::uint8_t>(scale_codes, b.sizes.scale_codes, "scale_codes");
  cq.scales = ConstBufferOrNull<float>(scales, b.sizes.scales, "scales");
  cq.zero_points = ConstBufferOrNull<std::int32_t>(zero_points, b.sizes.zero_points, "zero_points");
  const float* ts = ConstBufferOrNull<float>(tensor_scale, 2 * b.sizes.tensor_scales, "tensor_scale");
  const bool on_cuda = OnCuda(codes);
  if (on_cuda) {
    CheckSameDeviceAll(codes, {&scale_codes, &scales, &zero_points, &tensor_scale});
    if (out.device_type() != codes.device_type() || out.device_id() != codes.device_id()) {
      Fail("out must be on the codes' device");
    }
  }
  recipe::TensorScale tscale;
  if (ts != nullptr && !on_cuda) tscale = {ts[0], ts[1]};
  // The row takes a mutable view (one struct for both directions); the
  // dequantize rows only read it.
  registry::RecipeArgs args;
  args.operation = registry::RecipeOperation::kDequantizeRecipe;
  args.target = t;
  args.rows = rows;
  args.cols = cols;
  args.q.codes = const_cast<std::uint8_t*>(cq.codes);
  args.q.scale_codes = const_cast<std::uint8_t*>(cq.scale_codes);
  args.q.scales = const_cast<float*>(cq.scales);
  args.q.zero_points = const_cast<std::int32_t*>(cq.zero_points);
  args.q.tensor_scale = ts != nullptr ? &tscale : nullptr;
  args.out = static_cast<float*>(out.data());
  if (on_cuda) {
    args.q.tensor_scale = const_cast<recipe::TensorScale*>(reinterpret_cast<const recipe::TensorScale*>(ts));
    RunCudaRecipe(args, stream);
    return;
  }
  if (const registry::Status st = registry::ValidateRecipeArgs(args); !st.ok) Fail(st.message);
  const registry::RecipeEntry* row = HostRecipeRow(args);
  registry::Status st;
  {
    nb::gil_scoped_release release;
    st = registry::RunParallel(*row, args);
  }
  if (!st.ok) Fail(st.message);
}

// The exact error metrics of `lowbit quantize` (the oracle's rationals).
nb::dict ErrorMetrics(const InArray& x, const InArray& y) {
  if (x.itemsize() != 4 || y.itemsize() != 4 || x.size() != y.size()) Fail("error metrics take two float32 arrays of one size");
#if defined(LOWBIT_PY_HAVE_REFERENCE)
  const float* a = static_cast<const float*>(x.data());
  const float* c = static_cast<const float*>(y.data());
  std::vector<float> xv(a, a + x.size()), yv(c, c + y.size());
  reference::block::ErrorMetrics m;
  {
    nb::gil_scoped_release release;
    m = reference::block::ExactErrorMetrics(xv, yv);
  }
  nb::dict d;
  d["count"] = m.count;
  d["non_finite"] = m.non_finite;
  d["mse"] = m.mse.convert_to<double>();
  d["sqnr_db"] = m.sqnr_db;
  d["max_abs_error"] = m.max_abs_error.convert_to<double>();
  d["max_rel_error"] = m.max_rel_error.convert_to<double>();
  d["mse_exact"] = m.mse.str();
  d["max_abs_error_exact"] = m.max_abs_error.str();
  d["max_rel_error_exact"] = m.max_rel_error.str();
  return d;
#else
  Fail("this build has no oracle (lowbit::reference, Boost headers): exact error metrics are unavailable");
#endif
}

// ---- trace: the model's walk of each block / group as data -------------------

// The model's trace (recipe/trace_tensor.h TraceTensorOf) of the values as
// one row, as `lowbit explain` walks them, field by field: lowbit.explain
// only renders it.
nb::dict Trace(const InArray& x, const std::string& name) {
  const recipe::Target t = RecipeOrThrow(name, "");
  const recipe::Recipe& r = *t.recipe;
  if (x.itemsize() != 4) throw nb::type_error("explain takes float32 values");
  const long n = static_cast<long>(x.size());
  recipe::TraceTensor trace;
  const recipe::TensorStatus st =
      recipe::TraceTensorOf(r, t.layout, static_cast<const float*>(x.data()), 1, n, &trace);
  if (st != recipe::TensorStatus::kOk) Fail(recipe::TensorStatusText(st));
  nb::dict out = RecipeInfo(r, t.layout);
  out["tensor_scale_encode"] = trace.tensor_scale.encode;
  out["tensor_scale_decode"] = trace.tensor_scale.decode;
  nb::list groups;
  for (const recipe::TraceBlock& b : trace.blocks) {
    nb::dict d;
    d["index"] = b.index;
    d["amax"] = b.stats.amax;
    d["min"] = b.stats.min;
    d["max"] = b.stats.max;
    d["rule_value"] = b.scale.rule_value;
    d["scale_code"] = r.family() == recipe::Family::kScaled ? nb::none() : nb::cast(static_cast<int>(b.scale.code));
    d["scale_exponent"] = r.family() == recipe::Family::kMx ? nb::cast(b.scale.exponent) : nb::none();
    d["scale"] = b.scale.decode;
    d["factor"] = b.scale.factor;
    d["zero_point"] = b.scale.zero_point;
    std::vector<long> elements;
    std::vector<float> inputs, scaled, dequantized;
    std::vector<int> codes;
    for (const recipe::TraceElement& e : b.elements) {
      elements.push_back(e.index);
      inputs.push_back(e.input);
      scaled.push_back(e.scaled);
      codes.push_back(e.code);
      dequantized.push_back(e.decoded);
    }
    d["elements"] = elements;
    d["inputs"] = inputs;
    d["scaled"] = scaled;
    d["codes"] = codes;
    d["dequantized"] = dequantized;
    groups.append(d);
  }
  out["groups"] = groups;
  return out;
}

// The packed element codes of a quantized tensor, one per element (the
// model's LoadCode for the recipe's packing).
void UnpackCodes(const std::string& name, const std::string& layout, const InArray& packed, OutArray out) {
  const recipe::Target t = RecipeOrThrow(name, layout);
  const long n = static_cast<long>(out.size());
  if (out.itemsize() != 1) throw nb::type_error("out must be uint8");
  if (packed.itemsize() != 1 || static_cast<long>(packed.size()) != recipe::PackedBytes(t.recipe->packing, n)) {
    Fail("packed codes: expected " + std::to_string(recipe::PackedBytes(t.recipe->packing, n)) + " bytes for " +
         std::to_string(n) + " elements");
  }
  const auto* p = static_cast<const std::uint8_t*>(packed.data());
  auto* o = static_cast<std::uint8_t*>(out.data());
  nb::gil_scoped_release release;
  for (long k = 0; k < n; ++k) o[k] = recipe::LoadCode(t.recipe->packing, p, k);
}

// For the tests: one named registry row ("scalar", "simd:AVX2", ...) on
// flat contiguous buffers, so that the package's results (shapes, strides,
// dtypes, row choice) can be compared with a row chosen by hand.
void RunNamedRow(const std::string& operation, const std::string& format, const std::string& backend,
                 const InArray& input, OutArray output, const std::string& rounding, bool saturate) {
  std::optional<Operation> op;
  for (const registry::OperationInfo& info : registry::kOperationInfo) {
    if (operation == info.name) op = info.operation;
  }
  if (!op) Fail("unknown operation " + QuoteUserWord(operation));
  ConvertArgs args;
  args.operation = *op;
  args.format = FormatOrThrow(format);
  args.input = input.data();
  args.output = output.data();
  args.count = input.size();
  args.encode.rounding = RoundingOrThrow(rounding);
  args.encode.overflow = saturate ? Overflow::kSaturate : Overflow::kFormatDefault;
  if (output.size() != input.size() ||
      input.itemsize() != registry::InputBytes(*op, args.format) ||
      output.itemsize() != registry::OutputBytes(*op, args.format)) {
    Fail("buffers do not fit " + operation + " " + format);
  }
  const KernelEntry* e = TheRegistry().Find(*op, args.format, backend);
  if (e == nullptr) Fail("no row (" + operation + ", " + format + ", " + backend + ")");
  if (!e->available() || !e->supports(args)) Fail("row " + backend + " cannot run these options here");
  registry::Status st = e->run(args);
  if (!st.ok) Fail(st.message);
}

// The recipe rows of the registry by backend name, for the tests.
void RunNamedRecipeRow(const std::string& name, const std::string& backend, const InArray& x, std::size_t rows,
                       std::size_t cols, OutArray codes, std::optional<OutArray> scale_codes,
                       std::optional<OutArray> scales, std::optional<OutArray> zero_points,
                       std::optional<OutArray> tensor_scale) {
  const recipe::Target t = RecipeOrThrow(name, "");
  const registry::RecipeBuffers b = registry::RecipeBufferSizes(t, rows, cols);
  if (!b.ok) Fail(b.error);
  std::optional<OutArray> codes_opt(codes);
  registry::RecipeArgs args;
  args.operation = registry::RecipeOperation::kQuantizeRecipe;
  args.target = t;
  args.rows = rows;
  args.cols = cols;
  if (x.itemsize() != 4 || x.size() != rows * cols) Fail("x must be float32 rows * cols");
  args.x = static_cast<const float*>(x.data());
  args.q.codes = BufferOrNull<std::uint8_t>(codes_opt, b.sizes.code_bytes, "codes");
  args.q.scale_codes = BufferOrNull<std::uint8_t>(scale_codes, b.sizes.scale_codes, "scale_codes");
  args.q.scales = BufferOrNull<float>(scales, b.sizes.scales, "scales");
  args.q.zero_points = BufferOrNull<std::int32_t>(zero_points, b.sizes.zero_points, "zero_points");
  float* ts = BufferOrNull<float>(tensor_scale, 2 * b.sizes.tensor_scales, "tensor_scale");
  recipe::TensorScale tscale;
  args.q.tensor_scale = ts != nullptr ? &tscale : nullptr;
  const registry::RecipeEntry* e = TheRegistry().FindRecipe(args.operation, registry::RecipeRowName(t), backend);
  if (e == nullptr) Fail("no recipe row (" + registry::RecipeRowName(t) + ", " + backend + ")");
  if (!e->available()) Fail("recipe row " + backend + " is not available here");
  registry::Status st = e->run(args);
  if (!st.ok) Fail(st.message);
  if (ts != nullptr) {
    ts[0] = tscale.encode;
    ts[1] = tscale.decode;
  }
}

std::vector<std::string> RecipeRowNames() { return registry::AllRecipeNames(); }

// The recipe rows one backend registered, as (operation, recipe) pairs
// ("quantize-recipe", "mxfp4:ocp"): which recipes a CUDA tensor runs on the
// GPU, for the tests.
std::vector<std::pair<std::string, std::string>> RecipeRowsOf(const std::string& backend) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const registry::RecipeEntry& e : TheRegistry().RecipeEntries()) {
    if (e.backend == backend) rows.emplace_back(registry::RecipeOperationName(e.operation), e.recipe);
  }
  return rows;
}

nb::dict BuildInfo() {
  nb::dict d;
  const std::string host_backend = HostBackend();
  std::vector<std::string> libs = check::BuiltBackendLibraries();
  d["backends"] = libs;
  d["simd_backend"] = host_backend.empty() ? nb::none() : nb::cast(host_backend);
  d["cuda"] = CudaBuilt();
  d["cuda_devices"] = CudaDeviceCount();
#if defined(LOWBIT_PY_HAVE_REFERENCE)
  d["oracle"] = true;
#else
  d["oracle"] = false;
#endif
  d["registry_rows"] = TheRegistry().Entries().size();
  d["recipe_rows"] = TheRegistry().RecipeEntries().size();
  return d;
}

}  // namespace
}  // namespace lowbit::python

NB_MODULE(_lowbit, m) {
  using namespace lowbit::python;
  m.doc() = "lowbit's extension: the registry, the model and the backends (use the `lowbit` package).";
  RegisterTesting(m);  // lowbit.testing: check_outputs (testing_bindings.cc)
  RegisterMatmul(m);   // lowbit.gemv / lowbit.matmul (matmul_bindings.cc)
  RegisterTensorCore(m);  // lowbit.mma / lowbit.matmul_model (tensor_core_bindings.cc)
  RegisterMatmulCheck(m);  // lowbit.testing.check_matmul (matmul_check_bindings.cc)
  m.def("build_info", &BuildInfo, "What this build has: backends, the SIMD target, CUDA.");
  m.def("format_table", &FormatTable, "Every element format with its properties.");
  m.def("profile_table", &ProfileTable, "Every profile with its source.");
  m.def("recipe_table", &RecipeTable, "Every recipe of the catalog with its default layout.");
  m.def("parse_name", &ParseName, "name"_a, "What a format / recipe name means (the one grammar).");
  m.def("encode", &Encode, "x"_a, "from_format"_a, "out"_a, "to_format"_a, "rounding"_a, "saturate"_a,
        "profile"_a.none(), "random_bits"_a.none(), "random_bit_count"_a, "flags"_a.none(), "stream"_a,
        "Encodes x (fp64/fp32/fp16/bf16 bits) into out (codes).");
  m.def("decode", &Decode, "codes"_a, "from_format"_a, "out"_a, "to_format"_a, "profile"_a.none(), "stream"_a,
        "Decodes codes into out (fp32/bf16/fp16/fp64 bits).");
  m.def("buffer_sizes", &BufferSizes, "recipe"_a, "layout"_a, "rows"_a, "cols"_a,
        "The buffers of a quantized [rows, cols] tensor.");
  m.def("quantize", &Quantize, "x"_a, "rows"_a, "cols"_a, "recipe"_a, "layout"_a, "codes"_a,
        "scale_codes"_a.none(), "scales"_a.none(), "zero_points"_a.none(), "tensor_scale"_a.none(),
        "tensor_amax"_a.none(), "stream"_a = 0,
        "given_scale"_a.none() = nb::none(),
        "Quantizes x through the recipe row the registry chooses (CUDA arrays: its CUDA row, on `stream`). "
        "given_scale: float32 stored scales (1, or one per group; vLLM FP8 recipes only), which only the "
        "scalar row takes.");
  m.def("dequantize", &Dequantize, "rows"_a, "cols"_a, "recipe"_a, "layout"_a, "codes"_a,
        "scale_codes"_a.none(), "scales"_a.none(), "zero_points"_a.none(), "tensor_scale"_a.none(),
        "out"_a, "stream"_a = 0,
        "Dequantizes through the recipe row the registry chooses (CUDA arrays: its CUDA row, on `stream`).");
  m.def("error_metrics", &ErrorMetrics, "x"_a, "y"_a, "The exact error metrics (the oracle's).");
  m.def("unpack_codes", &UnpackCodes, "recipe"_a, "layout"_a, "packed"_a, "out"_a,
        "One code per element from a recipe's packing.");
  m.def("run_row", &RunNamedRow, "operation"_a, "format"_a, "backend"_a, "input"_a, "output"_a, "rounding"_a,
        "saturate"_a, "Tests: one named registry row on flat buffers.");
  m.def("run_recipe_row", &RunNamedRecipeRow, "recipe"_a, "backend"_a, "x"_a, "rows"_a, "cols"_a, "codes"_a,
        "scale_codes"_a.none(), "scales"_a.none(), "zero_points"_a.none(), "tensor_scale"_a.none(),
        "Tests: one named recipe row (quantize).");
  m.def("recipe_row_names", &RecipeRowNames, "The recipe names the registry has rows for.");
  m.def("recipe_rows_of", &RecipeRowsOf, "backend"_a,
        "The (operation, recipe) pairs of one backend's recipe rows (\"cuda\": what CUDA tensors run).");
  m.attr("FLAG_INEXACT") = static_cast<int>(lowbit::kFlagInexact);
  m.attr("FLAG_UNDERFLOW") = static_cast<int>(lowbit::kFlagUnderflow);
  m.attr("FLAG_OVERFLOW") = static_cast<int>(lowbit::kFlagOverflow);
  m.attr("FLAG_INVALID") = static_cast<int>(lowbit::kFlagInvalid);
  m.def("trace", &Trace, "values"_a, "recipe"_a, "The model's trace of each block, as data.");
}
