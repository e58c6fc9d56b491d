// Every backend this build has (check::RegisterAllBackends), registered once
// per test program. The rows live until the program ends: value-parameterized
// tests keep pointers into them.
#pragma once

#include "lowbit/check/backends.h"
#include "lowbit/registry/registry.h"

namespace lowbit::testing {

inline const registry::Registry& AllBackends() {
  static const registry::Registry* const rows = [] {
    auto* r = new registry::Registry;
    check::RegisterAllBackends(*r);
    return r;
  }();
  return *rows;
}

}  // namespace lowbit::testing
