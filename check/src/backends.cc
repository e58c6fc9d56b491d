// RegisterAllBackends: the scalar model plus each backend library this build
// has. LOWBIT_BACKENDS_HAVE_SIMD / _CUDA come from check/CMakeLists.txt, set
// only when targets lowbit_simd / lowbit_cuda exist (check/ is configured
// after simd/ and cuda/, so it knows without deferring anything).
#include "lowbit/check/backends.h"

#if defined(LOWBIT_BACKENDS_HAVE_SIMD)
#include "lowbit/simd/register.h"
#endif
#if defined(LOWBIT_BACKENDS_HAVE_CUDA)
#include "lowbit/cuda/register.h"
#endif

namespace lowbit::check {

void RegisterAllBackends(registry::Registry& registry) {
  registry::RegisterScalarBackend(registry);
#if defined(LOWBIT_BACKENDS_HAVE_SIMD)
  registry::RegisterSimdBackends(registry);
#endif
#if defined(LOWBIT_BACKENDS_HAVE_CUDA)
  registry::RegisterCudaBackends(registry);
#endif
}

std::vector<std::string> BuiltBackendLibraries() {
  std::vector<std::string> names = {"scalar"};
#if defined(LOWBIT_BACKENDS_HAVE_SIMD)
  names.push_back("simd");
#endif
#if defined(LOWBIT_BACKENDS_HAVE_CUDA)
  names.push_back("cuda");
#endif
  return names;
}

}  // namespace lowbit::check
