// The SIMD library's registration into the kernel table (registry.h): one
// row per (operation, format, compiled Highway target), backend
// "simd:<TARGET>", plus its recipe and packing rows. A target the CPU lacks
// is registered but not available, so checks show it as skipped. The registry
// does not know this library; lowbit/check/backends.h calls this when
// lowbit::simd is built.
#pragma once

#include "lowbit/registry/registry.h"

namespace lowbit::registry {

// Defined in simd/src/register_simd.cc.
void RegisterSimdBackends(Registry& registry);

}  // namespace lowbit::registry
