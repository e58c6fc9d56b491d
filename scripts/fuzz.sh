#!/usr/bin/env bash
# libFuzzer (docs/bad-input.md): builds the fuzz/ targets with clang
# (-fsanitize=fuzzer,address,undefined) in the sanitizer build folder and runs
# each for a bounded time over its corpus, fuzz/corpus/<target>/ (the seeds
# kept in the repository; what the run adds goes to a scratch folder, so the
# repository is never written). Any crash, sanitizer report, leak, timeout or
# out-of-memory fails the run; libFuzzer writes the input that did it as
# $build/fuzz/findings/<target>/crash-* (add it to the corpus once fixed: the
# corpus run at the start of every later run is its regression test). A
# target's dictionary, fuzz/<target>.dict, is passed with -dict= when it
# exists: the tokens of the inputs that found bugs, so mutations reuse them.
#
# Usage: scripts/fuzz.sh [TARGET...]   (default: every fuzz_* target)
# Environment: LOWBIT_FUZZ_SECONDS (default 30, per target); LOWBIT_FUZZ_SEED
#              (default 1: CI explores the same inputs a local run of the same
#              tree did, so a finding reproduces; 0 lets libFuzzer pick one);
#              LOWBIT_SANITIZE_BUILD_DIR (default build-sanitize); LOWBIT_JOBS.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${LOWBIT_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=${LOWBIT_JOBS:-2}
seconds=${LOWBIT_FUZZ_SECONDS:-30}
seed=${LOWBIT_FUZZ_SEED:-1}
log() { printf 'fuzz: %s\n' "$*" >&2; }

targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

[[ -f $build/CMakeCache.txt ]] || LOWBIT_SANITIZE_BUILD_DIR=$build bash scripts/sanitize.sh configure
start=$SECONDS
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
log "build: $((SECONDS - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for target in "${targets[@]}"; do
  binary=$build/fuzz/$target
  seeds=fuzz/corpus/$target
  work=$build/fuzz/scratch/$target
  findings=$build/fuzz/findings/$target
  [[ -x $binary && -d $seeds ]] || { log "$target: no binary or no fuzz/corpus/$target"; failed+=("$target"); continue; }
  mkdir -p "$work" "$findings"
  # The tokens that found bugs (fuzz/<target>.dict), where a target has them.
  dict=()
  [[ -f fuzz/$target.dict ]] && dict=(-dict="fuzz/$target.dict")
  # Every seed first (regression inputs included), then new inputs for
  # $seconds s. -close_fd_mask=1: the CLI's stdout is noise (reports go to
  # stderr). Timeouts and memory limits count as findings.
  start=$SECONDS
  if "$binary" "$work" "$seeds" ${dict[@]+"${dict[@]}"} -max_total_time="$seconds" -seed="$seed" -timeout=10 -rss_limit_mb=2048 \
       -malloc_limit_mb=1024 -max_len=512 -close_fd_mask=1 -print_final_stats=1 \
       -artifact_prefix="$findings/" >"$build/fuzz/$target.log" 2>&1; then
    log "$target: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz/$target.log" | grep -o '[0-9]*$') inputs in $((SECONDS - start)) s"
  else
    tail -n 60 "$build/fuzz/$target.log" >&2
    log "$target: FAILED; reproduce with: $binary $findings/<file>"
    failed+=("$target")
  fi
done
if ((${#failed[@]})); then
  log "failed: ${failed[*]}"
  exit 1
fi
