// RegisterAllBackends: the scalar model plus whatever backends were built.
// LOWBIT_HAVE_SIMD / LOWBIT_HAVE_CUDA_BACKEND come from registry/CMakeLists.txt,
// set only when targets lowbit_simd / lowbit_cuda exist (weak coupling: the
// registry builds and works alone).
#include "lowbit/registry/registry.h"

namespace lowbit::registry {

void RegisterAllBackends(Registry& registry) {
  RegisterScalarBackend(registry);
#if defined(LOWBIT_HAVE_SIMD)
  RegisterSimdBackends(registry);
#endif
#if defined(LOWBIT_HAVE_CUDA_BACKEND)
  RegisterCudaBackends(registry);
#endif
}

}  // namespace lowbit::registry
