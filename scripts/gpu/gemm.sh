#!/usr/bin/env bash
# The GEMM's GPU check (issue 12) in one call: builds the GEMM, its test and
# its benchmark straight with nvcc (a handful of files, not the whole CUDA
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
NVCC=(nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -ftz=false -prec-div=true -prec-sqrt=true
      --fmad=false --expt-relaxed-constexpr -Iformats/include -Iformats/spec/include -Icuda/include -Icuda/src
      -Icuda/tests)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  date: $(date -u +%F)"
t0=$SECONDS
pids=()
"${NVCC[@]}" -c cuda/src/gemm/gemm.cu -o "$BUILD/gemm.o" -Xptxas -v >"$OUT/gemm_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/src/checks.cc -x cu -o "$BUILD/checks.o" >"$OUT/checks_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/src/gemm/gemm_checks.cc -o "$BUILD/gemm_checks.o" >"$OUT/gemm_checks_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/src/device.cu -o "$BUILD/device.o" >"$OUT/device_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/tests/gemm_test.cc -o "$BUILD/gemm_test.o" >"$OUT/test_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c bench/cuda/gemm_bench.cu -o "$BUILD/gemm_bench.o" >"$OUT/bench_build.log" 2>&1 & pids+=($!)
build=PASS
for p in "${pids[@]}"; do wait "$p" || build=FAIL; done
if [[ $build == PASS ]]; then
  "${NVCC[@]}" -o "$BUILD/gemm_test" "$BUILD/gemm_test.o" "$BUILD/gemm.o" "$BUILD/gemm_checks.o" "$BUILD/checks.o" "$BUILD/device.o" \
    -lgtest -lgtest_main -lpthread >>"$OUT/test_build.log" 2>&1 || build=FAIL
  "${NVCC[@]}" -o "$BUILD/gemm_bench" "$BUILD/gemm_bench.o" "$BUILD/gemm.o" "$BUILD/gemm_checks.o" "$BUILD/checks.o" "$BUILD/device.o" \
    >>"$OUT/bench_build.log" 2>&1 || build=FAIL
fi
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build != PASS ]]; then tail -n 30 "$OUT"/*_build.log; exit 1; fi
grep -A2 "GemmKernel" "$OUT/gemm_build.log" | grep -E "registers|spill" | head -2
"$BUILD/gemm_test" 2>&1 | tee "$OUT/gemm_test.log" | grep -E "^\[gemm\]|FAILED|PASSED|Failure|error" | head -60
test_rc=${PIPESTATUS[0]}
"$BUILD/gemm_bench" 2>&1 | tee "$OUT/gemm_bench.log"
bench_rc=${PIPESTATUS[0]}
python3 bench/cuda/gemm_torch_baselines.py 2>&1 | tee "$OUT/gemm_baselines.log"
echo "==== GEMM summary"
echo "test  rc=$test_rc   bench rc=$bench_rc"
grep -E "^gemm|^baseline" "$OUT/gemm_bench.log" "$OUT/gemm_baselines.log" | sed 's/^[^:]*://'
exit $(( test_rc != 0 || bench_rc != 0 ))
