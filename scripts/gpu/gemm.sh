#!/usr/bin/env bash
# The GEMM's GPU check (docs/matmul.md) in one call: builds the GEMM's test and
# benchmark (targets lowbit_gemm_test and lowbit_gemm_bench of the
# cuda/standalone CMake build: a handful of files, not the whole CUDA
# library), runs the test (every output within
# formats/include/lowbit/formats/matmul/gemm_bound.h, max error / bound
# printed), the benchmark and the torch baselines on the same shapes, and
# prints a short table last. Logs in $OUT (or build/gpu-gemm/out).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_GEMM_BUILD:-build/gpu-gemm}"
OUT="${OUT:-$BUILD/out}"
mkdir -p "$BUILD" "$OUT"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  date: $(date -u +%F)"
t0=$SECONDS
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
build=PASS
# LOWBIT_GPU_PREBUILT=DIR (scripts/run_gpu.sh): binaries built elsewhere with the
# same x86-64 + CUDA 13.0 toolchain, taken from DIR instead of building here.
if [[ -n "${LOWBIT_GPU_PREBUILT:-}" ]]; then
  BUILD="$LOWBIT_GPU_PREBUILT"; build=PREBUILT
else
  { cmake -S cuda/standalone -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_gemm_test lowbit_gemm_bench; } \
    >"$OUT/gemm_build.log" 2>&1 || build=FAIL
fi
TEST_BIN="$BUILD/lowbit_gemm_test"
BENCH_BIN="$BUILD/lowbit_gemm_bench"
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build == FAIL ]]; then tail -n 30 "$OUT/gemm_build.log"; exit 1; fi
grep -A2 "GemmKernel" "$OUT/gemm_build.log" 2>/dev/null | grep -E "registers|spill" | head -2
"$TEST_BIN" 2>&1 | tee "$OUT/gemm_test.log" | grep -E "^\[gemm\]|FAILED|PASSED|Failure|error" | head -60
test_rc=${PIPESTATUS[0]}
"$BENCH_BIN" 2>&1 | tee "$OUT/gemm_bench.log"
bench_rc=${PIPESTATUS[0]}
python3 bench/cuda/gemm_torch_baselines.py 2>&1 | tee "$OUT/gemm_baselines.log"
echo "==== GEMM summary"
echo "test  rc=$test_rc   bench rc=$bench_rc"
grep -E "^gemm|^baseline" "$OUT/gemm_bench.log" "$OUT/gemm_baselines.log" | sed 's/^[^:]*://'
exit $(( test_rc != 0 || bench_rc != 0 ))
