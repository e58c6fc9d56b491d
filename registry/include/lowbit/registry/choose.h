// Which registered row runs a call: the one place that decides, for the
// Python package, the CLI and the benchmarks alike. A caller says where its
// buffers are (stream.h Memory); the registry offers the rows registered for
// that memory that are available here and take these arguments, and the
// highest preference wins (each backend ranks its own rows when it registers
// them: the scalar model 0, a SIMD target by how new it is, cuda-hw above
// cuda-sw). Ties go to the row registered first.
#pragma once

#include <string>
#include <string_view>

#include "lowbit/formats/recipe/names.h"
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

// The row for an element conversion, or nullptr when none runs here (no row
// for that memory is available, or none supports these options).
const KernelEntry* ChooseConvertRow(const Registry& registry, const ConvertArgs& args, Memory memory);

// The name a recipe row is registered under for a target: scaled recipes
// with their layout ("int8:ao-sym/tensor", AllRecipeNames), MX and NVFP4
// without it ("mxfp4:ocp").
std::string RecipeRowName(const recipe::Target& target);

// The row for a recipe call: a row of RecipeRowName(args.target), or, for a
// layout that no row is registered under, a row of the same recipe that runs
// any layout (RecipeEntry::any_layout). nullptr when none runs here.
const RecipeEntry* ChooseRecipeRow(const Registry& registry, const RecipeArgs& args, Memory memory);

// The row for a matrix product of these columns: for device memory a row
// with run_on_device (matmul_entry.h), for host memory a row without one (a
// device row's `run` copies host buffers, for the harness). The first
// registered wins; an unavailable row is never chosen. nullptr when none runs
// here. `weight` is a kind's canonical name or an alias of it.
const MatmulEntry* ChooseMatmulRow(const Registry& registry, MatmulOperation operation, std::string_view weight,
                                   matmul::ActivationType activation, matmul::OutputType output, Memory memory);

}  // namespace lowbit::registry
