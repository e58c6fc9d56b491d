// lowbit.mma / lowbit.matmul_model / lowbit.mma_explain's part of the
// extension (tensor_core_bindings.cc): the tensor-core model
// (formats/include/lowbit/formats/matmul/tensor_core*.h) on operand codes.
#pragma once

#include <nanobind/nanobind.h>

namespace lowbit::python {

// Adds tensor_core_instructions, tensor_core_dot, tensor_core_mma,
// tensor_core_matmul and tensor_core_explain to the module.
void RegisterTensorCore(nanobind::module_& m);

}  // namespace lowbit::python
