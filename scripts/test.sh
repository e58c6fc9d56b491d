#!/usr/bin/env bash
# Sets up, builds and runs every test: the README's second command and the
# whole of CI (.ci/run). LOWBIT_TEST_LEVEL=smoke|ci|full (default ci);
# LOWBIT_BUILD_DIR (default build); LOWBIT_JOBS (default 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${LOWBIT_BUILD_DIR:-build}
jobs=${LOWBIT_JOBS:-2}
export LOWBIT_TEST_LEVEL=${LOWBIT_TEST_LEVEL:-ci}

bash scripts/setup.sh
cmake -S . -B "$build"
cmake --build "$build" -j"$jobs"
ctest --test-dir "$build" --output-on-failure -j"$jobs"
