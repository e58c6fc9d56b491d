#!/usr/bin/env bash
# The tensor-core model against the hardware, in one call: builds (or takes
# prebuilt with LOWBIT_TENSOR_CORE_BIN=DIR holding lowbit_tensor_core_test and
# lowbit_tensor_core_model_bench; LOWBIT_GPU_PREBUILT=DIR likewise) the probes, the device model and the sweep
# (cuda/standalone targets), runs every instruction on every family of
# operand sets (cuda/tests/tensor_core_test.cu: 0 mismatches expected), keeps
# the SASS of the probes (what ptxas made of each PTX instruction: FP8
# mma.sync on sm_90 is the case docs/tensor-cores.md cites), times the model
# on a 4096^3 product, and prints a short table last. Logs in $OUT (or
# build/gpu-tensor-cores/out). LOWBIT_TEST_LEVEL=smoke for a quick run.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_TENSOR_CORE_BUILD:-build/gpu-tensor-cores}"
OUT="${OUT:-$BUILD/out}"
mkdir -p "$BUILD" "$OUT"
device="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
echo "device: $device  date: $(date -u +%F)" | tee "$OUT/device.txt"
BIN="${LOWBIT_TENSOR_CORE_BIN:-${LOWBIT_GPU_PREBUILT:-}}"
if [[ -z "$BIN" ]]; then
  GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
  if ! { cmake -S cuda/standalone -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release &&
         cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_tensor_core_test lowbit_tensor_core_model_bench; } \
       >"$OUT/build.log" 2>&1; then
    tail -n 30 "$OUT/build.log"; exit 1
  fi
  BIN="$BUILD"
fi
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$BIN/lowbit_tensor_core_test" | grep -E "Function|MMA|GMMA|F2FP|F2F|HADD2|PRMT" > "$OUT/sass.txt"
fi
export LOWBIT_TENSOR_CORE_RECORD="$OUT/record.txt"
rm -f "$LOWBIT_TENSOR_CORE_RECORD"
"$BIN/lowbit_tensor_core_test" --gtest_brief=1 > "$OUT/test.log" 2>&1
test_rc=$?
grep -E "Failure|hardware 0x|A row|B column|C: " "$OUT/test.log" | head -60
"$BIN/lowbit_tensor_core_model_bench" 4096 2>&1 | tee "$OUT/bench.txt"
echo "---- tensor cores: $device"
printf '%-44s %s\n' "instructions x widths x families" "$(wc -l < "$OUT/record.txt" 2>/dev/null || echo 0)"
printf '%-44s %s\n' "sets compared" "$(awk '{for(i=1;i<=NF;i++) if ($i ~ /^sets=/) {split($i,a,"="); s+=a[2]}} END {print s+0}' "$OUT/record.txt" 2>/dev/null)"
printf '%-44s %s\n' "lines with mismatches" "$(grep -c 'mismatches=[1-9]' "$OUT/record.txt" 2>/dev/null)"
printf '%-44s %s\n' "gtest" "$(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/test.log" | tr '\n' ' ') rc=$test_rc"
exit $test_rc
