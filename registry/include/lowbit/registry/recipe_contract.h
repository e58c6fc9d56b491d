// The recipe row contract: which (recipe, layout, operation, backend) rows
// the registry must hold, written once as data (kRecipeRowContract), so that
// a test fails when a catalog recipe (formats/spec/.../recipe/catalog.h
// kAllRecipes) lacks a row it should have, or a row exists that the contract
// does not list (docs/design.md "Everything that computes is a registry
// entry"). Rules are per backend library: "scalar" (the model), "simd" (each
// compiled Highway target, backend "simd:<TARGET>") and "cuda" (backend
// "cuda"; its rows are registered without a GPU too, as unavailable).
//
// The registry does not depend on these backends: the contract names them as
// data, and the caller says which libraries the build has
// (lowbit::check::BuiltBackendLibraries).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lowbit/formats/recipe/recipe.h"
#include "lowbit/registry/recipe_entry.h"

namespace lowbit::registry {

class Registry;

// The layouts each scaled recipe is listed with (AllRecipeNames): per group
// of 128 along K (INT4-g128, the weight-only layout of torchao, GPTQ and AWQ
// by default; also per-group INT8 / FP8), per row (per-channel weights,
// per-token activations) and per tensor (TE current scaling, torchao
// per-tensor). MX and NVFP4 recipes are listed with their own block layout.
inline constexpr recipe::Layout kListedScaledLayouts[] = {
    {recipe::Geometry::kGroup, 128, 0}, {recipe::Geometry::kPerRow, 0, 0}, {recipe::Geometry::kPerTensor, 0, 0}};

enum class BackendLibrary : std::uint8_t { kScalar, kSimd, kCuda };
// "scalar", "simd", "cuda": the names lowbit::check::BuiltBackendLibraries uses.
const char* BackendLibraryName(BackendLibrary library);

// Which element kind a rule covers (scaled recipes: INT vs FP8).
enum class ElementKind : std::uint8_t { kAny, kInteger, kFloat };

// A set of layouts as bits of recipe::Geometry: the block layout of MX /
// NVFP4 recipes is kBlock1d; the scaled layouts are kListedScaledLayouts'.
constexpr unsigned GeometryBit(recipe::Geometry g) { return 1u << static_cast<unsigned>(g); }
inline constexpr unsigned kBlockLayout = GeometryBit(recipe::Geometry::kBlock1d);
inline constexpr unsigned kGroupLayout = GeometryBit(recipe::Geometry::kGroup);
inline constexpr unsigned kRowLayout = GeometryBit(recipe::Geometry::kPerRow);
inline constexpr unsigned kTensorLayout = GeometryBit(recipe::Geometry::kPerTensor);
inline constexpr unsigned kEveryListedLayout = kBlockLayout | kGroupLayout | kRowLayout | kTensorLayout;

// One rule: `library` has rows for every catalog recipe of `family` (and
// `profile`, when given; `element` kind) in the listed layouts of `layouts`,
// for the operations marked. A row is required when any rule of its library
// requires it.
struct RecipeRowRule {
  BackendLibrary library;
  recipe::Family family;
  const char* profile;  // nullptr: every profile of the family
  ElementKind element;
  unsigned layouts;
  bool quantize;
  bool dequantize;
};

// What exists today, as the contract. Where a backend has no row for a
// recipe, the comment says why that is deliberate.
inline constexpr RecipeRowRule kRecipeRowContract[] = {
    // The model: every recipe in every listed layout, both ways
    // (registry/src/scalar_recipes.cc). The rows every other is checked with.
    {BackendLibrary::kScalar, recipe::Family::kMx, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    {BackendLibrary::kScalar, recipe::Family::kNvfp4, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    {BackendLibrary::kScalar, recipe::Family::kScaled, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    // SIMD: every recipe as the model has it, on each compiled target
    // (simd/src/register_simd_recipes.cc).
    {BackendLibrary::kSimd, recipe::Family::kMx, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    {BackendLibrary::kSimd, recipe::Family::kNvfp4, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    {BackendLibrary::kSimd, recipe::Family::kScaled, nullptr, ElementKind::kAny, kEveryListedLayout, true, true},
    // CUDA (cuda/src/register_backends.cc PlanRecipe): a row for each recipe
    // a GPU recipe kernel implements. Every gap below is a recipe that no
    // kernel in cuda/ implements (not a registration slip); the scalar and
    // SIMD rows still check it on the host. A new GPU kernel adds its rule
    // here, and the test then demands its rows.
    // MX: cuda/src/mx.cu implements the "te" (RCEIL,
    // NaN-skipping amax) and "ocp" (FLOOR) rules, both ways, over every MX
    // format each profile has (ocp includes MXINT8). msx, msx-even, ao-*
    // and nearest have no GPU kernel.
    {BackendLibrary::kCuda, recipe::Family::kMx, "te", ElementKind::kAny, kBlockLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kMx, "ocp", ElementKind::kAny, kBlockLayout, true, true},
    // NVFP4: cuda/src/nvfp4.cu implements TE's recipe only; "ao" and "modelopt" order
    // the scale arithmetic differently and have no GPU kernel.
    {BackendLibrary::kCuda, recipe::Family::kNvfp4, "te", ElementKind::kAny, kBlockLayout, true, true},
    // TE FP8 current scaling: cuda/src/fp8_scaled.cu has quantize kernels per tensor
    // and per row (token) only: no FP8 dequantize kernel, no per-group one,
    // and none for "te-pow2" (power-of-two scales).
    {BackendLibrary::kCuda, recipe::Family::kScaled, "te", ElementKind::kFloat, kTensorLayout | kRowLayout, true,
     false},
    // Integer recipes (INT8, INT4, UINT4; every profile): cuda/src/int_quantize.cu
    // works per row or per group along K, both ways; it has no per-tensor
    // layout, so there is no per-tensor row.
    {BackendLibrary::kCuda, recipe::Family::kScaled, nullptr, ElementKind::kInteger, kGroupLayout | kRowLayout, true,
     true},
    // The recipes of the newer library versions (torchao 0.18's eager RCEIL
    // and NVFP4, ModelOpt 0.47, vLLM FP8, INT8 amax.clamp; docs/profiles.md):
    // the model recipe kernels (cuda/src/model_recipe.h,
    // the model's steps compiled for the device) run each both ways in every
    // listed layout; int8:amax-clamp's group and row rows are the integer
    // rule's above, its per-tensor rows are here.
    {BackendLibrary::kCuda, recipe::Family::kMx, "ao-rceil-eager", ElementKind::kAny, kBlockLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kNvfp4, "ao-0.18", ElementKind::kAny, kBlockLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kNvfp4, "modelopt-0.47", ElementKind::kAny, kBlockLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "vllm", ElementKind::kFloat,
     kGroupLayout | kRowLayout | kTensorLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "vllm-token", ElementKind::kFloat,
     kGroupLayout | kRowLayout | kTensorLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "vllm-kv", ElementKind::kFloat,
     kGroupLayout | kRowLayout | kTensorLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "vllm-kv-calc-k", ElementKind::kFloat,
     kGroupLayout | kRowLayout | kTensorLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "vllm-kv-calc-v", ElementKind::kFloat,
     kGroupLayout | kRowLayout | kTensorLayout, true, true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "amax-clamp", ElementKind::kInteger, kTensorLayout, true, true},
    // GPTQ / AWQ with FP16 scales: the model recipe kernels too; group and
    // row rows are the integer rule's, the per-tensor ones here.
    {BackendLibrary::kCuda, recipe::Family::kScaled, "gptq-sym-fp16", ElementKind::kInteger, kTensorLayout, true,
     true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "gptq-asym-fp16", ElementKind::kInteger, kTensorLayout, true,
     true},
    {BackendLibrary::kCuda, recipe::Family::kScaled, "awq-fp16", ElementKind::kInteger, kTensorLayout, true, true},
};

// Catalog recipes ("format:profile") whose SIMD and CUDA kernels are still
// being written (a profile or recipe family lands with its model, oracle
// and scalar rows first). For these the contract asks no SIMD
// or CUDA row, and a row a backend registers anyway is not "unlisted"; the
// scalar rows are required as for every recipe. Each entry leaves this list
// when its kernels land, and a kRecipeRowContract rule then demands them.
// Empty: the SIMD and CUDA rows of every catalog recipe have landed (SIMD:
// simd/src/register_simd_recipes.cc; CUDA: the rules above).
inline constexpr std::array<const char*, 0> kRecipesAwaitingKernels{};

// The key of one recipe row.
struct RecipeRowKey {
  RecipeOperation operation;
  std::string recipe;   // a name as AllRecipeNames lists it
  std::string backend;  // "scalar", "simd:AVX2", "cuda"
};

// The rows the contract requires of the backends in `backends` (backend
// names: "scalar", "simd:<TARGET>", "cuda"; other names get no rows), for
// every recipe of the catalog in every listed layout.
std::vector<RecipeRowKey> RequiredRecipeRows(const std::vector<std::string>& backends);

// Every problem, one line each, naming the row: a required row that `rows`
// lacks ("missing: simd:AVX2 dequantize-recipe int4:ao-sym/g128"), a row
// whose recipe is not in the catalog or whose layout is not listed, and a
// row of a contract backend that the contract does not list. Empty when
// `rows` is exactly what the contract says.
std::vector<std::string> RecipeRowProblems(const std::vector<RecipeRowKey>& rows,
                                           const std::vector<std::string>& backends);

// The keys of every recipe row of `registry`.
std::vector<RecipeRowKey> RecipeRowKeys(const Registry& registry);

// The backend names the contract applies to in `registry` for the libraries
// this build has (lowbit::check::BuiltBackendLibraries: "scalar", "simd",
// "cuda"): "scalar"; each "simd:<TARGET>" that has element rows; "cuda". A
// built library with no element rows at all is a problem in `problems`.
std::vector<std::string> ContractBackends(const Registry& registry, const std::vector<std::string>& built_libraries,
                                          std::vector<std::string>* problems);

}  // namespace lowbit::registry
