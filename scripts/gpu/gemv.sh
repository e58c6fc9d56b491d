#!/usr/bin/env bash
# The GEMV's GPU check (docs/matmul.md) in one call: builds the GEMV's test and
# benchmark (targets lowbit_gemv_test and lowbit_gemv_bench of the
# cuda/standalone CMake build: a handful of files, not the whole CUDA
# library), runs the test (every decode against the model on every code,
# every GEMV output bit for bit against formats/matmul/gemv_order.h), the
# benchmark and the torch baselines on the same shapes, Nsight Compute
# counters on a few cases, compute-sanitizer memcheck on the GEMV tests, and
# prints a short table last. Logs in $OUT (or build/gpu-gemv/out).
# LOWBIT_CUDA_TESTS_BIN=path/to/lowbit_cuda_tests also runs the registry rows'
# test; LOWBIT_GEMV_ROWS_SWEEP="2/2 1/4" benchmarks FP4 at M = 1 with other rows
# per warp / chunk unrolls. LOWBIT_GEMV_SKIP_NCU=1 / LOWBIT_GEMV_SKIP_SANITIZER=1 / LOWBIT_GEMV_SKIP_BASELINES=1
# skip those steps; LOWBIT_GEMV_BENCH_FORMATS=S benchmarks only the formats
# whose name contains S.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_GEMV_BUILD:-build/gpu-gemv}"
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
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_gemv_test lowbit_gemv_bench; } \
    >"$OUT/gemv_build.log" 2>&1 || build=FAIL
fi
TEST_BIN="$BUILD/lowbit_gemv_test"
BENCH_BIN="$BUILD/lowbit_gemv_bench"
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build == FAIL ]]; then tail -n 30 "$OUT/gemv_build.log"; exit 1; fi
grep -E "registers|spill" "$OUT/gemv_build.log" 2>/dev/null | sort | uniq -c | sort -rn | head -4
"$TEST_BIN" 2>&1 | tee "$OUT/gemv_test.log" | grep -E "FAILED|PASSED|Failure|got 0x|error" | head -40
test_rc=${PIPESTATUS[0]}
reg_rc=skipped
if [[ -n "${LOWBIT_CUDA_TESTS_BIN:-}" && -x "${LOWBIT_CUDA_TESTS_BIN}" ]]; then
  # The registry rows through RegisterCudaBackends (cuda/tests/gemv_register_test.cc),
  # from a lowbit_cuda_tests built by CMake (it needs the whole CUDA library).
  "$LOWBIT_CUDA_TESTS_BIN" --gtest_filter='CudaGemvRegister.*' 2>&1 | tee "$OUT/gemv_register_test.log" | \
    grep -E "FAILED|PASSED|Failure|scalar 0x|OK \]" | head -20
  reg_rc=${PIPESTATUS[0]}
fi
"$BENCH_BIN" 2>&1 | tee "$OUT/gemv_bench.log"
bench_rc=${PIPESTATUS[0]}
# LOWBIT_GEMV_ROWS_SWEEP="1 4": the FP4 formats again with that many output
# channels per warp at M = 1 (gemv.cu KMajorRowsPerWarp; the default is 2).
# Entries are ROWS/UNROLL (gemv.cu KMajorTuning), e.g. "2/2 2/4 1/4".
for t in ${LOWBIT_GEMV_ROWS_SWEEP:-}; do
  LOWBIT_GEMV_ROWS_PER_WARP=${t%/*} LOWBIT_GEMV_UNROLL=${t#*/} LOWBIT_GEMV_BENCH_FORMATS=fp4 "$BENCH_BIN" 2>&1 | \
    grep -E "^gemv .* 1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" | sed "s|^|rows/unroll=$t |" | tee -a "$OUT/gemv_sweep.log"
done
if [[ "${LOWBIT_GEMV_SKIP_BASELINES:-0}" != 1 ]]; then
  python3 bench/cuda/gemv_torch_baselines.py 2>&1 | tee "$OUT/gemv_baselines.log"
fi
if [[ "${LOWBIT_GEMV_SKIP_NCU:-0}" != 1 ]] && command -v ncu >/dev/null; then
  METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active
  # LOWBIT_GEMV_NCU_CASES="FORMAT N K L M;..." profiles other cases.
  IFS=';' read -r -a cases <<<"${LOWBIT_GEMV_NCU_CASES:-nvfp4 7168 16384 1 1;nvfp4 7168 16384 1 16;int4-gptq 8192 8192 1 1;int4-awq 8192 8192 1 1;mxfp8 8192 8192 1 1}"
  for c in "${cases[@]}"; do
    echo "== ncu $c"
    # shellcheck disable=SC2086
    timeout 60 ncu --metrics "$METRICS" --kernel-name regex:Gemv --launch-skip 2 --launch-count 1 "$BENCH_BIN" $c \
      2>&1 | grep -E "Gemv|duration|throughput|issue_active|pipe_fma|warps_active" | sed 's/^ *//' | tee -a "$OUT/gemv_ncu.log"
  done
fi
san=SKIPPED
if [[ "${LOWBIT_GEMV_SKIP_SANITIZER:-0}" != 1 ]] && command -v compute-sanitizer >/dev/null; then
  if timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$TEST_BIN" \
       --gtest_filter='CudaGemv.*:CudaGemvDecode.*' >"$OUT/gemv_memcheck.log" 2>&1; then san=PASS; else san="FAIL rc=$?"; fi
fi
echo "==== GEMV summary"
echo "test rc=$test_rc  registry test rc=$reg_rc  bench rc=$bench_rc  memcheck $san"
grep -E "^\[  (PASSED|FAILED)" "$OUT/gemv_test.log"
grep -E "^device" "$OUT/gemv_bench.log"
grep -E "^torch|^baseline copy" "$OUT/gemv_baselines.log" 2>/dev/null
[[ $reg_rc == skipped || $reg_rc == 0 ]] && reg_ok=1 || reg_ok=0
exit $(( test_rc != 0 || bench_rc != 0 || reg_ok == 0 ))
