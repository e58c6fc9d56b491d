#!/usr/bin/env bash
# Nsight Compute counters of chosen registry rows' kernels (the
# evidence behind each missed roofline goal in bench/RESULTS.md, "GPU
# roofline"). Usage on the GPU machine: bench/cuda/ncu_rows.sh
# path/to/lowbit_cuda_bench. Each case is "row|kernel": LOWBIT_BENCH_ROWS
# picks the registry row (bench_cuda.cu RowSelected: element rows by their
# name, recipe rows by the recipe), ncu profiles the third launch of the
# kernel whose name matches. Times printed under ncu are not the benchmark's.
set -uo pipefail
BENCH=${1:?usage: ncu_rows.sh path/to/lowbit_cuda_bench}
BASE=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
EXTRA=$BASE,smsp__inst_executed.sum,launch__registers_per_thread,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
# LOWBIT_NCU_CASES ("row|kernel" cases separated by ";") replaces the list.
IFS=";" read -r -a CASES <<<"${LOWBIT_NCU_CASES:-uint4:ao-asym/g128|QuantizeIntKernel;int8:ao-sym/row|QuantizeIntKernel;mxfp6_e2m3:te|MxKernel;mxint8:ocp|MxKernel;nvfp4:te|Nvfp4DequantF32UnitsKernel;e4m3:vllm/g128|ModelScalesKernel;e4m3:vllm/g128|ModelElementsKernel;e4m3:vllm/g128|ModelDequantizeKernel;e4m3:vllm/tensor|ModelTensorPartialsKernel;uint4:gptq-sym/g128|DequantizeIntUnitsKernel;mxfp4:te|MxDequantUnitsKernel}"
for c in "${CASES[@]}"; do
  r=${c%%|*}; k=${c##*|}
  echo "== ncu [$r] $k"
  out=$(LOWBIT_BENCH_ROWS="$r" timeout 90 ncu --metrics "$EXTRA" --kernel-name "regex:$k" --launch-skip 2 --launch-count 1 "$BENCH" --rows 2>&1)
  if grep -q "Failed to find metric\|==ERROR==" <<<"$out"; then
    echo "(extra metrics refused; base set)"; grep -m3 "ERROR" <<<"$out"
    out=$(LOWBIT_BENCH_ROWS="$r" timeout 90 ncu --metrics "$BASE" --kernel-name "regex:$k" --launch-skip 2 --launch-count 1 "$BENCH" --rows 2>&1)
  fi
  grep -E "Kernel|ROW|duration|throughput|issue|warps|inst_executed|registers|pipe" <<<"$out" | sed 's/^ *//' | cut -c1-160
done
