// What the registry's call arguments say about where a call runs: the stream
// a device row launches on, and the memory a row is chosen for (choose.h).
#pragma once

#include <cstdint>

namespace lowbit::registry {

// A device row's stream: a cudaStream_t carried as an opaque handle, so that
// the registry and its callers need no CUDA header (cudaStream_t is a pointer
// type, CUDA Runtime API "Stream Management"). Null is the legacy default
// stream, the value torch.cuda.current_stream().cuda_stream has for it. Host
// rows ignore it. A row given device buffers runs asynchronously on this
// stream; the caller synchronizes before reading the outputs.
using StreamHandle = void*;

// Where a row's buffers live. Device rows may also take host buffers (they
// copy them and wait, for the harness), but ChooseConvertRow and
// ChooseRecipeRow offer host buffers only to host rows.
enum class Memory : std::uint8_t { kHost, kDevice };

}  // namespace lowbit::registry
