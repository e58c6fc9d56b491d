#!/usr/bin/env bash
# Sets up, builds and runs every test: the README's second command and the
# whole of CI (.ci/run). LOWBIT_TEST_LEVEL=smoke|ci|full (default ci);
# LOWBIT_BUILD_DIR (default build); LOWBIT_JOBS (default 2).
# After the main build's tests: the ASan + UBSan build running every C++ test
# at smoke (scripts/sanitize.sh, folder build-sanitize) and each libFuzzer
# target for LOWBIT_FUZZ_SECONDS (scripts/fuzz.sh, same folder).
# LOWBIT_SANITIZE=0 leaves those two out (a quick local run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${LOWBIT_BUILD_DIR:-build}
jobs=${LOWBIT_JOBS:-2}
export LOWBIT_TEST_LEVEL=${LOWBIT_TEST_LEVEL:-ci}

timed() {  # timed NAME CMD...: runs CMD and says how long it took
  local name=$1 start=$SECONDS
  shift
  "$@"
  printf 'test.sh: %s: %d s\n' "$name" $((SECONDS - start)) >&2
}

timed setup bash scripts/setup.sh
# ccache (installed by setup.sh): the libraries compile once for the Python
# package (setup.sh), this build and the subdirectory consumer test, whose
# flags are the same; CMake takes the launcher from the environment when it
# configures a new build folder.
if command -v ccache >/dev/null && [[ -z ${CMAKE_CXX_COMPILER_LAUNCHER+set} ]]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
timed configure cmake -S . -B "$build"
timed build cmake --build "$build" -j"$jobs"
timed ctest ctest --test-dir "$build" --output-on-failure -j"$jobs"
if [[ ${LOWBIT_SANITIZE:-1} != 0 ]]; then
  timed "sanitizers (build + smoke tests)" env LOWBIT_TEST_LEVEL=smoke bash scripts/sanitize.sh
  timed "fuzzers" bash scripts/fuzz.sh
fi
