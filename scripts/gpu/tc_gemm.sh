#!/usr/bin/env bash
# The tensor-core GEMM's GPU check (cuda/src/tc_matmul/tc_gemm.h) in one
# call: builds lowbit_tc_gemm_test and lowbit_tc_gemm_bench from the
# cuda/standalone CMake build (CUTLASS headers: -DLOWBIT_CUTLASS_INCLUDE_DIR or
# the .venv's nvidia-cutlass wheel), runs the test (the dequantizing pass on
# every code x scale pair and every output of random problems bit for bit
# against the model, batch invariance, bad arguments), compute-sanitizer
# memcheck on the pass and the small products, and the benchmark against
# cuBLAS BF16 in the same run, then torch's BF16 GEMM and FP8 _scaled_mm
# (bench/cuda/gemm_torch_baselines.py). Logs in $OUT (or build/gpu-tc-gemm/out).
# LOWBIT_GPU_PREBUILT=DIR takes the binaries from DIR; LOWBIT_CUTLASS_INCLUDE_DIR
# names CUTLASS's include directory where the build cannot find it;
# LOWBIT_TC_GEMM_SKIP_SANITIZER=1 skips memcheck.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_TC_GEMM_BUILD:-build/gpu-tc-gemm}"
OUT="${OUT:-$BUILD/out}"
mkdir -p "$BUILD" "$OUT"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  date: $(date -u +%F)"
t0=$SECONDS
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
build=PASS
if [[ -n "${LOWBIT_GPU_PREBUILT:-}" ]]; then
  BUILD="$LOWBIT_GPU_PREBUILT"; build=PREBUILT
else
  # The GPU machine has no CUTLASS: carry the .venv's cutlass_library/source/include
  # and name it with LOWBIT_CUTLASS_INCLUDE_DIR (or pass LOWBIT_GPU_PREBUILT binaries).
  CUTLASS_ARGS=(); [[ -n "${LOWBIT_CUTLASS_INCLUDE_DIR:-}" ]] && CUTLASS_ARGS=(-DLOWBIT_CUTLASS_INCLUDE_DIR="$LOWBIT_CUTLASS_INCLUDE_DIR")
  { cmake -S cuda/standalone -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release "${CUTLASS_ARGS[@]}" &&
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_tc_gemm_test lowbit_tc_gemm_bench; } \
    >"$OUT/tc_gemm_build.log" 2>&1 || build=FAIL
fi
echo "build $build ($((SECONDS - t0)) s)"
if [[ $build == FAIL ]]; then tail -n 30 "$OUT/tc_gemm_build.log"; exit 1; fi
"$BUILD/lowbit_tc_gemm_test" 2>&1 | tee "$OUT/tc_gemm_test.log" | grep -E "FAILED|PASSED|SKIPPED|Failure|error" | head -40
test_rc=${PIPESTATUS[0]}
san=SKIPPED
if [[ "${LOWBIT_TC_GEMM_SKIP_SANITIZER:-0}" != 1 ]] && command -v compute-sanitizer >/dev/null; then
  san=PASS
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 "$BUILD/lowbit_tc_gemm_test" \
    --gtest_filter='TcGemmOperand.RandomWeightsOfEveryKind:TcGemm.StridedAndMisalignedBuffers:TcGemm.BadArgumentsAreOneLineErrors' \
    >"$OUT/tc_gemm_memcheck.log" 2>&1 || san="FAIL (memcheck rc=$?)"
fi
"$BUILD/lowbit_tc_gemm_bench" 2>&1 | tee "$OUT/tc_gemm_bench.log"
bench_rc=${PIPESTATUS[0]}
# torch's BF16 GEMM and FP8 _scaled_mm on the same shapes, same machine.
torch_rc=SKIPPED
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 bench/cuda/gemm_torch_baselines.py >"$OUT/tc_gemm_torch.log" 2>&1 && torch_rc=0 || torch_rc=$?
fi
echo "==== tensor-core GEMM summary"
echo "test rc=$test_rc  bench rc=$bench_rc  memcheck $san  torch baselines rc=$torch_rc"
grep -E "^\[  (PASSED|FAILED|SKIPPED)" "$OUT/tc_gemm_test.log"
grep -E "^device|^tc_gemm" "$OUT/tc_gemm_bench.log"
grep -E "^torch|^baseline" "$OUT/tc_gemm_torch.log" 2>/dev/null
exit $(( test_rc != 0 || bench_rc != 0 ))
