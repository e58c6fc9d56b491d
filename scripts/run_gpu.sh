#!/usr/bin/env bash
# The one GPU script: builds the CUDA part (cuda/standalone: no
# Highway, RapidCheck or CLI11 needed), runs every GPU test, compute-sanitizer
# memcheck, racecheck and initcheck on every GPU test, the benchmark and its PyTorch
# comparison, then every scripts/gpu/*.sh and *.py check, and prints a short
# table last. Logs go to $OUT (or build/gpu/out). Usage: scripts/run_gpu.sh
# The machine has no network: scripts/gpu/outside_kernels.py needs a torchao
# wheel carried there (LOWBIT_TORCHAO_WHEEL=path, inherited), and
# python_check.sh builds the package unless LOWBIT_PY_WHEEL names a wheel.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD="${LOWBIT_GPU_BUILD:-build/gpu}"
OUT="${OUT:-$BUILD/out}"
mkdir -p "$OUT"
JOBS="$(nproc 2>/dev/null || echo 4)"
declare -a ROWS=()
row() { ROWS+=("$(printf '%-34s %-8s %s' "$1" "$2" "$3")"); }
# LOWBIT_GPU_STEPS="tests sanitizers verify check-a-kernel bench torch checks"
# (the default, all of them) runs the steps named, so a run can be split over
# device calls of at most 10 minutes; each step left out gets a SKIP row.
wants() { [[ " ${LOWBIT_GPU_STEPS:-tests sanitizers verify check-a-kernel bench torch checks} " == *" $1 "* ]]; }
step() {  # step NAME LOGFILE CMD...
  local name="$1" log="$OUT/$2"; shift 2
  echo "=== $name: $*" | tee -a "$OUT/run_gpu.log"
  local t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  tail -n 40 "$log"
  echo "=== $name rc=$rc ($((SECONDS - t0)) s)" | tee -a "$OUT/run_gpu.log"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/device.txt" 2>&1
echo "device: $(cat "$OUT/device.txt")  date: $(date -u +%F)"

GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
# LOWBIT_GPU_PREBUILT=DIR: use binaries built elsewhere (same x86-64 + CUDA
# 13.0 toolchain) from DIR/cuda/ instead of building here.
if [[ -n "${LOWBIT_GPU_PREBUILT:-}" ]]; then
  BUILD="$LOWBIT_GPU_PREBUILT"
  row build PREBUILT "$BUILD"
elif step build build.log bash -c "cmake -S cuda/standalone -B '$BUILD' ${GEN[*]} -DCMAKE_BUILD_TYPE=Release -DLOWBIT_CUDA_ARCHITECTURES=90a && cmake --build '$BUILD' -j $JOBS --target lowbit_cuda_tests lowbit_cuda_bench"; then
  row build PASS "$BUILD"
else
  row build FAIL "see $OUT/build.log"; printf '%s\n' "${ROWS[@]}"; exit 1
fi
TESTS="$BUILD/cuda/lowbit_cuda_tests"
BENCH="$BUILD/cuda/lowbit_cuda_bench"

if wants tests; then
if step gtest gtest.log "$TESTS" --gtest_output="xml:$OUT/gtest.xml"; then
  row "gpu tests" PASS "$(grep -E '^\[  PASSED  \]' "$OUT/gtest.log" | head -1)"
else
  row "gpu tests" FAIL "$(grep -E '^\[  FAILED  \]' "$OUT/gtest.log" | head -3 | tr '\n' ' ')"
fi
grep -q "SKIPPED \]" "$OUT/gtest.log" && row "gpu tests skipped" NOTE "$(grep -cE '^\[  SKIPPED \] Cuda.* \([0-9]+ ms\)$' "$OUT/gtest.log") skipped"
else row "step tests" SKIP "not in LOWBIT_GPU_STEPS"; fi

# compute-sanitizer: memcheck (with leak check), racecheck and
# initcheck, each over every GPU test in the binary (no filter), so every
# kernel and every layout variant the tests reach runs under each tool. The
# exhaustive 2^32 tests make this the long part of the script;
# LOWBIT_SANITIZER_TIMEOUT (s, default 2400 per tool) bounds a run, and a
# timeout fails the row. Any report makes the tool exit 3: FAIL.
# LOWBIT_SANITIZER_FILTER (a gtest filter) narrows the tools to the tests of
# the kernels a change touched, when the device time does not allow all of
# them; the row then names the filter instead of "every GPU test".
# LOWBIT_SANITIZER_TOOLS picks the tools (default: all three).
SANITIZER_TIMEOUT="${LOWBIT_SANITIZER_TIMEOUT:-2400}"
SANITIZER_FILTER="${LOWBIT_SANITIZER_FILTER:-}"
sanitized="every GPU test"; filter_arg=()
if [[ -n "$SANITIZER_FILTER" ]]; then sanitized="$SANITIZER_FILTER"; filter_arg=(--gtest_filter="$SANITIZER_FILTER"); fi
if wants sanitizers; then
if command -v compute-sanitizer >/dev/null; then
  for tool in ${LOWBIT_SANITIZER_TOOLS:-memcheck racecheck initcheck}; do
    extra=()
    [[ "$tool" == memcheck ]] && extra=(--leak-check full)
    if step "$tool" "$tool.log" timeout "$SANITIZER_TIMEOUT" compute-sanitizer --tool "$tool" "${extra[@]}" \
         --error-exitcode 3 --print-limit 50 "$TESTS" "${filter_arg[@]}"; then
      row "$tool ($sanitized)" PASS "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -1)"
    else
      row "$tool ($sanitized)" FAIL "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' "$OUT/$tool.log" | tail -3 | tr '\n' ' ')"
    fi
  done
else
  row "compute-sanitizer" FAIL "not installed (the GPU script needs it)"
fi
else row "step sanitizers" SKIP "not in LOWBIT_GPU_STEPS"; fi

# `lowbit verify` with the GPU sweep rows: the CLI needs CLI11, which the GPU
# machine lacks, so it runs only when LOWBIT_CLI names a binary built
# elsewhere (same x86-64 + CUDA 13.0 toolchain, e.g. carried from build/).
if wants verify; then
if [[ -n "${LOWBIT_CLI:-}" && -x "${LOWBIT_CLI}" ]]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
  # Every row whose backend name contains "cuda": cuda-hw and cuda-sw
  # conversions, the GPU recipe kernels (backend "cuda") against the scalar
  # recipe rows, and the cuda-hw sweeps, one line per row (--rows). A row
  # SKIPPED because its backend cannot run means the GPU was not usable:
  # --strict makes that exit 1, which fails the step (rows whose kernel
  # supports no option set are not skipped backends and do not fail it).
  if step "lowbit verify" verify.log timeout 400 "$LOWBIT_CLI" verify --level ci --backend cuda \
       --rows --strict; then
    row "lowbit verify ci (cuda rows)" PASS "$(grep -cE '  ok( |$)' "$OUT/verify.log") rows ok; $(tail -1 "$OUT/verify.log")"
  else
    row "lowbit verify ci (cuda rows)" FAIL "$(tail -1 "$OUT/verify.log")"
  fi
else
  row "lowbit verify" SKIP "LOWBIT_CLI not set"
fi
else row "step verify" SKIP "not in LOWBIT_GPU_STEPS"; fi

# examples/check-a-kernel (docs/check-your-kernel.md): a user's kernel checked with
# lowbit::testing, GPU half. RapidCheck is not on the GPU machine, so the
# binary comes from elsewhere (ctest check_a_kernel_example leaves it in
# <build>/tests/check_a_kernel/build/per_token_fp8_test); a GPU test that
# skips there fails (LOWBIT_REQUIRE_GPU=1).
if wants check-a-kernel; then
if [[ -n "${LOWBIT_CHECK_A_KERNEL_TEST:-}" && -x "${LOWBIT_CHECK_A_KERNEL_TEST}" ]]; then
  if LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64" LOWBIT_REQUIRE_GPU=1 \
       step "check-a-kernel" check_a_kernel.log "$LOWBIT_CHECK_A_KERNEL_TEST"; then
    row "check-a-kernel example" PASS "$(grep -E '^\[  PASSED  \]' "$OUT/check_a_kernel.log" | head -1)"
  else
    row "check-a-kernel example" FAIL "see check_a_kernel.log"
  fi
else
  row "check-a-kernel example" SKIP "LOWBIT_CHECK_A_KERNEL_TEST not set"
fi
else row "step check-a-kernel" SKIP "not in LOWBIT_GPU_STEPS"; fi

if wants bench; then
step bench bench.log "$BENCH" && row benchmark DONE "bench.log" || row benchmark FAIL "see bench.log"
else row "step bench" SKIP "not in LOWBIT_GPU_STEPS"; fi
# LOWBIT_GPU_ONLY_CUDA=1: skip the PyTorch comparison and scripts/gpu checks
# (a short run for the CUDA kernels alone).
if wants torch; then
if [[ -n "${LOWBIT_GPU_ONLY_CUDA:-}" ]]; then
  row "pytorch comparison" SKIP "LOWBIT_GPU_ONLY_CUDA"
elif python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  PYTHONUNBUFFERED=1 step torch torch.log timeout 300 python3 bench/cuda/torch_bench.py && row "pytorch comparison" DONE torch.log || row "pytorch comparison" FAIL "see torch.log"
else
  row "pytorch comparison" SKIP "no torch with CUDA"
fi
else row "step torch" SKIP "not in LOWBIT_GPU_STEPS"; fi

if wants checks; then
shopt -s nullglob
# LOWBIT_GPU_CHECKS="gemv.sh tc_gemm.sh ...": run only the scripts/gpu checks
# named (to split the run over calls); the others get a SKIP row.
for check in scripts/gpu/*.sh scripts/gpu/*.py; do
  name="$(basename "$check")"
  if [[ -n "${LOWBIT_GPU_ONLY_CUDA:-}" ]]; then row "$name" SKIP "LOWBIT_GPU_ONLY_CUDA"; continue; fi
  if [[ -n "${LOWBIT_GPU_CHECKS:-}" && " $LOWBIT_GPU_CHECKS " != *" $name "* ]]; then
    [[ "$check" == *.py && -f "${check%.py}.sh" ]] || row "$name" SKIP "not in LOWBIT_GPU_CHECKS"; continue
  fi
  # A .py beside a .sh of the same name is that script's helper, run by it.
  if [[ "$check" == *.py && -f "${check%.py}.sh" ]]; then continue; fi
  if [[ "$check" == *.py ]]; then cmd=(python3 "$check"); else cmd=(bash "$check"); fi
  if PYTHONUNBUFFERED=1 step "$name" "check_$name.log" timeout 240 "${cmd[@]}"; then row "$name" PASS ""; else row "$name" FAIL "see check_$name.log"; fi
done
else row "step checks" SKIP "not in LOWBIT_GPU_STEPS"; fi

# The short table, last.
python3 - "$OUT/bench.log" "$OUT/torch.log" <<'PY' > "$OUT/table.txt"
import re, sys
try:
    bench = open(sys.argv[1]).read()
except OSError:  # the bench step was left out
    bench = ""
try:
    torch = open(sys.argv[2]).read()
except OSError:
    torch = ""
t = {}
for m in re.finditer(r"^TORCH (\S+) (\S+) ([0-9.]+)$", torch, re.M):
    t[(m.group(1), m.group(2))] = float(m.group(3))
key_of = {"cuda-hw f32->e4m3": "f32->e4m3", "cuda-hw f32->bf16": "f32->bf16", "cuda-hw bf16->e4m3": "bf16->e4m3",
          "cuda-hw e4m3->bf16": "e4m3->bf16", "fp8 per-token bf16 [n/4096, 4096]": "per-token",
          "fp8 per-tensor dynamic bf16 (vs 2 reads+1 write)": "per-tensor-dynamic",
          "nvfp4 quantize bf16 (amax given)": "nvfp4-bf16", "mxfp4 te(rceil) bf16": "mxfp4-bf16"}
print(f"{'case':46s} {'ms':>8s} {'x copy':>7s} {'goal':>5s} {'status':8s} {'torch eager':>11s} {'torch compile':>13s}")
for m in re.finditer(r"^RESULT (.+?)\s+([0-9.]+) ms (.*)$", bench, re.M):
    name, ms, rest = m.group(1).strip(), float(m.group(2)), m.group(3)
    r = re.search(r"([0-9.]+)x copy\s+goal ([0-9.-]+)x?\s+(\S+)", rest)
    ratio, goal, status = (r.group(1), r.group(2), r.group(3)) if r else ("", "<50ms" if "verify" in name else "", rest.split()[-1])
    k = key_of.get(name)  # "before: ..." rows (the replaced layouts) have no torch column
    te = t.get((k, "eager")); tc = t.get((k, "compile"))
    fmt = lambda v: f"{v:8.3f}ms" if v else "-"
    print(f"{name[:46]:46s} {ms:8.3f} {ratio:>7s} {goal:>5s} {status:8s} {fmt(te):>11s} {fmt(tc):>13s}")
PY
echo
echo "================ lowbit GPU run: $(cat "$OUT/device.txt"), $(date -u +%F) ================"
printf '%s\n' "${ROWS[@]}"
echo
cat "$OUT/table.txt"
# Every CUDA row of the registry on 256 MB (bench_cuda.cu BenchRegistryRows,
# bench/RESULTS.md "GPU roofline"): how many meet their goal; the ROW lines
# of bench.log say which.
if grep -q '^ROW ' "$OUT/bench.log" 2>/dev/null; then
  echo "registry rows (256 MB): $(grep -c '^ROW .* MET$' "$OUT/bench.log") met, $(grep -c '^ROW .*NOT-MET$' "$OUT/bench.log") not met (ROW lines of bench.log)"
fi
