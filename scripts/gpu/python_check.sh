#!/usr/bin/env bash
# The Python package on the GPU machine (called by scripts/run_gpu.sh):
# builds and installs `lowbit` with its CUDA kernels into the machine's Python
# (no network there: --no-build-isolation --no-deps, with nanobind,
# scikit-build-core, torch, pytest and hypothesis already installed), then
# runs the torch-CUDA tests (python/tests/test_gpu.py: encode / decode and
# quantize / dequantize of CUDA tensors against the CPU path, no copies, the
# current stream) and the torch-CPU ones (test_torch.py); the rest of the
# suite is CI's (ctest python_pytest). A test that skips fails this script:
# on the GPU machine every one must run. Then the benchmarks of
# bench/python_bench.py on this idle machine (the CPU numbers, among them the
# fixed overhead of a small call, and the CUDA one) and
# bench/python_tc_gemv_bench.py (the tensor-core GEMV from Python), and a summary.
# The package needs numpy; the script says so first if it is missing.
#
# Environment: PYTHON (default python3), LOWBIT_CUDA_ARCHITECTURES (default
# the CMake cache default, 90a), LOWBIT_PY_JOBS (default nproc),
# LOWBIT_PY_WHEEL (a wheel to install instead of building from this tree),
# LOWBIT_CUTLASS_INCLUDE_DIR (CUTLASS's include directory, which the GPU
# machine lacks: without it the package has no CUDA GEMM rows, the cuda-tc
# ones being the only ones, and the quantized linear layer's GEMM fails).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
python=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${LOWBIT_PY_JOBS:-$(nproc)}
args=(-Ccmake.define.LOWBIT_ENABLE_CUDA=ON)
if [[ -n ${LOWBIT_CUDA_ARCHITECTURES:-} ]]; then
  args+=("-Ccmake.define.LOWBIT_CUDA_ARCHITECTURES=${LOWBIT_CUDA_ARCHITECTURES}")
fi
if [[ -n ${LOWBIT_CUTLASS_INCLUDE_DIR:-} ]]; then
  args+=("-Ccmake.define.LOWBIT_CUTLASS_INCLUDE_DIR=${LOWBIT_CUTLASS_INCLUDE_DIR}")
fi

"$python" -c 'import numpy' 2>/dev/null || {
  echo "python_check: FAILED: numpy is not installed for $python (lowbit needs it)"; exit 1; }
start=$(date +%s)
if [[ -n ${LOWBIT_PY_WHEEL:-} ]]; then
  # A wheel built elsewhere for this Python (same x86-64 + CUDA 13.0
  # toolchain, LOWBIT_PY_CUDA=ON): building here takes ~8 min of the
  # machine's time, installing a wheel seconds.
  echo "python_check: installing $LOWBIT_PY_WHEEL ($("$python" --version))"
  "$python" -m pip install --no-deps --force-reinstall -q "$LOWBIT_PY_WHEEL"
else
  echo "python_check: building and installing lowbit ($("$python" --version))"
  "$python" -m pip install --no-build-isolation --no-deps -q "${args[@]}" .
fi
echo "python_check: installed in $(( $(date +%s) - start )) s"

# Import from the installed package, not the source tree.
cd "$root/python/tests"
"$python" - <<'PY'
import lowbit
info = lowbit.build_info()
print("python_check: build_info", info)
assert info["cuda"], "the package was built without its CUDA kernels"
assert "cuda" in info["backends"], "the registry has no CUDA rows (quantize of CUDA tensors needs them)"
assert info["cuda_devices"] > 0, "the CUDA runtime sees no GPU"
PY
status=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
summary=()
if "$python" run_pytest.py --skips=fail -q test_gpu.py test_tensor_core_gemv_gpu.py test_torch.py ../../examples/check-a-kernel/test_per_token_fp8_torch.py 2>&1 | tee "$logs/pytest"; then
  summary+=("tests (test_gpu.py, test_torch.py): ok, $(grep -E '[0-9]+ passed' "$logs/pytest" | tail -1 || true)")
else
  status=1
  summary+=("tests (test_gpu.py, test_torch.py): FAILED, $(grep -E '[0-9]+ (passed|failed)' "$logs/pytest" | tail -1 || true)")
fi
# The quantized linear layer (docs/matmul.md) on torch CUDA tensors: the CUDA GEMV
# rows (run_on_device, on the tensors' stream) bit for bit against the host
# defined order, the CUDA GEMM (the cuda-tc rows) within 2^-7 sum |x| |w| of
# the exact mode.
if "$python" "$root/examples/quantized-linear/quantized_linear.py" --device cuda 2>&1 | tee "$logs/linear"; then
  summary+=("quantized-linear --device cuda: $(tail -1 "$logs/linear")")
else
  status=1
  summary+=("quantized-linear --device cuda: FAILED, $(tail -1 "$logs/linear")")
fi
bench=$root/bench/python_bench.py
if "$python" "$bench" 2>&1 | tee "$logs/bench_cpu"; then
  summary+=("$(grep -m1 'python_bench summary' "$logs/bench_cpu" || echo 'python_bench: no summary line')")
else
  status=1
  summary+=("python_bench (CPU): FAILED")
fi
if "$python" "$bench" --cuda 2>&1 | tee "$logs/bench_cuda"; then
  summary+=("$(grep -m1 '^cuda ' "$logs/bench_cuda" || echo 'python_bench --cuda: no result line')")
else
  status=1
  summary+=("python_bench --cuda: FAILED")
fi
if "$python" "$root/bench/python_tc_gemv_bench.py" 2>&1 | tee "$logs/bench_tc_gemv"; then
  summary+=("python_tc_gemv_bench: $(grep -cE '^ *[0-9]+ +[0-9]+ +[0-9]+ ' "$logs/bench_tc_gemv") shapes")
else
  status=1
  summary+=("python_tc_gemv_bench: FAILED")
fi
echo
echo "python_check summary:"
printf '  %s\n' "${summary[@]}"
echo "python_check: $([[ $status == 0 ]] && echo PASSED || echo FAILED)"
exit $status
