"""The user's per-token FP8 kernel (per_token_fp8.cu) from Python: PyTorch
makes the BF16 rows, the kernel runs on the GPU, lowbit.testing checks its
codes and scales against "e4m3:te/row" on rows from lowbit's Hypothesis
strategies, and the wrong variants fail with the diagnosis naming what they
do. Needs PyTorch with CUDA, a GPU and nvcc; skips (with the reason)
otherwise. scripts/gpu/python_check.sh runs it on the GPU machine, where a
skip fails.

    pytest examples/check-a-kernel/test_per_token_fp8_torch.py
"""

import ctypes
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

torch = pytest.importorskip("torch", reason="needs PyTorch (with CUDA)")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA build of PyTorch and a GPU", allow_module_level=True)
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
if NVCC is None:
    pytest.skip("needs nvcc to build the kernel", allow_module_level=True)

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402

import lowbit.testing as lt  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
TARGET = "e4m3:te/row"
CORRECT, DIVIDE_BY_SCALE_INV, TOWARD_ZERO = 0, 1, 2  # per_token_fp8.h Variant


@pytest.fixture(scope="module")
def kernel():
    build = pathlib.Path(tempfile.mkdtemp(prefix="per_token_fp8_"))
    lib = build / "libper_token_fp8.so"
    arch = os.environ.get("LOWBIT_CUDA_ARCH", "sm_90")
    subprocess.run([NVCC, "-std=c++17", "-O2", f"-arch={arch}", "-shared", "-Xcompiler", "-fPIC",
                    str(HERE / "per_token_fp8.cu"), str(HERE / "per_token_fp8_c_api.cc"), "-o", str(lib)],
                   check=True)
    so = ctypes.CDLL(str(lib))
    f = so.per_token_fp8_quantize_on_gpu
    f.restype = ctypes.c_char_p
    f.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    yield f
    shutil.rmtree(build, ignore_errors=True)


def quantize(kernel, x_bf16, variant=CORRECT):
    """Runs the kernel on a [rows, cols] bfloat16 tensor: (codes, scale_inv)."""
    x = x_bf16.contiguous().cpu()
    rows, cols = x.shape
    codes = torch.empty((rows, cols), dtype=torch.uint8)
    scales = torch.empty(rows, dtype=torch.float32)
    err = kernel(x.data_ptr(), rows, cols, codes.data_ptr(), scales.data_ptr(), variant)
    assert err == b"", err.decode()
    return codes, scales


@settings(max_examples=150, deadline=None)
@given(lt.matrices(TARGET.split("/")[0], layout="row"))
def test_kernel_matches_the_model(kernel, x):
    xb = torch.from_numpy(x).to(torch.bfloat16)
    codes, scales = quantize(kernel, xb.cuda())
    lt.assert_matches(xb, codes, TARGET, scales=scales)


@pytest.mark.parametrize("variant,convention", [(DIVIDE_BY_SCALE_INV, "divide by the stored scale"),
                                                (TOWARD_ZERO, "rounding rtz")])
def test_wrong_variant_fails_with_its_diagnosis(kernel, variant, convention):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 512)).astype(np.float32) * np.float32(2.0) ** rng.integers(-20, 20, (64, 1))
    xb = torch.from_numpy(x).to(torch.bfloat16)
    codes, scales = quantize(kernel, xb, variant)
    report = lt.check(xb, codes, TARGET, scales=scales)
    assert not report.passed, report.text
    assert any(convention in name for name in report.matching_conventions()), report.text
    with pytest.raises(AssertionError, match="first mismatches"):
        lt.assert_matches(xb, codes, TARGET, scales=scales)
