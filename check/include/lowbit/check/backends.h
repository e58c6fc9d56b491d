// The one place that knows which backend libraries this build has (target
// lowbit::backends, check/CMakeLists.txt). The registry names no backend:
// each backend library registers itself through its own header
// (lowbit/simd/register.h, lowbit/cuda/register.h), and this calls each one
// that was built, so a program that wants "every kernel" links
// lowbit::backends and calls RegisterAllBackends.
#pragma once

#include <string>
#include <vector>

#include "lowbit/registry/registry.h"

namespace lowbit::check {

// The scalar model, then the SIMD and CUDA backends when built.
void RegisterAllBackends(registry::Registry& registry);

// The backend libraries RegisterAllBackends calls, in that order: "scalar"
// always, then "simd" and "cuda" when built.
std::vector<std::string> BuiltBackendLibraries();

}  // namespace lowbit::check
