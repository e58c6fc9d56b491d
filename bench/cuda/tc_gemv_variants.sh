#!/usr/bin/env bash
# The tensor-core GEMV's measuring builds against the kept kernel, in one
# call: builds lowbit_tc_gemv_bench and lowbit_tc_gemv_test of the
# cuda/standalone CMake build once per variant (compile definitions that
# cuda/src/tc_matmul/tc_gemv.cu names "a measuring build's choice"), runs
# every variant's GPU tests (its outputs bit for bit against the model: a
# variant must not change a bit), then the benchmark of each,
# the kept kernel first and last (its drift between the two is the noise),
# and prints a table of serialized / overlapped µs per case last.
#
#   VARIANTS="name:-DFLAG[,-DFLAG...] ..."   the variants (default below)
#   LOWBIT_TC_GEMV_BENCH_CODECS=nvfp4,...    weight kinds benchmarked
#                                            (default nvfp4,mxfp8_e4m3)
#   LOWBIT_TC_GEMV_VARIANTS_SKIP_TESTS=1     benchmark only
#   LOWBIT_TC_GEMV_VARIANTS_PREBUILT=1       use the binaries already in
#                                            $BASE/<name>/ (built elsewhere
#                                            with the same toolchain)
# Logs in $OUT (or build/gpu-tc-gemv-variants/out).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
BASE="${LOWBIT_TC_GEMV_VARIANTS_BUILD:-build/gpu-tc-gemv-variants}"
OUT="${OUT:-$BASE/out}"
mkdir -p "$BASE" "$OUT"
export LOWBIT_TC_GEMV_BENCH_CODECS="${LOWBIT_TC_GEMV_BENCH_CODECS:-nvfp4,mxfp8_e4m3}"
# kept: the kernel as it is. m16_warps8: blocks of eight warps at M > 8
# (16 kept). x_buffers1: one x buffer. e4m3_pre_wait2: two E4M3 tiles
# copied to shared memory before the wait (one kept).
VARIANTS="${VARIANTS:-kept: m16_warps8:-DLOWBIT_TC_GEMV_M16_WARPS=8 x_buffers1:-DLOWBIT_TC_GEMV_X_BUFFERS=1 e4m3_pre_wait2:-DLOWBIT_TC_GEMV_E4M3_PRE_WAIT_TILES=2}"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)  date: $(date -u +%F)"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
names=()
for v in $VARIANTS; do
  name=${v%%:*}; flags=${v#*:}; flags=${flags//,/ }
  names+=("$name")
  t0=$SECONDS
  if [[ "${LOWBIT_TC_GEMV_VARIANTS_PREBUILT:-0}" == 1 ]]; then
    [[ -x "$BASE/$name/lowbit_tc_gemv_bench" && -x "$BASE/$name/lowbit_tc_gemv_test" ]] ||
      { echo "prebuilt $name: no binaries in $BASE/$name"; exit 1; }
    echo "prebuilt $name"
    continue
  fi
  # The flags reach the host compiler too: tc_gemv.h's constants are read by
  # the tests' C++ files.
  { cmake -S cuda/standalone -B "$BASE/$name" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release \
      "-DCMAKE_CUDA_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" &&
    cmake --build "$BASE/$name" -j "$(nproc 2>/dev/null || echo 4)" --target lowbit_tc_gemv_test lowbit_tc_gemv_bench; } \
    >"$OUT/build_$name.log" 2>&1 || { echo "build $name FAILED"; tail -n 20 "$OUT/build_$name.log"; exit 1; }
  echo "build $name ($((SECONDS - t0)) s)"
done
test_rc=0
if [[ "${LOWBIT_TC_GEMV_VARIANTS_SKIP_TESTS:-0}" != 1 ]]; then
  for name in "${names[@]}"; do
    "$BASE/$name/lowbit_tc_gemv_test" --gtest_brief=1 >"$OUT/test_$name.log" 2>&1
    rc=$?; test_rc=$((test_rc | rc))
    echo "test $name rc=$rc: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_$name.log" | tr '\n' ' ')"
  done
fi
: >"$OUT/bench.log"
for name in "${names[@]}" "${names[0]}"; do
  echo "== $name" >>"$OUT/bench.log"
  "$BASE/$name/lowbit_tc_gemv_bench" >>"$OUT/bench.log" 2>&1 || echo "bench $name rc=$?"
done
echo "==== tensor-core GEMV variants: serialized / overlapped us (the first column again last)"
python3 - "$OUT/bench.log" <<'PY'
import re, sys
rows, order = {}, []
for line in open(sys.argv[1]):
    if line.startswith('== '):
        order.append(line[3:].strip())
        continue
    m = re.match(r'tc_gemv (\S+) (\d+) (\d+) L=(\d+) M=(\d+) split=(\d+).*serialized ([\d.]+) us.*overlapped ([\d.]+) us', line)
    if m:
        rows.setdefault(f'{m[1]} {m[2]}x{m[3]}x{m[4]} M={m[5]}', {})[len(order) - 1] = f'{m[7]} / {m[8]}'
    g = re.match(r'tc_gemv nvfp4 competition geomean.* ([\d.]+) us, overlapped ([\d.]+) us', line)
    if g:
        rows.setdefault('nvfp4 contest geomean', {})[len(order) - 1] = f'{g[1]} / {g[2]}'
print('| case | ' + ' | '.join(order) + ' |')
for key, cells in rows.items():
    print(f'| {key} | ' + ' | '.join(cells.get(i, '-') for i in range(len(order))) + ' |')
PY
exit $((test_rc != 0))
