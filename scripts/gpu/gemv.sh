#!/usr/bin/env bash
# The GEMV's GPU check (issue 12) in one call: builds the GEMV, its test and
# its benchmark straight with nvcc (a handful of files, not the whole CUDA
# library), runs the test (every decode against the model on every code,
# every GEMV output bit for bit against formats/matmul/gemv_order.h), the
# benchmark and the torch baselines on the same shapes, Nsight Compute
# counters on a few cases, compute-sanitizer memcheck on the GEMV tests, and
# prints a short table last. Logs in $OUT (or build/gpu-gemv/out).
# LOWBIT_GEMV_SKIP_NCU=1 / LOWBIT_GEMV_SKIP_SANITIZER=1 / LOWBIT_GEMV_SKIP_BASELINES=1
# skip those steps; LOWBIT_GEMV_BENCH_FORMATS=S benchmarks only the formats
# whose name contains S.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_GEMV_BUILD:-build/gpu-gemv}"
OUT="${OUT:-$BUILD/out}"
mkdir -p "$BUILD" "$OUT"
NVCC=(nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -ftz=false -prec-div=true -prec-sqrt=true
      --fmad=false --expt-relaxed-constexpr -Iformats/include -Iformats/spec/include -Icuda/include -Icuda/src
      -Icuda/tests)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  date: $(date -u +%F)"
t0=$SECONDS
pids=()
"${NVCC[@]}" -c cuda/src/gemv/gemv.cu -o "$BUILD/gemv.o" -Xptxas -v >"$OUT/gemv_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/src/checks.cc -x cu -o "$BUILD/checks.o" >"$OUT/checks_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/src/device.cu -o "$BUILD/device.o" >"$OUT/device_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c cuda/tests/gemv_test.cu -o "$BUILD/gemv_test.o" >"$OUT/test_build.log" 2>&1 & pids+=($!)
"${NVCC[@]}" -c bench/cuda/gemv_bench.cu -o "$BUILD/gemv_bench.o" >"$OUT/bench_build.log" 2>&1 & pids+=($!)
build=PASS
for p in "${pids[@]}"; do wait "$p" || build=FAIL; done
if [[ $build == PASS ]]; then
  "${NVCC[@]}" -o "$BUILD/gemv_test" "$BUILD/gemv_test.o" "$BUILD/gemv.o" "$BUILD/checks.o" "$BUILD/device.o" \
    -lgtest -lgtest_main -lpthread >>"$OUT/test_build.log" 2>&1 || build=FAIL
  "${NVCC[@]}" -o "$BUILD/gemv_bench" "$BUILD/gemv_bench.o" "$BUILD/gemv.o" >>"$OUT/bench_build.log" 2>&1 || build=FAIL
fi
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build != PASS ]]; then tail -n 30 "$OUT"/*_build.log; exit 1; fi
grep -E "registers|spill" "$OUT/gemv_build.log" | sort | uniq -c | sort -rn | head -4
"$BUILD/gemv_test" 2>&1 | tee "$OUT/gemv_test.log" | grep -E "FAILED|PASSED|Failure|got 0x|error" | head -40
test_rc=${PIPESTATUS[0]}
"$BUILD/gemv_bench" 2>&1 | tee "$OUT/gemv_bench.log"
bench_rc=${PIPESTATUS[0]}
if [[ "${LOWBIT_GEMV_SKIP_BASELINES:-0}" != 1 ]]; then
  python3 bench/cuda/gemv_torch_baselines.py 2>&1 | tee "$OUT/gemv_baselines.log"
fi
if [[ "${LOWBIT_GEMV_SKIP_NCU:-0}" != 1 ]] && command -v ncu >/dev/null; then
  METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
  for c in "nvfp4 7168 16384 1 1" "nvfp4 7168 16384 1 16" "int4-gptq 8192 8192 1 1" "int4-awq 8192 8192 1 1" "mxfp8 8192 8192 1 1"; do
    echo "== ncu $c"
    # shellcheck disable=SC2086
    timeout 60 ncu --metrics "$METRICS" --kernel-name regex:Gemv --launch-skip 2 --launch-count 1 "$BUILD/gemv_bench" $c \
      2>&1 | grep -E "Gemv|duration|throughput|issue_active|pipe_fma|warps_active" | sed 's/^ *//' | tee -a "$OUT/gemv_ncu.log"
  done
fi
san=SKIPPED
if [[ "${LOWBIT_GEMV_SKIP_SANITIZER:-0}" != 1 ]] && command -v compute-sanitizer >/dev/null; then
  if timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$BUILD/gemv_test" \
       --gtest_filter='CudaGemv.*:CudaGemvDecode.*' >"$OUT/gemv_memcheck.log" 2>&1; then san=PASS; else san="FAIL rc=$?"; fi
fi
echo "==== GEMV summary"
echo "test rc=$test_rc  bench rc=$bench_rc  memcheck $san"
grep -E "^\[  (PASSED|FAILED)" "$OUT/gemv_test.log"
grep -E "^device" "$OUT/gemv_bench.log"
grep -E "^torch|^baseline copy" "$OUT/gemv_baselines.log" 2>/dev/null
exit $(( test_rc != 0 || bench_rc != 0 ))
