// lowbit.testing's part of the extension (testing_bindings.cc).
#pragma once

#include <nanobind/nanobind.h>

namespace lowbit::python {

// Adds check_outputs to the module.
void RegisterTesting(nanobind::module_& m);

}  // namespace lowbit::python
