#!/usr/bin/env bash
# The tensor-core GEMV's GPU check (cuda/src/tc_matmul/tc_gemv.cu) in one
# call: builds lowbit_tc_gemv_test and lowbit_tc_gemv_bench from the
# cuda/standalone CMake build (a handful of files), runs the test (every
# output bit for bit against the model, the device decode of every code x
# scale, the device packer against the host packer, and the host warp
# simulation), compute-sanitizer memcheck and racecheck on the GPU tests,
# the benchmark (NVFP4 / MXFP4 on the matmul
# goal shapes and the competition shapes, M = 1 and 16, against a device
# copy; the competition geomean; the table path), its peers in the same
# call (the FFMA GEMV's lowbit_gemv_bench on the 4-bit formats and the torch
# baselines of bench/cuda/gemv_torch_baselines.py), and Nsight Compute
# counters with stall reasons on three cases. Logs in $OUT (or
# build/gpu-tc-gemv/out). LOWBIT_TC_GEMV_SKIP_NCU=1 /
# LOWBIT_TC_GEMV_SKIP_SANITIZER=1 / LOWBIT_TC_GEMV_SKIP_PEERS=1 skip those steps.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_TC_GEMV_BUILD:-build/gpu-tc-gemv}"
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
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_tc_gemv_test lowbit_tc_gemv_bench lowbit_gemv_bench; } \
    >"$OUT/tc_gemv_build.log" 2>&1 || build=FAIL
fi
TEST_BIN="$BUILD/lowbit_tc_gemv_test"
BENCH_BIN="$BUILD/lowbit_tc_gemv_bench"
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build == FAIL ]]; then tail -n 30 "$OUT/tc_gemv_build.log"; exit 1; fi
grep -E "registers|spill" "$OUT/tc_gemv_build.log" 2>/dev/null | sort | uniq -c | sort -rn | head -6
"$TEST_BIN" 2>&1 | tee "$OUT/tc_gemv_test.log" | grep -E "FAILED|PASSED|SKIPPED|Failure|GPU 0x|error" | head -40
test_rc=${PIPESTATUS[0]}
san=SKIPPED
if [[ "${LOWBIT_TC_GEMV_SKIP_SANITIZER:-0}" != 1 ]] && command -v compute-sanitizer >/dev/null; then
  san=PASS
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 "$TEST_BIN" \
      --gtest_filter='TcGemvGpu.EverySplitAndOutputType:TcGemvGpu.OverlappedCallsWaitForThePreviousKernel:TcGemvGpu.DecodeOfEveryCodeAndScaleIsTheModelsOperand:TcGemvPackDevice.*' \
      >"$OUT/tc_gemv_$tool.log" 2>&1 || san="FAIL ($tool rc=$?)"
  done
fi
"$BENCH_BIN" 2>&1 | tee "$OUT/tc_gemv_bench.log"
bench_rc=${PIPESTATUS[0]}
if [[ "${LOWBIT_TC_GEMV_SKIP_PEERS:-0}" != 1 ]]; then
  LOWBIT_GEMV_BENCH_FORMATS=fp4 "$BUILD/lowbit_gemv_bench" 2>&1 | tee "$OUT/ffma_gemv_bench.log"
  python3 bench/cuda/gemv_torch_baselines.py 2>&1 | tee "$OUT/gemv_baselines.log"
fi
if [[ "${LOWBIT_TC_GEMV_SKIP_NCU:-0}" != 1 ]] && command -v ncu >/dev/null; then
  METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
  for stall in long_scoreboard short_scoreboard barrier wait math_pipe_throttle mio_throttle lg_throttle membar not_selected; do
    METRICS+=",smsp__warp_issue_stalled_${stall}_per_warp_active.pct"
  done
  for c in "nvfp4 8192 8192 1" "nvfp4 7168 16384 16" "nvfp4 7168 2048 1 4"; do
    echo "== ncu $c"
    # shellcheck disable=SC2086
    timeout 60 ncu --metrics "$METRICS" --kernel-name regex:TcGemvKernel --launch-skip 1 --launch-count 1 "$BENCH_BIN" $c \
      2>&1 | grep -E "TcGemv|duration|throughput|issue_active|warps_active|inst_executed|stalled" | sed 's/^ *//' | tee -a "$OUT/tc_gemv_ncu.log"
  done
fi
echo "==== tensor-core GEMV summary"
echo "test rc=$test_rc  bench rc=$bench_rc  sanitizers $san"
grep -E "^\[  (PASSED|FAILED|SKIPPED)" "$OUT/tc_gemv_test.log"
grep -E "^device|^tc_gemv" "$OUT/tc_gemv_bench.log"
grep -E "^gemv|^baseline" "$OUT/ffma_gemv_bench.log" "$OUT/gemv_baselines.log" 2>/dev/null
exit $(( test_rc != 0 || bench_rc != 0 ))
