// The registry the CUDA rows' tests read, filled once: the scalar rows (the
// model, which GPU rows are compared with) and every CUDA row, reached as
// `lowbit verify` reaches them (RegisterCudaBackends).
#pragma once

#include "lowbit/cuda/register.h"
#include "lowbit/registry/registry.h"

namespace lowbit::cuda::testing {

inline registry::Registry& ScalarAndCudaRows() {
  static registry::Registry* r = [] {
    auto* reg = new registry::Registry();
    registry::RegisterScalarBackend(*reg);
    registry::RegisterCudaBackends(*reg);
    return reg;
  }();
  return *r;
}

}  // namespace lowbit::cuda::testing
