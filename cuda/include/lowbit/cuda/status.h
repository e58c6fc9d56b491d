// Status of a CUDA entry point: every argument problem and every CUDA error is
// returned, never hidden in a wrong result (docs/bad-input.md "CUDA").
#pragma once

#include <string>
#include <utility>

namespace lowbit::cuda {

struct Status {
  bool ok = true;
  std::string message;  // one line naming the problem when !ok
  static Status Ok() { return {}; }
  static Status Error(std::string m) { return {false, std::move(m)}; }
};

}  // namespace lowbit::cuda
