// lowbit.testing.check_matmul's part of the extension
// (matmul_check_bindings.cc): lowbit::check's product check.
#pragma once

#include <nanobind/nanobind.h>

namespace lowbit::python {

// Adds check_matmul to the module.
void RegisterMatmulCheck(nanobind::module_& m);

}  // namespace lowbit::python
