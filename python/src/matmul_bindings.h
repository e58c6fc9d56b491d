// lowbit.gemv / lowbit.matmul's part of the extension (matmul_bindings.cc).
#pragma once

#include <nanobind/nanobind.h>

namespace lowbit::python {

// Adds matmul and matmul_rows to the module.
void RegisterMatmul(nanobind::module_& m);

}  // namespace lowbit::python
