#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer (docs/bad-input.md): builds the
# library, the `lowbit` CLI and every C++ test with clang and
# -fsanitize=address,undefined -fno-sanitize-recover=all in their own build
# folder (CUDA, benchmarks and the Python extension off), then runs every
# C++ test, the CLI tests among them, at LOWBIT_TEST_LEVEL=smoke. Any sanitizer report aborts the
# test process, so ctest fails. scripts/fuzz.sh builds the libFuzzer targets
# in the same folder (the libraries are built once).
#
# Usage: scripts/sanitize.sh [configure]   ("configure": only configure)
# Environment: LOWBIT_SANITIZE_BUILD_DIR (default build-sanitize);
#              LOWBIT_JOBS (default 2); CC/CXX (default clang/clang++).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${LOWBIT_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${LOWBIT_JOBS:-2}
log() { printf 'sanitize: %s\n' "$*" >&2; }

# -O1 keeps the smoke tests quick and the build short; NDEBUG stays off, so
# assert()s run too. Frame pointers give whole stacks in the reports.
sanitize_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$build" \
  -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_C_FLAGS="$sanitize_flags" -DCMAKE_CXX_FLAGS="$sanitize_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" -DCMAKE_SHARED_LINKER_FLAGS="$sanitize_flags" \
  -DLOWBIT_ENABLE_CUDA=OFF -DLOWBIT_BUILD_BENCH=OFF -DLOWBIT_BUILD_PYTHON=OFF -DLOWBIT_FUZZ=ON
[[ ${1:-} == configure ]] && exit 0

start=$SECONDS
cmake --build "$build" -j"$jobs"
log "build: $((SECONDS - start)) s"

# A report ends the process with a failure (halt_on_error is the default of
# -fno-sanitize-recover); leaks are reported at exit. Stacks symbolized when
# llvm-symbolizer is on PATH.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LOWBIT_TEST_LEVEL=smoke
start=$SECONDS
# Not run here, as they are no C++ code of ours under the sanitizers (the
# plain build runs them): the consumer projects (install_consumer,
# subdirectory_consumer: they test the build), simd_aarch64_cross_compile (a
# compile check), citations_resolve, the python_* tests (Python; the
# extension is not built here) and the live-peer tests that run only Python
# against the venv's package (peers_numpy and peers_int4pack drive C++
# tools built here, so they run).
ctest --test-dir "$build" --output-on-failure -j"$jobs" \
  -E '^(install_consumer|subdirectory_consumer|simd_aarch64_cross_compile|citations_resolve|python_.*|peers_(torch_casts|torchao|modelopt|profile_table|mmasim))$'
log "tests (smoke): $((SECONDS - start)) s"
